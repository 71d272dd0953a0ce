/* Delta encodings, split-block bloom filters and page index structures against bytes
 * computed by hand from Encodings.md, BloomFilter.md and parquet.thrift. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/bloom.h"
#include "formats/parquet/delta.h"
#include "formats/parquet/pageindex.h"

static void expect(const struct floe_buf *b, const uint8_t *want, size_t n)
{
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, want, n);
}

/* PLAIN bytes of n int64 values. */
static void plain64(uint8_t *out, const int64_t *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 8; k++)
			out[8 * i + (size_t)k] = (uint8_t)((uint64_t)v[i] >> (8 * k));
}

/* PLAIN BYTE_ARRAY bytes of n strings; returns the length. */
static size_t plain_strings(uint8_t *out, const char *const *s, size_t n)
{
	size_t at = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t l = (uint32_t)strlen(s[i]);
		for (int k = 0; k < 4; k++)
			out[at++] = (uint8_t)(l >> (8 * k));
		memcpy(out + at, s[i], l);
		at += l;
	}
	return at;
}

static void test_dbp_examples(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	/* 1..5: header (block 128, 4 miniblocks, 5 values, first 1), then one block with
	 * min delta 1 and every miniblock of width 0, so no packed bytes at all. */
	int64_t v1[] = {1, 2, 3, 4, 5};
	uint8_t p[64 * 8];
	plain64(p, v1, 5);
	assert_int_equal(floe_pq_delta_ints(&b, p, 5 * 8, 8), 0);
	static const uint8_t w1[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
	expect(&b, w1, sizeof(w1));
	/* 7,5,3,1,2,3,4,5: deltas -2,-2,-2,1,1,1,1; min -2 (zigzag 3); relative 0,0,0,3,3,3,3
	 * in 2 bits: 0b11000000 0b00111111, then zeros to 32 values (8 bytes). */
	floe_buf_reset(&b);
	int64_t v2[] = {7, 5, 3, 1, 2, 3, 4, 5};
	plain64(p, v2, 8);
	assert_int_equal(floe_pq_delta_ints(&b, p, 8 * 8, 8), 0);
	static const uint8_t w2[] = {0x80, 0x01, 0x04, 0x08, 0x0E, 0x03, 0x02, 0, 0,
				     0,	   0xC0, 0x3F, 0,    0,	   0,	 0,    0, 0};
	expect(&b, w2, sizeof(w2));
	/* No values: the header still has a first value. */
	floe_buf_reset(&b);
	assert_int_equal(floe_pq_delta_ints(&b, p, 0, 8), 0);
	static const uint8_t w3[] = {0x80, 0x01, 0x04, 0x00, 0x00};
	expect(&b, w3, sizeof(w3));
	/* INT32 deltas wrap at 32 bits: INT32_MIN after INT32_MAX is a delta of 1. */
	floe_buf_reset(&b);
	uint8_t q[8] = {0xFF, 0xFF, 0xFF, 0x7F, 0x00, 0x00, 0x00, 0x80};
	assert_int_equal(floe_pq_delta_ints(&b, q, 8, 4), 0);
	static const uint8_t w4[] = {0x80, 0x01, 0x04, 0x02, 0xFE, 0xFF, 0xFF,
				     0xFF, 0x0F, 0x02, 0,    0,	   0,	 0};
	expect(&b, w4, sizeof(w4));
	floe_buf_fini(&b);
}

/* A test-only DELTA_BINARY_PACKED decoder for the round trips below. */
static uint64_t uvar(const uint8_t *p, size_t *at)
{
	uint64_t v = 0;
	for (int s = 0;; s += 7) {
		uint8_t c = p[(*at)++];
		v |= (uint64_t)(c & 0x7F) << s;
		if (!(c & 0x80))
			return v;
	}
}

static int64_t svar(const uint8_t *p, size_t *at)
{
	uint64_t u = uvar(p, at);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static size_t dbp_decode(const uint8_t *p, int bits, int64_t *out, size_t max)
{
	size_t at = 0;
	uint64_t bs = uvar(p, &at), mb = uvar(p, &at), n = uvar(p, &at);
	assert_true(n <= max);
	int64_t v = svar(p, &at);
	size_t got = 0;
	if (n)
		out[got++] = v;
	while (got < n) {
		int64_t min = svar(p, &at);
		const uint8_t *bw = p + at;
		at += mb;
		for (uint64_t m = 0; m < mb && got < n; m++) {
			size_t per = bs / mb, bit = 0;
			for (size_t i = 0; i < per; i++) {
				uint64_t x = 0;
				for (int k = 0; k < bw[m]; k++, bit++)
					x |= (uint64_t)((p[at + bit / 8] >> (bit % 8)) & 1) << k;
				if (got < n) {
					uint64_t d = x + (uint64_t)min;
					v = bits == 32 ? (int32_t)((uint32_t)v + (uint32_t)d)
						       : (int64_t)((uint64_t)v + d);
					out[got++] = v;
				}
			}
			at += per * bw[m] / 8;
		}
	}
	return got;
}

static void test_dbp_round_trip(void **state)
{
	(void)state;
	enum { N = 1000 };
	static int64_t v[N], back[N];
	static uint8_t p[N * 8];
	uint64_t x = 88172645463325252ull;
	for (int bits = 32; bits <= 64; bits += 32) {
		for (int i = 0; i < N; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			/* Runs of steady steps, wild jumps and the extremes. */
			v[i] = i < 300	 ? 1000 * i
			       : i < 600 ? (int64_t)x
					 : (i % 2 ? INT64_MIN : INT64_MAX);
			if (bits == 32)
				v[i] = (int32_t)(uint32_t)v[i];
		}
		for (int i = 0; i < N; i++)
			for (int k = 0; k < bits / 8; k++)
				p[(size_t)i * (size_t)(bits / 8) + (size_t)k] =
				    (uint8_t)((uint64_t)v[i] >> (8 * k));
		struct floe_buf b;
		floe_buf_init(&b, NULL, 1 << 20);
		assert_int_equal(
		    floe_pq_delta_ints(&b, p, (size_t)N * (size_t)(bits / 8), bits / 8), 0);
		assert_int_equal(dbp_decode(b.data, bits, back, N), N);
		assert_memory_equal(back, v, sizeof(v));
		floe_buf_fini(&b);
	}
}

static void test_delta_length(void **state)
{
	(void)state;
	static const char *const s[] = {"Hello", "World", "Foobar", "ABCDEF"};
	uint8_t p[128];
	size_t n = plain_strings(p, s, 4);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_pq_delta_lengths(&b, p, n), 0);
	/* Lengths 5,5,6,6: first 5 (zigzag 10); deltas 0,1,0, min 0, width 1: 0b010. */
	static const uint8_t w[] = {0x80, 0x01, 0x04, 0x04, 0x0A, 0x00, 0x01, 0,   0,
				    0,	  0x02, 0,    0,    0,	  'H',	'e',  'l', 'l',
				    'o',  'W',	'o',  'r',  'l',  'd',	'F',  'o', 'o',
				    'b',  'a',	'r',  'A',  'B',  'C',	'D',  'E', 'F'};
	expect(&b, w, sizeof(w));
	floe_buf_fini(&b);
}

static void test_delta_byte_array(void **state)
{
	(void)state;
	static const char *const s[] = {"axis", "axle", "babble", "babyhood"};
	uint8_t p[128];
	size_t n = plain_strings(p, s, 4);
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_pq_delta_strings(&b, p, n), 0);
	/* Prefix lengths 0,2,0,3: deltas 2,-2,3, min -2 (zigzag 3), relative 4,0,5 in 3
	 * bits: 0b01000100 0b00000001. Suffix lengths 4,2,6,5: deltas -2,4,-1, min -2,
	 * relative 0,6,1: 0b01110000. Then the suffixes. */
	static const uint8_t w[] = {0x80, 0x01, 0x04, 0x04, 0x00, 0x03, 0x03, 0,   0,	0,   0x44,
				    0x01, 0,	0,    0,    0,	  0,	0,    0,   0,	0,   0,
				    0x80, 0x01, 0x04, 0x04, 0x08, 0x03, 0x03, 0,   0,	0,   0x70,
				    0,	  0,	0,    0,    0,	  0,	0,    0,   0,	0,   0,
				    'a',  'x',	'i',  's',  'l',  'e',	'b',  'a', 'b', 'b', 'l',
				    'e',  'y',	'h',  'o',  'o',  'd'};
	expect(&b, w, sizeof(w));
	uint64_t shared, total;
	floe_pq_delta_shared(p, n, &shared, &total);
	assert_int_equal(shared, 5);
	assert_int_equal(total, 22);
	floe_buf_fini(&b);
}

static void test_bloom(void **state)
{
	(void)state;
	/* XXH64 of the empty input with seed 0 (the xxHash reference vector). */
	assert_true(floe_pq_bloom_hash("", 0) == 0xEF46DB3751D8E999ull);
	assert_int_equal(floe_pq_bloom_size(0, 1 << 20), 32);
	assert_int_equal(floe_pq_bloom_size(8, 1 << 20), 32);
	assert_int_equal(floe_pq_bloom_size(100000, 1 << 20), 131072); /* 125000 up */
	assert_int_equal(floe_pq_bloom_size(10000000, 1 << 20), 1 << 20);
	assert_int_equal(floe_pq_bloom_size(10000000, 3000), 2048);
	struct floe_pq_bloom bf;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	assert_int_equal(floe_pq_bloom_init(&bf, &a, 48), FLOE_EINVAL);
	assert_int_equal(floe_pq_bloom_init(&bf, &a, 128), 0);
	/* h = 0xEF46DB3751D8E999: block ((0xEF46DB37 * 4) >> 32) = 3; with x = 0x51D8E999
	 * word i gets bit (x * salt[i] mod 2^32) >> 27: 29, 0, 25, 28, 14, 22, 29, 30. */
	floe_pq_bloom_insert(&bf, 0xEF46DB3751D8E999ull);
	static const uint32_t words[8] = {1u << 29, 1u << 0,  1u << 25, 1u << 28,
					  1u << 14, 1u << 22, 1u << 29, 1u << 30};
	uint8_t want[128] = {0};
	for (int i = 0; i < 8; i++)
		for (int k = 0; k < 4; k++)
			want[96 + 4 * i + k] = (uint8_t)(words[i] >> (8 * k));
	assert_memory_equal(bf.bits, want, 128);
	assert_true(floe_pq_bloom_check(&bf, 0xEF46DB3751D8E999ull));
	assert_false(floe_pq_bloom_check(&bf, 0x0123456789ABCDEFull));
	struct floe_buf b;
	floe_buf_init(&b, &a, 1 << 20);
	assert_int_equal(floe_pq_bloom_write(&bf, &b), 0);
	/* BloomFilterHeader{1: 128, 2: {1: {}}, 3: {1: {}}, 4: {1: {}}} */
	static const uint8_t hdr[] = {0x15, 0x80, 0x02, 0x1C, 0x1C, 0x00, 0x00, 0x1C,
				      0x1C, 0x00, 0x00, 0x1C, 0x1C, 0x00, 0x00, 0x00};
	assert_int_equal(b.len, sizeof(hdr) + 128);
	assert_memory_equal(b.data, hdr, sizeof(hdr));
	assert_memory_equal(b.data + sizeof(hdr), want, 128);
	floe_buf_fini(&b);
	floe_pq_bloom_fini(&bf);
	floe_pq_bloom_fini(&bf); /* twice is harmless */
	assert_int_equal(a.used, 0);
}

static void test_page_index(void **state)
{
	(void)state;
	struct floe_pq_page pg[2];
	memset(pg, 0, sizeof(pg));
	pg[0].len = 100;
	pg[0].has_minmax = true;
	pg[0].imin = 1;
	pg[0].imax = 5;
	pg[1].len = 50;
	pg[1].first_row = 10;
	pg[1].null_count = 3; /* a null page */
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	bool written;
	assert_int_equal(floe_pq_column_index_encode(&b, 2 /* INT64 */, pg, 2, &written), 0);
	assert_true(written);
	static const uint8_t ci[] = {
	    0x19, 0x21, 0x00, 0x01,			       /* null_pages */
	    0x19, 0x28, 0x08, 0x01, 0, 0, 0, 0, 0, 0, 0, 0x00, /* min_values */
	    0x19, 0x28, 0x08, 0x05, 0, 0, 0, 0, 0, 0, 0, 0x00, /* max_values */
	    0x15, 0x02,					       /* ASCENDING */
	    0x19, 0x26, 0x00, 0x06,			       /* null_counts */
	    0x00};
	expect(&b, ci, sizeof(ci));
	floe_buf_reset(&b);
	assert_int_equal(floe_pq_offset_index_encode(&b, pg, 2, 4), 0);
	static const uint8_t oi[] = {0x19, 0x2C, 0x16, 0x08, 0x15, 0xC8, 0x01, 0x16, 0x00, 0x00,
				     0x16, 0xD0, 0x01, 0x15, 0x64, 0x16, 0x14, 0x00, 0x00};
	expect(&b, oi, sizeof(oi));
	/* Boundary orders of string pages; a page whose maximum cannot be written means no
	 * ColumnIndex at all. */
	struct floe_pq_page s[3];
	memset(s, 0, sizeof(s));
	const char *lo[] = {"c", "b", "a"}, *hi[] = {"d", "c", "b"};
	for (int i = 0; i < 3; i++) {
		s[i].has_minmax = true;
		s[i].lo.len = s[i].hi.len = 1;
		s[i].lo.v[0] = (uint8_t)lo[i][0];
		s[i].hi.v[0] = (uint8_t)hi[i][0];
	}
	assert_int_equal(floe_pq_boundary_order(6, s, 3), FLOE_PQ_DESCENDING);
	s[2].hi.v[0] = 'z';
	assert_int_equal(floe_pq_boundary_order(6, s, 3), FLOE_PQ_UNORDERED);
	assert_int_equal(floe_pq_boundary_order(6, s + 2, 1), FLOE_PQ_ASCENDING);
	/* Long strings are cut to FLOE_PQ_PAGE_BOUND_MAX bytes: the minimum to its prefix,
	 * the maximum to its prefix with the last character incremented. */
	struct floe_pq_page lp;
	memset(&lp, 0, sizeof(lp));
	lp.has_minmax = true;
	const char *lv = "0123456789abcdefghijklmnopqrstuvwxyz0123";
	lp.lo.set = lp.hi.set = lp.lo.exact = lp.hi.exact = true;
	lp.lo.len = lp.hi.len = 40;
	memcpy(lp.lo.v, lv, 40);
	memcpy(lp.hi.v, lv, 40);
	floe_buf_reset(&b);
	assert_int_equal(floe_pq_column_index_encode(&b, 6, &lp, 1, &written), 0);
	assert_true(written);
	uint8_t want[128];
	size_t wn = 0;
	const uint8_t head[] = {0x19, 0x11, 0x00, 0x19, 0x18, 0x20};
	memcpy(want, head, sizeof(head));
	wn = sizeof(head);
	memcpy(want + wn, lv, 32); /* min: the first 32 bytes */
	wn += 32;
	want[wn++] = 0x19;
	want[wn++] = 0x18;
	want[wn++] = 0x20;
	memcpy(want + wn, lv, 32);
	want[wn + 31] = 'w'; /* max: ..."v" incremented */
	wn += 32;
	const uint8_t tail[] = {0x15, 0x02, 0x19, 0x16, 0x00, 0x00};
	memcpy(want + wn, tail, sizeof(tail));
	wn += sizeof(tail);
	expect(&b, want, wn);
	s[1].hi.unbounded = true;
	floe_buf_reset(&b);
	assert_int_equal(floe_pq_column_index_encode(&b, 6, s, 3, &written), 0);
	assert_false(written);
	assert_int_equal(b.len, 0);
	floe_buf_fini(&b);
}

/* The in-place encoders give the bytes of the others, for any values: the examples
 * above, a single value (whose lengths take more room than its prefix gave back), empty
 * values, long shared prefixes and random ones; and a failure to grow is clean. */
static void test_delta_in_place(void **state)
{
	(void)state;
	static uint8_t p[1 << 16];
	uint64_t r = 0x9E3779B97F4A7C15ull;
	for (int round = 0; round < 400; round++) {
		size_t n = 0;
		if (round == 0) {
			static const char *const s[] = {"axis", "axle", "babble", "babyhood"};
			n = plain_strings(p, s, 4);
		} else if (round == 1) {
			static const char *const s[] = {"x"};
			n = plain_strings(p, s, 1);
		} else if (round == 2) {
			static const char *const s[] = {"", "", "a", "", ""};
			n = plain_strings(p, s, 5);
		} else {
			/* Values of 0-299 bytes, often sharing a prefix with the one before. */
			size_t count = (size_t)(round % 97) + 1, prev = 0, prevlen = 0;
			for (size_t i = 0; i < count && n + 304 < sizeof(p); i++) {
				r ^= r << 13, r ^= r >> 7, r ^= r << 17;
				uint32_t l = (uint32_t)(r % 300);
				size_t keep = (r >> 20) % 2 && i ? (r >> 24) % (prevlen + 1) : 0;
				for (int k = 0; k < 4; k++)
					p[n + (size_t)k] = (uint8_t)(l >> (8 * k));
				for (uint32_t j = 0; j < l; j++)
					p[n + 4 + j] = j < keep ? p[prev + 4 + j] : (uint8_t)"abc\xff"[(r >> (j % 60)) & 3];
				prev = n;
				prevlen = l;
				n += 4 + l;
			}
		}
		for (int dba = 0; dba <= 1; dba++) {
			struct floe_buf want, got, scratch;
			floe_buf_init(&want, NULL, 1 << 20);
			floe_buf_init(&got, NULL, 1 << 20);
			floe_buf_init(&scratch, NULL, 1 << 20);
			assert_int_equal(dba ? floe_pq_delta_strings(&want, p, n)
					     : floe_pq_delta_lengths(&want, p, n),
					 0);
			assert_int_equal(floe_buf_append(&got, p, n), 0);
			assert_int_equal(dba ? floe_pq_delta_strings_inplace(&got, &scratch)
					     : floe_pq_delta_lengths_inplace(&got, &scratch),
					 0);
			expect(&got, want.data, want.len);
			floe_buf_fini(&want);
			floe_buf_fini(&got);
			floe_buf_fini(&scratch);
		}
	}
	/* A buffer that may not grow by the lengths' bytes. */
	static const char *const one[] = {"x"};
	size_t n = plain_strings(p, one, 1);
	struct floe_buf b, scratch;
	floe_buf_init(&b, NULL, n);
	floe_buf_init(&scratch, NULL, 1 << 20);
	assert_int_equal(floe_buf_append(&b, p, n), 0);
	assert_int_equal(floe_pq_delta_lengths_inplace(&b, &scratch), FLOE_ELIMIT);
	floe_buf_fini(&b);
	floe_buf_fini(&scratch);
}

static void test_delta_faults(void **state)
{
	(void)state;
	static const char *const s[] = {"axis", "axle", "babble", "babyhood"};
	uint8_t p[128];
	size_t n = plain_strings(p, s, 4);
	int k;
	for (k = 0; k < 100; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_buf b;
		floe_buf_init(&b, &a, 1 << 20);
		int rc = floe_pq_delta_strings(&b, p, n);
		floe_buf_fini(&b);
		assert_int_equal(a.used, 0);
		if (rc == 0)
			break;
		assert_int_equal(rc, FLOE_ENOMEM);
	}
	assert_true(k < 100);
	/* A buffer that may not grow far enough. */
	struct floe_buf b;
	floe_buf_init(&b, NULL, 10);
	assert_int_equal(floe_pq_delta_strings(&b, p, n), FLOE_ELIMIT);
	floe_buf_fini(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dbp_examples), cmocka_unit_test(test_dbp_round_trip),
	    cmocka_unit_test(test_delta_length), cmocka_unit_test(test_delta_byte_array),
	    cmocka_unit_test(test_bloom),	 cmocka_unit_test(test_page_index),
	    cmocka_unit_test(test_delta_faults), cmocka_unit_test(test_delta_in_place),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
