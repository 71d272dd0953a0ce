/* Tests of agent/parse/syslog (RFC 5424 and the detector): the examples of RFC 5424
 * section 6.5, what logger(1) sends, every NILVALUE combination, structured data with
 * escapes, BOM, RFC 3339 timestamps (fractions, offsets, invalid dates, leap second),
 * invalid PRI, field limits, failures that keep the message whole and leave the fields
 * untouched, and every prefix of valid messages. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/fields.h"
#include "agent/parse/syslog.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct floe_syslog_opts opts = {.received_us = INT64_C(1700000000000000)};

static int64_t utc_us(int y, int mo, int d, int h, int mi, int s, int64_t frac)
{
	struct tm tm = {.tm_year = y - 1900,
			.tm_mon = mo - 1,
			.tm_mday = d,
			.tm_hour = h,
			.tm_min = mi,
			.tm_sec = s};
	return (int64_t)timegm(&tm) * 1000000 + frac;
}

static void str_eq(struct floe_str s, const char *want)
{
	if (!want) {
		assert_null(s.p);
		return;
	}
	assert_non_null(s.p);
	assert_int_equal(s.len, strlen(want));
	if (s.len)
		assert_memory_equal(s.p, want, s.len);
}

static void attr_eq(const struct floe_fields *f, const char *key, const char *want)
{
	const char *v;
	size_t vl;
	assert_true(floe_fields_find(f, key, strlen(key), &v, &vl));
	assert_non_null(v);
	assert_int_equal(vl, strlen(want));
	if (vl)
		assert_memory_equal(v, want, vl);
}

/* Parses a heap copy of exactly strlen(s) bytes, so that ASan sees any over-read. */
static int parse(const char *s, struct floe_syslog_msg *m, struct floe_fields *f)
{
	size_t n = strlen(s);
	static char *copy;
	free(copy);
	copy = malloc(n ? n : 1);
	memcpy(copy, s, n);
	if (f)
		floe_fields_reset(f);
	return floe_syslog_parse(copy, n, &opts, m, f);
}

static void test_rfc_examples(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 512, &f), 0);
	struct floe_syslog_msg m;
	assert_int_equal(parse("<34>1 2003-10-11T22:14:15.003Z mymachine.example.com su - ID47 - "
			       "\xEF\xBB\xBF'su root' failed for lonvick on /dev/pts/8",
			       &m, f),
			 0);
	assert_int_equal(m.format, FLOE_SYSLOG_5424);
	assert_true(m.has_facility && m.has_severity);
	assert_int_equal(m.facility, 4);
	assert_int_equal(m.severity, 2);
	assert_true(m.has_ts);
	assert_int_equal(m.ts_us, utc_us(2003, 10, 11, 22, 14, 15, 3000));
	str_eq(m.host, "mymachine.example.com");
	str_eq(m.app, "su");
	str_eq(m.proc_id, NULL);
	str_eq(m.msg_id, "ID47");
	str_eq(m.message, "'su root' failed for lonvick on /dev/pts/8");
	assert_null(m.error);
	assert_null(m.ts_error);
	assert_int_equal(floe_fields_count(f), 0);

	assert_int_equal(parse("<165>1 2003-08-24T05:14:15.000003-07:00 192.0.2.1 myproc 8710 - - "
			       "%% It's time to make the do-nuts.",
			       &m, f),
			 0);
	assert_int_equal(m.facility, 20);
	assert_int_equal(m.severity, 5);
	assert_int_equal(m.ts_us, utc_us(2003, 8, 24, 12, 14, 15, 3));
	str_eq(m.host, "192.0.2.1");
	str_eq(m.app, "myproc");
	str_eq(m.proc_id, "8710");
	str_eq(m.msg_id, NULL);
	str_eq(m.message, "%% It's time to make the do-nuts.");

	assert_int_equal(
	    parse("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
		  "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" "
		  "eventID=\"1011\"] \xEF\xBB\xBF"
		  "An application event log entry...",
		  &m, f),
	    0);
	str_eq(m.app, "evntslog");
	str_eq(m.message, "An application event log entry...");
	assert_int_equal(floe_fields_count(f), 3);
	attr_eq(f, "exampleSDID@32473.iut", "3");
	attr_eq(f, "exampleSDID@32473.eventSource", "Application");
	attr_eq(f, "exampleSDID@32473.eventID", "1011");

	assert_int_equal(
	    parse("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
		  "[exampleSDID@32473 iut=\"3\" eventSource=\"Application\" "
		  "eventID=\"1011\"][examplePriority@32473 class=\"high\"]",
		  &m, f),
	    0);
	assert_int_equal(floe_fields_count(f), 4);
	attr_eq(f, "examplePriority@32473.class", "high");
	str_eq(m.message, "");
	floe_fields_free(f);
}

/* Lines captured from logger 2.38 (util-linux) on this machine. */
static void test_logger(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 512, &f), 0);
	struct floe_syslog_msg m;
	assert_int_equal(parse("<13>1 2026-12-03T11:42:53.886604+00:00 vm myapp 24363 ID47 "
			       "[timeQuality tzKnown=\"1\" isSynced=\"0\"][test@32473 a=\"x\\\"y\" "
			       "b=\"p\\]q\\\\r\"] hello 5424\n",
			       &m, f),
			 0);
	assert_int_equal(m.ts_us, utc_us(2026, 12, 3, 11, 42, 53, 886604));
	str_eq(m.host, "vm");
	str_eq(m.app, "myapp");
	str_eq(m.proc_id, "24363");
	str_eq(m.msg_id, "ID47");
	str_eq(m.message, "hello 5424");
	attr_eq(f, "timeQuality.tzKnown", "1");
	attr_eq(f, "timeQuality.isSynced", "0");
	attr_eq(f, "test@32473.a", "x\"y");
	attr_eq(f, "test@32473.b", "p]q\\r");

	/* --rfc5424=notime,nohost to a local socket. */
	assert_int_equal(parse("<13>1 - - root - - - nt", &m, f), 0);
	assert_false(m.has_ts);
	assert_null(m.ts_error);
	str_eq(m.host, NULL);
	str_eq(m.app, "root");
	str_eq(m.message, "nt");
	floe_fields_free(f);
}

/* Every combination of NILVALUE in the five header fields and SD, with and without MSG. */
static void test_nilvalues(void **state)
{
	static const char *const vals[5] = {"2003-10-11T22:14:15Z", "h", "a", "p", "m"};
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 4, 64, &f), 0);
	for (unsigned mask = 0; mask < 128; mask++) {
		char buf[256];
		int n = snprintf(buf, sizeof(buf), "<0>1");
		for (int k = 0; k < 5; k++)
			n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s",
				      mask & (1u << k) ? "-" : vals[k]);
		n += snprintf(buf + n, sizeof(buf) - (size_t)n, " %s",
			      mask & 32 ? "-" : "[x y=\"z\"]");
		if (!(mask & 64))
			snprintf(buf + n, sizeof(buf) - (size_t)n, " msg");
		struct floe_syslog_msg m;
		assert_int_equal(parse(buf, &m, f), 0);
		assert_int_equal(m.format, FLOE_SYSLOG_5424);
		assert_int_equal(m.has_ts, !(mask & 1));
		str_eq(m.host, mask & 2 ? NULL : "h");
		str_eq(m.app, mask & 4 ? NULL : "a");
		str_eq(m.proc_id, mask & 8 ? NULL : "p");
		str_eq(m.msg_id, mask & 16 ? NULL : "m");
		assert_int_equal(floe_fields_count(f), mask & 32 ? 0 : 1);
		str_eq(m.message, mask & 64 ? "" : "msg");
	}
	floe_fields_free(f);
}

static void test_structured_data(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 512, &f), 0);
	struct floe_syslog_msg m;
	/* Escapes: \" \\ \] lose the backslash, any other backslash stays; an unescaped ']'
	 * inside quotes is accepted; an empty value; an element without parameters. */
	assert_int_equal(
	    parse("<14>1 - - - - - [a@1 q=\"say \\\"hi\\\"\" b=\"c:\\\\dir\" "
		  "r=\"[x\\]\" o=\"\\n\\t\\x\" u=\"a]b\" e=\"\"][flag][a@1 q=\"again\"] m",
		  &m, f),
	    0);
	attr_eq(f, "a@1.q", "again"); /* duplicate SD-ID: last wins */
	attr_eq(f, "a@1.b", "c:\\dir");
	attr_eq(f, "a@1.r", "[x]");
	attr_eq(f, "a@1.o", "\\n\\t\\x");
	attr_eq(f, "a@1.u", "a]b");
	attr_eq(f, "a@1.e", "");
	attr_eq(f, "flag", "");
	str_eq(m.message, "m");
	/* UTF-8 in values passes through. */
	assert_int_equal(parse("<14>1 - - - - - [x v=\"\xC3\xA9t\xC3\xA9\"]", &m, f), 0);
	attr_eq(f, "x.v", "\xC3\xA9t\xC3\xA9");

	/* Malformed structured data: the whole message is kept, f untouched. */
	static const struct {
		const char *in, *why;
		size_t off;
	} bad[] = {
	    {"<14>1 - - - - - [x a=\"1\"", "unterminated SD-ELEMENT", 24},
	    {"<14>1 - - - - - [x a=\"1", "unterminated SD-PARAM value", 23},
	    {"<14>1 - - - - - [x a=1]", "expected '\"' before PARAM-VALUE", 21},
	    {"<14>1 - - - - - [x a]", "expected '=' after PARAM-NAME", 20},
	    {"<14>1 - - - - - [x  a=\"1\"]", "invalid PARAM-NAME", 19},
	    {"<14>1 - - - - - [ a=\"1\"]", "invalid SD-ID", 17},
	    {"<14>1 - - - - - []", "invalid SD-ID", 17},
	    {"<14>1 - - - - - [x a=\"1\"]m", "expected SP after STRUCTURED-DATA", 25},
	    {"<14>1 - - - - - -m", "expected SP after STRUCTURED-DATA", 17},
	    {"<14>1 - - - - - x", "invalid STRUCTURED-DATA", 16},
	    {"<14>1 - - - - -", "invalid MSGID", 15},
	    {"<14>1 - - - - - [x a=\"1\"x]", "expected SP or ']' in SD-ELEMENT", 24},
	    {"<14>1 - - - - - [abcdefghijabcdefghijabcdefghijabc]", "invalid SD-ID", 49},
	};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		floe_fields_reset(f);
		assert_int_equal(floe_fields_add(f, "keep", 4, "me", 2), 0);
		size_t n = strlen(bad[k].in);
		assert_int_equal(floe_syslog_parse(bad[k].in, n, &opts, &m, f), FLOE_EPARSE);
		assert_int_equal(m.format, FLOE_SYSLOG_INVALID);
		assert_string_equal(m.error, bad[k].why);
		assert_int_equal(m.error_off, bad[k].off);
		assert_false(m.has_facility || m.has_severity || m.has_ts);
		assert_ptr_equal(m.message.p, bad[k].in);
		assert_int_equal(m.message.len, n);
		assert_null(m.host.p);
		assert_int_equal(floe_fields_count(f), 1);
	}
	/* 32-character names are the limit. */
	assert_int_equal(parse("<14>1 - - - - - [abcdefghijabcdefghijabcdefghijab "
			       "abcdefghijabcdefghijabcdefghijab=\"v\"]",
			       &m, f),
			 0);
	floe_fields_free(f);
}

static void test_bom(void **state)
{
	struct floe_syslog_msg m;
	assert_int_equal(parse("<14>1 - - - - - - \xEF\xBB\xBFhello", &m, NULL), 0);
	str_eq(m.message, "hello");
	assert_int_equal(parse("<14>1 - - - - - - \xEF\xBB\xBF", &m, NULL), 0);
	str_eq(m.message, "");
	/* Only at the start, and only whole. */
	assert_int_equal(parse("<14>1 - - - - - - a\xEF\xBB\xBF", &m, NULL), 0);
	str_eq(m.message, "a\xEF\xBB\xBF");
	assert_int_equal(parse("<14>1 - - - - - - \xEF\xBB", &m, NULL), 0);
	str_eq(m.message, "\xEF\xBB");
	/* MSG bytes are arbitrary: a leading space, NUL and LF inside are kept. */
	assert_int_equal(floe_syslog_parse("<14>1 - - - - - -  a\0b\nc", 24, &opts, &m, NULL), 0);
	assert_int_equal(m.message.len, 6);
	assert_memory_equal(m.message.p, " a\0b\nc", 6);
}

static void expect_ts(const char *ts, int64_t want)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "<14>1 %s h a p m - msg", ts);
	struct floe_syslog_msg m;
	assert_int_equal(parse(buf, &m, NULL), 0);
	assert_true(m.has_ts);
	assert_null(m.ts_error);
	assert_int_equal(m.ts_us, want);
}

/* An invalid timestamp fails that field only: ts absent, the rest parsed. */
static void expect_bad_ts(const char *ts, const char *why, size_t off)
{
	char buf[128];
	snprintf(buf, sizeof(buf), "<14>1 %s h a p m - msg", ts);
	struct floe_syslog_msg m;
	assert_int_equal(parse(buf, &m, NULL), 0);
	assert_int_equal(m.format, FLOE_SYSLOG_5424);
	assert_false(m.has_ts);
	assert_string_equal(m.ts_error, why);
	assert_int_equal(m.ts_error_off, 6 + off);
	str_eq(m.host, "h");
	str_eq(m.msg_id, "m");
	str_eq(m.message, "msg");
}

static void test_timestamps(void **state)
{
	expect_ts("2003-10-11T22:14:15Z", utc_us(2003, 10, 11, 22, 14, 15, 0));
	expect_ts("2003-10-11t22:14:15z", utc_us(2003, 10, 11, 22, 14, 15, 0));
	expect_ts("2003-10-11T22:14:15.1Z", utc_us(2003, 10, 11, 22, 14, 15, 100000));
	expect_ts("2003-10-11T22:14:15.123456789Z", utc_us(2003, 10, 11, 22, 14, 15, 123456));
	expect_ts("2003-10-11T22:14:15.999999999+00:00", utc_us(2003, 10, 11, 22, 14, 15, 999999));
	expect_ts("2003-10-11T22:14:15+05:30", utc_us(2003, 10, 11, 16, 44, 15, 0));
	expect_ts("2003-10-11T22:14:15-23:59", utc_us(2003, 10, 12, 22, 13, 15, 0));
	expect_ts("2024-02-29T00:00:00Z", utc_us(2024, 2, 29, 0, 0, 0, 0));
	expect_ts("2000-02-29T00:00:00Z", utc_us(2000, 2, 29, 0, 0, 0, 0));
	expect_ts("1969-12-31T23:59:59.5Z", -500000);
	/* A leap second is clamped to the last µs of its minute. */
	expect_ts("2016-12-31T23:59:60Z", utc_us(2016, 12, 31, 23, 59, 59, 999999));
	expect_ts("2016-12-31T23:59:60.5Z", utc_us(2016, 12, 31, 23, 59, 59, 999999));

	expect_bad_ts("2023-02-29T00:00:00Z", "TIMESTAMP out of range", 8);
	expect_bad_ts("2003-02-30T00:00:00Z", "TIMESTAMP out of range", 8);
	expect_bad_ts("2003-04-31T00:00:00Z", "TIMESTAMP out of range", 8);
	expect_bad_ts("1900-02-29T00:00:00Z", "TIMESTAMP out of range", 8);
	expect_bad_ts("2003-13-01T00:00:00Z", "TIMESTAMP out of range", 5);
	expect_bad_ts("2003-00-01T00:00:00Z", "TIMESTAMP out of range", 5);
	expect_bad_ts("2003-01-00T00:00:00Z", "TIMESTAMP out of range", 8);
	expect_bad_ts("2003-01-01T24:00:00Z", "TIMESTAMP out of range", 11);
	expect_bad_ts("2003-01-01T23:60:00Z", "TIMESTAMP out of range", 14);
	expect_bad_ts("2003-01-01T23:00:61Z", "TIMESTAMP out of range", 17);
	expect_bad_ts("2003-01-01T23:00:00+24:00", "TIMESTAMP out of range", 20);
	expect_bad_ts("2003-01-01T23:00:00+01:60", "TIMESTAMP out of range", 20);
	expect_bad_ts("2003-01-01T23:00:00.1234567890Z", "invalid TIMESTAMP", 29);
	expect_bad_ts("2003-01-01T23:00:00", "invalid TIMESTAMP", 19);
	expect_bad_ts("2003-01-01T23:00:00.Z", "invalid TIMESTAMP", 20);
	expect_bad_ts("2003-01-01T23:00:00+0100", "invalid TIMESTAMP", 22);
	expect_bad_ts("2003-1-01T23:00:00Z", "invalid TIMESTAMP", 6);
	expect_bad_ts("2003-01-01T23:00:00Zx", "invalid TIMESTAMP", 20);
	expect_bad_ts("Oct-11", "invalid TIMESTAMP", 0);
	expect_bad_ts("now", "invalid TIMESTAMP", 0);
}

static void test_header_errors(void **state)
{
	static const struct {
		const char *in, *why;
		size_t off;
	} bad[] = {
	    {"<256>1 - - - - - -", "PRI over 191", 1},
	    {"<192>1 - - - - - -", "PRI over 191", 1},
	    {"<01>1 - - - - - -", "PRI with a leading zero", 1},
	    {"<00>1 - - - - - -", "PRI with a leading zero", 1},
	    {"<1234>1 - - - - - -", "PRI over 3 digits", 4},
	    {"<13 1 - - - - - -", "PRI without '>'", 3},
	    {"<13", "PRI without '>'", 3},
	    {"<", "PRI without digits", 1},
	    {"<>1 - - - - - -", "PRI without digits", 1},
	    {"<x>1 - - - - - -", "PRI without digits", 1},
	    {"<-1>1 - - - - - -", "PRI without digits", 1},
	    {"<13>1  - - - - - -", "invalid TIMESTAMP", 6},
	    {"<13>1 - - - - - ", "missing STRUCTURED-DATA", 16},
	    {"<13>1 - host\x01name - - - -", "invalid HOSTNAME", 12},
	    {"<13>1 -", "invalid TIMESTAMP", 7},
	};
	struct floe_syslog_msg m;
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		assert_int_equal(parse(bad[k].in, &m, NULL), FLOE_EPARSE);
		assert_int_equal(m.format, FLOE_SYSLOG_INVALID);
		assert_string_equal(m.error, bad[k].why);
		assert_int_equal(m.error_off, bad[k].off);
		assert_false(m.has_facility);
		str_eq(m.message, bad[k].in);
	}
	/* Boundaries that are valid. */
	assert_int_equal(parse("<0>1 - - - - - -", &m, NULL), 0);
	assert_int_equal(m.facility, 0);
	assert_int_equal(m.severity, 0);
	assert_int_equal(parse("<191>1 - - - - - -", &m, NULL), 0);
	assert_int_equal(m.facility, 23);
	assert_int_equal(m.severity, 7);
	/* A version other than 1 is not RFC 5424: the BSD reader keeps it as a message. */
	assert_int_equal(parse("<13>2 - - - - - - x", &m, NULL), 0);
	assert_int_equal(m.format, FLOE_SYSLOG_3164);
	str_eq(m.message, "2 - - - - - - x");
	assert_int_equal(floe_syslog_parse_5424("<13>2 - - - - - - x", 19, &opts, &m, NULL),
			 FLOE_EPARSE);
	assert_string_equal(m.error, "unsupported VERSION");
}

static void field_limit(const char *fmt, size_t n, bool ok, const char *why)
{
	char val[300], buf[400];
	memset(val, 'x', n);
	val[n] = 0;
	snprintf(buf, sizeof(buf), fmt, val);
	struct floe_syslog_msg m;
	assert_int_equal(parse(buf, &m, NULL), ok ? 0 : FLOE_EPARSE);
	if (!ok)
		assert_string_equal(m.error, why);
}

static void test_field_limits(void **state)
{
	field_limit("<13>1 - %s - - - -", 255, true, NULL);
	field_limit("<13>1 - %s - - - -", 256, false, "invalid HOSTNAME");
	field_limit("<13>1 - - %s - - -", 48, true, NULL);
	field_limit("<13>1 - - %s - - -", 49, false, "invalid APP-NAME");
	field_limit("<13>1 - - - %s - -", 128, true, NULL);
	field_limit("<13>1 - - - %s - -", 129, false, "invalid PROCID");
	field_limit("<13>1 - - - - %s -", 32, true, NULL);
	field_limit("<13>1 - - - - %s -", 33, false, "invalid MSGID");
}

/* Every prefix of valid messages: never a crash or an over-read (heap copies of exactly
 * the prefix), always either parsed or kept whole, and slices inside the input. */
static void check_prefixes(const char *s)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 128, &f), 0);
	size_t n = strlen(s);
	for (size_t k = 0; k <= n; k++) {
		char *p = malloc(k ? k : 1);
		memcpy(p, s, k);
		struct floe_syslog_msg m;
		floe_fields_reset(f);
		int rc = floe_syslog_parse(p, k, &opts, &m, f);
		assert_true(rc == 0 || rc == FLOE_EPARSE);
		assert_non_null(m.message.p);
		if (rc != 0) {
			assert_int_equal(m.format, FLOE_SYSLOG_INVALID);
			assert_false(m.has_facility || m.has_severity);
			assert_ptr_equal(m.message.p, p);
			assert_int_equal(floe_fields_count(f), 0);
			assert_true(m.error_off <= k);
		}
		const struct floe_str *all[] = {&m.host, &m.app, &m.proc_id, &m.msg_id, &m.message};
		for (size_t j = 0; j < 5; j++)
			if (all[j]->p && all[j]->len)
				assert_true(all[j]->p >= p && all[j]->p + all[j]->len <= p + k);
		free(p);
	}
	floe_fields_free(f);
}

static void test_prefixes(void **state)
{
	check_prefixes("<165>1 2003-10-11T22:14:15.003Z mymachine.example.com evntslog - ID47 "
		       "[exampleSDID@32473 iut=\"3\" eventSource=\"App\\\"lication\" "
		       "eventID=\"1011\"][examplePriority@32473 class=\"high\"] \xEF\xBB\xBFmsg");
	check_prefixes("<34>1 2003-10-11T22:14:15.003+02:00 - su 77 - - msg\r\n");
	check_prefixes("<34>Oct 11 22:14:15 mymachine su[12]: 'su root' failed");
	check_prefixes("<189>123: *Mar  1 00:00:00.123 UTC: %SYS-5-CONFIG_I: Configured");
	check_prefixes("<13>2024-03-01T12:00:00.123456+01:00 host tag: msg");
}

static void test_capacity(void **state)
{
	/* Arena for the first key only: the second pair is dropped and counted. */
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 6, &f), 0);
	struct floe_syslog_msg m;
	assert_int_equal(parse("<14>1 - - - - - [x a=\"1\" bb=\"2\"] m", &m, f), 0);
	assert_int_equal(floe_fields_count(f), 1);
	assert_int_equal(floe_fields_dropped(f), 1);
	attr_eq(f, "x.a", "1");
	str_eq(m.message, "m");
	/* An escaped value needs room for key and value. */
	assert_int_equal(parse("<14>1 - - - - - [x a=\"1\\\"\"] m", &m, f), 0);
	assert_int_equal(floe_fields_count(f), 1);
	assert_int_equal(parse("<14>1 - - - - - [x a=\"12\\\"\"] m", &m, f), 0);
	assert_int_equal(floe_fields_count(f), 0);
	assert_int_equal(floe_fields_dropped(f), 1);
	floe_fields_free(f);
	/* Without a collector the SD is still checked. */
	assert_int_equal(parse("<14>1 - - - - - [x a=\"1\"] m", &m, NULL), 0);
	assert_int_equal(parse("<14>1 - - - - - [x a=\"1] m", &m, NULL), FLOE_EPARSE);
}

static void test_error_attrs(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 256, &f), 0);
	struct floe_syslog_msg m;
	assert_int_equal(parse("<999>x", &m, f), FLOE_EPARSE);
	assert_int_equal(floe_syslog_error_attrs(&m, f), 0);
	attr_eq(f, "syslog.error", "PRI over 191 at byte 1");
	assert_int_equal(parse("<14>1 2003-02-30T00:00:00Z - - - - - m", &m, f), 0);
	assert_int_equal(floe_syslog_error_attrs(&m, f), 0);
	assert_int_equal(floe_fields_count(f), 1);
	attr_eq(f, "syslog.ts_error", "TIMESTAMP out of range at byte 14");
	floe_fields_free(f);
	/* No room: dropped and counted. */
	f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 4, &f), 0);
	assert_int_equal(parse("<999>x", &m, f), FLOE_EPARSE);
	assert_int_equal(floe_syslog_error_attrs(&m, f), FLOE_ELIMIT);
	assert_int_equal(floe_fields_count(f), 0);
	assert_int_equal(floe_fields_dropped(f), 1);
	floe_fields_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rfc_examples),  cmocka_unit_test(test_logger),
	    cmocka_unit_test(test_nilvalues),	  cmocka_unit_test(test_structured_data),
	    cmocka_unit_test(test_bom),		  cmocka_unit_test(test_timestamps),
	    cmocka_unit_test(test_header_errors), cmocka_unit_test(test_field_limits),
	    cmocka_unit_test(test_prefixes),	  cmocka_unit_test(test_capacity),
	    cmocka_unit_test(test_error_attrs),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
