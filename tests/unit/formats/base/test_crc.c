/* Tests of formats/base/crc: the check values of CRC-32 and CRC32C, every table entry
 * against the bit-by-bit definition (through one-byte and eight-byte inputs), and
 * chaining over random lengths and alignments against a bitwise reference, CRC-32 at
 * every length to past 1 KiB (the carry-less multiply's blocks and tails). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "formats/base/crc.h"

/* The definition: one bit at a time through the reflected polynomial. */
static uint32_t crc_bitwise(uint32_t poly, uint32_t crc, const uint8_t *p, size_t n)
{
	crc = ~crc;
	for (size_t i = 0; i < n; i++) {
		crc ^= p[i];
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (crc & 1 ? poly : 0);
	}
	return ~crc;
}

#define POLY32 0xedb88320u
#define POLY32C 0x82f63b78u

static void test_check_values(void **state)
{
	(void)state;
	/* CRC-32/ISO-HDLC (zlib's crc32) and CRC-32C (iSCSI, RFC 3720 B.4). */
	assert_int_equal(floe_crc32(0, "123456789", 9), 0xcbf43926u);
	assert_int_equal(floe_crc32c(0, "123456789", 9), 0xe3069283u);
	assert_int_equal(floe_crc32(0, "", 0), 0);
	assert_int_equal(floe_crc32c(0, NULL, 0), 0);
	uint8_t zeros[32] = {0}, ones[32];
	memset(ones, 0xff, sizeof(ones));
	assert_int_equal(floe_crc32c(0, zeros, 32), 0x8a9136aau);
	assert_int_equal(floe_crc32c(0, ones, 32), 0x62a8ab43u);
	assert_int_equal(floe_crc32(floe_crc32(0, "1234", 4), "56789", 5), 0xcbf43926u);
	assert_int_equal(floe_crc32c(floe_crc32c(0, "1234", 4), "56789", 5), 0xe3069283u);
}

/* A byte alone reaches table 0; a byte followed by seven others (all values, at every
 * position of an eight-byte step) reaches each of the eight slicing tables. */
static void test_every_entry(void **state)
{
	(void)state;
	for (unsigned v = 0; v < 256; v++) {
		uint8_t b = (uint8_t)v;
		assert_int_equal(floe_crc32(0, &b, 1), crc_bitwise(POLY32, 0, &b, 1));
		assert_int_equal(floe_crc32c(0, &b, 1), crc_bitwise(POLY32C, 0, &b, 1));
		for (size_t pos = 0; pos < 8; pos++) {
			uint8_t blk[8] = {0x5a, 0x01, 0xfe, 0x33, 0x80, 0x7f, 0x10, 0xc3};
			blk[pos] = b;
			assert_int_equal(floe_crc32(0, blk, 8), crc_bitwise(POLY32, 0, blk, 8));
		}
	}
}

static void test_chaining(void **state)
{
	(void)state;
	uint8_t buf[1000];
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 32);
	}
	for (size_t off = 0; off < 9; off++) {
		for (size_t len = 0; off + len <= sizeof(buf); len += 37) {
			size_t cut = len / 3;
			uint32_t want = crc_bitwise(POLY32, 0, buf + off, len);
			uint32_t got = floe_crc32(floe_crc32(0, buf + off, cut), buf + off + cut, len - cut);
			assert_int_equal(got, want);
			want = crc_bitwise(POLY32C, 0, buf + off, len);
			got = floe_crc32c(floe_crc32c(0, buf + off, cut), buf + off + cut, len - cut);
			assert_int_equal(got, want);
		}
	}
}

/* Every length up to past 1 KiB, at sixteen alignments, and split in two at points
 * around the 16- and 64-byte blocks: where the CPU has a carry-less multiply, CRC-32 takes
 * 64 bytes and more through it (16-byte blocks, the tail by table), and both paths must
 * give the definition's value. */
static void test_crc32_every_length(void **state)
{
	(void)state;
	static uint8_t buf[1100 + 16];
	uint64_t x = 0x2545f4914f6cdd1dull;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		buf[i] = (uint8_t)(x >> 24);
	}
	for (size_t off = 0; off < 16; off++) {
		for (size_t len = 0; off + len <= sizeof(buf); len++) {
			uint32_t want = crc_bitwise(POLY32, 0, buf + off, len);
			assert_int_equal(floe_crc32(0, buf + off, len), want);
			if (off == 0 && len % 7 == 0) {
				static const size_t cuts[] = {1, 15, 16, 17, 63, 64, 65, 128, 200};
				for (size_t c = 0; c < sizeof(cuts) / sizeof(cuts[0]); c++) {
					size_t cut = cuts[c] < len ? cuts[c] : len;
					uint32_t got = floe_crc32(floe_crc32(0, buf, cut), buf + cut,
								  len - cut);
					assert_int_equal(got, want);
				}
			}
		}
	}
	/* All ones and all zeros through the multiply (a register of ones meets the
	 * first block). */
	memset(buf, 0xff, sizeof(buf));
	assert_int_equal(floe_crc32(0, buf, 1024), crc_bitwise(POLY32, 0, buf, 1024));
	assert_int_equal(floe_crc32(0xffffffffu, buf, 1024),
			 crc_bitwise(POLY32, 0xffffffffu, buf, 1024));
	memset(buf, 0, sizeof(buf));
	assert_int_equal(floe_crc32(0, buf, 1024), crc_bitwise(POLY32, 0, buf, 1024));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_check_values),
	    cmocka_unit_test(test_every_entry),
	    cmocka_unit_test(test_chaining),
	    cmocka_unit_test(test_crc32_every_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
