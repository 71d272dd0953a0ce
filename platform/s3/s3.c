/* S3 client on libcurl with floe's own SigV4 (see s3.h): construction, object operations
 * and listing. Requests run through s3_request.c; multipart uploads are in s3_multipart.c. */
#include "platform/s3/s3.h"

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "platform/clock.h"
#include "platform/log.h"
#include "platform/s3/s3_request.h"
#include "platform/signal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* ---- defaults for the injected functions ------------------------------------------- */

static uint64_t default_random(void *ctx)
{
	uint64_t v = 0;
	if (floe_random_bytes(&v, sizeof(v)) != 0)
		v = (uint64_t)floe_clock_mono_ns(); /* jitter only; any value will do */
	return v;
}

/* Backoff between attempts: cut short by a stop request, after which the retry loop
 * decides whether the stop grace leaves room for another attempt. */
static void default_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	floe_signal_sleep_ms(ms > UINT_MAX ? UINT_MAX : (unsigned)ms);
}

static int64_t default_now(void *ctx)
{
	return floe_clock_now_us() / 1000000;
}

/* ---- construction -------------------------------------------------------------------- */

static char *xstrdup(struct floe_alloc *a, const char *s)
{
	return s ? floe_strdup(a, s) : NULL;
}

static int copy_creds(struct floe_alloc *a, struct floe_aws_credentials *dst,
		      const struct floe_aws_credentials *src)
{
	if (!src->access_key_id || !*src->access_key_id || !src->secret_access_key ||
	    !*src->secret_access_key)
		return -EINVAL;
	struct floe_aws_credentials c;
	int rc = floe_aws_credentials_set(a, src->access_key_id, src->secret_access_key,
					  src->session_token, &c);
	if (rc)
		return rc;
	floe_aws_credentials_fini(dst);
	*dst = c;
	return 0;
}

int floe_s3_set_credentials(struct floe_s3 *s3, const struct floe_aws_credentials *c)
{
	return copy_creds(s3->o.alloc, &s3->cred, c);
}

/* A bucket name usable as a DNS label prefix (virtual-hosted style). */
static bool dns_safe_bucket(const char *b)
{
	for (; *b; b++)
		if (!((*b >= 'a' && *b <= 'z') || (*b >= '0' && *b <= '9') || *b == '-'))
			return false;
	return true;
}

/* Whether an endpoint's authority (host[:port], lower-cased or not) names its host by an
 * IP address or as localhost: no bucket.host name can reach such a host (there is no
 * DNS name to put the bucket before), so virtual-hosted addressing cannot work there and
 * path-style is used whatever lake.s3.path_style says, as the AWS SDKs do. A MinIO or RGW
 * on a LAN address configured without path_style failed every request ("Could not
 * resolve host: bkt.10.0.0.5") with floe check saying nothing. */
static bool address_host(const char *auth, size_t alen)
{
	if (alen && auth[0] == '[')
		return true; /* an IPv6 literal */
	size_t n = 0;
	while (n < alen && auth[n] != ':')
		n++;
	if (n == 9 && strncasecmp(auth, "localhost", 9) == 0)
		return true;
	size_t dots = 0;
	for (size_t i = 0; i < n; i++) {
		if (auth[i] == '.')
			dots++;
		else if (auth[i] < '0' || auth[i] > '9')
			return false;
	}
	return n > 0 && dots == 3;
}

/* Fills the zeros of the client's numbers and functions with the documented defaults. */
static void apply_defaults(struct floe_s3 *s3)
{
	if (!s3->o.random_fn)
		s3->o.random_fn = default_random;
	if (!s3->o.sleep_fn)
		s3->o.sleep_fn = default_sleep;
	if (!s3->o.now_fn)
		s3->o.now_fn = default_now;
	if (s3->o.connect_timeout_ms <= 0)
		s3->o.connect_timeout_ms = 10000;
	if (s3->o.stall_timeout_ms <= 0)
		s3->o.stall_timeout_ms = 30000;
	if (s3->o.max_retries == 0)
		s3->o.max_retries = 5;
	else if (s3->o.max_retries < 0)
		s3->o.max_retries = 0;
	if (s3->o.retry_budget_ms <= 0)
		s3->o.retry_budget_ms = 5 * 60 * 1000;
	if (s3->o.backoff_base_ms <= 0)
		s3->o.backoff_base_ms = 100;
	if (s3->o.backoff_cap_ms <= 0)
		s3->o.backoff_cap_ms = 20000;
	if (s3->o.multipart_threshold <= 0)
		s3->o.multipart_threshold = INT64_C(64) << 20;
	if (s3->o.part_size <= 0)
		s3->o.part_size = INT64_C(16) << 20;
	floe_s3_limits_init(&s3->limits, s3->o.request_timeout_ms, s3->o.min_rate,
			    s3->o.stop_grace_ms, s3->o.stop_fn, s3->o.stop_ctx);
}

int floe_s3_new(const struct floe_s3_options *o, struct floe_s3 **out)
{
	static bool curl_ready; /* curl_global_init is not thread-safe before 7.84 */
	if (!o || !o->endpoint || !o->region || !*o->region || !o->bucket || !*o->bucket)
		return -EINVAL;
	const char *ep = o->endpoint, *scheme;
	if (strncmp(ep, "https://", 8) == 0)
		scheme = "https://";
	else if (strncmp(ep, "http://", 7) == 0)
		scheme = "http://";
	else
		return -EINVAL;
	const char *auth = ep + strlen(scheme);
	size_t alen = strcspn(auth, "/?#");
	if (alen == 0 || (auth[alen] && strcmp(auth + alen, "/") != 0) || memchr(auth, '@', alen))
		return -EINVAL;
	bool path_style = o->path_style || address_host(auth, alen);
	if (strchr(o->bucket, '/') || (!path_style && !dns_safe_bucket(o->bucket)))
		return -EINVAL;
	if (!curl_ready) {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
			return -EIO;
		curl_ready = true;
	}

	struct floe_alloc *a = o->alloc;
	int rc = FLOE_ENOMEM;
	struct floe_s3 *s3 = floe_calloc(a, 1, sizeof(*s3));
	char *authority = NULL;
	if (!s3)
		return FLOE_ENOMEM;
	s3->o = *o;
	s3->o.endpoint = s3->o.region = s3->o.bucket = s3->o.ca_file = s3->o.ca_path = NULL;
	s3->o.connect_to = NULL;
	memset(&s3->o.credentials, 0, sizeof(s3->o.credentials));
	s3->o.credprov = NULL;
	apply_defaults(s3);

	/* With a provider, static credentials are optional (they serve until the first
	 * request asks the provider); with a signer of its own, the client holds none. */
	if (!o->sign_fn && (!o->credprov || o->credentials.access_key_id || o->credentials.secret_access_key) &&
	    (rc = copy_creds(a, &s3->cred, &o->credentials)) != 0)
		goto out;
	s3->credprov = floe_s3_credprov_ref(o->credprov);
	rc = FLOE_ENOMEM;
	authority = floe_strndup(a, auth, alen);
	if (!authority)
		goto out;
	for (char *c = authority; *c; c++)
		if (*c >= 'A' && *c <= 'Z')
			*c = (char)(*c - 'A' + 'a');
	if (path_style) {
		if (!o->path_style)
			floe_debug("s3: %s names its host by address: path-style requests", o->endpoint);
		s3->host = xstrdup(a, authority);
		s3->path_prefix = floe_s3_join3(a, "/", o->bucket, "");
	} else {
		s3->host = floe_s3_join3(a, o->bucket, ".", authority);
		s3->path_prefix = xstrdup(a, "");
	}
	s3->base = s3->host ? floe_s3_join3(a, scheme, s3->host, "") : NULL;
	s3->region = xstrdup(a, o->region);
	s3->bucket = xstrdup(a, o->bucket);
	s3->ca_file = xstrdup(a, o->ca_file);
	s3->ca_path = xstrdup(a, o->ca_path);
	if (!s3->host || !s3->path_prefix || !s3->base || !s3->region || !s3->bucket ||
	    (o->ca_file && !s3->ca_file) || (o->ca_path && !s3->ca_path))
		goto out;
	if (o->connect_to && !(s3->connect_to = curl_slist_append(NULL, o->connect_to)))
		goto out;
	s3->multi = curl_multi_init();
	s3->curl = curl_easy_init();
	if (!s3->multi || !s3->curl) {
		rc = -EIO;
		goto out;
	}
	rc = 0;
	*out = s3;
out:
	floe_free(a, authority);
	if (rc)
		floe_s3_free(s3);
	return rc;
}

void floe_s3_free(struct floe_s3 *s3)
{
	if (!s3)
		return;
	/* Requests remove their easy handle from the multi before returning, so the two
	 * can be cleaned up independently; the multi closes the cached connections. */
	if (s3->curl)
		curl_easy_cleanup(s3->curl);
	if (s3->multi)
		curl_multi_cleanup(s3->multi);
	struct floe_alloc *a = s3->o.alloc;
	char *strings[] = {s3->base,   s3->host,    s3->path_prefix, s3->region,
			   s3->bucket, s3->ca_file, s3->ca_path};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		floe_free(a, strings[i]);
	curl_slist_free_all(s3->connect_to);
	floe_aws_credentials_fini(&s3->cred);
	floe_s3_credprov_free(s3->credprov);
	floe_free(a, s3);
}

void floe_s3_set_max_retries(struct floe_s3 *s3, int max_retries)
{
	s3->o.max_retries = max_retries == 0 ? 5 : max_retries < 0 ? 0 : max_retries;
}

int floe_s3_last_status(const struct floe_s3 *s3)
{
	return s3->last_status;
}

const char *floe_s3_last_error_code(const struct floe_s3 *s3)
{
	return s3->last_code;
}

int64_t floe_s3_retry_after_ms(const struct floe_s3 *s3)
{
	int64_t left = (s3->not_before_ns - floe_clock_mono_ns()) / 1000000;
	return s3->not_before_ns && left > 0 ? left : 0;
}

const char *floe_s3_last_error(const struct floe_s3 *s3)
{
	return s3->last_error;
}

const char *floe_s3_last_location(const struct floe_s3 *s3)
{
	return s3->last_location;
}

int floe_s3_last_attempts(const struct floe_s3 *s3)
{
	return s3->last_attempts;
}

int64_t floe_s3_clock_offset(const struct floe_s3 *s3)
{
	return s3->clock_offset;
}

/* ---- operations ---------------------------------------------------------------------- */

bool floe_s3_key_ok(const char *key)
{
	return key && *key && strlen(key) <= 1024;
}

/* If-Match value: RGW 16.2 compares the bare ETag, AWS accepts the quoted form. */
static int if_match_value(const struct floe_s3 *s3, const char *etag, char *out, size_t cap)
{
	size_t n = strlen(etag);
	if (n >= 2 && etag[0] == '"' && etag[n - 1] == '"') {
		etag++;
		n -= 2;
	}
	int w = s3->o.quote_if_match ? snprintf(out, cap, "\"%.*s\"", (int)n, etag)
				     : snprintf(out, cap, "%.*s", (int)n, etag);
	return w < 0 || (size_t)w >= cap ? -EINVAL : 0;
}

int floe_s3_put_body(struct floe_s3 *s3, const char *key, struct floe_s3_body body,
		     const struct floe_s3_put_options *po, struct floe_s3_object_info *info)
{
	if (!floe_s3_key_ok(key))
		return -EINVAL;
	struct floe_s3_req rq = {.method = "PUT",
				 .key = key,
				 .has_body = true,
				 .body = body,
				 .max = FLOE_S3_ERR_BODY_MAX};
	char im[160];
	if (po && po->if_none_match) {
		rq.h[rq.nh++] = (struct floe_sigv4_header){"if-none-match", "*"};
		rq.conditional = true;
		rq.expect = 412; /* another writer won: an answer, not an error */
	}
	if (po && po->if_match) {
		if (if_match_value(s3, po->if_match, im, sizeof(im)) != 0)
			return -EINVAL;
		rq.h[rq.nh++] = (struct floe_sigv4_header){"if-match", im};
		rq.conditional = true;
	}
	if (po && po->content_type)
		rq.h[rq.nh++] = (struct floe_sigv4_header){"content-type", po->content_type};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	if (rc == 0 && info) {
		info->size = body.len;
		snprintf(info->etag, sizeof(info->etag), "%s", r.etag);
	}
	floe_s3_resp_fini(&r);
	return rc;
}

int floe_s3_put(struct floe_s3 *s3, const char *key, const void *data, size_t len,
		const struct floe_s3_put_options *po, struct floe_s3_object_info *info)
{
	static const uint8_t empty[1];
	struct floe_s3_body b = {.mem = len ? data : empty, .fd = -1, .len = (int64_t)len};
	if (len && !data)
		return -EINVAL;
	return floe_s3_put_body(s3, key, b, po, info);
}

static int get_common(struct floe_s3 *s3, const char *key, const char *range, size_t max,
		      void **data, size_t *len)
{
	if (!floe_s3_key_ok(key) || max > SIZE_MAX - 1)
		return -EINVAL;
	struct floe_s3_req rq = {.method = "GET", .key = key, .max = max, .expect = 404};
	if (range)
		rq.h[rq.nh++] = (struct floe_sigv4_header){"range", range};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	if (rc == 0)
		rc = floe_buf_terminate(&r.body); /* an empty object gets its NUL too */
	if (rc == 0)
		*data = floe_buf_steal(&r.body, len);
	floe_s3_resp_fini(&r);
	return rc;
}

int floe_s3_get(struct floe_s3 *s3, const char *key, size_t max, void **data, size_t *len)
{
	return get_common(s3, key, NULL, max, data, len);
}

int floe_s3_get_range(struct floe_s3 *s3, const char *key, int64_t off, int64_t n, void **data,
		      size_t *len)
{
	int64_t last;
	if (off < 0 || n <= 0 || __builtin_add_overflow(off, n - 1, &last) ||
	    (uint64_t)n > SIZE_MAX - 1)
		return -EINVAL;
	char range[64];
	snprintf(range, sizeof(range), "bytes=%lld-%lld", (long long)off, (long long)last);
	return get_common(s3, key, range, (size_t)n, data, len);
}

int floe_s3_head(struct floe_s3 *s3, const char *key, struct floe_s3_object_info *info)
{
	if (!floe_s3_key_ok(key))
		return -EINVAL;
	struct floe_s3_req rq = {
	    .method = "HEAD", .key = key, .head = true, .max = 0, .expect = 404};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	if (rc == 0 && info) {
		info->size = r.content_length;
		snprintf(info->etag, sizeof(info->etag), "%s", r.etag);
	}
	floe_s3_resp_fini(&r);
	return rc;
}

int floe_s3_delete(struct floe_s3 *s3, const char *key)
{
	if (!floe_s3_key_ok(key))
		return -EINVAL;
	struct floe_s3_req rq = {
	    .method = "DELETE", .key = key, .max = FLOE_S3_ERR_BODY_MAX, .expect = 404};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	floe_s3_resp_fini(&r);
	return rc == -ENOENT ? 0 : rc;
}

/* ---- listings that end --------------------------------------------------------------- */

/* A listing follows the server's continuation tokens, so a server (or a proxy) that hands
 * back a token it gave before would keep us asking for ever. Brent's cycle detection finds
 * any such cycle, whatever its length, within twice the pages it takes to enter and go
 * round it once, holding one saved token: each token is compared with the saved one,
 * which is replaced by the current token whenever the count since the last save reaches
 * a power of two. A cap on pages catches a server that makes up new tokens for ever. */
#define EMPTY_RUN_MAX 1000 /* truncated pages without a key in a row */

int floe_s3_pager_next(struct floe_s3 *s3, struct floe_s3_pager *p, const char *prefix,
		       const char *token, size_t keys)
{
	const char *why = NULL;
	p->pages++;
	p->empty_run = keys ? 0 : p->empty_run + 1;
	if (p->saved && strcmp(p->saved, token) == 0)
		why = "repeats a continuation token it sent before";
	else if (p->pages >= FLOE_S3_LIST_MAX_PAGES)
		why = "is still truncated after " FLOE_S3_STR(FLOE_S3_LIST_MAX_PAGES) " pages";
	else if (p->empty_run >= EMPTY_RUN_MAX)
		why = "sent " FLOE_S3_STR(EMPTY_RUN_MAX) " truncated pages in a row without a key";
	if (why) {
		floe_error("s3: listing s3://%s/%.300s: page %zu %s: the server's listing does not "
			   "end (a bug in the server or a proxy in between); giving up",
			   s3->bucket, prefix ? prefix : "", p->pages, why);
		return FLOE_S3_ELOOP;
	}
	if (++p->since_save >= p->power) {
		char *t = floe_strdup(s3->o.alloc, token);
		if (!t)
			return FLOE_ENOMEM;
		floe_free(s3->o.alloc, p->saved);
		p->saved = t;
		p->power = p->power ? p->power * 2 : 1;
		p->since_save = 0;
	}
	return 0;
}

void floe_s3_pager_fini(struct floe_s3 *s3, struct floe_s3_pager *p)
{
	floe_free(s3->o.alloc, p->saved);
	memset(p, 0, sizeof(*p));
}

struct counted {
	floe_s3_list_fn fn;
	void *ctx;
	size_t keys;
};

static int count_key(void *ctx, const char *key, int64_t size)
{
	struct counted *c = ctx;
	c->keys++;
	return c->fn(c->ctx, key, size);
}

/* S3 continuation tokens are opaque; real ones are well under 1 KiB. */
#define LIST_TOKEN_MAX 4096

int floe_s3_list(struct floe_s3 *s3, const char *prefix, floe_s3_list_fn fn, void *ctx)
{
	char *token = floe_calloc(s3->o.alloc, 1, LIST_TOKEN_MAX);
	if (!token)
		return FLOE_ENOMEM;
	int rc = 0;
	bool truncated = true;
	struct floe_s3_pager pager = {0};
	for (int page = 0; truncated && rc == 0; page++) {
		struct floe_s3_req rq = {.method = "GET", .key = NULL, .max = FLOE_S3_XML_BODY_MAX};
		rq.q[rq.nq++] = (struct floe_sigv4_param){"list-type", "2"};
		if (prefix && *prefix)
			rq.q[rq.nq++] = (struct floe_sigv4_param){"prefix", prefix};
		if (page > 0)
			rq.q[rq.nq++] = (struct floe_sigv4_param){"continuation-token", token};
		struct floe_s3_resp r = {0};
		struct counted c = {fn, ctx, 0};
		rc = floe_s3_request_run(s3, &rq, &r);
		if (rc == 0) {
			struct floe_err e;
			floe_err_clear(&e);
			rc = floe_aws_xml_list(s3->o.alloc, floe_s3_resp_text(&r), r.body.len,
					       count_key, &c, &truncated, token, LIST_TOKEN_MAX, &e);
			rc = floe_s3_parser_rc(rc, &e);
		}
		if (rc == 0 && truncated)
			rc = floe_s3_pager_next(s3, &pager, prefix, token, c.keys);
		floe_s3_resp_fini(&r);
	}
	floe_s3_pager_fini(s3, &pager);
	floe_free(s3->o.alloc, token);
	return rc;
}
