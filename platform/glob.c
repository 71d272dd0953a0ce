/* glob(3) and fnmatch(3) behind floe's calling convention. */
#include "glob.h"

#include <errno.h>
#include <fnmatch.h>
#include <glob.h>
#include <stddef.h>

#ifdef GLOB_BRACE
#define FLOE_GLOB_FLAGS GLOB_BRACE
#else
#define FLOE_GLOB_FLAGS 0
#endif

int floe_glob(const char *pattern, int (*fn)(void *ctx, const char *path), void *ctx)
{
	glob_t g;
	int r = glob(pattern, FLOE_GLOB_FLAGS, NULL, &g);
	if (r == GLOB_NOMATCH) {
		globfree(&g);
		return 0;
	}
	if (r == GLOB_NOSPACE) {
		globfree(&g);
		return -ENOMEM;
	}
	/* GLOB_ABORTED only comes from an unreadable directory, which is simply a place with
	 * nothing to tail for now; what was matched is still reported. */
	int rc = 0;
	for (size_t i = 0; i < g.gl_pathc && rc == 0; i++)
		rc = fn(ctx, g.gl_pathv[i]);
	globfree(&g);
	return rc;
}

int floe_fnmatch(const char *pattern, const char *s)
{
	return fnmatch(pattern, s, 0) == 0;
}

int floe_fnmatch_name(const char *pattern, const char *name)
{
	return fnmatch(pattern, name, FNM_PERIOD) == 0;
}
