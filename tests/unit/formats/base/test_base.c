/* Unit tests for formats/base: the budgeted allocator, the bounded buffer, varints,
 * hex and error strings. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/wipe.h"

static void test_alloc_budget(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 100);
	void *p = floe_malloc(&a, 60);
	assert_non_null(p);
	assert_int_equal(a.used, 60);
	assert_null(floe_malloc(&a, 41)); /* over the limit */
	void *q = floe_malloc(&a, 40);
	assert_non_null(q);
	assert_int_equal(a.used, 100);
	assert_null(floe_realloc(&a, q, 41)); /* growth refused, q untouched */
	q = floe_realloc(&a, q, 10);
	assert_non_null(q);
	assert_int_equal(a.used, 70);
	floe_free(&a, p);
	floe_free(&a, q);
	assert_int_equal(a.used, 0);
	assert_int_equal(a.peak, 100);
	assert_null(floe_calloc(&a, SIZE_MAX / 2, 4)); /* overflow */
}

static void test_alloc_fail_after(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	a.fail_after = 2;
	void *p1 = floe_malloc(&a, 8), *p2 = floe_malloc(&a, 8), *p3 = floe_malloc(&a, 8);
	assert_non_null(p1);
	assert_non_null(p2);
	assert_null(p3);
	floe_free(&a, p1);
	floe_free(&a, p2);
	assert_int_equal(a.used, 0);
}

static void test_buf_limits(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_buf b;
	floe_buf_init(&b, &a, 10);
	assert_int_equal(floe_buf_append(&b, "0123456789", 10), 0);
	assert_int_equal(floe_buf_putc(&b, 'x'), FLOE_ELIMIT);
	assert_int_equal(b.len, 10);
	assert_memory_equal(b.data, "0123456789", 10);
	floe_buf_reset(&b);
	assert_int_equal(floe_buf_printf(&b, "%d-%s", 42, "ab"), 0);
	assert_int_equal(b.len, 5);
	assert_memory_equal(b.data, "42-ab", 5);
	assert_int_equal(floe_buf_printf(&b, "%s", "toolongtext"), FLOE_ELIMIT);
	assert_int_equal(b.len, 5);
	floe_buf_fini(&b);
	assert_int_equal(a.used, 0);

	/* An allocation failure leaves the buffer as it was. */
	floe_buf_init(&b, &a, 1000);
	a.fail_after = 0;
	assert_int_equal(floe_buf_append(&b, "x", 1), FLOE_ENOMEM);
	assert_int_equal(b.len, 0);
	floe_buf_fini(&b);
}

static void test_varints(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 64);
	/* Zigzag: 0 -> 00, -1 -> 01, 1 -> 02, -64 -> 7f, 64 -> 80 01; 50399 unsigned -> df 89 03 */
	floe_buf_put_svarint(&b, 0);
	floe_buf_put_svarint(&b, -1);
	floe_buf_put_svarint(&b, 1);
	floe_buf_put_svarint(&b, -64);
	floe_buf_put_svarint(&b, 64);
	floe_buf_put_uvarint(&b, 50399);
	floe_buf_put_le32(&b, 0x01020304);
	const uint8_t want[] = {0x00, 0x01, 0x02, 0x7f, 0x80, 0x01, 0xdf, 0x89, 0x03, 0x04, 0x03, 0x02, 0x01};
	assert_int_equal(b.len, sizeof(want));
	assert_memory_equal(b.data, want, sizeof(want));
	floe_buf_reset(&b);
	floe_buf_put_svarint(&b, INT64_MIN);
	assert_int_equal(b.len, 10);
	floe_buf_fini(&b);
}

static void test_hex_and_fmt(void **state)
{
	(void)state;
	struct floe_buf b;
	floe_buf_init(&b, NULL, 64);
	const uint8_t v[] = {0x00, 0xab, 0x7f};
	assert_int_equal(floe_hex_put(&b, v, 3), 0);
	assert_memory_equal(b.data, "00ab7f", 6);
	uint8_t *out;
	size_t n;
	assert_int_equal(floe_hex_decode(NULL, "00AB7f", 6, &out, &n), 0);
	assert_int_equal(n, 3);
	assert_memory_equal(out, v, 3);
	floe_free(NULL, out);
	assert_int_equal(floe_hex_decode(NULL, "abc", 3, &out, &n), FLOE_EPARSE);
	assert_int_equal(floe_hex_decode(NULL, "zz", 2, &out, &n), FLOE_EPARSE);
	floe_buf_fini(&b);
	floe_buf_init(&b, NULL, 4);
	assert_int_equal(floe_buf_terminate(&b), 0); /* storage for the NUL alone */
	assert_int_equal(b.len, 0);
	assert_int_equal(b.data[0], 0);
	assert_int_equal(floe_buf_puts(&b, "abc"), 0);
	assert_int_equal(floe_buf_terminate(&b), 0);
	assert_string_equal((const char *)b.data, "abc");
	assert_int_equal(floe_buf_putc(&b, 'd'), 0);
	assert_int_equal(floe_buf_terminate(&b), FLOE_ELIMIT); /* no room under max */
	floe_buf_fini(&b);
	char text[7];
	floe_hex_encode(v, 3, text);
	assert_string_equal(text, "00ab7f");
	assert_int_equal(floe_hex_char(0xfa), 'a');
	assert_int_equal(floe_hex_char_upper(0xfa), 'A');
	assert_int_equal(floe_hex_digit('F'), 15);
	assert_int_equal(floe_hex_digit('g'), -1);
	char small[8];
	assert_int_equal(floe_fmt(small, sizeof(small), "%s", "1234567"), 0);
	assert_int_equal(floe_fmt(small, sizeof(small), "%s", "12345678"), FLOE_ELIMIT);
}

static void test_wipe(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	char *s = floe_strdup(&a, "secret");
	assert_int_equal(floe_alloc_size(s), 7);
	floe_wipe(s, 6);
	assert_memory_equal(s, "\0\0\0\0\0\0", 7);
	floe_wipe_free(&a, s);
	floe_wipe_free(&a, NULL);
	floe_wipe(NULL, 0);
	assert_int_equal(a.used, 0);
}

static void test_strerror(void **state)
{
	(void)state;
	assert_string_equal(floe_strerror(0), "success");
	assert_string_equal(floe_strerror(FLOE_ECONFLICT), "commit conflict");
	assert_non_null(strstr(floe_strerror(-2), "No such file"));
	assert_string_equal(floe_strerror(-99999), "unknown floe error");
	/* One registry: every code of both ranges has its own message, and the codes
	 * around each range are unknown. */
	for (int code = FLOE_EBASE - 1; code > FLOE_ELAST; code--)
		assert_string_not_equal(floe_strerror(code), "unknown floe error");
	for (int code = FLOE_S3_EPRECONDITION; code >= FLOE_S3_ELOWEST; code--)
		assert_string_not_equal(floe_strerror(code), "unknown floe error");
	assert_string_equal(floe_strerror(FLOE_ELAST), "unknown floe error");
	assert_string_equal(floe_strerror(FLOE_S3_EBASE), "unknown floe error");
	assert_string_equal(floe_strerror(FLOE_S3_ELOWEST - 1), "unknown floe error");
	assert_string_equal(floe_strerror(FLOE_S3_EREDIRECT), "redirected: wrong region or endpoint");
}

/* The error detail: set, at, clear, and the text fallback; NULL is accepted. */
static void test_err(void **state)
{
	(void)state;
	struct floe_err e;
	floe_err_clear(&e);
	assert_int_equal(e.code, 0);
	assert_int_equal(e.offset, FLOE_ERR_NO_OFFSET);
	assert_string_equal(floe_err_text(&e, FLOE_EPARSE), floe_strerror(FLOE_EPARSE));
	assert_int_equal(floe_err_set(&e, FLOE_EINVAL, "key %s: bad", "x"), FLOE_EINVAL);
	assert_int_equal(e.code, FLOE_EINVAL);
	assert_string_equal(e.msg, "key x: bad");
	assert_string_equal(floe_err_text(&e, FLOE_EINVAL), "key x: bad");
	assert_int_equal(floe_err_at(&e, FLOE_EPARSE, 17, "at %d", 17), FLOE_EPARSE);
	assert_int_equal(e.offset, 17);
	assert_int_equal(floe_err_set(NULL, FLOE_ENOMEM, "ignored"), FLOE_ENOMEM);
	char big[2 * FLOE_ERR_MSG_MAX];
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	floe_err_set(&e, FLOE_ELIMIT, "%s", big);
	assert_int_equal(strlen(e.msg), FLOE_ERR_MSG_MAX - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_alloc_budget), cmocka_unit_test(test_alloc_fail_after),
		cmocka_unit_test(test_buf_limits),   cmocka_unit_test(test_varints),
		cmocka_unit_test(test_hex_and_fmt),  cmocka_unit_test(test_strerror),
		cmocka_unit_test(test_err),          cmocka_unit_test(test_wipe),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
