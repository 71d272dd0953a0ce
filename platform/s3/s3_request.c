/* One S3 request: SigV4 signing with the corrected clock, curl options on the client's easy
 * handle, the transfer on its multi handle, classification of the outcome and the retry
 * loop with full-jitter backoff (see s3_request.h). */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64 /* pread beyond 2 GiB on armhf */
#endif
#include "platform/s3/s3_request.h"
#include "platform/s3/s3_credprov.h"

#include "platform/s3/s3_stats.h"

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/beat.h"
#include "platform/clock.h"
#include "platform/http.h"
#include "platform/log.h"
#include "platform/sha.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

int floe_s3_parser_rc(int rc, const struct floe_err *e)
{
	if (rc == 0 || rc == FLOE_ENOMEM || e->code != rc)
		return rc;
	return FLOE_S3_EPROTO;
}

char *floe_s3_join3(struct floe_alloc *a, const char *x, const char *y, const char *z)
{
	size_t lx = strlen(x), ly = strlen(y), lz = strlen(z);
	char *s = floe_malloc(a, lx + ly + lz + 1);
	if (s) {
		memcpy(s, x, lx);
		memcpy(s + lx, y, ly);
		memcpy(s + lx + ly, z, lz + 1);
	}
	return s;
}

/* ---- curl callbacks ------------------------------------------------------------------ */

static size_t read_cb(char *dst, size_t size, size_t nmemb, void *ud)
{
	struct floe_s3_body *b = ud;
	size_t want = size * nmemb;
	int64_t left = b->len - b->pos;
	if ((int64_t)want > left)
		want = (size_t)left;
	if (want == 0)
		return 0;
	if (b->mem) {
		memcpy(dst, b->mem + b->pos, want);
	} else {
		ssize_t got;
		do
			got = pread(b->fd, dst, want, (off_t)(b->off + b->pos));
		while (got < 0 && errno == EINTR);
		if (got <= 0)
			return CURL_READFUNC_ABORT; /* the file shrank under us */
		want = (size_t)got;
	}
	b->pos += (int64_t)want;
	return want;
}

static int seek_cb(void *ud, curl_off_t offset, int origin)
{
	struct floe_s3_body *b = ud;
	if (origin != SEEK_SET || offset < 0 || offset > b->len)
		return CURL_SEEKFUNC_CANTSEEK;
	b->pos = offset;
	return CURL_SEEKFUNC_OK;
}

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	struct floe_s3_resp *r = ud;
	size_t n = size * nmemb;
	if (r->status < 200 || r->status > 299) {
		/* Keep the head of an error document (r->err's maximum); drop the rest. */
		size_t room = r->err.max - 1 - r->err.len;
		size_t take = n < room ? n : room;
		if (take && floe_buf_append(&r->err, src, take) == 0)
			(void)floe_buf_terminate(&r->err);
		return n;
	}
	if (n > r->max - r->body.len) {
		r->too_big = true;
		return 0; /* aborts the transfer with CURLE_WRITE_ERROR */
	}
	/* Out of memory (the budget) aborts it too: classify tells the two apart. */
	if (floe_buf_append(&r->body, src, n) || floe_buf_terminate(&r->body))
		return 0;
	return n;
}

static bool header_is(const char *h, size_t n, const char *name, const char **val, size_t *vlen)
{
	size_t nl = strlen(name);
	if (n <= nl || h[nl] != ':' || strncasecmp(h, name, nl) != 0)
		return false;
	const char *v = h + nl + 1, *e = h + n;
	while (v < e && (*v == ' ' || *v == '\t'))
		v++;
	while (e > v && (e[-1] == '\r' || e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
		e--;
	*val = v;
	*vlen = (size_t)(e - v);
	return true;
}

/* Copies a header value for messages: truncated to cap - 1 bytes, bytes outside printable
 * ASCII shown as '?', so that a hostile server cannot write control sequences to a log. */
static void copy_printable(char *dst, size_t cap, const char *v, size_t vl)
{
	size_t n = vl < cap - 1 ? vl : cap - 1;
	for (size_t i = 0; i < n; i++)
		dst[i] = v[i] >= 0x20 && v[i] < 0x7f ? v[i] : '?';
	dst[n] = '\0';
}

static size_t header_cb(char *h, size_t size, size_t nmemb, void *ud)
{
	struct floe_s3_resp *r = ud;
	size_t n = size * nmemb;
	const char *v;
	size_t vl;
	if (n > 9 && memcmp(h, "HTTP/", 5) == 0) {
		/* A new status line (after "100 Continue" too) starts a new response. */
		const char *sp = memchr(h, ' ', n);
		int st = 0;
		if (sp && sp + 4 <= h + n)
			for (int i = 1; i <= 3; i++)
				if (sp[i] >= '0' && sp[i] <= '9')
					st = st * 10 + (sp[i] - '0');
		r->status = st;
		r->etag[0] = '\0';
		r->content_length = -1;
		r->has_date = false;
		r->location[0] = r->bucket_region[0] = '\0';
		r->retry_after_s = -1;
		r->retry_at = 0;
	} else if (header_is(h, n, "retry-after", &v, &vl)) {
		floe_sigv4_parse_retry_after(v, vl, &r->retry_after_s, &r->retry_at);
	} else if (header_is(h, n, "location", &v, &vl)) {
		copy_printable(r->location, sizeof(r->location), v, vl);
	} else if (header_is(h, n, "x-amz-bucket-region", &v, &vl)) {
		copy_printable(r->bucket_region, sizeof(r->bucket_region), v, vl);
	} else if (header_is(h, n, "etag", &v, &vl)) {
		if (vl < sizeof(r->etag)) {
			memcpy(r->etag, v, vl);
			r->etag[vl] = '\0';
		}
	} else if (header_is(h, n, "content-length", &v, &vl)) {
		int64_t x = 0;
		bool ok = vl > 0 && vl < 19;
		for (size_t i = 0; ok && i < vl; i++) {
			ok = v[i] >= '0' && v[i] <= '9';
			x = x * 10 + (v[i] - '0');
		}
		r->content_length = ok ? x : -1;
	} else if (header_is(h, n, "date", &v, &vl)) {
		r->has_date = floe_sigv4_parse_http_date(v, vl, &r->date) == 0;
	}
	return n;
}

/* ---- one attempt -------------------------------------------------------------------- */

/* Appends s to a header list as "Name: value"; false on allocation failure. */
static bool add_header(struct floe_alloc *a, struct curl_slist **list, const char *name,
		       const char *value)
{
	char *line = floe_s3_join3(a, name, ": ", value);
	if (!line)
		return false;
	struct curl_slist *n = curl_slist_append(*list, line);
	floe_free(a, line);
	if (!n)
		return false;
	*list = n;
	return true;
}

/* Builds the raw path "/bucket/key" (or "/key") for signing; caller frees. */
static char *raw_path(const struct floe_s3 *s3, const struct floe_s3_req *rq)
{
	if (!rq->key)
		return floe_s3_join3(s3->o.alloc, s3->path_prefix, *s3->path_prefix ? "" : "/", "");
	return floe_s3_join3(s3->o.alloc, s3->path_prefix, "/", rq->key);
}

/* The request URL: base + encoded path + "?" + encoded query. Caller frees. */
static char *build_url(const struct floe_s3 *s3, const struct floe_s3_req *rq, const char *path)
{
	size_t plen = strlen(path);
	size_t need = strlen(s3->base) + floe_sigv4_uri_encoded_len(path, plen, 1) + 2;
	for (size_t i = 0; i < rq->nq; i++) {
		const char *v = rq->q[i].value ? rq->q[i].value : "";
		need += floe_sigv4_uri_encoded_len(rq->q[i].name, strlen(rq->q[i].name), 0) +
			floe_sigv4_uri_encoded_len(v, strlen(v), 0) + 2;
	}
	char *url = floe_malloc(s3->o.alloc, need);
	if (!url)
		return NULL;
	size_t pos = strlen(s3->base);
	memcpy(url, s3->base, pos + 1);
	int rc = floe_sigv4_uri_encode(path, plen, 1, url, need, &pos);
	for (size_t i = 0; rc == 0 && i < rq->nq; i++) {
		const char *v = rq->q[i].value ? rq->q[i].value : "";
		url[pos++] = i ? '&' : '?';
		rc =
		    floe_sigv4_uri_encode(rq->q[i].name, strlen(rq->q[i].name), 0, url, need, &pos);
		if (rc == 0) {
			url[pos++] = '=';
			rc = floe_sigv4_uri_encode(v, strlen(v), 0, url, need, &pos);
		}
	}
	if (rc) {
		floe_free(s3->o.alloc, url);
		return NULL;
	}
	return url;
}

/* ---- the transfer on the multi handle ------------------------------------------------ */

/* Where a transfer learns that it ended; found through CURLOPT_PRIVATE, so completions stay
 * apart when several easy handles share the multi handle. */
struct xfer {
	bool done;
	CURLcode result;
};

/* The longest single wait in curl_multi_poll. curl shortens every wait to its own next
 * timer and enforces the connect and stall (low speed) timeouts itself; the deadline and
 * the stop grace are checked here between two waits, so this bounds how late a cut can
 * come (and costs ten wake-ups a second only while a request runs). */
#define POLL_MAX_MS 100

/* Hands every finished transfer on m its result. */
static void collect(CURLM *m)
{
	CURLMsg *msg;
	int left;
	while ((msg = curl_multi_info_read(m, &left)) != NULL) {
		char *priv = NULL;
		if (msg->msg != CURLMSG_DONE ||
		    curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, &priv) != CURLE_OK ||
		    !priv)
			continue;
		struct xfer *x = (struct xfer *)(void *)priv;
		x->done = true;
		x->result = msg->data.result;
	}
}

/* Runs the transfer prepared on c (not on any multi handle) on the client's multi handle
 * until it ends, and returns its CURLcode; *sent tells whether request bytes went out. c
 * is off the multi handle again on return, its connection left in the multi's cache. */
/* Whether the limits cut the transfer on c, which has run since start_ns; records why in
 * s3->cut with the elapsed time and the bytes moved. */
static bool cut_now(struct floe_s3 *s3, CURL *c, int64_t start_ns, int64_t *last_moved)
{
	curl_off_t up = 0, down = 0;
	curl_easy_getinfo(c, CURLINFO_SIZE_UPLOAD_T, &up);
	curl_easy_getinfo(c, CURLINFO_SIZE_DOWNLOAD_T, &down);
	int64_t moved = (int64_t)up + (int64_t)down;
	/* Bytes that move are progress, for whoever watches this thread (platform/beat.h):
	 * a large upload over a slow uplink is slow, not stuck. */
	if (moved != *last_moved) {
		*last_moved = moved;
		floe_beat(NULL);
	}
	int64_t elapsed = (floe_clock_mono_ns() - start_ns) / 1000000;
	int v = floe_s3_limits_check(&s3->limits, elapsed, moved);
	if (v == FLOE_S3_LIMITS_GO)
		return false;
	s3->cut = v;
	s3->cut_elapsed_ms = elapsed;
	s3->cut_moved = moved;
	return true;
}

static CURLcode perform(struct floe_s3 *s3, CURL *c, bool *sent)
{
	struct xfer x = {false, CURLE_OK};
	int64_t start_ns = floe_clock_mono_ns(), moved = 0;
	floe_beat("S3 request");
	s3->cut = FLOE_S3_LIMITS_GO;
	curl_easy_setopt(c, CURLOPT_PRIVATE, (void *)&x);
	CURLMcode mc = curl_multi_add_handle(s3->multi, c);
	if (mc != CURLM_OK) {
		curl_easy_setopt(c, CURLOPT_PRIVATE, NULL);
		*sent = false;
		return mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_FAILED_INIT;
	}
	for (;;) {
		int running = 0;
		if ((mc = curl_multi_perform(s3->multi, &running)) != CURLM_OK)
			break;
		collect(s3->multi);
		/* A transfer that ended has queued its message before running dropped. */
		if (x.done || running == 0)
			break;
		if (cut_now(s3, c, start_ns, &moved)) {
			/* Removing the handle below aborts the transfer; its connection is
			 * closed, never reused half-way through an answer. */
			x.done = true;
			x.result = CURLE_ABORTED_BY_CALLBACK;
			break;
		}
		if ((mc = curl_multi_poll(s3->multi, NULL, 0, POLL_MAX_MS, NULL)) != CURLM_OK)
			break;
	}
	long req_size = 0;
	curl_easy_getinfo(c, CURLINFO_REQUEST_SIZE, &req_size);
	*sent = req_size > 0;
	curl_multi_remove_handle(s3->multi, c);
	curl_easy_setopt(c, CURLOPT_PRIVATE, NULL);
	if (x.done)
		return x.result;
	/* The multi interface itself failed: reported as curl_easy_perform reports it (and so
	 * classified as a transport error, ambiguous for a conditional write once sent). */
	return mc == CURLM_OUT_OF_MEMORY ? CURLE_OUT_OF_MEMORY : CURLE_BAD_FUNCTION_ARGUMENT;
}

/* curl takes timeouts as long, which is 32-bit on armhf. */
static long clamp_long(int64_t v)
{
	return v > LONG_MAX ? LONG_MAX : v < 0 ? 0 : (long)v;
}

/* Sets every option of one attempt on c (reset first), headers hl and url borrowed. */
static void set_transfer(struct floe_s3 *s3, struct floe_s3_req *rq, CURL *c, const char *url,
			 struct curl_slist *hl, struct floe_s3_resp *r)
{
	curl_easy_reset(c); /* the connection cache is the multi handle's: keep-alive survives */
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_PATH_AS_IS, 1L); /* never rewrite "/./" in keys */
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, s3->errbuf);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, clamp_long(s3->o.connect_timeout_ms));
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME,
			 clamp_long((s3->o.stall_timeout_ms + 999) / 1000));
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (s3->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, s3->ca_file);
	if (s3->ca_path)
		curl_easy_setopt(c, CURLOPT_CAPATH, s3->ca_path);
	if (s3->connect_to)
		curl_easy_setopt(c, CURLOPT_CONNECT_TO, s3->connect_to);
	/* On a reused keep-alive connection that turns out dead, curl re-sends the request by
	 * itself, even one the server may have applied. For a conditional write that could turn
	 * our own success into a 412, so those get a connection of their own (not taken from the
	 * multi handle's cache; it joins the cache afterwards). */
	if (rq->conditional)
		curl_easy_setopt(c, CURLOPT_FRESH_CONNECT, 1L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, r);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	if (rq->head) {
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	} else if (rq->has_body) {
		rq->body.pos = 0;
		curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
		curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->body.len);
		curl_easy_setopt(c, CURLOPT_READFUNCTION, read_cb);
		curl_easy_setopt(c, CURLOPT_READDATA, &rq->body);
		curl_easy_setopt(c, CURLOPT_SEEKFUNCTION, seek_cb);
		curl_easy_setopt(c, CURLOPT_SEEKDATA, &rq->body);
		if (strcmp(rq->method, "PUT") != 0)
			curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	} else if (strcmp(rq->method, "GET") != 0) {
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
	}
}

struct header_list {
	struct floe_alloc *alloc;
	struct curl_slist *hl;
};

static int add_signed(void *ctx, const char *name, const char *value)
{
	struct header_list *l = ctx;
	return add_header(l->alloc, &l->hl, name, value) ? 0 : FLOE_ENOMEM;
}

/* Signs and performs rq once. Returns the CURLcode (CURLE_OK when a response arrived) or
 * a negative errno for local failures; *sent tells whether request bytes went out. */
static int attempt(struct floe_s3 *s3, struct floe_s3_req *rq, const char *payload_hash,
		   struct floe_s3_resp *r, bool *sent)
{
	int rc = FLOE_ENOMEM;
	struct header_list l = {s3->o.alloc, NULL};
	char *path = raw_path(s3, rq);
	char *url = path ? build_url(s3, rq, path) : NULL;
	*sent = false;
	if (!url)
		goto out;

	char amz_date[17];
	int64_t now = s3->o.now_fn(s3->o.fn_ctx) + s3->clock_offset;
	if (floe_sigv4_format_date(now, amz_date) != 0) {
		rc = -EINVAL;
		goto out;
	}
	struct floe_sigv4_header h[8];
	size_t nh = 0;
	h[nh++] = (struct floe_sigv4_header){"host", s3->host};
	h[nh++] = (struct floe_sigv4_header){"x-amz-date", amz_date};
	h[nh++] = (struct floe_sigv4_header){"x-amz-content-sha256", payload_hash};
	for (size_t i = 0; i < rq->nh; i++)
		h[nh++] = rq->h[i];
	rc = FLOE_ENOMEM;
	for (size_t i = 0; i < nh; i++)
		if (!add_header(s3->o.alloc, &l.hl, h[i].name, h[i].value))
			goto out;
	struct floe_s3_to_sign in = {rq->method, url, s3->region, h, nh, now, NULL, 0};
	if (rq->has_body && rq->body.mem && strcmp(rq->method, "POST") == 0) {
		in.body = (const char *)rq->body.mem;
		in.body_len = (size_t)rq->body.len;
	}
	struct floe_s3_sigv4_ctx x = {s3, path, rq, payload_hash};
	rc = s3->o.sign_fn ? s3->o.sign_fn(s3->o.sign_ctx, &in, add_signed, &l)
			   : floe_s3_sign_sigv4(&x, &in, add_signed, &l);
	if (rc)
		goto out;
	/* Bodies go through CURLOPT_UPLOAD (also for POST, via CUSTOMREQUEST), so curl adds
	 * no form Content-Type of its own that we would not have signed. */

	CURL *c = s3->curl;
	set_transfer(s3, rq, c, url, l.hl, r);
	s3->errbuf[0] = '\0';
	rc = (int)perform(s3, c, sent);
out:
	curl_slist_free_all(l.hl);
	floe_free(s3->o.alloc, url);
	floe_free(s3->o.alloc, path);
	return rc;
}

/* ---- the retry loop ------------------------------------------------------------------ */

enum verdict { DONE, RETRY, SKEW };

/* Empties r for an attempt whose body may hold max bytes. */
static void resp_reset(struct floe_s3 *s3, struct floe_s3_resp *r, size_t max)
{
	floe_s3_resp_fini(r);
	/* One byte more than the body for the NUL that follows it. */
	floe_buf_init(&r->body, s3->o.alloc, max + 1);
	floe_buf_init(&r->err, s3->o.alloc, FLOE_S3_ERR_BODY_MAX + 1);
	r->max = max;
	r->content_length = -1;
}

void floe_s3_resp_fini(struct floe_s3_resp *r)
{
	floe_buf_fini(&r->body);
	floe_buf_fini(&r->err);
	memset(r, 0, sizeof(*r));
}

/* Decides what a finished attempt means: *rc is the result if DONE. */
/* An attempt that ended without an answer (cc != CURLE_OK): cut by the limits, or failed
 * in transport. */
static enum verdict classify_transport(const struct floe_s3 *s3, const struct floe_s3_req *rq,
				       int cc, bool sent, const struct floe_s3_resp *r, int *rc)
{
	if (s3->cut != FLOE_S3_LIMITS_GO) {
		bool stopped = s3->cut == FLOE_S3_LIMITS_STOPPED;
		*rc = stopped ? FLOE_S3_ESTOPPED : FLOE_S3_ETIMEOUT;
		/* As for any cut connection: a conditional write may have been applied. */
		if (rq->conditional && sent) {
			*rc = FLOE_S3_EAMBIGUOUS;
			return DONE;
		}
		return stopped ? DONE : RETRY;
	}
	switch (cc) {
	case CURLE_WRITE_ERROR:
		*rc = r->too_big ? -EFBIG : FLOE_ENOMEM;
		return DONE;
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CACERT_BADFILE:
	case CURLE_SSL_CERTPROBLEM:
	case CURLE_SSL_ISSUER_ERROR:
		*rc = FLOE_S3_ETLS;
		return DONE;
	case CURLE_SSL_CONNECT_ERROR:
		*rc = FLOE_S3_ETLS;
		break;
	case CURLE_OPERATION_TIMEDOUT:
		*rc = FLOE_S3_ETIMEOUT;
		break;
	case CURLE_COULDNT_RESOLVE_HOST:
	case CURLE_COULDNT_CONNECT:
	case CURLE_SEND_ERROR:
	case CURLE_RECV_ERROR:
	case CURLE_GOT_NOTHING:
	case CURLE_PARTIAL_FILE:
	case CURLE_HTTP2:
	case CURLE_HTTP2_STREAM:
		*rc = FLOE_S3_ETRANSPORT;
		break;
	case CURLE_READ_ERROR:
	case CURLE_ABORTED_BY_CALLBACK:
		*rc = -EIO; /* our file failed us: retrying will not help */
		return DONE;
	default:
		*rc = FLOE_S3_ETRANSPORT;
		break;
	}
	/* The request may have reached the server: a conditional write must not be
	 * repeated blindly (a retried create can hit its own object). */
	if (rq->conditional && sent) {
		*rc = FLOE_S3_EAMBIGUOUS;
		return DONE;
	}
	return RETRY;
}

static enum verdict classify(struct floe_s3 *s3, const struct floe_s3_req *rq, int cc, bool sent,
			     const struct floe_s3_resp *r, int *rc)
{
	if (cc < 0) {
		*rc = cc;
		/* A credential provider whose endpoint did not answer: worth another try. */
		return cc == FLOE_S3_EUNAVAILABLE ? RETRY : DONE;
	}
	if (cc != CURLE_OK)
		return classify_transport(s3, rq, cc, sent, r, rc);
	int st = r->status;
	if (st >= 200 && st <= 299) {
		*rc = 0;
		return DONE;
	}
	switch (st) {
	case 404:
		/* A missing bucket is a configuration error, not a missing key: its own code,
		 * so that nobody reads "No such file or directory" for it. */
		*rc = strcmp(s3->last_code, "NoSuchBucket") == 0 ? FLOE_S3_ENOBUCKET : -ENOENT;
		return DONE;
	case 412:
		*rc = FLOE_S3_EPRECONDITION;
		return DONE;
	case 409:
		*rc = FLOE_S3_ECONFLICT;
		return rq->conditional ? DONE : RETRY;
	case 401:
	case 403:
		*rc = FLOE_S3_EAUTH;
		/* A HEAD has no body to name RequestTimeTooSkewed: a clock correction learnt
		 * from this very answer is as good a reason to try once more. */
		return strcmp(s3->last_code, "RequestTimeTooSkewed") == 0 || s3->offset_changed
			   ? SKEW
			   : DONE;
	case 301:
	case 302:
	case 303:
	case 307:
	case 308:
		/* Never followed: the signature names this host, and following would hand our
		 * credentials and data to wherever the answer points. */
		*rc = FLOE_S3_EREDIRECT;
		return DONE;
	case 408:
	case 429:
		*rc = FLOE_S3_EUNAVAILABLE;
		return RETRY; /* the request was not processed */
	case 503:
		*rc = FLOE_S3_EUNAVAILABLE;
		return RETRY; /* SlowDown: rejected before processing */
	case 500:
	case 502:
	case 504:
		/* RGW answers 500 to some losers of a conditional race: outcome unknown. */
		if (rq->conditional) {
			*rc = FLOE_S3_EAMBIGUOUS;
			return DONE;
		}
		*rc = FLOE_S3_EUNAVAILABLE;
		return RETRY;
	default:
		*rc = FLOE_S3_EHTTP;
		return DONE;
	}
}

/* How long the answer asked us to wait (Retry-After), in ms (FLOE_HTTP_RETRY_AFTER_MAX_S
 * seconds at most); 0 when it did not. A date is taken against the answer's
 * own Date when it has one (the server's clock, whatever ours says), else ours with the
 * offset learnt. */
static int64_t asked_ms(const struct floe_s3 *s3, const struct floe_s3_resp *r)
{
	int64_t server_now =
	    r->has_date ? r->date : s3->o.now_fn(s3->o.fn_ctx) + s3->clock_offset;
	return floe_http_retry_wait_s(r->retry_after_s, r->retry_at, server_now) * 1000;
}

static int64_t backoff_ms(struct floe_s3 *s3, int retry)
{
	int64_t ceil = s3->o.backoff_base_ms;
	for (int i = 0; i < retry && ceil < s3->o.backoff_cap_ms; i++)
		ceil *= 2;
	if (ceil > s3->o.backoff_cap_ms)
		ceil = s3->o.backoff_cap_ms;
	/* Full jitter: uniform in [0, ceil]. */
	return (int64_t)(s3->o.random_fn(s3->o.fn_ctx) % (uint64_t)(ceil + 1));
}

/* Learns the server's clock from its Date header. Offsets under a minute are noise from
 * the 1 s resolution and latency; SigV4 allows 15 minutes. */
static void learn_clock(struct floe_s3 *s3, const struct floe_s3_resp *r)
{
	s3->offset_changed = false;
	if (!r->has_date)
		return;
	int64_t diff = r->date - s3->o.now_fn(s3->o.fn_ctx);
	int64_t next = (diff >= 60 || diff <= -60) ? diff : 0;
	int64_t moved = next - s3->clock_offset;
	s3->offset_changed = moved >= 60 || moved <= -60;
	s3->clock_offset = next;
}

/* "METHOD s3://bucket/key" (or the bucket and its query for bucket operations) for
 * messages, truncated to cap. */
static void describe(const struct floe_s3 *s3, const struct floe_s3_req *rq, char *out, size_t cap)
{
	int n =
	    snprintf(out, cap, "%s s3://%s/%.300s", rq->method, s3->bucket, rq->key ? rq->key : "");
	for (size_t i = 0; !rq->key && i < rq->nq && i < 3 && n > 0 && (size_t)n < cap; i++)
		n += snprintf(out + n, cap - (size_t)n, "%s%s=%.200s", i ? "&" : "?", rq->q[i].name,
			      rq->q[i].value ? rq->q[i].value : "");
}

/* Logs what an operator needs from a finished attempt: a cut by the deadline or a stop,
 * and final answers whose status says more than the error code (redirects, refusals,
 * unexpected statuses). retrying: another attempt follows. */
static void report(const struct floe_s3 *s3, const struct floe_s3_req *rq, int rc, bool retrying)
{
	char what[640];
	if (s3->cut == FLOE_S3_LIMITS_GO &&
	    (s3->last_status == 0 ||
	     (rc != FLOE_S3_EREDIRECT && rc != FLOE_S3_EAUTH && rc != FLOE_S3_EHTTP)))
		return;
	describe(s3, rq, what, sizeof(what));
	if (s3->cut == FLOE_S3_LIMITS_OVERDUE) {
		floe_warn(
		    "s3: %s: no complete answer within its deadline: cut after %.1f s with "
		    "%lld bytes moved (deadline %.1f s: %.1f s plus 1 s per %lld bytes moved)%s",
		    what, (double)s3->cut_elapsed_ms / 1000, (long long)s3->cut_moved,
		    (double)floe_s3_limits_deadline_ms(&s3->limits, s3->cut_moved) / 1000,
		    (double)s3->limits.base_ms / 1000, (long long)s3->limits.min_rate,
		    retrying ? "; retrying" : "");
	} else if (s3->cut == FLOE_S3_LIMITS_STOPPED) {
		floe_warn("s3: %s: abandoned after %.1f s: the agent is stopping", what,
			  (double)s3->cut_elapsed_ms / 1000);
	} else if (rc == FLOE_S3_EREDIRECT) {
		floe_error(
		    "s3: %s: the server answered %d%s%s (Location: %s; bucket region: %s): the "
		    "bucket is likely in another region or served by another endpoint; check "
		    "the configured region and endpoint (floe does not follow redirects, which "
		    "would send its credentials and data elsewhere)",
		    what, s3->last_status, s3->last_code[0] ? " " : "", s3->last_code,
		    s3->last_location[0] ? s3->last_location : "none",
		    s3->resp_region[0] ? s3->resp_region : "not given");
	} else if (!retrying) {
		floe_warn("s3: %s: HTTP %d%s%s", what, s3->last_status, s3->last_code[0] ? " " : "",
			  s3->last_code);
	}
}

/* Records in s3->last_error what the operator needs of a failed attempt (rc): the request,
 * its URL, and curl's reason for a transport failure (cc) or the status and S3 error code
 * of an answer. An answer the request expects and a success clear it. */
static void note_error(struct floe_s3 *s3, const struct floe_s3_req *rq, int cc, int rc)
{
	char *e = s3->last_error;
	size_t cap = sizeof(s3->last_error);
	if (rc == 0 || (cc == CURLE_OK && rq->expect && s3->last_status == rq->expect &&
			rc != FLOE_S3_ENOBUCKET)) {
		e[0] = '\0';
		return;
	}
	int n = snprintf(e, cap, "%s %s%s/%.300s: ", rq->method, s3->base, s3->path_prefix,
			 rq->key ? rq->key : "");
	if (n < 0 || (size_t)n >= cap)
		return;
	struct floe_err why = {0};
	/* Unsent for want of keys: the provider's reasons (a key file missing, STS away). */
	if (cc < 0 && s3->credprov && (cc == FLOE_S3_EUNAVAILABLE || cc == FLOE_S3_EAUTH))
		floe_s3_credprov_error(s3->credprov, &why);
	if (cc < 0 && why.msg[0])
		snprintf(e + n, cap - (size_t)n, "no credentials to sign with: %.600s", why.msg);
	else if (cc < 0)
		snprintf(e + n, cap - (size_t)n, "%s", floe_strerror(cc));
	else if (cc != CURLE_OK)
		snprintf(e + n, cap - (size_t)n, "%s%s%s", curl_easy_strerror((CURLcode)cc),
			 s3->errbuf[0] ? ": " : "", s3->errbuf);
	else
		snprintf(e + n, cap - (size_t)n, "HTTP %d%s%s", s3->last_status,
			 s3->last_code[0] ? " " : "", s3->last_code);
}

int floe_s3_request_run(struct floe_s3 *s3, struct floe_s3_req *rq, struct floe_s3_resp *r)
{
	char hash[FLOE_SHA256_HEX_LEN + 1];
	const char *payload_hash = "UNSIGNED-PAYLOAD";
	int rc = 0;
	if (!s3->o.unsigned_payload) {
		if (!rq->has_body)
			rc = floe_sha256_hex("", 0, hash);
		else if (rq->body.mem)
			rc = floe_sha256_hex(rq->body.mem, (size_t)rq->body.len, hash);
		else
			rc = floe_sha256_hex_fd(rq->body.fd, rq->body.off, rq->body.len, hash);
		if (rc)
			return rc;
		payload_hash = hash;
	}
	bool skew_retried = false, cred_retried = false;
	int retries = 0;
	enum floe_s3_kind kind = floe_s3_stats_kind(rq);
	s3->last_attempts = 0;
	/* Time spent: real time of the requests plus the backoff we asked for (counted as
	 * asked, so that an injected sleep keeps tests instant and deterministic). */
	int64_t start_ns = floe_clock_mono_ns(), slept_ms = 0;
	for (;;) {
		resp_reset(s3, r, rq->max);
		s3->last_status = 0;
		s3->last_code[0] = s3->last_location[0] = s3->resp_region[0] = '\0';
		s3->cut = FLOE_S3_LIMITS_GO;
		/* Past the stop grace nothing new starts: the agent is on its way out. */
		if (floe_s3_limits_stopped(&s3->limits))
			return FLOE_S3_ESTOPPED;
		bool sent;
		int cc = attempt(s3, rq, payload_hash, r, &sent);
		s3->last_attempts++;
		if (cc == CURLE_OK) {
			s3->last_status = r->status;
			learn_clock(s3, r);
			if (r->err.len && floe_aws_xml_find(s3->o.alloc, (const char *)r->err.data,
							    r->err.len, "Code", s3->last_code,
							    sizeof(s3->last_code), NULL) != 0)
				s3->last_code[0] = '\0';
			snprintf(s3->last_location, sizeof(s3->last_location), "%s", r->location);
			snprintf(s3->resp_region, sizeof(s3->resp_region), "%s", r->bucket_region);
		}
		/* A local failure (signing, credentials) sent no request: not counted. A
		 * missing bucket is never the answer an existence check expects. */
		int expect = strcmp(s3->last_code, "NoSuchBucket") == 0 ? 0 : rq->expect;
		if (cc >= 0)
			floe_s3_stats_attempt(kind, floe_s3_stats_class(s3->cut, cc, r->status, expect));
		enum verdict v = classify(s3, rq, cc, sent, r, &rc);
		note_error(s3, rq, cc, rc);
		if (v == DONE && rc == FLOE_S3_EAUTH && s3->credprov && !cred_retried &&
		    (strcmp(s3->last_code, "ExpiredToken") == 0 ||
		     strcmp(s3->last_code, "TokenRefreshRequired") == 0 ||
		     strcmp(s3->last_code, "InvalidAccessKeyId") == 0 ||
		     strcmp(s3->last_code, "InvalidToken") == 0 ||
		     strcmp(s3->last_code, "SignatureDoesNotMatch") == 0)) {
			/* Temporary credentials expired early (revoked, or our clock), or keys
			 * the store no longer knows (rotated: their file, or the shared
			 * credentials file, holds new ones): fetch them again, once. */
			floe_s3_credprov_invalidate(s3->credprov);
			cred_retried = true;
			floe_s3_stats_retry(kind);
			continue;
		}
		if (v == DONE) {
			if (rc == 0)
				s3->not_before_ns = 0;
			report(s3, rq, rc, false);
			return rc;
		}
		if (v == SKEW) {
			if (skew_retried) {
				report(s3, rq, rc, false);
				return rc;
			}
			skew_retried = true; /* the offset was learnt from this answer's Date */
			floe_s3_stats_retry(kind);
			continue;
		}
		int64_t pause = backoff_ms(s3, retries);
		/* A store that said when to come back (429, 503 SlowDown with Retry-After) is
		 * not asked sooner: by this retry, and, through not_before_ns, by the caller's
		 * next request when this one gives up. */
		int64_t asked =
		    cc == CURLE_OK && (r->status == 429 || r->status == 503) ? asked_ms(s3, r) : 0;
		if (asked > 0) {
			s3->not_before_ns = floe_clock_mono_ns() + asked * 1000000;
			if (pause < asked)
				pause = asked;
		}
		int64_t spent = (floe_clock_mono_ns() - start_ns) / 1000000 + slept_ms;
		/* After a stop, a pause that would outlast the grace is not worth taking. */
		int64_t grace = floe_s3_limits_grace_left_ms(&s3->limits);
		bool retry = retries < s3->o.max_retries &&
			     spent + pause <= s3->o.retry_budget_ms && (grace < 0 || pause < grace);
		report(s3, rq, rc, retry);
		if (!retry)
			return rc;
		floe_beat("S3 request: waiting to retry");
		s3->o.sleep_fn(s3->o.fn_ctx, pause);
		slept_ms += pause;
		retries++;
		floe_s3_stats_retry(kind);
	}
}
