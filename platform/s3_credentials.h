/* AWS credentials for the S3 client: from the environment and from the shared credentials
 * file (~/.aws/credentials, an INI file) with its profile. The INI parser is pure over
 * (ptr, len). Secrets are never logged; their memory is wiped when freed. */
#ifndef FLOE_PLATFORM_S3_CREDENTIALS_H
#define FLOE_PLATFORM_S3_CREDENTIALS_H

#include <stddef.h>

/* Strings are NUL-terminated; session_token may be NULL. Whether they are owned depends on
 * who filled the struct: the functions below fill owned copies (floe_s3_credentials_fini). */
struct floe_s3_credentials {
	char *access_key_id;
	char *secret_access_key;
	char *session_token;
};

/* AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optional AWS_SESSION_TOKEN. -ENOENT if
 * either key is unset or empty, -ENOMEM. *out is filled only on success. */
int floe_s3_credentials_from_env(struct floe_s3_credentials *out);

/* Profile profile (NULL: $AWS_PROFILE, else "default") of the credentials file path (NULL:
 * $AWS_SHARED_CREDENTIALS_FILE, else $HOME/.aws/credentials). -ENOENT if the file, the
 * profile or one of its two keys is missing; -EINVAL on a syntax error. */
int floe_s3_credentials_from_shared_file(const char *path, const char *profile,
					 struct floe_s3_credentials *out);

/* Parses INI text p[0..n) and takes aws_access_key_id, aws_secret_access_key and
 * aws_session_token from section [profile]. Accepts '#' and ';' comment lines, spaces
 * around names and '=', CRLF, and "[profile name]" headers. Later duplicate keys win.
 * If err_line is not NULL it gets the 1-based line of a syntax error. Returns 0, -ENOENT
 * (no such profile or key), -EINVAL (syntax: a line that is neither a section, a
 * key = value, a comment nor blank; or a NUL byte), -E2BIG (a line over 64 KiB), -ENOMEM. */
int floe_s3_credentials_parse_ini(const char *p, size_t n, const char *profile,
				  struct floe_s3_credentials *out, size_t *err_line);

/* Frees and wipes the strings; the struct is zeroed. NULL is fine. */
void floe_s3_credentials_fini(struct floe_s3_credentials *c);

#endif
