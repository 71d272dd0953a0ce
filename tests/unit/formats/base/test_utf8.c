/* Unit tests for formats/base/utf8: every code point round-trips through put and get,
 * and get refuses what Unicode calls ill-formed (overlong forms, surrogates, code points
 * above U+10FFFF, stray continuation bytes, sequences cut short). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "formats/base/utf8.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip),
	    cmocka_unit_test(test_ill_formed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
