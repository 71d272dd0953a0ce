/* Unit tests for agent/input/tail_span and agent/run/span: the byte ranges a seal covers, from the tail
 * position blobs where it started and ended. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agent/input/tail_span.h"
#include "agent/run/span.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

struct file {
	const char *path;
	uint64_t dev, ino, offset;
};

/* A tail positions blob, version 3 (tail.h). */
static void blob(struct floe_buf *b, const struct file *f, size_t n)
{
	floe_buf_reset(b);
	assert_int_equal(floe_buf_append(b, "FLTP", 4), 0);
	assert_int_equal(floe_buf_put_le32(b, 3), 0);
	assert_int_equal(floe_buf_put_le32(b, (uint32_t)n), 0);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(floe_buf_put_le32(b, (uint32_t)strlen(f[i].path)), 0);
		assert_int_equal(floe_buf_append(b, f[i].path, strlen(f[i].path)), 0);
		assert_int_equal(floe_buf_put_le64(b, f[i].dev), 0);
		assert_int_equal(floe_buf_put_le64(b, f[i].ino), 0);
		assert_int_equal(floe_buf_put_le64(b, f[i].offset), 0);
		assert_int_equal(floe_buf_put_le32(b, 1024), 0);     /* fingerprint length */
		assert_int_equal(floe_buf_put_le64(b, 0x1234), 0);   /* fingerprint */
		assert_int_equal(floe_buf_put_le32(b, 0), 0);	      /* flags */
		assert_int_equal(floe_buf_put_le32(b, 256), 0);	      /* pre-hash length */
		assert_int_equal(floe_buf_put_le64(b, 0x5678), 0);   /* pre-hash */
		assert_int_equal(floe_buf_put_le64(b, 0), 0);	      /* gone since */
	}
}

static void test_files_between_positions(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_buf from, to;
	floe_buf_init(&from, &a, 1u << 20);
	floe_buf_init(&to, &a, 1u << 20);
	const struct file f0[] = {{"/l/a.log", 1, 10, 100}, {"/l/b.log", 1, 11, 50}, {"/l/c.log", 1, 12, 70}};
	/* a grew, b did not, c went back (truncated), d is new. */
	const struct file f1[] = {
		{"/l/a.log", 1, 10, 400}, {"/l/b.log", 1, 11, 50}, {"/l/c.log", 1, 12, 30}, {"/l/d.log", 1, 13, 9}};
	blob(&from, f0, 3);
	blob(&to, f1, 4);
	struct floe_span_file *s = NULL;
	size_t n = 0;
	assert_int_equal(floe_span_files(&a, from.data, from.len, to.data, to.len, &s, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(s[0].path, "/l/a.log");
	assert_true(s[0].from == 100 && s[0].to == 400 && s[0].readable);
	assert_string_equal(s[1].path, "/l/c.log");
	assert_false(s[1].readable);
	assert_string_equal(s[2].path, "/l/d.log");
	assert_true(s[2].from == 0 && s[2].to == 9 && s[2].readable);
	floe_span_free(&a, s, n);

	/* Malformed blobs are corrupt, never read past their end. */
	for (size_t cut = 0; cut < to.len; cut += 7)
		assert_int_equal(floe_span_files(&a, from.data, from.len, to.data, cut, &s, &n), FLOE_ECORRUPT);
	floe_buf_fini(&from);
	floe_buf_fini(&to);
	assert_int_equal(a.used, 0);
}

static void test_input_of_runner_positions(void **state)
{
	(void)state;
	const uint8_t p[] = {2, 0, 0, 0, 1, 0, 0, 0, 0xaa, 2, 0, 0, 0, 0xbb, 0xcc};
	uint32_t count;
	const uint8_t *b;
	size_t len;
	assert_int_equal(floe_span_input(p, sizeof(p), 1, &count, &b, &len), 0);
	assert_int_equal(count, 2);
	assert_int_equal(len, 2);
	assert_int_equal(b[0], 0xbb);
	assert_int_equal(floe_span_input(p, sizeof(p), 2, &count, &b, &len), FLOE_ENOTFOUND);
	assert_int_equal(floe_span_input(p, sizeof(p) - 1, 1, &count, &b, &len), FLOE_ECORRUPT);
	assert_int_equal(floe_span_input(p, 3, 0, &count, &b, &len), FLOE_ECORRUPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_files_between_positions),
		cmocka_unit_test(test_input_of_runner_positions),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
