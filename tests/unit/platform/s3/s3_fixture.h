/* For the S3 client tests of test_s3.c and test_s3_retry.c (include after fake_s3.h;
 * test code only, included once per program): each request's signature recomputed from
 * what the fake server received, and a client whose sleeping, time and randomness are
 * the test's (struct fakes), with small retry and multipart settings. */
#ifndef FLOE_TEST_S3_FIXTURE_H
#define FLOE_TEST_S3_FIXTURE_H

#include "fake_s3.h"
#include "platform/s3/s3.h"
#include "platform/s3/sigv4.h"
#include "platform/sha.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void pct_decode(const char *p, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '%' && i + 2 < n + 1) {
			char hx[3] = {p[i + 1], p[i + 2], 0};
			out[o++] = (char)strtol(hx, NULL, 16);
			i += 2;
		} else {
			out[o++] = p[i];
		}
	}
	out[o] = '\0';
}

/* Recomputes the signature from the request as received and compares. */
static void check_signature(const struct seen *s)
{
	char auth[1024], date[64], hash[128], signed_list[512];
	assert_true(header(s, "Authorization", auth, sizeof(auth)));
	assert_true(header(s, "x-amz-date", date, sizeof(date)));
	assert_true(header(s, "x-amz-content-sha256", hash, sizeof(hash)));
	char scope_date[9];
	memcpy(scope_date, date, 8);
	scope_date[8] = 0;
	char prefix[128];
	snprintf(prefix, sizeof(prefix),
		 "AWS4-HMAC-SHA256 Credential=" AK "/%s/us-east-1/s3/aws4_request, SignedHeaders=",
		 scope_date);
	assert_true(strncmp(auth, prefix, strlen(prefix)) == 0);
	const char *sl = auth + strlen(prefix);
	const char *se = strstr(sl, ", Signature=");
	assert_non_null(se);
	memcpy(signed_list, sl, (size_t)(se - sl));
	signed_list[se - sl] = 0;
	assert_non_null(strstr(signed_list, "host"));
	assert_non_null(strstr(signed_list, "x-amz-content-sha256"));
	assert_non_null(strstr(signed_list, "x-amz-date"));
	/* The payload hash must be the body's. */
	char body_hash[65];
	assert_int_equal(floe_sha256_hex(s->body, s->body_len, body_hash), 0);
	assert_string_equal(hash, body_hash);

	struct floe_sigv4_header h[16];
	char vals[16][1024], names[16][600];
	size_t nh = 0;
	for (char *tok = signed_list, *next; tok && *tok; tok = next) {
		next = strchr(tok, ';');
		if (next)
			*next++ = 0;
		snprintf(names[nh], sizeof(names[nh]), "%s", tok);
		assert_true(header(s, tok, vals[nh], sizeof(vals[nh])));
		h[nh] = (struct floe_sigv4_header){names[nh], vals[nh]};
		nh++;
	}
	char path[2048], qbuf[2048];
	const char *qm = strchr(s->target, '?');
	size_t plen = qm ? (size_t)(qm - s->target) : strlen(s->target);
	pct_decode(s->target, plen, path);
	struct floe_sigv4_param q[8];
	char qn[8][512], qv[8][512];
	size_t nq = 0;
	if (qm) {
		snprintf(qbuf, sizeof(qbuf), "%s", qm + 1);
		for (char *tok = qbuf, *next; tok && *tok; tok = next) {
			next = strchr(tok, '&');
			if (next)
				*next++ = 0;
			char *eq = strchr(tok, '=');
			assert_non_null(eq);
			pct_decode(tok, (size_t)(eq - tok), qn[nq]);
			pct_decode(eq + 1, strlen(eq + 1), qv[nq]);
			q[nq] = (struct floe_sigv4_param){qn[nq], qv[nq]};
			nq++;
		}
	}
	struct floe_sigv4_request rq = {.method = s->method,
					.path = path,
					.query = q,
					.n_query = nq,
					.headers = h,
					.n_headers = nh,
					.payload_hash = hash,
					.amz_date = date};
	struct floe_sigv4_key key = {AK, SK, "us-east-1", "s3"};
	struct floe_sigv4_result r;
	assert_int_equal(floe_sigv4_sign(NULL, &rq, &key, &r), 0);
	assert_string_equal(auth, r.authorization);
	floe_sigv4_result_fini(&r);
}

/* ---- the client under test ----------------------------------------------------------- */

struct fakes {
	int64_t now;
	int sleeps;
	int64_t slept[32];
	uint64_t rnd;
};

static uint64_t fake_random(void *ctx)
{
	return ((struct fakes *)ctx)->rnd;
}

static void fake_sleep(void *ctx, int64_t ms)
{
	struct fakes *f = ctx;
	if (f->sleeps < 32)
		f->slept[f->sleeps] = ms;
	f->sleeps++;
}

static int64_t fake_now(void *ctx)
{
	return ((struct fakes *)ctx)->now;
}

static struct floe_s3 *client_with(const struct server *sv, struct fakes *f, const char *token,
				   void (*tweak)(struct floe_s3_options *o,
						 const struct server *sv));

static struct floe_s3 *client(const struct server *sv, struct fakes *f, const char *token)
{
	return client_with(sv, f, token, NULL);
}

static struct floe_s3 *client_with(const struct server *sv, struct fakes *f, const char *token,
				   void (*tweak)(struct floe_s3_options *o,
						 const struct server *sv))
{
	char ep[64];
	struct floe_s3_options o = fake_s3_options(sv, ep, sizeof(ep));
	o.credentials.session_token = (char *)token;
	o.max_retries = 3;
	o.backoff_base_ms = 100;
	o.backoff_cap_ms = 1000;
	o.multipart_threshold = 8;
	o.part_size = 5;
	o.random_fn = fake_random;
	o.sleep_fn = fake_sleep;
	o.now_fn = fake_now;
	o.fn_ctx = f;
	f->now = T0;
	if (tweak)
		tweak(&o, sv);
	struct floe_s3 *s3 = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	return s3;
}

#endif
