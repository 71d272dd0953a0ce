/* Checks of the file inputs against the file system and the agent's own directories, for
 * `floe check` and the start of `floe run`, and the tail options each input gets. */
#include "agent/input/preflight.h"

#include "agent/config/config.h"
#include "formats/base/limits.h"
#include "platform/fs.h"
#include "platform/glob.h"
#include "platform/path.h"

#include <stdio.h>
#include <string.h>

#define PATH_CAP FLOE_PATH_MAX
#define MAX_COMPONENTS 128
#define MAX_EXPANSIONS 256
/* Descriptors the agent needs besides the inputs' files: the spool, the store, the
 * watch, sockets, the log. */
#define DESCRIPTORS_RESERVED 64

/* Splits an absolute path into its components, in place. Returns their number, or -1
 * when there are too many. */
static int split(char *p, char **comp)
{
	int n = 0;
	char *save = NULL;
	for (char *s = strtok_r(p, "/", &save); s; s = strtok_r(NULL, "/", &save)) {
		if (n == MAX_COMPONENTS)
			return -1;
		comp[n++] = s;
	}
	return n;
}

static bool match_under(const char *pattern, const char *dir)
{
	char pb[PATH_CAP], db[PATH_CAP];
	char *pc[MAX_COMPONENTS], *dc[MAX_COMPONENTS];
	if (strlen(pattern) >= sizeof(pb) || strlen(dir) >= sizeof(db))
		return false;
	strcpy(pb, pattern);
	strcpy(db, dir);
	int np = split(pb, pc), nd = split(db, dc);
	if (np < 0 || nd < 0 || np <= nd)
		return false;
	for (int i = 0; i < nd; i++)
		if (!floe_fnmatch_name(pc[i], dc[i]))
			return false;
	return true;
}

/* The end of the brace group opening at p[open], or 0 when it does not close. */
static size_t brace_end(const char *p, size_t open)
{
	int depth = 0;
	for (size_t i = open; p[i]; i++) {
		if (p[i] == '\\' && p[i + 1])
			i++;
		else if (p[i] == '{')
			depth++;
		else if (p[i] == '}' && --depth == 0)
			return i;
	}
	return 0;
}

/* Calls match_under for every expansion of the first brace group of pattern, recursively;
 * *budget bounds the expansions. */
static bool expand_match(const char *pattern, const char *dir, int *budget)
{
	if (--*budget < 0)
		return false;
	const char *open = strchr(pattern, '{');
	size_t o = open ? (size_t)(open - pattern) : 0;
	size_t close = open ? brace_end(pattern, o) : 0;
	if (!open || !close)
		return match_under(pattern, dir);
	char buf[PATH_CAP];
	size_t start = o + 1;
	int depth = 0;
	for (size_t i = start; i <= close; i++) {
		char c = pattern[i];
		if (c == '{')
			depth++;
		else if (c == '}' && depth > 0)
			depth--;
		if ((c == ',' && depth == 0) || i == close) {
			int n = snprintf(buf, sizeof(buf), "%.*s%.*s%s", (int)o, pattern,
					 (int)(i - start), pattern + start, pattern + close + 1);
			if (n > 0 && (size_t)n < sizeof(buf) && expand_match(buf, dir, budget))
				return true;
			start = i + 1;
		}
	}
	return false;
}

bool floe_preflight_could_match_under(const char *pattern, const char *dir)
{
	int budget = MAX_EXPANSIONS;
	return expand_match(pattern, dir, &budget);
}

/* The agent's own directories, as written (absolute) and canonical when they exist. */
struct own {
	const char *what;
	char abs[PATH_CAP], real[PATH_CAP];
};

static void own_dir(struct own *o, const char *what, const char *dir)
{
	o->what = what;
	if (floe_path_absolute(dir, o->abs, sizeof(o->abs)) != 0)
		o->abs[0] = '\0';
	if (floe_path_real(dir, o->real, sizeof(o->real)) != 0)
		o->real[0] = '\0';
}

/* The pattern as written (absolute), and with its root's symbolic links resolved. */
static bool overlaps(const char *pattern, const struct own *o)
{
	char abs[PATH_CAP], real[PATH_CAP];
	if (floe_path_absolute(pattern, abs, sizeof(abs)) != 0)
		return false;
	const char *dirs[2] = {o->abs, o->real};
	for (int d = 0; d < 2; d++)
		if (dirs[d][0] && floe_preflight_could_match_under(abs, dirs[d]))
			return true;
	/* A pattern whose root is a link into one of them. */
	size_t wild = strcspn(abs, "*?[{");
	size_t cut = 0;
	for (size_t k = 0; k < wild && abs[k]; k++)
		if (abs[k] == '/')
			cut = k;
	if (cut == 0)
		return false;
	abs[cut] = '\0';
	int rc = floe_path_real(abs, real, sizeof(real));
	abs[cut] = '/';
	size_t rl = strlen(real);
	if (rc != 0 || rl + strlen(abs + cut) >= sizeof(real))
		return false;
	strcpy(real + rl, abs + cut);
	for (int d = 0; d < 2; d++)
		if (dirs[d][0] && floe_preflight_could_match_under(real, dirs[d]))
			return true;
	return false;
}

int floe_preflight_inputs(const struct floe_config *cfg, floe_preflight_fn fn, void *ctx)
{
	struct own own[2];
	size_t nown = 0;
	own_dir(&own[nown++], "agent.state_dir", cfg->agent.state_dir);
	if (cfg->lake.catalog == FLOE_CATALOG_FILESYSTEM)
		own_dir(&own[nown++], "lake.warehouse", cfg->lake.warehouse);
	int errors = 0;
	char msg[1024];
	for (size_t i = 0; i < cfg->ninputs; i++) {
		const struct floe_config_input *in = &cfg->inputs[i];
		for (size_t k = 0; k < in->npaths; k++) {
			for (size_t d = 0; d < nown; d++) {
				if (!overlaps(in->paths[k], &own[d]))
					continue;
				(void)!snprintf(msg, sizeof(msg),
					 "%s:%d: input %s: pattern '%s' can match files in %s (%s): "
					 "the agent would read its own output; narrow the pattern or "
					 "move %s",
					 cfg->path, in->line, in->name, in->paths[k], own[d].what,
					 own[d].abs, own[d].what);
				fn(ctx, true, msg);
				errors++;
			}
		}
	}
	unsigned pct;
	unsigned long long limit;
	floe_preflight_descriptors(cfg, &pct, &limit);
	if (pct < 100) {
		(void)!snprintf(msg, sizeof(msg),
			 "%s: the inputs' max_open_files and max_connections add up to more than "
			 "the %llu descriptors this process may open (RLIMIT_NOFILE, less %d for the "
			 "agent itself): each input gets %u %% of its max_open_files and of its "
			 "listeners' max_connections; raise the limit (LimitNOFILE= in the systemd "
			 "unit) or lower them",
			 cfg->path, limit, DESCRIPTORS_RESERVED, pct);
		fn(ctx, false, msg);
	}
	return errors;
}

void floe_preflight_descriptors(const struct floe_config *cfg, unsigned *scale_pct,
				unsigned long long *limit)
{
	uint64_t want = DESCRIPTORS_RESERVED, now = 0;
	for (size_t i = 0; i < cfg->ninputs; i++)
		want += cfg->inputs[i].type == FLOE_INPUT_SYSLOG
			    ? (uint64_t)cfg->inputs[i].syslog.nlisten *
				  (cfg->inputs[i].syslog.max_connections + 1u)
			: cfg->inputs[i].type == FLOE_INPUT_JOURNAL ? 16 /* its files, inotify */
								    : cfg->inputs[i].max_open_files;
	*scale_pct = 100;
	*limit = 0;
	if (floe_fs_raise_nofile(want, &now) != 0)
		return;
	*limit = now;
	if (now >= want)
		return;
	uint64_t room = now > 2 * DESCRIPTORS_RESERVED ? now - DESCRIPTORS_RESERVED
						       : now / 2;
	uint64_t pct = room * 100 / (want - DESCRIPTORS_RESERVED);
	*scale_pct = pct < 1 ? 1 : (unsigned)pct;
}

unsigned floe_preflight_max_connections(const struct floe_config_input *in,
					unsigned scale_pct)
{
	/* Connections beyond the process's descriptors would not be refused by the
	 * listener's cap but by accept (EMFILE), after they had taken every descriptor the
	 * agent needs for its own files: its commits, spool and metrics failed while idle
	 * senders held them. */
	uint64_t n = (uint64_t)in->syslog.max_connections * (scale_pct < 100 ? scale_pct : 100) /
		     100;
	if (n > in->syslog.max_connections)
		n = in->syslog.max_connections;
	return n < 8 ? 8 : (unsigned)n;
}

void floe_preflight_tail_options(const struct floe_config *cfg, size_t i, unsigned scale_pct,
				 struct floe_preflight_tail *out)
{
	const struct floe_config_input *in = &cfg->inputs[i];
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "input %s", in->name);
	size_t nskip = 0;
	out->skip[nskip++] = cfg->agent.state_dir;
	if (cfg->lake.catalog == FLOE_CATALOG_FILESYSTEM)
		out->skip[nskip++] = cfg->lake.warehouse;
	uint64_t open = (uint64_t)in->max_open_files * scale_pct / 100;
	out->o = (struct floe_tail_options){
	    .paths = (const char *const *)in->paths,
	    .npaths = in->npaths,
	    .exclude = (const char *const *)in->exclude,
	    .nexclude = in->nexclude,
	    .start_at_end = in->start_at_end,
	    .max_line_bytes = (size_t)in->max_line_bytes,
	    .read_chunk = 64u << 10,
	    .rotate_wait_ms = (int64_t)in->rotate_wait_ms,
	    .max_open_files = open < 8 ? 8 : (size_t)open,
	    .forget_after_ms = (int64_t)in->forget_after_ms,
	    .symlinks = in->follow_symlinks == FLOE_SYMLINKS_TRUE	? FLOE_TAIL_SYMLINKS_FOLLOW
			: in->follow_symlinks == FLOE_SYMLINKS_FALSE ? FLOE_TAIL_SYMLINKS_NONE
								     : FLOE_TAIL_SYMLINKS_WITHIN_ROOT,
	    .skip_dirs = out->skip,
	    .nskip_dirs = nskip,
	    .truncate_long = in->long_lines == FLOE_LONG_TRUNCATE,
	    .name = out->name,
	    .partial_idle = true,
	    .partial_line_ms = (int64_t)in->partial_line_ms,
	};
}
