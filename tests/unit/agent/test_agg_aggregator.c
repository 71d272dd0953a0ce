/* The aggregator against known answers: windows by event time with out-of-order and late
 * events under both policies, hopping windows, the overflow group's exact count, where
 * filters, unparsable values, the sketches' columns, idle windows, partial flushes, no
 * allocation after start-up, and the open windows' image restored. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

#include "agg_nomalloc.h"

#include "build_skip.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000LL
#define MAXROWS 64

/* What the emit callback keeps of each row: the first key as text, the window, and the
 * value columns as numbers (NAN for null). */
struct row {
	int64_t start, end;
	char key[32];
	double v[12];
	int64_t late;
	bool partial;
	size_t top_n;
	char top0[16];
	int64_t top0_count;
	size_t sketch_len[2];
};

struct sink {
	const struct floe_aggtable *t;
	size_t nkeys, nvals;
	struct row rows[MAXROWS];
	size_t n;
};

static int collect(void *arg, const struct floe_pq_value *v, size_t ncols)
{
	struct sink *s = arg;
	const struct floe_pq_column *cols;
	size_t n;
	cols = floe_aggtable_columns(s->t, &n);
	assert_int_equal(n, ncols);
	assert_true(s->n < MAXROWS);
	struct row *r = &s->rows[s->n++];
	memset(r, 0, sizeof(*r));
	r->start = v[0].i;
	r->end = v[1].i;
	size_t k = floe_aggtable_first_key(s->t), fv = floe_aggtable_first_value(s->t);
	if (fv > k && !v[k].is_null) {
		if (cols[k].kind == FLOE_PQ_STRING)
			snprintf(r->key, sizeof(r->key), "%.*s", (int)v[k].len, v[k].s);
		else
			snprintf(r->key, sizeof(r->key), "%lld", (long long)v[k].i);
	}
	size_t late = floe_aggtable_late_col(s->t);
	for (size_t i = fv, j = 0; i < late && j < 12; i++, j++) {
		if (v[i].is_null)
			r->v[j] = NAN;
		else if (cols[i].kind == FLOE_PQ_DOUBLE)
			r->v[j] = v[i].d;
		else if (cols[i].kind == FLOE_PQ_MAP_STRING_LONG) {
			r->top_n = v[i].n;
			if (v[i].n) {
				snprintf(r->top0, sizeof(r->top0), "%.*s", (int)v[i].key_lens[0],
					 v[i].keys[0]);
				r->top0_count = v[i].ivals[0];
			}
			r->v[j] = (double)v[i].n;
		} else
			r->v[j] = (double)v[i].i;
	}
	r->late = v[late].i;
	r->partial = v[floe_aggtable_partial_col(s->t)].i != 0;
	size_t sk = floe_aggtable_first_sketch(s->t);
	for (size_t i = sk, j = 0; i < ncols && j < 2; i++, j++)
		r->sketch_len[j] = v[i].is_null ? 0 : v[i].len;
	return 0;
}

struct fixture {
	struct floe_config *cfg;
	struct floe_alloc a;
	struct floe_aggregator *g;
	struct sink sink;
};

static void setup(struct fixture *f, const char *yaml)
{
	struct floe_err err = {0};
	memset(f, 0, sizeof(*f));
	int rc = floe_config_parse(NULL, "t.yaml", yaml, strlen(yaml), "host-1", &f->cfg, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	floe_alloc_init(&f->a, 0);
	rc = floe_agg_new(&f->a, &f->cfg->aggs[0], NULL, &f->g, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	f->sink.t = floe_agg_table(f->g);
}

static void teardown(struct fixture *f)
{
	floe_agg_free(f->g);
	assert_int_equal(f->a.used, 0);
	floe_config_free(f->cfg);
}

/* One event at ts seconds, read at now seconds (the clock then), with attributes k and v
 * (v may be NULL). */
static void add_read_at(struct fixture *f, double ts, double now, const char *k, const char *v)
{
	const char *keys[2] = {"k", "v"}, *vals[2] = {k, v};
	size_t klens[2] = {1, 1}, vlens[2] = {k ? strlen(k) : 0, v ? strlen(v) : 0};
	struct floe_record r = {.ts = (int64_t)(ts * SEC),
				.received_at = (int64_t)(now * SEC),
				.host = {"h", 1},
				.message = {"m", 1},
				.nattrs = v ? 2 : 1,
				.attr_keys = keys,
				.attr_key_lens = klens,
				.attr_vals = vals,
				.attr_val_lens = vlens};
	assert_int_equal(floe_agg_add(f->g, &r, collect, &f->sink), 0);
}

/* One event at ts seconds, read then. */
static void add(struct fixture *f, double ts, const char *k, const char *v)
{
	add_read_at(f, ts, ts, k, v);
}

static const struct row *find(const struct sink *s, int64_t start_s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->rows[i].start == start_s * SEC && strcmp(s->rows[i].key, key) == 0)
			return &s->rows[i];
	print_error("no row for window %lld key %s\n", (long long)start_s, key);
	fail();
	return NULL;
}

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

/* An image as one buffer (the runner writes the pieces to a file). */
struct image {
	uint8_t *p;
	size_t len, off;
};

static int write_image(void *ctx, const void *p, size_t n)
{
	struct image *im = ctx;
	uint8_t *q = realloc(im->p, im->len + n);
	assert_non_null(q);
	memcpy(q + im->len, p, n);
	im->p = q;
	im->len += n;
	return 0;
}

static void save_image(struct fixture *f, uint64_t tag, struct image *im)
{
	memset(im, 0, sizeof(*im));
	assert_int_equal(floe_agg_save(f->g, tag, write_image, im), 0);
}

static int read_image(void *ctx, void *p, size_t n)
{
	struct image *im = ctx;
	if (n > im->len - im->off)
		return FLOE_ECORRUPT;
	memcpy(p, im->p + im->off, n);
	im->off += n;
	return 0;
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

/* Adds n events of key k in [t, t + 50) s, with values spread evenly in log over 9
 * decades (1e-3 .. 1e6), each a distinct text; sorted gets them in order. */
static void add_spread(struct fixture *f, double t, const char *k, int n, double *sorted)
{
	char v[32];
	for (int i = 0; i < n; i++) {
		double x = pow(10.0, -3.0 + 9.0 * i / (n > 1 ? n - 1 : 1));
		snprintf(v, sizeof(v), "%.17g", x);
		sorted[i] = strtod(v, NULL);
		add(f, t + 50.0 * i / n, k, v);
	}
}

/* Groups of 1, 2, 100 and 10,000 events with values over 9 decades in one window of the
 * shared pool (max_groups 8: an eighth of each largest form per group, and one of each,
 * 55 KiB): distinct is exact below 256 and within 2 % above, every quantile within the
 * accuracy, nothing coarse. A window whose three groups each want a dense HLL and a
 * full DDSketch window (in ascending order, so each window also outgrew three smaller
 * ones: 88 KiB in all) finds the pool short: the sketches that find it empty go coarse,
 * each counted once, and keep what coarse promises (an HLL at p = 10 within its wider
 * error, a DDSketch's high quantiles within the accuracy). */
static void test_pool_shared(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 1m, group_by: [k], max_groups: 8, "
		  "metrics: [count, {distinct: v}, {quantiles: v, q: [0.01, 0.5, 0.99]}]}]\n");
	static double sorted[4][10000];
	static const int ns[] = {1, 2, 100, 10000};
	static const char *const keys[] = {"g1", "g2", "g3", "g4"};
	static const double qv[] = {0.01, 0.5, 0.99};
	for (int g = 0; g < 4; g++)
		add_spread(&f, 1, keys[g], ns[g], sorted[g]);
	add(&f, 200, "z", "1"); /* closes [0, 60) */
	assert_int_equal(f.sink.n, 4);
	for (int g = 0; g < 4; g++) {
		const struct row *r = find(&f.sink, 0, keys[g]);
		assert_true(r->v[0] == ns[g]);
		if (ns[g] < 256)
			assert_true(r->v[1] == ns[g]);
		else
			assert_true(fabs(r->v[1] / ns[g] - 1) <= 0.02);
		for (int q = 0; q < 3; q++) {
			double want = sorted[g][(size_t)(qv[q] * (ns[g] - 1))];
			if (fabs(r->v[2 + q] / want - 1) > 0.01 + 1e-9)
				fail_msg("%s q%.2f: %g, want %g", keys[g], qv[q], r->v[2 + q], want);
		}
	}
	assert_int_equal(floe_agg_stats(f.g)->coarse, 0);
	for (int g = 0; g < 3; g++)
		add_spread(&f, 240, keys[g], 10000, sorted[g]);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	uint64_t coarse = floe_agg_stats(f.g)->coarse, hll_coarse = 0;
	assert_true(coarse >= 1 && coarse <= 6);
	for (int g = 0; g < 3; g++) {
		const struct row *r = find(&f.sink, 240, keys[g]);
		assert_true(r->v[0] == 10000);
		bool c = r->sketch_len[0] == 40 + 1024;
		hll_coarse += c;
		assert_true(c || r->sketch_len[0] == 40 + 16384);
		assert_true(fabs(r->v[1] / 10000 - 1) <= (c ? 0.1 : 0.02));
		double want = sorted[g][(size_t)(0.99 * 9999)];
		assert_true(fabs(r->v[4] / want - 1) <= 0.01 + 1e-9);
	}
	assert_true(hll_coarse >= 1 && hll_coarse <= coarse);
	teardown(&f);
}

#define BUSY_KEYS 60
#define BUSY_N 1000

/* Every group of a full window busy, as bench_aggregate's 1,000 keys: BUSY_KEYS groups
 * (max_groups) of BUSY_N distinct values each over 5 decades, the groups' events
 * interleaved so that all their sketches grow at once. Each group then wants a coupon set,
 * dense registers and DDSketch windows of about 30 KiB, ten times its share of the
 * reserved pool. Fills sorted[k] with group k's values (ascending); returns nothing, the
 * window stays open. */
static void add_busy(struct fixture *f, double sorted[][BUSY_N])
{
	char k[8], v[32];
	for (int i = 0; i < BUSY_N; i++)
		for (int g = 0; g < BUSY_KEYS; g++) {
			double x = pow(10.0, -2.0 + 5.0 * i / (BUSY_N - 1)) * (1.0 + g / 64.0);
			snprintf(k, sizeof(k), "b%d", g);
			snprintf(v, sizeof(v), "%.17g", x);
			sorted[g][i] = strtod(v, NULL);
			add(f, 1 + 50.0 * i / BUSY_N, k, v);
		}
}

/* Busy group g's row of the window [0, 60), with its exact count checked. */
static const struct row *busy_row(const struct fixture *f, int g)
{
	char k[8];
	snprintf(k, sizeof(k), "b%d", g);
	const struct row *r = find(&f->sink, 0, k);
	assert_true(r->v[0] == BUSY_N);
	return r;
}

#define BUSY_YAML                                                                          \
	"aggregations: [{name: a, window: 1m, group_by: [k], max_groups: 60, "             \
	"metrics: [count, {distinct: v}, {quantiles: v, q: [0.01, 0.5, 0.99]}]}]\n"

/* With room to grow (a ceiling of 8 MiB), the busy window's pool grows in chunks and no
 * sketch goes coarse: distinct within 2 % (exact while in a set), every quantile within
 * the 1 % accuracy, the low ones too. After the window closes its chunks are given back:
 * the pool's gauges are 0 and the allocator holds what it held before the first event. */
static void test_pool_grows(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, BUSY_YAML);
	floe_agg_set_growth(f.g, 8u << 20);
	size_t base = floe_alloc_used(&f.a);
	static double sorted[BUSY_KEYS][BUSY_N];
	static const double qv[] = {0.01, 0.5, 0.99};
	add_busy(&f, sorted);
	const struct floe_agg_stats *st = floe_agg_stats(f.g);
	print_message("busy window: %llu bytes in the pools, %llu of them grown, %llu coarse\n",
		      (unsigned long long)st->pool_bytes, (unsigned long long)st->pool_grown,
		      (unsigned long long)st->coarse);
	assert_true(st->pool_grown > 0 && st->pool_grown <= 8u << 20);
	assert_true(st->pool_bytes > st->pool_grown / 2);
	assert_true(floe_alloc_used(&f.a) >= base + st->pool_grown);
	add(&f, 200, "z", "1"); /* closes [0, 60) */
	assert_int_equal(f.sink.n, BUSY_KEYS);
	for (int g = 0; g < BUSY_KEYS; g++) {
		const struct row *r = busy_row(&f, g);
		if (fabs(r->v[1] / BUSY_N - 1) > 0.02)
			fail_msg("b%d distinct %g", g, r->v[1]);
		for (int q = 0; q < 3; q++) {
			double want = sorted[g][(size_t)(qv[q] * (BUSY_N - 1))];
			if (fabs(r->v[2 + q] / want - 1) > 0.01 + 1e-9)
				fail_msg("b%d q%.2f: %g, want %g", g, qv[q], r->v[2 + q], want);
		}
	}
	assert_int_equal(st->coarse, 0);
	/* The window of "z" is open, in its reserved part: nothing grown is held. */
	assert_int_equal(st->pool_grown, 0);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(st->pool_bytes, 0);
	assert_int_equal(floe_alloc_used(&f.a), base);
	teardown(&f);
}

/* An image of the busy window, its sketches grown into chunks, restores into an
 * aggregator that may grow as much: the same rows, nothing coarse, and the restored
 * window's chunks given back when it closes. */
static void test_image_grown(void **state)
{
	(void)state;
	struct fixture f, g;
	setup(&f, BUSY_YAML);
	setup(&g, BUSY_YAML);
	floe_agg_set_growth(f.g, 8u << 20);
	floe_agg_set_growth(g.g, 8u << 20);
	size_t base = floe_alloc_used(&g.a);
	static double sorted[BUSY_KEYS][BUSY_N];
	add_busy(&f, sorted);
	struct image im;
	save_image(&f, 3, &im);
	uint64_t tag = 0;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), 0);
	free(im.p);
	assert_true(floe_agg_stats(g.g)->pool_grown > 0);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
	assert_int_equal(g.sink.n, BUSY_KEYS);
	assert_memory_equal(f.sink.rows, g.sink.rows, f.sink.n * sizeof(struct row));
	assert_int_equal(floe_agg_stats(g.g)->coarse, 0);
	assert_int_equal(floe_agg_stats(g.g)->pool_grown, 0);
	assert_int_equal(floe_alloc_used(&g.a), base);
	teardown(&f);
	teardown(&g);
}

/* The same window where the pools cannot grow enough: with a ceiling of 64 KiB, and with
 * a ceiling of 8 MiB but an allocator that refuses past 64 KiB more. Either way the
 * sketches that find no room go coarse, each counted once, every row is there with its
 * exact count and its high quantile within the accuracy, and nothing grown is held once
 * the window is closed. */
static void busy_short(bool by_allocator)
{
	struct fixture f;
	setup(&f, BUSY_YAML);
	size_t base = floe_alloc_used(&f.a);
	floe_agg_set_growth(f.g, by_allocator ? 8u << 20 : 64u << 10);
	if (by_allocator)
		f.a.limit = base + (64u << 10);
	static double sorted[BUSY_KEYS][BUSY_N];
	add_busy(&f, sorted);
	const struct floe_agg_stats *st = floe_agg_stats(f.g);
	print_message("%s: %llu bytes grown, %llu of %d sketches coarse\n",
		      by_allocator ? "allocator refuses" : "64 KiB ceiling",
		      (unsigned long long)st->pool_grown, (unsigned long long)st->coarse,
		      2 * BUSY_KEYS);
	assert_true(st->pool_grown <= 64u << 10);
	assert_true(st->coarse > 0 && st->coarse <= 2 * BUSY_KEYS);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(f.sink.n, BUSY_KEYS);
	for (int g = 0; g < BUSY_KEYS; g++) {
		const struct row *r = busy_row(&f, g);
		double want = sorted[g][(size_t)(0.99 * (BUSY_N - 1))];
		assert_true(fabs(r->v[4] / want - 1) <= 0.01 + 1e-9);
	}
	assert_int_equal(st->pool_grown, 0);
	assert_int_equal(st->pool_bytes, 0);
	assert_int_equal(floe_alloc_used(&f.a), base);
	f.a.limit = 0;
	teardown(&f);
}

static void test_pool_ceiling(void **state)
{
	(void)state;
	busy_short(false);
}

static void test_pool_alloc_refuses(void **state)
{
	(void)state;
	busy_short(true);
}

/* An image of a window whose sketches took from the pool (a dense HLL of 2,000 after its
 * coupon set, DDSketch windows grown over 9 decades) or found it short (coarse HLLs,
 * folded DDSketches) is restored to the same rows, and the restored sketches go on
 * taking events as the original's do. */
static void test_image_pooled(void **state)
{
	(void)state;
	const char *y = "aggregations: [{name: a, window: 1m, group_by: [k], max_groups: 2, "
			"metrics: [count, {distinct: v}, {quantiles: v, q: [0.01, 0.5, 0.99]}]}]\n";
	struct fixture f, g;
	setup(&f, y);
	setup(&g, y);
	static double sorted[10000];
	add_spread(&f, 1, "b", 2000, sorted); /* a set, then registers: 20 KiB of 36 */
	add_spread(&f, 1, "a", 500, sorted);
	add_spread(&f, 1, "c", 3000, sorted); /* the overflow group */
	struct image im;
	save_image(&f, 7, &im);
	uint64_t tag = 0;
	assert_int_equal(floe_agg_load(g.g, read_image, &im, &tag, NULL), 0);
	assert_int_equal(tag, 7);
	/* 30 more in [0, 60), the rest in the next window */
	add_spread(&f, 55, "a", 300, sorted);
	add_spread(&g, 55, "a", 300, sorted);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
	assert_int_equal(f.sink.n, 4);
	assert_int_equal(g.sink.n, 4);
	assert_memory_equal(f.sink.rows, g.sink.rows, f.sink.n * sizeof(struct row));
	/* b: a dense HLL and full DDSketch windows from the pool; a and the overflow group
	 * found it short: HLLs at p = 10, DDSketches folded, 4 sketches counted; the next
	 * window's a, from its own pool: exact in a set of 270 coupons. */
	const struct row *b = find(&g.sink, 0, "b");
	assert_true(b->sketch_len[0] == 40 + 16384 && fabs(b->v[1] / 2000 - 1) <= 0.02);
	assert_true(find(&g.sink, 0, "a")->sketch_len[0] == 40 + 1024);
	assert_true(find(&g.sink, 0, FLOE_AGG_OVERFLOW)->sketch_len[0] == 40 + 1024);
	const struct row *a = find(&g.sink, 60, "a");
	assert_true(a->v[0] == 270 && a->v[1] == 270 && a->sketch_len[0] == 12 + 4 * 270);
	assert_int_equal(floe_agg_stats(f.g)->coarse, 4);
	assert_int_equal(floe_agg_stats(f.g)->coarse, floe_agg_stats(g.g)->coarse);
	free(im.p);
	teardown(&g);
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
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_pool_shared),
	    cmocka_unit_test(test_pool_grows),
	    cmocka_unit_test(test_pool_ceiling),
	    cmocka_unit_test(test_pool_alloc_refuses),
	    cmocka_unit_test(test_image_grown),
	    cmocka_unit_test(test_plan),
	    cmocka_unit_test(test_image),
	    cmocka_unit_test(test_image_pooled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
