/* Private to platform/s3_credprov*.c: the provider object and what the chain
 * (s3_credprov.c), the HTTP helper (s3_credprov_http.c) and the remote providers
 * (s3_credprov_remote.c) share. */
#ifndef FLOE_PLATFORM_S3_CREDPROV_IMPL_H
#define FLOE_PLATFORM_S3_CREDPROV_IMPL_H

#include "formats/base/error.h"
#include "platform/http.h"
#include "platform/s3/s3_credprov.h"
#include "platform/s3/s3_limits.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a provider's attempt came to, beyond 0 = credentials. */
enum { SKIPPED = 1 }; /* not configured here: tried nothing */

struct floe_s3_credprov {
	struct floe_alloc *alloc; /* every allocation of the provider; borrowed */
	pthread_mutex_t mu;
	int refs;
	unsigned providers;
	unsigned char seq[6]; /* indexes into providers[] of s3_credprov.c, in chain order */
	struct floe_aws_credentials stat;
	int64_t stat_exp; /* when stat expires (unix seconds; 0: never) */
	char *stat_refs[3]; /* where stat came from (floe_s3_credprov_options.static_refs) */
	bool stat_stale;    /* invalidated: stat_refs are resolved again before stat serves */
	char *shared_file, *profile;
	char *wi_token_file, *role_arn, *role_session_name, *sts_endpoint, *sts_region;
	char *c_full, *c_rel, *c_host, *c_token, *c_token_file;
	char *imds_endpoint;
	bool imds_disabled;
	char *ca_file;
	int64_t md_connect_ms, md_timeout_ms, sts_connect_ms, sts_timeout_ms, margin;
	struct floe_s3_limits limits; /* the stop grace (the timeouts above are the deadline) */
	struct floe_http *http;
	/* The cache. */
	struct floe_aws_credentials cur;
	bool have;
	int64_t expiration, refresh_at; /* 0: never */
	int source;			/* index into providers[] of s3_credprov.c, -1 none */
	struct floe_err err;		/* why the last chain run failed, provider by provider */
};

/* ---- small helpers (s3_credprov_util.c) ---------------------------------------------- */

/* The option if given, else the environment variable if set and not empty. */
const char *floe_s3_credprov_opt_env(const char *o, const char *env);
/* Appends printf text to e's message (truncating); e's code is left as it is. */
__attribute__((format(printf, 2, 3))) void floe_s3_credprov_why(struct floe_err *e,
								const char *fmt, ...);

/* ---- HTTP and tokens (s3_credprov_http.c) -------------------------------------------- */

/* An answer's body: a struct floe_http_resp (platform/http.h), NUL-terminated, owned
 * (floe_http_resp_fini). */
enum net { NET_OK, NET_UNREACHABLE, NET_FAILED };

/* Trailing whitespace and newlines off a token read from a file. */
size_t floe_s3_credprov_trim_len(const char *s, size_t n);
/* A token fit for an HTTP header: printable, no CR/LF. */
bool floe_s3_credprov_header_safe(const char *s, size_t n);
/* Reads a token file into a new NUL-terminated string from p's allocator (trailing newline
 * dropped), which the caller owns and frees with floe_wipe_free. */
int floe_s3_credprov_read_token(struct floe_s3_credprov *p, const char *path, char **out);
/* One request: method on url with headers (NULL-terminated "Name: value" lines, which may
 * hold secrets: curl copies them into its request, we wipe ours) and an optional body.
 * metadata: short timeouts and no proxy. *status gets the HTTP status, r the body (appended
 * to; the caller owns it, floe_http_resp_fini). Returns NET_OK when an answer
 * arrived, else NET_UNREACHABLE (connect failed or timed out) or NET_FAILED (other
 * transport error; the reason is appended to neterr). FLOE_ENOMEM; FLOE_S3_ESTOPPED when
 * the stop grace has passed (nothing is sent then, and a request in flight is cut). */
int floe_s3_credprov_http(struct floe_s3_credprov *p, const char *method, const char *url,
			  const char *const *headers, const char *body, bool metadata, int *status,
			  struct floe_http_resp *r, struct floe_err *neterr);
/* The outcome of floe_s3_credprov_http() as a provider's result: 0 for a 200 answer, else
 * the reason (neterr's for a transport failure) is appended to why and a transport
 * failure, 5xx or 429 is FLOE_S3_EUNAVAILABLE (may pass), another status -EACCES. */
int floe_s3_credprov_answer_rc(int net, int status, const char *url,
			       const struct floe_err *neterr, struct floe_err *why);

/* ---- the providers ------------------------------------------------------------------- */

/* Each returns 0 with *c and *exp filled, SKIPPED (not configured; reason in why),
 * FLOE_S3_EUNAVAILABLE (a configured remote could not answer now), another negative
 * error (reason in why), or FLOE_ENOMEM. */
typedef int (*provider_fn)(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
			   int64_t *exp, struct floe_err *why);

/* The remote ones (s3_credprov_remote.c); the local ones are static in s3_credprov.c. */
int floe_s3_credprov_web_identity(struct floe_s3_credprov *p, int64_t now,
				  struct floe_aws_credentials *c, int64_t *exp, struct floe_err *why);
int floe_s3_credprov_container(struct floe_s3_credprov *p, int64_t now,
			       struct floe_aws_credentials *c, int64_t *exp, struct floe_err *why);
int floe_s3_credprov_imds(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
			  int64_t *exp, struct floe_err *why);

#endif
