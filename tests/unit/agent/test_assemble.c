/* Tests of agent/pipeline/assemble: per-file multiline groups with interleaved files,
 * LRU eviction, CRI and Docker partial lines, container + multiline together, timeouts on
 * an injected clock, pending offsets (holds), new generations, and allocation faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/pipeline/assemble.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include "build_skip.h"

#include <stdio.h>
#include <string.h>

#define T0 "2016-10-06T00:17:09.669794202Z"
#define T0_US INT64_C(1475713029669794)
#define MAXREC 32

struct got {
	size_t n;
	struct {
		uint64_t id;
		char path[64];
		char msg[256];
		int64_t off, end;
		bool has_ts;
		int64_t ts;
		char stream[16];
	} r[MAXREC];
	int ret; /* what on_rec returns */
};

static int on_rec(void *ctx, const struct floe_assemble_rec *a)
{
	struct got *g = ctx;
	assert_true(g->n < MAXREC);
	assert_true(a->len < sizeof(g->r[0].msg));
	g->r[g->n].id = a->file_id;
	snprintf(g->r[g->n].path, sizeof(g->r[0].path), "%s", a->path);
	memcpy(g->r[g->n].msg, a->msg, a->len);
	g->r[g->n].msg[a->len] = 0;
	g->r[g->n].off = a->offset;
	g->r[g->n].end = a->end_offset;
	g->r[g->n].has_ts = a->has_ts;
	g->r[g->n].ts = a->ts_us;
	g->r[g->n].stream[0] = 0;
	if (a->stream)
		snprintf(g->r[g->n].stream, sizeof(g->r[0].stream), "%.*s", (int)a->stream_len,
			 a->stream);
	g->n++;
	return g->ret;
}

/* Lines of a simulated file: offsets follow the text plus an LF. */
struct file {
	uint64_t id;
	const char *path;
	int64_t off;
};

static int push(struct floe_assemble *as, struct file *f, const char *line, int64_t now,
		struct got *g)
{
	size_t n = strlen(line);
	int rc = floe_assemble_push(as, f->id, f->path, line, n, f->off, f->off + (int64_t)n + 1,
				    now, on_rec, g);
	if (rc == 0)
		f->off += (int64_t)n + 1;
	return rc;
}

struct holds {
	size_t n;
	uint64_t id[8];
	int64_t off[8];
};

static void on_hold(void *ctx, uint64_t id, int64_t off)
{
	struct holds *h = ctx;
	assert_true(h->n < 8);
	h->id[h->n] = id;
	h->off[h->n++] = off;
}

static int64_t hold_of(const struct floe_assemble *as, uint64_t id)
{
	struct holds h = {0};
	floe_assemble_pending(as, on_hold, &h);
	for (size_t i = 0; i < h.n; i++)
		if (h.id[i] == id)
			return h.off[i];
	return -1;
}

static struct floe_assemble *ml_new(struct floe_alloc *a, size_t max_states)
{
	struct floe_assemble_options o = {.start = "^[0-9]{4}-",
					  .max_lines = 10,
					  .max_bytes = 4096,
					  .max_line_bytes = 1024,
					  .timeout_us = 1000,
					  .max_states = max_states};
	struct floe_assemble *as = NULL;
	assert_int_equal(floe_assemble_new(a, &o, &as, NULL), 0);
	assert_non_null(as);
	return as;
}

static void test_interleaved_files(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_assemble *as = ml_new(&a, 8);
	struct file f1 = {1, "/l/a.log", 0}, f2 = {2, "/l/b.log", 100};
	struct got g = {0};
	assert_int_equal(push(as, &f1, "2024-01 a", 0, &g), 0); /* f1: 0..10 */
	assert_int_equal(push(as, &f2, "2024-02 b", 0, &g), 0); /* f2: 100..110 */
	assert_int_equal(push(as, &f1, " at x", 0, &g), 0);	/* f1: 10..16 */
	assert_int_equal(push(as, &f2, " at z", 0, &g), 0);
	assert_int_equal(push(as, &f1, " at y", 0, &g), 0); /* f1: 16..22 */
	assert_int_equal(g.n, 0);
	assert_int_equal(hold_of(as, 1), 0);
	assert_int_equal(hold_of(as, 2), 100);
	assert_int_equal(push(as, &f1, "2024-03 c", 0, &g), 0); /* f1: 22..32 */
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].msg, "2024-01 a\n at x\n at y");
	assert_int_equal(g.r[0].id, 1);
	assert_string_equal(g.r[0].path, "/l/a.log");
	assert_int_equal(g.r[0].off, 0);
	assert_int_equal(g.r[0].end, 22);
	assert_false(g.r[0].has_ts);
	assert_string_equal(g.r[0].stream, "");
	assert_int_equal(hold_of(as, 1), 22);
	assert_int_equal(hold_of(as, 2), 100);
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 0);
	assert_int_equal(g.n, 3);
	/* States in creation order: f1 then f2. */
	assert_string_equal(g.r[1].msg, "2024-03 c");
	assert_int_equal(g.r[1].off, 22);
	assert_string_equal(g.r[2].msg, "2024-02 b\n at z");
	assert_int_equal(g.r[2].off, 100);
	assert_int_equal(g.r[2].end, 116);
	assert_int_equal(hold_of(as, 1), -1);
	assert_int_equal(hold_of(as, 2), -1);
	struct floe_assemble_stats st;
	floe_assemble_get_stats(as, &st);
	assert_int_equal(st.lines, 6);
	assert_int_equal(st.records, 3);
	assert_int_equal(st.states, 2);
	floe_assemble_free(as);
	assert_int_equal(a.used, 0);
}

static void test_eviction(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_assemble *as = ml_new(&a, 2);
	struct file f[3] = {{11, "/a", 0}, {12, "/b", 0}, {13, "/c", 0}};
	struct got g = {0};
	assert_int_equal(push(as, &f[0], "2024- one", 0, &g), 0);
	assert_int_equal(push(as, &f[1], "2024- two", 0, &g), 0);
	assert_int_equal(push(as, &f[0], "  more", 0, &g), 0); /* f[1] is now least recently used */
	assert_int_equal(push(as, &f[2], "2024- three", 0, &g), 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.r[0].id, 12);
	assert_string_equal(g.r[0].msg, "2024- two");
	assert_int_equal(hold_of(as, 12), -1);
	assert_int_equal(hold_of(as, 11), 0);
	assert_int_equal(hold_of(as, 13), 0);
	struct floe_assemble_stats st;
	floe_assemble_get_stats(as, &st);
	assert_int_equal(st.evictions, 1);
	assert_int_equal(st.states, 2);
	/* The evicted file comes back with a fresh state: its next line starts a group. */
	assert_int_equal(push(as, &f[1], "  tail of two", 0, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.r[1].id, 11);
	assert_string_equal(g.r[1].msg, "2024- one\n  more");
	assert_int_equal(hold_of(as, 12), 10);
	floe_assemble_free(as);
	assert_int_equal(a.used, 0);
}

static struct floe_assemble *fmt_new(struct floe_alloc *a, enum floe_assemble_format fmt,
				     const char *start)
{
	struct floe_assemble_options o = {.format = fmt,
					  .start = start,
					  .max_line_bytes = 4096,
					  .max_bytes = 4096,
					  .timeout_us = 1000,
					  .max_states = 4};
	struct floe_assemble *as = NULL;
	assert_int_equal(floe_assemble_new(a, &o, &as, NULL), 0);
	assert_non_null(as);
	return as;
}

static void test_cri(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_assemble *as = fmt_new(&a, FLOE_ASSEMBLE_CRI, NULL);
	struct file f = {5, "/var/log/pods/x.log", 0};
	struct got g = {0};
	const char *p1 = T0 " stdout P hello ", *p2 = T0 " stdout P big ",
		   *p3 = T0 " stdout F world";
	assert_int_equal(push(as, &f, p1, 0, &g), 0);
	assert_int_equal(push(as, &f, p2, 0, &g), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(hold_of(as, 5), 0);
	assert_int_equal(push(as, &f, p3, 0, &g), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].msg, "hello big world");
	assert_int_equal(g.r[0].off, 0);
	assert_int_equal(g.r[0].end, (int64_t)(strlen(p1) + strlen(p2) + strlen(p3) + 3));
	assert_true(g.r[0].has_ts);
	assert_int_equal(g.r[0].ts, T0_US);
	assert_string_equal(g.r[0].stream, "stdout");
	assert_int_equal(hold_of(as, 5), -1);
	/* A whole stderr line, then a line that is not CRI: kept as a message of its own. */
	assert_int_equal(push(as, &f, "2020-01-01T00:00:00Z stderr F oops", 0, &g), 0);
	assert_int_equal(push(as, &f, "garbage", 0, &g), 0);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.r[1].msg, "oops");
	assert_string_equal(g.r[1].stream, "stderr");
	assert_int_equal(g.r[1].ts, INT64_C(1577836800000000));
	assert_string_equal(g.r[2].msg, "garbage");
	assert_false(g.r[2].has_ts);
	assert_string_equal(g.r[2].stream, "");
	struct floe_assemble_stats st;
	floe_assemble_get_stats(as, &st);
	assert_int_equal(st.format_errors, 1);
	floe_assemble_free(as);
	assert_int_equal(a.used, 0);
}

static void test_docker(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_assemble *as = fmt_new(&a, FLOE_ASSEMBLE_DOCKER, NULL);
	struct file f = {9, "/d/c-json.log", 0};
	struct got g = {0};
	assert_int_equal(push(as, &f,
			      "{\"log\":\"part one, "
			      "\",\"stream\":\"stderr\",\"time\":\"2020-01-01T00:00:01.5Z\"}",
			      0, &g),
			 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(hold_of(as, 9), 0);
	int64_t second = f.off;
	assert_int_equal(
	    push(as, &f,
		 "{\"log\":\"part "
		 "\\\"two\\\"\\n\",\"stream\":\"stderr\",\"time\":\"2020-01-01T00:00:02Z\"}",
		 0, &g),
	    0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].msg, "part one, part \"two\"");
	assert_int_equal(g.r[0].ts, INT64_C(1577836801500000));
	assert_string_equal(g.r[0].stream, "stderr");
	assert_int_equal(g.r[0].off, 0);
	assert_int_equal(g.r[0].end, f.off);
	assert_true(second > 0);
	assert_int_equal(
	    push(as, &f,
		 "{\"log\":\"whole\\n\",\"stream\":\"stdout\",\"time\":\"2020-01-01T00:00:03Z\"}",
		 0, &g),
	    0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.r[1].msg, "whole");
	assert_string_equal(g.r[1].stream, "stdout");
	floe_assemble_free(as);
	assert_int_equal(a.used, 0);
}

/* CRI pieces joined first, then grouped: the group carries its first piece's time and
 * stream, and the hold is the first piece of the group. */
static void test_cri_multiline(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_assemble *as = fmt_new(&a, FLOE_ASSEMBLE_CRI, "^[0-9]{4}-");
	struct file f = {3, "/p.log", 0};
	struct got g = {0};
	assert_int_equal(push(as, &f, T0 " stdout F 2024-05-01 Exception", 0, &g), 0);
	int64_t second = f.off;
	assert_int_equal(push(as, &f, "2020-01-01T00:00:00Z stdout P   at ", 0, &g), 0);
	assert_int_equal(hold_of(as, 3), 0);
	assert_int_equal(push(as, &f, "2020-01-01T00:00:00Z stdout F Foo.bar", 0, &g), 0);
	assert_int_equal(g.n, 0);
	int64_t third = f.off;
	assert_int_equal(push(as, &f, "2020-01-01T00:00:00Z stderr F 2024-05-02 next", 0, &g), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].msg, "2024-05-01 Exception\n  at Foo.bar");
	assert_int_equal(g.r[0].ts, T0_US);
	assert_string_equal(g.r[0].stream, "stdout");
	assert_int_equal(g.r[0].end, third);
	assert_true(second < third);
	assert_int_equal(hold_of(as, 3), third);
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.r[1].msg, "2024-05-02 next");
	assert_string_equal(g.r[1].stream, "stderr");
	assert_int_equal(g.r[1].ts, INT64_C(1577836800000000));
	floe_assemble_free(as);
	assert_int_equal(a.used, 0);
}

static void test_timeouts(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_assemble *as = ml_new(&a, 4); /* timeout 1000 µs */
	struct file f1 = {1, "/a", 0}, f2 = {2, "/b", 0};
	struct got g = {0};
	assert_int_equal(push(as, &f1, "2024- a", 5000, &g), 0);
	assert_int_equal(push(as, &f2, "2024- b", 5500, &g), 0);
	assert_int_equal(floe_assemble_poll(as, 5999, on_rec, &g), 0);
	assert_int_equal(g.n, 0);
	assert_int_equal(floe_assemble_poll(as, 6000, on_rec, &g), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].msg, "2024- a");
	assert_int_equal(hold_of(as, 1), -1);
	assert_int_equal(hold_of(as, 2), 0);
	assert_int_equal(floe_assemble_poll(as, 6500, on_rec, &g), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.r[1].msg, "2024- b");
	struct floe_assemble_stats st;
	floe_assemble_get_stats(as, &st);
	assert_int_equal(st.timeouts, 2);
	assert_int_equal(st.states, 2);
	/* Empty and idle for 4 timeouts: the states are freed. */
	assert_int_equal(floe_assemble_poll(as, 9499, on_rec, &g), 0);
	floe_assemble_get_stats(as, &st);
	assert_int_equal(st.states, 1);
	assert_int_equal(floe_assemble_poll(as, 9500, on_rec, &g), 0);
	floe_assemble_get_stats(as, &st);
	assert_int_equal(st.states, 0);
	assert_int_equal(st.timeouts, 2);
	assert_int_equal(g.n, 2);

	/* CRI partial pieces time out too, incomplete. */
	struct floe_assemble *c = fmt_new(&a, FLOE_ASSEMBLE_CRI, NULL);
	assert_int_equal(push(c, &f1, T0 " stdout P half", 100, &g), 0);
	assert_int_equal(floe_assemble_poll(c, 1099, on_rec, &g), 0);
	assert_int_equal(g.n, 2);
	assert_int_equal(floe_assemble_poll(c, 1100, on_rec, &g), 0);
	assert_int_equal(g.n, 3);
	assert_string_equal(g.r[2].msg, "half");
	floe_assemble_get_stats(c, &st);
	assert_int_equal(st.incomplete, 1);
	assert_int_equal(st.timeouts, 1);
	floe_assemble_free(c);
	floe_assemble_free(as);
	assert_int_equal(a.used, 0);
}

/* fn returning 1 stops a poll or a flush after the current state; calling again goes on. */
static void test_stop(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	struct floe_assemble *as = ml_new(NULL, 4);
	struct file f[3] = {{1, "/a", 0}, {2, "/b", 0}, {3, "/c", 0}};
	struct got g = {0};
	for (int i = 0; i < 3; i++)
		assert_int_equal(push(as, &f[i], "2024- x", 0, &g), 0);
	g.ret = 1;
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 1);
	assert_int_equal(g.n, 1);
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 1);
	assert_int_equal(g.n, 2);
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 1);
	assert_int_equal(g.n, 3);
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 0);
	assert_int_equal(g.n, 3);
	/* An error from fn comes back. */
	assert_int_equal(push(as, &f[0], "2024- y", 0, &g), 0);
	g.ret = -77;
	assert_int_equal(push(as, &f[0], "2024- z", 0, &g), -77);
	floe_assemble_free(as);
}

/* A file that starts over (offsets going back) never joins across generations. */
static void test_new_generation(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	struct floe_assemble *as = ml_new(NULL, 4);
	struct file f = {1, "/a", 0};
	struct got g = {0};
	assert_int_equal(push(as, &f, "2024- old", 0, &g), 0);
	assert_int_equal(push(as, &f, " cont", 0, &g), 0);
	f.off = 0;
	f.path = "/a.renamed";
	assert_int_equal(push(as, &f, " orphan", 0, &g), 0);
	assert_int_equal(g.n, 1);
	assert_string_equal(g.r[0].msg, "2024- old\n cont");
	assert_int_equal(floe_assemble_flush(as, on_rec, &g), 0);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.r[1].msg, " orphan");
	assert_string_equal(g.r[1].path, "/a.renamed");
	floe_assemble_free(as);
}

static void test_bad_pattern(void **state)
{
	(void)state;
	struct floe_assemble_options o = {.start = "(unclosed"};
	struct floe_err why = {0};
	struct floe_assemble *as = NULL;
	const int want = PATTERN_ERROR(FLOE_EINVAL);
	assert_int_equal(floe_assemble_new(NULL, &o, &as, &why), want);
	assert_null(as);
	assert_int_equal(why.code, want);
	assert_true(why.msg[0] != 0);
}

/* Every allocation failing in turn: push reports FLOE_ENOMEM without consuming the line
 * (no record, no hold), and the same line pushed again later works. */
static void test_faults(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a multiline start pattern */
	for (long k = 0; k < 40; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_assemble_options o = {.format = FLOE_ASSEMBLE_CRI,
						  .start = "^[0-9]{4}-",
						  .max_line_bytes = 1024,
						  .max_bytes = 1024,
						  .timeout_us = 1000,
						  .max_states = 2};
		a.fail_after = k;
		struct floe_assemble *as = NULL;
		int err = floe_assemble_new(&a, &o, &as, NULL);
		if (!as) {
			assert_int_equal(err, FLOE_ENOMEM);
			assert_int_equal(a.used, 0);
			continue;
		}
		struct file f = {1, "/a", 0};
		struct got g = {0};
		int rc = push(as, &f, T0 " stdout P 2024- a", 0, &g);
		if (rc == 0)
			rc = push(as, &f, T0 " stdout F b", 0, &g);
		if (rc == 0)
			rc = push(as, &f, T0 " stdout F 2024- c", 0, &g);
		if (rc) {
			/* Only the last line emits, and it allocates nothing. */
			assert_int_equal(rc, FLOE_ENOMEM);
			assert_int_equal(g.n, 0);
		}
		a.fail_after = -1;
		/* Whatever failed, finishing with memory gives the same records. */
		const char *lines[] = {T0 " stdout P 2024- a", T0 " stdout F b",
				       T0 " stdout F 2024- c"};
		int64_t offs[3];
		int64_t o2 = 0;
		for (int i = 0; i < 3; i++) {
			offs[i] = o2;
			o2 += (int64_t)strlen(lines[i]) + 1;
		}
		for (int i = 0; i < 3; i++)
			if (f.off == offs[i])
				assert_int_equal(push(as, &f, lines[i], 0, &g), 0);
		assert_int_equal(floe_assemble_flush(as, on_rec, &g), 0);
		assert_int_equal(g.n, 2);
		assert_string_equal(g.r[0].msg, "2024- ab");
		assert_string_equal(g.r[1].msg, "2024- c");
		floe_assemble_free(as);
		assert_int_equal(a.used, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interleaved_files),
	    cmocka_unit_test(test_eviction),
	    cmocka_unit_test(test_cri),
	    cmocka_unit_test(test_docker),
	    cmocka_unit_test(test_cri_multiline),
	    cmocka_unit_test(test_timeouts),
	    cmocka_unit_test(test_stop),
	    cmocka_unit_test(test_new_generation),
	    cmocka_unit_test(test_bad_pattern),
	    cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
