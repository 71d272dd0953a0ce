/* AWS credentials and the documents they arrive in, read without I/O over (ptr, len): the
 * JSON answer of the container endpoint (ECS/EKS) and of EC2 instance metadata, the XML
 * answer of STS AssumeRoleWithWebIdentity, and the shared credentials file (INI, ini.h).
 * Credentials are secrets: owned copies are wiped when released, and no error message
 * carries one. */
#ifndef FLOE_AWS_CREDENTIALS_H
#define FLOE_AWS_CREDENTIALS_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;

/* NUL-terminated strings; session_token may be NULL. Given as an argument the struct is a
 * borrowed view (alloc unused). Filled by floe_aws_credentials_set and the readers it
 * holds owned copies from alloc (NULL: unbudgeted), released with
 * floe_aws_credentials_fini. */
struct floe_aws_credentials {
	char *access_key_id;
	char *secret_access_key;
	char *session_token;
	struct floe_alloc *alloc;
};

/* Fills *out with owned copies of ak and sk (neither NULL) and tok (NULL or "": no token)
 * from a. FLOE_ENOMEM; *out is untouched on failure. */
int floe_aws_credentials_set(struct floe_alloc *a, const char *ak, const char *sk,
			     const char *tok, struct floe_aws_credentials *out);
/* Wipes and frees owned strings and zeroes c; NULL and a zeroed struct are fine. */
void floe_aws_credentials_fini(struct floe_aws_credentials *c);

/* Field limits of the documents: session tokens run to a few KiB. */
#define FLOE_AWS_KEY_MAX 255
#define FLOE_AWS_TOKEN_MAX 8191

/* A container or instance metadata document: a JSON object with string members
 * AccessKeyId and SecretAccessKey (not empty), Token and Expiration (RFC 3339) optional,
 * and, from IMDS, Code, which must be "Success" when present. Only top-level members
 * count; the first of duplicate names wins. Fills *out (owned, from a) and *expiration
 * (unix seconds, 0 when the document has none). FLOE_EPARSE when it is not JSON (e has
 * the offset), FLOE_EFORMAT when a member is missing or unusable (e names it, never its
 * value), FLOE_ENOMEM. */
int floe_aws_cred_json(struct floe_alloc *a, const char *p, size_t n,
		       struct floe_aws_credentials *out, int64_t *expiration, struct floe_err *e);

/* An STS AssumeRoleWithWebIdentity answer: AccessKeyId, SecretAccessKey, SessionToken and
 * Expiration, all required, anywhere in the document. As floe_aws_cred_json. */
int floe_aws_cred_sts(struct floe_alloc *a, const char *p, size_t n,
		      struct floe_aws_credentials *out, int64_t *expiration, struct floe_err *e);

#endif
