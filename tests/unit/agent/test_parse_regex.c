/* Tests of agent/parse/regex (PCRE2): named groups in both syntaxes (escaped parens,
 * bracket expressions, (?:...), nesting), rejected patterns with PCRE2's message and
 * offset, the Perl dialect, captures as slices, groups that do not participate, lines with
 * NUL bytes and no terminator, the length limit, the work budget, faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/fields.h"
#include "agent/parse/regex.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "fields_expect.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct floe_regex *rx(const char *pat, unsigned flags)
{
	struct floe_err why = {0};
	struct floe_regex *r = NULL;
	int err = floe_regex_new(NULL, pat, strlen(pat), 4096, flags, &r, &why);
	if (err)
		fail_msg("pattern %s: %d %s", pat, err, why.msg);
	assert_non_null(r);
	return r;
}

static void test_capture(void **state)
{
	struct floe_regex *r =
	    rx("^(?<ip>[0-9.]+) - (?P<user>[^ ]+) \\[(?<ts>[^]]+)\\] "
	       "\"(?<method>[A-Z]+) (?<path>[^ \"]*)[^\"]*\" (?<status>[0-9]{3})",
	       0);
	assert_int_equal(floe_regex_name_count(r), 6);
	size_t nl;
	const char *n = floe_regex_name(r, 1, &nl);
	assert_int_equal(nl, 4);
	assert_memory_equal(n, "user", 4);
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 0, &f), 0);
	const char *line = "127.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" "
			   "200 2326";
	bool m = false;
	assert_int_equal(floe_regex_capture(r, line, strlen(line), f, &m), 0);
	assert_true(m);
	assert_int_equal(floe_fields_count(f), 6);
	assert_memory_equal(floe_fields_keys(f)[0], "ip", 2);
	assert_ptr_equal(floe_fields_vals(f)[0], line);
	expect_field(f, "ip", "127.0.0.1", 9);
	expect_field(f, "user", "frank", 5);
	expect_field(f, "ts", "10/Oct/2000:13:55:36 -0700", 26);
	expect_field(f, "method", "GET", 3);
	expect_field(f, "path", "/a.gif", 6);
	expect_field(f, "status", "200", 3);
	/* No match: no fields. */
	floe_fields_reset(f);
	assert_int_equal(floe_regex_capture(r, "garbage", 7, f, &m), 0);
	assert_false(m);
	assert_int_equal(floe_fields_count(f), 0);
	floe_regex_free(r);
	floe_fields_free(f);
}

static void test_translation(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 0, &f), 0);
	bool m;
	/* Escaped parens and parens in brackets are not groups; (?:) is counted. */
	struct floe_regex *r = rx("\\((?:x|y)[()](?<a>[]()]+)[[:alpha:](](?<b>[^]a)]*)$", 0);
	const char *line = "(y(])(z((zz";
	assert_int_equal(floe_regex_capture(r, line, strlen(line), f, &m), 0);
	assert_true(m);
	expect_field(f, "a", "])(", 3);
	expect_field(f, "b", "((zz", 4);
	floe_regex_free(r);
	/* Nested named groups; a group on the untaken side of | is absent. */
	floe_fields_reset(f);
	r = rx("^(?<outer>a(?<inner>b+)c)|(?<other>z)", 0);
	assert_int_equal(floe_regex_capture(r, "abbbc", 5, f, &m), 0);
	assert_true(m);
	assert_int_equal(floe_fields_count(f), 2);
	expect_field(f, "outer", "abbbc", 5);
	expect_field(f, "inner", "bbb", 3);
	floe_fields_reset(f);
	assert_int_equal(floe_regex_capture(r, "z", 1, f, &m), 0);
	assert_int_equal(floe_fields_count(f), 1);
	expect_field(f, "other", "z", 1);
	floe_regex_free(r);
	/* An empty capture is an empty value. */
	floe_fields_reset(f);
	r = rx("^k=(?<v>[a-z]*);", FLOE_REGEX_ICASE);
	assert_int_equal(floe_regex_capture(r, "K=;", 3, f, &m), 0);
	assert_true(m);
	expect_field(f, "v", "", 0);
	floe_regex_free(r);
	floe_fields_free(f);
}

/* Perl-style escapes people copy into configurations: \d and \D anywhere, \s and \w in
 * brackets, \t; glibc's own \w \s \b. Once, "(?P<ip>\d+)" failed on every line. */
static void test_perl_escapes(void **state)
{
	static const struct {
		const char *pat, *line, *field, *value;
	} cases[] = {
	    {"^(?P<ip>\\d+\\.\\d+\\.\\d+\\.\\d+) (?P<m>\\w+) (?P<s>\\d{3})$", "10.0.0.1 GET 200",
	     "s", "200"},
	    {"^(?<a>\\D+)\\d", "abc7", "a", "abc"},
	    {"^(?<a>[\\d.]+)", "1.25x", "a", "1.25"},
	    {"^(?<a>[\\w-]+)\\s", "my-host_1 rest", "a", "my-host_1"},
	    {"^(?<a>[^\\s]+)", "word\tx", "a", "word"},
	    {"^x\\t(?<a>y)", "x\ty", "a", "y"},
	    {"(?<a>\\bb\\w*)", "a bcd", "a", "bcd"},
	    {"(?<a>\\.)", "a.b", "a", "."},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floe_regex *r = rx(cases[i].pat, 0);
		struct floe_fields *f = NULL;
		assert_int_equal(floe_fields_new(NULL, 16, 0, &f), 0);
		bool m = false;
		assert_int_equal(floe_regex_capture(r, cases[i].line, strlen(cases[i].line), f, &m),
				 0);
		if (!m)
			fail_msg("%s did not match %s", cases[i].pat, cases[i].line);
		expect_field(f, cases[i].field, cases[i].value, strlen(cases[i].value));
		floe_fields_free(f);
		floe_regex_free(r);
	}
}

static void test_rejects(void **state)
{
	static const char *const pats[] = {
	    "(?<1a>x)", "(?<a-b>x)", "(?<a>x)(?<a>y)", "(?<a>x", "[abc", "[[:alpha:]",
	    "x\\",	"(?<",	     "a{2,1}",	       "(",	 "*x",	 "a**",
	    "(?<=x+)y",
	};
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		struct floe_err why = {0};
		struct floe_regex *r = NULL;
		int err = floe_regex_new(NULL, pats[i], strlen(pats[i]), 100, 0, &r, &why);
		if (r || err != FLOE_EINVAL || !why.msg[0] || why.code != FLOE_EINVAL)
			fail_msg("pattern %s: err %d why \"%s\"", pats[i], err, why.msg);
	}
	/* PCRE2's message and the byte offset where it stopped. */
	struct floe_err why = {0};
	struct floe_regex *none = NULL;
	assert_int_equal(floe_regex_new(NULL, "^ab[cd", 6, 100, 0, &none, &why), FLOE_EINVAL);
	assert_int_equal(why.offset, 6);
	assert_non_null(strstr(why.msg, "missing terminating ]"));
	assert_int_equal(floe_regex_new(NULL, "^a{2,1}", 7, 100, 0, &none, &why), FLOE_EINVAL);
	assert_int_equal(why.offset, 6);
	/* 64 nested groups are fine, 65 are not. */
	char deep[2 * 65 + 2];
	for (int depth = 64; depth <= 65; depth++) {
		size_t k = 0;
		for (int i = 0; i < depth; i++)
			deep[k++] = '(';
		deep[k++] = 'a';
		for (int i = 0; i < depth; i++)
			deep[k++] = ')';
		struct floe_regex *d = NULL;
		int err = floe_regex_new(NULL, deep, k, 100, 0, &d, NULL);
		assert_true(depth == 64 ? d != NULL : err == FLOE_EINVAL);
		floe_regex_free(d);
	}
	/* A NUL byte in the pattern. */
	assert_int_equal(floe_regex_new(NULL, "a\0b", 3, 100, 0, &none, NULL), FLOE_EINVAL);
	/* 65 names. */
	char big[65 * 8 + 1];
	size_t n = 0;
	for (int i = 0; i < 65; i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "(?<g%02d>)", i);
	assert_int_equal(floe_regex_new(NULL, big, n, 100, 0, &none, NULL), FLOE_EINVAL);
	assert_null(none);
	/* Longer than FLOE_REGEX_MAX_PATTERN. */
	char *huge = malloc(FLOE_REGEX_MAX_PATTERN + 1);
	memset(huge, 'a', FLOE_REGEX_MAX_PATTERN + 1);
	assert_int_equal(
	    floe_regex_new(NULL, huge, FLOE_REGEX_MAX_PATTERN + 1, 100, 0, &none, NULL),
	    FLOE_EINVAL);
	free(huge);
}

/* What PCRE2 adds over the POSIX dialect floe had before: lookaround, inline flags, \h,
 * \A, \z, \x, lazy and possessive repeats. */
static void test_perl_dialect(void **state)
{
	static const struct {
		const char *pat, *line, *field, *value;
	} cases[] = {
	    {"^(?<a>\\w+)(?=:)", "key: v", "a", "key"},
	    {"(?<=id=)(?<a>\\d+)", "x id=42 y", "a", "42"},
	    {"(?i)^(?<a>get)", "GET /", "a", "GET"},
	    {"\\A(?<a>\\H+)\\h", "ab\tc", "a", "ab"},
	    {"(?<a>\\x41+)\\z", "xAA", "a", "AA"},
	    {"^(?<a>.*?),", "a,b,c", "a", "a"},
	    {"^(?<a>[^,]++),", "ab,c", "a", "ab"},
	    {"^(?'a'x)", "x", "a", "x"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floe_regex *r = rx(cases[i].pat, 0);
		struct floe_fields *f = NULL;
		assert_int_equal(floe_fields_new(NULL, 16, 0, &f), 0);
		bool m = false;
		assert_int_equal(floe_regex_capture(r, cases[i].line, strlen(cases[i].line), f, &m),
				 0);
		if (!m)
			fail_msg("%s did not match %s", cases[i].pat, cases[i].line);
		expect_field(f, cases[i].field, cases[i].value, strlen(cases[i].value));
		floe_fields_free(f);
		floe_regex_free(r);
	}
}

static void test_bytes_and_limits(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 4, 0, &f), 0);
	struct floe_regex *r = rx("^(?<a>[^x]*)x(?<b>.*)$", 0);
	bool m;
	/* Not NUL-terminated: the byte after the line is never looked at. */
	char *buf = malloc(6);
	memcpy(buf, "abxcdx", 6);
	assert_int_equal(floe_regex_capture(r, buf, 4, f, &m), 0);
	assert_true(m);
	expect_field(f, "b", "c", 1);
	/* NUL bytes are subject bytes, for '.' too. */
	floe_fields_reset(f);
	assert_int_equal(floe_regex_capture(r, "a\0bxc\0d", 7, f, &m), 0);
	assert_true(m);
	expect_field(f, "a", "a\0b", 3);
	expect_field(f, "b", "c\0d", 3);
	/* Invalid UTF-8 is bytes. */
	floe_fields_reset(f);
	assert_int_equal(floe_regex_capture(r, "\xff\xfex\xc3", 4, f, &m), 0);
	assert_true(m);
	expect_field(f, "a", "\xff\xfe", 2);
	expect_field(f, "b", "\xc3", 1);
	/* Empty line. */
	floe_fields_reset(f);
	assert_int_equal(floe_regex_capture(r, NULL, 0, f, &m), 0);
	assert_false(m);
	/* Over max_line_bytes (4096). */
	char *longl = calloc(1, 4097);
	memset(longl, 'x', 4097);
	assert_int_equal(floe_regex_test(r, longl, 4097, &m), FLOE_ELIMIT);
	assert_int_equal(floe_regex_test(r, longl, 4096, &m), 0);
	assert_true(m);
	free(longl);
	free(buf);
	floe_regex_free(r);
	floe_regex_free(NULL);
	/* NOSUB: test only; capture adds nothing. */
	r = rx("^(?<a>x)", FLOE_REGEX_NOSUB);
	floe_fields_reset(f);
	assert_int_equal(floe_regex_capture(r, "xy", 2, f, &m), 0);
	assert_true(m);
	assert_int_equal(floe_fields_count(f), 0);
	floe_regex_free(r);
	floe_fields_free(f);
}

/* Catastrophic backtracking ends at the work budget: a counted failure (FLOE_ELIMIT),
 * not a stalled agent; the same pattern still matches lines it can decide. Unanchored,
 * the budget covers the positions tried too. The pattern fuzzing found to take glibc's
 * regcomp over 10 s is refused or compiled at once. */
static void test_work_budget(void **state)
{
	static const char *const pats[] = {"^(a+)+$", "(a|aa)+$", "^(?<x>(\\w+\\s?)*)$",
					   "(x+x+)+y"};
	char line[4096];
	memset(line, 'a', sizeof(line));
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		struct floe_regex *r = rx(pats[i], 0);
		bool m = true;
		for (size_t len = 30; len <= sizeof(line); len *= 4) {
			memset(line, pats[i][3] == 'x' ? 'x' : 'a', len);
			line[len - 1] = '!';
			int rc = floe_regex_test(r, line, len, &m);
			if (rc != FLOE_ELIMIT && !(rc == 0 && !m))
				fail_msg("%s on %zu bytes: rc %d matched %d", pats[i], len, rc, m);
		}
		assert_int_equal(floe_regex_test(r, "aaa", 3, &m), 0);
		floe_regex_free(r);
	}
	const char evil[] = ">^\\216+++++*+++++.+";
	struct floe_err why = {0};
	struct floe_regex *r = NULL;
	int err = floe_regex_new(NULL, evil, sizeof(evil) - 1, 4096, 0, &r, &why);
	if (r) {
		bool m;
		int rc = floe_regex_test(r, line, sizeof(line), &m);
		assert_true(rc == 0 || rc == FLOE_ELIMIT);
		floe_regex_free(r);
	} else {
		assert_int_equal(err, FLOE_EINVAL);
		assert_true(why.msg[0] != 0);
	}
}

static void test_faults(void **state)
{
	struct floe_alloc a;
	for (long k = 0;; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_regex *r = NULL;
		int err = floe_regex_new(&a, "(?<a>x)(y)", 10, 64, 0, &r, NULL);
		if (r) {
			floe_regex_free(r);
			assert_int_equal(a.used, 0);
			assert_true(k >= 2);
			break;
		}
		assert_int_equal(err, FLOE_ENOMEM);
		assert_int_equal(a.used, 0);
	}
}

/* A name given to two groups ((?J)) is one field, the last group's value winning as for
 * any repeated key, and its id still names it (the typed columns are found by ids). */
static void test_repeated_names(void **state)
{
	(void)state;
	struct floe_regex *r = rx("(?J)^(?<x>a)(?<y>-)(?<x>b)$", 0);
	assert_int_equal(floe_regex_name_count(r), 3);
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 0, &f), 0);
	bool m = false;
	assert_int_equal(floe_regex_capture(r, "a-b", 3, f, &m), 0);
	assert_true(m);
	assert_int_equal(floe_fields_count(f), 2);
	expect_field(f, "x", "b", 1);
	expect_field(f, "y", "-", 1);
	for (size_t i = 0; i < 2; i++) {
		size_t nl;
		const char *name = floe_regex_name(r, floe_fields_ids(f)[i], &nl);
		assert_int_equal(nl, floe_fields_key_lens(f)[i]);
		assert_memory_equal(name, floe_fields_keys(f)[i], nl);
	}
	floe_regex_free(r);
	floe_fields_free(f);
}

/* Lines go straight to the JIT's code when it made some (pcre2_jit_match): the captures
 * are those of the same pattern under (*NO_JIT), which PCRE2 interprets, on lines that
 * match, do not, are empty, hold NUL bytes or invalid UTF-8 (in UTF mode too), and a
 * (*NO_JIT) pattern still matches, though pcre2_jit_compile takes it. */
static void test_jit_against_interpreter(void **state)
{
	(void)state;
	static const char *const pats[] = {
	    "^(?<a>[^x]*)x(?<b>.*)$",
	    "(?<ip>[0-9.]+) (?<rest>.*)",
	    "^(?<k>[a-z]+)=(?<v>[^ ]*)(?: (?<k2>[a-z]+)=(?<v2>[^ ]*))?$",
	    "(*UTF)^(?<w>\\w+) (?<any>.)(?<tail>.*)$",
	    "(?i)^(?<m>get|post) (?<p>\\S+)",
	};
	static const struct {
		const char *s;
		size_t n;
	} lines[] = {
	    {"abxcd", 5},	  {"abcd", 4},	  {"", 0},	       {"a\0bxc\0d", 7},
	    {"\xff\xfex\xc3", 4}, {"10.0.0.1 GET /", 14}, {"k=1 j=2", 7},  {"k=1", 3},
	    {"k=1 j", 5},	  {"word \xc3\xa9tail", 12}, {"word \xc3tail", 10},
	    {"GET /a b", 8},	  {"post /x", 7},	 {"x", 1},
	};
	struct floe_fields *a = NULL, *b = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 0, &a), 0);
	assert_int_equal(floe_fields_new(NULL, 8, 0, &b), 0);
	for (size_t i = 0; i < sizeof(pats) / sizeof(pats[0]); i++) {
		char slow[256];
		const char *p = pats[i];
		snprintf(slow, sizeof(slow), "(*NO_JIT)%s", p);
		struct floe_regex *fast = rx(p, 0), *interp = rx(slow, 0);
		assert_int_equal(floe_regex_jit(fast), floe_regex_jit_built());
		for (size_t k = 0; k < sizeof(lines) / sizeof(lines[0]); k++) {
			bool ma = false, mb = false;
			floe_fields_reset(a);
			floe_fields_reset(b);
			int ra = floe_regex_capture(fast, lines[k].s, lines[k].n, a, &ma);
			int rb = floe_regex_capture(interp, lines[k].s, lines[k].n, b, &mb);
			if (ra != rb || ma != mb || floe_fields_count(a) != floe_fields_count(b))
				fail_msg("%s on line %zu: %d %d %zu, interpreted %d %d %zu", p, k, ra, ma,
					 floe_fields_count(a), rb, mb, floe_fields_count(b));
			for (size_t j = 0; j < floe_fields_count(a); j++) {
				assert_int_equal(floe_fields_ids(a)[j], floe_fields_ids(b)[j]);
				assert_ptr_equal(floe_fields_vals(a)[j], floe_fields_vals(b)[j]);
				assert_int_equal(floe_fields_val_lens(a)[j], floe_fields_val_lens(b)[j]);
			}
		}
		floe_regex_free(fast);
		floe_regex_free(interp);
	}
	floe_fields_free(a);
	floe_fields_free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_capture),	 cmocka_unit_test(test_translation),
	    cmocka_unit_test(test_rejects),	 cmocka_unit_test(test_bytes_and_limits),
	    cmocka_unit_test(test_faults),	 cmocka_unit_test(test_perl_escapes),
	    cmocka_unit_test(test_perl_dialect), cmocka_unit_test(test_work_budget),
	    cmocka_unit_test(test_repeated_names), cmocka_unit_test(test_jit_against_interpreter),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
