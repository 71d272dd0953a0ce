/* The syslog input's ring of entries (agent/input/syslog_queue.c) against a model: random
 * puts and pops of random sizes, in a small ring so that every wrap case comes up; what
 * comes out is what went in, in order, and a put refused is one that could not fit. */
#include "agent/input/syslog_queue.h"

#include "formats/base/alloc.h"

#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#define CAP 4096
#define MAXN 2000

struct model {
	size_t len[MAXN];
	uint8_t tag[MAXN];
	size_t head, n;
};

static void test_model(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct sq q;
	assert_int_equal(sq_init(&q, &a, CAP), 0);
	static struct model m;
	memset(&m, 0, sizeof(m));
	char buf[1024];
	uint32_t seed = 12345;
	size_t puts = 0, refused = 0;
	for (int step = 0; step < 200000; step++) {
		seed = seed * 1103515245u + 12345u;
		bool put = (seed >> 16) % 3 != 0 && m.head + m.n < MAXN;
		if (put) {
			size_t len = (seed >> 8) % 700;
			uint8_t tag = (uint8_t)step;
			memset(buf, tag, len);
			size_t room = sq_room(&q);
			bool ok = sq_put(&q, SQ_MSG, 0, tag, buf, len);
			/* A put fits exactly when the room says so. */
			assert_int_equal(ok, sq_entry_size(len) <= room);
			if (ok) {
				m.len[m.head + m.n] = len;
				m.tag[m.head + m.n] = tag;
				m.n++;
				puts++;
			} else {
				refused++;
			}
		} else {
			const char *p;
			const struct sq_hdr *h = sq_peek(&q, &p);
			if (m.n == 0) {
				assert_null(h);
				continue;
			}
			assert_non_null(h);
			assert_int_equal(h->len, m.len[m.head]);
			assert_int_equal(h->listener, m.tag[m.head]);
			for (size_t k = 0; k < h->len; k++)
				assert_int_equal((uint8_t)p[k], m.tag[m.head]);
			sq_pop(&q);
			m.head++;
			m.n--;
			if (m.head + m.n == MAXN || m.n == 0) {
				memmove(m.len, m.len + m.head, m.n * sizeof(m.len[0]));
				memmove(m.tag, m.tag + m.head, m.n);
				m.head = 0;
			}
		}
	}
	assert_true(puts > 50000);
	assert_true(refused > 100); /* the full cases came up too */
	/* An empty queue has all its room again. */
	const char *p;
	while (sq_peek(&q, &p))
		sq_pop(&q);
	assert_true(sq_empty(&q));
	assert_true(sq_room(&q) >= CAP / 2);
	sq_fini(&q, &a);
	assert_int_equal(a.used, 0);
}

/* Two threads, as the receiver and the runner use it: every entry arrives whole and in
 * order while the producer writes over the space the consumer just freed. */
#define NPUT 300000

static void *producer(void *arg)
{
	struct sq *q = arg;
	char buf[600];
	uint32_t seed = 7;
	for (uint32_t i = 0; i < NPUT; i++) {
		seed = seed * 1103515245u + 12345u;
		size_t len = 4 + (seed >> 8) % 500;
		memcpy(buf, &i, 4);
		memset(buf + 4, (int)(i & 0xff), len - 4);
		while (!sq_put(q, SQ_MSG, 0, 0, buf, len))
			sched_yield();
	}
	return NULL;
}

static void test_threads(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct sq q;
	assert_int_equal(sq_init(&q, &a, 16384), 0);
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, producer, &q), 0);
	uint32_t want = 0, seed = 7;
	while (want < NPUT) {
		const char *p;
		const struct sq_hdr *h = sq_peek(&q, &p);
		if (!h) {
			sched_yield();
			continue;
		}
		seed = seed * 1103515245u + 12345u;
		size_t len = 4 + (seed >> 8) % 500;
		uint32_t got;
		memcpy(&got, p, 4);
		assert_int_equal(got, want);
		assert_int_equal(h->len, len);
		for (size_t k = 4; k < len; k++)
			if ((uint8_t)p[k] != (uint8_t)(want & 0xff))
				fail_msg("entry %u byte %zu", want, k);
		sq_pop(&q);
		want++;
	}
	pthread_join(t, NULL);
	assert_true(sq_empty(&q));
	sq_fini(&q, &a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_model),
	    cmocka_unit_test(test_threads),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
