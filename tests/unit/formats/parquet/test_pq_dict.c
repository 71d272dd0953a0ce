/* Tests of formats/parquet/dict: lookups through the entry found last and the one after
 * it (keys in a fixed order, line after line) give the indices a hash lookup gives, a
 * value that is neither is still found or added, a dictionary of one entry adds a
 * second value rather than taking it for the first, and values of every length up to
 * 48 bytes that differ in one byte are told apart; random puts and finds agree with a
 * linear search, for fixed widths also while their entries are sorted (added in
 * rising order) and after a value out of order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/dict.h"

#include <string.h>

static uint32_t put_s(struct floe_pq_dict *d, const char *s, bool want_added)
{
	uint32_t idx = UINT32_MAX;
	bool added = !want_added;
	assert_int_equal(floe_pq_dict_put(d, s, strlen(s), 1 << 20, &idx, &added), 0);
	assert_int_equal(added, want_added);
	const uint8_t *p;
	size_t n;
	floe_pq_dict_entry(d, idx, &p, &n);
	assert_int_equal(n, 4 + strlen(s));
	assert_memory_equal(p + 4, s, strlen(s));
	return idx;
}

static void test_fixed_order(void **state)
{
	(void)state;
	struct floe_pq_dict d;
	floe_pq_dict_init(&d, NULL, 0);
	static const char *const keys[] = {"client", "time", "method", "path", "status", "bytes"};
	for (int round = 0; round < 3; round++)
		for (uint32_t i = 0; i < 6; i++)
			assert_int_equal(put_s(&d, keys[i], round == 0), i);
	/* Out of order: neither the last entry nor the next one. */
	assert_int_equal(put_s(&d, "method", false), 2);
	assert_int_equal(put_s(&d, "client", false), 0);
	assert_int_equal(put_s(&d, "status", false), 4);
	assert_int_equal(put_s(&d, "bytes", false), 5);
	assert_int_equal(put_s(&d, "client", false), 0); /* after the last: the first */
	assert_int_equal(put_s(&d, "agent", true), 6);
	assert_int_equal(put_s(&d, "client", false), 0);
	assert_int_equal(floe_pq_dict_count(&d), 7);
	floe_pq_dict_fini(&d);
}

static void test_one_entry(void **state)
{
	(void)state;
	struct floe_pq_dict d;
	floe_pq_dict_init(&d, NULL, 0);
	assert_int_equal(put_s(&d, "a", true), 0);
	assert_int_equal(put_s(&d, "a", false), 0);
	assert_int_equal(put_s(&d, "b", true), 1);
	assert_int_equal(put_s(&d, "b", false), 1);
	assert_int_equal(put_s(&d, "a", false), 0);
	floe_pq_dict_reset(&d);
	assert_int_equal(put_s(&d, "b", true), 0);
	assert_int_equal(put_s(&d, "c", true), 1);
	floe_pq_dict_fini(&d);

	/* Fixed width: the same rules on 8-byte values. */
	floe_pq_dict_init(&d, NULL, 8);
	uint64_t v[3] = {200, 404, 200};
	uint32_t want[3] = {0, 1, 0};
	for (int round = 0; round < 2; round++) {
		for (int i = 0; i < 3; i++) {
			uint32_t idx;
			bool added;
			assert_int_equal(floe_pq_dict_put(&d, &v[i], 8, 1 << 20, &idx, &added), 0);
			assert_int_equal(idx, want[i]);
			assert_int_equal(added, round == 0 && i < 2);
		}
	}
	assert_int_equal(floe_pq_dict_count(&d), 2);
	floe_pq_dict_fini(&d);
}

/* Values of 0 to 48 bytes, and the same with one byte changed at each offset: the
 * compare by overlapping integers (4 to 32 bytes) and the others tell them apart, and
 * find each again. */
static void test_every_length(void **state)
{
	(void)state;
	struct floe_pq_dict d;
	floe_pq_dict_init(&d, NULL, 0);
	uint8_t v[48];
	uint32_t next = 0;
	for (size_t n = 0; n <= sizeof(v); n++) {
		uint32_t idx;
		bool added;
		memset(v, 'a', sizeof(v));
		assert_int_equal(floe_pq_dict_put(&d, v, n, 1 << 20, &idx, &added), 0);
		assert_true(added);
		assert_int_equal(idx, next++);
		for (size_t at = 0; at < n; at++) {
			memset(v, 'a', sizeof(v));
			v[at] = 'b';
			assert_int_equal(floe_pq_dict_put(&d, v, n, 1 << 20, &idx, &added), 0);
			assert_true(added);
			assert_int_equal(idx, next++);
		}
	}
	/* All again, in the same order: each is found. */
	next = 0;
	for (size_t n = 0; n <= sizeof(v); n++) {
		for (size_t at = 0; at <= n; at++) {
			uint32_t idx;
			bool added;
			memset(v, 'a', sizeof(v));
			if (at > 0)
				v[at - 1] = 'b';
			assert_int_equal(floe_pq_dict_put(&d, v, n, 1 << 20, &idx, &added), 0);
			assert_false(added);
			assert_int_equal(idx, next++);
		}
	}
	floe_pq_dict_fini(&d);
}

/* Random puts and finds over a pool of values whose lengths collide modulo 16, some of
 * one length differing in one byte, give the index a linear search of the values in
 * insertion order gives, whichever way the dictionary finds them (the last entry, the
 * next, the last of its length, the hash table). */
static void test_against_linear_search(void **state)
{
	(void)state;
	char pool[48][40];
	size_t len[48];
	for (int i = 0; i < 48; i++) {
		len[i] = (size_t)(i % 6) * 16 + (size_t)(i / 12); /* 0..83: collide mod 16 */
		if (len[i] > sizeof(pool[i]))
			len[i] = (size_t)i % 40;
		memset(pool[i], 'a' + i / 24, sizeof(pool[i]));
		if (len[i])
			pool[i][(size_t)i % len[i]] = (char)('A' + i % 24);
	}
	for (int round = 0; round < 4; round++) {
		struct floe_pq_dict d;
		floe_pq_dict_init(&d, NULL, 0);
		int order[48], norder = 0;
		uint32_t x = 2463534242u + (uint32_t)round;
		for (int step = 0; step < 5000; step++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			int i = (int)(x % (round < 2 ? 6 : 48)); /* a few values, then many */
			int want = -1;
			for (int k = 0; k < norder; k++) {
				if (len[order[k]] == len[i] && !memcmp(pool[order[k]], pool[i], len[i]))
					want = k; /* the pool has duplicates: the first insertion */
				if (want >= 0)
					break;
			}
			uint32_t idx;
			if (x & 0x100000) {
				bool found = floe_pq_dict_find(&d, pool[i], len[i], &idx);
				assert_int_equal(found, want >= 0);
				if (found)
					assert_int_equal(idx, (uint32_t)want);
				continue;
			}
			bool added;
			assert_int_equal(floe_pq_dict_put(&d, pool[i], len[i], 1 << 20, &idx, &added),
					 0);
			assert_int_equal(added, want < 0);
			if (want < 0)
				order[want = norder++] = i;
			assert_int_equal(idx, (uint32_t)want);
		}
		if (round & 1)
			floe_pq_dict_reset(&d);
		floe_pq_dict_fini(&d);
	}
}

/* The same for 4-byte values, many sharing the low four bits of their first byte (the
 * small key of fixed widths): status codes and their neighbours. */
static void test_fixed_against_linear_search(void **state)
{
	(void)state;
	static const uint32_t pool[] = {200, 216, 232, 301, 304, 320, 404, 420, 500, 502,
					503, 516, 0, 16, 0x10000, 0x1000000};
	enum { NPOOL = sizeof(pool) / sizeof(pool[0]) };
	struct floe_pq_dict d;
	floe_pq_dict_init(&d, NULL, 4);
	uint32_t order[NPOOL], norder = 0, x = 88172645u;
	for (int step = 0; step < 5000; step++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		uint32_t v = pool[x % NPOOL];
		int want = -1;
		for (uint32_t k = 0; k < norder && want < 0; k++)
			want = order[k] == v ? (int)k : -1;
		uint32_t idx;
		if (x & 0x100000) {
			bool found = floe_pq_dict_find(&d, &v, 4, &idx);
			assert_int_equal(found, want >= 0);
			if (found)
				assert_int_equal(idx, (uint32_t)want);
			continue;
		}
		bool added;
		assert_int_equal(floe_pq_dict_put(&d, &v, 4, 1 << 20, &idx, &added), 0);
		assert_int_equal(added, want < 0);
		if (want < 0)
			order[want = (int)norder++] = v;
		assert_int_equal(idx, (uint32_t)want);
	}
	floe_pq_dict_fini(&d);
}

/* 8-byte values mostly rising (a column's times, repeated and in order, starting below
 * zero), so that the dictionary stays sorted and finds by its binary search, until a
 * value out of order puts every entry in the hash table; then the same after a reset
 * (the table from before emptied) and in a fresh dictionary with an early value out of
 * order. Puts and finds of values held, of values between them and beyond them agree
 * with a linear search at every step. */
static void test_sorted_against_linear_search(void **state)
{
	(void)state;
	enum { MAXN = 3000 };
	static int64_t order[MAXN];
	struct floe_pq_dict d;
	floe_pq_dict_init(&d, NULL, 8);
	uint32_t x = 2463534242u;
	for (int round = 0; round < 3; round++) {
		uint32_t norder = 0;
		int64_t t = -50;
		int out_at = round == 0 ? 1500 : round == 1 ? 2500 : 3;
		for (int step = 0; step < 4000; step++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			int64_t v;
			if (step == out_at)
				v = t - 7; /* out of order, new: the dictionary goes hashed */
			else if (x % 4 == 0 && norder)
				v = order[x / 4 % norder]; /* one held, anywhere */
			else if (x % 4 == 1)
				v = t + 1 + 2 * (int64_t)(x >> 28); /* between, beyond */
			else
				v = t += (x >> 8) % 3; /* the next time, or the same */
			int want = -1;
			for (uint32_t k = 0; k < norder && want < 0; k++)
				want = order[k] == v ? (int)k : -1;
			uint32_t idx;
			if (x % 4 == 1 || (x & 0x40000)) {
				bool found = floe_pq_dict_find(&d, &v, 8, &idx);
				assert_int_equal(found, want >= 0);
				if (found)
					assert_int_equal(idx, (uint32_t)want);
				if (x % 4 == 1)
					continue;
			}
			bool added;
			assert_int_equal(floe_pq_dict_put(&d, &v, 8, 1 << 20, &idx, &added), 0);
			assert_int_equal(added, want < 0);
			if (want < 0) {
				assert_true(norder < MAXN);
				order[want = (int)norder++] = v;
			}
			assert_int_equal(idx, (uint32_t)want);
			const uint8_t *p;
			size_t n;
			floe_pq_dict_entry(&d, idx, &p, &n);
			assert_int_equal(n, 8);
			assert_memory_equal(p, &v, 8);
		}
		assert_int_equal(floe_pq_dict_count(&d), norder);
		if (round == 1) {
			floe_pq_dict_fini(&d);
			floe_pq_dict_init(&d, NULL, 8);
		} else {
			floe_pq_dict_reset(&d);
		}
	}
	floe_pq_dict_fini(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fixed_against_linear_search),
	    cmocka_unit_test(test_sorted_against_linear_search),
	    cmocka_unit_test(test_against_linear_search),
	    cmocka_unit_test(test_fixed_order),
	    cmocka_unit_test(test_one_entry),
	    cmocka_unit_test(test_every_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
