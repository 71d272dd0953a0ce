/* Counts of the S3 client's requests by kind, with their errors by class and their retries:
 * what /metrics shows (agent/run/runner_status.c). The counts are the process's, summed
 * over every client, because the agent's stores each own one (the main loop's and the
 * committer thread's) while an operator watches the process; they only grow. */
#ifndef FLOE_PLATFORM_S3_STATS_H
#define FLOE_PLATFORM_S3_STATS_H

#include <stdint.h>

/* What a request does, as its method and query say. */
enum floe_s3_kind {
	FLOE_S3_KIND_PUT,
	FLOE_S3_KIND_GET,
	FLOE_S3_KIND_HEAD,
	FLOE_S3_KIND_LIST,
	FLOE_S3_KIND_DELETE,
	FLOE_S3_KIND_DELETE_OBJECTS,
	FLOE_S3_KIND_UPLOAD_PART,
	FLOE_S3_KIND_MULTIPART, /* create, complete, abort and list of multipart uploads */
	FLOE_S3_KINDS
};

/* How an attempt failed. */
enum floe_s3_fail {
	FLOE_S3_FAIL_4XX,	 /* a 4xx answer other than 401, 403 and 429, and other than
				  * the one the caller expects (a 404 to an existence check, the
				  * 412 of a lost conditional create: answers, not errors) */
	FLOE_S3_FAIL_5XX,	 /* a 5xx answer other than 503 */
	FLOE_S3_FAIL_THROTTLED,	 /* 503 (SlowDown) or 429: refused before processing */
	FLOE_S3_FAIL_TIMEOUT,	 /* no complete answer within the deadline or stall limit */
	FLOE_S3_FAIL_CONNECTION, /* refused, reset or cut connections, DNS failures */
	FLOE_S3_FAIL_TLS,	 /* handshakes and certificates */
	FLOE_S3_FAIL_OTHER,	 /* redirects, bodies over their limit, a stop, local files */
	FLOE_S3_FAIL_AUTH,	 /* 401 or 403: credentials, signature, permissions (a class
				  * of its own, so that an alert on bad credentials is possible) */
	FLOE_S3_FAILS
};

/* Every attempt sent is a request; a retry is an attempt after the first of one
 * operation (after a backoff, a clock correction or refreshed credentials). */
struct floe_s3_stats {
	uint64_t requests[FLOE_S3_KINDS];
	uint64_t retries[FLOE_S3_KINDS];
	uint64_t errors[FLOE_S3_KINDS][FLOE_S3_FAILS];
};

/* A snapshot of the counts (each read atomically; any thread). */
void floe_s3_stats_get(struct floe_s3_stats *out);
/* Label values: "put", "get", ..., and "4xx", "5xx", "throttled", ... (static strings). */
const char *floe_s3_kind_name(enum floe_s3_kind k);
const char *floe_s3_fail_name(enum floe_s3_fail f);

/* For the client (s3_request.c). The kind of rq; the class of an attempt that ended
 * with cc (a CURLcode; CURLE_OK with an answer of HTTP status), cut by the limits as
 * cut says (FLOE_S3_LIMITS_*), or FLOE_S3_FAILS for a 2xx answer and for the status
 * the caller expects (expect, 0 for none); one attempt of kind
 * k ended as f says; one retry of kind k follows. */
struct floe_s3_req;
enum floe_s3_kind floe_s3_stats_kind(const struct floe_s3_req *rq);
enum floe_s3_fail floe_s3_stats_class(int cut, int cc, int status, int expect);
void floe_s3_stats_attempt(enum floe_s3_kind k, enum floe_s3_fail f);
void floe_s3_stats_retry(enum floe_s3_kind k);

#endif
