/* Tests of the Avro encoding helpers, the container writer (hand-computed bytes), the
 * reader (round trips with both codecs, every value type), hostile and truncated input,
 * and allocation failures. FLOE_DUMP_DIR=dir writes the test files there. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

static const uint8_t SYNC[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static void dump(const char *name, const struct floe_buf *b)
{
	const char *dir = getenv("FLOE_DUMP_DIR");
	if (!dir)
		return;
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(b->data, 1, b->len, f);
		fclose(f);
	}
}

static void expect_bytes(const struct floe_buf *b, const void *want, size_t n)
{
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, want, n);
}

static void test_zigzag(void **state)
{
	(void)state;
	static const struct {
		int64_t v;
		const char *enc;
		size_t n;
	} cases[] = {
		{0, "\x00", 1},       {-1, "\x01", 1},     {1, "\x02", 1},
		{-64, "\x7f", 1},     {64, "\x80\x01", 2}, {-65, "\x81\x01", 2},
		{INT64_MAX, "\xfe\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10},
		{INT64_MIN, "\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 10},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floe_buf b;
		floe_buf_init(&b, NULL, 64);
		assert_int_equal(floe_avro_put_long(&b, cases[i].v), 0);
		expect_bytes(&b, cases[i].enc, cases[i].n);
		struct floe_avro_cursor c = {b.data, b.len, 0};
		int64_t back;
		assert_int_equal(floe_avro_get_long(&c, &back), 0);
		assert_true(back == cases[i].v);
		assert_int_equal(c.pos, cases[i].n);
		/* Every strict prefix is truncated. */
		for (size_t k = 0; k < cases[i].n; k++) {
			struct floe_avro_cursor t = {b.data, k, 0};
			assert_int_equal(floe_avro_get_long(&t, &back), FLOE_EPARSE);
			assert_int_equal(t.pos, 0);
		}
		floe_buf_fini(&b);
	}
	/* An 11-byte varint and a 10th byte with more than the top bit are overlong. */
	struct floe_avro_cursor c = {(const uint8_t *)"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x02", 10, 0};
	int64_t v;
	assert_int_equal(floe_avro_get_long(&c, &v), FLOE_EPARSE);
	c = (struct floe_avro_cursor){(const uint8_t *)"\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80\x00", 11, 0};
	assert_int_equal(floe_avro_get_long(&c, &v), FLOE_EPARSE);
}

static void test_primitives(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 256);
	assert_int_equal(floe_avro_put_str(&b, "foo"), 0);
	assert_int_equal(floe_avro_put_bytes(&b, "", 0), 0);
	assert_int_equal(floe_avro_put_bool(&b, true), 0);
	assert_int_equal(floe_avro_put_bool(&b, false), 0);
	assert_int_equal(floe_avro_put_double(&b, 1.0), 0);
	assert_int_equal(floe_avro_put_float(&b, -2.0f), 0);
	assert_int_equal(floe_avro_put_union(&b, 1), 0);
	assert_int_equal(floe_avro_put_int(&b, -3), 0);
	static const uint8_t want[] = {0x06, 'f',  'o',  'o',  0x00, 0x01, 0x00, 0,    0,    0,
				       0,    0,    0,    0xf0, 0x3f, 0,    0,    0,    0xc0, 0x02, 0x05};
	expect_bytes(&b, want, sizeof(want));
	struct floe_avro_cursor c = {b.data, b.len, 0};
	const uint8_t *p;
	size_t n;
	assert_int_equal(floe_avro_get_bytes(&c, &p, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(p, "foo", 3);
	/* A length past the end is refused. */
	struct floe_avro_cursor t = {(const uint8_t *)"\x08" "abc", 4, 0};
	assert_int_equal(floe_avro_get_bytes(&t, &p, &n), FLOE_EPARSE);
	t = (struct floe_avro_cursor){(const uint8_t *)"\x01", 1, 0}; /* -1 */
	assert_int_equal(floe_avro_get_bytes(&t, &p, &n), FLOE_EPARSE);
	floe_buf_fini(&b);
}

#define TINY_SCHEMA                                                                                \
	"{\"type\":\"record\",\"name\":\"r\",\"fields\":[{\"name\":\"a\",\"type\":\"long\"},"     \
	"{\"name\":\"s\",\"type\":\"string\"}]}"

static int write_tiny(struct floe_alloc *a, struct floe_buf *out, enum floe_avro_codec codec)
{
	struct floe_avro_meta meta[] = {{"k", "v", 1}};
	struct floe_avro_writer_opts o = {
		.schema_json = TINY_SCHEMA,
		.schema_len = strlen(TINY_SCHEMA),
		.codec = codec,
		.meta = meta,
		.nmeta = 1,
		.sync = SYNC,
	};
	struct floe_avro_writer *w = NULL;
	int rc = floe_avro_writer_new(a, &o, out, &w);
	if (!rc)
		rc = floe_avro_put_long(floe_avro_writer_record(w), 1);
	if (!rc)
		rc = floe_avro_put_str(floe_avro_writer_record(w), "x");
	if (!rc)
		rc = floe_avro_writer_end_record(w);
	if (!rc)
		rc = floe_avro_writer_flush(w);
	floe_avro_writer_free(w);
	return rc;
}

static void test_tiny_container(void **state)
{
	(void)state;
	struct floe_buf out;
	floe_buf_init(&out, NULL, 4096);
	assert_int_equal(write_tiny(NULL, &out, FLOE_AVRO_CODEC_NULL), 0);
	struct floe_buf want;
	floe_buf_init(&want, NULL, 4096);
	floe_buf_append(&want, "Obj\x01", 4);
	floe_buf_append(&want, "\x06", 1);                /* 3 metadata entries */
	floe_buf_append(&want, "\x16" "avro.schema", 12); /* 11 bytes */
	floe_buf_append(&want, "\xbe\x01", 2);            /* schema: 95 bytes */
	floe_buf_append(&want, TINY_SCHEMA, 95);
	floe_buf_append(&want, "\x14" "avro.codec" "\x08" "null", 16);
	floe_buf_append(&want, "\x02k\x02v", 4);
	floe_buf_append(&want, "\x00", 1); /* end of map */
	floe_buf_append(&want, SYNC, 16);
	floe_buf_append(&want, "\x02\x06\x02\x02x", 5); /* 1 object, 3 bytes: a=1, s="x" */
	floe_buf_append(&want, SYNC, 16);
	expect_bytes(&out, want.data, want.len);
	dump("tiny.avro", &out);

	struct floe_avro_reader *r;
	assert_int_equal(floe_avro_reader_new(NULL, out.data, out.len, NULL, &r, NULL), 0);
	size_t len;
	const uint8_t *m = floe_avro_reader_meta(r, "k", &len);
	assert_non_null(m);
	assert_int_equal(len, 1);
	assert_null(floe_avro_reader_meta(r, "nope", &len));
	const struct floe_avro_schema *s = floe_avro_reader_schema(r);
	assert_int_equal(floe_avro_schema_type(s), FLOE_AVRO_RECORD);
	assert_string_equal(floe_avro_schema_name(s), "r");
	assert_int_equal(floe_avro_schema_count(s), 2);
	assert_string_equal(floe_avro_schema_field_name(s, 1), "s");
	const struct floe_avro_value *v;
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 1);
	int64_t a;
	const uint8_t *p;
	assert_int_equal(floe_avro_value_long(floe_avro_value_get(v, "a"), &a), 0);
	assert_int_equal(a, 1);
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(v, "s"), &p, &len), 0);
	assert_int_equal(len, 1);
	assert_string_equal((const char *)p, "x");
	assert_null(floe_avro_value_get(v, "zz"));
	assert_int_equal(floe_avro_value_long(floe_avro_value_get(v, "s"), &a), FLOE_EFORMAT);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 0);
	floe_avro_reader_free(r);
	floe_buf_fini(&want);
	floe_buf_fini(&out);
}

/* A schema with every type, named references and a namespace. */
static const char RICH_SCHEMA[] =
	"{\"type\":\"record\",\"name\":\"Rich\",\"namespace\":\"t.ns\",\"fields\":["
	"{\"name\":\"i\",\"type\":\"int\"},"
	"{\"name\":\"l\",\"type\":{\"type\":\"long\",\"logicalType\":\"timestamp-micros\"}},"
	"{\"name\":\"f\",\"type\":\"float\"},"
	"{\"name\":\"d\",\"type\":\"double\"},"
	"{\"name\":\"b\",\"type\":\"boolean\"},"
	"{\"name\":\"by\",\"type\":\"bytes\"},"
	"{\"name\":\"s\",\"type\":\"string\",\"field-id\":7},"
	"{\"name\":\"e\",\"type\":{\"type\":\"enum\",\"name\":\"Color\",\"symbols\":[\"RED\",\"GREEN\"]}},"
	"{\"name\":\"fx\",\"type\":{\"type\":\"fixed\",\"name\":\"F4\",\"size\":4}},"
	"{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"items\":\"long\"}},"
	"{\"name\":\"m\",\"type\":{\"type\":\"map\",\"values\":\"string\"}},"
	"{\"name\":\"u\",\"type\":[\"null\",\"string\"],\"default\":null},"
	"{\"name\":\"sub\",\"type\":{\"type\":\"record\",\"name\":\"Sub\",\"fields\":[{\"name\":\"c\",\"type\":\"t.ns.Color\"}]}},"
	"{\"name\":\"fx2\",\"type\":\"F4\"},"
	"{\"name\":\"nul\",\"type\":\"null\"}"
	"]}";

#define NREC 300

static int put_rich(struct floe_buf *b, int k)
{
	char s[32];
	snprintf(s, sizeof(s), "str-%d", k);
	int rc = floe_avro_put_int(b, k - 100);
	rc = rc ? rc : floe_avro_put_long(b, (int64_t)k * 1000000007LL);
	rc = rc ? rc : floe_avro_put_float(b, (float)k / 2);
	rc = rc ? rc : floe_avro_put_double(b, (double)k / 4);
	rc = rc ? rc : floe_avro_put_bool(b, k & 1);
	rc = rc ? rc : floe_avro_put_bytes(b, s, (size_t)(k % 5));
	rc = rc ? rc : floe_avro_put_str(b, s);
	rc = rc ? rc : floe_avro_put_int(b, k & 1); /* enum index */
	rc = rc ? rc : floe_buf_append(b, "ABCD", 4);
	/* Array: k%4 items; odd records use a negative-count block with its byte size. */
	if (!rc && k % 4) {
		if (k & 1) {
			struct floe_buf tmp;
			floe_buf_init(&tmp, NULL, 256);
			for (int j = 0; j < k % 4; j++)
				floe_avro_put_long(&tmp, j + k);
			rc = floe_avro_put_long(b, -(k % 4));
			rc = rc ? rc : floe_avro_put_long(b, (int64_t)tmp.len);
			rc = rc ? rc : floe_buf_append(b, tmp.data, tmp.len);
			floe_buf_fini(&tmp);
		} else {
			rc = floe_avro_put_long(b, k % 4);
			for (int j = 0; !rc && j < k % 4; j++)
				rc = floe_avro_put_long(b, j + k);
		}
	}
	rc = rc ? rc : floe_avro_put_long(b, 0);
	/* Map: two blocks of one entry each. */
	rc = rc ? rc : floe_avro_put_long(b, 1);
	rc = rc ? rc : floe_avro_put_str(b, "k1");
	rc = rc ? rc : floe_avro_put_str(b, s);
	rc = rc ? rc : floe_avro_put_long(b, 1);
	rc = rc ? rc : floe_avro_put_str(b, "k2");
	rc = rc ? rc : floe_avro_put_str(b, "v2");
	rc = rc ? rc : floe_avro_put_long(b, 0);
	if (k % 3 == 0) {
		rc = rc ? rc : floe_avro_put_union(b, 0);
	} else {
		rc = rc ? rc : floe_avro_put_union(b, 1);
		rc = rc ? rc : floe_avro_put_str(b, "u");
	}
	rc = rc ? rc : floe_avro_put_int(b, 1 - (k & 1)); /* sub.c */
	rc = rc ? rc : floe_buf_append(b, "WXYZ", 4);
	return rc;
}

static int write_rich(struct floe_alloc *a, struct floe_buf *out, enum floe_avro_codec codec, int n)
{
	struct floe_avro_writer_opts o = {
		.schema_json = RICH_SCHEMA,
		.schema_len = strlen(RICH_SCHEMA),
		.codec = codec,
		.sync = SYNC,
		.block_bytes = 1000,
	};
	struct floe_avro_writer *w = NULL;
	int rc = floe_avro_writer_new(a, &o, out, &w);
	for (int k = 0; !rc && k < n; k++) {
		rc = put_rich(floe_avro_writer_record(w), k);
		if (!rc)
			rc = floe_avro_writer_end_record(w);
	}
	if (!rc)
		rc = floe_avro_writer_flush(w);
	floe_avro_writer_free(w);
	return rc;
}

static void check_rich(const struct floe_avro_value *v, int k)
{
	char s[32];
	snprintf(s, sizeof(s), "str-%d", k);
	int64_t i;
	double d;
	bool b;
	const uint8_t *p;
	size_t n;
	const char *sym;
	assert_int_equal(floe_avro_value_type(v), FLOE_AVRO_RECORD);
	assert_int_equal(floe_avro_value_len(v), 15);
	assert_int_equal(floe_avro_value_long(floe_avro_value_get(v, "i"), &i), 0);
	assert_int_equal(i, k - 100);
	assert_int_equal(floe_avro_value_long(floe_avro_value_get(v, "l"), &i), 0);
	assert_true(i == (int64_t)k * 1000000007LL);
	assert_int_equal(floe_avro_value_double(floe_avro_value_get(v, "f"), &d), 0);
	assert_true(d == (double)k / 2);
	assert_int_equal(floe_avro_value_double(floe_avro_value_get(v, "d"), &d), 0);
	assert_true(d == (double)k / 4);
	assert_int_equal(floe_avro_value_bool(floe_avro_value_get(v, "b"), &b), 0);
	assert_int_equal(b, k & 1);
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(v, "by"), &p, &n), 0);
	assert_int_equal(n, k % 5);
	assert_memory_equal(p, s, n);
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(v, "s"), &p, &n), 0);
	assert_string_equal((const char *)p, s);
	assert_int_equal(floe_avro_value_enum(floe_avro_value_get(v, "e"), &i, &sym), 0);
	assert_int_equal(i, k & 1);
	assert_string_equal(sym, (k & 1) ? "GREEN" : "RED");
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(v, "fx"), &p, &n), 0);
	assert_int_equal(n, 4);
	assert_memory_equal(p, "ABCD", 4);
	const struct floe_avro_value *arr = floe_avro_value_get(v, "arr");
	assert_int_equal(floe_avro_value_type(arr), FLOE_AVRO_ARRAY);
	assert_int_equal(floe_avro_value_len(arr), k % 4);
	for (int j = 0; j < k % 4; j++) {
		assert_int_equal(floe_avro_value_long(floe_avro_value_at(arr, (size_t)j), &i), 0);
		assert_int_equal(i, j + k);
	}
	const struct floe_avro_value *m = floe_avro_value_get(v, "m");
	assert_int_equal(floe_avro_value_len(m), 2);
	assert_string_equal(floe_avro_value_key_at(m, 0, &n), "k1");
	assert_string_equal(floe_avro_value_key_at(m, 1, &n), "k2");
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_at(m, 0), &p, &n), 0);
	assert_string_equal((const char *)p, s);
	const struct floe_avro_value *u = floe_avro_value_get(v, "u");
	if (k % 3 == 0) {
		assert_true(floe_avro_value_is_null(u));
	} else {
		assert_int_equal(floe_avro_value_bytes(u, &p, &n), 0);
		assert_string_equal((const char *)p, "u");
	}
	assert_int_equal(floe_avro_value_enum(floe_avro_value_get(floe_avro_value_get(v, "sub"), "c"), &i, NULL), 0);
	assert_int_equal(i, 1 - (k & 1));
	assert_int_equal(floe_avro_value_bytes(floe_avro_value_get(v, "fx2"), &p, &n), 0);
	assert_memory_equal(p, "WXYZ", 4);
	assert_true(floe_avro_value_is_null(floe_avro_value_get(v, "nul")));
}

/* Reads every record; returns the count, or the error. */
static int read_all(struct floe_alloc *a, const uint8_t *data, size_t len, bool check)
{
	struct floe_avro_reader *r;
	int rc = floe_avro_reader_new(a, data, len, NULL, &r, NULL);
	if (rc)
		return rc;
	int n = 0;
	const struct floe_avro_value *v;
	while ((rc = floe_avro_reader_next(r, &v, NULL)) == 1) {
		if (check)
			check_rich(v, n);
		n++;
	}
	floe_avro_reader_free(r);
	return rc ? rc : n;
}

static void test_round_trip(void **state)
{
	(void)state;
	for (int codec = 0; codec < 2; codec++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_buf out;
		floe_buf_init(&out, &a, 1 << 20);
		assert_int_equal(write_rich(&a, &out, (enum floe_avro_codec)codec, NREC), 0);
		dump(codec ? "rich-deflate.avro" : "rich-null.avro", &out);
		assert_int_equal(read_all(&a, out.data, out.len, true), NREC);
		struct floe_avro_reader *r;
		assert_int_equal(floe_avro_reader_new(&a, out.data, out.len, NULL, &r, NULL), 0);
		const struct floe_avro_schema *s = floe_avro_reader_schema(r);
		assert_string_equal(floe_avro_schema_name(s), "t.ns.Rich");
		int32_t id;
		assert_true(floe_avro_schema_field_id(s, 6, &id));
		assert_int_equal(id, 7);
		assert_false(floe_avro_schema_field_id(s, 0, &id));
		assert_int_equal(floe_avro_schema_field_index(s, "sub"), 12);
		assert_string_equal(floe_avro_schema_name(floe_avro_schema_at(s, 12)), "t.ns.Sub");
		size_t len;
		const uint8_t *c = floe_avro_reader_meta(r, "avro.codec", &len);
		assert_memory_equal(c, codec ? "deflate" : "null", len);
		floe_avro_reader_free(r);
		floe_buf_fini(&out);
		assert_int_equal(a.used, 0);
		/* A small file of the same shape for the fuzz corpus. */
		floe_buf_init(&out, NULL, 1 << 20);
		assert_int_equal(write_rich(NULL, &out, (enum floe_avro_codec)codec, 4), 0);
		dump(codec ? "rich4-deflate.avro" : "rich4-null.avro", &out);
		floe_buf_fini(&out);
	}
}

static void test_truncated_and_corrupt(void **state)
{
	(void)state;
	for (int codec = 0; codec < 2; codec++) {
		struct floe_buf out;
		floe_buf_init(&out, NULL, 1 << 20);
		assert_int_equal(write_rich(NULL, &out, (enum floe_avro_codec)codec, 40), 0);
		/* Every prefix either fails or, cut at a block boundary, has fewer records. */
		for (size_t n = 0; n < out.len; n++) {
			uint8_t *copy = malloc(n ? n : 1);
			memcpy(copy, out.data, n);
			int rc = read_all(NULL, copy, n, false);
			assert_true(rc < 40);
			free(copy);
		}
		/* Flipping any byte never crashes (the sanitizers check) and never yields more. */
		uint8_t *copy = malloc(out.len);
		for (size_t i = 0; i < out.len; i++) {
			memcpy(copy, out.data, out.len);
			copy[i] ^= 0xa5;
			int rc = read_all(NULL, copy, out.len, false);
			assert_true(rc <= 40);
		}
		free(copy);
		floe_buf_fini(&out);
	}
}

static void build_file(struct floe_buf *b, const char *schema, const char *codec, const void *data,
		       size_t dlen, int64_t count)
{
	floe_buf_init(b, NULL, 1 << 20);
	floe_buf_append(b, "Obj\x01", 4);
	floe_avro_put_long(b, 2);
	floe_avro_put_str(b, "avro.schema");
	floe_avro_put_str(b, schema);
	floe_avro_put_str(b, "avro.codec");
	floe_avro_put_str(b, codec);
	floe_avro_put_long(b, 0);
	floe_buf_append(b, SYNC, 16);
	floe_avro_put_long(b, count);
	floe_avro_put_long(b, (int64_t)dlen);
	floe_buf_append(b, data, dlen);
	floe_buf_append(b, SYNC, 16);
}

static void test_hostile(void **state)
{
	(void)state;
	struct floe_buf b;
	const struct floe_avro_value *v;
	struct floe_avro_reader *r;
	struct floe_err e;

	build_file(&b, "\"long\"", "snappy", "\x02", 1, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, &e), FLOE_EUNSUPPORTED);
	assert_string_equal(e.msg, "Avro codec \"snappy\" is not supported");
	floe_buf_fini(&b);

	build_file(&b, "{\"type\":\"nosuch\"}", "null", "\x02", 1, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), FLOE_EFORMAT);
	floe_buf_fini(&b);

	build_file(&b, "{\"type\":", "null", "\x02", 1, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, &e), FLOE_EFORMAT);
	assert_string_equal(e.msg, "Avro writer schema: JSON: unexpected end of input at byte 8");
	floe_buf_fini(&b);

	/* An array claiming 2^62 nulls in no bytes hits the record cap, not the allocator. */
	build_file(&b, "{\"type\":\"array\",\"items\":\"null\"}", "null",
		   "\xfe\xff\xff\xff\xff\xff\xff\xff\x7f\x00", 10, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), FLOE_ELIMIT);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	/* A self-referencing record nested deeper than the limit. */
	uint8_t deep[200];
	memset(deep, 0x02, sizeof(deep)); /* union branch 1 = another node */
	deep[sizeof(deep) - 1] = 0;
	build_file(&b, "{\"type\":\"record\",\"name\":\"n\",\"fields\":[{\"name\":\"next\",\"type\":[\"null\",\"n\"]}]}",
		   "null", deep, sizeof(deep), 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), FLOE_ELIMIT);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	/* Shallow recursion is fine. */
	build_file(&b, "{\"type\":\"record\",\"name\":\"n\",\"fields\":[{\"name\":\"next\",\"type\":[\"null\",\"n\"]}]}",
		   "null", "\x02\x02\x00", 3, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 1);
	assert_true(floe_avro_value_is_null(floe_avro_value_get(floe_avro_value_get(floe_avro_value_get(v, "next"), "next"), "next")));
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 0);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	/* Block data not used up by its records; a wrong sync marker; a bad union index;
	 * a count of empty records far beyond the block's size. */
	build_file(&b, "\"long\"", "null", "\x02\x02", 2, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), 1);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), FLOE_EFORMAT);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	build_file(&b, "\"long\"", "null", "\x02", 1, 1);
	b.data[b.len - 1] ^= 1;
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), FLOE_EFORMAT);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	build_file(&b, "[\"null\",\"long\"]", "null", "\x04", 1, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, &e), FLOE_EPARSE);
	assert_int_equal(e.code, FLOE_EPARSE);
	assert_int_equal(e.offset, 1); /* in the block: the union index read */
	assert_non_null(strstr(e.msg, "Avro record at byte 1 of the block at byte "));
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	build_file(&b, "{\"type\":\"record\",\"name\":\"e\",\"fields\":[]}", "null", "", 0, 1 << 30);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), FLOE_ELIMIT);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	/* Garbage deflate data. */
	build_file(&b, "\"long\"", "deflate", "\xff\xff\xff", 3, 1);
	assert_int_equal(floe_avro_reader_new(NULL, b.data, b.len, NULL, &r, NULL), 0);
	assert_int_equal(floe_avro_reader_next(r, &v, NULL), FLOE_ECODEC);
	floe_avro_reader_free(r);
	floe_buf_fini(&b);

	/* Not a container at all. */
	assert_int_equal(floe_avro_reader_new(NULL, (const uint8_t *)"Obj", 3, NULL, &r, NULL), FLOE_EFORMAT);
	assert_int_equal(floe_avro_reader_new(NULL, (const uint8_t *)"Obj\x01\x7f", 5, NULL, &r, &e), FLOE_EPARSE);
	assert_int_equal(e.offset, 5);
	assert_string_equal(e.msg, "Avro header: malformed metadata at byte 5");
}

static void test_faults(void **state)
{
	(void)state;
	for (int codec = 0; codec < 2; codec++) {
		struct floe_buf ref;
		floe_buf_init(&ref, NULL, 1 << 20);
		assert_int_equal(write_rich(NULL, &ref, (enum floe_avro_codec)codec, 50), 0);
		bool write_ok = false, read_ok = false;
		for (long k = 0; k < 10000 && !(write_ok && read_ok); k++) {
			struct floe_alloc a;
			floe_alloc_init(&a, 0);
			a.fail_after = k;
			struct floe_buf out;
			floe_buf_init(&out, &a, 1 << 20);
			int rc = write_rich(&a, &out, (enum floe_avro_codec)codec, 50);
			if (rc == 0) {
				write_ok = true;
				assert_int_equal(out.len, ref.len);
				assert_memory_equal(out.data, ref.data, ref.len);
			} else {
				assert_int_equal(rc, FLOE_ENOMEM);
			}
			floe_buf_fini(&out);
			assert_int_equal(a.used, 0);

			floe_alloc_init(&a, 0);
			a.fail_after = k;
			rc = read_all(&a, ref.data, ref.len, true);
			if (rc == 50)
				read_ok = true;
			else
				assert_int_equal(rc, FLOE_ENOMEM);
			assert_int_equal(a.used, 0);
		}
		assert_true(write_ok && read_ok);
		floe_buf_fini(&ref);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zigzag),
		cmocka_unit_test(test_primitives),
		cmocka_unit_test(test_tiny_container),
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_truncated_and_corrupt),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
