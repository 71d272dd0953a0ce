/* The REST catalog client's insides, shared by its files: the client's state, and the
 * one exchange every operation goes through (catalog_rest_http.c: the credentials that go
 * with each request, the catalog's answers mapped to floe's codes). catalog_rest.c holds
 * the operations and the vended storage credentials. Not for other modules. */
#ifndef FLOE_CATALOG_REST_IMPL_H
#define FLOE_CATALOG_REST_IMPL_H

#include "formats/aws/credentials.h"
#include "formats/iceberg/rest.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_clock;
struct floe_config;
struct floe_err;
struct floe_http;
struct floe_http_resp;
struct floe_rand;
struct floe_rest_config;
struct floe_rest_signer;
struct floe_s3_credprov;

#define CONFIG_MAX (1u << 20)
#define TABLE_MAX (256u << 20) /* a LoadTableResult holds the whole metadata */
#define TOKEN_MAX (64u << 10)
#define ERROR_MAX (64u << 10)
#define MAX_LEVELS 8
/* A token is asked for again a tenth of its lifetime (at most a minute) before it
 * expires, so that no request goes out with one that lapses on its way. */
#define TOKEN_MARGIN_US (60 * 1000000LL)

/* A stop signal gives a request in flight this long to end, as the S3 client gives its
 * own: a healthy catalog takes the final commit, a stalled one does not hold SIGTERM. */
#define STOP_GRACE_MS 2000

/* Storage a catalog vended for one table (X-Iceberg-Access-Delegation): the S3 keys of
 * its location, with their expiry, and the endpoint, region and addressing that go with
 * them. The store opened at the location asks prov, which every load's answer updates. */
#define VENDED_MAX 8
#define SIGN_EXTRA_MAX 8
#define VENDED_MARGIN_MS (60 * 1000LL)
struct vended {
	char name[256];
	char location[1024];
	char endpoint[512], region[64];
	int path_style; /* -1: not said */
	int64_t expires_ms; /* unix ms; 0: not said */
	/* The same instant on the monotonic clock (ms), as the wall clock placed it when the
	 * credentials came: a wall clock that steps back afterwards would put it off. */
	int64_t expires_mono_ms;
	struct floe_aws_credentials creds;
	struct floe_s3_credprov *prov; /* from the first store opened at location */
	/* s3.remote-signing-enabled: no keys, the catalog (c) signs every S3 request. */
	bool remote;
	struct floe_catalog_rest *c;
	/* Where to sign ("" the table's /sign endpoint: the deprecated signer.uri and
	 * signer.endpoint settings name another), and the remote-signing-config's
	 * properties and headers (the headers as "Name: value"), in sign_buf. */
	char sign_url[1024];
	char sign_buf[2048];
	struct floe_rest_header sign_props[SIGN_EXTRA_MAX];
	const char *sign_headers[SIGN_EXTRA_MAX];
	size_t nsign_props, nsign_headers;
};

/* Vended credentials that expire at expires_ms (a wall time), received when the clocks
 * read wall_ms and mono_ms: the same instant on the monotonic clock (ms; past ones as
 * now, saturated). */
static inline int64_t floe_rest_vended_mono(int64_t expires_ms, int64_t wall_ms, int64_t mono_ms)
{
	int64_t left, at;
	if (__builtin_sub_overflow(expires_ms, wall_ms, &left) || left < 0)
		left = expires_ms < wall_ms ? 0 : INT64_MAX;
	return __builtin_add_overflow(mono_ms, left, &at) ? INT64_MAX : at;
}

/* Whether v's credentials (with an expiry) expire within VENDED_MARGIN_MS, by either
 * clock. The expiry is a wall time, but a wall clock that stepped back since they came
 * would keep them for as long as it stepped (every upload refused for expired keys
 * meanwhile): the monotonic clock catches that. A wall clock that stepped forward only
 * renews them early; one that was wrong when they came and is set right later (NTP on a
 * device without a real-time clock) is caught by the wall clock. */
static inline bool floe_rest_vended_due(const struct vended *v, int64_t wall_ms, int64_t mono_ms)
{
	return v->expires_ms && (wall_ms >= v->expires_ms - VENDED_MARGIN_MS ||
				 mono_ms >= v->expires_mono_ms - VENDED_MARGIN_MS);
}

struct floe_catalog_rest {
	struct floe_alloc *a;
	const struct floe_config *cfg;
	const struct floe_clock *clock;
	const struct floe_rand *rand;
	struct floe_http *http;
	struct floe_rest_signer *signer; /* NULL: requests are not SigV4-signed */
	/* The catalog's clock less this device's (s), from its answers' Date: 0 within a
	 * minute; signatures are made on the catalog's clock (floe_catalog_rest_call). */
	int64_t clock_offset_s;
	struct floe_rest_config *conf; /* NULL until /v1/config answered */
	/* A load or commit failed: the next one reads /v1/config again first (a catalog
	 * reconfigured while away: another prefix, endpoints, defaults). */
	bool conf_stale;
	char prefix[260];
	char nsbuf[MAX_LEVELS * 130];
	const char *ns[MAX_LEVELS];
	size_t nns;
	bool ns_made;
	char *token;	      /* OAuth2 access token (wiped before free), NULL: none yet */
	int64_t token_exp_us; /* monotonic; 0: no expiry given */
	int64_t token_margin_us; /* renewed this long before token_exp_us */
	/* Until when (monotonic µs) the catalog asked not to be sent another request (its
	 * last 429 or 503 with Retry-After, at most FLOE_HTTP_RETRY_AFTER_MAX_S). */
	int64_t not_before_us;
	char what[600];
	struct vended vend[VENDED_MAX];
};

/* One request. */
struct rest_call {
	const char *method;
	const char *path; /* from floe_rest_path, or "/v1/config"; or a whole URL (a signer's) */
	const char *qname, *qvalue; /* one query parameter, raw (qname NULL: none) */
	const char *body; /* NULL: none */
	size_t body_len;
	const char *etag; /* If-None-Match, or NULL */
	/* More headers ("Name: value"), e.g. a remote-signing-config's. */
	const char *const *extra;
	size_t nextra;
	/* A change (create, commit): sent at most once by the transport, with an
	 * Idempotency-Key when the catalog takes one. */
	bool mutation;
	size_t max;
};

/* Runs one request, with a new token and a second try when the catalog refuses the
 * token (401, 419). 0 when an answer came (its status in r), else the transport's code
 * in err; *sent tells whether the request may have reached the catalog. */
int floe_catalog_rest_call(struct floe_catalog_rest *c, const struct rest_call *k, struct floe_http_resp *r,
			   bool *sent, struct floe_err *err);
/* The code of an answer that is not a success (409 FLOE_ECONFLICT, 404 FLOE_ENOTFOUND,
 * 401/403/419 FLOE_S3_EAUTH, 5xx and 429 FLOE_S3_EUNAVAILABLE, else FLOE_S3_EHTTP), with
 * the catalog's own message, when the body is an IcebergErrorResponse, in err. */
int floe_catalog_rest_status(struct floe_catalog_rest *c, const char *what, const struct floe_http_resp *r,
			     struct floe_err *err);
/* Forgets the OAuth2 token (wiped). */
void floe_catalog_rest_drop_token(struct floe_catalog_rest *c);

#endif
