/* Which directories a tail watches, so that a file its patterns can match is noticed
 * when it appears, not at the next periodic rescan (30 s when idle): each pattern's
 * literal root (or, while the root is missing, its nearest existing ancestor) and every
 * directory its wildcard levels match (for Kubernetes' /var/log/pods/POD/CONTAINER/N.log
 * globbed by pod and container: /var/log/pods, each pod's directory and each of its
 * containers'). The directories of the files followed are watched by tail_files.c as it
 * follows them. */
#include "tail_impl.h"

#include "formats/base/limits.h"
#include "platform/glob.h"
#include "platform/watch.h"

#include <string.h>

#define PATH_CAP FLOE_PATH_MAX

/* Watches the nearest existing ancestor of the missing directory dir (changed in place):
 * a directory created on the way to it is then an event, not a wait for the rescan (a
 * log directory removed and made again, a volume mounted late). */
static void watch_ancestor(struct floe_tail *t, char *dir)
{
	for (;;) {
		char *slash = strrchr(dir, '/');
		if (!slash)
			return;
		if (slash == dir)
			slash[1] = '\0'; /* "/" */
		else
			*slash = '\0';
		if (floe_watch_add_dir(t->watch, dir) >= 0 || slash == dir)
			return;
	}
}

static int on_level(void *ctx, const char *path)
{
	struct floe_tail *t = ctx;
	char d[PATH_CAP];
	size_t n = strlen(path);
	if (n == 0 || n >= sizeof(d))
		return 0;
	memcpy(d, path, n + 1);
	if (n > 1 && d[n - 1] == '/')
		d[n - 1] = '\0'; /* globbed with a trailing slash: directories only */
	(void)floe_watch_add_dir(t->watch, d);
	return 0;
}

/* Watches the directories pattern p goes through. */
static void watch_pattern(struct floe_tail *t, const char *p)
{
	char d[PATH_CAP];
	const char *last = strrchr(p, '/');
	if (!last || last == p)
		return; /* "x.log" or "/x.log": nothing worth a watch */
	size_t dirlen = (size_t)(last - p);
	if (dirlen + 2 > sizeof(d))
		return;
	size_t wild = strcspn(p, "*?[{");
	size_t root = 0; /* the last '/' before the first wildcard */
	for (size_t k = 0; k < wild && k < dirlen; k++)
		if (p[k] == '/')
			root = k;
	if (wild >= dirlen)
		root = dirlen; /* no wildcard among the directories */
	if (root == 0)
		return; /* a wildcard right under "/": not watched */
	memcpy(d, p, root);
	d[root] = '\0';
	if (floe_watch_add_dir(t->watch, d) < 0) {
		watch_ancestor(t, d);
		return;
	}
	/* Each wildcard level: the directories it matches now (a trailing slash keeps the
	 * glob to directories). One created later is an event in the level above, and the
	 * scan that follows comes back here. */
	for (size_t k = root + 1; k <= dirlen; k++) {
		if (p[k] != '/')
			continue;
		memcpy(d, p, k);
		d[k] = '/';
		d[k + 1] = '\0';
		(void)floe_glob(d, on_level, t);
	}
}

void floe_tail_watch_patterns(struct floe_tail *t)
{
	if (!t->watch)
		return;
	for (size_t i = 0; i < t->npaths; i++)
		watch_pattern(t, t->paths[i]);
}

bool floe_tail_on_pattern_path(const struct floe_tail *t, const char *path)
{
	char d[PATH_CAP];
	for (size_t i = 0; i < t->npaths; i++) {
		const char *p = t->paths[i];
		const char *last = strrchr(p, '/');
		for (size_t k = 1; last && k <= (size_t)(last - p) && k < sizeof(d); k++) {
			if (p[k] != '/')
				continue;
			memcpy(d, p, k);
			d[k] = '\0';
			if (floe_fnmatch(d, path))
				return true;
		}
	}
	return false;
}
