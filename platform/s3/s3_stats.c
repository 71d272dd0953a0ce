/* The S3 client's request counts (s3_stats.h): relaxed atomic counters, since clients
 * on several threads add to them and the status page reads them from another. */
#include "platform/s3/s3_stats.h"

#include "platform/s3/s3_limits.h"
#include "platform/s3/s3_request.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <string.h>

static uint64_t requests[FLOE_S3_KINDS];
static uint64_t retries[FLOE_S3_KINDS];
static uint64_t errors[FLOE_S3_KINDS][FLOE_S3_FAILS];

void floe_s3_stats_get(struct floe_s3_stats *out)
{
	memset(out, 0, sizeof(*out));
	for (int k = 0; k < FLOE_S3_KINDS; k++) {
		out->requests[k] = __atomic_load_n(&requests[k], __ATOMIC_RELAXED);
		out->retries[k] = __atomic_load_n(&retries[k], __ATOMIC_RELAXED);
		for (int f = 0; f < FLOE_S3_FAILS; f++)
			out->errors[k][f] = __atomic_load_n(&errors[k][f], __ATOMIC_RELAXED);
	}
}

const char *floe_s3_kind_name(enum floe_s3_kind k)
{
	static const char *const names[FLOE_S3_KINDS] = {
	    "put", "get", "head", "list", "delete", "delete_objects", "upload_part", "multipart"};
	return (unsigned)k < FLOE_S3_KINDS ? names[k] : "unknown";
}

const char *floe_s3_fail_name(enum floe_s3_fail f)
{
	static const char *const names[FLOE_S3_FAILS] = {
	    "4xx", "5xx", "throttled", "timeout", "connection", "tls", "other", "auth"};
	return (unsigned)f < FLOE_S3_FAILS ? names[f] : "unknown";
}

void floe_s3_stats_attempt(enum floe_s3_kind k, enum floe_s3_fail f)
{
	if ((unsigned)k >= FLOE_S3_KINDS)
		return;
	__atomic_fetch_add(&requests[k], 1, __ATOMIC_RELAXED);
	if ((unsigned)f < FLOE_S3_FAILS)
		__atomic_fetch_add(&errors[k][f], 1, __ATOMIC_RELAXED);
}

void floe_s3_stats_retry(enum floe_s3_kind k)
{
	if ((unsigned)k < FLOE_S3_KINDS)
		__atomic_fetch_add(&retries[k], 1, __ATOMIC_RELAXED);
}

/* The query names the request carries; the method alone cannot tell a part from a PUT. */
static bool has_query(const struct floe_s3_req *rq, const char *name)
{
	for (size_t i = 0; i < rq->nq; i++)
		if (strcmp(rq->q[i].name, name) == 0)
			return true;
	return false;
}

enum floe_s3_kind floe_s3_stats_kind(const struct floe_s3_req *rq)
{
	if (has_query(rq, "partNumber"))
		return FLOE_S3_KIND_UPLOAD_PART;
	if (has_query(rq, "uploadId") || has_query(rq, "uploads"))
		return FLOE_S3_KIND_MULTIPART;
	if (has_query(rq, "delete"))
		return FLOE_S3_KIND_DELETE_OBJECTS;
	if (strcmp(rq->method, "PUT") == 0)
		return FLOE_S3_KIND_PUT;
	if (strcmp(rq->method, "HEAD") == 0)
		return FLOE_S3_KIND_HEAD;
	if (strcmp(rq->method, "DELETE") == 0)
		return FLOE_S3_KIND_DELETE;
	return rq->key ? FLOE_S3_KIND_GET : FLOE_S3_KIND_LIST;
}

enum floe_s3_fail floe_s3_stats_class(int cut, int cc, int status, int expect)
{
	if (cut == FLOE_S3_LIMITS_OVERDUE)
		return FLOE_S3_FAIL_TIMEOUT;
	if (cut != FLOE_S3_LIMITS_GO)
		return FLOE_S3_FAIL_OTHER; /* abandoned: the agent is stopping */
	switch (cc) {
	case CURLE_OK:
		break;
	case CURLE_OPERATION_TIMEDOUT:
		return FLOE_S3_FAIL_TIMEOUT;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
	case CURLE_SSL_CONNECT_ERROR:
		return FLOE_S3_FAIL_TLS;
	case CURLE_WRITE_ERROR:
	case CURLE_READ_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		return FLOE_S3_FAIL_OTHER; /* our side: a body over its limit, memory, a file */
	default:
		return FLOE_S3_FAIL_CONNECTION;
	}
	if ((status >= 200 && status <= 299) || (expect && status == expect))
		return FLOE_S3_FAILS;
	if (status == 401 || status == 403)
		return FLOE_S3_FAIL_AUTH;
	if (status == 503 || status == 429)
		return FLOE_S3_FAIL_THROTTLED;
	if (status >= 500 && status <= 599)
		return FLOE_S3_FAIL_5XX;
	if (status >= 400 && status <= 499)
		return FLOE_S3_FAIL_4XX;
	return FLOE_S3_FAIL_OTHER;
}
