/* Tests of agent/parse/json_line: every value kind, flattening at each depth, escapes
 * (surrogate pairs, lone surrogates, \u0000), invalid JSON with exact error offsets,
 * hostile nesting, huge numbers, invalid UTF-8 passing through, capacity drops. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/fields.h"
#include "agent/parse/json_line.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* floe_json_line_parse with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int json_parse(const char *s, size_t len, unsigned depth, struct floe_fields *f, size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_json_line_parse(s, len, depth, f, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_true(e.msg[0] != '\0');
		if (off)
			*off = e.offset;
	}
	return rc;
}

struct kv {
	const char *k;
	size_t kl;
	const char *v; /* NULL = null value */
	size_t vl;
};
#define KV(k, v)                                                                                   \
	{                                                                                          \
		k, sizeof(k) - 1, v, sizeof(v) - 1                                                 \
	}
#define KNULL(k)                                                                                   \
	{                                                                                          \
		k, sizeof(k) - 1, NULL, 0                                                          \
	}

static void expect(const struct floe_fields *f, const struct kv *want, size_t n)
{
	assert_int_equal(floe_fields_count(f), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(floe_fields_key_lens(f)[i], want[i].kl);
		assert_memory_equal(floe_fields_keys(f)[i], want[i].k, want[i].kl);
		if (!want[i].v) {
			assert_null(floe_fields_vals(f)[i]);
			continue;
		}
		assert_non_null(floe_fields_vals(f)[i]);
		assert_int_equal(floe_fields_val_lens(f)[i], want[i].vl);
		assert_memory_equal(floe_fields_vals(f)[i], want[i].v, want[i].vl);
	}
}

static int parse(struct floe_fields *f, const char *s, unsigned depth, size_t *off)
{
	floe_fields_reset(f);
	return json_parse(s, strlen(s), depth, f, off);
}

static void test_kinds(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 256, &f), 0);
	const char *s = " {\"a\":\"x\", \"b\" : 1,\"c\":true,\"d\":null,\"e\":[1, {\"x\":2}],"
			"\"f\":-1.5e+10,\"g\":false,\"h\":\"\",\"i\":[]}\r\n";
	size_t off = 0;
	assert_int_equal(json_parse(s, strlen(s), 4, f, &off), 0);
	const struct kv want[] = {
	    KV("a", "x"),
	    KV("b", "1"),
	    KV("c", "true"),
	    KNULL("d"),
	    KV("e", "[1, {\"x\":2}]"),
	    KV("f", "-1.5e+10"),
	    KV("g", "false"),
	    KV("h", ""),
	    KV("i", "[]"),
	};
	expect(f, want, 9);
	/* Unescaped strings and raw values are slices of the line: no copy. */
	assert_ptr_equal(floe_fields_vals(f)[0], s + 7);
	assert_ptr_equal(floe_fields_keys(f)[0], s + 3);
	/* The empty object is fine and gives nothing. */
	assert_int_equal(parse(f, "{}", 1, &off), 0);
	assert_int_equal(floe_fields_count(f), 0);
	floe_fields_free(f);
}

static void test_flatten(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 256, &f), 0);
	const char *s = "{\"a\":{\"b\":{\"c\":1},\"d\":\"x\"},\"e\":{},\"f\":{ }}";
	size_t off;
	assert_int_equal(parse(f, s, 1, &off), 0);
	const struct kv w1[] = {KV("a", "{\"b\":{\"c\":1},\"d\":\"x\"}"), KV("e", "{}"),
				KV("f", "{ }")};
	expect(f, w1, 3);
	assert_int_equal(parse(f, s, 0, &off), 0); /* 0 acts as 1 */
	expect(f, w1, 3);
	assert_int_equal(parse(f, s, 2, &off), 0);
	const struct kv w2[] = {KV("a.b", "{\"c\":1}"), KV("a.d", "x"), KV("e", "{}"),
				KV("f", "{ }")};
	expect(f, w2, 4);
	assert_int_equal(parse(f, s, 3, &off), 0);
	const struct kv w3[] = {KV("a.b.c", "1"), KV("a.d", "x"), KV("e", "{}"), KV("f", "{ }")};
	expect(f, w3, 4);
	assert_int_equal(parse(f, s, 1000, &off), 0); /* clamped */
	expect(f, w3, 4);
	/* A dotted key and a nested one collide: last wins, in first position. */
	assert_int_equal(parse(f, "{\"a.b\":1,\"a\":{\"b\":2}}", 2, &off), 0);
	const struct kv w4[] = {KV("a.b", "2")};
	expect(f, w4, 1);
	/* Escaped nested keys. */
	assert_int_equal(parse(f, "{\"k\\n\":{\"\\u0041\":\"v\"}}", 2, &off), 0);
	const struct kv w5[] = {KV("k\n.A", "v")};
	expect(f, w5, 1);
	floe_fields_free(f);
}

static void test_escapes(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 256, &f), 0);
	size_t off;
	const char *s = "{\"k\\u00e9y\":\"l\\u00e9\\n\\\"q\\\"\\\\\\/\\b\\f\\r\\t "
			"\\ud83d\\ude00 \\ud800x \\udc00\\u0000\",\"raw\":\"\xff\xfe\xc3\"}";
	assert_int_equal(parse(f, s, 1, &off), 0);
	const struct kv want[] = {
	    KV("k\xc3\xa9y", "l\xc3\xa9\n\"q\"\\/\b\f\r\t \xf0\x9f\x98\x80 \xef\xbf\xbdx "
			     "\xef\xbf\xbd\0"),
	    KV("raw", "\xff\xfe\xc3"),
	};
	expect(f, want, 2);
	/* A high surrogate followed by a non-low-surrogate escape: both kept separately. */
	assert_int_equal(parse(f, "{\"a\":\"\\ud800\\u0041\"}", 1, &off), 0);
	const struct kv w2[] = {KV("a", "\xef\xbf\xbd"
					"A")};
	expect(f, w2, 1);
	floe_fields_free(f);
}

static void test_errors(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 256, &f), 0);
	static const struct {
		const char *s;
		size_t len; /* 0 = strlen */
		int rc;
		size_t off;
	} cases[] = {
	    {"", 0, FLOE_EPARSE, 0},
	    {"   ", 0, FLOE_EPARSE, 3},
	    {"[1,2]", 0, FLOE_EPARSE, 0},
	    {"\"s\"", 0, FLOE_EPARSE, 0},
	    {"{", 0, FLOE_EPARSE, 1},
	    {"{\"a\":1,}", 0, FLOE_EPARSE, 7},
	    {"{\"a\":1 \"b\":2}", 0, FLOE_EPARSE, 7},
	    {"{\"a\" 1}", 0, FLOE_EPARSE, 5},
	    {"{a:1}", 0, FLOE_EPARSE, 1},
	    {"{\"a\":\"\\u12\"}", 0, FLOE_EPARSE, 6},
	    {"{\"a\":\"\\u12", 0, FLOE_EPARSE, 6},
	    {"{\"a\":\"\\", 0, FLOE_EPARSE, 7},
	    {"{\"a\":\"\\x\"}", 0, FLOE_EPARSE, 6},
	    {"{\"a\":\"x", 0, FLOE_EPARSE, 7},
	    {"{\"a\":\"x\ty\"}", 0, FLOE_EPARSE, 7},
	    {"{\"a\":tru}", 0, FLOE_EPARSE, 8},
	    {"{\"a\":nul", 0, FLOE_EPARSE, 8},
	    {"{\"a\":01}", 0, FLOE_EPARSE, 6},
	    {"{\"a\":-}", 0, FLOE_EPARSE, 6},
	    {"{\"a\":1.}", 0, FLOE_EPARSE, 7},
	    {"{\"a\":1e}", 0, FLOE_EPARSE, 7},
	    {"{\"a\":+1}", 0, FLOE_EPARSE, 5},
	    {"{\"a\":[1,]}", 0, FLOE_EPARSE, 8},
	    {"{\"a\":[1 2]}", 0, FLOE_EPARSE, 8},
	    {"{\"a\":{\"b\":1]}", 0, FLOE_EPARSE, 11},
	    {"{\"a\":[}", 0, FLOE_EPARSE, 6},
	    {"{\"a\":1} x", 0, FLOE_EPARSE, 8},
	    {"{\"a\":1}{}", 0, FLOE_EPARSE, 7},
	    {"{\"a\":\"x\0y\"}", 11, FLOE_EPARSE, 7}, /* raw NUL in a string */
	    {"{\"a\":1}\0", 8, FLOE_EPARSE, 7},	      /* trailing NUL */
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		floe_fields_reset(f);
		floe_fields_add(f, "pre", 3, "x", 1);
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].s);
		size_t off = 12345;
		int rc = json_parse(cases[i].s, len, 3, f, &off);
		if (rc != cases[i].rc || off != cases[i].off)
			fail_msg("case %zu \"%s\": rc %d off %zu", i, cases[i].s, rc, off);
		/* On failure the fields are emptied. */
		assert_int_equal(floe_fields_count(f), 0);
	}
	/* err may be NULL. */
	assert_int_equal(json_parse("x", 1, 1, f, NULL), FLOE_EPARSE);
	/* A line cut anywhere is an error, never a crash or a read past the end. */
	const char *full = "{\"a\":{\"b\":[1,{\"c\":\"\\u00e9\"}],\"d\":-1.5e3},\"e\":null}";
	size_t n = strlen(full);
	for (size_t k = 0; k < n; k++) {
		char *cut = malloc(k ? k : 1);
		memcpy(cut, full, k);
		floe_fields_reset(f);
		size_t off;
		assert_int_equal(json_parse(cut, k, 2, f, &off), FLOE_EPARSE);
		assert_true(off <= k);
		free(cut);
	}
	floe_fields_free(f);
}

static void test_nesting_and_sizes(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 64, &f), 0);
	char *s = malloc(4096);
	size_t n = 0, off;
	/* 200 arrays deep: fine, kept raw. */
	n = (size_t)sprintf(s, "{\"a\":");
	for (int i = 0; i < 200; i++)
		s[n++] = '[';
	for (int i = 0; i < 200; i++)
		s[n++] = ']';
	s[n++] = '}';
	floe_fields_reset(f);
	assert_int_equal(json_parse(s, n, 2, f, &off), 0);
	assert_int_equal(floe_fields_val_lens(f)[0], 400);
	/* 300 deep: over the hard limit, refused at the 256th open bracket (the object
	 * itself is level 1). */
	n = (size_t)sprintf(s, "{\"a\":");
	for (int i = 0; i < 300; i++)
		s[n++] = '[';
	floe_fields_reset(f);
	assert_int_equal(json_parse(s, n, 2, f, &off), FLOE_ELIMIT);
	assert_int_equal(off, 5 + 255);
	/* Deep objects, flattened then raw. */
	n = (size_t)sprintf(s, "{");
	for (int i = 0; i < 300; i++)
		n += (size_t)sprintf(s + n, "\"k\":{");
	floe_fields_reset(f);
	assert_int_equal(json_parse(s, n, 16, f, &off), FLOE_ELIMIT);
	/* A 1000-digit number is text. */
	n = (size_t)sprintf(s, "{\"n\":-");
	for (int i = 0; i < 1000; i++)
		s[n++] = (char)('1' + i % 9);
	n += (size_t)sprintf(s + n, "e-99999999999}");
	floe_fields_reset(f);
	assert_int_equal(json_parse(s, n, 1, f, &off), 0);
	assert_int_equal(floe_fields_val_lens(f)[0], 1 + 1000 + 13);
	free(s);
	floe_fields_free(f);
}

static void test_capacity(void **state)
{
	/* 2 pairs, 8 arena bytes. */
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 2, 8, &f), 0);
	size_t off;
	assert_int_equal(parse(f, "{\"a\":1,\"b\":2,\"c\":3,\"a\":4}", 1, &off), 0);
	const struct kv w1[] = {KV("a", "4"), KV("b", "2")};
	expect(f, w1, 2);
	assert_int_equal(floe_fields_dropped(f), 1);
	/* An escaped value that does not fit the arena is dropped; the next fits. */
	assert_int_equal(parse(f, "{\"a\":\"\\n123456789\",\"b\":\"\\n1\"}", 1, &off), 0);
	const struct kv w2[] = {KV("b", "\n1")};
	expect(f, w2, 1);
	assert_int_equal(floe_fields_dropped(f), 1);
	/* Nested keys that do not fit: each member is dropped and counted. */
	assert_int_equal(parse(f, "{\"abcdefgh\":{\"x\":1,\"y\":[]},\"z\":0}", 2, &off), 0);
	const struct kv w3[] = {KV("z", "0")};
	expect(f, w3, 1);
	assert_int_equal(floe_fields_dropped(f), 2);
	/* A prefix that does not fit: the object under it is skipped (still validated) and
	 * counted once. */
	assert_int_equal(parse(f, "{\"a\":{\"bcdefghij\":{\"x\":1,\"y\":2}},\"z\":0}", 3, &off), 0);
	expect(f, w3, 1);
	assert_int_equal(floe_fields_dropped(f), 1);
	assert_int_equal(parse(f, "{\"a\":{\"bcdefghij\":{\"x\":1,\"y\":}},\"z\":0}", 3, &off),
			 FLOE_EPARSE);
	assert_int_equal(off, 29);
	assert_int_equal(parse(f, "{\"abcdefgh\":{\"x\":1,\"y\":]},\"z\":0}", 2, &off),
			 FLOE_EPARSE);
	assert_int_equal(off, 23);
	floe_fields_free(f);
}

static void test_unescape(void **state)
{
	char d[8];
	size_t n = 99;
	assert_int_equal(floe_json_unescape("a\\tb", 4, d, sizeof(d), &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(d, "a\tb", 3);
	assert_int_equal(floe_json_unescape("abc", 3, d, 2, &n), FLOE_ELIMIT);
	assert_int_equal(floe_json_unescape("\\u20ac", 6, d, 2, &n), FLOE_ELIMIT);
	assert_int_equal(floe_json_unescape("\\u20ac", 6, d, 3, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(d, "\xe2\x82\xac", 3);
	assert_int_equal(floe_json_unescape("ab\\n", 4, d, 2, &n), FLOE_ELIMIT);
	assert_int_equal(floe_json_unescape("\\", 1, d, 8, &n), FLOE_EPARSE);
	assert_int_equal(floe_json_unescape("\\u00", 4, d, 8, &n), FLOE_EPARSE);
	assert_int_equal(floe_json_unescape("\\q", 2, d, 8, &n), FLOE_EPARSE);
	assert_int_equal(floe_json_unescape("", 0, d, 0, &n), 0);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kinds),
	    cmocka_unit_test(test_flatten),
	    cmocka_unit_test(test_escapes),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_nesting_and_sizes),
	    cmocka_unit_test(test_capacity),
	    cmocka_unit_test(test_unescape),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
