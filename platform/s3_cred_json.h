/* The small documents temporary credentials arrive in, read without I/O over (ptr, len):
 * one string member of a flat JSON object (container and EC2 instance metadata answers). */
#ifndef FLOE_PLATFORM_S3_CRED_JSON_H
#define FLOE_PLATFORM_S3_CRED_JSON_H

#include <stddef.h>
#include <stdint.h>

#define FLOE_S3_JSON_MAX_DEPTH 32

/* The string value of member name of the top-level object in p[0..n), unescaped (\uXXXX and
 * surrogate pairs become UTF-8), into out[0..cap) NUL-terminated. The whole text must be
 * valid JSON (one object, nesting at most FLOE_S3_JSON_MAX_DEPTH, whitespace around it);
 * only top-level members are matched; the first of duplicate names wins. Returns 0,
 * -ENOENT (no such member), -ENOSPC (does not fit), -EINVAL (the member is not a string,
 * or holds a NUL character) or FLOE_S3_EPROTO (malformed; *err_off, if not NULL, gets the
 * byte offset). On failure out holds no usable value (it may have been written). */
int floe_s3_cred_json_string(const char *p, size_t n, const char *name, char *out, size_t cap,
			     size_t *err_off);

#endif
