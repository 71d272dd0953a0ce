/* Tests of agent/parse/access_log: hand-checked common and combined lines (Apache's
 * documentation example, nginx lines with escapes, IPv6, HTTP/0.9, a TLS handshake sent
 * to a plain port), near misses with the offset they fail at, every prefix of a line, each
 * month and digit place of the time, runs of backslashes before a quote, the loghub
 * Apache sample (an error log: every line refused, none crashes), and the scanner against
 * its general form (access_log_ref.h) on the fuzz corpus and every mutation of it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/access_log.h"
#include "agent/parse/fields.h"
#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "access_log_ref.h"
#include "fields_expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct floe_fields *f;

static int setup(void **state)
{
	return floe_fields_new(NULL, 16, 0, &f);
}

static int teardown(void **state)
{
	floe_fields_free(f);
	return 0;
}

static void expect_val(const char *k, const char *v)
{
	expect_field(f, k, v, strlen(v));
}

static void expect_absent(const char *k)
{
	const char *got;
	size_t gl;
	assert_false(floe_fields_find(f, k, strlen(k), &got, &gl));
}

static void parse_ok(const char *line, bool combined, int64_t want_ts)
{
	floe_fields_reset(f);
	int64_t ts = 0;
	struct floe_err why = {0};
	int rc = floe_access_log_parse(line, strlen(line), combined, f, &ts, &why);
	if (rc)
		fail_msg("%s: %s", line, why.msg);
	assert_int_equal(ts, want_ts);
	/* Every field is one of the names the scanner declares (the decoder skips the
	 * column rules' lookups by that list). */
	const char *const *keys = floe_fields_keys(f);
	const size_t *klens = floe_fields_key_lens(f);
	for (size_t i = 0; i < floe_fields_count(f); i++) {
		bool known = false;
		for (const char *const *n = floe_access_log_field_names(); *n && !known; n++)
			known = strlen(*n) == klens[i] && memcmp(*n, keys[i], klens[i]) == 0;
		if (!known)
			fail_msg("%s: field %.*s is not in floe_access_log_field_names", line,
				 (int)klens[i], keys[i]);
	}
}

static void test_common(void **state)
{
	const char *line = "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] "
			   "\"GET /apache_pb.gif HTTP/1.0\" 200 2326";
	parse_ok(line, false, 971211336LL * 1000000);
	assert_int_equal(floe_fields_count(f), 7);
	expect_val("client", "127.0.0.1");
	expect_absent("ident");
	expect_val("user", "frank");
	expect_val("method", "GET");
	expect_val("path", "/apache_pb.gif");
	expect_val("protocol", "HTTP/1.0");
	expect_val("status", "200");
	expect_val("bytes", "2326");
	expect_absent("request");
	/* Slices of the line, not copies. */
	assert_ptr_equal(floe_fields_vals(f)[0], line);
	/* Trailing spaces are fine; a response without a body has bytes "-". */
	parse_ok("::1 - - [01/Jan/1970:00:00:00 +0000] \"HEAD / HTTP/1.1\" 304 -  ", false, 0);
	expect_val("client", "::1");
	expect_absent("user");
	expect_absent("bytes");
	expect_val("status", "304");
	/* HTTP/0.9: no protocol. */
	parse_ok("h - - [29/Feb/2024:23:59:60 +0100] \"GET /x\" 200 0", false,
		 1709247600LL * 1000000 - 1); /* a leap second: the last µs of its minute */
	expect_val("path", "/x");
	expect_absent("protocol");
}

static void test_combined(void **state)
{
	/* nginx's default format; $time_local in UTC+2. */
	parse_ok("203.0.113.7 - alice [03/Dec/2026:14:05:09 +0200] \"POST /api/v1/items?id=3&x=%20 "
		 "HTTP/2.0\" 201 17 \"https://example.com/a b\" \"Mozilla/5.0 (X11; Linux x86_64) "
		 "curl/8.5\"",
		 true, (1796306709LL - 7200) * 1000000);
	assert_int_equal(floe_fields_count(f), 9);
	expect_val("client", "203.0.113.7");
	expect_val("user", "alice");
	expect_val("method", "POST");
	expect_val("path", "/api/v1/items?id=3&x=%20");
	expect_val("protocol", "HTTP/2.0");
	expect_val("status", "201");
	expect_val("bytes", "17");
	expect_val("referer", "https://example.com/a b");
	expect_val("user_agent", "Mozilla/5.0 (X11; Linux x86_64) curl/8.5");
	/* Apache escapes a quote as \", nginx as \x22; both stay as written. A referer of
	 * "-" is absent. What nginx configurations append after the agent is ignored. */
	parse_ok("10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /q?\\\"a\\\" HTTP/1.1\" 200 5 "
		 "\"-\" \"say \\\"hi\\\" \\x22x\\x22\" \"10.1.1.1\" rt=0.003",
		 true, 971211336LL * 1000000);
	expect_val("path", "/q?\\\"a\\\"");
	expect_absent("referer");
	expect_val("user_agent", "say \\\"hi\\\" \\x22x\\x22");
	/* A TLS handshake sent to a plain-text port: the request kept whole; an empty one
	 * too; a request of "-" absent. */
	parse_ok("198.51.100.2 - - [10/Oct/2000:13:55:36 -0700] \"\\x16\\x03\\x01\\x00\\xA5\" 400 "
		 "157 \"-\" \"-\"",
		 true, 971211336LL * 1000000);
	expect_val("request", "\\x16\\x03\\x01\\x00\\xA5");
	expect_absent("method");
	expect_absent("user_agent");
	parse_ok("h - - [10/Oct/2000:13:55:36 -0700] \"\" 400 0 \"-\" \"-\"", true,
		 971211336LL * 1000000);
	expect_val("request", "");
	parse_ok("h - - [10/Oct/2000:13:55:36 -0700] \"-\" 408 0 \"-\" \"-\"", true,
		 971211336LL * 1000000);
	expect_absent("request");
	parse_ok("h - - [10/Oct/2000:13:55:36 -0700] \"get / HTTP/1.1 extra\" 400 0 \"-\" \"-\"",
		 true, 971211336LL * 1000000);
	expect_val("request", "get / HTTP/1.1 extra");
	/* An escaped backslash before the closing quote: the string ends there. */
	parse_ok("h - - [10/Oct/2000:13:55:36 -0700] \"GET /a\\\\ HTTP/1.1\" 200 0 \"r\\\\\" "
		 "\"\\\\\"",
		 true, 971211336LL * 1000000);
	expect_val("path", "/a\\\\");
	expect_val("referer", "r\\\\");
	expect_val("user_agent", "\\\\");
}

static void test_near_misses(void **state)
{
	static const struct {
		const char *line;
		bool combined;
		size_t off;
	} bad[] = {
	    {"", false, 0},
	    {" - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1", false, 0},
	    {"h - - 10/Oct/2000:13:55:36 -0700 \"GET / HTTP/1.0\" 200 1", false, 6},
	    {"h - - [10/Foo/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1", false, 6},
	    {"h - - [30/Feb/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1", false, 6},
	    {"h - - [10/Oct/2000:24:55:36 -0700] \"GET / HTTP/1.0\" 200 1", false, 6},
	    {"h - - [10/Oct/2000:13:55:36] \"GET / HTTP/1.0\" 200 1", false, 6},
	    {"h - - [10/Oct/2000:13:55:36 -0700 \"GET / HTTP/1.0\" 200 1", false, 6},
	    {"h - - [10/Oct/2000:13:55:36 -0700] GET / HTTP/1.0 200 1", false, 35},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0 200 1", false, 56},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 20 1", false, 52},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 2000 1", false, 52},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1k", false, 56},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200", false, 55},
	    /* Combined fed to the common parser, and the other way round. */
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"-\"", false, 58},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1", true, 57},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\" \"-", true, 64},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 - \"-\"", true, 58},
	    /* A quote escaped at the line's end leaves the string open; so does a backslash
	     * as the last byte. */
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\\\"", false, 52},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\\", false, 51},
	    {"h - - [10/Oct/2000:13:55:36 -0700] \"GET / \\\"HTTP/1.0\\\" 200 1", false, 60},
	    /* Two spaces where one belongs. */
	    {"h  - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1", false, 2},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		floe_fields_reset(f);
		floe_fields_add(f, "k", 1, "v", 1);
		struct floe_err why = {0};
		int64_t ts;
		int rc = floe_access_log_parse(bad[i].line, strlen(bad[i].line), bad[i].combined, f,
					       &ts, &why);
		if (rc != FLOE_EPARSE || why.code != FLOE_EPARSE || why.offset != bad[i].off)
			fail_msg("case %zu: rc %d offset %zu (%s), want offset %zu", i, rc,
				 why.offset, why.msg, bad[i].off);
		assert_int_equal(floe_fields_count(f), 0);
	}
	/* Every proper prefix of a combined line fails, and reads nothing past its end. */
	const char *full =
	    "h - u [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"r\" \"a\"";
	for (size_t n = 0; n < strlen(full); n++) {
		char *cut = malloc(n ? n : 1);
		memcpy(cut, full, n);
		int64_t ts;
		assert_int_equal(floe_access_log_parse(cut, n, true, f, &ts, NULL), FLOE_EPARSE);
		(void)floe_access_log_parse(cut, n, false, f, &ts, NULL);
		free(cut);
	}
}

/* loghub's Apache sample is Apache's error log: no line of it is an access-log line, and
 * each is refused at the first byte that tells (no crash, fields left empty). */
static void test_loghub_error_log(void **state)
{
	FILE *in = fopen(FLOE_TEST_DATA "/loghub/Apache_2k.log", "r");
	assert_non_null(in);
	char line[4096];
	size_t n = 0;
	while (fgets(line, sizeof(line), in)) {
		size_t len = strcspn(line, "\n");
		int64_t ts;
		assert_int_equal(floe_access_log_parse(line, len, false, f, &ts, NULL),
				 FLOE_EPARSE);
		assert_int_equal(floe_access_log_parse(line, len, true, f, &ts, NULL), FLOE_EPARSE);
		assert_int_equal(floe_fields_count(f), 0);
		n++;
	}
	fclose(in);
	assert_int_equal(n, 2000);
}

/* The time: each month's name, and a byte that is not a digit at each digit's place
 * (refused at the time's bracket). */
static void test_time_places(void **state)
{
	(void)state;
	static const char months[] = "JanFebMarAprMayJunJulAugSepOctNovDec";
	for (unsigned m = 1; m <= 12; m++) {
		char line[96];
		snprintf(line, sizeof(line),
			 "h - - [15/%.3s/2001:01:02:03 -0130] \"GET / HTTP/1.0\" 200 1",
			 months + 3 * (m - 1));
		int64_t ts = 0;
		floe_fields_reset(f);
		assert_int_equal(floe_access_log_parse(line, strlen(line), false, f, &ts, NULL), 0);
		assert_int_equal(ts, (floe_civil_to_days(2001, m, 15) * 86400 + 3723 + 5400) *
					 1000000LL);
	}
	const char *good = "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1";
	static const unsigned places[] = {0, 1, 7, 8, 9, 10, 12, 13, 15, 16, 18, 19, 22, 23, 24, 25};
	for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
		for (const char *c = "x/ \xff:"; *c; c++) {
			char line[96];
			snprintf(line, sizeof(line), "%s", good);
			line[7 + places[i]] = *c;
			struct floe_err why = {0};
			int64_t ts;
			floe_fields_reset(f);
			assert_int_equal(floe_access_log_parse(line, strlen(line), false, f, &ts, &why),
					 FLOE_EPARSE);
			assert_int_equal(why.offset, 6);
		}
	}
}

/* A quote closes a string when the run of backslashes just before it is even: runs of
 * each length before the referer's quotes, escaped and closing. */
static void test_backslash_runs(void **state)
{
	(void)state;
	static const struct {
		const char *referer; /* as written between the quotes */
	} ok[] = {
	    {""},     {"a"},	   {"\\\\"},	 {"\\\""},	{"\\\\\\\""}, {"\\\\\\\\"},
	    {"a\\\"b\\\\"}, {"\\\"\\\""}, {"x\\y"}, {"\\\\\\\\\\\""},
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char line[128];
		snprintf(line, sizeof(line),
			 "h - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.0\" 200 1 \"%s\" \"ua\"",
			 ok[i].referer);
		parse_ok(line, true, 971186136000000LL);
		if (ok[i].referer[0])
			expect_val("referer", ok[i].referer);
		expect_val("user_agent", "ua");
	}
	/* An odd run before the last quote leaves the string open to the line's end. */
	const char *open = "h - - [10/Oct/2000:13:55:36 +0000] \"GET / HTTP/1.0\" 200 1 \"-\" \"u\\\\\\\"";
	int64_t ts;
	struct floe_err why = {0};
	floe_fields_reset(f);
	assert_int_equal(floe_access_log_parse(open, strlen(open), true, f, &ts, &why), FLOE_EPARSE);
	assert_int_equal(why.offset, strlen(open));
}

/* The scanner and its general form (access_log_ref.h: memchr per field, the time's ']'
 * searched and read whole, the request split by three memchr, the general
 * floe_fields_add_ids) give the same result on p[0..n): code, offset and message, time,
 * and the same pairs in the same order (the same keys, values at the same places, ids),
 * into an empty table and into one that holds a pair already. */
static void same_as_ref(const char *p, size_t n)
{
	static struct floe_fields *g, *h;
	/* The time's memo, kept from line to line as the decoder keeps it: the lines before
	 * leave it at the time a line has with a byte of it changed. */
	static struct floe_ts_clf_memo memo;
	if (!g) {
		assert_int_equal(floe_fields_new(NULL, 16, 0, &g), 0);
		assert_int_equal(floe_fields_new(NULL, 16, 0, &h), 0);
	}
	for (int combined = 0; combined < 4; combined++) {
		floe_fields_reset(g);
		floe_fields_reset(h);
		if (combined >= 2) {
			floe_fields_add(g, "user", 4, "held", 4);
			floe_fields_add(h, "user", 4, "held", 4);
		}
		struct floe_err eg = {0}, eh = {0};
		int64_t tg = 0, th = 0;
		int rg = floe_access_log_parse_memo(p, n, combined & 1, &memo, g, &tg, &eg);
		int rh = ref_access_log_parse(p, n, combined & 1, h, &th, &eh);
		assert_int_equal(rg, rh);
		if (rg) {
			assert_int_equal(eg.offset, eh.offset);
			assert_string_equal(eg.msg, eh.msg);
		} else {
			assert_int_equal(tg, th);
		}
		size_t k = floe_fields_count(g);
		assert_int_equal(k, floe_fields_count(h));
		assert_int_equal(floe_fields_dropped(g), floe_fields_dropped(h));
		for (size_t i = 0; i < k; i++) {
			/* The names' copies are two (the scanner's and the reference's): one
			 * string only where the linker merges them. */
			assert_int_equal(floe_fields_key_lens(g)[i], floe_fields_key_lens(h)[i]);
			assert_memory_equal(floe_fields_keys(g)[i], floe_fields_keys(h)[i],
					    floe_fields_key_lens(g)[i]);
			assert_ptr_equal(floe_fields_vals(g)[i], floe_fields_vals(h)[i]);
			assert_int_equal(floe_fields_val_lens(g)[i], floe_fields_val_lens(h)[i]);
			assert_int_equal(floe_fields_ids(g)[i], floe_fields_ids(h)[i]);
		}
		/* The key classes the lookups go by. */
		for (const char *const *nm = floe_access_log_field_names(); *nm; nm++) {
			const char *vg = NULL, *vh = NULL;
			size_t lg = 0, lh = 0;
			assert_int_equal(floe_fields_find(g, *nm, strlen(*nm), &vg, &lg),
					 floe_fields_find(h, *nm, strlen(*nm), &vh, &lh));
			assert_ptr_equal(vg, vh);
			assert_int_equal(lg, lh);
		}
	}
}

/* same_as_ref on the fuzz corpus and lines of every shape the scanner's fast paths
 * meet (each field's length either side of the in-line scan's 16 bytes, a "-" referer,
 * requests of one to four parts, times of other lengths, a ']' inside the time), each
 * as it is, cut at every length, and with each byte replaced in turn by a space, a quote,
 * a backslash, a bracket, a dash, a capital, a digit, a NUL and bytes >= 0x80; lines of
 * 0 and 1 bytes, and one of 64 KiB. */
static void test_same_as_ref(void **state)
{
	(void)state;
	static const char *const lines[] = {
	    "h - u [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"r\" \"a\"",
	    "192.103.105.111 - - [03/Dec/2026:00:00:00 +0000] \"HEAD /img/logo.png?id=0 "
	    "HTTP/1.1\" 200 16760 \"https://news.example.org/\" \"Mozilla/5.0 (X11; Linux)\"",
	    "2001:db8:85a3:0000:0000:8a2e:0370:7334 ident-of-17-bytes user-of-seventeen "
	    "[10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.1\" 304 - \"-\" \"-\" extra",
	    "0123456789abcdef - 0123456789abcdefg [10/Oct/2000:13:55:36 -0700] \"GET /a\" 200 "
	    "12345678901234567890 \"-\\\"\" \"\\\\\"",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"GET /a b HTTP/1.1\" 200 1 \"-\" \"u\"",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"\\x16\\x03\\x01\" 400 0 \"-\" \"-\"",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"GET  HTTP/1.1\" 200 1 \"-\" \"-\"",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"GET /a \" 200 1 \"-\" \"-\"",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"get /a HTTP/1.1\" 200 1 \"-\" \"-\"",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"-\" 200 1 \"-\"\"-\"",
	    "h - - [10/Oct/2000:13:55:36 -07000] \"GET /\" 200 1",
	    "h - - [10/Oct/2000:13:55:36 -070] \"GET /\" 200 1   ",
	    "h - - [10/Oct/2000:13:55:36 -0700]] \"GET /\" 200 1",
	    "h - - [10/Oct/2000:13:55:3] -0700] \"GET /\" 200 1",
	    "h - - [1/Oct/2000:13:55:36 -0700] \"GET /\" 200 1",
	    "h - - [] \"GET /\" 200 1",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-",
	    "h - - [10/Oct/2000:13:55:36 -0700] \"GET / HTTP/1.0\" 200 1 \"-\\\" \"a\"",
	};
	static const char repl[] = " \"\\[]-A0\0\x80\xc3\xff";
	char buf[512];
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		size_t n = strlen(lines[i]);
		assert_true(n < sizeof(buf));
		for (size_t cut = 0; cut <= n; cut++) {
			/* A copy of its own, so that a read past the cut shows under ASan. */
			char *c = malloc(cut ? cut : 1);
			memcpy(c, lines[i], cut);
			same_as_ref(c, cut);
			free(c);
		}
		for (size_t at = 0; at < n; at++) {
			for (size_t r = 0; r < sizeof(repl) - 1; r++) {
				memcpy(buf, lines[i], n);
				buf[at] = repl[r];
				same_as_ref(buf, n);
			}
		}
	}
	static const char *const corpus[] = {"combined", "common", "error_log", "escapes",
					     "tls_junk", "unterminated"};
	for (size_t i = 0; i < sizeof(corpus) / sizeof(corpus[0]); i++) {
		char path[512];
		snprintf(path, sizeof(path), FLOE_TEST_DATA "/../fuzz/corpus/fuzz_parse_access_log/%s.txt",
			 corpus[i]);
		FILE *in = fopen(path, "rb");
		assert_non_null(in);
		size_t n = fread(buf, 1, sizeof(buf), in);
		fclose(in);
		same_as_ref(buf, n);
		for (size_t at = 0; at < n; at++) {
			char keep = buf[at];
			for (size_t r = 0; r < sizeof(repl) - 1; r++) {
				buf[at] = repl[r];
				same_as_ref(buf, n);
			}
			buf[at] = keep;
		}
	}
	/* A line of 64 KiB: its fields past the in-line scans (a long client, request and
	 * user agent), then as one token with no space. */
	size_t big = 64 << 10;
	char *l = malloc(big);
	memset(l, 'a', big);
	const char *mid = " - - [10/Oct/2000:13:55:36 -0700] \"GET /";
	memcpy(l + 1000, mid, strlen(mid));
	const char *tail = " HTTP/1.1\" 200 1 \"-\" \"";
	memcpy(l + 30000, tail, strlen(tail));
	l[big - 1] = '"';
	same_as_ref(l, big);
	memset(l, 'a', big);
	same_as_ref(l, big);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_common),
	    cmocka_unit_test(test_combined),
	    cmocka_unit_test(test_near_misses),
	    cmocka_unit_test(test_time_places),
	    cmocka_unit_test(test_backslash_runs),
	    cmocka_unit_test(test_loghub_error_log),
	    cmocka_unit_test(test_same_as_ref),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
