/* The open windows' image read by another build (aggregator_state.c): whatever the other
 * build's version or layout, the preamble says how many open windows are lost (none
 * after a flush, as at a clean stop) and gives the image's tag; an image of version 4,
 * the last before the preamble, is counted from where it held its count. The aggregator
 * is left new each time. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/aggregator.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include "agg_lib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CFG                                                                                        \
	"aggregations: [{name: a, window: 10s, slide: 5s, allowed_lateness: 5s, group_by: [k], "   \
	"max_groups: 3, metrics: [count, {sum: v}, {distinct: v, precision: 4}, "                  \
	"{quantiles: v, q: [0.5]}, {top_k: v, k: 2}]}]\n"

static void feed(struct fixture *f, int from, int to)
{
	static const char *keys[] = {"a", "b", "c", "d", "e"};
	char v[16];
	for (int i = from; i < to; i++) {
		snprintf(v, sizeof(v), "%d", i % 37);
		add(f, i * 0.1, keys[i % 5], v);
	}
}

static uint32_t get32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The image as a later build whose header grew writes it: its version one more and 8
 * bytes more after the 24-byte preamble. */
static void as_later_build(struct image *im)
{
	put32(im->p + 4, get32(im->p + 4) + 1);
	uint8_t *q = realloc(im->p, im->len + 8);
	assert_non_null(q);
	memmove(q + 32, q + 24, im->len - 24);
	memset(q + 24, 0xa5, 8);
	im->p = q;
	im->len += 8;
	im->off = 0;
}

/* Loads im into a new aggregator of CFG: the code, the windows counted lost and the tag
 * (0 when not set); the aggregator must be left new. */
static int load_new(struct image *im, uint32_t *lost, uint64_t *tag, char *msg, size_t cap)
{
	struct fixture g;
	struct floe_err err = {0};
	setup(&g, CFG);
	*tag = 0;
	im->off = 0;
	int rc = floe_agg_load(g.g, read_image, im, tag, &err);
	*lost = floe_agg_load_lost(g.g);
	snprintf(msg, cap, "%.200s", err.msg);
	if (rc) {
		assert_int_equal(floe_agg_flush(g.g, collect, &g.sink), 0);
		assert_int_equal(g.sink.n, 0);
		assert_int_equal(floe_agg_stats(g.g)->events, 0);
	}
	teardown(&g);
	return rc;
}

/* Three windows open (with the overflow group): a later build counts the three lost and
 * says another build wrote the image; it gets the tag, which tells its caller which
 * spool entries the image covers. */
static void test_later_build_open(void **state)
{
	(void)state;
	struct fixture f;
	struct image im;
	uint32_t lost;
	uint64_t tag;
	char msg[256];
	setup(&f, CFG);
	feed(&f, 0, 300);
	save_image(&f, 42, &im);
	assert_int_equal(get32(im.p + 8), 3);
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), 0); /* as written */
	assert_int_equal(lost, 0);
	as_later_build(&im);
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_EFORMAT);
	assert_int_equal(lost, 3);
	assert_int_equal(tag, 42);
	assert_non_null(strstr(msg, "another build of floe"));
	free(im.p);
	teardown(&f);
}

/* After a flush (a clean stop writes the open windows as partial rows), an image no build
 * but its own can restore loses nothing, and is not counted. */
static void test_later_build_flushed(void **state)
{
	(void)state;
	struct fixture f;
	struct image im;
	uint32_t lost;
	uint64_t tag;
	char msg[256];
	setup(&f, CFG);
	feed(&f, 0, 300);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.sink), 0);
	save_image(&f, 9, &im);
	as_later_build(&im);
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_EFORMAT);
	assert_int_equal(lost, 0);
	assert_int_equal(tag, 9);
	free(im.p);
	teardown(&f);
}

/* The same version by a build of another memory layout (a saved struct of another
 * size): refused as of another build, the open windows counted. A count in the preamble
 * beyond what the aggregation can hold open counts at most that. */
static void test_other_layout(void **state)
{
	(void)state;
	struct fixture f;
	struct image im;
	uint32_t lost;
	uint64_t tag;
	char msg[256];
	setup(&f, CFG);
	feed(&f, 0, 300);
	save_image(&f, 5, &im);
	im.p[24] ^= 1; /* the layout's fingerprint, right after the preamble */
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_EFORMAT);
	assert_int_equal(lost, 3);
	assert_int_equal(tag, 5);
	assert_non_null(strstr(msg, "another memory layout"));
	put32(im.p + 8, UINT32_MAX);
	as_later_build(&im);
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_EFORMAT);
	assert_true(lost >= 3 && lost < 100);
	free(im.p);
	teardown(&f);
}

/* An image of version 4 (native: magic, version, fingerprint, tag at 16, the windows
 * open at 172 of a 176-byte header): counted and tagged from there; cut short, it
 * fails to read and counts one. Not an image at all: one. */
static void test_version4(void **state)
{
	(void)state;
	struct image im = {0};
	uint32_t lost, v = 4, nopen = 2;
	uint64_t tag, t4 = 77;
	char msg[256];
	im.len = 176 + 64;
	im.p = calloc(1, im.len);
	assert_non_null(im.p);
	memcpy(im.p, "FAGW", 4);
	memcpy(im.p + 4, &v, 4);
	memcpy(im.p + 16, &t4, 8);
	memcpy(im.p + 172, &nopen, 4);
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_EFORMAT);
	assert_int_equal(lost, 2);
	assert_int_equal(tag, 77);
	assert_non_null(strstr(msg, "earlier build of floe"));
	im.len = 100;
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_ECORRUPT);
	assert_int_equal(lost, 1);
	im.len = 176;
	memcpy(im.p, "NOPE", 4);
	assert_int_equal(load_new(&im, &lost, &tag, msg, sizeof(msg)), FLOE_EFORMAT);
	assert_int_equal(lost, 1);
	free(im.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_later_build_open),
	    cmocka_unit_test(test_later_build_flushed),
	    cmocka_unit_test(test_other_layout),
	    cmocka_unit_test(test_version4),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
