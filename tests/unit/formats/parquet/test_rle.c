/* RLE / bit-packed hybrid encoder against hand-computed bytes and, at every bit width, a
 * bit-at-a-time packing, and a whole v1 data page
 * (header + levels with their 4-byte length + PLAIN values) built by the chunk writer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/crc.h"
#include "formats/base/error.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/rle.h"

static void encode(int bw, const uint32_t *v, size_t n, struct floe_buf *b)
{
	struct floe_rle r;
	floe_buf_reset(b);
	floe_rle_init(&r, b, bw);
	for (size_t i = 0; i < n; i++)
		floe_rle_put(&r, v[i]);
	assert_int_equal(floe_rle_flush(&r), 0);
}

#define CHECK(bw, vals, ...)                                                                       \
	do {                                                                                       \
		static const uint8_t want_[] = {__VA_ARGS__};                                      \
		encode(bw, vals, sizeof(vals) / sizeof(vals[0]), &b);                              \
		assert_int_equal(b.len, sizeof(want_));                                            \
		assert_memory_equal(b.data, want_, sizeof(want_));                                 \
	} while (0)

static void test_bit_width(void **state)
{
	(void)state;
	assert_int_equal(floe_rle_bit_width(0), 0);
	assert_int_equal(floe_rle_bit_width(1), 1);
	assert_int_equal(floe_rle_bit_width(2), 2);
	assert_int_equal(floe_rle_bit_width(3), 2);
	assert_int_equal(floe_rle_bit_width(4), 3);
	assert_int_equal(floe_rle_bit_width(255), 8);
	assert_int_equal(floe_rle_bit_width(256), 9);
	assert_int_equal(floe_rle_bit_width(UINT32_MAX), 32);
}

static void test_runs(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 4096);

	/* Ten defined values at bit width 1: one RLE run, header 10<<1. */
	static const uint32_t ten[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
	CHECK(1, ten, 0x14, 0x01);

	/* Encodings.md's example: 0..7 at width 3 bit-packed LSB first. */
	static const uint32_t seq[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	CHECK(3, seq, 0x03, 0x88, 0xC6, 0xFA);

	/* An RLE run, then a padded literal group. */
	static const uint32_t mixed[11] = {5, 5, 5, 5, 5, 5, 5, 5, 1, 2, 3};
	CHECK(3, mixed, 0x10, 0x05, 0x03, 0xD1, 0x00, 0x00);

	/* A literal group, then a run that starts on the group boundary. */
	static const uint32_t lit_run[16] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	CHECK(1, lit_run, 0x03, 0x01, 0x10, 0x00);

	/* A short tail of equal values is a short RLE run, not a padded group. */
	static const uint32_t three[3] = {1, 1, 1};
	CHECK(1, three, 0x06, 0x01);

	/* Long run: header varint(400) = 90 03. Value of width 9 takes 2 bytes. */
	static uint32_t many[200];
	for (int i = 0; i < 200; i++)
		many[i] = 300;
	CHECK(9, many, 0x90, 0x03, 0x2C, 0x01);

	/* Width 0 (a dictionary of one entry): RLE run without value bytes. */
	static const uint32_t zeros[9] = {0};
	CHECK(0, zeros, 0x12);

	/* More than 63 literal groups: the run is split at 63 groups. */
	static uint32_t alt[512];
	for (int i = 0; i < 512; i++)
		alt[i] = (uint32_t)(i & 1);
	encode(1, alt, 512, &b);
	assert_int_equal(b.len, 1 + 63 + 1 + 1);
	assert_int_equal(b.data[0], 0x7F);
	for (int i = 1; i <= 63; i++)
		assert_int_equal(b.data[i], 0xAA);
	assert_int_equal(b.data[64], 0x03);
	assert_int_equal(b.data[65], 0xAA);
	floe_buf_fini(&b);
}

/* Bit-packed groups at every width from 1 to 32 against a bit-at-a-time reference: 64
 * values that start no run (the second of each group differs from the first), one
 * literal run of 8 groups, LSB first, 8 * bw bytes after its header. */
static void test_packed_every_width(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 4096);
	uint32_t x = 2463534242u;
	for (int bw = 1; bw <= 32; bw++) {
		uint32_t mask = bw == 32 ? UINT32_MAX : ((uint32_t)1 << bw) - 1, v[64];
		for (int i = 0; i < 64; i++) {
			x ^= x << 13;
			x ^= x >> 17;
			x ^= x << 5;
			v[i] = i % 8 == 1 ? (v[i - 1] ^ 1) & mask : x & mask;
		}
		encode(bw, v, 64, &b);
		uint8_t want[1 + 8 * 32] = {(8 << 1) | 1};
		size_t bit = 0;
		for (int i = 0; i < 64; i++)
			for (int k = 0; k < bw; k++, bit++)
				if (v[i] >> k & 1)
					want[1 + bit / 8] |= (uint8_t)(1u << (bit % 8));
		assert_int_equal(b.len, 1 + 8 * (size_t)bw);
		assert_memory_equal(b.data, want, b.len);
	}
	floe_buf_fini(&b);
}

/* floe_rle_put's inline case (a run already 8 long goes on) makes the bytes that
 * floe_rle_put_any makes alone: runs of every length from 1 to 40 around the 8 and 9
 * that RLE runs start at, at widths 1 and 3, and a buffer too small (the error stays
 * sticky through a long run). */
static void test_inline_runs(void **state)
{
	(void)state;
	static const size_t caps[] = {4096, 12};
	for (size_t c = 0; c < 2; c++) {
		size_t cap = caps[c];
		for (int bw = 1; bw <= 3; bw += 2) {
			struct floe_buf a, b;
			floe_buf_init(&a, NULL, cap);
			floe_buf_init(&b, NULL, cap);
			struct floe_rle ra, rb;
			floe_rle_init(&ra, &a, bw);
			floe_rle_init(&rb, &b, bw);
			uint32_t x = 12345, v = 0;
			for (int run = 0; run < 200; run++) {
				x = x * 1103515245u + 12345u;
				size_t len = 1 + (x >> 16) % 40;
				v = (v + 1 + (x >> 8) % 2) % (bw == 1 ? 2 : 8);
				for (size_t i = 0; i < len; i++) {
					floe_rle_put(&ra, v);
					floe_rle_put_any(&rb, v);
				}
			}
			int ea = floe_rle_flush(&ra), eb = floe_rle_flush(&rb);
			assert_int_equal(ea, eb);
			assert_int_equal(ea, cap == 4096 ? 0 : FLOE_ELIMIT);
			assert_int_equal(a.len, b.len);
			assert_memory_equal(a.data, b.data, a.len);
			floe_buf_fini(&a);
			floe_buf_fini(&b);
		}
	}
}

static void test_limit(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 3);
	struct floe_rle r;
	floe_rle_init(&r, &b, 8);
	for (uint32_t i = 0; i < 64; i++)
		floe_rle_put(&r, i);
	assert_int_equal(floe_rle_flush(&r), FLOE_ELIMIT);
	floe_buf_fini(&b);
}

/* A v1 data page of 10 defined INT32 values, uncompressed, no dictionary. */
static void test_page_bytes(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_pq_compressor *z = NULL;
	assert_int_equal(floe_pq_compressor_new(&a, FLOE_PQ_UNCOMPRESSED, 0, &z), 0);
	struct floe_pq_chunk_opts o = {
	    .ptype = FLOE_PQ_T_INT32, .max_def = 1, .page_size = 1 << 20};
	struct floe_buf scratch;
	floe_buf_init(&scratch, &a, 1 << 20);
	struct floe_pq_chunk *c = NULL;
	assert_int_equal(floe_pq_chunk_new(&a, &o, z, &scratch, &c), 0);
	for (int i = 0; i < 10; i++) {
		assert_int_equal(floe_pq_chunk_put_int(c, 0, i), 0);
		assert_int_equal(floe_pq_chunk_end_row(c, NULL, NULL), 0);
	}
	struct floe_pq_chunk_meta m;
	const struct floe_pq_page *dp, *pages;
	size_t np;
	assert_int_equal(floe_pq_chunk_finish(c, &m, &dp, &pages, &np), 0);
	assert_int_equal(dp->len, 0);
	assert_int_equal(np, 1);
	const uint8_t *p = pages[0].data;
	size_t pn = pages[0].len;
	uint8_t body[46] = {0x02, 0x00, 0x00, 0x00, 0x14, 0x01};
	for (int i = 0; i < 10; i++)
		body[6 + 4 * i] = (uint8_t)i;
	uint32_t crc = floe_crc32(0, body, sizeof(body));
	/* PageHeader{1: DATA_PAGE, 2: 46, 3: 46, 4: crc, 5: {1: 10, 2: PLAIN, 3: RLE, 4: RLE}} */
	uint8_t hdr[32];
	size_t h = 0;
	hdr[h++] = 0x15;
	hdr[h++] = 0x00;
	hdr[h++] = 0x15;
	hdr[h++] = 0x5c;
	hdr[h++] = 0x15;
	hdr[h++] = 0x5c;
	hdr[h++] = 0x15;
	uint64_t zz =
	    ((uint64_t)(int64_t)(int32_t)crc << 1) ^ (uint64_t)((int64_t)(int32_t)crc >> 63);
	while (zz >= 0x80) {
		hdr[h++] = (uint8_t)(zz | 0x80);
		zz >>= 7;
	}
	hdr[h++] = (uint8_t)zz;
	static const uint8_t dph[] = {0x1c, 0x15, 0x14, 0x15, 0x00, 0x15,
				      0x06, 0x15, 0x06, 0x00, 0x00};
	memcpy(hdr + h, dph, sizeof(dph));
	h += sizeof(dph);
	assert_int_equal(pn, h + sizeof(body));
	assert_memory_equal(p, hdr, h);
	assert_memory_equal(p + h, body, sizeof(body));
	assert_int_equal(m.num_values, 10);
	assert_int_equal(m.null_count, 0);
	assert_int_equal(m.imin, 0);
	assert_int_equal(m.imax, 9);
	assert_int_equal(m.plain_pages, 1);
	assert_int_equal(m.comp_size, (int64_t)pn);
	floe_pq_chunk_free(c);
	floe_pq_compressor_free(z);
	floe_buf_fini(&scratch);
	assert_int_equal(a.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bit_width), cmocka_unit_test(test_runs),
	    cmocka_unit_test(test_limit),     cmocka_unit_test(test_page_bytes),
	    cmocka_unit_test(test_inline_runs), cmocka_unit_test(test_packed_every_width),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
