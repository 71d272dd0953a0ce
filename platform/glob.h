/* Path pattern matching for file inputs: expansion of glob(3) patterns against the file
 * system, and fnmatch(3) matching of a name against a pattern. */
#ifndef FLOE_PLATFORM_GLOB_H
#define FLOE_PLATFORM_GLOB_H

/* Calls fn(ctx, path) for every existing path matching pattern, in sorted order ({a,b}
 * braces are expanded where the C library supports them). No match is not an error. A
 * non-zero return of fn stops the walk and is returned. */
int floe_glob(const char *pattern, int (*fn)(void *ctx, const char *path), void *ctx);
/* 1 if s matches the shell pattern, else 0 ('*' also matches '/'). */
int floe_fnmatch(const char *pattern, const char *s);
/* 1 if the file name (one path component) matches the pattern component as glob(3)
 * would match it: a leading '.' only by a literal '.'. Braces are not expanded. */
int floe_fnmatch_name(const char *pattern, const char *name);

#endif
