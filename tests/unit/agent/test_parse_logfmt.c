/* Tests of agent/parse/logfmt: plain, quoted and escaped values, bare keys, empty values,
 * separators, '=' inside values, error offsets, truncated escapes, invalid UTF-8 and NUL
 * bytes, capacity. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/parse/fields.h"
#include "agent/parse/logfmt.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdlib.h>
#include <string.h>

/* floe_logfmt_parse with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int logfmt_parse(const char *s, size_t len, struct floe_fields *f, size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_logfmt_parse(s, len, f, &e);
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
	const char *v;
	size_t vl;
};
#define KV(k, v)                                                                                   \
	{                                                                                          \
		k, sizeof(k) - 1, v, sizeof(v) - 1                                                 \
	}

static void expect(const struct floe_fields *f, const struct kv *want, size_t n)
{
	assert_int_equal(floe_fields_count(f), n);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(floe_fields_key_lens(f)[i], want[i].kl);
		assert_memory_equal(floe_fields_keys(f)[i], want[i].k, want[i].kl);
		assert_non_null(floe_fields_vals(f)[i]);
		assert_int_equal(floe_fields_val_lens(f)[i], want[i].vl);
		assert_memory_equal(floe_fields_vals(f)[i], want[i].v, want[i].vl);
	}
}

static int parse(struct floe_fields *f, const char *s, size_t *off)
{
	floe_fields_reset(f);
	return logfmt_parse(s, strlen(s), f, off);
}

static void test_basic(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 256, &f), 0);
	size_t off;
	const char *s = "ts=2024-01-02T03:04:05Z level=info msg=\"hello \\\"world\\\"\" "
			"flag  empty= url=/a?b=c&d=e q=\"\" \tn=-1.5";
	assert_int_equal(logfmt_parse(s, strlen(s), f, &off), 0);
	const struct kv want[] = {
	    KV("ts", "2024-01-02T03:04:05Z"),
	    KV("level", "info"),
	    KV("msg", "hello \"world\""),
	    KV("flag", ""),
	    KV("empty", ""),
	    KV("url", "/a?b=c&d=e"),
	    KV("q", ""),
	    KV("n", "-1.5"),
	};
	expect(f, want, 8);
	/* Unquoted values and unescaped quoted values are slices. */
	assert_ptr_equal(floe_fields_vals(f)[0], s + 3);
	assert_ptr_equal(floe_fields_vals(f)[6], strstr(s, "q=\"\"") + 3);
	/* Empty and blank lines give nothing. */
	assert_int_equal(parse(f, "", &off), 0);
	assert_int_equal(parse(f, " \t \r", &off), 0);
	assert_int_equal(floe_fields_count(f), 0);
	/* Duplicates: last wins. */
	assert_int_equal(parse(f, "a=1 b=2 a=3", &off), 0);
	const struct kv w2[] = {KV("a", "3"), KV("b", "2")};
	expect(f, w2, 2);
	/* Escapes like Go's strconv; UTF-16 pairs; '"' inside an unquoted value is a byte. */
	assert_int_equal(parse(f, "m=\"a\\tb\\\\c\\/\\u00e9\\ud83d\\ude00\" x=a\"b", &off), 0);
	const struct kv w3[] = {KV("m", "a\tb\\c/\xc3\xa9\xf0\x9f\x98\x80"), KV("x", "a\"b")};
	expect(f, w3, 2);
	floe_fields_free(f);
}

static void test_bytes(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 256, &f), 0);
	size_t off;
	/* Invalid UTF-8 passes through; NUL is a separator (a byte <= ' '). */
	const char s[] = "k\xff=\xfe\xc3 a=b\0c=d";
	assert_int_equal(logfmt_parse(s, sizeof(s) - 1, f, &off), 0);
	const struct kv want[] = {KV("k\xff", "\xfe\xc3"), KV("a", "b"), KV("c", "d")};
	expect(f, want, 3);
	/* NUL inside a quoted value is kept. */
	const char s2[] = "q=\"x\0y\"";
	floe_fields_reset(f);
	assert_int_equal(logfmt_parse(s2, sizeof(s2) - 1, f, &off), 0);
	const struct kv w2[] = {KV("q", "x\0y")};
	expect(f, w2, 1);
	floe_fields_free(f);
}

static void test_errors(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 256, &f), 0);
	static const struct {
		const char *s;
		size_t off;
	} cases[] = {
	    {"=v", 0},	      {"a=1 =v", 4},	{"a\"b=1", 1},	    {"a=\"x", 4},
	    {"a=\"x\\", 5},   {"a=\"x\\\"", 6}, {"a=\"\\u12\"", 7}, {"a=\"\\u12", 7},
	    {"a=\"\\q\"", 4}, {"a=\"x\"y", 5},	{"\"a\"=1", 0},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t off = 999;
		floe_fields_reset(f);
		floe_fields_add(f, "pre", 3, "x", 1);
		int rc = logfmt_parse(cases[i].s, strlen(cases[i].s), f, &off);
		if (rc != FLOE_EPARSE || off != cases[i].off)
			fail_msg("case %zu \"%s\": rc %d off %zu", i, cases[i].s, rc, off);
		assert_int_equal(floe_fields_count(f), 0);
	}
	assert_int_equal(logfmt_parse("=", 1, f, NULL), FLOE_EPARSE);
	floe_fields_free(f);
}

static void test_capacity(void **state)
{
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 2, 4, &f), 0);
	size_t off;
	assert_int_equal(parse(f, "a=1 b=2 c=3 d", &off), 0);
	assert_int_equal(floe_fields_count(f), 2);
	assert_int_equal(floe_fields_dropped(f), 2);
	/* Escaped value over the arena: dropped, the rest kept. */
	assert_int_equal(parse(f, "a=\"\\n12345\" b=\"\\n1\"", &off), 0);
	const struct kv w[] = {KV("b", "\n1")};
	expect(f, w, 1);
	assert_int_equal(floe_fields_dropped(f), 1);
	floe_fields_free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_basic),
	    cmocka_unit_test(test_bytes),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_capacity),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
