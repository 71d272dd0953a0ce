/* A small pool of worker threads that run tasks handed to them, so that the agent's main
 * thread can go on while a Parquet page compresses. Tasks are waited for one by one, by
 * whoever submitted them; a task still queued when its waiter arrives runs on the waiter
 * itself, so waiting never idles a core while work is pending. */
#ifndef FLOE_WORKER_H
#define FLOE_WORKER_H

#include <stdint.h>

struct floe_worker;

/* Starts nthreads threads (1..16) with every signal blocked in them. Returns 0 or -errno. */
int floe_worker_new(unsigned nthreads, struct floe_worker **out);
/* Queues run(arg). *handle is for floe_worker_wait, which must be called exactly once
 * for it. Returns 0, or -EBUSY when the queue is full (the caller then runs it itself). */
int floe_worker_submit(struct floe_worker *w, void (*run)(void *arg), void *arg, void **handle);
/* Returns once the task has run (running it here if no thread has taken it yet). */
void floe_worker_wait(struct floe_worker *w, void *handle);
/* The same, waiting at most about ms: 0 once it has run (the handle is spent, as after
 * floe_worker_wait), -ETIMEDOUT while it is queued or runs (wait for it again, with
 * either). It never runs the task here: a waiter that must stay free to watch the task
 * (the committer's, runner_stall.c) leaves it to the pool's threads. */
int floe_worker_wait_ms(struct floe_worker *w, void *handle, int64_t ms);
/* The same two with the pool as a void pointer, for callback tables such as the Parquet
 * writer's offload. */
int floe_worker_submit_cb(void *w, void (*run)(void *arg), void *arg, void **handle);
void floe_worker_wait_cb(void *w, void *handle);
/* Tasks run by the threads and by waiters so far. */
unsigned long floe_worker_ran(const struct floe_worker *w, unsigned long *by_waiters);
/* Stops and joins the threads; every task submitted must have been waited for. NULL ok. */
void floe_worker_free(struct floe_worker *w);

/* CPUs this process may run on (at least 1). */
unsigned floe_worker_cpus(void);

#endif
