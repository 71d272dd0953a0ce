/* Unit tests for formats/base/utf8: every code point round-trips through put and get,
 * and get refuses what Unicode calls ill-formed (overlong forms, surrogates, code points
 * above U+10FFFF, stray continuation bytes, sequences cut short). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "formats/base/buf.h"
#include "formats/base/utf8.h"

#include <string.h>

static void test_round_trip(void **state)
{
	(void)state;
	for (uint32_t cp = 0; cp <= 0x10ffff; cp++) {
		if (cp >= 0xd800 && cp <= 0xdfff)
			continue;
		uint8_t b[4];
		size_t n = floe_utf8_put(b, cp);
		assert_int_equal(n, cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4);
		uint32_t back = 0;
		assert_int_equal(floe_utf8_get(b, n, &back), n);
		assert_int_equal(back, cp);
		assert_int_equal(floe_utf8_get(b, n, NULL), n);
		if (n > 1)
			assert_int_equal(floe_utf8_get(b, n - 1, &back), 0); /* cut short */
	}
}

static void test_ill_formed(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		size_t n;
	} bad[] = {
	    {"\x80", 1},		 /* continuation byte */
	    {"\xc0\xaf", 2},		 /* overlong '/' */
	    {"\xc1\xbf", 2},		 /* overlong */
	    {"\xe0\x80\xaf", 3},	 /* overlong */
	    {"\xe0\x9f\xbf", 3},	 /* overlong below U+0800 */
	    {"\xed\xa0\x80", 3},	 /* U+D800 */
	    {"\xed\xbf\xbf", 3},	 /* U+DFFF */
	    {"\xf0\x8f\xbf\xbf", 4}, /* overlong below U+10000 */
	    {"\xf4\x90\x80\x80", 4}, /* U+110000 */
	    {"\xf5\x80\x80\x80", 4},
	    {"\xff", 1},
	    {"\xc3\x28", 2}, /* second byte not a continuation */
	    {"\xe2\x82\x28", 3},
	    {"\xf0\x9f\x98\x28", 4},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint32_t cp = 7;
		if (floe_utf8_get((const uint8_t *)bad[i].s, bad[i].n, &cp) != 0)
			fail_msg("case %zu accepted", i);
		assert_int_equal(cp, 7); /* untouched */
	}
	/* Only the first sequence counts. */
	assert_int_equal(floe_utf8_get((const uint8_t *)"\xc3\xa9\xff", 3, NULL), 2);
	assert_int_equal(floe_utf8_get((const uint8_t *)"a\xff", 2, NULL), 1);
}

/* Validation, repair and decoding answer from one table: for every string of up to
 * three bytes drawn from the bytes where the table's ranges change, a string is valid
 * exactly when decoding walks it to its end, and repair leaves exactly those alone. */
static void test_one_table(void **state)
{
	(void)state;
	static const uint8_t b[] = {0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0,
				    0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0,
				    0xf1, 0xf3, 0xf4, 0xf5, 0xff};
	const size_t nb = sizeof(b);
	struct floe_buf scratch;
	floe_buf_init(&scratch, NULL, 64);
	for (size_t k = 0; k < nb * nb * nb; k++) {
		uint8_t s[3] = {b[k % nb], b[k / nb % nb], b[k / nb / nb]};
		for (size_t n = 1; n <= 3; n++) {
			size_t i = 0, l;
			while (i < n && (l = floe_utf8_get(s + i, n - i, NULL)))
				i += l;
			assert_int_equal(floe_utf8_valid(s, n), i);
			const uint8_t *out;
			size_t out_len;
			uint64_t replaced = 0;
			assert_int_equal(floe_utf8_repair(s, n, &scratch, &out, &out_len, &replaced), 0);
			assert_int_equal(replaced == 0, i == n);
			assert_int_equal(floe_utf8_valid(out, out_len), out_len);
		}
	}
	floe_buf_fini(&scratch);
}

/* The length of the well-formed prefix of s[0..n), sequence by sequence. */
static size_t walk(const uint8_t *s, size_t n)
{
	size_t i = 0, l;
	while (i < n && (l = floe_utf8_get(s + i, n - i, NULL)))
		i += l;
	return i;
}

/* Values of 1 to 100 bytes, ASCII but for one sequence (well-formed or not, of 1 to 4
 * bytes, cut short at the end) at every offset: floe_utf8_valid's word-at-a-time paths
 * (a short value at once, 8 and 32 bytes, the overlapping tails of 8 and 32, several
 * 32-byte steps, the general loop from where they stop) agree with the walk. */
static void test_every_offset(void **state)
{
	(void)state;
	static const uint8_t seqs[][4] = {
	    {0x80}, {0xff}, {0xc3, 0xa9}, {0xc3}, {0xe2, 0x82, 0xac}, {0xe2, 0x82},
	    {0xed, 0xa0, 0x80}, {0xf0, 0x9f, 0x98, 0x80}, {0xf0, 0x9f, 0x98}, {0xf4, 0x90, 0x80, 0x80},
	};
	static const size_t lens[] = {1, 1, 2, 1, 3, 2, 3, 4, 3, 4};
	uint8_t v[100];
	for (size_t n = 1; n <= sizeof(v); n++) {
		memset(v, 'a', n);
		assert_int_equal(floe_utf8_valid(v, n), n);
		for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++) {
			for (size_t at = 0; at < n; at++) {
				memset(v, 'a', n);
				size_t m = lens[k] < n - at ? lens[k] : n - at;
				memcpy(v + at, seqs[k], m);
				assert_int_equal(floe_utf8_valid(v, n), walk(v, n));
			}
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_ill_formed),
	    cmocka_unit_test(test_one_table),
	    cmocka_unit_test(test_every_offset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
