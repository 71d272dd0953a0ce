/* The small HTTP client of platform/http.h on a curl easy handle. Answers grow by
 * doubling into fresh blocks, the old one wiped before it is freed: an answer may hold a
 * token or vended keys, and realloc would free the old block unwiped. */
#include "platform/http.h"
#include "platform/s3/sigv4.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"
#include "platform/beat.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define DEFAULT_MAX (64 * 1024)

struct floe_http {
	struct floe_alloc *alloc;
	CURL *curl;
};

int floe_http_new(struct floe_alloc *a, struct floe_http **out)
{
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -ENOTSUP;
	struct floe_http *h = floe_calloc(a, 1, sizeof(*h));
	if (!h)
		return FLOE_ENOMEM;
	h->alloc = a;
	if (!(h->curl = curl_easy_init())) {
		floe_free(a, h);
		return FLOE_ENOMEM;
	}
	*out = h;
	return 0;
}

void floe_http_free(struct floe_http *h)
{
	if (!h)
		return;
	curl_easy_cleanup(h->curl);
	floe_free(h->alloc, h);
}

struct xfer {
	struct floe_http_resp *r;
	size_t max;
};

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	struct xfer *x = ud;
	struct floe_http_resp *r = x->r;
	size_t n = size * nmemb;
	if (n > x->max - r->len) {
		r->too_big = true;
		return 0;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 4096;
		while (cap < r->len + n + 1)
			cap *= 2;
		char *d = floe_malloc(r->alloc, cap);
		if (!d)
			return 0;
		if (r->len)
			memcpy(d, r->data, r->len);
		floe_wipe_free(r->alloc, r->data);
		r->data = d;
		r->cap = cap;
	}
	memcpy(r->data + r->len, src, n);
	r->len += n;
	r->data[r->len] = '\0';
	return n;
}

/* The value of header line h[0..n) when it is name's (name ends in ':', lower case),
 * without the blanks around it and the line's end: *v and its length, or false. */
static bool header_value(const char *h, size_t n, const char *name, const char **v, size_t *vl)
{
	size_t k = strlen(name), e = n;
	if (n <= k || strncasecmp(h, name, k) != 0)
		return false;
	while (k < e && (h[k] == ' ' || h[k] == '\t'))
		k++;
	while (e > k && (h[e - 1] == '\r' || h[e - 1] == '\n' || h[e - 1] == ' '))
		e--;
	*v = h + k;
	*vl = e - k;
	return true;
}

/* Keeps the ETag, the Date and Retry-After; every other header is left to curl. */
static size_t header_cb(char *h, size_t size, size_t nmemb, void *ud)
{
	struct floe_http_resp *r = ((struct xfer *)ud)->r;
	size_t n = size * nmemb, vl;
	const char *v;
	if (header_value(h, n, "date:", &v, &vl))
		r->has_date = floe_sigv4_parse_http_date(v, vl, &r->date) == 0;
	if (header_value(h, n, "retry-after:", &v, &vl))
		floe_sigv4_parse_retry_after(v, vl, &r->retry_after_s, &r->retry_at);
	if (header_value(h, n, "etag:", &v, &vl)) {
		size_t len = vl < sizeof(r->etag) - 1 ? vl : sizeof(r->etag) - 1;
		memcpy(r->etag, v, len);
		r->etag[len] = '\0';
	}
	return n;
}

struct stop {
	bool (*fn)(const void *ctx);
	const void *ctx;
};

static int progress_cb(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	const struct stop *s = ud;
	return s->fn && s->fn(s->ctx) ? 1 : 0;
}

static long clamp_long(int64_t v)
{
	return v > LONG_MAX ? LONG_MAX : v < 0 ? 0 : (long)v;
}

static void set_options(CURL *c, const struct floe_http_req *rq, struct curl_slist *hl, char *errbuf,
			struct xfer *x, struct stop *s)
{
	curl_easy_setopt(c, CURLOPT_URL, rq->url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (rq->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, rq->ca_file);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, clamp_long(rq->connect_ms ? rq->connect_ms : 10000));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, clamp_long(rq->timeout_ms ? rq->timeout_ms : 60000));
	if (rq->no_proxy)
		curl_easy_setopt(c, CURLOPT_PROXY, "");
	if (rq->once)
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, x);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, x);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)s);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (rq->body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
	}
	if (strcmp(rq->method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(rq->method, rq->body ? "POST" : "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
}

int floe_http_run(struct floe_http *h, const struct floe_http_req *rq, struct floe_http_resp *r,
		  char *why, size_t cap)
{
	struct curl_slist *hl = NULL;
	struct stop s = {rq->stopped, rq->stop_ctx};
	if (s.fn && s.fn(s.ctx))
		return -ECANCELED;
	if (!r->alloc)
		r->alloc = h->alloc;
	r->status = 0;
	r->etag[0] = '\0';
	r->has_date = false;
	r->retry_after_s = -1;
	r->retry_at = 0;
	r->timed_out = false;
	int rc = 0;
	for (size_t i = 0; rq->headers && rq->headers[i] && rc == 0; i++) {
		struct curl_slist *n = curl_slist_append(hl, rq->headers[i]);
		if (!n)
			rc = FLOE_ENOMEM;
		else
			hl = n;
	}
	/* curl adds "Expect: 100-continue" to large POSTs, which some servers never answer. */
	struct curl_slist *n = rc ? NULL : curl_slist_append(hl, "Expect:");
	if (!n) {
		curl_slist_free_all(hl);
		return FLOE_ENOMEM;
	}
	hl = n;
	CURL *c = h->curl;
	char errbuf[CURL_ERROR_SIZE] = "";
	struct xfer x = {r, rq->max ? rq->max : DEFAULT_MAX};
	curl_easy_reset(c);
	set_options(c, rq, hl, errbuf, &x, &s);
	/* A step for whoever watches this thread (platform/beat.h); the request's own
	 * timeout bounds it. */
	floe_beat("HTTP request");
	CURLcode cc = curl_easy_perform(c);
	long st = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
	/* The request may have carried a secret in a header: curl keeps no copy after
	 * perform, but our list does. */
	for (struct curl_slist *h2 = hl; h2; h2 = h2->next)
		floe_wipe(h2->data, strlen(h2->data));
	curl_slist_free_all(hl);
	curl_easy_reset(c);
	r->status = (int)st;
	if (cc == CURLE_OK)
		return FLOE_HTTP_ANSWERED;
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return -ECANCELED;
	if (cc == CURLE_WRITE_ERROR && !r->too_big)
		return FLOE_ENOMEM;
	if (r->too_big)
		snprintf(why, cap, "answer over %zu bytes", x.max);
	else
		snprintf(why, cap, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
	if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_COULDNT_RESOLVE_HOST ||
	    cc == CURLE_COULDNT_RESOLVE_PROXY)
		return FLOE_HTTP_UNREACHABLE;
	r->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
	return FLOE_HTTP_FAILED;
}

void floe_http_resp_fini(struct floe_http_resp *r)
{
	floe_wipe_free(r->alloc, r->data);
	memset(r, 0, sizeof(*r));
}
