/* AWS Signature Version 4 (see sigv4.h). The canonical request follows the S3 flavour:
 * the path is percent-encoded once and never normalised, query parameters and header
 * names are sorted bytewise after encoding / lower-casing. Signing runs in named steps
 * (canonical request, string to sign, signature, Authorization) over bounded buffers. */
#include "platform/s3/sigv4.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/wipe.h"
#include "platform/sha.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every string of a signature is far below this: a request's header values, names and
 * query are bounded by what curl and the server accept. */
#define SIGV4_TEXT_MAX (1u << 20)

size_t floe_sigv4_uri_encoded_len(const char *p, size_t n, int keep_slash)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		len += (floe_uri_unreserved(c) || (keep_slash && c == '/')) ? 1 : 3;
	}
	return len;
}

int floe_sigv4_uri_encode(const char *p, size_t n, int keep_slash, char *out, size_t cap,
			  size_t *pos)
{
	size_t at = *pos;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (floe_uri_unreserved(c) || (keep_slash && c == '/')) {
			if (cap - at < 2)
				return -ENOSPC;
			out[at++] = (char)c;
		} else {
			if (cap - at < 4)
				return -ENOSPC;
			out[at++] = '%';
			out[at++] = floe_hex_char_upper(c >> 4);
			out[at++] = floe_hex_char_upper(c);
		}
	}
	if (at >= cap)
		return -ENOSPC;
	out[at] = '\0';
	*pos = at;
	return 0;
}

/* A new NUL-terminated string from a: the encoding of p (NULL: ""). */
static char *encode_dup(struct floe_alloc *a, const char *p)
{
	struct floe_buf b;
	floe_buf_init(&b, a, SIGV4_TEXT_MAX);
	if (floe_uri_put(&b, p ? p : "", p ? strlen(p) : 0, false) || floe_buf_terminate(&b)) {
		floe_buf_fini(&b);
		return NULL;
	}
	size_t len;
	return (char *)floe_buf_steal(&b, &len);
}

/* A new string from a: v with leading/trailing spaces and tabs trimmed and inner runs
 * folded into one space. */
static char *fold_value(struct floe_alloc *a, const char *v)
{
	size_t n = strlen(v);
	char *out = floe_malloc(a, n + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	bool pending_space = false;
	for (size_t i = 0; i < n; i++) {
		char c = v[i];
		if (c == ' ' || c == '\t') {
			pending_space = o > 0;
			continue;
		}
		if (pending_space)
			out[o++] = ' ';
		pending_space = false;
		out[o++] = c;
	}
	out[o] = '\0';
	return out;
}

/* A name and value pair of the canonical request: a query parameter in encoded form, or
 * a header with its name lower-cased and its value folded (idx keeps duplicates in the
 * order given). */
struct pair {
	char *name, *value;
	size_t idx;
};

static int pair_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	c = strcmp(x->value, y->value);
	return c ? c : x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int header_cmp(const void *a, const void *b)
{
	const struct pair *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void pairs_free(struct floe_alloc *a, struct pair *p, size_t n)
{
	for (size_t i = 0; p && i < n; i++) {
		floe_free(a, p[i].name);
		floe_free(a, p[i].value);
	}
	floe_free(a, p);
}

/* What signing builds, from a: the canonical request, the signed header names, the
 * credential scope, the string to sign and the Authorization value. */
struct signer {
	struct floe_alloc *a;
	const struct floe_sigv4_request *req;
	const struct floe_sigv4_key *key;
	struct floe_buf creq, sh, scope, sts, auth;
	char date8[9];
};

/* The query: encoded, sorted by name and value, "a=1&b=2". */
static int put_query(struct signer *s)
{
	const struct floe_sigv4_request *req = s->req;
	struct pair *q = floe_calloc(s->a, req->n_query ? req->n_query : 1, sizeof(*q));
	int rc = q ? 0 : FLOE_ENOMEM;
	for (size_t i = 0; rc == 0 && i < req->n_query; i++) {
		q[i].name = encode_dup(s->a, req->query[i].name);
		q[i].value = encode_dup(s->a, req->query[i].value);
		q[i].idx = i;
		if (!q[i].name || !q[i].value)
			rc = FLOE_ENOMEM;
	}
	if (rc == 0)
		qsort(q, req->n_query, sizeof(*q), pair_cmp);
	for (size_t i = 0; rc == 0 && i < req->n_query; i++)
		if ((i && (rc = floe_buf_putc(&s->creq, '&'))) ||
		    (rc = floe_buf_printf(&s->creq, "%s=%s", q[i].name, q[i].value)))
			break;
	pairs_free(s->a, q, req->n_query);
	return rc;
}

/* The sorted headers ("name:v1,v2\n" each, duplicates joined in the order given) into the
 * canonical request, and their names ("a;b") into sh. */
static int put_headers(struct signer *s)
{
	const struct floe_sigv4_request *req = s->req;
	struct pair *h = floe_calloc(s->a, req->n_headers ? req->n_headers : 1, sizeof(*h));
	int rc = h ? 0 : FLOE_ENOMEM;
	for (size_t i = 0; rc == 0 && i < req->n_headers; i++) {
		h[i].name = floe_strdup(s->a, req->headers[i].name);
		h[i].value = fold_value(s->a, req->headers[i].value);
		h[i].idx = i;
		if (!h[i].name || !h[i].value)
			rc = FLOE_ENOMEM;
		for (char *c = h[i].name; rc == 0 && *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
	}
	if (rc == 0)
		qsort(h, req->n_headers, sizeof(*h), header_cmp);
	for (size_t i = 0; rc == 0 && i < req->n_headers; i++) {
		if (i > 0 && strcmp(h[i].name, h[i - 1].name) == 0) {
			rc = floe_buf_printf(&s->creq, ",%s", h[i].value);
			continue;
		}
		rc = floe_buf_printf(&s->creq, "%s%s:%s", i ? "\n" : "", h[i].name, h[i].value);
		if (rc == 0)
			rc = floe_buf_printf(&s->sh, "%s%s", i ? ";" : "", h[i].name);
	}
	if (rc == 0 && req->n_headers)
		rc = floe_buf_putc(&s->creq, '\n');
	pairs_free(s->a, h, req->n_headers);
	return rc;
}

/* METHOD \n path \n query \n headers \n \n signed headers \n payload hash. */
static int canonical_request(struct signer *s)
{
	const char *path = s->req->path && *s->req->path ? s->req->path : "/";
	int rc;
	if ((rc = floe_buf_printf(&s->creq, "%s\n", s->req->method)) ||
	    (rc = floe_uri_put(&s->creq, path, strlen(path), true)) ||
	    (rc = floe_buf_putc(&s->creq, '\n')) || (rc = put_query(s)) ||
	    (rc = floe_buf_putc(&s->creq, '\n')) || (rc = put_headers(s)) ||
	    (rc = floe_buf_terminate(&s->sh)))
		return rc;
	return floe_buf_printf(&s->creq, "\n%s\n%s", (const char *)s->sh.data,
			       s->req->payload_hash);
}

/* The credential scope and the string to sign. */
static int string_to_sign(struct signer *s)
{
	char creq_hash[FLOE_SHA256_HEX_LEN + 1];
	int rc = floe_sha256_hex(s->creq.data, s->creq.len, creq_hash);
	if (rc)
		return rc;
	memcpy(s->date8, s->req->amz_date, 8);
	s->date8[8] = '\0';
	if ((rc = floe_buf_printf(&s->scope, "%s/%s/%s/aws4_request", s->date8, s->key->region,
				  s->key->service)))
		return rc;
	return floe_buf_printf(&s->sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", s->req->amz_date,
			       (const char *)s->scope.data, creq_hash);
}

/* The signature: HMAC of the string to sign under the key chained from "AWS4" + secret
 * over date, region, service and "aws4_request". Every copy of the secret is wiped. */
static int signature(struct signer *s, char out[65])
{
	struct floe_buf secret;
	floe_buf_init(&secret, s->a, SIGV4_TEXT_MAX);
	uint8_t k[FLOE_SHA256_LEN], sig[FLOE_SHA256_LEN];
	int rc = floe_buf_printf(&secret, "AWS4%s", s->key->secret_access_key);
	if (rc == 0)
		rc = floe_hmac_sha256(secret.data, secret.len, s->date8, 8, k);
	floe_wipe(secret.data, secret.cap);
	floe_buf_fini(&secret);
	if (rc == 0)
		rc = floe_hmac_sha256(k, sizeof(k), s->key->region, strlen(s->key->region), k);
	if (rc == 0)
		rc = floe_hmac_sha256(k, sizeof(k), s->key->service, strlen(s->key->service), k);
	if (rc == 0)
		rc = floe_hmac_sha256(k, sizeof(k), "aws4_request", 12, k);
	if (rc == 0)
		rc = floe_hmac_sha256(k, sizeof(k), s->sts.data, s->sts.len, sig);
	floe_wipe(k, sizeof(k));
	if (rc == 0)
		floe_hex_encode(sig, sizeof(sig), out);
	return rc;
}

static bool valid_amz_date(const char *d)
{
	if (!d || strlen(d) != 16 || d[8] != 'T' || d[15] != 'Z')
		return false;
	for (int i = 0; i < 15; i++)
		if (i != 8 && (d[i] < '0' || d[i] > '9'))
			return false;
	return true;
}

static bool valid_token(const char *p)
{
	if (!p || !*p)
		return false;
	for (; *p; p++) {
		unsigned char c = (unsigned char)*p;
		if (c <= ' ' || c >= 127 || c == ':' || c == '\n')
			return false;
	}
	return true;
}

static bool valid_request(const struct floe_sigv4_request *req, const struct floe_sigv4_key *key)
{
	if (!valid_token(req->method) || !valid_amz_date(req->amz_date) || !req->payload_hash ||
	    !key->access_key_id || !key->secret_access_key || !valid_token(key->region) ||
	    !valid_token(key->service))
		return false;
	for (size_t i = 0; i < req->n_headers; i++)
		if (!valid_token(req->headers[i].name) || !req->headers[i].value)
			return false;
	return true;
}

void floe_sigv4_result_fini(struct floe_sigv4_result *r)
{
	if (!r)
		return;
	floe_free(r->alloc, r->canonical_request);
	floe_free(r->alloc, r->string_to_sign);
	floe_free(r->alloc, r->signed_headers);
	floe_free(r->alloc, r->authorization);
	memset(r, 0, sizeof(*r));
}

/* b's bytes as a new NUL-terminated string (b is left empty). */
static char *take(struct floe_buf *b)
{
	size_t len;
	if (floe_buf_terminate(b))
		return NULL;
	return (char *)floe_buf_steal(b, &len);
}

int floe_sigv4_sign(struct floe_alloc *a, const struct floe_sigv4_request *req,
		    const struct floe_sigv4_key *key, struct floe_sigv4_result *out)
{
	memset(out, 0, sizeof(*out));
	if (!valid_request(req, key))
		return -EINVAL;
	struct signer s = {.a = a, .req = req, .key = key};
	struct floe_buf *bufs[] = {&s.creq, &s.sh, &s.scope, &s.sts, &s.auth};
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_init(bufs[i], a, SIGV4_TEXT_MAX);
	int rc;
	if ((rc = canonical_request(&s)) || (rc = string_to_sign(&s)) ||
	    (rc = signature(&s, out->signature)))
		goto out;
	if ((rc = floe_buf_printf(&s.auth,
				  "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s",
				  key->access_key_id, (const char *)s.scope.data,
				  (const char *)s.sh.data, out->signature)))
		goto out;
	out->alloc = a;
	out->canonical_request = take(&s.creq);
	out->string_to_sign = take(&s.sts);
	out->signed_headers = take(&s.sh);
	out->authorization = take(&s.auth);
	if (!out->canonical_request || !out->string_to_sign || !out->signed_headers ||
	    !out->authorization)
		rc = FLOE_ENOMEM;
out:
	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++)
		floe_buf_fini(bufs[i]);
	if (rc)
		floe_sigv4_result_fini(out);
	return rc;
}

int floe_sigv4_format_date(int64_t t, char out[17])
{
	/* 0000-01-01 .. 9999-12-31 */
	if (t < INT64_C(-62167219200) || t > INT64_C(253402300799))
		return -EINVAL;
	struct floe_civil_time c;
	floe_civil_from_unix(t, &c);
	snprintf(out, 17, "%04u%02u%02uT%02u%02u%02uZ", (unsigned)c.year, c.month, c.day, c.hour,
		 c.minute, c.second);
	return 0;
}

static int num(const char *p, int n, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return -EINVAL;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	*out = v;
	return 0;
}

int floe_sigv4_parse_http_date(const char *p, size_t n, int64_t *unix_s)
{
	/* "Sun, 06 Nov 1994 08:49:37 GMT" is exactly 29 bytes. */
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	if (n != 29 || p[3] != ',' || p[4] != ' ' || p[7] != ' ' || p[11] != ' ' || p[16] != ' ' ||
	    p[19] != ':' || p[22] != ':' || p[25] != ' ' || memcmp(p + 26, "GMT", 3) != 0)
		return -EINVAL;
	unsigned d, y, hh, mm, ss, m = 0;
	for (unsigned i = 0; i < 12; i++)
		if (memcmp(p + 8, months + 3 * i, 3) == 0)
			m = i + 1;
	if (m == 0 || num(p + 5, 2, &d) || num(p + 12, 4, &y) || num(p + 17, 2, &hh) ||
	    num(p + 20, 2, &mm) || num(p + 23, 2, &ss) || d < 1 || d > 31 || hh > 23 || mm > 59 ||
	    ss > 60)
		return -EINVAL;
	*unix_s = floe_civil_to_days(y, m, d) * 86400 + hh * 3600 + mm * 60 + ss;
	return 0;
}

void floe_sigv4_parse_retry_after(const char *p, size_t n, int64_t *after_s, int64_t *at)
{
	int64_t x = 0;
	bool digits = n > 0 && n < 10;
	for (size_t i = 0; digits && i < n; i++) {
		digits = p[i] >= '0' && p[i] <= '9';
		x = x * 10 + (p[i] - '0');
	}
	if (digits)
		*after_s = x;
	else if (floe_sigv4_parse_http_date(p, n, &x) == 0)
		*at = x;
}
