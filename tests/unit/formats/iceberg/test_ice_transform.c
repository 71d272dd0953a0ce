/* Tests of the Iceberg partition transforms against the spec's Appendix B hash values,
 * PyIceberg's bucket results, known day/hour values and pre-1970 floor division, the
 * partition path strings and the UTF-8 bound truncation rules of Java's UnicodeUtil. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/error.h"
#include "formats/iceberg/transform.h"

static void test_murmur3(void **state)
{
	(void)state;
	/* Appendix B; ints, dates and timestamps hash as 8-byte little-endian longs. */
	static const uint8_t l34[8] = {34};
	assert_int_equal((int32_t)floe_ice_murmur3_32(l34, 8, 0), 2017239379);
	assert_int_equal((int32_t)floe_ice_murmur3_32("iceberg", 7, 0), 1210000089);
	static const uint8_t d17486[8] = {0x4e, 0x44}; /* 17486 = 0x444e */
	assert_int_equal((int32_t)floe_ice_murmur3_32(d17486, 8, 0), -653330422);
	int64_t ts = 1510871468000000LL;
	uint8_t tsb[8];
	for (int i = 0; i < 8; i++)
		tsb[i] = (uint8_t)((uint64_t)ts >> (8 * i));
	assert_int_equal((int32_t)floe_ice_murmur3_32(tsb, 8, 0), -2047944441);
	int64_t ts1 = ts + 1;
	for (int i = 0; i < 8; i++)
		tsb[i] = (uint8_t)((uint64_t)ts1 >> (8 * i));
	assert_int_equal((int32_t)floe_ice_murmur3_32(tsb, 8, 0), -1207196810);
	static const uint8_t b4[4] = {0, 1, 2, 3};
	assert_int_equal((int32_t)floe_ice_murmur3_32(b4, 4, 0), -188683207);
	/* time 22:31:08 = 81068000000 µs. */
	int64_t t = 81068000000LL;
	for (int i = 0; i < 8; i++)
		tsb[i] = (uint8_t)((uint64_t)t >> (8 * i));
	assert_int_equal((int32_t)floe_ice_murmur3_32(tsb, 8, 0), -662762989);
	/* uuid f79c3e09-677c-4bbd-a479-3f349cb785e7, 16 bytes big-endian. */
	static const uint8_t uuid[16] = {0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
					 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7};
	assert_int_equal((int32_t)floe_ice_murmur3_32(uuid, 16, 0), 1488055340);
	/* Tails of 1, 2 and 3 bytes and the empty input (reference murmur3 values). */
	assert_int_equal(floe_ice_murmur3_32("", 0, 0), 0);
	assert_int_equal(floe_ice_murmur3_32("", 0, 1), 0x514e28b7u);
	assert_int_equal(floe_ice_murmur3_32("a", 1, 0), 0x3c2569b2u);
	assert_int_equal(floe_ice_murmur3_32("ab", 2, 0), 0x9bbfd75fu);
	assert_int_equal(floe_ice_murmur3_32("abc", 3, 0), 0xb3dd93fau);
}

static void test_bucket(void **state)
{
	(void)state;
	assert_int_equal(floe_ice_bucket_long(34, 100), 79);
	assert_int_equal(floe_ice_bucket_long(17486, 100), 26);
	assert_int_equal(floe_ice_bucket_long(1510871468000000LL, 100), 7);
	assert_int_equal(floe_ice_bucket_bytes("iceberg", 7, 100), 89);
	static const uint8_t uuid[16] = {0xf7, 0x9c, 0x3e, 0x09, 0x67, 0x7c, 0x4b, 0xbd,
					 0xa4, 0x79, 0x3f, 0x34, 0x9c, 0xb7, 0x85, 0xe7};
	assert_int_equal(floe_ice_bucket_bytes(uuid, 16, 100), 40);
	/* (2017239379 & 0x7fffffff) % 16 = 3; a negative hash keeps its low 31 bits. */
	assert_int_equal(floe_ice_bucket_long(34, 16), 2017239379 % 16);
	assert_int_equal(floe_ice_bucket_long(17486, 1000), (int)((uint32_t)-653330422 & 0x7fffffff) % 1000);
	assert_int_equal(floe_ice_bucket_long(34, 0), 0);
}

static void test_time(void **state)
{
	(void)state;
	int64_t t = 1684161045000000LL; /* 2023-05-15T14:30:45Z */
	assert_int_equal(floe_ice_day_from_us(t), 19492);
	assert_int_equal(floe_ice_hour_from_us(t), 467822);
	assert_int_equal(floe_ice_month_from_us(t), (2023 - 1970) * 12 + 4);
	assert_int_equal(floe_ice_year_from_us(t), 53);
	assert_int_equal(floe_ice_day_from_us(0), 0);
	assert_int_equal(floe_ice_day_from_us(-1), -1);
	assert_int_equal(floe_ice_hour_from_us(-1), -1);
	assert_int_equal(floe_ice_month_from_us(-1), -1);
	assert_int_equal(floe_ice_year_from_us(-1), -1);
	assert_int_equal(floe_ice_day_from_us(-86400000000LL), -1);
	assert_int_equal(floe_ice_day_from_us(-86400000001LL), -2);
	assert_int_equal(floe_ice_hour_from_us(-3600000000LL), -1);
	assert_int_equal(floe_ice_hour_from_us(-3600000001LL), -2);
	/* 1969-02-28T00:00:00Z = day -307: month -11, year -1. */
	assert_int_equal(floe_ice_month_from_us(-307LL * 86400000000LL), -11);
	/* 2000-02-29 (leap day) = day 11016; 2000-03-01 = 11017. */
	assert_int_equal(floe_ice_month_from_us(11016LL * 86400000000LL), 30 * 12 + 1);
	assert_int_equal(floe_ice_month_from_us(11017LL * 86400000000LL), 30 * 12 + 2);
}

static void test_human(void **state)
{
	(void)state;
	char s[32];
	assert_int_equal(floe_ice_human_day(19492, s, sizeof(s)), 0);
	assert_string_equal(s, "2023-05-15");
	assert_int_equal(floe_ice_human_hour(467822, s, sizeof(s)), 0);
	assert_string_equal(s, "2023-05-15-14");
	assert_int_equal(floe_ice_human_day(0, s, sizeof(s)), 0);
	assert_string_equal(s, "1970-01-01");
	assert_int_equal(floe_ice_human_day(-1, s, sizeof(s)), 0);
	assert_string_equal(s, "1969-12-31");
	assert_int_equal(floe_ice_human_hour(-1, s, sizeof(s)), 0);
	assert_string_equal(s, "1969-12-31-23");
	assert_int_equal(floe_ice_human_day(11016, s, sizeof(s)), 0);
	assert_string_equal(s, "2000-02-29");
	assert_int_equal(floe_ice_human_day(19492, s, 10), FLOE_ELIMIT);
	assert_int_equal(floe_ice_human_day(19492, s, 11), 0);
	assert_int_equal(floe_ice_human_hour(467822, s, 13), FLOE_ELIMIT);
	/* month(ts) and year(ts) folders as Iceberg's own writers name them. */
	assert_int_equal(floe_ice_human_month(683, s, sizeof(s)), 0);
	assert_string_equal(s, "2026-12");
	assert_int_equal(floe_ice_human_month(0, s, sizeof(s)), 0);
	assert_string_equal(s, "1970-01");
	assert_int_equal(floe_ice_human_month(-1, s, sizeof(s)), 0);
	assert_string_equal(s, "1969-12");
	assert_int_equal(floe_ice_human_year(56, s, sizeof(s)), 0);
	assert_string_equal(s, "2026");
	assert_int_equal(floe_ice_human_year(-1, s, sizeof(s)), 0);
	assert_string_equal(s, "1969");
	assert_int_equal(floe_ice_human_month(683, s, 7), FLOE_ELIMIT);
}

static void test_parse(void **state)
{
	(void)state;
	static const struct {
		const char *s;
		enum floe_ice_transform_kind k;
		int32_t p;
	} ok[] = {
		{"identity", FLOE_ICE_IDENTITY, 0}, {"year", FLOE_ICE_YEAR, 0},
		{"month", FLOE_ICE_MONTH, 0},       {"day", FLOE_ICE_DAY, 0},
		{"hour", FLOE_ICE_HOUR, 0},         {"void", FLOE_ICE_VOID, 0},
		{"bucket[16]", FLOE_ICE_BUCKET, 16}, {"truncate[4]", FLOE_ICE_TRUNCATE, 4},
		{"bucket[2147483647]", FLOE_ICE_BUCKET, 2147483647},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct floe_ice_transform t;
		assert_int_equal(floe_ice_transform_parse(ok[i].s, strlen(ok[i].s), &t), 0);
		assert_int_equal(t.kind, ok[i].k);
		assert_int_equal(t.param, ok[i].p);
		char name[32];
		assert_int_equal(floe_ice_transform_name(&t, name, sizeof(name)), 0);
		assert_string_equal(name, ok[i].s);
	}
	static const char *const bad[] = {"", "days", "bucket", "bucket[]", "bucket[0]", "bucket[-1]",
					  "bucket[16", "bucket[2147483648]", "truncate[x]", "Day", "day "};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct floe_ice_transform t;
		assert_int_equal(floe_ice_transform_parse(bad[i], strlen(bad[i]), &t), FLOE_EPARSE);
	}
	struct floe_ice_transform t = {FLOE_ICE_BUCKET, 16};
	char small[5];
	assert_int_equal(floe_ice_transform_name(&t, small, sizeof(small)), FLOE_ELIMIT);
}

static void test_truncate(void **state)
{
	(void)state;
	/* "aé€😀b": 1, 2, 3, 4, 1 bytes. */
	const char *s = "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80" "b";
	size_t len = strlen(s);
	assert_int_equal(floe_ice_truncate_lower(s, len, 0), 0);
	assert_int_equal(floe_ice_truncate_lower(s, len, 1), 1);
	assert_int_equal(floe_ice_truncate_lower(s, len, 2), 3);
	assert_int_equal(floe_ice_truncate_lower(s, len, 3), 6);
	assert_int_equal(floe_ice_truncate_lower(s, len, 4), 10);
	assert_int_equal(floe_ice_truncate_lower(s, len, 5), 11);
	assert_int_equal(floe_ice_truncate_lower(s, len, 16), 11);

	char out[64];
	/* Not longer than n: no truncation needed, 0. */
	assert_int_equal(floe_ice_truncate_upper(s, len, 5, out, sizeof(out)), 0);
	assert_int_equal(floe_ice_truncate_upper("abc", 3, 16, out, sizeof(out)), 0);
	/* "ab" from "abc" -> "ac". */
	assert_int_equal(floe_ice_truncate_upper("abc", 3, 2, out, sizeof(out)), 2);
	assert_memory_equal(out, "ac", 2);
	/* Multibyte last code point: é (U+E9) -> ê (U+EA). */
	assert_int_equal(floe_ice_truncate_upper(s, len, 2, out, sizeof(out)), 3);
	assert_memory_equal(out, "a\xc3\xaa", 3);
	/* € (U+20AC) -> U+20AD. */
	assert_int_equal(floe_ice_truncate_upper(s, len, 3, out, sizeof(out)), 6);
	assert_memory_equal(out, "a\xc3\xa9\xe2\x82\xad", 6);
	/* 😀 (U+1F600) -> U+1F601. */
	assert_int_equal(floe_ice_truncate_upper(s, len, 4, out, sizeof(out)), 10);
	assert_memory_equal(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x81", 10);
	/* U+007F -> U+0080 changes the encoded length. */
	assert_int_equal(floe_ice_truncate_upper("\x7f\x7f", 2, 1, out, sizeof(out)), 2);
	assert_memory_equal(out, "\xc2\x80", 2);
	/* U+D7FF + 1 lands in the surrogates: skip to U+E000. */
	assert_int_equal(floe_ice_truncate_upper("\xed\x9f\xbfz", 4, 1, out, sizeof(out)), 3);
	assert_memory_equal(out, "\xee\x80\x80", 3);
	/* U+10FFFF cannot be incremented: drop it and increment the one before. */
	const char *m = "a\xf4\x8f\xbf\xbfz";
	assert_int_equal(floe_ice_truncate_upper(m, strlen(m), 2, out, sizeof(out)), 1);
	assert_memory_equal(out, "b", 1);
	/* Every kept code point at U+10FFFF: no upper bound. */
	const char *mm = "\xf4\x8f\xbf\xbf\xf4\x8f\xbf\xbfz";
	assert_int_equal(floe_ice_truncate_upper(mm, strlen(mm), 2, out, sizeof(out)), 0);
	/* Invalid UTF-8 gives no bound rather than a wrong one. */
	assert_int_equal(floe_ice_truncate_upper("\xff\xfe\xfd", 3, 1, out, sizeof(out)), 0);
	/* A too small output gives no bound. */
	assert_int_equal(floe_ice_truncate_upper("abc", 3, 2, out, 1), 0);
	/* 16 code points (Iceberg's default) of a long ASCII string. */
	const char *lng = "0123456789abcdefghij";
	assert_int_equal(floe_ice_truncate_lower(lng, 20, 16), 16);
	assert_int_equal(floe_ice_truncate_upper(lng, 20, 16, out, sizeof(out)), 16);
	assert_memory_equal(out, "0123456789abcdeg", 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_murmur3), cmocka_unit_test(test_bucket), cmocka_unit_test(test_time),
		cmocka_unit_test(test_human),   cmocka_unit_test(test_parse),  cmocka_unit_test(test_truncate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
