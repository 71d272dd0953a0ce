/* Unit tests for agent/agg/spacesaving: a hand-checked stream, SpaceSaving's guarantees
 * on Zipf and adversarially ordered streams across seeds, key truncation, merge against
 * the union's exact frequencies, the checkpoint image and hostile images, and no
 * allocation on the add/merge/top/serialise/decode paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>
#include <math.h>

#include "agent/agg/agg_math.h"
#include "agent/agg/spacesaving.h"
#include "formats/base/error.h"
#include "agg_nomalloc.h"

/* floe_ss_decode with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int ss_decode(struct floe_ss *s, const void *p, size_t len, size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_ss_decode(s, p, len, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_true(e.msg[0] != '\0');
		if (off)
			*off = e.offset;
	}
	return rc;
}

#define ITEMS 10000
static uint64_t mem_a[65536], mem_b[65536];
static uint64_t freq_a[ITEMS];
static double cdf[ITEMS];
static uint8_t img[1 << 16], img2[1 << 16];
static struct floe_ss_item top[512], top2[512];

static uint64_t rng_state;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static void init(struct floe_ss *s, unsigned k, unsigned kb, uint64_t *mem)
{
	assert_int_equal(floe_ss_init(s, k, kb, mem, sizeof(mem_a)), 0);
}

static size_t key_of(unsigned item, char *buf)
{
	return (size_t)snprintf(buf, 32, "item-%u", item);
}

static void add_item(struct floe_ss *s, unsigned item)
{
	char buf[32];
	floe_ss_add(s, buf, key_of(item, buf));
}

/* Zipf(1.1) over ITEMS items. */
static void zipf_init(void)
{
	double sum = 0;
	for (unsigned i = 0; i < ITEMS; i++) {
		sum += exp(-1.1 * log(i + 1.0));
		cdf[i] = sum;
	}
	for (unsigned i = 0; i < ITEMS; i++)
		cdf[i] /= sum;
}

static unsigned zipf(void)
{
	double u = (double)(rng() >> 11) * (1.0 / 9007199254740992.0);
	unsigned lo = 0, hi = ITEMS - 1;
	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;
		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Checks SpaceSaving's guarantees of s against the exact frequencies f of n items. */
static void check_guarantees(const struct floe_ss *s, const uint64_t *f, uint64_t n)
{
	uint64_t m = floe_ss_min(s);
	assert_true(m * s->k <= n);
	char buf[32];
	unsigned present = 0;
	for (unsigned i = 0; i < ITEMS; i++) {
		size_t len = key_of(i, buf);
		uint64_t est = floe_ss_estimate(s, buf, len);
		assert_true(est >= f[i]);
		if (f[i] > n / s->k || f[i] > m) {
			/* Must hold a counter: find it among the top items. */
			size_t cnt = floe_ss_top(s, top, 512);
			bool found = false;
			for (size_t j = 0; j < cnt && !found; j++)
				if (top[j].len == len && !memcmp(top[j].key, buf, len)) {
					found = true;
					assert_true(top[j].count - top[j].err <= f[i]);
					assert_true(top[j].err <= m);
				}
			if (!found)
				fail_msg("item %u with frequency %llu (N/k %llu, min %llu) missing",
					 i, (unsigned long long)f[i],
					 (unsigned long long)(n / s->k), (unsigned long long)m);
			present++;
		}
	}
	(void)present;
}

static void test_init_bounds(void **state)
{
	struct floe_ss s;
	assert_int_equal(floe_ss_bytes(0, 64), 0);
	assert_int_equal(floe_ss_bytes(65537, 64), 0);
	assert_int_equal(floe_ss_bytes(10, 0), 0);
	assert_int_equal(floe_ss_bytes(10, 4097), 0);
	size_t need = floe_ss_bytes(10, 64);
	printf("spacesaving k=10 key 64: %zu bytes\n", need);
	assert_int_equal(floe_ss_init(&s, 10, 64, mem_a, need - 1), FLOE_ELIMIT);
	assert_int_equal(floe_ss_init(&s, 10, 64, (char *)mem_a + 4, need), FLOE_EINVAL);
	assert_int_equal(floe_ss_init(&s, 0, 64, mem_a, need), FLOE_EINVAL);
	assert_int_equal(floe_ss_init(&s, 10, 64, mem_a, need), 0);
	assert_int_equal(floe_ss_top(&s, top, 10), 0);
	assert_int_equal(floe_ss_estimate(&s, "x", 1), 0);
}

static void test_known_stream(void **state)
{
	/* k = 2 over a a b c: b (count 1) is the smallest when c arrives, so c takes its
	 * counter at count 2 with error 1. */
	struct floe_ss s;
	init(&s, 2, 8, mem_a);
	const char *stream[] = {"a", "a", "b", "c"};
	for (int i = 0; i < 4; i++)
		floe_ss_add(&s, stream[i], 1);
	assert_int_equal(floe_ss_top(&s, top, 8), 2);
	assert_true(top[0].len == 1 && top[0].key[0] == 'a' && top[0].count == 2 &&
		    top[0].err == 0);
	assert_true(top[1].len == 1 && top[1].key[0] == 'c' && top[1].count == 2 &&
		    top[1].err == 1);
	assert_int_equal(floe_ss_estimate(&s, "b", 1), 2); /* bounded by the minimum */
	assert_int_equal(s.total, 4);
	/* Only the best cap come out, in order. */
	assert_int_equal(floe_ss_top(&s, top, 1), 1);
	assert_true(top[0].key[0] == 'a');
	floe_ss_reset(&s);
	assert_int_equal(floe_ss_top(&s, top, 8), 0);
}

static void test_guarantees(void **state)
{
	zipf_init();
	const unsigned ks[] = {10, 50, 200};
	for (size_t ki = 0; ki < 3; ki++) {
		for (uint64_t seed = 1; seed <= 20; seed++) {
			struct floe_ss s;
			init(&s, ks[ki], 64, mem_a);
			memset(freq_a, 0, sizeof(freq_a));
			rng_state = seed;
			const uint64_t n = 50000;
			for (uint64_t i = 0; i < n; i++) {
				unsigned it = zipf();
				freq_a[it]++;
				add_item(&s, it);
			}
			check_guarantees(&s, freq_a, n);
			uint64_t sum = 0;
			size_t cnt = floe_ss_top(&s, top, 512);
			for (size_t j = 0; j < cnt; j++)
				sum += top[j].count;
			assert_int_equal(sum, n); /* every add raised exactly one counter */
		}
	}
	/* Adversarial order: 5000 distinct keys once each, then a heavy item that arrives
	 * last; it must still be found, with its count overestimated by at most N/k. */
	struct floe_ss s;
	init(&s, 10, 64, mem_a);
	memset(freq_a, 0, sizeof(freq_a));
	for (unsigned i = 1; i <= 5000; i++) {
		freq_a[i]++;
		add_item(&s, i);
	}
	for (int i = 0; i < 1000; i++) {
		freq_a[0]++;
		add_item(&s, 0);
	}
	check_guarantees(&s, freq_a, 6000);
	assert_int_equal(floe_ss_top(&s, top, 1), 1);
	assert_true(top[0].len == 6 && !memcmp(top[0].key, "item-0", 6));
	assert_true(top[0].count - 1000 <= 600);
}

static void test_truncation(void **state)
{
	struct floe_ss s;
	init(&s, 4, 16, mem_a);
	char a[40], b[40];
	memset(a, 'x', sizeof(a));
	memcpy(b, a, sizeof(b));
	b[30] = 'y'; /* differs only past the 16 bytes kept */
	floe_ss_add(&s, a, sizeof(a));
	floe_ss_add(&s, b, sizeof(b));
	floe_ss_add(&s, a, 16); /* exactly 16 bytes: the same key, not truncated */
	assert_int_equal(s.truncated, 2);
	assert_int_equal(floe_ss_top(&s, top, 4), 1);
	assert_true(top[0].len == 16 && top[0].count == 3 && top[0].truncated);
	assert_int_equal(floe_ss_estimate(&s, b, sizeof(b)), 3);
	/* The empty key is a key like any other. */
	floe_ss_add(&s, NULL, 0);
	floe_ss_add(&s, "", 0);
	assert_int_equal(floe_ss_estimate(&s, NULL, 0), 2);
}

static void test_merge(void **state)
{
	zipf_init();
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct floe_ss a, b;
		init(&a, 20, 64, mem_a);
		init(&b, 20, 64, mem_b);
		memset(freq_a, 0, sizeof(freq_a));
		rng_state = seed * 31;
		/* Two skewed streams with different heavy items (b's ranks are shifted). */
		uint64_t na = 30000, nb = 20000 + seed * 500;
		for (uint64_t i = 0; i < na; i++) {
			unsigned it = zipf();
			freq_a[it]++;
			add_item(&a, it);
		}
		for (uint64_t i = 0; i < nb; i++) {
			unsigned it = (zipf() + 7) % ITEMS;
			freq_a[it]++;
			add_item(&b, it);
		}
		assert_int_equal(floe_ss_merge(&a, &b), 0);
		assert_int_equal(a.total, na + nb);
		check_guarantees(&a, freq_a, na + nb);
	}
	struct floe_ss a, b;
	init(&a, 20, 64, mem_a);
	init(&b, 21, 64, mem_b);
	assert_int_equal(floe_ss_merge(&a, &b), FLOE_EINVAL);
	init(&b, 20, 32, mem_b);
	assert_int_equal(floe_ss_merge(&a, &b), FLOE_EINVAL);
}

static void test_image(void **state)
{
	struct floe_ss s, r;
	init(&s, 10, 64, mem_a);
	init(&r, 10, 64, mem_b);
	zipf_init();
	rng_state = 4;
	for (int i = 0; i < 20000; i++)
		add_item(&s, zipf());
	char longkey[100];
	memset(longkey, 'z', sizeof(longkey));
	for (int i = 0; i < 5000; i++)
		floe_ss_add(&s, longkey, sizeof(longkey));
	size_t n = floe_ss_serialized_size(&s), off = 0;
	assert_int_equal(floe_ss_serialize(&s, img, n - 1), FLOE_ELIMIT);
	assert_int_equal(floe_ss_serialize(&s, img, n), 0);
	assert_memory_equal(img, "FSS\x01\x0a\0\0\0\x40\0\0\0\x0a\0\0\0", 16);
	assert_int_equal(ss_decode(&r, img, n, &off), 0);
	assert_int_equal(r.total, s.total);
	assert_int_equal(r.truncated, 5000);
	size_t c1 = floe_ss_top(&s, top, 16), c2 = floe_ss_top(&r, top2, 16);
	assert_int_equal(c1, c2);
	for (size_t i = 0; i < c1; i++) {
		assert_true(top[i].count == top2[i].count && top[i].err == top2[i].err);
		assert_true(top[i].len == top2[i].len &&
			    !memcmp(top[i].key, top2[i].key, top[i].len));
		assert_true(top[i].truncated == top2[i].truncated);
	}
	assert_int_equal(floe_ss_serialized_size(&r), n);
	assert_int_equal(floe_ss_serialize(&r, img2, n), 0);
	assert_memory_equal(img, img2, n);
	/* The decoded sketch goes on counting as the original would. */
	add_item(&s, 123456);
	add_item(&r, 123456);
	assert_int_equal(floe_ss_min(&s), floe_ss_min(&r));
}

static void expect(const uint8_t *b, size_t len, int code, size_t at)
{
	struct floe_ss r;
	init(&r, 3, 8, mem_b);
	size_t off = (size_t)-1;
	int rc = ss_decode(&r, b, len, &off);
	if (rc != code || off != at)
		fail_msg("len %zu: got %d at %zu, want %d at %zu", len, rc, off, code, at);
	if (code)
		assert_int_equal(r.n, 0); /* a failed decode leaves an empty sketch */
}

static void test_hostile_images(void **state)
{
	struct floe_ss s;
	init(&s, 3, 8, mem_a);
	floe_ss_add(&s, "alpha", 5);
	floe_ss_add(&s, "beta", 4);
	floe_ss_add(&s, "beta", 4);
	size_t n = floe_ss_serialized_size(&s);
	assert_int_equal(n, 32 + 19 + 5 + 19 + 4);
	assert_int_equal(floe_ss_serialize(&s, img, n), 0);
	expect(img, n, 0, (size_t)-1);
	for (size_t len = 0; len < n; len++)
		expect(img, len, FLOE_EPARSE, len);
	static uint8_t bad[256];
	struct {
		size_t at;
		uint8_t v;
		int code;
		size_t err_at;
	} cases[] = {
	    {0, 'G', FLOE_EFORMAT, 0}, {3, 2, FLOE_EUNSUPPORTED, 3},
	    {4, 4, FLOE_EFORMAT, 4},   {8, 9, FLOE_EFORMAT, 8},
	    {12, 4, FLOE_EFORMAT, 12}, {32, 0, FLOE_EFORMAT, 32}, /* count 0 */
	    {40, 9, FLOE_EFORMAT, 40},				  /* err above count */
	    {48, 9, FLOE_EFORMAT, 48},				  /* key longer than the slot */
	    {50, 2, FLOE_EFORMAT, 50},				  /* unknown flag */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memcpy(bad, img, n);
		bad[cases[i].at] = cases[i].v;
		expect(bad, n, cases[i].code, cases[i].err_at);
	}
	/* The same key twice. */
	memcpy(bad, img, n);
	bad[48] = 4;
	memcpy(bad + 51, "beta", 4);
	memmove(bad + 55, img + 56, n - 56);
	expect(bad, n - 1, FLOE_EFORMAT, 55);
	/* A trailing byte. */
	memcpy(bad, img, n);
	bad[n] = 0;
	expect(bad, n + 1, FLOE_EFORMAT, n);
}

static void test_no_allocation(void **state)
{
	struct floe_ss a, b;
	init(&a, 10, 64, mem_a);
	init(&b, 10, 64, mem_b);
	zipf_init();
	rng_state = 6;
	size_t off;
	agg_nomalloc_arm();
	for (int i = 0; i < 100000; i++)
		add_item(i & 1 ? &a : &b, zipf());
	int rc = floe_ss_merge(&a, &b);
	size_t cnt = floe_ss_top(&a, top, 10);
	rc |= floe_ss_serialize(&a, img, sizeof(img));
	rc |= ss_decode(&b, img, floe_ss_serialized_size(&a), &off);
	floe_ss_reset(&a);
	assert_int_equal(agg_nomalloc_disarm(), 0);
	assert_int_equal(rc, 0);
	assert_int_equal(cnt, 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_init_bounds),	   cmocka_unit_test(test_known_stream),
	    cmocka_unit_test(test_guarantees),	   cmocka_unit_test(test_truncation),
	    cmocka_unit_test(test_merge),	   cmocka_unit_test(test_image),
	    cmocka_unit_test(test_hostile_images), cmocka_unit_test(test_no_allocation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
