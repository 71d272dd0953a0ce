/* Tests for the JSON reader/writer: exact round trips of Iceberg-style metadata, int64
 * edge cases, escapes, error offsets, limits, the building API and allocation faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

/* Written compactly, as the writer emits it, so the round trip must be byte-exact. */
static const char ICEBERG[] =
    "{\"format-version\":2,\"table-uuid\":\"9c12d441-03fe-4693-9a96-a0705ddf69c1\","
    "\"location\":\"s3://bucket/test/location\",\"last-sequence-number\":34,"
    "\"last-updated-ms\":1602638573590,\"last-column-id\":3,\"current-schema-id\":1,"
    "\"schemas\":[{\"type\":\"struct\",\"schema-id\":0,\"fields\":[{\"id\":1,\"name\":\"x\","
    "\"required\":true,\"type\":\"long\"}]},{\"type\":\"struct\",\"schema-id\":1,"
    "\"identifier-field-ids\":[1,2],\"fields\":[{\"id\":1,\"name\":\"x\",\"required\":true,"
    "\"type\":\"long\"},{\"id\":2,\"name\":\"y\",\"required\":true,\"type\":\"long\","
    "\"doc\":\"comment\"},{\"id\":3,\"name\":\"z\",\"required\":true,\"type\":\"decimal(9,2)\"}]}],"
    "\"default-spec-id\":0,\"partition-specs\":[{\"spec-id\":0,\"fields\":[{\"name\":\"x\","
    "\"transform\":\"identity\",\"source-id\":1,\"field-id\":1000}]}],\"last-partition-id\":1000,"
    "\"default-sort-order-id\":3,\"sort-orders\":[{\"order-id\":3,\"fields\":[{\"transform\":"
    "\"identity\",\"source-id\":2,\"direction\":\"asc\",\"null-order\":\"nulls-first\"}]}],"
    "\"properties\":{\"write.format.default\":\"parquet\",\"ratio\":\"0.5\"},"
    "\"current-snapshot-id\":3055729675574597004,\"snapshots\":[{\"snapshot-id\":"
    "3051729675574597004,\"timestamp-ms\":1515100955770,\"sequence-number\":0,\"summary\":"
    "{\"operation\":\"append\"},\"manifest-list\":\"s3://a/b/1.avro\"},{\"snapshot-id\":"
    "3055729675574597004,\"parent-snapshot-id\":3051729675574597004,\"timestamp-ms\":"
    "1555100955770,\"sequence-number\":1,\"summary\":{\"operation\":\"append\"},"
    "\"manifest-list\":\"s3://a/b/2.avro\",\"schema-id\":1}],\"statistics\":[{\"snapshot-id\":"
    "3055729675574597004,\"statistics-path\":\"s3://a/b/stats.puffin\",\"file-size-in-bytes\":"
    "413,\"file-footer-size-in-bytes\":42,\"blob-metadata\":[{\"type\":\"ndv\",\"snapshot-id\":"
    "3055729675574597004,\"sequence-number\":1,\"fields\":[1],\"properties\":{\"ndv\":\"1.5e10\"}}]"
    "}],"
    "\"x-unknown\":{\"ratio\":1.5e10,\"neg\":-0.25,\"big\":123456789012345678901234567890,"
    "\"flag\":false,\"none\":null,\"max\":9223372036854775807,\"min\":-9223372036854775808},"
    "\"snapshot-log\":[],\"metadata-log\":[]}";

static struct floe_json_doc *parse_ok(struct floe_alloc *a, const char *s)
{
	struct floe_json_doc *d = NULL;
	int rc = floe_json_parse(a, s, strlen(s), 0, &d, NULL);
	assert_int_equal(rc, 0);
	assert_non_null(d);
	return d;
}

static void assert_writes(const struct floe_json *v, const char *expect)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_json_write(v, &b), 0);
	assert_int_equal(b.len, strlen(expect));
	assert_memory_equal(b.data, expect, b.len);
	floe_buf_fini(&b);
}

static void test_iceberg_roundtrip(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_json_doc *d = parse_ok(&a, ICEBERG);
	struct floe_json *root = floe_json_root(d);
	assert_int_equal(floe_json_type(root), FLOE_JSON_OBJECT);
	assert_string_equal(floe_json_key_at(root, 0), "format-version");
	assert_string_equal(floe_json_key_at(root, 1), "table-uuid");
	assert_string_equal(floe_json_key_at(root, floe_json_len(root) - 1), "metadata-log");
	assert_null(floe_json_key_at(root, floe_json_len(root)));

	int64_t i;
	assert_int_equal(floe_json_get_int(root, "current-snapshot-id", &i), 0);
	assert_true(i == INT64_C(3055729675574597004));
	struct floe_json *snaps = floe_json_get(root, "snapshots");
	assert_int_equal(floe_json_len(snaps), 2);
	assert_int_equal(floe_json_get_int(floe_json_at(snaps, 0), "snapshot-id", &i), 0);
	assert_true(i == INT64_C(3051729675574597004));
	const char *s;
	assert_int_equal(floe_json_get_str(floe_json_at(snaps, 1), "manifest-list", &s), 0);
	assert_string_equal(s, "s3://a/b/2.avro");
	assert_int_equal(floe_json_get_str(root, "nope", &s), FLOE_ENOTFOUND);
	assert_int_equal(floe_json_get_str(root, "format-version", &s), FLOE_EFORMAT);

	struct floe_json *x = floe_json_get(root, "x-unknown");
	assert_int_equal(floe_json_type(floe_json_get(x, "ratio")), FLOE_JSON_NUMBER);
	assert_int_equal(floe_json_type(floe_json_get(x, "big")), FLOE_JSON_NUMBER);
	assert_int_equal(floe_json_get_int(x, "max", &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(floe_json_get_int(x, "min", &i), 0);
	assert_true(i == INT64_MIN);
	bool b = true;
	assert_int_equal(floe_json_bool(floe_json_get(x, "flag"), &b), 0);
	assert_false(b);
	assert_true(floe_json_is(floe_json_get(x, "none"), FLOE_JSON_NULL));

	assert_writes(root, ICEBERG);
	floe_json_doc_free(d);
	assert_int_equal(a.used, 0);
}

static void test_whitespace_is_dropped(void **state)
{
	(void)state;
	const char *in = " \r\n\t{ \"a\" : [ 1 , 2.0 , { } , [ ] , \"s\" ] ,\n \"b\":true } \n";
	struct floe_json_doc *d = parse_ok(NULL, in);
	assert_writes(floe_json_root(d), "{\"a\":[1,2.0,{},[],\"s\"],\"b\":true}");
	floe_json_doc_free(d);
}

static void test_numbers(void **state)
{
	(void)state;
	const char *in = "[9223372036854775807,-9223372036854775808,9223372036854775808,"
			 "-9223372036854775809,18446744073709551616,0,-0,1.5e10,1E+400,-1.25e-3,"
			 "3051729675574597004,-1,10]";
	struct floe_json_doc *d = parse_ok(NULL, in);
	struct floe_json *r = floe_json_root(d);
	static const enum floe_json_type types[] = {
	    FLOE_JSON_INT, FLOE_JSON_INT,    FLOE_JSON_NUMBER, FLOE_JSON_NUMBER, FLOE_JSON_NUMBER,
	    FLOE_JSON_INT, FLOE_JSON_NUMBER, FLOE_JSON_NUMBER, FLOE_JSON_NUMBER, FLOE_JSON_NUMBER,
	    FLOE_JSON_INT, FLOE_JSON_INT,    FLOE_JSON_INT};
	assert_int_equal(floe_json_len(r), sizeof(types) / sizeof(types[0]));
	for (size_t k = 0; k < floe_json_len(r); k++)
		assert_int_equal(floe_json_type(floe_json_at(r, k)), types[k]);
	int64_t i;
	assert_int_equal(floe_json_int(floe_json_at(r, 0), &i), 0);
	assert_true(i == INT64_MAX);
	assert_int_equal(floe_json_int(floe_json_at(r, 1), &i), 0);
	assert_true(i == INT64_MIN);
	assert_int_equal(floe_json_int(floe_json_at(r, 2), &i), FLOE_EFORMAT);
	assert_int_equal(floe_json_int(floe_json_at(r, 10), &i), 0);
	assert_true(i == INT64_C(3051729675574597004));
	assert_int_equal(floe_json_int(floe_json_at(r, 11), &i), 0);
	assert_true(i == -1);
	assert_writes(r, in);
	floe_json_doc_free(d);

	/* Built integers write exactly too. */
	assert_int_equal(floe_json_doc_new(NULL, &d), 0);
	struct floe_json *arr = floe_json_new_array(d);
	assert_int_equal(floe_json_push(d, arr, floe_json_new_int(d, INT64_MIN)), 0);
	assert_int_equal(floe_json_push(d, arr, floe_json_new_int(d, INT64_MAX)), 0);
	assert_writes(arr, "[-9223372036854775808,9223372036854775807]");
	floe_json_doc_free(d);
}

static void test_escapes(void **state)
{
	(void)state;
	const char *in =
	    "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0001\\u00e9\\u20AC\\ud83d\\ude00\\u0000x\xc3\xa9\"";
	static const char want[] =
	    "a\"b\\c/d\b\f\n\r\t\x01\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\0x\xc3\xa9";
	struct floe_json_doc *d = parse_ok(NULL, in);
	const char *s;
	size_t len;
	assert_int_equal(floe_json_str(floe_json_root(d), &s, &len), 0);
	assert_int_equal(len, sizeof(want) - 1);
	assert_memory_equal(s, want, len);
	assert_int_equal(s[len], '\0');
	assert_writes(
	    floe_json_root(d),
	    "\"a\\\"b\\\\c/"
	    "d\\b\\f\\n\\r\\t\\u0001\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\u0000x\xc3\xa9\"");
	floe_json_doc_free(d);

	/* Keys are unescaped and re-escaped the same way. */
	d = parse_ok(NULL, "{\"k\\u0041\\n\":1}");
	assert_non_null(floe_json_get(floe_json_root(d), "kA\n"));
	assert_writes(floe_json_root(d), "{\"kA\\n\":1}");
	floe_json_doc_free(d);
}

static void test_write_str(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1024);
	/* 0x1f and 0x7f, a truncated sequence, an overlong '/', an encoded surrogate. */
	static const char in[] = "\x1f\x7f|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xf4\x8f\xbf\xbf";
	assert_int_equal(floe_json_write_str(&b, in, sizeof(in) - 1), 0);
	static const char want[] =
	    "\"\\u001f\x7f|\\ufffd\\ufffd|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
	    "\xf4\x8f\xbf\xbf\"";
	assert_int_equal(b.len, sizeof(want) - 1);
	assert_memory_equal(b.data, want, b.len);
	floe_buf_fini(&b);

	/* A write that does not fit leaves the buffer as it was. */
	floe_buf_init(&b, NULL, 8);
	assert_int_equal(floe_buf_puts(&b, "ab"), 0);
	assert_int_equal(floe_json_write_str(&b, "0123456789", 10), FLOE_ELIMIT);
	assert_int_equal(b.len, 2);
	struct floe_json_doc *d = parse_ok(NULL, "[1,2,3,4,5]");
	assert_int_equal(floe_json_write(floe_json_root(d), &b), FLOE_ELIMIT);
	assert_int_equal(b.len, 2);
	floe_json_doc_free(d);
	floe_buf_fini(&b);
}

struct bad {
	const char *text;
	size_t len; /* 0: strlen */
	int rc;
	size_t off;
};

static void test_errors(void **state)
{
	(void)state;
	static const struct bad cases[] = {
	    {"", 0, FLOE_EPARSE, 0},
	    {"   ", 0, FLOE_EPARSE, 3},
	    {"{", 0, FLOE_EPARSE, 1},
	    {"[1,]", 0, FLOE_EPARSE, 3},
	    {"[1 2]", 0, FLOE_EPARSE, 3},
	    {"{\"a\" 1}", 0, FLOE_EPARSE, 5},
	    {"{\"a\":1,}", 0, FLOE_EPARSE, 7},
	    {"{a:1}", 0, FLOE_EPARSE, 1},
	    {"[01]", 0, FLOE_EPARSE, 2},
	    {"[-]", 0, FLOE_EPARSE, 2},
	    {"[1.]", 0, FLOE_EPARSE, 3},
	    {"[1e]", 0, FLOE_EPARSE, 3},
	    {"[.5]", 0, FLOE_EPARSE, 1},
	    {"[+1]", 0, FLOE_EPARSE, 1},
	    {"tru", 0, FLOE_EPARSE, 0},
	    {"nulll", 0, FLOE_EPARSE, 4},
	    {"1 2", 0, FLOE_EPARSE, 2},
	    {"\"abc", 0, FLOE_EPARSE, 4},
	    {"\"ab\\", 0, FLOE_EPARSE, 4},
	    {"\"a\\x\"", 0, FLOE_EPARSE, 2},
	    {"\"a\\u12G4\"", 0, FLOE_EPARSE, 2},
	    {"\"a\\u12\"", 0, FLOE_EPARSE, 2},
	    {"\"a\tb\"", 0, FLOE_EPARSE, 2},
	    {"\"ab\\ud800\"", 0, FLOE_EPARSE, 3},
	    {"\"ab\\ud800\\u0041\"", 0, FLOE_EPARSE, 3},
	    {"\"ab\\udc00\\ud800\"", 0, FLOE_EPARSE, 3},
	    {"\"a\xff\"", 0, FLOE_EPARSE, 2},
	    {"\"a\xc3\"", 0, FLOE_EPARSE, 2},
	    {"\"a\xe0\x80\x80\"", 0, FLOE_EPARSE, 2},
	    {"\"a\xed\xa0\x80\"", 0, FLOE_EPARSE, 2},
	    {"\"a\xf4\x90\x80\x80\"", 0, FLOE_EPARSE, 2},
	    {"[\"\xc3\xa9\" , \xc3\xa9]", 0, FLOE_EPARSE, 8},
	    {"\"a\0b\"", 5, FLOE_EPARSE, 2},
	    {"[1]\0", 4, FLOE_EPARSE, 3},
	    {"\xef\xbb\xbf[]", 0, FLOE_EPARSE, 0},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		const struct bad *c = &cases[k];
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_json_doc *d = (struct floe_json_doc *)&a;
		struct floe_err e = {.offset = 9999};
		size_t len = c->len ? c->len : strlen(c->text);
		int rc = floe_json_parse(&a, c->text, len, 0, &d, &e);
		if (rc != c->rc || e.code != c->rc || e.offset != c->off)
			fail_msg("case %zu (%s): rc %d off %zu, want %d at %zu", k, c->text, rc,
				 e.offset, c->rc, c->off);
		assert_null(d);
		assert_int_equal(a.used, 0);
	}
	/* The detail says what and where. */
	struct floe_json_doc *d;
	struct floe_err e;
	assert_int_equal(floe_json_parse(NULL, "{\"a\":1,}", 8, 0, &d, &e), FLOE_EPARSE);
	assert_string_equal(e.msg, "JSON: expected a member name at byte 7");
	assert_int_equal(floe_json_parse(NULL, "[1 2]", 5, 0, &d, &e), FLOE_EPARSE);
	assert_string_equal(e.msg, "JSON: expected ',' or ']' at byte 3");
	assert_int_equal(floe_json_parse(NULL, "\"a\xff\"", 4, 0, &d, &e), FLOE_EPARSE);
	assert_string_equal(e.msg, "JSON: invalid UTF-8 in string at byte 2");
	/* The detail may be NULL. */
	assert_int_equal(floe_json_parse(NULL, "[", 1, 0, &d, NULL), FLOE_EPARSE);
}

static void test_limits(void **state)
{
	(void)state;
	char text[2 * 66 + 1];
	struct floe_json_doc *d;
	struct floe_err e;
	for (int depth = 63; depth <= 66; depth++) {
		memset(text, '[', (size_t)depth);
		memset(text + depth, ']', (size_t)depth);
		int rc = floe_json_parse(NULL, text, 2 * (size_t)depth, 0, &d, &e);
		if (depth <= 64) {
			assert_int_equal(rc, 0);
			floe_json_doc_free(d);
		} else {
			assert_int_equal(rc, FLOE_ELIMIT);
			assert_int_equal(e.offset, 64);
			assert_string_equal(e.msg, "JSON: nested deeper than 64 levels at byte 64");
		}
	}
	/* Mixed objects and arrays count alike. */
	char mixed[64 * 6 + 64 + 2];
	size_t n = 0;
	for (int k = 0; k < 64; k++) {
		memcpy(mixed + n, "{\"a\":", 5);
		n += 5;
	}
	mixed[n++] = '[';
	for (int k = 0; k < 64; k++)
		mixed[n++] = '}';
	assert_int_equal(floe_json_parse(NULL, mixed, n, 0, &d, &e), FLOE_ELIMIT);
	assert_int_equal(e.offset, 64 * 5);

	assert_int_equal(floe_json_parse(NULL, "[1,2,3]", 7, 6, &d, &e), FLOE_ELIMIT);
	assert_int_equal(e.offset, 6);
	assert_int_equal(floe_json_parse(NULL, "[1,2,3]", 7, 7, &d, &e), 0);
	floe_json_doc_free(d);

	/* A budget too small for the document is ENOMEM, not a crash. */
	struct floe_alloc a;
	floe_alloc_init(&a, 512);
	assert_int_equal(floe_json_parse(&a, ICEBERG, strlen(ICEBERG), 0, &d, &e), FLOE_ENOMEM);
	assert_int_equal(a.used, 0);
}

static void test_build(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_json_doc *d = NULL;
	assert_int_equal(floe_json_doc_new(&a, &d), 0);
	assert_null(floe_json_root(d));
	struct floe_json *o = floe_json_new_object(d);
	floe_json_set_root(d, o);
	assert_int_equal(floe_json_set(d, o, "a", floe_json_new_int(d, 1)), 0);
	assert_int_equal(floe_json_set(d, o, "b", floe_json_new_str(d, "x\"y", 3)), 0);
	assert_int_equal(floe_json_set(d, o, "c", floe_json_new_null(d)), 0);
	struct floe_json *arr = floe_json_new_array(d);
	for (int k = 0; k < 10; k++)
		assert_int_equal(floe_json_push(d, arr, floe_json_new_bool(d, k & 1)), 0);
	assert_int_equal(floe_json_set(d, o, "d", arr), 0);
	/* Replacing keeps the position. */
	assert_int_equal(floe_json_set(d, o, "a", floe_json_new_str(d, "one", 3)), 0);
	assert_writes(
	    o, "{\"a\":\"one\",\"b\":\"x\\\"y\",\"c\":null,\"d\":[false,true,false,true,false,"
	       "true,false,true,false,true]}");
	assert_int_equal(floe_json_remove(o, "b"), 0);
	assert_int_equal(floe_json_remove(o, "zz"), 0);
	assert_int_equal(floe_json_set(d, o, "b", floe_json_new_int(d, -7)), 0);
	assert_writes(floe_json_root(d),
		      "{\"a\":\"one\",\"c\":null,\"d\":[false,true,false,true,false,"
		      "true,false,true,false,true],\"b\":-7}");
	/* Misuse and chained failures. */
	assert_int_equal(floe_json_push(d, o, floe_json_new_null(d)), FLOE_EINVAL);
	assert_int_equal(floe_json_set(d, arr, "x", floe_json_new_null(d)), FLOE_EINVAL);
	assert_int_equal(floe_json_set(d, o, "x", NULL), FLOE_ENOMEM);
	assert_int_equal(floe_json_push(d, arr, NULL), FLOE_ENOMEM);

	/* Clone into another document, which then outlives the source. */
	struct floe_json_doc *src = parse_ok(&a, ICEBERG);
	struct floe_json *copy =
	    floe_json_clone(d, floe_json_get(floe_json_root(src), "x-unknown"));
	assert_non_null(copy);
	floe_json_doc_free(src);
	assert_int_equal(floe_json_set(d, o, "copy", copy), 0);
	assert_writes(copy,
		      "{\"ratio\":1.5e10,\"neg\":-0.25,\"big\":123456789012345678901234567890,"
		      "\"flag\":false,\"none\":null,\"max\":9223372036854775807,"
		      "\"min\":-9223372036854775808}");
	floe_json_doc_free(d);
	assert_int_equal(a.used, 0);

	/* NULL is accepted everywhere on the read side. */
	int64_t i;
	const char *s;
	bool b;
	assert_int_equal(floe_json_type(NULL), FLOE_JSON_NULL);
	assert_false(floe_json_is(NULL, FLOE_JSON_NULL));
	assert_null(floe_json_get(NULL, "a"));
	assert_int_equal(floe_json_len(NULL), 0);
	assert_null(floe_json_at(NULL, 0));
	assert_null(floe_json_key_at(NULL, 0));
	assert_int_equal(floe_json_int(NULL, &i), FLOE_EFORMAT);
	assert_int_equal(floe_json_bool(NULL, &b), FLOE_EFORMAT);
	assert_int_equal(floe_json_str(NULL, &s, NULL), FLOE_EFORMAT);
	assert_int_equal(floe_json_get_int(NULL, "a", &i), FLOE_ENOTFOUND);
	assert_null(floe_json_root(NULL));
	floe_json_doc_free(NULL);
}

/* A large object and a long array: the arena's big-block path and lookups in order. */
static void test_large(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_buf b;
	floe_buf_init(&b, &a, 1 << 24);
	assert_int_equal(floe_buf_putc(&b, '{'), 0);
	for (int k = 0; k < 5000; k++)
		assert_int_equal(
		    floe_buf_printf(&b, "%s\"k%d\":[%d,\"%0*d\"]", k ? "," : "", k, k, k % 300, 0),
		    0);
	assert_int_equal(floe_buf_putc(&b, '}'), 0);
	struct floe_json_doc *d;
	assert_int_equal(floe_json_parse(&a, (const char *)b.data, b.len, 0, &d, NULL), 0);
	struct floe_json *r = floe_json_root(d);
	assert_int_equal(floe_json_len(r), 5000);
	int64_t i;
	assert_int_equal(floe_json_int(floe_json_at(floe_json_get(r, "k4321"), 0), &i), 0);
	assert_int_equal(i, 4321);
	assert_string_equal(floe_json_key_at(r, 4999), "k4999");
	struct floe_buf w;
	floe_buf_init(&w, &a, 1 << 24);
	assert_int_equal(floe_json_write(r, &w), 0);
	assert_int_equal(w.len, b.len);
	assert_memory_equal(w.data, b.data, b.len);
	floe_buf_fini(&w);
	floe_buf_fini(&b);
	floe_json_doc_free(d);
	assert_int_equal(a.used, 0);
}

static int build_and_write(struct floe_alloc *a, struct floe_buf *out)
{
	struct floe_json_doc *src = NULL, *d = NULL;
	int rc = floe_json_doc_new(a, &d);
	if (rc)
		goto out;
	if ((rc = floe_json_parse(a, ICEBERG, strlen(ICEBERG), 0, &src, NULL)))
		goto out;
	struct floe_json *o = floe_json_new_object(d);
	if (!o) {
		rc = FLOE_ENOMEM;
		goto out;
	}
	floe_json_set_root(d, o);
	if ((rc = floe_json_set(d, o, "copy", floe_json_clone(d, floe_json_root(src)))))
		goto out;
	struct floe_json *arr = floe_json_new_array(d);
	if ((rc = floe_json_set(d, o, "arr", arr)))
		goto out;
	for (int k = 0; k < 20; k++)
		if ((rc = floe_json_push(d, arr, floe_json_new_str(d, "value", 5))))
			goto out;
	rc = floe_json_write(o, out);
out:
	floe_json_doc_free(src);
	floe_json_doc_free(d);
	return rc;
}

static void test_fault_injection(void **state)
{
	(void)state;
	struct floe_alloc a;
	int rc = -1;
	long k;
	for (k = 0; k < 10000; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_json_doc *d = NULL;
		rc = floe_json_parse(&a, ICEBERG, strlen(ICEBERG), 0, &d, NULL);
		if (rc == 0) {
			floe_json_doc_free(d);
			assert_int_equal(a.used, 0);
			break;
		}
		assert_int_equal(rc, FLOE_ENOMEM);
		assert_null(d);
		assert_int_equal(a.used, 0);
	}
	assert_int_equal(rc, 0);
	assert_true(k > 0);

	for (k = 0; k < 10000; k++) {
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct floe_buf b;
		floe_buf_init(&b, &a, 1 << 20);
		rc = build_and_write(&a, &b);
		if (rc == 0) {
			assert_true(b.len > strlen(ICEBERG));
			floe_buf_fini(&b);
			assert_int_equal(a.used, 0);
			break;
		}
		assert_int_equal(rc, FLOE_ENOMEM);
		assert_int_equal(b.len, 0);
		floe_buf_fini(&b);
		assert_int_equal(a.used, 0);
	}
	assert_int_equal(rc, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_iceberg_roundtrip),
	    cmocka_unit_test(test_whitespace_is_dropped),
	    cmocka_unit_test(test_numbers),
	    cmocka_unit_test(test_escapes),
	    cmocka_unit_test(test_write_str),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_build),
	    cmocka_unit_test(test_large),
	    cmocka_unit_test(test_fault_injection),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
