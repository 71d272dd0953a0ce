/* The aggregator against known answers: windows by event time with out-of-order and late
 * events under both policies, hopping windows, the overflow group's exact count, where
 * filters, unparsable values, the sketches' columns, idle windows, partial flushes, no
 * allocation after start-up, the open windows' image restored, the clock stepping back,
 * and the plan of its memory. The sketches' shared pool is test_agg_aggregator_pool.c's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

#include "agg_nomalloc.h"

#include "agg_lib.h"
#include "build_skip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


#define NUMS "metrics: [count, {sum: v}, {min: v}, {max: v}, {avg: v}]"

static void late_case(bool oldest_open)
{
	struct fixture f;
	char yaml[512];
	snprintf(yaml, sizeof(yaml),
		 "aggregations: [{name: a, window: 10s, allowed_lateness: 5s, late: %s, "
		 "group_by: [k], " NUMS "}]\n",
		 oldest_open ? "oldest_open" : "drop");
	setup(&f, yaml);
	add(&f, 1, "a", "1");
	add(&f, 3, "b", "2");
	add(&f, 12, "a", "5");
	add(&f, 2, "a", "4"); /* out of order, its window still open (watermark 7) */
	assert_int_equal(f.sink.n, 0);
	add(&f, 16, "a", "1"); /* watermark 11: [0, 10) closes */
	assert_int_equal(f.sink.n, 2);
	const struct row *r = find(&f.sink, 0, "a");
	assert_int_equal(r->end, 10 * SEC);
	assert_true(r->v[0] == 2 && r->v[1] == 5 && r->v[2] == 1 && r->v[3] == 4 && r->v[4] == 2.5);
	assert_false(r->partial);
	r = find(&f.sink, 0, "b");
	assert_true(r->v[0] == 1 && r->v[1] == 2);
	add(&f, 8, "a", "100"); /* late: [0, 10) has closed */
	add(&f, 9, "c", "x");	/* late too, and not a number */
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	r = find(&f.sink, 10, "a");
	assert_true(r->partial);
	assert_int_equal(r->late, 2);
	if (oldest_open) {
		assert_true(r->v[0] == 3 && r->v[1] == 106 && r->v[3] == 100);
		r = find(&f.sink, 10, "c");
		assert_true(r->v[0] == 1 && isnan(r->v[1]) && isnan(r->v[2]));
		assert_int_equal(floe_agg_stats(f.g)->late_dropped, 0);
		assert_int_equal(floe_agg_stats(f.g)->unparsable, 4);
	} else {
		assert_true(r->v[0] == 2 && r->v[1] == 6 && r->v[2] == 1 && r->v[3] == 5);
		assert_int_equal(f.sink.n, 3);
		assert_int_equal(floe_agg_stats(f.g)->late_dropped, 2);
	}
	assert_int_equal(floe_agg_stats(f.g)->late, 2);
	teardown(&f);
}

/* An event dated far ahead of the clock (2099, or max_future_skew and a second) neither
 * moves the watermark nor opens a window: the real events after it are aggregated as
 * usual, and it is counted and handled as a late event (dropped, or with oldest_open in
 * the oldest open window). One within the skew is an ordinary event. */
static void future_case(bool oldest_open)
{
	struct fixture f;
	char yaml[512];
	snprintf(yaml, sizeof(yaml),
		 "aggregations: [{name: a, window: 10s, late: %s, max_future_skew: 1m, "
		 "group_by: [k], metrics: [count]}]\n",
		 oldest_open ? "oldest_open" : "drop");
	setup(&f, yaml);
	const double y2099 = 4070908800.0; /* 2099-01-01T00:00:00Z */
	add_read_at(&f, 100, 100, "a", NULL);
	add_read_at(&f, y2099, 101, "x", NULL);	/* the clock says 101 */
	add_read_at(&f, 100 + 61, 100, "x", NULL); /* 61 s ahead of the clock: over the skew */
	for (int i = 0; i < 1000; i++)
		add_read_at(&f, 100 + i / 100.0, 100 + i / 100.0, "a", NULL);
	assert_int_equal(f.sink.n, 0); /* no window closed: the watermark is at 109.99 */
	add_read_at(&f, 140, 140, "b", NULL);	/* the watermark passes 110: [100, 110) closes */
	add_read_at(&f, 150, 91, "b", NULL);	/* 59 s ahead: within the skew, an ordinary event */
	const struct row *r = find(&f.sink, 100, "a");
	assert_int_equal(r->v[0], 1001);
	assert_false(r->partial);
	assert_int_equal(floe_agg_stats(f.g)->future, 2);
	assert_int_equal(floe_agg_stats(f.g)->late, 2);
	assert_int_equal(floe_agg_stats(f.g)->late_dropped, oldest_open ? 0 : 2);
	if (oldest_open) {
		r = find(&f.sink, 100, "x"); /* routed to the oldest open window */
		assert_int_equal(r->v[0], 2);
	}
	for (size_t i = 0; i < f.sink.n; i++)
		assert_true(f.sink.rows[i].start < 200 * SEC);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	for (size_t i = 0; i < f.sink.n; i++)
		assert_true(f.sink.rows[i].start < 200 * SEC);
	teardown(&f);
}

static void test_future_drop(void **state)
{
	(void)state;
	future_case(false);
}

static void test_future_oldest_open(void **state)
{
	(void)state;
	future_case(true);
}

/* Numbers parsed from strings: whole numbers of up to 15 digits take a path of their own,
 * which must give what strtod gives; the rest, and what is not a number, as before. */
static void test_number_edges(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 10s, group_by: [k], " NUMS "}]\n");
	static const char *const nums[] = {"-7", "007", "-0", "123456789012345", "12345678901234567",
					   "1.5", "1e3", "+4", "-2.5"};
	static const char *const bad[] = {"-", "", "12a", "0x10", "--1", "1-"};
	for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		add(&f, 1, "a", nums[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		add(&f, 1, "a", bad[i]);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	const struct row *r = find(&f.sink, 0, "a");
	double sum = -7.0 + 7 - 0.0 + 123456789012345.0 + 12345678901234567.0 + 1.5 + 1e3 + 4 - 2.5;
	assert_true(r->v[0] == 15 && r->v[1] == sum && r->v[2] == -7 && r->v[3] == 12345678901234567.0);
	assert_int_equal(floe_agg_stats(f.g)->unparsable, 4 * 6);
	teardown(&f);
}

static void test_late_drop(void **state)
{
	(void)state;
	late_case(false);
}

static void test_late_oldest_open(void **state)
{
	(void)state;
	late_case(true);
}

static void test_hopping(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 10s, slide: 5s, " NUMS "}]\n");
	add(&f, 7, NULL, NULL);
	add(&f, 12, NULL, NULL);
	add(&f, 3, NULL, NULL); /* [0, 10) closed at 12: [-5, 5) is older still: late */
	add(&f, 21, NULL, NULL);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	/* [5, 15): 7 and 12; [0, 10): 7; [10, 20): 12; [15, 25) and [20, 30): 21 */
	assert_true(find(&f.sink, 0, "")->v[0] == 1);
	assert_true(find(&f.sink, 5, "")->v[0] == 2);
	assert_true(find(&f.sink, 10, "")->v[0] == 1);
	assert_true(find(&f.sink, 15, "")->v[0] == 1);
	assert_true(find(&f.sink, 20, "")->v[0] == 1);
	assert_int_equal(f.sink.n, 5);
	assert_int_equal(floe_agg_stats(f.g)->late, 1);
	/* Windows come out oldest first. */
	for (size_t i = 1; i < f.sink.n; i++)
		assert_true(f.sink.rows[i - 1].start <= f.sink.rows[i].start);
	teardown(&f);
}

/* 3 groups kept, 10 keys: the overflow row counts exactly the other 7 keys' events, and
 * nothing is allocated from the first event to the last row. */
static void test_overflow_fixed_memory(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 1m, max_groups: 3, group_by: [k], "
		  "metrics: [count, {sum: v}, {quantiles: v}, {distinct: v}, {top_k: k}]}]\n");
	char k[8], v[8];
	uint64_t want_over = 0;
	agg_nomalloc_arm();
	for (int i = 0; i < 1000; i++) {
		int key = i % 10;
		snprintf(k, sizeof(k), "k%d", key);
		snprintf(v, sizeof(v), "%d", i);
		add(&f, 1 + i * 0.01, k, v);
		want_over += key >= 3;
	}
	add(&f, 61, "k0", "1"); /* closes [0, 60) */
	assert_int_equal(agg_nomalloc_disarm(), 0);
	assert_int_equal(f.sink.n, 4);
	assert_true(find(&f.sink, 0, "k0")->v[0] == 100);
	const struct row *o = find(&f.sink, 0, FLOE_AGG_OVERFLOW);
	assert_true(o->v[0] == (double)want_over);
	assert_int_equal(floe_agg_stats(f.g)->overflowed, want_over);
	/* The overflow's top_k sees its seven keys, 100 events each. */
	assert_true(o->top_n == 7 && o->top0_count == 100);
	/* distinct of the values: 700 in the overflow, exact in a set of the pool (a SET
	 * image of 700 coupons). */
	assert_true(o->v[5] == 700);
	assert_true(o->sketch_len[0] > 0 && o->sketch_len[1] == 12 + 4 * 700);
	teardown(&f);
}

static void test_quantiles_where(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* where.matches */
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 1m, where: {field: k, matches: '^ok'}, "
		  "metrics: [count, {quantiles: v, q: [0.5, 0.99]}]}]\n");
	char v[16];
	for (int i = 1; i <= 1000; i++) {
		snprintf(v, sizeof(v), "%d", i);
		add(&f, 1, i % 2 ? "ok" : "no", v);
		add(&f, 1, "ok", v);
	}
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, 1);
	const struct row *r = &f.sink.rows[0];
	assert_true(r->v[0] == 1500);
	assert_true(fabs(r->v[1] - 500) <= 0.01 * 500 + 1);
	assert_true(fabs(r->v[2] - 990) <= 0.01 * 990 + 1);
	assert_int_equal(floe_agg_stats(f.g)->filtered, 500);
	teardown(&f);
}

/* One event at ts 1 with k and v given as attributes after an unrelated one, in the order
 * k, v or, with swap, v, k: the aggregator remembers where it found an attribute last and
 * must still find it when the next record has another order. */
static void add_ordered(struct fixture *f, const char *k, const char *v, bool swap)
{
	const char *keys[3] = {"x", swap ? "v" : "k", swap ? "k" : "v"};
	const char *vals[3] = {"-", swap ? v : k, swap ? k : v};
	size_t klens[3] = {1, 1, 1}, vlens[3] = {1, strlen(vals[1]), strlen(vals[2])};
	struct floe_record r = {.ts = SEC,
				.received_at = SEC,
				.host = {"h", 1},
				.message = {"m", 1},
				.nattrs = 3,
				.attr_keys = keys,
				.attr_key_lens = klens,
				.attr_vals = vals,
				.attr_val_lens = vlens};
	assert_int_equal(floe_agg_add(f->g, &r, collect, &f->sink), 0);
}

/* Numbers are read as strtod reads them, whichever path parses them (short decimals take
 * a path of their own), and the sum of several metrics over one field is that of each. */
static void test_numbers(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 1m, group_by: [k], "
		  "metrics: [count, {sum: v}, {min: v}, {max: v}, {quantiles: v, q: [0.5]}]}]\n");
	static const char *const good[] = {
	    "0.1",   "123.456", "-5",	   "+7",    "1.",		  ".5",
	    "-0",    "1e3",	    "2.5E-3", "00012", "123456789012345", "1234567890123456",
	    "0.3",   "9007199254740993",   "999999999999999.9", "1.000000000000001",
	    "-12.75"};
	static const char *const bad[] = {"1.2.3", "abc", "1e", "0x10", "nan", "inf", "-", ".", "+",
					  "1 2", "--1"};
	double sum = 0, lo = INFINITY, hi = -INFINITY;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		double d = strtod(good[i], NULL);
		sum += d;
		lo = d < lo ? d : lo;
		hi = d > hi ? d : hi;
		add_ordered(&f, "a", good[i], i % 2);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		add_ordered(&f, "a", bad[i], i % 2 == 0);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	const struct row *r = find(&f.sink, 0, "a");
	assert_true(r->v[0] == (double)(sizeof(good) / sizeof(good[0]) + sizeof(bad) / sizeof(bad[0])));
	assert_true(r->v[1] == sum);
	assert_true(r->v[2] == lo);
	assert_true(r->v[3] == hi);
	/* sum, min, max and quantiles each count an unparsable value. */
	assert_int_equal(floe_agg_stats(f.g)->unparsable, 4 * (sizeof(bad) / sizeof(bad[0])));
	teardown(&f);
}

static void test_idle(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 10s, idle_timeout: 30s}]\n");
	add(&f, 1, NULL, NULL);
	assert_int_equal(floe_agg_tick(f.g, 20 * SEC, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, 0);
	assert_int_equal(floe_agg_tick(f.g, 31 * SEC, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, 1);
	assert_false(f.sink.rows[0].partial);
	add(&f, 2, NULL, NULL); /* its window was closed by the timeout: late */
	assert_int_equal(floe_agg_stats(f.g)->late, 1);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, 1);
	teardown(&f);
}


/* A backfill (a month-old file read from its beginning) where some lines have no time of
 * their own (a stack trace's lines, lines the parser did not match: their ts is the time
 * they were read). Such a line was aggregated at the time it was read, a month after the
 * lines around it: the watermark went there and every dated line after it was late,
 * dropped. It now takes the time of the last dated event plus the time read since, so
 * the dated lines count in their windows; one read longer than idle_timeout after the
 * last dated event, or in a stream with none, keeps the time it was read. */
static void test_untimed_in_backfill(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 1m, group_by: [k], metrics: [count]}]\n");
	const double now = 1000000;
	add_read_at(&f, 100, now, "a", NULL);
	add_read_at(&f, now, now, "x", NULL); /* no time of its own */
	add_read_at(&f, 110, now, "a", NULL);
	add_read_at(&f, now + 1, now + 1, "x", NULL);
	add_read_at(&f, 130, now + 1, "a", NULL);
	assert_int_equal(floe_agg_stats(f.g)->late, 0);
	/* A dated event that is late (a sender whose clock is far behind) is dropped, and
	 * the undated ones do not follow it. */
	add_read_at(&f, 5, now + 1, "late", NULL);
	assert_int_equal(floe_agg_stats(f.g)->late, 1);
	/* The agent restarts from the image (a crash in the backfill): the newest dated
	 * event is in it, and the next undated line goes after it too. */
	struct image im;
	save_image(&f, 1, &im);
	struct fixture g;
	setup(&g, "aggregations: [{name: a, window: 1m, group_by: [k], metrics: [count]}]\n");
	uint64_t tag = 0;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), 0);
	free(im.p);
	add_read_at(&g, now + 2, now + 2, "x", NULL);
	add_read_at(&g, 140, now + 2, "a", NULL);
	assert_int_equal(floe_agg_stats(g.g)->late, 1); /* the image's count */
	assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
	const struct row *r = find(&g.sink, 120, "x"); /* at 130 + 1 */
	assert_non_null(r);
	assert_int_equal(r->v[0], 1);
	r = find(&g.sink, 120, "a");
	assert_int_equal(r->v[0], 2);
	teardown(&g);

	add_read_at(&f, now + 500, now + 500, "y", NULL); /* long after: its own time */
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(floe_agg_stats(f.g)->late, 1);
	r = find(&f.sink, 60, "a");
	assert_non_null(r);
	assert_int_equal(r->v[0], 2);
	r = find(&f.sink, 60, "x");
	assert_non_null(r);
	assert_int_equal(r->v[0], 2);
	r = find(&f.sink, 120, "a");
	assert_non_null(r);
	assert_int_equal(r->v[0], 1);
	r = find(&f.sink, 1000500, "y");
	assert_non_null(r);
	assert_int_equal(r->v[0], 1);
	teardown(&f);
}


/* Events read at now seconds, the clock told first as the runner does. */
static void add_clocked(struct fixture *f, double ts, double now, const char *k)
{
	assert_int_equal(floe_agg_clock(f->g, (int64_t)(now * SEC), collect, &f->sink), 0);
	add_read_at(f, ts, now, k, NULL);
}

static int64_t count_of(const struct sink *s)
{
	int64_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		n += (int64_t)s->rows[i].v[0];
	return n;
}

/* The clock steps back a year (a device's clock that ran ahead, corrected): without the
 * step, every event of the next year would be late. The open windows go out partial at
 * the step, the windows start again from the next event, and every event is in a row.
 * A step within allowed_lateness (or under a second) is no step; a record received
 * before the step and added after it, dated by the old clock, is too far ahead of the
 * new one; the idle timeout works from the new clock; and an image restored after the
 * agent was down sees a clock behind its newest record as a step. */
static void test_clock_step(void **state)
{
	(void)state;
	const double year = 365 * 86400.0, t0 = 1800000000.0;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 10s, allowed_lateness: 2s, idle_timeout: "
		  "30s, group_by: [k], metrics: [count]}]\n");
	for (int i = 0; i < 100; i++) /* [t0, t0 + 25): two windows closed, one open */
		add_clocked(&f, t0 + i * 0.25, t0 + i * 0.25, "a");
	size_t before = f.sink.n;
	assert_int_equal(before, 2);
	add_clocked(&f, t0 + 24.5 - 1.5, t0 + 24.5 - 1.5, "a"); /* back 1.5 s: within lateness */
	assert_int_equal(floe_agg_clock_steps(f.g), 0);
	assert_int_equal(f.sink.n, before);
	/* A year back. */
	double t1 = t0 - year;
	add_clocked(&f, t1, t1, "a");
	assert_int_equal(floe_agg_clock_steps(f.g), 1);
	assert_int_equal(f.sink.n, before + 1); /* the open window, partial */
	assert_true(f.sink.rows[before].partial);
	assert_int_equal(f.sink.rows[before].start, (int64_t)(t0 + 20) * SEC);
	for (int i = 1; i < 100; i++)
		add_clocked(&f, t1 + i * 0.25, t1 + i * 0.25, "a");
	/* A record received before the step, dated by the old clock: too far ahead now. */
	add_read_at(&f, t0 + 25, t0 + 25, "late", NULL);
	/* Received before the step but dated by its sender's own (right) clock: taken. */
	add_read_at(&f, t1 + 25.5, t0 + 25, "a", NULL);
	assert_int_equal(floe_agg_stats(f.g)->late, 1);
	assert_int_equal(floe_agg_stats(f.g)->future, 1);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(count_of(&f.sink), 100 + 1 + 100 + 1);
	for (size_t i = before + 1; i < f.sink.n; i++)
		assert_true(f.sink.rows[i].start >= (int64_t)(t1 - 10) * SEC &&
			    f.sink.rows[i].start < (int64_t)(t1 + 30) * SEC);
	teardown(&f);

	/* A step back with no event after it: the tick closes the open windows at once (the
	 * idle timeout counts from the new clock, not from the newest record's time). */
	setup(&f, "aggregations: [{name: a, window: 10s, idle_timeout: 30s, metrics: [count]}]\n");
	add_clocked(&f, t0, t0, NULL);
	assert_int_equal(floe_agg_tick(f.g, (int64_t)(t0 - 3600) * SEC, collect, &f.sink), 0);
	assert_int_equal(floe_agg_clock_steps(f.g), 1);
	assert_int_equal(f.sink.n, 1);
	assert_true(f.sink.rows[0].partial);
	add_clocked(&f, t0 - 3590, t0 - 3590, NULL);
	assert_int_equal(floe_agg_tick(f.g, (int64_t)(t0 - 3570) * SEC, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, 1);
	assert_int_equal(floe_agg_tick(f.g, (int64_t)(t0 - 3559) * SEC, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, 2);
	assert_false(f.sink.rows[1].partial);
	assert_int_equal(floe_agg_stats(f.g)->late, 0);
	teardown(&f);

	/* Down across the step: the restored image's newest record is the baseline. */
	struct fixture g;
	setup(&f, "aggregations: [{name: a, window: 10s, metrics: [count]}]\n");
	setup(&g, "aggregations: [{name: a, window: 10s, metrics: [count]}]\n");
	for (int i = 0; i < 30; i++)
		add_clocked(&f, t0 + i, t0 + i, NULL);
	struct image im;
	save_image(&f, 7, &im);
	uint64_t tag = 0;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), 0);
	free(im.p);
	assert_int_equal(floe_agg_clock_now(g.g), (int64_t)(t0 + 29) * SEC);
	add_clocked(&g, t1, t1, NULL);
	assert_int_equal(floe_agg_clock_steps(g.g), 1);
	assert_int_equal(floe_agg_stats(g.g)->late, 0);
	assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
	assert_int_equal(count_of(&g.sink), 10 + 1); /* the restored window [t0 + 20, + 30), t1 */
	teardown(&g);
	teardown(&f);

	/* Without the clock told (an embedding that never calls floe_agg_clock), the old
	 * behaviour: the events after the step are late. */
	setup(&f, "aggregations: [{name: a, window: 10s, metrics: [count]}]\n");
	add(&f, t0, NULL, NULL);
	add(&f, t1, NULL, NULL);
	assert_int_equal(floe_agg_stats(f.g)->late, 1);
	assert_int_equal(floe_agg_clock_steps(f.g), 0);
	teardown(&f);
}


#define IMG_CFG                                                                                    \
	"aggregations: [{name: a, window: 10s, slide: 5s, allowed_lateness: 5s, group_by: [k], "   \
	"max_groups: 3, metrics: [count, {sum: v}, {min: v}, {distinct: v, precision: 4}, "        \
	"{distinct: k}, {quantiles: v, q: [0.5]}, {top_k: v, k: 2}]}]\n"

static void feed(struct fixture *f, int from, int to)
{
	static const char *keys[] = {"a", "b", "c", "d", "e"};
	char v[16];
	for (int i = from; i < to; i++) {
		snprintf(v, sizeof(v), "%d", i % 37);
		add(f, i * 0.1, keys[i % 5], v);
	}
}

/* An image restored into a new aggregator goes on exactly as the original: the same
 * rows, to the sketches (HLL registers dense at p = 4, sparse at 14) and the overflow
 * group; a damaged image or one of another configuration leaves the new aggregator
 * empty. */
static void test_image(void **state)
{
	(void)state;
	struct fixture f, g;
	setup(&f, IMG_CFG);
	setup(&g, IMG_CFG);
	feed(&f, 0, 300); /* 30 s: some windows closed, three open with overflowing keys */
	size_t closed = f.sink.n;
	assert_true(closed > 0);
	struct image im;
	save_image(&f, 42, &im);
	uint64_t tag = 0;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), 0);
	assert_int_equal(tag, 42);
	assert_int_equal(im.off, im.len);
	assert_int_equal(floe_agg_load_lost(g.g), 0);
	f.sink.n = 0;
	feed(&f, 300, 420);
	feed(&g, 300, 420);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
	assert_int_equal(f.sink.n, g.sink.n);
	assert_true(f.sink.n > 3);
	assert_memory_equal(f.sink.rows, g.sink.rows, f.sink.n * sizeof(struct row));
	assert_int_equal(floe_agg_stats(g.g)->events, 420);
	assert_true(floe_agg_stats(g.g)->overflowed > 0);
	teardown(&g);

	/* One byte changed anywhere: refused, and the aggregator is as new. */
	setup(&g, IMG_CFG);
	im.p[im.len / 2] ^= 1;
	im.off = 0;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), FLOE_ECORRUPT);
	assert_int_equal(floe_agg_load_lost(g.g), 3); /* the three open windows, counted */
	assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
	assert_int_equal(g.sink.n, 0);
	assert_int_equal(floe_agg_stats(g.g)->events, 0);
	teardown(&g);
	/* Cut short. */
	setup(&g, IMG_CFG);
	im.p[im.len / 2] ^= 1;
	im.off = 0;
	im.len -= 9;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), FLOE_ECORRUPT);
	teardown(&g);
	/* Another configuration (max_groups 4). */
	setup(&g, "aggregations: [{name: a, window: 10s, slide: 5s, allowed_lateness: 5s, "
		  "group_by: [k], max_groups: 4, metrics: [count, {sum: v}, {min: v}, "
		  "{distinct: v, precision: 4}, {distinct: k}, {quantiles: v, q: [0.5]}, "
		  "{top_k: v, k: 2}]}]\n");
	im.len += 9;
	im.off = 0;
	struct floe_err err = {0};
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, &err), FLOE_EFORMAT);
	assert_non_null(strstr(err.msg, "another configuration"));
	assert_int_equal(floe_agg_load_lost(g.g), 3);
	teardown(&g);
	free(im.p);
	teardown(&f);
}


static void test_plan(void **state)
{
	(void)state;
	struct floe_config *c = NULL;
	const char *ya = "aggregations: [{name: a, window: 1s, allowed_lateness: 1h}, "
			 "{name: b, window: 1m, allowed_lateness: 30s, max_groups: 10}]\n";
	const char *y = ya;
	assert_int_equal(floe_config_parse(NULL, "t.yaml", y, strlen(y), "h", &c, NULL), 0);
	struct floe_agg_plan p;
	struct floe_err err = {0};
	assert_int_equal(floe_agg_plan(&c->aggs[0], &p, &err), FLOE_ELIMIT);
	assert_non_null(strstr(err.msg, "3601 windows would be open at once (at most 256)"));
	assert_int_equal(floe_agg_plan(&c->aggs[1], &p, &err), 0);
	assert_int_equal(p.windows, 2);
	assert_int_equal(p.groups, 11);
	assert_int_equal(p.group_bytes, 16 + 256 + 8);
	floe_config_free(c);
	/* A group with a distinct and a quantiles sketch: their list and pairs in the group,
	 * and its share of the window's pool (an eighth of a dense HLL and of a DDSketch's
	 * full windows, and one of each for a busy group). It was 28,424 bytes with a block
	 * of each per group; the target is 4 times less. */
	y = "aggregations: [{name: a, group_by: [k], max_groups: 1000, "
	    "metrics: [count, {distinct: u}, {quantiles: v}]}]\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", y, strlen(y), "h", &c, NULL), 0);
	assert_int_equal(floe_agg_plan(&c->aggs[0], &p, &err), 0);
	assert_int_equal(p.pool, 1001 * (16384 / 8 + 10240 / 8) + 16384 + 10240);
	assert_true(p.group_bytes * 4 <= 28424);
	printf("# a group of count, distinct and quantiles: %llu bytes\n",
	       (unsigned long long)p.group_bytes);
	floe_config_free(c);
	assert_int_equal(floe_config_parse(NULL, "t.yaml", ya, strlen(ya), "h", &c, NULL), 0);
	assert_int_equal(floe_agg_plan(&c->aggs[1], &p, &err), 0);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_aggregator *g = NULL;
	assert_int_equal(floe_agg_new(&a, &c->aggs[1], NULL, &g, &err), 0);
	assert_true(a.used <= p.total);
	floe_agg_free(g);
	/* The rule across aggregations: the first one's window span, then their memory. */
	assert_int_equal(floe_agg_check(c, 0, &err), FLOE_EFORMAT);
	assert_string_equal(err.msg,
			    "t.yaml:1:16: key 'aggregations[0]': window + allowed_lateness "
			    "is 3601 slides: 3601 windows would be open at once (at most "
			    "256); lower allowed_lateness or raise slide");
	floe_config_free(c);
	y = "agent: {memory_limit: 8MiB}\n"
	    "aggregations: [{name: a, metrics: [{distinct: x}]}, {name: b, max_groups: 100000}]\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", y, strlen(y), "h", &c, NULL), 0);
	assert_int_equal(floe_agg_check(c, 0, &err), FLOE_EFORMAT);
	/* A group's bytes depend on the sketches' struct sizes (32 or 64-bit). */
	assert_non_null(strstr(err.msg, "t.yaml:2:16: key 'aggregations[0].max_groups': 1 "
					"window(s) x 1001 groups x 34"));
	assert_non_null(strstr(err.msg, "more than their share of agent.memory_limit (2.0MiB: "
					"at most a quarter, and what the 0.0MiB the rest of the "
					"agent needs leaves); lower max_groups to "));
	floe_config_free(c);
	y = "agent: {memory_limit: 64MiB}\n"
	    "aggregations: [{name: a, metrics: [{distinct: x, precision: 10}]}, {name: b}]\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", y, strlen(y), "h", &c, NULL), 0);
	assert_int_equal(floe_agg_check(c, 0, &err), 0);
	/* What the rest of the agent needs comes first: 63 of 64 MiB leave 1 MiB. */
	assert_int_equal(floe_agg_check(c, 63u << 20, &err), FLOE_EFORMAT);
	assert_non_null(strstr(err.msg, "(1.0MiB: at most a quarter, and what the 63.0MiB the "
					"rest of the agent needs leaves)"));
	floe_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_number_edges),
	    cmocka_unit_test(test_late_drop),
	    cmocka_unit_test(test_late_oldest_open),
	    cmocka_unit_test(test_future_drop),
	    cmocka_unit_test(test_future_oldest_open),
	    cmocka_unit_test(test_hopping),
	    cmocka_unit_test(test_overflow_fixed_memory),
	    cmocka_unit_test(test_quantiles_where),
	    cmocka_unit_test(test_idle),
	    cmocka_unit_test(test_untimed_in_backfill),
	    cmocka_unit_test(test_clock_step),
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_image),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
