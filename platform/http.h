/* A small HTTP client: one request at a time on a handle of its own, with a hard cap on
 * the answer's body, connect and total timeouts, TLS verification always on, no
 * redirects followed and a stop check that cuts a request in flight. It runs on the S3
 * client's libcurl (loaded on first use, platform/s3/curl_dl.c) and lives in its library:
 * the credential providers and the REST catalog client use it; a build without S3 has
 * none (floe_http_new answers -ENOTSUP). Bodies that may carry secrets (tokens, vended
 * keys) are wiped before their memory is freed. */
#ifndef FLOE_HTTP_H
#define FLOE_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_http;

/* A new handle whose memory (and every answer's body) comes from a (borrowed; it must
 * outlive the handle). FLOE_ENOMEM; -ENOTSUP when libcurl cannot be loaded. */
int floe_http_new(struct floe_alloc *a, struct floe_http **out);
void floe_http_free(struct floe_http *h);

struct floe_http_req {
	const char *method; /* "GET", "POST", "HEAD", "DELETE" */
	const char *url;
	/* NULL-terminated "Name: value" lines (NULL: none). They may hold secrets: curl keeps
	 * no copy past the request, and the handle's copies are wiped. */
	const char *const *headers;
	const char *body; /* NULL: none */
	size_t body_len;
	int64_t connect_ms, timeout_ms; /* 0: 10 s and 60 s */
	bool no_proxy;			/* never through a proxy (link-local endpoints) */
	/* On a new connection: a request that must not reach the server twice. libcurl sends
	 * a request again, unasked, when the reused connection it went out on closes before
	 * any answer; on a fresh one it reports the failure instead. */
	bool once;
	const char *ca_file;		/* NULL: the system's CA bundle */
	size_t max;			/* the most body bytes taken (0: 64 KiB) */
	/* Asked at least once a second while the request runs: true cuts it (may be NULL). */
	bool (*stopped)(const void *ctx);
	const void *stop_ctx;
};

/* An answer: the status, its ETag (quotes kept, "" when none, cut to fit), its Date, and its body,
 * NUL-terminated, from the handle's allocator (floe_http_resp_fini wipes and frees it). */
struct floe_http_resp {
	int status;
	char etag[256];
	/* Its Date header (seconds since the epoch), when it had a valid one: the server's
	 * clock, for signing on a device whose clock is wrong. */
	bool has_date;
	int64_t date;
	/* Its Retry-After (of a 429 or 503, say): seconds to wait (-1: none), or the time
	 * to wait until, an HTTP date in seconds since the epoch (0: none). */
	int64_t retry_after_s, retry_at;
	char *data;
	size_t len, cap;
	bool too_big;	/* the body passed req.max: the transfer was cut */
	bool timed_out; /* FLOE_HTTP_FAILED by a timeout */
	struct floe_alloc *alloc;
};

/* What floe_http_run came to, beyond the negative errors FLOE_ENOMEM and
 * FLOE_HTTP_ESTOPPED. */
enum floe_http_net {
	FLOE_HTTP_ANSWERED = 0, /* an answer arrived: r->status says which */
	FLOE_HTTP_UNREACHABLE,	/* no connection (refused, resolution, connect timeout): not sent */
	FLOE_HTTP_FAILED,	/* cut or timed out after it was sent, or broke the protocol */
};

/* Runs rq; r (zeroed by the caller, or holding an earlier answer to append to) gets the
 * answer. why[cap] gets the transport's reason when the result is not ANSWERED. Returns
 * an enum floe_http_net value, or a negative error: FLOE_ENOMEM, and -ECANCELED when
 * rq->stopped cut it. */
int floe_http_run(struct floe_http *h, const struct floe_http_req *rq, struct floe_http_resp *r,
		  char *why, size_t cap);
/* Wipes and frees r's body and zeroes r. */
void floe_http_resp_fini(struct floe_http_resp *r);

/* The longest wait a Retry-After is honoured for (5 minutes): a server asking for more
 * is asked again after this. */
#define FLOE_HTTP_RETRY_AFTER_MAX_S 300
/* The seconds an answer's Retry-After asks to wait: after_s (-1: none), else the date at
 * (0: none) against server_now_s (the answer's own Date, else our clock with the offset
 * learnt), at most FLOE_HTTP_RETRY_AFTER_MAX_S; 0 when it asks for none. The S3 client's
 * retries and the REST catalog's next commit both wait this. */
static inline int64_t floe_http_retry_wait_s(int64_t after_s, int64_t at, int64_t server_now_s)
{
	int64_t s = after_s >= 0 ? after_s : at > 0 ? at - server_now_s : 0;
	return s <= 0 ? 0 : s < FLOE_HTTP_RETRY_AFTER_MAX_S ? s : FLOE_HTTP_RETRY_AFTER_MAX_S;
}

#endif
