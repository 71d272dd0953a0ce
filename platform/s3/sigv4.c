/* AWS Signature Version 4 (see sigv4.h). The canonical request follows the S3 flavour:
 * the path is percent-encoded once and never normalised, query parameters and header
 * names are sorted bytewise after encoding / lower-casing. */
#include "platform/s3/sigv4.h"

#include "platform/sha.h"

#include "formats/base/civil.h"
#include "formats/base/hex.h"
#include "formats/base/wipe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A growable NUL-terminated string; err sticks so callers check once at the end. */
struct sb {
	char *p;
	size_t len, cap;
	int err;
};

static void sb_reserve(struct sb *s, size_t extra)
{
	if (s->err)
		return;
	size_t need;
	if (__builtin_add_overflow(s->len, extra, &need) ||
	    __builtin_add_overflow(need, 1, &need)) {
		s->err = -ENOMEM;
		return;
	}
	if (need <= s->cap)
		return;
	size_t cap = s->cap ? s->cap : 256;
	while (cap < need) {
		if (__builtin_mul_overflow(cap, 2, &cap)) {
			s->err = -ENOMEM;
			return;
		}
	}
	char *p = realloc(s->p, cap);
	if (!p) {
		s->err = -ENOMEM;
		return;
	}
	s->p = p;
	s->cap = cap;
}

static void sb_add(struct sb *s, const char *p, size_t n)
{
	sb_reserve(s, n);
	if (s->err)
		return;
	memcpy(s->p + s->len, p, n);
	s->len += n;
	s->p[s->len] = '\0';
}

static void sb_str(struct sb *s, const char *p)
{
	sb_add(s, p, strlen(p));
}

static void sb_chr(struct sb *s, char c)
{
	sb_add(s, &c, 1);
}

static bool unreserved(unsigned char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '.' || c == '_' || c == '~';
}

size_t floe_sigv4_uri_encoded_len(const char *p, size_t n, int keep_slash)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		len += (unreserved(c) || (keep_slash && c == '/')) ? 1 : 3;
	}
	return len;
}

int floe_sigv4_uri_encode(const char *p, size_t n, int keep_slash, char *out, size_t cap,
			  size_t *pos)
{
	size_t at = *pos;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];
		if (unreserved(c) || (keep_slash && c == '/')) {
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

static void sb_encode(struct sb *s, const char *p, size_t n, int keep_slash)
{
	size_t need = floe_sigv4_uri_encoded_len(p, n, keep_slash);
	sb_reserve(s, need);
	if (s->err)
		return;
	size_t pos = s->len;
	if (floe_sigv4_uri_encode(p, n, keep_slash, s->p, s->cap, &pos) != 0) {
		s->err = -ENOMEM; /* cannot happen: reserved above */
		return;
	}
	s->len = pos;
}

/* One query parameter in encoded form, for sorting. */
struct qp {
	char *name, *value;
};

static int qp_cmp(const void *a, const void *b)
{
	const struct qp *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->value, y->value);
}

/* One header, lower-cased name and folded value; idx keeps duplicates in given order. */
struct hd {
	char *name, *value;
	size_t idx;
};

static int hd_cmp(const void *a, const void *b)
{
	const struct hd *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static char *encode_dup(const char *p, int keep_slash)
{
	struct sb s = {0};
	sb_encode(&s, p ? p : "", p ? strlen(p) : 0, keep_slash);
	if (!s.err && !s.p)
		sb_add(&s, "", 0);
	if (s.err) {
		free(s.p);
		return NULL;
	}
	return s.p;
}

/* Trims leading/trailing spaces and tabs and folds inner runs into one space. */
static char *fold_value(const char *v)
{
	size_t n = strlen(v);
	char *out = malloc(n + 1);
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

void floe_sigv4_result_fini(struct floe_sigv4_result *r)
{
	if (!r)
		return;
	free(r->canonical_request);
	free(r->string_to_sign);
	free(r->signed_headers);
	free(r->authorization);
	memset(r, 0, sizeof(*r));
}

int floe_sigv4_sign(const struct floe_sigv4_request *req, const struct floe_sigv4_key *key,
		    struct floe_sigv4_result *out)
{
	memset(out, 0, sizeof(*out));
	if (!valid_token(req->method) || !valid_amz_date(req->amz_date) || !req->payload_hash ||
	    !key->access_key_id || !key->secret_access_key || !valid_token(key->region) ||
	    !valid_token(key->service))
		return -EINVAL;
	for (size_t i = 0; i < req->n_headers; i++)
		if (!valid_token(req->headers[i].name) || !req->headers[i].value)
			return -EINVAL;

	int rc = -ENOMEM;
	struct qp *q = calloc(req->n_query ? req->n_query : 1, sizeof(*q));
	struct hd *h = calloc(req->n_headers ? req->n_headers : 1, sizeof(*h));
	struct sb creq = {0}, sh = {0}, sts = {0}, auth = {0};
	if (!q || !h)
		goto out;

	/* Method and path. */
	sb_str(&creq, req->method);
	sb_chr(&creq, '\n');
	const char *path = req->path && *req->path ? req->path : "/";
	sb_encode(&creq, path, strlen(path), 1);
	sb_chr(&creq, '\n');

	/* Query: encode, then sort by name and value. */
	for (size_t i = 0; i < req->n_query; i++) {
		q[i].name = encode_dup(req->query[i].name, 0);
		q[i].value = encode_dup(req->query[i].value, 0);
		if (!q[i].name || !q[i].value)
			goto out;
	}
	qsort(q, req->n_query, sizeof(*q), qp_cmp);
	for (size_t i = 0; i < req->n_query; i++) {
		if (i)
			sb_chr(&creq, '&');
		sb_str(&creq, q[i].name);
		sb_chr(&creq, '=');
		sb_str(&creq, q[i].value);
	}
	sb_chr(&creq, '\n');

	/* Headers: lower-case, fold, sort (stable for duplicates), join duplicates. */
	for (size_t i = 0; i < req->n_headers; i++) {
		h[i].name = strdup(req->headers[i].name);
		h[i].value = fold_value(req->headers[i].value);
		h[i].idx = i;
		if (!h[i].name || !h[i].value)
			goto out;
		for (char *c = h[i].name; *c; c++)
			if (*c >= 'A' && *c <= 'Z')
				*c = (char)(*c - 'A' + 'a');
	}
	qsort(h, req->n_headers, sizeof(*h), hd_cmp);
	for (size_t i = 0; i < req->n_headers; i++) {
		bool same_as_prev = i > 0 && strcmp(h[i].name, h[i - 1].name) == 0;
		if (same_as_prev) {
			sb_chr(&creq, ',');
		} else {
			if (i > 0) {
				sb_chr(&creq, '\n');
				sb_chr(&sh, ';');
			}
			sb_str(&creq, h[i].name);
			sb_chr(&creq, ':');
			sb_str(&sh, h[i].name);
		}
		sb_str(&creq, h[i].value);
	}
	if (req->n_headers)
		sb_chr(&creq, '\n');
	sb_chr(&creq, '\n');
	sb_str(&creq, sh.p ? sh.p : "");
	sb_chr(&creq, '\n');
	sb_str(&creq, req->payload_hash);
	if (creq.err || sh.err) {
		rc = creq.err ? creq.err : sh.err;
		goto out;
	}

	/* String to sign. */
	char date8[9];
	memcpy(date8, req->amz_date, 8);
	date8[8] = '\0';
	char creq_hash[FLOE_SHA256_HEX_LEN + 1];
	if ((rc = floe_sha256_hex(creq.p, creq.len, creq_hash)) != 0)
		goto out;
	struct sb scope = {0};
	sb_str(&scope, date8);
	sb_chr(&scope, '/');
	sb_str(&scope, key->region);
	sb_chr(&scope, '/');
	sb_str(&scope, key->service);
	sb_str(&scope, "/aws4_request");
	sb_str(&sts, "AWS4-HMAC-SHA256\n");
	sb_str(&sts, req->amz_date);
	sb_chr(&sts, '\n');
	sb_str(&sts, scope.p ? scope.p : "");
	sb_chr(&sts, '\n');
	sb_str(&sts, creq_hash);

	/* Signing key: HMAC chain from "AWS4" + secret over date, region, service. */
	uint8_t k[FLOE_SHA256_LEN];
	struct sb secret = {0};
	sb_str(&secret, "AWS4");
	sb_str(&secret, key->secret_access_key);
	rc = secret.err ? secret.err : scope.err ? scope.err : sts.err;
	if (!rc)
		rc = floe_hmac_sha256(secret.p, secret.len, date8, 8, k);
	if (secret.p) {
		/* The secret must not linger in freed heap memory. */
		floe_wipe(secret.p, secret.len);
		free(secret.p);
	}
	if (!rc)
		rc = floe_hmac_sha256(k, sizeof(k), key->region, strlen(key->region), k);
	if (!rc)
		rc = floe_hmac_sha256(k, sizeof(k), key->service, strlen(key->service), k);
	if (!rc)
		rc = floe_hmac_sha256(k, sizeof(k), "aws4_request", 12, k);
	uint8_t sig[FLOE_SHA256_LEN];
	if (!rc)
		rc = floe_hmac_sha256(k, sizeof(k), sts.p, sts.len, sig);
	floe_wipe(k, sizeof(k));
	if (rc) {
		free(scope.p);
		goto out;
	}
	floe_hex_encode(sig, sizeof(sig), out->signature);

	sb_str(&auth, "AWS4-HMAC-SHA256 Credential=");
	sb_str(&auth, key->access_key_id);
	sb_chr(&auth, '/');
	sb_str(&auth, scope.p);
	sb_str(&auth, ", SignedHeaders=");
	sb_str(&auth, sh.p ? sh.p : "");
	sb_str(&auth, ", Signature=");
	sb_str(&auth, out->signature);
	free(scope.p);
	if (auth.err) {
		rc = auth.err;
		goto out;
	}
	if (!sh.p)
		sb_add(&sh, "", 0);
	if (sh.err) {
		rc = sh.err;
		goto out;
	}
	out->canonical_request = creq.p;
	out->string_to_sign = sts.p;
	out->signed_headers = sh.p;
	out->authorization = auth.p;
	creq.p = sts.p = sh.p = auth.p = NULL;
	rc = 0;
out:
	if (q)
		for (size_t i = 0; i < req->n_query; i++) {
			free(q[i].name);
			free(q[i].value);
		}
	if (h)
		for (size_t i = 0; i < req->n_headers; i++) {
			free(h[i].name);
			free(h[i].value);
		}
	free(q);
	free(h);
	free(creq.p);
	free(sts.p);
	free(sh.p);
	free(auth.p);
	if (rc)
		memset(out, 0, sizeof(*out));
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
