/* The AWS shared credentials file (~/.aws/credentials, an INI file), read without I/O
 * over (ptr, len). */
#ifndef FLOE_AWS_INI_H
#define FLOE_AWS_INI_H

#include <stddef.h>

struct floe_alloc;
struct floe_aws_credentials;
struct floe_err;

#define FLOE_AWS_INI_LINE_MAX (64 * 1024)

/* Takes aws_access_key_id, aws_secret_access_key and aws_session_token from section
 * [profile] (NULL or "": "default") of the INI text p[0..n) into *out (owned, from a).
 * Accepts '#' and ';' comment lines, spaces around names and '=', CRLF, "[profile name]"
 * headers, and skips indented lines (the sub-properties of nested "s3 =" blocks). Later
 * duplicate keys win; an empty token is no token. Returns 0; FLOE_ENOTFOUND when the
 * profile or one of its two keys is missing or empty; FLOE_EPARSE for a line that is
 * neither a section, a key = value, a comment nor blank, or holds a NUL byte, and
 * FLOE_ELIMIT for a line over FLOE_AWS_INI_LINE_MAX (e: the line's offset, and its number
 * in the message; never its text, which may hold a secret); FLOE_ENOMEM. *out is filled
 * only on success. */
int floe_aws_ini_credentials(struct floe_alloc *a, const char *p, size_t n, const char *profile,
			     struct floe_aws_credentials *out, struct floe_err *e);

#endif
