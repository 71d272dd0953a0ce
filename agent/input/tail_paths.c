/* Which matched paths a tail may read, and the health of its patterns. A pattern's root
 * is its directories before the first wildcard; a matched file is read only if its real
 * path respects the symlink rule against the root's real path and lies outside the
 * agent's own directories (its state and warehouse: reading them would feed the agent its
 * own output forever). A pattern matching nothing, a missing or unreadable directory, an
 * unreadable file and a refused path are each logged once when they appear, and a
 * pattern or file that recovers is logged once too. */
#include "tail_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/path.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define REAL_CAP FLOE_PATH_MAX
/* Refused paths remembered between scans, so that each is logged once. Past this many
 * only their number is logged. */
#define REFUSED_MAX 256

enum pat_state { PAT_UNKNOWN, PAT_OK, PAT_EMPTY, PAT_NO_ROOT, PAT_ROOT_UNREADABLE };

struct tpattern {
	char *root;	 /* owned: the literal directory prefix ("/" at least) */
	char *real_root; /* owned: its canonical path at the last scan; NULL when missing */
	enum pat_state state;
	int root_err;	 /* why the root is missing or unreadable */
	size_t matched;	 /* files found by the scan in progress */
	int64_t empty_since; /* monotonic ms when a pattern that matched found nothing; 0 */
};

/* A pattern that matched files and then matches none is reported only once it stays so
 * for this long: a log deleted and recreated by its writer, or rotated away before the
 * new file appears, is empty for a moment at every rotation. */
#define EMPTY_GRACE_MS 60000

/* The directories of p before its first wildcard: for "/var/log/app*.log" that is
 * "/var/log", for "/srv/app-[0-9]/x.log" "/srv", for "x.log" ".". */
static char *root_of(struct floe_alloc *a, const char *p)
{
	size_t wild = strcspn(p, "*?[{");
	size_t cut = SIZE_MAX;
	for (size_t k = 0; k < wild && p[k]; k++)
		if (p[k] == '/')
			cut = k;
	if (cut == SIZE_MAX)
		return floe_strdup(a, ".");
	if (cut == 0)
		return floe_strdup(a, "/");
	char *r = floe_malloc(a, cut + 1);
	if (r) {
		memcpy(r, p, cut);
		r[cut] = '\0';
	}
	return r;
}

static void free_strs(struct floe_alloc *a, char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		floe_free(a, v[i]);
	floe_free(a, v);
}

int floe_tail_paths_init(struct floe_tail *t, const struct floe_tail_options *o)
{
	snprintf(t->name, sizeof(t->name), "%s", o->name ? o->name : "tail");
	t->symlinks = o->symlinks;
	t->truncate_long = o->truncate_long;
	if (t->npaths && !(t->pats = floe_calloc(t->a, t->npaths, sizeof(*t->pats))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < t->npaths; i++)
		if (!(t->pats[i].root = root_of(t->a, t->paths[i])))
			return FLOE_ENOMEM;
	if (o->nskip_dirs) {
		if (!o->skip_dirs)
			return FLOE_EINVAL;
		t->skip = floe_calloc(t->a, o->nskip_dirs, sizeof(*t->skip));
		t->skip_real = floe_calloc(t->a, o->nskip_dirs, sizeof(*t->skip_real));
		if (!t->skip || !t->skip_real)
			return FLOE_ENOMEM;
		t->nskip = o->nskip_dirs;
		for (size_t i = 0; i < t->nskip; i++) {
			if (!o->skip_dirs[i])
				return FLOE_EINVAL;
			if (!(t->skip[i] = floe_strdup(t->a, o->skip_dirs[i])))
				return FLOE_ENOMEM;
		}
	}
	/* The agent's own stdout and stderr, when they are files (a shell redirect, systemd's
	 * StandardError=file:): a tail reading one would commit the lines each commit logs,
	 * and an idle agent would commit for ever. */
	for (int k = 0; k < 2; k++) {
		struct floe_fs_stat st;
		t->own_ok[k] = floe_fs_fstat(k + 1, &st) == 0 && st.regular;
		t->own_dev[k] = t->own_ok[k] ? st.dev : 0;
		t->own_ino[k] = t->own_ok[k] ? st.ino : 0;
	}
	t->refused = floe_calloc(t->a, REFUSED_MAX, sizeof(*t->refused));
	t->refused_next = floe_calloc(t->a, REFUSED_MAX, sizeof(*t->refused_next));
	return t->refused && t->refused_next ? 0 : FLOE_ENOMEM;
}

void floe_tail_paths_fini(struct floe_tail *t)
{
	for (size_t i = 0; t->pats && i < t->npaths; i++) {
		floe_free(t->a, t->pats[i].root);
		floe_free(t->a, t->pats[i].real_root);
	}
	floe_free(t->a, t->pats);
	free_strs(t->a, t->skip, t->nskip);
	free_strs(t->a, t->skip_real, t->nskip);
	floe_free(t->a, t->refused);
	floe_free(t->a, t->refused_next);
}

/* Replaces *slot with the canonical form of path (NULL when it cannot be resolved). */
static void resolve(struct floe_tail *t, const char *path, char **slot, int *err)
{
	char real[REAL_CAP];
	int rc = floe_path_real(path, real, sizeof(real));
	if (err)
		*err = rc;
	if (rc == 0 && *slot && strcmp(*slot, real) == 0)
		return;
	floe_free(t->a, *slot);
	*slot = rc == 0 ? floe_strdup(t->a, real) : NULL;
}

void floe_tail_paths_begin(struct floe_tail *t)
{
	for (size_t i = 0; i < t->nskip; i++)
		resolve(t, t->skip[i], &t->skip_real[i], NULL);
	for (size_t i = 0; i < t->npaths; i++) {
		struct tpattern *p = &t->pats[i];
		resolve(t, p->root, &p->real_root, NULL);
		p->matched = 0;
		p->root_err = floe_path_dir_state(p->root);
	}
	t->nrefused_next = 0;
	t->refused_more = 0;
	t->st.files_skipped = 0;
}

/* True if path is dir or lies below it (both canonical). */
static bool under(const char *path, const char *dir)
{
	size_t n = strlen(dir);
	if (n == 1 && dir[0] == '/')
		return true;
	return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static void note_refused(struct floe_tail *t, const char *path, const char *real, const char *why)
{
	t->st.files_skipped++;
	uint64_t h = floe_tail_hash((const uint8_t *)path, strlen(path));
	if (t->nrefused_next == REFUSED_MAX) {
		t->refused_more++;
		return;
	}
	t->refused_next[t->nrefused_next++] = h;
	for (size_t i = 0; i < t->nrefused; i++)
		if (t->refused[i] == h)
			return; /* logged at an earlier scan */
	floe_warn("%s: not reading %s%s%s: %s", t->name, path, strcmp(path, real) ? " -> " : "",
		  strcmp(path, real) ? real : "", why);
}

void floe_tail_note_special(struct floe_tail *t, const char *path)
{
	char real[REAL_CAP];
	if (floe_path_real(path, real, sizeof(real)) != 0)
		return; /* gone since the glob */
	note_refused(t, path, real,
		     "it is not a regular file (a FIFO, a socket or a device), which floe "
		     "cannot tail");
}

/* No link below the root: the real path is the root's real path followed by the rest
 * of the path as written (links at or above the root are the operator's choice: /var/log
 * itself may be one). */
static bool no_link_below(const struct tpattern *p, const char *path, const char *real)
{
	char abs[REAL_CAP], root[REAL_CAP];
	if (floe_path_absolute(path, abs, sizeof(abs)) != 0 ||
	    floe_path_absolute(p->root, root, sizeof(root)) != 0)
		return false;
	size_t rl = strlen(root), ql = strlen(p->real_root);
	if (rl == 1)
		rl = 0; /* "/": the rest starts with its slash */
	if (ql == 1)
		ql = 0;
	if (strncmp(abs, root, rl) != 0 || abs[rl] != '/')
		return false;
	return strncmp(real, p->real_root, ql) == 0 && strcmp(real + ql, abs + rl) == 0;
}

bool floe_tail_path_allowed(struct floe_tail *t, size_t pattern, const char *path,
			    const struct floe_fs_stat *st)
{
	char real[REAL_CAP];
	if (floe_path_real(path, real, sizeof(real)) != 0)
		return false; /* gone since the glob */
	for (int k = 0; k < 2; k++) {
		if (t->own_ok[k] && st->dev == t->own_dev[k] && st->ino == t->own_ino[k]) {
			note_refused(t, path, real,
				     k ? "it is the agent's own stderr (its log)"
				       : "it is the agent's own stdout");
			return false;
		}
	}
	for (size_t i = 0; i < t->nskip; i++) {
		if (t->skip_real[i] && under(real, t->skip_real[i])) {
			note_refused(t, path, real, "it lies in the agent's own state or warehouse");
			return false;
		}
	}
	if (strcmp(path, real) != 0 && floe_tail_excluded(t, real)) {
		note_refused(t, path, real, "its target is excluded");
		return false;
	}
	const struct tpattern *p = &t->pats[pattern];
	if (t->symlinks != FLOE_TAIL_SYMLINKS_FOLLOW) {
		/* Without a canonical root (it vanished since the scan began) nothing below it
		 * can be judged: skip the file until the next scan. */
		if (!p->real_root)
			return false;
		bool ok;
		if (t->symlinks == FLOE_TAIL_SYMLINKS_WITHIN_ROOT) {
			ok = under(real, p->real_root);
		} else {
			ok = no_link_below(p, path, real);
		}
		if (!ok) {
			note_refused(t, path, real,
				     t->symlinks == FLOE_TAIL_SYMLINKS_NONE
					 ? "it is reached through a symbolic link (follow_symlinks: false)"
					 : "a symbolic link leads out of the pattern's directory "
					   "(follow_symlinks: within_glob_root)");
			return false;
		}
	}
	t->pats[pattern].matched++;
	return true;
}

static enum pat_state state_of(const struct tpattern *p)
{
	if (p->matched)
		return PAT_OK;
	if (p->root_err == -ENOENT || p->root_err == -ENOTDIR)
		return PAT_NO_ROOT;
	if (p->root_err)
		return PAT_ROOT_UNREADABLE;
	return PAT_EMPTY;
}

void floe_tail_paths_end(struct floe_tail *t)
{
	t->st.patterns_unmatched = 0;
	int64_t clock = floe_tail_mono(t);
	for (size_t i = 0; i < t->npaths; i++) {
		struct tpattern *p = &t->pats[i];
		enum pat_state was = p->state, now = state_of(p);
		t->st.patterns_unmatched += now != PAT_OK;
		if (now == PAT_OK) {
			p->empty_since = 0;
		} else if (was == PAT_OK) {
			if (!p->empty_since)
				p->empty_since = clock;
			if (clock - p->empty_since < EMPTY_GRACE_MS)
				continue; /* not yet worth a warning */
		}
		p->state = now;
		if (now == was)
			continue;
		const char *pat = t->paths[i];
		switch (now) {
		case PAT_OK:
			if (was != PAT_UNKNOWN)
				floe_info("%s: pattern %s matches files again", t->name, pat);
			break;
		case PAT_EMPTY:
			floe_warn("%s: pattern %s matches no file (yet)", t->name, pat);
			break;
		case PAT_NO_ROOT:
			floe_warn("%s: pattern %s matches no file: directory %s: %s", t->name, pat,
				  p->root, floe_strerror(p->root_err));
			break;
		case PAT_ROOT_UNREADABLE:
			floe_warn("%s: pattern %s: directory %s cannot be listed: %s", t->name, pat,
				  p->root, floe_strerror(p->root_err));
			break;
		case PAT_UNKNOWN:
			break;
		}
	}
	if (t->refused_more && t->refused_more != t->refused_more_logged)
		floe_warn("%s: %" PRIu64 " more files not read (symbolic links out of bounds or the "
			  "agent's own files)", t->name, t->refused_more);
	t->refused_more_logged = t->refused_more;
	uint64_t *tmp = t->refused;
	t->refused = t->refused_next;
	t->refused_next = tmp;
	t->nrefused = t->nrefused_next;
}

void floe_tail_note_open(struct floe_tail *t, struct tfile *f, int rc)
{
	bool denied = rc == -EACCES || rc == -EPERM;
	if (denied && !f->denied)
		floe_warn("%s: cannot read %s: %s (retried at every scan)", t->name, f->path,
			  floe_strerror(rc));
	else if (!denied && f->denied && rc == 0)
		floe_info("%s: %s can be read again", t->name, f->path);
	f->denied = denied;
}
