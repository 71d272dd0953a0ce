/* The Parquet reader's decoders against the writer's encoders and hand-made bytes: the
 * Thrift compact decoder (every type, long field ids, skipping, the nesting bound, short
 * input), the RLE / bit-packed hybrid (every bit width, runs of every kind, short and
 * malformed input) and DELTA_BINARY_PACKED (the spec's examples, 32- and 64-bit values
 * that wrap, every count around a block, its size found without decoding). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/decode.h"
#include "formats/parquet/delta.h"
#include "formats/parquet/rle.h"
#include "formats/parquet/thrift.h"

static uint64_t rnd_state = 88172645463325252ull;
static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* ---- Thrift ---- */

static void test_thrift_round_trip(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	struct floe_thrift t;
	floe_thrift_init(&t, &b);
	floe_thrift_i32(&t, 1, -7);
	floe_thrift_i64(&t, 2, INT64_MIN);
	floe_thrift_string(&t, 3, "hello");
	floe_thrift_bool(&t, 4, true);
	floe_thrift_bool(&t, 5, false);
	floe_thrift_list(&t, 6, FLOE_THRIFT_I32, 20);
	for (int i = 0; i < 20; i++)
		floe_thrift_elem_i32(&t, i * 1000 - 5);
	floe_thrift_struct(&t, 300); /* long form id */
	floe_thrift_i16(&t, 1, -300);
	floe_thrift_i8(&t, 2, -3);
	floe_thrift_end(&t);
	floe_thrift_i32(&t, 40, INT32_MAX);
	floe_thrift_end(&t);
	assert_int_equal(floe_thrift_error(&t), 0);

	struct floe_thrift_rd r;
	floe_thrift_rd_init(&r, b.data, b.len);
	int16_t id;
	int ft, et;
	size_t n;
	const uint8_t *p;
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(id, 1);
	assert_int_equal(floe_thrift_rd_i32(&r, ft), -7);
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(floe_thrift_rd_i64(&r, ft), INT64_MIN);
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_binary(&r, ft, &p, &n);
	assert_int_equal(n, 5);
	assert_memory_equal(p, "hello", 5);
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_true(floe_thrift_rd_bool(&r, ft));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(id, 5);
	assert_false(floe_thrift_rd_bool(&r, ft));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_list(&r, ft, &et, &n);
	assert_int_equal(n, 20);
	for (int i = 0; i < 20; i++)
		assert_int_equal(floe_thrift_rd_i32(&r, et), i * 1000 - 5);
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(id, 300);
	floe_thrift_rd_struct(&r, ft);
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(floe_thrift_rd_i32(&r, ft), -300);
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(floe_thrift_rd_i64(&r, ft), -3);
	assert_false(floe_thrift_rd_field(&r, &id, &ft)); /* the struct's stop */
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(id, 40);
	/* An i32 read as the wrong type is an error. */
	floe_thrift_rd_binary(&r, ft, &p, &n);
	assert_int_equal(r.err, FLOE_EPARSE);
	floe_buf_fini(&b);
}

static void test_thrift_skip(void **state)
{
	(void)state;
	/* A struct with a nested struct, a list of structs, a double, a map and a bool list,
	 * all skipped, then the field after them. */
	static const uint8_t in[] = {
	    0x1c, 0x15, 0x02, 0x00,				 /* 1: struct {1: i32 1} */
	    0x19, 0x2c, 0x15, 0x04, 0x00, 0x00,			 /* 2: list<struct> [{1: 2}, {}] */
	    0x17, 1,	2,    3,    4,	  5,	6,    7,   8,	 /* 3: double */
	    0x1b, 0x02, 0x85, 0x01, 'a',  0x04, 0x01, 'b', 0x06, /* 4: map<binary,i32> */
	    0x19, 0x21, 0x01, 0x02,				 /* 5: list<bool> [true, false] */
	    0x1b, 0x00,						 /* 6: empty map */
	    0x15, 0x54,						 /* 7: i32 42 */
	    0x00};
	struct floe_thrift_rd r;
	floe_thrift_rd_init(&r, in, sizeof(in));
	int16_t id;
	int ft;
	for (int k = 1; k <= 6; k++) {
		assert_true(floe_thrift_rd_field(&r, &id, &ft));
		assert_int_equal(id, k);
		floe_thrift_rd_skip(&r, ft, false);
		assert_int_equal(r.err, 0);
	}
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(floe_thrift_rd_i32(&r, ft), 42);
	assert_false(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(r.err, 0);
	assert_int_equal(r.pos, sizeof(in));
	/* Every shorter input fails cleanly, at or before its end. */
	for (size_t cut = 0; cut < sizeof(in); cut++) {
		floe_thrift_rd_init(&r, in, cut);
		while (floe_thrift_rd_field(&r, &id, &ft))
			floe_thrift_rd_skip(&r, ft, false);
		assert_int_equal(r.err, FLOE_EPARSE);
		assert_true(r.err_pos <= cut);
	}
}

/* Empty lists skipped leave the nesting as it was: field ids go on counting from the
 * struct's previous field (the fuzzer found the depth growing with each). */
static void test_thrift_skip_empty_lists(void **state)
{
	(void)state;
	uint8_t in[64];
	size_t n = 0;
	for (int i = 0; i < 20; i++) {
		in[n++] = 0x19; /* next field, a list */
		in[n++] = 0x08; /* of no binaries */
	}
	in[n++] = 0x15; /* field 21: i32 */
	in[n++] = 0x54;
	in[n++] = 0x00;
	struct floe_thrift_rd r;
	floe_thrift_rd_init(&r, in, n);
	int16_t id;
	int ft;
	for (int i = 1; i <= 20; i++) {
		assert_true(floe_thrift_rd_field(&r, &id, &ft));
		assert_int_equal(id, i);
		floe_thrift_rd_skip(&r, ft, false);
		assert_int_equal(r.depth, 0);
	}
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(id, 21);
	assert_int_equal(floe_thrift_rd_i32(&r, ft), 42);
	assert_false(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(r.err, 0);
}

static void test_thrift_hostile(void **state)
{
	(void)state;
	struct floe_thrift_rd r;
	int16_t id;
	int ft, et;
	size_t n;
	/* Structs nested 100 deep: refused at the bound, no deep recursion. */
	uint8_t deep[101];
	memset(deep, 0x1c, 100);
	deep[100] = 0;
	floe_thrift_rd_init(&r, deep, sizeof(deep));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_skip(&r, ft, false);
	assert_int_equal(r.err, FLOE_ELIMIT);
	/* Lists nested deeply, too. */
	uint8_t lists[64];
	lists[0] = 0x19;
	memset(lists + 1, 0x19, sizeof(lists) - 1);
	floe_thrift_rd_init(&r, lists, sizeof(lists));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_skip(&r, ft, false);
	assert_true(r.err == FLOE_ELIMIT || r.err == FLOE_EPARSE);
	/* A list claiming more elements than there are bytes. */
	static const uint8_t big[] = {0x19, 0xf5, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x02};
	floe_thrift_rd_init(&r, big, sizeof(big));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_list(&r, ft, &et, &n);
	assert_int_equal(r.err, FLOE_EPARSE);
	assert_int_equal(n, 0);
	/* A binary longer than the input, a varint longer than 10 bytes, type 0. */
	static const uint8_t longbin[] = {0x18, 0x7f, 'a'};
	floe_thrift_rd_init(&r, longbin, sizeof(longbin));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_skip(&r, ft, false);
	assert_int_equal(r.err, FLOE_EPARSE);
	static const uint8_t longvar[] = {0x16, 0xff, 0xff, 0xff, 0xff, 0xff,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
	floe_thrift_rd_init(&r, longvar, sizeof(longvar));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_i64(&r, ft);
	assert_int_equal(r.err, FLOE_EPARSE);
	static const uint8_t type0[] = {0x10};
	floe_thrift_rd_init(&r, type0, sizeof(type0));
	assert_false(floe_thrift_rd_field(&r, &id, &ft));
	assert_int_equal(r.err, FLOE_EPARSE);
	/* An i32 field holding a value beyond 32 bits. */
	static const uint8_t wide[] = {0x15, 0xff, 0xff, 0xff, 0xff, 0x7f};
	floe_thrift_rd_init(&r, wide, sizeof(wide));
	assert_true(floe_thrift_rd_field(&r, &id, &ft));
	floe_thrift_rd_i32(&r, ft);
	assert_int_equal(r.err, FLOE_EPARSE);
	/* Field ids past INT16_MAX by deltas. */
	uint8_t ids[6000];
	memset(ids, 0xf5, sizeof(ids)); /* delta 15, i32, value 0xf5 ... */
	for (size_t i = 1; i < sizeof(ids); i += 2)
		ids[i] = 0;
	floe_thrift_rd_init(&r, ids, sizeof(ids));
	while (floe_thrift_rd_field(&r, &id, &ft))
		floe_thrift_rd_skip(&r, ft, false);
	assert_int_equal(r.err, FLOE_EPARSE);
}

/* ---- RLE / bit-packed hybrid ---- */

static void rle_round_trip(int bw, const uint32_t *v, size_t n)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 24);
	struct floe_rle e;
	floe_rle_init(&e, &b, bw);
	for (size_t i = 0; i < n; i++)
		floe_rle_put(&e, v[i]);
	assert_int_equal(floe_rle_flush(&e), 0);
	struct floe_pq_rle_dec d;
	floe_pq_rle_dec_init(&d, b.data, b.len, bw);
	for (size_t i = 0; i < n; i++) {
		uint32_t x;
		assert_int_equal(floe_pq_rle_dec_next(&d, &x), 0);
		assert_int_equal(x, v[i]);
	}
	floe_buf_fini(&b);
}

static void test_rle(void **state)
{
	(void)state;
	static uint32_t v[5000];
	for (int bw = 0; bw <= 32; bw++) {
		uint32_t mask = bw == 32 ? UINT32_MAX : (1u << bw) - 1;
		for (int pattern = 0; pattern < 4; pattern++) {
			size_t n = pattern == 3 ? 1 + rnd() % 20 : 5000;
			uint32_t cur = 0;
			for (size_t i = 0; i < n; i++) {
				if (pattern == 0 || (pattern == 1 && rnd() % 50 == 0) ||
				    (pattern == 2 && rnd() % 3 == 0) || pattern == 3)
					cur = (uint32_t)rnd() & mask;
				v[i] = cur;
			}
			rle_round_trip(bw, v, n);
		}
	}
}

static void test_rle_hostile(void **state)
{
	(void)state;
	struct floe_pq_rle_dec d;
	uint32_t x;
	/* Empty input; a run header cut short; an RLE value wider than the width. */
	floe_pq_rle_dec_init(&d, NULL, 0, 3);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
	static const uint8_t cut[] = {0x80};
	floe_pq_rle_dec_init(&d, cut, 1, 3);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
	static const uint8_t wide[] = {0x04, 0x09};
	floe_pq_rle_dec_init(&d, wide, 2, 3);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
	/* A run of 2 then nothing: two values, then an error. */
	static const uint8_t two[] = {0x04, 0x05};
	floe_pq_rle_dec_init(&d, two, 2, 3);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), 0);
	assert_int_equal(x, 5);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), 0);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
	/* A bit-packed run claiming 63 groups with one byte of data (width 1): its eight
	 * values are read, then the data is exhausted. */
	static const uint8_t bp[] = {0x7f, 0xa5};
	floe_pq_rle_dec_init(&d, bp, 2, 1);
	for (int i = 0; i < 8; i++) {
		assert_int_equal(floe_pq_rle_dec_next(&d, &x), 0);
		assert_int_equal(x, (0xa5u >> i) & 1);
	}
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
	/* Zero-length runs only: consumed, then an error, not a loop. */
	static const uint8_t zeros[] = {0x00, 0x00, 0x01, 0x00, 0x00};
	floe_pq_rle_dec_init(&d, zeros, sizeof(zeros), 8);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
	/* A run length beyond 32 bits. */
	static const uint8_t huge[] = {0xfe, 0xff, 0xff, 0xff, 0xff, 0x7f, 0x01};
	floe_pq_rle_dec_init(&d, huge, sizeof(huge), 1);
	assert_int_equal(floe_pq_rle_dec_next(&d, &x), FLOE_ECORRUPT);
}

/* ---- DELTA_BINARY_PACKED ---- */

static void test_dbp_spec_examples(void **state)
{
	(void)state;
	/* Encodings.md: 1, 2, 3, 4, 5: one block, min delta 1, widths 0. */
	static const uint8_t ex1[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
	struct floe_pq_dbp_dec d;
	uint64_t count;
	int64_t v;
	size_t size;
	assert_int_equal(floe_pq_dbp_dec_init(&d, ex1, sizeof(ex1), 64, &count), 0);
	assert_int_equal(count, 5);
	for (int i = 1; i <= 5; i++) {
		assert_int_equal(floe_pq_dbp_dec_next(&d, &v), 0);
		assert_int_equal(v, i);
	}
	assert_int_equal(floe_pq_dbp_dec_next(&d, &v), FLOE_ECORRUPT);
	/* The widths are there, but no miniblock has bytes: the size is the header and the
	 * block header. */
	assert_int_equal(floe_pq_dbp_size(ex1, sizeof(ex1), &size), 0);
	assert_int_equal(size, sizeof(ex1));
	/* Bad shapes: block not a multiple of 128, miniblock not a multiple of 32. */
	static const uint8_t bad1[] = {0x40, 0x04, 0x01, 0x00};
	static const uint8_t bad2[] = {0x80, 0x01, 0x08, 0x01, 0x00};
	assert_int_equal(floe_pq_dbp_dec_init(&d, bad1, sizeof(bad1), 64, NULL), FLOE_ECORRUPT);
	assert_int_equal(floe_pq_dbp_dec_init(&d, bad2, sizeof(bad2), 64, NULL), FLOE_ECORRUPT);
	/* A huge count in a few bytes: values run out, an error, not a loop. */
	static const uint8_t many[] = {0x80, 0x01, 0x04, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x00};
	assert_int_equal(floe_pq_dbp_size(many, sizeof(many), &size), FLOE_ECORRUPT);
	assert_int_equal(floe_pq_dbp_dec_init(&d, many, sizeof(many), 64, NULL), 0);
	assert_int_equal(floe_pq_dbp_dec_next(&d, &v), 0);
	assert_int_equal(floe_pq_dbp_dec_next(&d, &v), FLOE_ECORRUPT);
}

static void dbp_round_trip(const int64_t *vals, size_t n, int bits)
{
	struct floe_buf b, plain;
	floe_buf_init(&b, NULL, 1 << 24);
	floe_buf_init(&plain, NULL, 1 << 24);
	int w = bits / 8;
	for (size_t i = 0; i < n; i++) {
		uint8_t le[8];
		for (int k = 0; k < 8; k++)
			le[k] = (uint8_t)((uint64_t)vals[i] >> (8 * k));
		assert_int_equal(floe_buf_append(&plain, le, (size_t)w), 0);
	}
	assert_int_equal(floe_pq_delta_ints(&b, plain.data, plain.len, w), 0);
	/* Trailing bytes after the stream: the size must stop before them. */
	assert_int_equal(floe_buf_append(&b, "tail", 4), 0);
	size_t size;
	assert_int_equal(floe_pq_dbp_size(b.data, b.len, &size), 0);
	assert_int_equal(size, b.len - 4);
	struct floe_pq_dbp_dec d;
	uint64_t count;
	assert_int_equal(floe_pq_dbp_dec_init(&d, b.data, size, bits, &count), 0);
	assert_int_equal(count, n);
	for (size_t i = 0; i < n; i++) {
		int64_t v;
		assert_int_equal(floe_pq_dbp_dec_next(&d, &v), 0);
		int64_t want = bits == 32 ? (int64_t)(int32_t)(uint32_t)vals[i] : vals[i];
		assert_int_equal(v, want);
	}
	int64_t v;
	assert_int_equal(floe_pq_dbp_dec_next(&d, &v), FLOE_ECORRUPT);
	/* Cut short anywhere inside the blocks: an error, never a read past the end. */
	for (size_t cut = 0; cut < size; cut += 1 + size / 50) {
		size_t s2;
		int rc = floe_pq_dbp_size(b.data, cut, &s2);
		assert_true(rc != 0 || n <= 1);
		if (floe_pq_dbp_dec_init(&d, b.data, cut, bits, NULL) == 0) {
			size_t i = 0;
			while (i < n && floe_pq_dbp_dec_next(&d, &v) == 0)
				i++;
			assert_true(i < n || n <= 1);
		}
	}
	floe_buf_fini(&b);
	floe_buf_fini(&plain);
}

static void test_dbp_round_trip(void **state)
{
	(void)state;
	static int64_t v[3000];
	static const size_t counts[] = {0, 1, 2, 31, 32, 33, 127, 128, 129, 130, 257, 3000};
	for (int bits = 32; bits <= 64; bits += 32) {
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			for (int pattern = 0; pattern < 4; pattern++) {
				size_t n = counts[c];
				for (size_t i = 0; i < n; i++) {
					uint64_t x = rnd();
					if (pattern == 0)
						v[i] = (int64_t)(1764633600000000ull + i * 1000 +
								 x % 1000);
					else if (pattern == 1)
						v[i] = (int64_t)x; /* full range: deltas wrap */
					else if (pattern == 2)
						v[i] = x & 1 ? INT64_MIN : INT64_MAX;
					else
						v[i] = (int64_t)(x % 7) - 3;
					if (bits == 32)
						v[i] = (int32_t)(uint32_t)v[i];
				}
				dbp_round_trip(v, n, bits);
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_thrift_round_trip),
	    cmocka_unit_test(test_thrift_skip),
	    cmocka_unit_test(test_thrift_skip_empty_lists),
	    cmocka_unit_test(test_thrift_hostile),
	    cmocka_unit_test(test_rle),
	    cmocka_unit_test(test_rle_hostile),
	    cmocka_unit_test(test_dbp_spec_examples),
	    cmocka_unit_test(test_dbp_round_trip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
