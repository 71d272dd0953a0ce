/* Tests of agent/parse/container: CRI and Docker json-file lines with exact fields,
 * error offsets, joining partial pieces (offsets, time of the first piece, zero-copy for
 * whole lines), interleaved streams, the byte cap, timeouts, pending offsets, faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/container.h"
#include "agent/parse/fields.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

/* floe_cri_parse with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int cri_parse(const char *s, size_t len, struct floe_container_piece *p, size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_cri_parse(s, len, p, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_true(e.msg[0] != '\0');
		if (off)
			*off = e.offset;
	}
	return rc;
}

/* floe_docker_parse with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int docker_parse(const char *s, size_t len, struct floe_fields *f,
			struct floe_container_piece *p, size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_docker_parse(s, len, f, p, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_true(e.msg[0] != '\0');
		if (off)
			*off = e.offset;
	}
	return rc;
}

/* floe_container_push with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int container_push(struct floe_container *c, const char *line, size_t len, int64_t offset,
			  int64_t end, int64_t now, struct floe_container_rec out[2], size_t *n,
			  size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_container_push(c, line, len, offset, end, now, out, n, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_true(e.msg[0] != '\0');
		if (off)
			*off = e.offset;
	}
	return rc;
}

#define T0 "2016-10-06T00:17:09.669794202Z"
#define T0_US INT64_C(1475713029669794)

static void test_cri_parse(void **state)
{
	struct floe_container_piece p;
	size_t off = 99;
	const char *l = T0 " stdout F hello world";
	assert_int_equal(cri_parse(l, strlen(l), &p, &off), 0);
	assert_int_equal(p.ts_us, T0_US);
	assert_int_equal(p.stream_len, 6);
	assert_memory_equal(p.stream, "stdout", 6);
	assert_false(p.partial);
	assert_ptr_equal(p.msg, l + 40);
	assert_int_equal(p.len, 11);
	l = T0 " stderr P ";
	assert_int_equal(cri_parse(l, strlen(l), &p, &off), 0);
	assert_true(p.partial);
	assert_int_equal(p.len, 0);
	l = T0 " stdout F";
	assert_int_equal(cri_parse(l, strlen(l), &p, &off), 0);
	assert_int_equal(p.len, 0);
	l = T0 " stdout F:a:b  two spaces";
	assert_int_equal(cri_parse(l, strlen(l), &p, &off), 0);
	assert_int_equal(p.len, strlen(" two spaces"));
	assert_false(p.partial);
	/* NUL bytes and invalid UTF-8 in the message pass through as bytes. */
	const char raw[] = T0 " stdout F a\0\xff\xc3"
			      "b";
	assert_int_equal(cri_parse(raw, sizeof(raw) - 1, &p, &off), 0);
	assert_int_equal(p.len, 5);
	assert_memory_equal(p.msg,
			    "a\0\xff\xc3"
			    "b",
			    5);
	/* Offsets for bad lines. */
	static const struct {
		const char *s;
		size_t off;
	} bad[] = {
	    {"", 0},
	    {"garbage", 0},
	    {T0, 30},
	    {T0 "x", 30},
	    {T0 " stdout", 37},
	    {T0 "  stdout F x", 31},
	    {T0 " stdout X x", 38},
	    {T0 " stdout Fx", 39},
	    {"2016-10-06T00:17:09 stdout F x", 0},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		off = 999;
		int rc = cri_parse(bad[i].s, strlen(bad[i].s), &p, &off);
		if (rc != FLOE_EPARSE || off != bad[i].off)
			fail_msg("case %zu \"%s\": rc %d off %zu", i, bad[i].s, rc, off);
	}
}

static void test_docker_parse(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 256, &f), 0);
	struct floe_container_piece p;
	size_t off;
	const char *l = "{\"log\":\"hello \\\"x\\\"\\n\",\"stream\":\"stderr\","
			"\"time\":\"2019-01-01T00:00:00.5Z\"}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), 0);
	assert_int_equal(p.len, 9);
	assert_memory_equal(p.msg, "hello \"x\"", 9);
	assert_false(p.partial);
	assert_int_equal(p.stream_len, 6);
	assert_memory_equal(p.stream, "stderr", 6);
	assert_int_equal(p.ts_us, 1546300800500000);
	/* No trailing newline: a partial piece. No stream or time. */
	l = "{\"log\":\"a\\tb\\u00e9\"}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), 0);
	assert_true(p.partial);
	assert_int_equal(p.len, 5);
	assert_memory_equal(p.msg, "a\tb\xc3\xa9", 5);
	assert_null(p.stream);
	assert_int_equal(p.ts_us, 0);
	/* Only one newline is removed. */
	l = "{\"log\":\"\\n\\n\"}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), 0);
	assert_false(p.partial);
	assert_int_equal(p.len, 1);
	/* Errors. */
	l = "{\"log\":\"x\\n\",}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), FLOE_EPARSE);
	assert_int_equal(off, 13);
	l = "{\"stream\":\"stdout\"}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), FLOE_EPARSE);
	l = "{\"log\":null}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), FLOE_EPARSE);
	l = "{\"log\":\"x\",\"time\":\"yesterday\"}";
	assert_int_equal(docker_parse(l, strlen(l), f, &p, &off), FLOE_EPARSE);
	assert_int_equal(off, 19);
	/* A log value larger than the scratch arena. */
	struct floe_fields *small = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 4, &small), 0);
	l = "{\"log\":\"\\t123456\"}";
	assert_int_equal(docker_parse(l, strlen(l), small, &p, &off), FLOE_ELIMIT);
	floe_fields_free(small);
	floe_fields_free(f);
}

static struct floe_container *joiner(enum floe_container_format fmt, size_t max_bytes)
{
	struct floe_container_opts o = {.format = fmt, .max_bytes = max_bytes, .timeout_us = 100};
	struct floe_container *c = NULL;
	assert_int_equal(floe_container_new(NULL, &o, &c), 0);
	assert_non_null(c);
	return c;
}

static size_t push(struct floe_container *c, const char *line, int64_t *pos, int64_t now,
		   struct floe_container_rec out[2])
{
	size_t n = 0, off;
	size_t len = strlen(line);
	assert_int_equal(
	    container_push(c, line, len, *pos, *pos + (int64_t)len + 1, now, out, &n, &off), 0);
	*pos += (int64_t)len + 1;
	return n;
}

static void expect_msg(const struct floe_container_rec *r, const char *msg, const char *stream,
		       int64_t off, int64_t end, size_t npieces)
{
	assert_int_equal(r->len, strlen(msg));
	assert_memory_equal(r->msg, msg, r->len);
	assert_int_equal(r->stream_len, strlen(stream));
	assert_memory_equal(r->stream, stream, r->stream_len);
	assert_int_equal(r->offset, off);
	assert_int_equal(r->end_offset, end);
	assert_int_equal(r->npieces, npieces);
}

static void test_join_cri(void **state)
{
	struct floe_container *c = joiner(FLOE_CONTAINER_CRI, 0);
	struct floe_container_rec out[2];
	int64_t pos = 0, pend;
	/* A whole line: emitted without a copy. Each line below is 40 + msg bytes. */
	const char *whole = T0 " stdout F one";
	assert_int_equal(push(c, whole, &pos, 0, out), 1);
	expect_msg(&out[0], "one", "stdout", 0, 44, 1);
	assert_ptr_equal(out[0].msg, whole + 40);
	assert_int_equal(out[0].ts_us, T0_US);
	assert_false(floe_container_pending(c, &pend));
	/* Three pieces. */
	assert_int_equal(push(c, T0 " stdout P ab", &pos, 1, out), 0);
	assert_true(floe_container_pending(c, &pend));
	assert_int_equal(pend, 44);
	assert_int_equal(push(c, "2016-10-06T00:17:10Z stdout P cd", &pos, 2, out), 0);
	assert_int_equal(push(c, "2016-10-06T00:17:11Z stdout F ef", &pos, 3, out), 1);
	expect_msg(&out[0], "abcdef", "stdout", 44, 44 + 43 + 33 + 33, 3);
	assert_int_equal(out[0].ts_us, T0_US);
	assert_false(out[0].incomplete);
	assert_false(out[0].truncated);
	assert_false(floe_container_pending(c, &pend));
	/* Interleaved streams: the held stdout message is flushed incomplete, in file order. */
	int64_t p0 = pos;
	assert_int_equal(push(c, T0 " stdout P x", &pos, 4, out), 0);
	assert_int_equal(push(c, T0 " stderr F y", &pos, 5, out), 2);
	expect_msg(&out[0], "x", "stdout", p0, p0 + 42, 1);
	assert_true(out[0].incomplete);
	expect_msg(&out[1], "y", "stderr", p0 + 42, p0 + 84, 1);
	assert_false(out[1].incomplete);
	/* ... and a partial of the other stream is held in turn. */
	p0 = pos;
	assert_int_equal(push(c, T0 " stdout P x", &pos, 6, out), 0);
	assert_int_equal(push(c, T0 " stderr P y", &pos, 7, out), 1);
	expect_msg(&out[0], "x", "stdout", p0, p0 + 42, 1);
	assert_true(floe_container_pending(c, &pend));
	assert_int_equal(pend, p0 + 42);
	/* Timeout (100 µs after the last piece), then flush has nothing. */
	bool e;
	floe_container_poll(c, 106, &out[0], &e);
	assert_false(e);
	floe_container_poll(c, 107, &out[0], &e);
	assert_true(e);
	expect_msg(&out[0], "y", "stderr", p0 + 42, p0 + 84, 1);
	assert_true(out[0].incomplete);
	floe_container_flush(c, &out[0], &e);
	assert_false(e);
	/* A bad line flushes the held message first (file order), then is the caller's. */
	p0 = pos;
	assert_int_equal(push(c, T0 " stdout P held", &pos, 8, out), 0);
	size_t n = 9, off = 9;
	assert_int_equal(container_push(c, "junk", 4, pos, pos + 5, 9, out, &n, &off), FLOE_EPARSE);
	assert_int_equal(off, 0);
	assert_int_equal(n, 1);
	expect_msg(&out[0], "held", "stdout", p0, p0 + 45, 1);
	assert_true(out[0].incomplete);
	assert_false(floe_container_pending(c, &pend));
	assert_int_equal(container_push(c, "junk", 4, pos, pos + 5, 9, out, &n, &off), FLOE_EPARSE);
	assert_int_equal(n, 0);
	floe_container_flush(c, &out[0], &e);
	assert_false(e);
	uint64_t tr, inc;
	floe_container_counts(c, &tr, &inc);
	assert_int_equal(tr, 0);
	assert_int_equal(inc, 4);
	floe_container_free(c);
	floe_container_free(NULL);
}

static void test_cap(void **state)
{
	struct floe_container *c = joiner(FLOE_CONTAINER_CRI, 5);
	struct floe_container_rec out[2];
	int64_t pos = 0;
	assert_int_equal(push(c, T0 " stdout P abc", &pos, 0, out), 0);
	assert_int_equal(push(c, T0 " stdout P def", &pos, 0, out), 0);
	assert_int_equal(push(c, T0 " stdout F gh", &pos, 0, out), 1);
	expect_msg(&out[0], "abcde", "stdout", 0, 44 * 3 - 1, 3);
	assert_true(out[0].truncated);
	/* A whole line over the cap is cut too. */
	assert_int_equal(push(c, T0 " stdout F 1234567", &pos, 0, out), 1);
	assert_int_equal(out[0].len, 5);
	assert_true(out[0].truncated);
	uint64_t tr, inc;
	floe_container_counts(c, &tr, &inc);
	assert_int_equal(tr, 2);
	assert_int_equal(inc, 0);
	floe_container_free(c);
}

static void test_join_docker_auto(void **state)
{
	struct floe_container *c = joiner(FLOE_CONTAINER_AUTO, 0);
	struct floe_container_rec out[2];
	int64_t pos = 0;
	const char *a =
	    "{\"log\":\"part1 \",\"stream\":\"stdout\",\"time\":\"2019-01-01T00:00:00Z\"}";
	const char *b =
	    "{\"log\":\"part2\\n\",\"stream\":\"stdout\",\"time\":\"2019-01-01T00:00:01Z\"}";
	assert_int_equal(push(c, a, &pos, 0, out), 0);
	assert_int_equal(push(c, b, &pos, 0, out), 1);
	int64_t end = (int64_t)strlen(a) + 1 + (int64_t)strlen(b) + 1;
	expect_msg(&out[0], "part1 part2", "stdout", 0, end, 2);
	assert_int_equal(out[0].ts_us, 1546300800000000);
	/* A CRI line in the same auto joiner. */
	assert_int_equal(push(c, T0 " stderr F cri", &pos, 0, out), 1);
	expect_msg(&out[0], "cri", "stderr", end, end + 44, 1);
	/* A Docker-only joiner refuses CRI lines. */
	struct floe_container *d = joiner(FLOE_CONTAINER_DOCKER, 0);
	size_t n, off;
	const char *l = T0 " stderr F cri";
	assert_int_equal(container_push(d, l, strlen(l), 0, 1, 0, out, &n, &off), FLOE_EPARSE);
	assert_int_equal(off, 0);
	floe_container_free(d);
	floe_container_free(c);
}

static void test_faults(void **state)
{
	struct floe_container_opts o = {.format = FLOE_CONTAINER_AUTO, .max_bytes = 64};
	struct floe_alloc a;
	for (long k = 0;; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_container *c = NULL;
		int err = floe_container_new(&a, &o, &c);
		if (err) {
			assert_int_equal(err, FLOE_ENOMEM);
			assert_null(c);
			assert_int_equal(a.used, 0);
			continue;
		}
		/* The join buffer is the first use allocation. */
		struct floe_container_rec out[2];
		size_t n, off;
		const char *l = T0 " stdout P x";
		int rc = container_push(c, l, strlen(l), 0, 1, 0, out, &n, &off);
		int64_t pend;
		if (rc) {
			assert_int_equal(rc, FLOE_ENOMEM);
			assert_false(floe_container_pending(c, &pend));
			floe_container_free(c);
			assert_int_equal(a.used, 0);
			continue;
		}
		assert_true(floe_container_pending(c, &pend));
		floe_container_free(c);
		assert_int_equal(a.used, 0);
		break;
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cri_parse),	     cmocka_unit_test(test_docker_parse),
	    cmocka_unit_test(test_join_cri),	     cmocka_unit_test(test_cap),
	    cmocka_unit_test(test_join_docker_auto), cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
