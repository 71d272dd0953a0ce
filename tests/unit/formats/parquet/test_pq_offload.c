/* Parquet writer with page compression handed to an offload: the file must be byte for
 * byte the file written inline, whether the offload runs tasks late (on wait), refuses
 * some, or runs them on a real thread; and failures must leave nothing behind. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/writer.h"

#include "mem_sink.h"

/* ---- offloads ---- */

/* Deferred: a task runs only when it is waited for (so pages stay in flight across
 * other chunks' pages and row-group boundaries); every refuse_every-th is refused. */
struct deferred {
	int submitted, refused, waited;
	int refuse_every;
	bool outstanding[16];
	void (*run[16])(void *);
	void *arg[16];
};

static int def_submit(void *ctx, void (*run)(void *), void *arg, void **handle)
{
	struct deferred *d = ctx;
	d->submitted++;
	if (d->refuse_every && d->submitted % d->refuse_every == 0) {
		d->refused++;
		return -1;
	}
	for (int i = 0; i < 16; i++) {
		if (!d->outstanding[i]) {
			d->outstanding[i] = true;
			d->run[i] = run;
			d->arg[i] = arg;
			*handle = &d->outstanding[i];
			return 0;
		}
	}
	fail_msg("more than 16 tasks in flight");
	return -1;
}

static void def_wait(void *ctx, void *handle)
{
	struct deferred *d = ctx;
	int i = (int)((bool *)handle - d->outstanding);
	assert_true(i >= 0 && i < 16 && d->outstanding[i]);
	d->run[i](d->arg[i]);
	d->outstanding[i] = false;
	d->waited++;
}

/* Threaded: one real thread runs tasks as they come. */
struct threaded {
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	void (*run)(void *);
	void *arg;
	int state; /* 0 idle, 1 queued, 2 done */
	bool stop;
	int ran;
};

static void *th_loop(void *p)
{
	struct threaded *t = p;
	pthread_mutex_lock(&t->mu);
	for (;;) {
		while (t->state != 1 && !t->stop)
			pthread_cond_wait(&t->cv, &t->mu);
		if (t->state != 1)
			break;
		pthread_mutex_unlock(&t->mu);
		t->run(t->arg);
		pthread_mutex_lock(&t->mu);
		t->state = 2;
		t->ran++;
		pthread_cond_broadcast(&t->cv);
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

static int th_submit(void *ctx, void (*run)(void *), void *arg, void **handle)
{
	struct threaded *t = ctx;
	pthread_mutex_lock(&t->mu);
	assert_int_equal(t->state, 0); /* one task per writer at a time */
	t->run = run;
	t->arg = arg;
	t->state = 1;
	pthread_cond_broadcast(&t->cv);
	pthread_mutex_unlock(&t->mu);
	*handle = t;
	return 0;
}

static void th_wait(void *ctx, void *handle)
{
	struct threaded *t = ctx;
	assert_ptr_equal(handle, t);
	pthread_mutex_lock(&t->mu);
	while (t->state != 2)
		pthread_cond_wait(&t->cv, &t->mu);
	t->state = 0;
	pthread_mutex_unlock(&t->mu);
}

/* ---- rows ---- */

static const struct floe_pq_column cols[] = {
    {.name = "ts", .field_id = 1, .kind = FLOE_PQ_TIMESTAMPTZ},
    {.name = "msg", .field_id = 2, .kind = FLOE_PQ_STRING},
    {.name = "tag", .field_id = 3, .kind = FLOE_PQ_STRING, .optional = true},
    {.name = "attrs", .field_id = 4, .kind = FLOE_PQ_MAP_STRING, .optional = true,
     .key_field_id = 5, .value_field_id = 6},
};

static uint64_t lcg(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return *s >> 33;
}

/* With phased set, msg is the row number and one letter repeated for 700 rows, then
 * noise for 700, and so on: pages compress very differently from the one before. */
static bool phased;

/* Writes rows: msg is printable noise of 20..300 bytes (LZ4 cannot shrink it much, so
 * v2 pages fall back to uncompressed bodies), tag one of 3000 values of 40 bytes (a
 * dictionary page of about 130 KB), attrs 0..2 pairs. */
static int write_rows(struct floe_alloc *a, const struct floe_pq_options *o, int rows, struct mem *m)
{
	struct floe_pq_writer *w = NULL;
	int err = floe_pq_writer_new(a, cols, 4, o, mem_sink, m, &w);
	if (err)
		return err;
	uint64_t seed = 42;
	char msg[320], tag[48];
	const char *keys[2] = {"k1", "key2"};
	const size_t klens[2] = {2, 4};
	const char *vals[2] = {"v", NULL};
	const size_t vlens[2] = {1, 0};
	int rc = 0;
	for (int r = 0; r < rows && !rc; r++) {
		size_t len = 20 + lcg(&seed) % 280;
		bool noise = !phased || (r / 700) % 2 == 1;
		for (size_t i = 0; i < len; i++)
			msg[i] = noise ? (char)(' ' + lcg(&seed) % 95) : 'x';
		if (!noise) /* unique, so that no dictionary takes them */
			memcpy(msg, tag, (size_t)snprintf(tag, sizeof(tag), "%08d", r));
		snprintf(tag, sizeof(tag), "tag-%036d", (int)(lcg(&seed) % 3000));
		struct floe_pq_value v[4];
		memset(v, 0, sizeof(v));
		v[0].i = 1764633600000000LL + r * 1000;
		v[1].s = msg;
		v[1].len = len;
		v[2].is_null = r % 7 == 0;
		v[2].s = tag;
		v[2].len = strlen(tag);
		v[3].is_null = r % 11 == 0;
		v[3].n = (size_t)(r % 3);
		v[3].keys = keys;
		v[3].key_lens = klens;
		v[3].vals = vals;
		v[3].val_lens = vlens;
		rc = floe_pq_writer_add_row(w, v);
	}
	if (!rc)
		rc = floe_pq_writer_finish(w);
	floe_pq_writer_free(w);
	return rc;
}

struct shape {
	enum floe_pq_codec codec;
	enum floe_pq_profile profile;
	size_t page_size, budget, row_group;
};

static const struct shape shapes[] = {
    {FLOE_PQ_ZSTD, FLOE_PQ_PROFILE_DEFAULT, 0, 0, 0},
    {FLOE_PQ_ZSTD, FLOE_PQ_PROFILE_DEFAULT, 16384, 65536, 0},
    {FLOE_PQ_ZSTD, FLOE_PQ_PROFILE_COMPACT, 8192, 40000, 0},
    {FLOE_PQ_LZ4_RAW, FLOE_PQ_PROFILE_COMPACT, 8192, 0, 300000},
    {FLOE_PQ_LZ4_RAW, FLOE_PQ_PROFILE_DEFAULT, 4096, 20000, 0},
};

static struct floe_pq_options opts_of(const struct shape *sh)
{
	struct floe_pq_options o = {.codec = sh->codec,
				    .profile = sh->profile,
				    .page_size = sh->page_size,
				    .memory_budget = sh->budget,
				    .row_group_size = sh->row_group};
	return o;
}

static void inline_file(const struct shape *sh, int rows, struct mem *out)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_pq_options o = opts_of(sh);
	memset(out, 0, sizeof(*out));
	assert_int_equal(write_rows(&a, &o, rows, out), 0);
	assert_int_equal(a.used, 0);
}

static void test_deferred_same_bytes(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		for (int refuse = 0; refuse <= 3; refuse += 3) {
			struct mem ref, m = {0};
			inline_file(&shapes[s], 6000, &ref);
			struct deferred d = {.refuse_every = refuse};
			struct floe_pq_offload off = {&d, def_submit, def_wait};
			struct floe_pq_options o = opts_of(&shapes[s]);
			o.offload = &off;
			struct floe_alloc a;
			floe_alloc_init(&a, 0);
			assert_int_equal(write_rows(&a, &o, 6000, &m), 0);
			assert_int_equal(a.used, 0);
			/* Pages went through the offload, every task was waited for. */
			assert_true(d.submitted > (s == 0 ? 0 : 4));
			assert_int_equal(d.submitted - d.refused, d.waited);
			if (refuse && d.submitted >= refuse)
				assert_true(d.refused > 0);
			assert_int_equal(m.n, ref.n);
			assert_memory_equal(m.p, ref.p, ref.n);
			free(m.p);
			free(ref.p);
		}
	}
}

static void test_thread_same_bytes(void **state)
{
	(void)state;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		struct mem ref, m = {0};
		inline_file(&shapes[s], 6000, &ref);
		struct threaded t;
		memset(&t, 0, sizeof(t));
		pthread_mutex_init(&t.mu, NULL);
		pthread_cond_init(&t.cv, NULL);
		assert_int_equal(pthread_create(&t.th, NULL, th_loop, &t), 0);
		struct floe_pq_offload off = {&t, th_submit, th_wait};
		struct floe_pq_options o = opts_of(&shapes[s]);
		o.offload = &off;
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		assert_int_equal(write_rows(&a, &o, 6000, &m), 0);
		assert_int_equal(a.used, 0);
		pthread_mutex_lock(&t.mu);
		t.stop = true;
		pthread_cond_broadcast(&t.cv);
		pthread_mutex_unlock(&t.mu);
		pthread_join(t.th, NULL);
		assert_true(t.ran > (s == 0 ? 0 : 4));
		assert_int_equal(m.n, ref.n);
		assert_memory_equal(m.p, ref.p, ref.n);
		free(m.p);
		free(ref.p);
		pthread_cond_destroy(&t.cv);
		pthread_mutex_destroy(&t.mu);
	}
}

/* Writes 1500 rows with the deferred offload, failing the fail_after-th allocation or the
 * sink's fail_at_call-th write: either way nothing leaks and every task was waited for. */
static int write_failing(long fail_after, int fail_at_call)
{
	struct deferred d = {0};
	struct floe_pq_offload off = {&d, def_submit, def_wait};
	struct floe_pq_options o = opts_of(&shapes[2]);
	o.offload = &off;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	a.fail_after = fail_after;
	struct mem m = {.fail_at_call = fail_at_call};
	int rc = write_rows(&a, &o, 1500, &m);
	free(m.p);
	assert_int_equal(a.used, 0);
	assert_int_equal(d.submitted - d.refused, d.waited);
	return rc;
}

/* Allocation failures and sink failures at every step, with pages in flight: a clean
 * error, no leak (also of a page whose task had not run when the writer was freed). */
static void test_failures(void **state)
{
	(void)state;
	long k;
	int rc;
	for (k = 0; k < 20000; k += 1 + k / 50) { /* denser early, sparser later */
		if ((rc = write_failing(k, 0)) == 0)
			break;
		assert_int_equal(rc, FLOE_ENOMEM);
	}
	assert_true(k > 20 && k < 20000);
	int calls;
	for (calls = 1; calls < 10000; calls++) {
		if ((rc = write_failing(-1, calls)) == 0)
			break;
		assert_int_equal(rc, -5);
	}
	assert_true(calls > 3 && calls < 10000);
}

/* A page in flight has room for about what the chunk's last page compressed to. Pages
 * that compress far worse than the one before do not fit, and are compressed again with
 * the bound when they complete: the file is still the inline one, and failures there
 * (the larger block) are clean too. */
static void test_refit(void **state)
{
	phased = true;
	test_deferred_same_bytes(state);
	test_thread_same_bytes(state);
	test_failures(state);
	phased = false;
}

/* Manual: the test runs the task itself, when it chooses; wait runs it only if the test
 * has not. */
struct manual {
	void (*run)(void *);
	void *arg;
	bool ran;
};

static int man_submit(void *ctx, void (*run)(void *), void *arg, void **handle)
{
	struct manual *m = ctx;
	m->run = run;
	m->arg = arg;
	m->ran = false;
	*handle = m;
	return 0;
}

static void man_wait(void *ctx, void *handle)
{
	struct manual *m = ctx;
	assert_ptr_equal(handle, m);
	if (!m->ran)
		m->run(m->arg);
	m->ran = true;
}

static int count_done(void *ctx, int rc, const uint8_t *src, size_t n, size_t len, uint32_t crc)
{
	(void)src;
	(void)n;
	(void)len;
	(void)crc;
	assert_int_equal(rc, 0);
	++*(int *)ctx;
	return 0;
}

/* would_wait, which decides whether the calling thread compresses a page itself: true
 * only while a job ahead of it is still being compressed and the new one does not fit
 * in the queue's bytes. */
static void test_would_wait(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	int done = 0;
	struct floe_pq_compressor *c = NULL;
	assert_int_equal(floe_pq_compressor_new(&a, FLOE_PQ_ZSTD, 3, &c), 0);
	static uint8_t src[65536], dst[70000];
	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)"floe log line "[i % 14];
	/* No offload: never waits. */
	assert_false(floe_pq_compressor_would_wait(c, sizeof(src)));
	struct manual m = {0};
	struct floe_pq_offload off = {&m, man_submit, man_wait};
	floe_pq_compressor_set_offload(c, &off, 100000);
	assert_false(floe_pq_compressor_would_wait(c, sizeof(src)));
	bool taken = false;
	assert_int_equal(floe_pq_compressor_submit(c, src, sizeof(src), NULL, dst + 16,
						   sizeof(dst) - 16, 16, count_done, &done, &taken),
			 0);
	assert_true(taken);
	/* Queued and not yet run: a second page of the same size would wait; a small one
	 * fits beside it. */
	assert_true(floe_pq_compressor_would_wait(c, sizeof(src)));
	assert_false(floe_pq_compressor_would_wait(c, 1000));
	/* Run (as a thread would) but not yet completed: submitting only completes it. */
	m.run(m.arg);
	m.ran = true;
	assert_false(floe_pq_compressor_would_wait(c, sizeof(src)));
	assert_int_equal(floe_pq_compressor_sync(c), 0);
	assert_int_equal(done, 1);
	assert_false(floe_pq_compressor_would_wait(c, sizeof(src)));
	floe_pq_compressor_free(c);
	assert_int_equal(a.used, 0);
}

static void test_bad_offload(void **state)
{
	(void)state;
	struct floe_pq_offload off = {NULL, def_submit, NULL};
	struct floe_pq_options o = {.codec = FLOE_PQ_ZSTD, .offload = &off};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 4, &o, mem_sink, &m, &w), FLOE_EINVAL);
	assert_null(w);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_deferred_same_bytes),
	    cmocka_unit_test(test_thread_same_bytes),
	    cmocka_unit_test(test_failures),
	    cmocka_unit_test(test_refit),
	    cmocka_unit_test(test_would_wait),
	    cmocka_unit_test(test_bad_offload),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
