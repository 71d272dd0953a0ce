/* Thrift compact encoder against hand-computed bytes (the spec's SchemaElement example,
 * the Thrift doc's varint example, long-form field ids, long lists, bools). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/thrift.h"

static void expect_bytes(const struct floe_buf *b, const uint8_t *want, size_t n)
{
	assert_int_equal(b->len, n);
	assert_memory_equal(b->data, want, n);
}

static void test_schema_element_example(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1024);
	struct floe_thrift t;
	floe_thrift_init(&t, &b);
	floe_thrift_i32(&t, 1, 2); /* type INT64 */
	floe_thrift_i32(&t, 3, 1); /* OPTIONAL */
	floe_thrift_string(&t, 4, "ts");
	floe_thrift_i32(&t, 6, 10); /* TIMESTAMP_MICROS */
	floe_thrift_i32(&t, 9, 1);  /* field_id */
	floe_thrift_struct(&t, 10);
	floe_thrift_struct(&t, 8);
	floe_thrift_bool(&t, 1, true);
	floe_thrift_struct(&t, 2);
	floe_thrift_struct(&t, 2);
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	floe_thrift_end(&t);
	assert_int_equal(floe_thrift_error(&t), 0);
	static const uint8_t want[] = {0x15, 0x04, 0x25, 0x02, 0x18, 0x02, 0x74, 0x73,
				       0x25, 0x14, 0x35, 0x02, 0x1c, 0x8c, 0x11, 0x1c,
				       0x2c, 0x00, 0x00, 0x00, 0x00, 0x00};
	expect_bytes(&b, want, sizeof(want));
	floe_buf_fini(&b);
}

static void test_varints(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1024);
	struct floe_thrift t;
	floe_thrift_init(&t, &b);
	/* Integers are zigzagged before the varint. */
	floe_thrift_list(&t, 1, FLOE_THRIFT_I32, 3);
	floe_thrift_elem_i32(&t, -1);	     /* zigzag 1 */
	floe_thrift_elem_i32(&t, 64);	     /* zigzag 128 -> 80 01 */
	floe_thrift_elem_i32(&t, INT32_MIN); /* zigzag 2^32-1 -> ff ff ff ff 0f */
	floe_thrift_i64(&t, 2, INT64_MIN);   /* zigzag 2^64-1 */
	floe_thrift_i16(&t, 3, -3);	     /* 05 */
	floe_thrift_i8(&t, 4, -2);	     /* raw byte fe */
	assert_int_equal(floe_thrift_error(&t), 0);
	static const uint8_t want[] = {0x19, 0x35, 0x01, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff,
				       0x0f, 0x16, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
				       0xff, 0xff, 0x01, 0x14, 0x05, 0x13, 0xfe};
	expect_bytes(&b, want, sizeof(want));

	/* The Thrift doc's varint example 50399 -> DF 89 03, as a binary length (which is
	 * not zigzagged). */
	floe_buf_fini(&b);
	static uint8_t big[50399];
	floe_buf_init(&b, NULL, sizeof(big) + 16);
	floe_thrift_init(&t, &b);
	floe_thrift_elem_binary(&t, big, sizeof(big));
	assert_int_equal(floe_thrift_error(&t), 0);
	assert_int_equal(b.len, 3 + sizeof(big));
	assert_int_equal(b.data[0], 0xDF);
	assert_int_equal(b.data[1], 0x89);
	assert_int_equal(b.data[2], 0x03);
	/* and as an i32 value 50399 zigzags to 100798 -> BE 93 06 */
	floe_buf_reset(&b);
	floe_thrift_init(&t, &b);
	floe_thrift_elem_i32(&t, 50399);
	static const uint8_t z[] = {0xBE, 0x93, 0x06};
	expect_bytes(&b, z, sizeof(z));
	floe_buf_fini(&b);
}

static void test_long_field_ids(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1024);
	struct floe_thrift t;
	floe_thrift_init(&t, &b);
	floe_thrift_i32(&t, 15, 1);	  /* delta 15: short form f5 02 */
	floe_thrift_i32(&t, 31, 1);	  /* delta 16: long form 05 3e 02 */
	floe_thrift_i32(&t, 2, 1);	  /* negative delta: long form 05 04 02 */
	floe_thrift_bool(&t, 300, true);  /* long form bool: 01 d8 04 */
	floe_thrift_bool(&t, 301, false); /* short: 12 */
	floe_thrift_end(&t);
	assert_int_equal(floe_thrift_error(&t), 0);
	static const uint8_t want[] = {0xf5, 0x02, 0x05, 0x3e, 0x02, 0x05, 0x04,
				       0x02, 0x01, 0xd8, 0x04, 0x12, 0x00};
	expect_bytes(&b, want, sizeof(want));
	floe_buf_fini(&b);
}

static void test_lists_and_nesting(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1024);
	struct floe_thrift t;
	floe_thrift_init(&t, &b);
	floe_thrift_list(&t, 1, FLOE_THRIFT_I32, 14); /* e5 */
	for (int i = 0; i < 14; i++)
		floe_thrift_elem_i32(&t, 0);
	floe_thrift_list(&t, 2, FLOE_THRIFT_BOOL_TRUE, 15); /* f1 0f */
	for (int i = 0; i < 15; i++)
		floe_thrift_elem_bool(&t, i & 1);
	floe_thrift_list(&t, 3, FLOE_THRIFT_STRUCT, 2); /* 2c */
	floe_thrift_elem_struct(&t);
	floe_thrift_string(&t, 1, "a"); /* 18 01 61 */
	floe_thrift_end(&t);
	floe_thrift_elem_struct(&t);
	floe_thrift_i64(&t, 2, 3); /* 26 06: field ids restart in each element */
	floe_thrift_end(&t);
	floe_thrift_i32(&t, 4, 1); /* 15 02: back in the outer struct, last id 3 */
	floe_thrift_list(&t, 5, FLOE_THRIFT_BINARY, 200); /* f8 c8 01 */
	assert_int_equal(floe_thrift_error(&t), 0);
	uint8_t want[128];
	size_t n = 0;
	want[n++] = 0x19;
	want[n++] = 0xe5;
	for (int i = 0; i < 14; i++)
		want[n++] = 0;
	want[n++] = 0x19; /* field 2, delta 1 */
	want[n++] = 0xf1;
	want[n++] = 0x0f;
	for (int i = 0; i < 15; i++)
		want[n++] = (uint8_t)(i & 1);
	static const uint8_t tail[] = {0x19, 0x2c, 0x18, 0x01, 0x61, 0x00, 0x26, 0x06,
				       0x00, 0x15, 0x02, 0x19, 0xf8, 0xc8, 0x01};
	memcpy(want + n, tail, sizeof(tail));
	n += sizeof(tail);
	expect_bytes(&b, want, n);
	floe_buf_fini(&b);
}

static void test_errors_are_sticky(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 4);
	struct floe_thrift t;
	floe_thrift_init(&t, &b);
	floe_thrift_string(&t, 1, "hello");
	assert_int_equal(floe_thrift_error(&t), FLOE_ELIMIT);
	floe_thrift_i32(&t, 2, 1);
	assert_int_equal(floe_thrift_error(&t), FLOE_ELIMIT);
	floe_buf_fini(&b);

	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	a.fail_after = 0;
	floe_buf_init(&b, &a, 1024);
	floe_thrift_init(&t, &b);
	floe_thrift_i32(&t, 1, 1);
	assert_int_equal(floe_thrift_error(&t), FLOE_ENOMEM);
	floe_buf_fini(&b);
	assert_int_equal(a.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_schema_element_example), cmocka_unit_test(test_varints),
	    cmocka_unit_test(test_long_field_ids),	   cmocka_unit_test(test_lists_and_nesting),
	    cmocka_unit_test(test_errors_are_sticky),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
