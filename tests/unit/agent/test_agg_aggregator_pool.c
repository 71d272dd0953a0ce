/* The aggregator's sketches in their window's shared pool: groups of every size within
 * the accuracy, the pool short (sketches gone coarse, each counted once), grown in chunks
 * under a ceiling or refused by the allocator, and images of windows whose sketches took
 * from the pool or grew, restored exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/aggregator.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include "agg_lib.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
				fail_msg("%s q%.2f: %g, want %g", keys[g], qv[q], r->v[2 + q],
					 want);
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

#define BUSY_YAML                                                                                  \
	"aggregations: [{name: a, window: 1m, group_by: [k], max_groups: 60, "                     \
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pool_shared),	 cmocka_unit_test(test_pool_grows),
	    cmocka_unit_test(test_pool_ceiling), cmocka_unit_test(test_pool_alloc_refuses),
	    cmocka_unit_test(test_image_grown),	 cmocka_unit_test(test_image_pooled),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
