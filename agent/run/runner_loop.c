/* The agent's main loop: read passes over the inputs, seals, commits on the interval,
 * rescans, idle waits, and the end of a run (a stop, or the end of input with --once).
 * Time, waiting and stopping come from the runner's env (runner.h's options). */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "formats/base/buf.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/loop.h"
#include "platform/notify.h"
#include "platform/signal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* The loop's clocks, all monotonic µs. */
struct loop {
	bool once;
	int64_t last_commit, last_scan, blocked_since;
	int64_t disk_retry_at, disk_backoff_us; /* a full state_dir disk asked again */
	/* After a failed commit the next one waits longer (up to 5 minutes), so that an
	 * unreachable store does not take the time the inputs need for reading. */
	int64_t commit_backoff_us; /* the wait added after a failed commit (jittered) */
	bool asked_wait;	   /* the last failed commit's store asked for a wait (logged) */
	int64_t backoff_ceil_us;   /* its ceiling, doubled at each failure in a row */
	unsigned idle_turns; /* idle waits in a row */
	int64_t last_full_read; /* the last read pass over every tail */
	bool told_stopping;	/* the service manager was told STOPPING=1 */
};

/* The pace of the glob rescan: slower once idle with a watch (RESCAN_IDLE_MS), but
 * RESCAN_UNMATCHED_MS while a pattern matches nothing. */
static int64_t rescan_us(const struct floe_runner *r, const struct loop *l)
{
	if (!floe_input_shared_has_watch(r->in.shared) || l->idle_turns <= IDLE_TURNS)
		return RESCAN_MS * 1000LL;
	return (floe_runner_inputs_unmatched(r) ? RESCAN_UNMATCHED_MS : RESCAN_IDLE_MS) * 1000LL;
}

/* Milliseconds until the loop's next deadline: the commit interval (stretched after a
 * failure; it also closes the aggregators' idle windows), the rescan, and the tails' full
 * pass (QUIET_FULL_MS, which also closes files whose rotate_wait is over). At least 1 (a
 * wait rounded down would spin), at most IDLE_MAX_MS (STATUS_IDLE_MAX_MS with the status
 * pages on). */
static int until_due_ms(struct floe_runner *r, const struct loop *l)
{
	int64_t due = l->last_commit + r->set.commit_interval_us + l->commit_backoff_us;
	if (l->last_scan + rescan_us(r, l) < due)
		due = l->last_scan + rescan_us(r, l);
	if (floe_input_shared_watched(r->in.shared) && l->last_full_read + QUIET_FULL_MS * 1000LL < due)
		due = l->last_full_read + QUIET_FULL_MS * 1000LL;
	int64_t ms = (due - floe_run_mono_us(r) + 999) / 1000;
	int64_t max = r->status ? STATUS_IDLE_MAX_MS : IDLE_MAX_MS;
	/* A service manager's watchdog is fed from the turns: wait at most a quarter of it. */
	int64_t wd = floe_notify_watchdog_us() / 4000;
	if (wd > 0 && wd < max)
		max = wd;
	return ms < 1 ? 1 : ms > max ? (int)max : (int)ms;
}

/* Sleeps until a watched directory changes (a file grew, appeared or was rotated), the
 * committer reports, a signal comes, or the wait is over, and hands the watch's events
 * to the inputs. The wait is IDLE_SLEEP_MS while records are assembled (their timeouts)
 * or the agent was busy a moment ago; once idle, it lasts until the next deadline when
 * everything that can arrive wakes the loop (inotify watches the tails' directories, or
 * the inputs wake it themselves: the syslog receiver), else IDLE_LONG_MS (the polling
 * watch looks at directories between two waits; a journal). Without a watch or any input
 * on the loop (tests) the clock's sleep waits, after the commit in flight is done: a
 * test's script of sleeps then sees the same states on every run. */
static void idle_wait(struct floe_runner *r, const struct loop *l)
{
	unsigned idle_turns = l->idle_turns;
	bool watch = floe_input_shared_has_watch(r->in.shared);
	struct run_wake w;
	floe_runner_inputs_wake(r, false, &w);
	if (!watch && !w.on_loop) {
		/* An idle round in a test (poll) ran check_commit with wait first. */
		r->env.o.clock->sleep_ms(r->env.o.clock->ctx, IDLE_SLEEP_MS);
		floe_loop_run_once(r->loop, 0);
		return;
	}
	/* Just idle after reading: a short nap where an input asks for one (without asking
	 * it for a wake-up, so that a busy sender does not wake the loop per message). */
	if (w.nap_ms && idle_turns == 1) {
		floe_loop_run_once(r->loop, w.nap_ms);
		return;
	}
	/* The inputs wake it for what comes next (when nothing waits already). */
	floe_runner_inputs_wake(r, true, &w);
	int ms = IDLE_SLEEP_MS;
	if (idle_turns > IDLE_TURNS && !w.assembling)
		ms = w.all_wake ? until_due_ms(r, l) : IDLE_LONG_MS;
	floe_loop_run_once(r->loop, w.pending ? 0 : ms);
	/* Polled directories (no inotify, or over its limit) are looked at here too. */
	if (watch)
		floe_runner_take_watch_events(r);
}

/* A stop whose commit failed: says what waits in the spool. */
static void stopped_uncommitted(struct floe_runner *r, int rc)
{
	floe_warn("runner: stopping without the last commit (%s): the spool holds %zu entries "
		  "(%" PRIu64 " bytes) that the next start commits",
		  floe_strerror(rc), floe_runner_spool_entries(r), floe_runner_spool_bytes(r));
}

/* Seals the batch before a damaged entry is read again into it, then rebuilds the entry
 * (or counts it lost). */
static int rebuild(struct floe_runner *r, uint64_t seq)
{
	char why[64];
	snprintf(why, sizeof(why), "rebuilding damaged spool entry %" PRIu64, seq);
	int rc = floe_runner_seal(r, why);
	return rc ? rc : floe_runner_rebuild(r, seq);
}

/* A commit from start to end, waited for (the start and end of --once, a stop, a full
 * spool with --once): the one in flight first, then one of everything sealed since,
 * again after each damaged entry is rebuilt. Returns the last commit's result. */
static int commit_now(struct floe_runner *r)
{
	int rc = 0;
	uint64_t damaged = 0;
	if (floe_runner_commit_take(r, true, &rc, &damaged) && damaged && (rc = rebuild(r, damaged)))
		return rc;
	do {
		if ((rc = floe_runner_commit_start(r, true)))
			return rc;
		floe_runner_commit_take(r, true, &rc, &damaged);
	} while (damaged && (rc = rebuild(r, damaged)) == 0);
	return rc;
}

/* Takes the committer's report when it is there (with wait: once it is): a damaged entry
 * is rebuilt and committed again at once, a refusal ends the loop (*done), a failure
 * stretches the wait for the next commit. */
static int check_commit(struct floe_runner *r, struct loop *l, bool wait, bool *done)
{
	int rc = 0;
	uint64_t damaged = 0;
	if (!floe_runner_commit_take(r, wait, &rc, &damaged))
		return 0;
	if (damaged) {
		if ((rc = rebuild(r, damaged)) == 0)
			return floe_runner_commit_start(r, true);
	}
	if (rc && floe_runner_fatal(rc)) {
		*done = true;
		return rc;
	}
	/* A table behind its record waits for its metadata to be restored, which no backoff
	 * brings sooner: the other tables commit on their intervals, and it is read again
	 * at each. */
	if (rc == FLOE_EBEHIND)
		rc = 0;
	if (rc) {
		/* Doubling up to 5 minutes, each wait drawn from the upper half of its ceiling:
		 * the devices that a store's outage stopped together do not all come back to
		 * it in the same second. */
		int64_t max = 300 * 1000000LL, i = r->set.commit_interval_us;
		l->backoff_ceil_us = l->backoff_ceil_us ? l->backoff_ceil_us * 2 : i;
		if (l->backoff_ceil_us > max)
			l->backoff_ceil_us = max;
		uint64_t x = 0;
		if (r->env.o.rand->fill(r->env.o.rand->ctx, &x, sizeof(x)) != 0)
			x = 0;
		int64_t half = l->backoff_ceil_us / 2;
		l->commit_backoff_us = half + (int64_t)(x % (uint64_t)(half + 1));
		/* A store that said when to come back (Retry-After) is not asked sooner. */
		int64_t asked = r->com.rep.retry_after_us;
		int64_t need =
		    floe_run_mono_us(r) + asked - l->last_commit - r->set.commit_interval_us;
		if (asked > 0 && need > l->commit_backoff_us) {
			if (!l->asked_wait)
				floe_info("runner: the store asked for %.0f s without requests "
					  "(Retry-After): the next commit waits for it",
					  (double)asked / 1e6);
			l->commit_backoff_us = need;
		}
		l->asked_wait = asked > 0;
		return 0; /* the spool keeps what failed; a later commit retries */
	}
	l->commit_backoff_us = 0;
	l->backoff_ceil_us = 0;
	l->asked_wait = false;
	/* Entries sealed while this commit was in flight go next, at once: a slow store
	 * makes commits larger, not later. */
	for (size_t k = 0; k < r->nraw; k++)
		if (r->raw[k].next_seq - 1 > floe_output_lease(r->raw[k].out) &&
		    floe_runner_table_due(r, k))
			return floe_runner_commit_start(r, false);
	return 0;
}

/* Before the loop: every input scanned, the first batch's start positions, and what an
 * earlier run left in the spool handed to the committer (with --once, committed before
 * anything is read, as a run that must commit what it reads would). A store that fails
 * that commit does not keep the inputs from the spool: a timer's --once read nothing
 * while the store was away (only the first run of an outage spooled), and what logrotate
 * deleted meanwhile was never read, lost with no count. Now it reads, as the daemon
 * does, and its last commit fails the run again if the store is still away. */
static int start(struct floe_runner *r, bool once)
{
	int rc = floe_runner_scan_inputs(r, true);
	if (rc)
		return rc;
	/* The first batch starts at the positions the scans settled on. */
	struct floe_buf pos;
	floe_buf_init(&pos, r->alloc, POSITIONS_MAX);
	if (floe_runner_collect_positions(r, &pos) == 0)
		floe_runner_set_from(r, pos.data, pos.len);
	floe_buf_fini(&pos);
	/* And they are durable before anything is read: a file seen first starts at its end
	 * (start_at: end) once, not at every start. */
	if ((rc = floe_runner_save_new_positions(r, true)))
		return rc;
	/* Entries left by an earlier run go in first. */
	size_t n = 0;
	for (size_t k = 0; k < r->nraw; k++) {
		uint64_t *seqs = NULL;
		size_t one = 0;
		if ((rc = floe_spool_list(r->raw[k].spool, &seqs, &one)))
			return rc;
		floe_free(r->alloc, seqs);
		n += one;
	}
	if (n == 0)
		return 0;
	if (!once)
		return floe_runner_commit_start(r, true);
	/* A table behind its record holds only its own entries back, and a store that is
	 * away all of them: the inputs are read all the same (the run still fails at its
	 * end, its rows uncommitted). */
	rc = commit_now(r);
	return floe_runner_fatal(rc) ? rc : 0;
}

/* Counts the time the inputs wait for a full spool; with --once, which cannot wait for
 * the next interval, commits now to make room, or fails. */
static int while_blocked(struct floe_runner *r, struct loop *l, int64_t now)
{
	if (!r->lake.blocked) {
		if (l->blocked_since)
			r->stats.blocked_ms += (uint64_t)(now - l->blocked_since) / 1000;
		l->blocked_since = 0;
		return 0;
	}
	/* Counted as it goes, so that the metrics show a wait under way; the clock moves
	 * on by the whole milliseconds counted, so that short turns lose nothing. */
	if (l->blocked_since) {
		int64_t ms = (now - l->blocked_since) / 1000;
		r->stats.blocked_ms += (uint64_t)ms;
		l->blocked_since += ms * 1000;
	} else {
		l->blocked_since = now;
	}
	/* A full disk that commits cannot free (another writer filled it) is asked again,
	 * less often the longer it lasts, up to once a minute. */
	if (r->lake.disk_low && now >= l->disk_retry_at) {
		l->disk_backoff_us = l->disk_backoff_us ? l->disk_backoff_us * 2 : 1000000;
		if (l->disk_backoff_us > 60000000)
			l->disk_backoff_us = 60000000;
		l->disk_retry_at = now + l->disk_backoff_us;
		(void)floe_runner_enforce_spool_limit(r);
		if (!r->lake.blocked)
			l->disk_backoff_us = 0;
	}
	if (!l->once)
		return 0;
	int rc = commit_now(r);
	if (rc == 0 && r->lake.blocked) {
		if (r->lake.disk_low)
			floe_error("runner: the file system of state_dir %s has %" PRIu64
				   " bytes free, and committing did not make room",
				   r->set.state_dir, r->lake.disk_avail);
		else
			floe_error("runner: the spool is full and committing did not make room");
		rc = FLOE_ELIMIT;
	}
	return rc;
}

/* The last seal and commit, waited for: at a stop, or at the end of input with --once. A
 * commit the store did not take within the stop grace stays in the spool for the next
 * start, which is no failure. */
static int commit_last(struct floe_runner *r, struct loop *l)
{
	/* What the inputs took in on their threads goes in first (senders saw it
	 * written). */
	int rc = floe_runner_drain_inputs(r);
	if (rc == 0)
		rc = floe_runner_seal(r, l->once ? "end of input" : "stopping");
	if (rc == 0)
		rc = floe_run_aggs_close(r, true);
	if (rc == 0)
		rc = commit_now(r);
	l->last_commit = floe_run_mono_us(r);
	if (rc && floe_run_stopping(r)) {
		stopped_uncommitted(r, rc);
		rc = 0;
	}
	return rc;
}

/* Seals when the interval (stretched after failures) is over, and hands a commit to the
 * committer unless one is in flight; at a stop, the last one. *done: the loop ends
 * (with the returned code). */
static int commit_due(struct floe_runner *r, struct loop *l, bool stop, int64_t now, bool *done)
{
	*done = false;
	if (stop) {
		*done = true;
		return commit_last(r, l);
	}
	if (now - l->last_commit < r->set.commit_interval_us + l->commit_backoff_us)
		return 0;
	/* The batch is sealed on the interval even while a commit is in flight: the rows
	 * are then durable in the spool, and the report of that commit hands them on. */
	int rc = floe_runner_seal(r, "commit_interval");
	if (rc) {
		*done = true;
		return rc;
	}
	l->last_commit = now;
	/* Idle windows close into the aggregate spools, for the commit to take. */
	if ((rc = floe_run_aggs_close(r, false))) {
		*done = true;
		return rc;
	}
	if (floe_runner_committing(r)) {
		/* The report rewrites the metrics; until then, so does every interval, so that
		 * they show the reading go on while a slow store holds a commit. */
		floe_runner_write_metrics(r);
		return 0;
	}
	if ((rc = floe_runner_commit_start(r, false)))
		*done = true;
	return rc;
}

/* SIGHUP: TLS certificates again, and a new configuration if the caller accepts one
 * (then the run ends as at a stop, for the caller to start again on it). */
static void hangup(struct floe_runner *r, bool *stop)
{
	floe_runner_reload_inputs(r);
	if (r->env.o.reload && r->env.o.reload(r->env.o.reload_ctx)) {
		floe_info("runner: SIGHUP: the new configuration takes over: sealing and "
			  "committing first");
		r->env.reloading = true;
		*stop = true;
	} else if (!r->env.o.reload) {
		floe_info("runner: SIGHUP: TLS certificates are reloaded; a changed configuration "
			  "takes effect at the next start");
	}
}

/* Whether this turn may leave the tails unread: idle for a while, with inotify watching
 * their directories and no event from it since the last full pass (appends raise
 * IN_MODIFY on the directory), and a full pass less than QUIET_FULL_MS ago, which is
 * kept as a safety net for files on file systems that raise no events. An idle agent
 * then makes no system call per file and turn. A turn that rescans reads them all too
 * (turn() sets watch_fired), so that the two periodic passes share one wake-up. */
static bool quiet_turn(struct floe_runner *r, struct loop *l)
{
	int64_t now = floe_run_mono_us(r);
	bool quiet = floe_input_shared_watched(r->in.shared) && l->idle_turns > IDLE_TURNS && !r->in.watch_fired &&
		     now - l->last_full_read < (int64_t)QUIET_FULL_MS * 1000;
	if (!quiet) {
		l->last_full_read = now;
		r->in.watch_fired = false;
	}
	return quiet;
}

/* One turn of the loop: the committer's report, maybe rescan, read, time out, maybe flush
 * (--once), maybe seal and commit, maybe wait. *done: the loop ends. */
static int turn(struct floe_runner *r, struct loop *l, bool *done)
{
	/* Each turn feeds the service manager's watchdog (WatchdogSec=): a loop stuck for
	 * its interval gets the agent restarted, which is all an unwatched device can do.
	 * So does a committer stuck for its bound (runner_stall.c): the loop then turns on,
	 * but no longer feeds it. */
	if (!floe_run_stall_check(r))
		floe_notify_watchdog();
	int rc = check_commit(r, l, false, done);
	if (rc || *done)
		return rc;
	rc = while_blocked(r, l, floe_run_mono_us(r));
	floe_runner_check_host(r);
	/* The periodic rescan comes before the read, and the read after it is a full pass:
	 * what it found (a file no event told of: a network file system's, or one rotated
	 * where no watch reaches) is read in this wake-up, not at the next full pass. */
	int64_t now = floe_run_mono_us(r);
	if (rc == 0 && !l->once && now - l->last_scan >= rescan_us(r, l)) {
		(void)floe_runner_scan_inputs(r, false);
		l->last_scan = now;
		r->in.watch_fired = true;
	}
	size_t progress = 0;
	if (rc == 0)
		rc = floe_runner_read_inputs(r, &progress, quiet_turn(r, l));
	if (rc == 0)
		rc = floe_runner_poll_assemblers(r, false);
	if (rc) {
		*done = true;
		return rc;
	}
	bool stop = floe_run_stopping(r);
	if (stop && !l->told_stopping && floe_signal_stop_requested()) {
		l->told_stopping = true;
		(void)floe_notify("STOPPING=1\nSTATUS=stopping: sealing and committing");
	}
	if (floe_signal_take_hangup())
		hangup(r, &stop);
	if (l->once && progress == 0 && !r->lake.blocked) {
		if ((rc = floe_runner_flush_inputs(r)) < 0) {
			*done = true;
			return rc;
		}
		stop = true;
	}
	now = floe_run_mono_us(r);
	if ((rc = commit_due(r, l, stop, now, done)) || *done)
		return rc;
	floe_runner_status_publish(r, false);
	if (progress == 0 && !l->once) {
		struct run_wake w;
		floe_runner_inputs_wake(r, false, &w);
		if (!floe_input_shared_has_watch(r->in.shared) && !w.on_loop &&
		    (rc = check_commit(r, l, true, done)))
			return rc;
		if (!*done) {
			l->idle_turns++;
			idle_wait(r, l);
		}
	} else {
		l->idle_turns = 0;
	}
	return 0;
}

int floe_runner_run(struct floe_runner *r, bool once)
{
	/* The read clock before the first read pass: a record handed over outside one (the
	 * journal's, from the loop) is given to the aggregations with it, never with 0. */
	r->in.read_us = floe_run_wall_us(r);
	r->in.mono_us = floe_run_mono_us(r);
	int rc = start(r, once);
	if (rc)
		return rc;
	struct loop l = {.once = once};
	l.last_commit = l.last_scan = floe_run_mono_us(r);
	/* A stop or a SIGHUP ends an idle wait at once, however long it was to be. */
	floe_loop_wake_on_signals(r->loop);
	bool done = false;
	while (!done)
		rc = turn(r, &l, &done);
	if (l.blocked_since)
		r->stats.blocked_ms += (uint64_t)(floe_run_mono_us(r) - l.blocked_since) / 1000;
	if (once && rc == 0 && r->stats.lines == 0)
		floe_runner_explain_nothing_read(r);
	floe_runner_abandon_inputs(r);
	floe_runner_write_metrics(r);
	for (size_t k = 0; rc && k < r->nraw; k++)
		floe_batch_abort(r->raw[k].batch);
	return rc;
}
