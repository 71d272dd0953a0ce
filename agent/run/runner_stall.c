/* The main thread's watch over the committer: a commit in flight whose thread has made no
 * progress (platform/beat.h: a store operation begun, request bytes moved, a table's
 * commit begun) for STALL bound is stuck (a local warehouse on a hung file system or NFS
 * mount, whose fsync, open or rename never returns; a deadlock), not slow. It is logged
 * once, naming what the thread was doing, shown by /healthz, /livez and the metrics, and
 * the service manager's watchdog is no longer fed; after the longer EXIT bound the
 * process ends with FLOE_RUNNER_EXIT_STUCK so that whatever supervises it (a container
 * runtime, a timer's --once, a unit without WatchdogSec) starts it again. A thread stuck
 * in the kernel cannot be joined, so that exit is immediate; the spool, the checkpoint
 * and the tables are crash-safe, and the next start recovers exactly once.
 *
 * The bounds come from the requests' own deadlines (agent/README.md, "Liveness"): the
 * longest a committer goes without a step while it works is one request that moves no
 * byte (cut by lake.s3.request_timeout, or the S3 client's stall timeout) plus the wait
 * before its retry (at most a Retry-After's 5 minutes), so STALL is twice that, at least
 * 10 minutes, and EXIT twice STALL. The clock is the real monotonic one, never the
 * runner's injected clock: a test's fast clock must not make a working thread stuck. */
#include "agent/run/runner_impl.h"

#include "platform/clock.h"
#include "platform/http.h"
#include "platform/log.h"
#include "platform/notify.h"
#include "platform/owner.h"
#include "platform/worker.h"

#include <errno.h>
#include <inttypes.h>

#define STALL_MIN_NS (10 * 60 * 1000000000LL)
#define CONNECT_NS (10 * 1000000000LL) /* the S3 client's connect timeout */
/* How often a wait for the committer looks at it (and feeds the watchdog). */
#define LOOK_MS 1000

void floe_run_stall_init(struct floe_runner *r)
{
	int64_t req = (int64_t)r->set.cfg->lake.s3.request_timeout_ms * 1000000LL;
	if (req <= 0)
		req = 30 * 1000000000LL;
	int64_t one = CONNECT_NS + req + (int64_t)FLOE_HTTP_RETRY_AFTER_MAX_S * 1000000000LL;
	struct run_stall *s = &r->com.stall;
	s->bound_ns = 2 * one > STALL_MIN_NS ? 2 * one : STALL_MIN_NS;
	s->exit_ns = 2 * s->bound_ns;
	s->seen_ns = floe_clock_mono_ns();
}

void floe_run_stall_reset(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_stall *s = &r->com.stall;
	s->seen = floe_beat_count(&r->com.beat);
	s->seen_ns = floe_clock_mono_ns();
}

bool floe_run_stall_check(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_stall *s = &r->com.stall;
	int64_t now = floe_clock_mono_ns();
	uint64_t n = floe_beat_count(&r->com.beat);
	bool busy = r->com.task && !__atomic_load_n(&r->com.done, __ATOMIC_ACQUIRE);
	if (!busy || n != s->seen) {
		if (s->stalled)
			floe_info("runner: the committer thread moves again after %" PRId64
				  " s without progress (%s)",
				  (now - s->seen_ns) / 1000000000, floe_beat_doing(&r->com.beat));
		s->seen = n;
		s->seen_ns = now;
		s->stalled = false;
		return false;
	}
	int64_t quiet = now - s->seen_ns;
	if (quiet < s->bound_ns)
		return false;
	const char *on = floe_beat_on(&r->com.beat);
	if (!s->stalled) {
		s->stalled = true;
		r->stats.thread_stalls++;
		floe_error("runner: the committer thread has made no progress for %" PRId64
			   " s (working on: %s; the last step: %s): commits stop while it is stuck "
			   "(a hung file system or mount?). /healthz and /livez answer 503, the "
			   "service manager's watchdog is no longer fed, and the agent exits with "
			   "code %d at %" PRId64 " s unless it moves again",
			   quiet / 1000000000, on[0] ? on : "a commit",
			   floe_beat_doing(&r->com.beat), FLOE_RUNNER_EXIT_STUCK,
			   s->exit_ns / 1000000000);
	}
	if (quiet >= s->exit_ns) {
		floe_error("runner: the committer thread has made no progress for %" PRId64
			   " s (the last step: %s): exiting with code %d for the supervisor to "
			   "start the agent again; the spool keeps every row not committed",
			   quiet / 1000000000, floe_beat_doing(&r->com.beat),
			   FLOE_RUNNER_EXIT_STUCK);
		floe_notify_abandon(FLOE_RUNNER_EXIT_STUCK);
	}
	return true;
}

void floe_run_stall_wait(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	while (floe_worker_wait_ms(r->com.thread, r->com.task, LOOK_MS) == -ETIMEDOUT) {
		/* A long commit waited for (the start and end of --once, a stop) keeps the
		 * watchdog fed, until the committer is stuck. */
		if (!floe_run_stall_check(r))
			floe_notify_watchdog();
	}
	r->com.task = NULL;
	floe_run_stall_reset(r);
}
