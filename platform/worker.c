/* Worker pool: a mutex and two condition variables around a fixed table of task slots
 * (no allocation per task). Tasks are a page each, a few hundred microseconds or more,
 * so one lock per task costs nothing that matters. */
#include "worker.h"

#include "owner.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define SLOTS 64
/* zstd and LZ4 need little stack; a small one keeps 32-bit address space free. */
#define STACK_SIZE ((size_t)256 << 10)

enum { FREE, QUEUED, RUNNING, DONE };

struct task {
	void (*run)(void *arg);
	void *arg;
	int state;
	struct task *next; /* in the queue or the free list */
};

struct floe_worker {
	pthread_mutex_t mu;
	pthread_cond_t work; /* a task was queued, or stop */
	pthread_cond_t done; /* a task finished */
	struct task slots[SLOTS];
	struct task *head, *tail, *free;
	bool stop;
	unsigned nthreads;
	pthread_t threads[MAX_THREADS];
	unsigned long ran, ran_by_waiters;
};

static void *loop(void *arg)
{
	struct floe_worker *w = arg;
	/* A task that is a thread of its own (the committer, the syslog receiver) takes
	 * its role on top of this one while it runs. */
	floe_owner_enter(FLOE_ROLE_WORKER);
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && !w->stop)
			pthread_cond_wait(&w->work, &w->mu);
		struct task *t = w->head;
		if (!t)
			break; /* stop, and nothing left */
		w->head = t->next;
		if (!w->head)
			w->tail = NULL;
		t->state = RUNNING;
		pthread_mutex_unlock(&w->mu);
		t->run(t->arg);
		pthread_mutex_lock(&w->mu);
		t->state = DONE;
		w->ran++;
		pthread_cond_broadcast(&w->done);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int floe_worker_new(unsigned nthreads, struct floe_worker **out)
{
	if (nthreads < 1 || nthreads > MAX_THREADS)
		return -EINVAL;
	struct floe_worker *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->work, NULL);
	pthread_cond_init(&w->done, NULL);
	for (size_t i = 0; i < SLOTS; i++) {
		w->slots[i].next = w->free;
		w->free = &w->slots[i];
	}
	/* Signals go to the main thread, whose handlers set the stop flag. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, STACK_SIZE);
	int rc = 0;
	for (unsigned i = 0; i < nthreads; i++) {
		if ((rc = pthread_create(&w->threads[i], &attr, loop, w)) != 0)
			break;
		/* Named for top -H, ps -L and perf; a failure here changes nothing else. */
		pthread_setname_np(w->threads[i], "floe-worker");
		w->nthreads++;
	}
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc) {
		floe_worker_free(w);
		return -rc;
	}
	*out = w;
	return 0;
}

/* A pool's own tasks neither submit nor wait: one waiting on its pool could wait for
 * itself. The threads that do are the main thread and the committer. */
#define NOT_A_TASK (FLOE_ROLE_ANY & ~FLOE_ROLE_WORKER)

int floe_worker_submit(struct floe_worker *w, void (*run)(void *arg), void *arg, void **handle)
{
	FLOE_OWNER(NOT_A_TASK);
	pthread_mutex_lock(&w->mu);
	struct task *t = w->free;
	if (!t) {
		pthread_mutex_unlock(&w->mu);
		return -EBUSY;
	}
	w->free = t->next;
	t->run = run;
	t->arg = arg;
	t->state = QUEUED;
	t->next = NULL;
	if (w->tail)
		w->tail->next = t;
	else
		w->head = t;
	w->tail = t;
	pthread_cond_signal(&w->work);
	pthread_mutex_unlock(&w->mu);
	*handle = t;
	return 0;
}

/* Takes t out of the queue (it is there: its state is QUEUED). */
static void unqueue(struct floe_worker *w, struct task *t)
{
	struct task **pp = &w->head, *prev = NULL;
	while (*pp != t) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	*pp = t->next;
	if (w->tail == t)
		w->tail = prev;
}

/* Frees a task that is done; w->mu held. */
static void release(struct floe_worker *w, struct task *t)
{
	t->state = FREE;
	t->next = w->free;
	w->free = t;
}

/* The wait of both: forever with ms < 0, running the task here if it is still queued;
 * else at most about ms, leaving a queued task to the pool's threads. The timed wait
 * looks every 10 ms and counts its own sleeps, not a clock's reading: a wall clock
 * stepped back (a device's first NTP answer) would hold a deadline on CLOCK_REALTIME
 * for as long as the step, with the watchdog unfed (runner_stall.c), and one on
 * CLOCK_MONOTONIC cannot be had portably for a condition variable shared with the
 * untimed waits. The waits it serves (a commit waited for at a start, a stop, --once)
 * are rare; 10 ms of latency is nothing to them. */
static int wait_task(struct floe_worker *w, struct task *t, int64_t ms)
{
	FLOE_OWNER(NOT_A_TASK);
	if (ms >= 0) {
		for (int64_t waited = 0;;) {
			pthread_mutex_lock(&w->mu);
			if (t->state == DONE) {
				release(w, t);
				pthread_mutex_unlock(&w->mu);
				return 0;
			}
			pthread_mutex_unlock(&w->mu);
			if (waited >= ms)
				return -ETIMEDOUT;
			int64_t step = ms - waited < 10 ? ms - waited : 10;
			struct timespec d = {.tv_sec = 0, .tv_nsec = (long)step * 1000000L};
			while (nanosleep(&d, &d) != 0 && errno == EINTR)
				;
			waited += step;
		}
	}
	pthread_mutex_lock(&w->mu);
	if (t->state == QUEUED) {
		unqueue(w, t);
		t->state = RUNNING;
		pthread_mutex_unlock(&w->mu);
		t->run(t->arg);
		pthread_mutex_lock(&w->mu);
		w->ran++;
		w->ran_by_waiters++;
	} else {
		while (t->state != DONE)
			pthread_cond_wait(&w->done, &w->mu);
	}
	release(w, t);
	pthread_mutex_unlock(&w->mu);
	return 0;
}

void floe_worker_wait(struct floe_worker *w, void *handle)
{
	(void)wait_task(w, handle, -1);
}

int floe_worker_wait_ms(struct floe_worker *w, void *handle, int64_t ms)
{
	return wait_task(w, handle, ms < 0 ? 0 : ms);
}

int floe_worker_submit_cb(void *w, void (*run)(void *arg), void *arg, void **handle)
{
	return floe_worker_submit(w, run, arg, handle);
}

void floe_worker_wait_cb(void *w, void *handle)
{
	floe_worker_wait(w, handle);
}

unsigned long floe_worker_ran(const struct floe_worker *w, unsigned long *by_waiters)
{
	struct floe_worker *m = (struct floe_worker *)w;
	pthread_mutex_lock(&m->mu);
	unsigned long n = m->ran;
	if (by_waiters)
		*by_waiters = m->ran_by_waiters;
	pthread_mutex_unlock(&m->mu);
	return n;
}

void floe_worker_free(struct floe_worker *w)
{
	if (!w)
		return;
	FLOE_OWNER(NOT_A_TASK);
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_broadcast(&w->work);
	pthread_mutex_unlock(&w->mu);
	for (unsigned i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	pthread_cond_destroy(&w->work);
	pthread_cond_destroy(&w->done);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

unsigned floe_worker_cpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) == 0) {
		int n = CPU_COUNT(&set);
		if (n > 0)
			return (unsigned)n;
	}
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned)n : 1;
}
