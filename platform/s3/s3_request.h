/* Internal to platform/s3*.c (not for other modules): the S3 client's state and one
 * signed request run with retries. A request is prepared (signed, curl options set on an
 * easy handle), performed on the client's multi handle and classified. */
#ifndef FLOE_PLATFORM_S3_REQUEST_H
#define FLOE_PLATFORM_S3_REQUEST_H

#include "formats/base/buf.h"
#include "platform/s3/s3.h"
#include "platform/s3/s3_limits.h"
#include "platform/s3/sigv4.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLOE_S3_ERR_BODY_MAX (64 * 1024) /* error documents are small; keep at most this */
#define FLOE_S3_XML_BODY_MAX (8 << 20)	 /* list pages: 1000 keys of 1 KiB plus markup */
#define FLOE_S3_MAX_PARTS 10000

struct floe_s3 {
	/* The multi handle owns the connection and DNS caches, so keep-alive connections
	 * outlive any one easy handle. Today one easy handle at a time is on it (added for an
	 * attempt, removed after); transfers find their own completion through CURLOPT_PRIVATE
	 * so that several could share it. */
	CURLM *multi;
	CURL *curl;	   /* the easy handle of the current request, reused across requests */
	char *base;	   /* "https://bucket.host:port" (virtual) or "https://host:port" */
	char *host;	   /* Host header value, signed */
	char *path_prefix; /* "/bucket" (path style) or "" */
	char *region;
	char *bucket; /* for messages: "s3://bucket/key" */
	char *ca_file, *ca_path;
	struct curl_slist *connect_to;
	struct floe_aws_credentials cred;
	struct floe_s3_credprov *credprov; /* a reference, or NULL */
	struct floe_s3_options o;	   /* numbers and functions; string fields not used */
	struct floe_s3_limits limits;	   /* deadline and stop grace of every attempt */
	int64_t clock_offset;
	bool offset_changed; /* the last answer moved clock_offset */
	int last_status;
	int last_attempts;
	char last_code[64];
	char last_location[512];
	char resp_region[64]; /* x-amz-bucket-region of the last answer */
	/* Until when (floe_clock_mono_ns) the store asked not to be sent another request
	 * (Retry-After of a 429 or 503, at most FLOE_HTTP_RETRY_AFTER_MAX_S); 0: no such
	 * request, or a request has succeeded since. */
	int64_t not_before_ns;
	/* How the last attempt was cut by the limits (FLOE_S3_LIMITS_*), its length in ms and
	 * the bytes it had moved. */
	int cut;
	int64_t cut_elapsed_ms, cut_moved;
	char errbuf[CURL_ERROR_SIZE];
	/* The last failed request for the operator: what it asked, of which URL, and why
	 * (curl's reason, or the status and the S3 error code). "" after a success. */
	char last_error[768];
};

/* Where a request body comes from: memory or a range of an open file. */
struct floe_s3_body {
	const uint8_t *mem;
	int fd;
	int64_t off, len, pos;
};

struct floe_s3_resp {
	int status;
	struct floe_buf body; /* 2xx body (GET, XML), NUL-terminated after its bytes */
	size_t max;	      /* the most body bytes the request takes */
	bool too_big;
	struct floe_buf err; /* the head of a non-2xx answer's body, for its <Code> */
	char etag[128];
	int64_t content_length;
	int64_t date; /* server Date, unix seconds */
	bool has_date;
	char location[512];	/* Location of a redirect, truncated; "" if none */
	char bucket_region[64]; /* x-amz-bucket-region (sent with redirects); "" if none */
	/* Retry-After: seconds to wait, or the time to wait until (an HTTP date, unix
	 * seconds); -1 and 0 when none. */
	int64_t retry_after_s, retry_at;
};

struct floe_s3_req {
	const char *method;
	const char *key; /* NULL: the bucket itself */
	struct floe_sigv4_param q[5];
	size_t nq;
	struct floe_sigv4_header h[4]; /* extra signed headers */
	size_t nh;
	bool has_body;
	struct floe_s3_body body;
	bool conditional; /* a lost answer cannot be retried blindly */
	bool head;
	/* A non-2xx status that is an answer, not an error: 404 to a request about a key (an
	 * existence check; NoSuchBucket stays an error), 412 to a conditional create (another
	 * writer won). Not counted as an error in the stats. 0: none. */
	int expect;
	size_t max; /* limit of a 2xx body */
};

/* Runs rq (signing each attempt with the corrected clock) with retries and backoff on
 * transient errors only; r (zeroed by the caller) holds the last response, its bodies from
 * the client's allocator, to be released with floe_s3_resp_fini. Returns 0 for a 2xx
 * answer, else the classified error (FLOE_ENOMEM when the allocator refused the body). */
int floe_s3_request_run(struct floe_s3 *s3, struct floe_s3_req *rq, struct floe_s3_resp *r);
void floe_s3_resp_fini(struct floe_s3_resp *r);
/* The 2xx body as text ("" when there is none). */
static inline const char *floe_s3_resp_text(const struct floe_s3_resp *r)
{
	return r->body.data ? (const char *)r->body.data : "";
}

/* Shared by the operations in s3.c and s3_multipart.c. */
#define FLOE_S3_STR_(x) #x
#define FLOE_S3_STR(x) FLOE_S3_STR_(x)

/* A listing's guard against pages that never end (s3.c): zero it before the first page,
 * call floe_s3_pager_next after every truncated page with the token for the next one and
 * the number of keys the page held, and floe_s3_pager_fini at the end. Returns 0, or
 * FLOE_S3_ELOOP (logged, naming the bucket and prefix) for a token seen before in any
 * cycle, FLOE_S3_LIST_MAX_PAGES pages or a long run of empty pages; FLOE_ENOMEM. */
struct floe_s3_pager {
	char *saved; /* the token the next ones are compared with (Brent) */
	size_t power, since_save;
	size_t pages, empty_run;
};
int floe_s3_pager_next(struct floe_s3 *s3, struct floe_s3_pager *p, const char *prefix,
		       const char *token, size_t keys);
void floe_s3_pager_fini(struct floe_s3 *s3, struct floe_s3_pager *p);
/* What a formats/aws reader's result rc (e its detail) means for the client: a malformed
 * or unusable answer is FLOE_S3_EPROTO; running out of memory and the codes of the
 * caller's own callbacks (which leave e untouched) stay as they are. */
struct floe_err;
int floe_s3_parser_rc(int rc, const struct floe_err *e);
/* x + y + z in a new string from a (NULL when out of memory). */
char *floe_s3_join3(struct floe_alloc *a, const char *x, const char *y, const char *z);
bool floe_s3_key_ok(const char *key);
/* The default signer (s3_sign.c), a floe_s3_sign_fn whose ctx is a floe_s3_sigv4_ctx:
 * the request's raw path, query and payload hash, which the canonical request needs. */
struct floe_s3_sigv4_ctx {
	struct floe_s3 *s3;
	const char *path;
	const struct floe_s3_req *rq;
	const char *payload_hash;
};
int floe_s3_sign_sigv4(void *ctx, const struct floe_s3_to_sign *in, floe_s3_sign_add_fn add, void *add_ctx);
int floe_s3_put_body(struct floe_s3 *s3, const char *key, struct floe_s3_body body,
		     const struct floe_s3_put_options *po, struct floe_s3_object_info *info);

#endif
