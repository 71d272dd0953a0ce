/* Tests of agent/input/tail: a partial line flushed at --once, positions held back until
 * they are durable, damaged positions, and a whole session under allocation faults. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "tail_lib.h"

/* A partial line flushed at the end of --once is a line; when its LF arrives later (in
 * this process or after a restart) it ends that line and is not an empty line. */
static void test_flushed_partial_line(void **state)
{
	put("a.log", "ab\nc");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	assert_int_equal(s.n, 2);
	assert_line(&s, 1, "a.log", 3, "c");
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_tail_positions(t, &b), 0);
	floe_tail_free(t);
	const uint8_t *flags = b.data + b.len - 24;
	assert_int_equal(le(flags, 4), 1);

	/* After a restart the LF (here a CRLF) ends "c"; the next line follows. */
	put("a.log", "\r\nd\n");
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, b.data, b.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(s.n, 3);
	assert_line(&s, 2, "a.log", 6, "d");
	/* Without a flush, text after an unterminated line continues as a new line. */
	put("a.log", "e");
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	put("a.log", "f\n");
	read_all(t, &s);
	assert_int_equal(s.n, 5);
	assert_line(&s, 3, "a.log", 8, "e");
	assert_line(&s, 4, "a.log", 9, "f");
	floe_buf_fini(&b);
	floe_tail_free(t);
}

/* One entry of a positions blob, by file name. */
struct entry {
	uint64_t off;
	uint32_t flags, phl;
	uint64_t ph;
};

static struct entry entry_of(const struct floe_buf *b, const char *name)
{
	const char *path = at(name);
	uint32_t n = (uint32_t)le(b->data + 8, 4);
	const uint8_t *p = b->data + 12;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t plen = (uint32_t)le(p, 4);
		const uint8_t *q = p + 4 + plen;
		if (plen == strlen(path) && memcmp(p + 4, path, plen) == 0) {
			struct entry e = {le(q + 16, 8), (uint32_t)le(q + 36, 4),
					  (uint32_t)le(q + 40, 4), le(q + 44, 8)};
			return e;
		}
		p = q + 60;
	}
	fail_msg("no entry for %s", name);
	struct entry none = {0};
	return none;
}

/* Holds: the saved position of a file stops at the held offset (the lowest hold wins),
 * with the hash of the bytes before it and no "unterminated" flag; a restart reads the
 * held lines again; clearing the holds saves the real positions. Lines carry their end
 * and a file id, which a new generation changes. */
static void test_hold_positions(void **state)
{
	put("a.log", "l1\nl2\r\nl3\n");
	put("b.log", "b1\nb2\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {0};
	read_all(t, &s);
	assert_int_equal(s.n, 5);
	const struct rec *l1 = find_line(&s, "a.log", 0), *l2 = find_line(&s, "a.log", 3),
			 *b1 = find_line(&s, "b.log", 0);
	assert_int_equal(l1->end, 3);
	assert_int_equal(l2->end, 7); /* CRLF */
	assert_int_equal(find_line(&s, "a.log", 7)->end, 10);
	assert_true(l1->id != 0 && b1->id != 0 && l1->id != b1->id);
	assert_int_equal(l2->id, l1->id);
	uint64_t ida = l1->id;

	assert_int_equal(floe_tail_hold(t, ida, 7), 0);
	assert_int_equal(floe_tail_hold(t, ida, 3), 0);
	assert_int_equal(floe_tail_hold(t, ida, 7), 0); /* the lowest stays */
	assert_int_equal(floe_tail_hold(t, 999, 0), -ENOENT);
	assert_int_equal(floe_tail_hold(t, 0, 0), -ENOENT);
	struct floe_buf blob;
	save(t, &blob);
	struct entry ea = entry_of(&blob, "a.log"), eb = entry_of(&blob, "b.log");
	assert_int_equal(ea.off, 3);
	assert_int_equal(ea.flags, 0);
	assert_int_equal(ea.phl, 3);
	assert_int_equal(ea.ph, fnv("l1\n", 3));
	assert_int_equal(eb.off, 6);
	assert_int_equal(eb.ph, fnv("b1\nb2\n", 6));

	/* Cleared: the real position. */
	floe_tail_hold_clear(t);
	struct floe_buf b2;
	save(t, &b2);
	assert_int_equal(entry_of(&b2, "a.log").off, 10);
	floe_buf_fini(&b2);

	/* A partial line flushed without its LF, then held at its start: saved as an
	 * ordinary line start; after a restart it is read whole once its LF comes. */
	put("c.log", "x\ny");
	assert_int_equal(floe_tail_scan(t), 0);
	read_all(t, &s);
	assert_int_equal(floe_tail_flush_partial(t, on_line, &s), 0);
	const struct rec *y = find_line(&s, "c.log", 2);
	assert_string_equal(y->data, "y");
	assert_int_equal(y->end, 3);
	assert_int_equal(floe_tail_hold(t, y->id, 2), 0);
	assert_int_equal(floe_tail_hold(t, ida, 3), 0);
	struct floe_buf b3;
	save(t, &b3);
	struct entry ec = entry_of(&b3, "c.log");
	assert_int_equal(ec.off, 2);
	assert_int_equal(ec.flags, 0);
	assert_int_equal(ec.ph, fnv("x\n", 2));
	floe_tail_free(t);

	put("c.log", "z\n");
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, b3.data, b3.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink r = {0};
	read_all(t, &r);
	assert_int_equal(r.n, 3);
	assert_string_equal(find_line(&r, "a.log", 3)->data, "l2");
	assert_string_equal(find_line(&r, "a.log", 7)->data, "l3");
	assert_string_equal(find_line(&r, "c.log", 2)->data, "yz");
	assert_int_equal(stats(t).resets, 0);

	/* A new generation is a new file id; its holds are gone. */
	uint64_t idc = find_line(&r, "c.log", 2)->id;
	assert_int_equal(floe_tail_hold(t, idc, 2), 0);
	rewrite("c.log", "n\n");
	read_all(t, &r);
	const struct rec *n = find_line(&r, "c.log", 0);
	assert_true(n->id != idc && n->id != 0);
	assert_int_equal(floe_tail_hold(t, idc, 0), -ENOENT);
	struct floe_buf b4;
	save(t, &b4);
	assert_int_equal(entry_of(&b4, "c.log").off, 2);
	floe_buf_fini(&b4);
	floe_buf_fini(&b3);
	floe_buf_fini(&blob);
	floe_tail_free(t);
}

/* A hold far behind the position (the bytes before it are no longer buffered) hashes
 * them from the file; with the file closed the hash is left out, and restore still works. */
static void test_hold_far_back(void **state)
{
	char big[2000];
	size_t n = 0;
	for (int i = 0; n + 8 < sizeof(big); i++)
		n += (size_t)snprintf(big + n, sizeof(big) - n, "%06d\n", i);
	put("a.log", big);
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s = {.stop_at = 200}; /* 1400 bytes read: 700 is far behind */
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s, &progress), 0);
	assert_int_equal(s.n, 200);
	uint64_t id = s.v[0].id;
	assert_int_equal(floe_tail_hold(t, id, 700), 0);
	struct floe_buf b;
	save(t, &b);
	struct entry e = entry_of(&b, "a.log");
	assert_int_equal(e.off, 700);
	assert_int_equal(e.phl, 256);
	assert_int_equal(e.ph, fnv(big + 700 - 256, 256));
	floe_tail_free(t);
	t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_restore(t, b.data, b.len), 0);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink r = {.stop_at = 1};
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &r, &progress), 0);
	assert_int_equal(r.n, 1);
	assert_int_equal(r.v[0].off, 700);
	assert_string_equal(r.v[0].data, "000100");
	assert_int_equal(stats(t).resets, 0);
	floe_buf_fini(&b);
	floe_tail_free(t);
}

static void test_restore_corrupt(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_tail *t = make(&a, "*.log", 64, 64, false);
	uint8_t ok[64] = {'F', 'L', 'T', 'P', 2, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, '/'};
	size_t oklen = 12 + 4 + 1 + 40;
	assert_int_equal(floe_tail_restore(t, ok, oklen), 0);
	for (size_t n = 0; n < oklen; n++)
		assert_int_equal(floe_tail_restore(t, ok, n), FLOE_ECORRUPT);
	uint8_t bad[64];
	memcpy(bad, ok, sizeof(ok));
	bad[0] = 'X';
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[4] = 1; /* an unknown version */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[8] = 0xff; /* count larger than the input can hold */
	bad[11] = 0xff;
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[12] = 0; /* empty path */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[16] = 0; /* NUL in path */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	memcpy(bad, ok, sizeof(ok));
	bad[12 + 4 + 1 + 24 + 1] = 0x08; /* fingerprint length 2048 */
	assert_int_equal(floe_tail_restore(t, bad, oklen), FLOE_ECORRUPT);
	assert_int_equal(floe_tail_restore(t, ok, oklen + 1), FLOE_ECORRUPT); /* trailing */
	/* The good positions survived the bad attempts. */
	struct floe_buf b;
	floe_buf_init(&b, &a, 1 << 20);
	assert_int_equal(floe_tail_positions(t, &b), 0);
	/* Written back as version 3: the same entry, with no pre-offset hash and present. */
	assert_int_equal(b.len, oklen + 20);
	assert_int_equal(b.data[4], 3);
	assert_memory_equal(b.data + 5, ok + 5, oklen - 5);
	for (size_t i = oklen; i < oklen + 20; i++)
		assert_int_equal(b.data[i], 0);
	floe_buf_fini(&b);
	floe_tail_free(t);
	assert_int_equal(a.used, 0);

	/* Options that cannot work. */
	t = NULL;
	assert_int_equal(floe_tail_new(NULL, NULL, &t), FLOE_EINVAL);
	struct floe_tail_options o = {.npaths = 1};
	assert_int_equal(floe_tail_new(NULL, &o, &t), FLOE_EINVAL);
	o = (struct floe_tail_options){.max_line_bytes = SIZE_MAX};
	assert_int_equal(floe_tail_new(NULL, &o, &t), FLOE_EINVAL);
	assert_null(t); /* untouched on failure */
	floe_tail_free(NULL);
}

/* Runs a whole session (new, restore, scan, read, positions) with the k-th allocation
 * failing; returns the first error. */
static int session(struct floe_alloc *a, const struct floe_buf *blob, struct sink *s)
{
	static char pat[256];
	snprintf(pat, sizeof(pat), "%s/*.log", dir);
	const char *paths[] = {pat};
	const char *exclude[] = {"*.gz"};
	struct floe_tail_options o = {.paths = paths,
				      .npaths = 1,
				      .exclude = exclude,
				      .nexclude = 1,
				      .read_chunk = 8,
				      .max_line_bytes = 8};
	int err = 0;
	struct floe_tail *t = NULL;
	err = floe_tail_new(a, &o, &t);
	if (!t)
		return err;
	struct floe_buf out;
	floe_buf_init(&out, a, 1 << 20);
	size_t progress;
	int rc = floe_tail_restore(t, blob->data, blob->len);
	if (!rc)
		rc = floe_tail_scan(t);
	if (!rc)
		rc = floe_tail_read(t, SIZE_MAX, on_line, s, &progress);
	if (!rc)
		rc = floe_tail_flush_partial(t, on_line, s);
	if (!rc)
		rc = floe_tail_positions(t, &out);
	floe_buf_fini(&out);
	floe_tail_free(t);
	return rc;
}

static void test_alloc_faults(void **state)
{
	put("a.log", "first line is long\nx\n");
	put("b.log", "b\npartial");
	put("gone.log", "g\n");
	struct floe_tail *t = make(NULL, "*.log", 64, 64, false);
	assert_int_equal(floe_tail_scan(t), 0);
	struct sink s0 = {.stop_at = 1};
	size_t progress;
	assert_int_equal(floe_tail_read(t, SIZE_MAX, on_line, &s0, &progress), 0);
	struct floe_buf blob;
	save(t, &blob);
	floe_tail_free(t);
	assert_int_equal(unlink(at("gone.log")), 0);
	for (long k = 0;; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		struct sink s = {0};
		int rc = session(&a, &blob, &s);
		assert_int_equal(a.used, 0);
		if (rc == FLOE_ENOMEM)
			continue;
		assert_int_equal(rc, 0);
		/* The successful run delivers everything after the saved position. */
		assert_true(k > 5);
		assert_string_equal(find_line(&s, "b.log", 2)->data, "partial");
		assert_string_equal(find_line(&s, "a.log", 19)->data, "x");
		break;
	}
	floe_buf_fini(&blob);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_flushed_partial_line), T(test_hold_positions), T(test_hold_far_back),
	    T(test_restore_corrupt),	  T(test_alloc_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
