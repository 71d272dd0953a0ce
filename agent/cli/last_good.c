/* The last good configuration (last_good.h). The copy is the file's bytes after three
 * comment lines, so that it reads as YAML by itself:
 *   # floe: the configuration floe run last started with (agent.keep_last_good)
 *   # file: /etc/floe/floe.yaml
 *   # started: 2026-12-07T19:00:00Z
 * It is parsed without those lines, so that an error's line numbers are the file's. */
#include "agent/cli/last_good.h"

#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/path.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#define TITLE "# floe: the configuration floe run last started with (agent.keep_last_good)\n"
#define FILE_TAG "# file: "
#define STARTED_TAG "# started: "
/* The file's own limit (commands.c's CONFIG_MAX), and the copy's with its three lines. */
#define FILE_MAX (4u << 20)
#define COPY_MAX (FILE_MAX + 3 * FLOE_PATH_MAX)

struct copy {
	char *data; /* owned */
	size_t len;
	const char *file, *started, *body; /* in data; file and started end in '\0' */
	size_t file_len, body_len;
};

static int copy_path(const char *dir, char *out, size_t cap)
{
	return snprintf(out, cap, "%s/%s", dir, FLOE_LAST_GOOD_FILE) < (int)cap ? 0 : FLOE_ELIMIT;
}

/* One line of the header that starts with tag: its value, terminated in place. */
static const char *header_line(char **p, char *end, const char *tag)
{
	size_t tl = strlen(tag);
	char *nl = memchr(*p, '\n', (size_t)(end - *p));
	if (!nl || (size_t)(nl - *p) < tl || memcmp(*p, tag, tl) != 0)
		return NULL;
	*nl = '\0';
	const char *v = *p + tl;
	*p = nl + 1;
	return v;
}

/* The state directory the service manager gives floe (systemd's StateDirectory= sets
 * $STATE_DIRECTORY, a list: its first), else agent.state_dir's default. A copy is kept
 * there too, named by the file's path: found from the path alone when the file cannot
 * say which state_dir it had (broken before agent.state_dir, cut short, emptied). */
static int home_dir(char *out, size_t cap)
{
	const char *env = getenv("STATE_DIRECTORY");
	size_t n = env ? strcspn(env, ":") : 0;
	if (n > 0 && env[0] == '/' && n < cap) {
		memcpy(out, env, n);
		out[n] = '\0';
		return 0;
	}
	return floe_path_absolute(FLOE_CONFIG_STATE_DIR, out, cap);
}

/* The home copy of file (absolute): home_dir/config.last-good.<XXH64 of file>.yaml. */
static int home_copy_path(const char *file, char *out, size_t cap)
{
	char dir[FLOE_PATH_MAX];
	uint64_t h = XXH64(file, strlen(file), 0);
	if (home_dir(dir, sizeof(dir)) != 0)
		return FLOE_ELIMIT;
	return snprintf(out, cap, "%s/config.last-good.%016" PRIx64 ".yaml", dir, h) < (int)cap
		   ? 0
		   : FLOE_ELIMIT;
}

/* Reads the copy at path. Returns 0, -ENOENT when there is none, FLOE_ECORRUPT when it is
 * not one (a header missing), or the read's error. */
static int copy_read_at(const char *path, struct copy *c)
{
	memset(c, 0, sizeof(*c));
	void *data = NULL;
	int rc = floe_fs_read_file(NULL, path, COPY_MAX, &data, &c->len);
	if (rc)
		return rc;
	c->data = data;
	char *p = c->data, *end = c->data + c->len;
	size_t tl = strlen(TITLE);
	if (c->len < tl || memcmp(p, TITLE, tl) != 0)
		return FLOE_ECORRUPT;
	p += tl;
	if (!(c->file = header_line(&p, end, FILE_TAG)) ||
	    !(c->started = header_line(&p, end, STARTED_TAG)))
		return FLOE_ECORRUPT;
	c->file_len = strlen(c->file);
	c->body = p;
	c->body_len = (size_t)(end - p);
	return 0;
}

/* Keeps source as the copy at path (made from file), unless it holds it already. */
static int keep_at(const char *path, const char *file, const char *source, size_t len, bool *wrote)
{
	struct copy old;
	*wrote = false;
	bool same = copy_read_at(path, &old) == 0 && strcmp(old.file, file) == 0 &&
		    old.body_len == len && memcmp(old.body, source, len) == 0;
	floe_free(NULL, old.data);
	if (same)
		return 0;
	struct floe_civil_time t;
	floe_civil_from_unix(floe_clock_now_us() / 1000000, &t);
	char head[2 * FLOE_PATH_MAX];
	int n = snprintf(head, sizeof(head),
			 TITLE FILE_TAG "%s\n" STARTED_TAG "%04lld-%02u-%02uT%02u:%02u:%02uZ\n",
			 file, (long long)t.year, t.month, t.day, t.hour, t.minute, t.second);
	if (n < 0 || (size_t)n >= sizeof(head))
		return FLOE_ELIMIT;
	struct floe_fs_piece pieces[] = {{head, (size_t)n}, {source, len}};
	int rc = floe_fs_write_atomicv(path, pieces, 2);
	*wrote = rc == 0;
	return rc;
}

void floe_last_good_save(const struct floe_config *cfg)
{
	char dir[FLOE_PATH_MAX], path[FLOE_PATH_MAX], file[FLOE_PATH_MAX], home[FLOE_PATH_MAX];
	if (!cfg->source || floe_path_absolute(cfg->agent.state_dir, dir, sizeof(dir)) != 0 ||
	    copy_path(dir, path, sizeof(path)) != 0)
		return;
	/* The home copy, where the state_dir is another one whose home directory is there
	 * (the package's StateDirectory; never made here). */
	char hdir[FLOE_PATH_MAX];
	bool home_too = floe_path_absolute(cfg->path, file, sizeof(file)) == 0 &&
			home_dir(hdir, sizeof(hdir)) == 0 && strcmp(hdir, dir) != 0 &&
			floe_fs_exists(hdir) == 1 && home_copy_path(file, home, sizeof(home)) == 0;
	if (!cfg->agent.keep_last_good) {
		int rc = floe_fs_unlink(path);
		if (rc == 0)
			floe_info("agent.keep_last_good is false: removed %s", path);
		else if (rc != -ENOENT)
			floe_warn("agent.keep_last_good is false but %s cannot be removed: %s", path,
				  floe_strerror(rc));
		if (home_too && floe_fs_unlink(home) == 0)
			floe_info("agent.keep_last_good is false: removed %s", home);
		return;
	}
	if (floe_path_absolute(cfg->path, file, sizeof(file)) != 0 || strchr(file, '\n'))
		return;
	bool wrote;
	int rc = keep_at(path, file, cfg->source, cfg->source_len, &wrote);
	if (rc)
		floe_warn("cannot keep the configuration as the last good one in %s: %s (a start whose "
			  "file has errors will not find it)",
			  path, floe_strerror(rc));
	else if (wrote)
		floe_info("kept the configuration this agent started with in %s, to run on if a "
			  "later start finds the file unusable", path);
	if (!home_too)
		return;
	/* A home that cannot be written (a read-only root file system) leaves the copy in
	 * state_dir, found while the file still names it: said once per change, at info. */
	rc = keep_at(home, file, cfg->source, cfg->source_len, &wrote);
	if (rc)
		floe_info("cannot keep the last good configuration in %s too: %s (a file broken "
			  "before agent.state_dir will not find the copy in %s)",
			  home, floe_strerror(rc), dir);
	else if (wrote)
		floe_info("kept it in %s too, found from the file's path alone", home);
}

/* The copy at where, if it was made from file. */
static int find_at(const char *where, const char *path, const char *file, char **body,
		   size_t *body_len, char *note, size_t cap)
{
	struct copy c;
	int rc = copy_read_at(where, &c);
	if (rc == -ENOENT || rc == -ENOTDIR) {
		rc = FLOE_ENOTFOUND; /* none: nothing to say */
	} else if (rc) {
		floe_warn("%s cannot be used as the last good configuration: %s", where,
			  rc == FLOE_ECORRUPT ? "its first three lines are not floe's" : floe_strerror(rc));
		rc = FLOE_ENOTFOUND;
	} else if (strcmp(c.file, file) != 0) {
		floe_warn("%s is the last good configuration of %s, not of %s: not used", where, c.file,
			  file);
		rc = FLOE_ENOTFOUND;
	} else if (!(*body = floe_malloc(NULL, c.body_len ? c.body_len : 1))) {
		rc = FLOE_ENOMEM;
	} else {
		memcpy(*body, c.body, c.body_len);
		*body_len = c.body_len;
		snprintf(note, cap,
			 "%s cannot be used (its errors are in the log): running on the last good "
			 "configuration, the one floe started with at %s (kept in %s) until a reload "
			 "(SIGHUP) or a start finds the file good",
			 path, c.started, where);
	}
	floe_free(NULL, c.data);
	return rc;
}

/* The copy in state_dir dir (find_at). */
static int find_in(const char *dir, const char *path, const char *file, char **body,
		   size_t *body_len, char *note, size_t cap)
{
	char where[FLOE_PATH_MAX];
	if (copy_path(dir, where, sizeof(where)) != 0)
		return FLOE_ENOTFOUND;
	return find_at(where, path, file, body, body_len, note, cap);
}

/* The home copy of file (home_copy_path), and in found the state_dir its configuration
 * names (the default when it names none). */
static int find_home(const char *path, const char *file, char **body, size_t *body_len, char *found,
		     char *note, size_t cap)
{
	char where[FLOE_PATH_MAX], named[FLOE_PATH_MAX];
	if (home_copy_path(file, where, sizeof(where)) != 0)
		return FLOE_ENOTFOUND;
	int rc = find_at(where, path, file, body, body_len, note, cap);
	if (rc)
		return rc;
	if (floe_config_peek_state_dir(*body, *body_len, named, sizeof(named)) != 0)
		snprintf(named, sizeof(named), "%s", FLOE_CONFIG_STATE_DIR);
	if (floe_path_absolute(named, found, FLOE_PATH_MAX) != 0) {
		floe_free(NULL, *body);
		*body = NULL;
		return FLOE_ENOTFOUND;
	}
	return 0;
}

int floe_last_good_find(const char *path, const char *dir, char **body, size_t *body_len,
			char *found, char *note, size_t cap)
{
	char file[FLOE_PATH_MAX], named[FLOE_PATH_MAX], abs[3][FLOE_PATH_MAX];
	if (floe_path_absolute(path, file, sizeof(file)) != 0)
		return FLOE_ENOTFOUND;
	size_t n = 0;
	if (dir) {
		snprintf(abs[n++], FLOE_PATH_MAX, "%s", dir);
	} else {
		/* What the file holds now, as far as it can be read: it may name a state_dir. */
		void *text = NULL;
		size_t len = 0;
		if (floe_fs_read_file(NULL, path, FILE_MAX, &text, &len) == 0 &&
		    floe_config_peek_state_dir(text, len, named, sizeof(named)) == 0 &&
		    floe_path_absolute(named, abs[n], FLOE_PATH_MAX) == 0)
			n++;
		floe_free(NULL, text);
		if (floe_path_absolute(FLOE_CONFIG_STATE_DIR, abs[n], FLOE_PATH_MAX) == 0 &&
		    (n == 0 || strcmp(abs[0], abs[n]) != 0))
			n++;
		/* The service manager's state directory, when it is another. */
		bool other = home_dir(abs[n], FLOE_PATH_MAX) == 0;
		for (size_t i = 0; other && i < n; i++)
			other = strcmp(abs[i], abs[n]) != 0;
		n += other;
	}
	for (size_t i = 0; i < n; i++) {
		int rc = find_in(abs[i], path, file, body, body_len, note, cap);
		if (rc != FLOE_ENOTFOUND) {
			if (rc == 0) {
				size_t l = strnlen(abs[i], FLOE_PATH_MAX - 1);
				memcpy(found, abs[i], l);
				found[l] = '\0';
			}
			return rc;
		}
	}
	/* The file cannot say its state_dir (broken before it, cut short, emptied): the copy
	 * kept under its path's name. */
	return dir ? FLOE_ENOTFOUND : find_home(path, file, body, body_len, found, note, cap);
}
