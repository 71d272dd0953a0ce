/* The agent's main loop: read passes over the inputs, seals, commits on the interval,
 * rescans, idle waits, and the end of a run (a stop, or the end of input with --once).
 * Time, waiting and stopping come from the runner's env (runner.h's options). */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/input/syslog_in.h"
#include "agent/input/tail.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "formats/base/buf.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/loop.h"
#include "platform/signal.h"
#include "platform/watch.h"

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
	int64_t backoff_ceil_us;   /* its ceiling, doubled at each failure in a row */
	unsigned idle_turns; /* idle waits in a row */
	int64_t last_full_read; /* the last read pass over every tail */
};

/* The next batch starts where this one ended. Without memory for the copy its entry
 * only records no start (a damaged file of it could not be rebuilt). */
static void set_from(struct floe_runner *r, const uint8_t *p, size_t len)
{
	floe_free(&r->alloc, r->b.from);
	r->b.from = NULL;
	r->b.from_len = 0;
	if ((r->b.from = floe_malloc(&r->alloc, len ? len : 1))) {
		memcpy(r->b.from, p, len);
		r->b.from_len = len;
	}
}

/* No raw row since the last seal, but events of raw: false inputs went into the
 * aggregations: their positions and the open windows' image are recorded without a raw
 * entry, the checkpoint being their durability point (runner_agg.c says why). */
static int seal_rowless(struct floe_runner *r)
{
	struct floe_buf pos;
	floe_buf_init(&pos, &r->alloc, POSITIONS_MAX);
	uint64_t seq = r->b.next_seq - 1, sub = 0;
	int rc = floe_runner_collect_positions(r, &pos);
	if (rc == 0)
		rc = floe_run_aggs_seal_rowless(r, seq, &sub);
	if (rc == 0) {
		set_from(r, pos.data, pos.len);
		floe_crashpoint("rowless-before-checkpoint");
		rc = floe_runner_save_checkpoint(r, seq, sub, pos.data, pos.len);
		if (rc)
			floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		else
			rc = floe_runner_enforce_spool_limit(r);
	}
	floe_buf_fini(&pos);
	return rc;
}

/* Seals the batch into the next spool entry. why says what closes it (NULL: the
 * batch's own reason, else the memory budget): logged, so that files far below
 * target_file_size can be traced to what sealed them. */
static int seal(struct floe_runner *r, const char *why)
{
	r->b.seal_needed = false;
	uint64_t rows = floe_batch_rows(r->b.batch);
	if (rows == 0)
		return floe_run_aggs_unsealed(r) ? seal_rowless(r) : 0;
	if (!why)
		why = floe_batch_seal_reason(r->b.batch);
	if (!why)
		why = "memory budget";
	struct floe_buf pos;
	floe_buf_init(&pos, &r->alloc, POSITIONS_MAX);
	int rc = floe_runner_collect_positions(r, &pos);
	if (rc == 0)
		rc = floe_run_aggs_seal(r, r->b.next_seq);
	if (rc == 0 &&
	    (rc = floe_batch_seal_range(r->b.batch, floe_run_wall_us(r), r->b.from, r->b.from_len,
					pos.data, pos.len)) < 0)
		floe_error("runner: sealing the batch into the spool (%s/spool) failed: %s",
			   r->set.state_dir, floe_strerror(rc));
	if (rc == 0)
		set_from(r, pos.data, pos.len);
	if (rc == 0) {
		uint64_t seq = r->b.next_seq++;
		r->stats.seals++;
		r->b.unsealed_bytes = 0;
		floe_info("runner: sealed spool entry %" PRIu64 ": %" PRIu64 " rows (%s)", seq,
			  rows, why);
		/* The entry is durable and holds the positions too; the checkpoint must be
		 * written before a commit may remove the entry, so a failure here stops the
		 * agent (a restart recovers the positions from the entry). */
		floe_crashpoint("seal-before-checkpoint");
		rc = floe_runner_save_checkpoint(r, seq, 0, pos.data, pos.len);
		if (rc)
			floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		else
			rc = floe_runner_enforce_spool_limit(r);
	}
	floe_buf_fini(&pos);
	r->b.seal_needed = false;
	return rc;
}

/* Seals while asked to and puts the waiting records in the next batch. */
static int settle(struct floe_runner *r)
{
	int rc = 0;
	while (rc == 0 && (r->b.seal_needed || r->b.ndefer)) {
		bool had = r->b.seal_needed;
		if (r->b.seal_needed && (rc = seal(r, r->b.seal_why)))
			break;
		r->b.seal_why = NULL;
		if ((rc = floe_runner_add_deferred(r)))
			break;
		if (!had && !r->b.seal_needed && r->b.ndefer) {
			rc = FLOE_ELIMIT; /* no progress possible */
			break;
		}
	}
	return rc;
}

/* Timeouts of every assembler; with end = true (--once), everything they hold. */
static int poll_assemblers(struct floe_runner *r, bool end)
{
	int rc = 0;
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		/* A full spool (policy block) stops records from timeouts too. */
		if (!r->in.asm_[i] || (r->lake.blocked && !end))
			continue;
		r->in.cur = i;
		r->in.read_us = floe_run_wall_us(r);
		do {
			rc = end ? floe_assemble_flush(r->in.asm_[i], floe_runner_on_record, r)
				 : floe_assemble_poll(r->in.asm_[i], floe_run_mono_us(r),
						      floe_runner_on_record, r);
			if (rc >= 0) {
				int src = settle(r);
				if (src)
					return src;
			}
		} while (rc == 1 && end);
		if (rc == 1)
			rc = 0; /* the rest is polled next time */
	}
	if (rc < 0)
		floe_error("runner: assembling records: %s",
			   floe_strerror(r->b.add_error ? r->b.add_error : rc));
	return rc;
}

/* Hands the watch's events to every tail. */
static void take_watch_events(struct floe_runner *r)
{
	struct floe_watch_event ev;
	/* Only a ready inotify descriptor is worth a wait (1 ms: its events come in a
	 * burst); otherwise a look without sleeping (the polling backend's directories). */
	int wait_ms = r->in.watch_ready ? 1 : 0;
	r->in.watch_ready = false;
	if (floe_watch_wait(r->in.watch, wait_ms) <= 0)
		return;
	r->in.watch_fired = true;
	while (floe_watch_next(r->in.watch, &ev) > 0)
		for (size_t i = 0; i < r->in.n; i++)
			if (r->in.tails[i])
				floe_tail_notify(r->in.tails[i], &ev);
}

/* Whether a tail has a pattern matching no file: its directory may be missing, and no
 * watch sees one appear. */
static bool unmatched_patterns(const struct floe_runner *r)
{
	struct floe_tail_stats st;
	for (size_t i = 0; i < r->in.n; i++) {
		if (!r->in.tails[i])
			continue;
		floe_tail_get_stats(r->in.tails[i], &st);
		if (st.patterns_unmatched)
			return true;
	}
	return false;
}

/* The pace of the glob rescan: slower once idle with a watch (RESCAN_IDLE_MS), but
 * RESCAN_UNMATCHED_MS while a pattern matches nothing. */
static int64_t rescan_us(const struct floe_runner *r, const struct loop *l)
{
	if (!r->in.watch || l->idle_turns <= IDLE_TURNS)
		return RESCAN_MS * 1000LL;
	return (unmatched_patterns(r) ? RESCAN_UNMATCHED_MS : RESCAN_IDLE_MS) * 1000LL;
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
	if (r->in.watch_added && l->last_full_read + QUIET_FULL_MS * 1000LL < due)
		due = l->last_full_read + QUIET_FULL_MS * 1000LL;
	int64_t ms = (due - floe_run_mono_us(r) + 999) / 1000;
	int64_t max = r->status ? STATUS_IDLE_MAX_MS : IDLE_MAX_MS;
	return ms < 1 ? 1 : ms > max ? (int)max : (int)ms;
}

/* Sleeps until a watched directory changes (a file grew, appeared or was rotated), the
 * committer reports, a signal comes, or the wait is over, and hands the watch's events
 * to every tail. The wait is IDLE_SLEEP_MS while records are assembled (their timeouts)
 * or the agent was busy a moment ago; once idle, it lasts until the next deadline when
 * everything that can arrive wakes the loop (inotify watches the tails' directories, or
 * there are no tails; the syslog receiver wakes it), else IDLE_LONG_MS (the polling
 * watch looks at directories between two waits; a journal). Without a watch (tests) the clock's sleep waits, after the commit in flight
 * is done: a test's script of sleeps then sees the same states on every run. */
static void idle_wait(struct floe_runner *r, const struct loop *l)
{
	unsigned idle_turns = l->idle_turns;
	if (!r->in.watch && !r->in.nsyslog && !r->in.njournal) {
		/* An idle round in a test (poll) ran check_commit with wait first. */
		r->env.o.clock->sleep_ms(r->env.o.clock->ctx, IDLE_SLEEP_MS);
		floe_loop_run_once(r->loop, 0);
		return;
	}
	/* Just idle after reading syslog messages: a short nap without asking the receiver
	 * for a wake-up, so that a busy sender (100 k datagrams a second) costs a few hundred
	 * wake-ups a second, not one per message; the queue holds what comes meanwhile. */
	if (r->in.nsyslog && idle_turns == 1) {
		floe_loop_run_once(r->loop, SYSLOG_NAP_MS);
		return;
	}
	/* The syslog receiver wakes it for the next message (when none waits already). */
	bool pending = false;
	for (size_t i = 0; i < r->in.n; i++)
		if (r->in.syslogs[i] && floe_syslog_in_arm_wake(r->in.syslogs[i]))
			pending = true;
	int ms = IDLE_SLEEP_MS;
	bool assembling = false;
	for (size_t i = 0; i < r->in.n; i++)
		assembling = assembling || r->in.asm_[i];
	/* A journal keeps the 1 s pace: whether its descriptor tells of every change (or
	 * sd_journal_get_timeout asks for polling) is not known here. */
	bool woken = (r->in.watch_added || r->in.n == r->in.nsyslog) && !r->in.njournal;
	if (idle_turns > IDLE_TURNS && !assembling)
		ms = woken ? until_due_ms(r, l) : IDLE_LONG_MS;
	floe_loop_run_once(r->loop, pending ? 0 : ms);
	/* Polled directories (no inotify, or over its limit) are looked at here too. */
	if (r->in.watch)
		take_watch_events(r);
}

/* One read pass over every input. *progress gets the bytes consumed. */
static int read_inputs(struct floe_runner *r, size_t *progress, bool quiet)
{
	*progress = 0;
	/* A full spool stops the sockets too: senders wait, the kernel counts datagrams. */
	for (size_t i = 0; i < r->in.n; i++)
		if (r->in.syslogs[i])
			floe_syslog_in_hold(r->in.syslogs[i], r->lake.blocked);
	if (r->lake.blocked)
		return 0;
	/* The journals' change notifications (the syslog sockets are the receiver's). */
	if (r->in.njournal)
		floe_loop_run_once(r->loop, 0);
	r->in.read_us = floe_run_wall_us(r);
	r->in.mono_us = floe_run_mono_us(r);
	for (size_t i = 0; i < r->in.n; i++) {
		size_t got = 0;
		r->b.line_refused = false;
		r->in.cur = i;
		if (quiet && r->in.tails[i])
			continue;
		int rc;
		if (r->in.syslogs[i])
			rc = floe_syslog_in_read(r->in.syslogs[i], READ_BUDGET, floe_runner_on_message,
						 r, &got);
		else if (r->in.journals[i])
			rc = floe_journal_in_read(r->in.journals[i], READ_BUDGET,
						  floe_runner_on_journal, r, &got);
		else
			rc = floe_tail_read(r->in.tails[i], READ_BUDGET, floe_runner_on_line, r, &got);
		*progress += got;
		/* The batch's files must fit on state_dir's file system: a seal comes before
		 * they could fill it, so a backlog larger than the disk goes in smaller
		 * entries, and a full disk makes the inputs wait (enforce_spool_limit). */
		r->b.unsealed_bytes += got;
		if (rc >= 0 && r->b.unsealed_bytes >= r->b.room && floe_batch_rows(r->b.batch) > 0 &&
		    !r->b.seal_needed) {
			r->b.seal_needed = true;
			r->b.seal_why = "state_dir's free space";
		}
		/* Files seen for the first time wait for their position to be durable. */
		if (rc >= 0 && r->in.tails[i] && floe_tail_unsaved(r->in.tails[i])) {
			int src = floe_runner_save_new_positions(r, false);
			if (src)
				return src;
			*progress += 1; /* they are read next */
		}
		if (rc < 0 && !r->b.line_refused) {
			/* A failure of the batch is one of writing into the spool (a full or
			 * read-only state_dir), not of reading the input. */
			if (r->b.add_error)
				floe_error(
				    "runner: writing input %s's lines into the spool (%s/spool) "
				    "failed: %s",
				    r->set.cfg->inputs[i].name, r->set.state_dir, floe_strerror(r->b.add_error));
			else
				floe_error("runner: reading input %s: %s", r->set.cfg->inputs[i].name,
					   floe_strerror(rc));
			return r->b.add_error ? r->b.add_error : rc;
		}
		if (r->b.seal_needed || r->b.ndefer) {
			if ((rc = settle(r)))
				return rc;
			*progress += 1; /* there is more to read */
		}
	}
	return 0;
}

/* Everything syslog input i has, into the batch (sealing as needed): with hold, its
 * receiver is held first, and what it had read by the time it answered goes in too (at
 * the end of --once, at a stop, so that nothing a sender's connection delivered stays
 * behind in floe's memory). Bounded: a receiver that does not answer within 2 s is
 * logged and left. */
static int drain_syslog(struct floe_runner *r, size_t i, bool hold)
{
	struct floe_syslog_in *in = r->in.syslogs[i];
	if (hold)
		floe_syslog_in_hold(in, true);
	int64_t until = floe_run_mono_us(r) + 2000000;
	int rc = 0;
	for (;;) {
		/* Held first, then empty: what came before the hold is in the queue by then. */
		bool held = !hold || floe_syslog_in_held(in);
		if (floe_syslog_in_pending(in)) {
			size_t got = 0;
			r->b.line_refused = false;
			r->in.cur = i;
			rc = floe_syslog_in_read(in, READ_BUDGET, floe_runner_on_message, r, &got);
			if (rc < 0 && !r->b.line_refused)
				break;
			if ((rc = settle(r)))
				break;
			continue;
		}
		if (held)
			break;
		if (floe_run_mono_us(r) > until) {
			floe_warn("runner: input %s: the syslog receiver did not stop reading within "
				  "2 s",
				  r->set.cfg->inputs[i].name);
			break;
		}
		floe_loop_run_once(r->loop, 1);
	}
	return rc;
}

/* At a stop: the syslog inputs' messages go in while their senders' bytes still arrive
 * (what the sockets held at the signal), until nothing new came for 50 ms, at most 1 s. */
static int quiesce_syslog(struct floe_runner *r)
{
	int64_t until = floe_run_mono_us(r) + 1000000;
	uint64_t last = UINT64_MAX;
	int rc = 0;
	while (rc == 0 && floe_run_mono_us(r) < until) {
		uint64_t seen = 0;
		for (size_t i = 0; i < r->in.n; i++)
			if (r->in.syslogs[i])
				seen += floe_syslog_in_received(r->in.syslogs[i]);
		if (seen == last)
			break;
		last = seen;
		for (size_t i = 0; i < r->in.n && rc == 0; i++)
			if (r->in.syslogs[i])
				rc = drain_syslog(r, i, false);
		floe_loop_run_once(r->loop, 50);
	}
	return rc;
}

/* --once at the end of input: each tail's partial last line, then what the assemblers
 * still hold (the input is over). */
static int flush_inputs(struct floe_runner *r)
{
	int rc = 0;
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		r->in.cur = i;
		r->in.read_us = floe_run_wall_us(r);
		r->in.mono_us = floe_run_mono_us(r);
		for (;;) {
			r->b.line_refused = false;
			if (r->in.syslogs[i]) {
				rc = drain_syslog(r, i, true);
				break;
			}
			if (!r->in.tails[i])
				break; /* a journal holds nothing back */
			rc = floe_tail_flush_partial(r->in.tails[i], floe_runner_on_line, r);
			if (rc < 0 && !r->b.line_refused)
				break;
			if (rc == 0 && !r->b.seal_needed && !r->b.ndefer)
				break;
			/* The batch was full, or asked for a seal: seal, go on. */
			if ((rc = settle(r)))
				break;
		}
	}
	if (rc == 0)
		rc = poll_assemblers(r, true);
	return rc;
}

/* `run --once` that read no line says why, input by input, from what the tails know. */
static void explain_nothing_read(const struct floe_runner *r)
{
	for (size_t i = 0; i < r->in.n; i++) {
		if (!r->in.tails[i])
			continue;
		struct floe_tail_stats st;
		floe_tail_get_stats(r->in.tails[i], &st);
		uint64_t followed = st.files_open + st.files_parked;
		char why[512];
		int n = snprintf(why, sizeof(why), "%" PRIu64 " files followed", followed);
		if (st.started_at_end && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(
			    why + n, sizeof(why) - (size_t)n,
			    ", %" PRIu64 " of them started at their end (start_at: end; "
			    "start_at: beginning reads files seen for the first time whole)",
			    st.started_at_end);
		else if (followed && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n,
				      ", all read up to their end by an earlier run");
		if (st.patterns_unmatched && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n,
				      ", %" PRIu64 " patterns matching no file",
				      st.patterns_unmatched);
		if (st.files_unreadable && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n,
				      ", %" PRIu64 " files unreadable", st.files_unreadable);
		if (st.files_skipped && n > 0 && (size_t)n < sizeof(why))
			(void)!snprintf(why + n, sizeof(why) - (size_t)n,
					", %" PRIu64
					" files skipped (links or the agent's own files)",
					st.files_skipped);
		floe_info("runner: input %s read no line: %s", r->set.cfg->inputs[i].name, why);
	}
}

/* A stop whose commit failed: says what waits in the spool. */
static void stopped_uncommitted(struct floe_runner *r, int rc)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	if (floe_spool_list(r->lake.spool, &seqs, &n) == 0)
		floe_free(&r->alloc, seqs);
	floe_warn("runner: stopping without the last commit (%s): the spool holds %zu entries "
		  "(%" PRIu64 " bytes) that the next start commits",
		  floe_strerror(rc), n, floe_spool_bytes(r->lake.spool));
}

/* Seals the batch before a damaged entry is read again into it, then rebuilds the entry
 * (or counts it lost). */
static int rebuild(struct floe_runner *r, uint64_t seq)
{
	char why[64];
	snprintf(why, sizeof(why), "rebuilding damaged spool entry %" PRIu64, seq);
	int rc = seal(r, why);
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
		if ((rc = floe_runner_commit_start(r)))
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
			return floe_runner_commit_start(r);
	}
	if (rc && floe_runner_fatal(rc)) {
		*done = true;
		return rc;
	}
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
		return 0; /* the spool keeps what failed; a later commit retries */
	}
	l->commit_backoff_us = 0;
	l->backoff_ceil_us = 0;
	/* Entries sealed while this commit was in flight go next, at once: a slow store
	 * makes commits larger, not later. */
	if (r->b.next_seq - 1 > floe_output_lease(r->lake.out))
		return floe_runner_commit_start(r);
	return 0;
}

/* Before the loop: every input scanned, the first batch's start positions, and what an
 * earlier run left in the spool handed to the committer (with --once, committed before
 * anything is read, as a run that must commit what it reads would). */
static int start(struct floe_runner *r, bool once)
{
	int rc;
	for (size_t i = 0; i < r->in.n; i++) {
		if (r->in.tails[i] && (rc = floe_tail_scan(r->in.tails[i]))) {
			floe_error("runner: scanning input %s: %s", r->set.cfg->inputs[i].name,
				   floe_strerror(rc));
			return rc;
		}
	}
	/* The first batch starts at the positions the scans settled on. */
	struct floe_buf pos;
	floe_buf_init(&pos, &r->alloc, POSITIONS_MAX);
	if (floe_runner_collect_positions(r, &pos) == 0)
		set_from(r, pos.data, pos.len);
	floe_buf_fini(&pos);
	/* And they are durable before anything is read: a file seen first starts at its end
	 * (start_at: end) once, not at every start. */
	if ((rc = floe_runner_save_new_positions(r, true)))
		return rc;
	/* Entries left by an earlier run go in first. */
	uint64_t *seqs = NULL;
	size_t n = 0;
	if ((rc = floe_spool_list(r->lake.spool, &seqs, &n)))
		return rc;
	floe_free(&r->alloc, seqs);
	if (n == 0)
		return 0;
	return once ? commit_now(r) : floe_runner_commit_start(r);
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
	/* What the sockets hold at the stop is read first (senders saw it written). */
	int rc = r->in.nsyslog ? quiesce_syslog(r) : 0;
	for (size_t i = 0; i < r->in.n && rc == 0; i++)
		if (r->in.syslogs[i]) {
			r->in.cur = i;
			rc = drain_syslog(r, i, true);
		}
	/* Then the connections close as their senders' closes would: a frame half sent
	 * is kept (counted at_close), not left in a framer that dies with the process. */
	if (rc == 0 && r->in.nsyslog) {
		floe_syslog_rx_stop(r->in.rx);
		for (size_t i = 0; i < r->in.n && rc == 0; i++)
			if (r->in.syslogs[i]) {
				floe_syslog_in_close(r->in.syslogs[i]);
				r->in.cur = i;
				rc = drain_syslog(r, i, false);
			}
	}
	if (rc == 0)
		rc = seal(r, l->once ? "end of input" : "stopping");
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
	int rc = seal(r, "commit_interval");
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
	if ((rc = floe_runner_commit_start(r)))
		*done = true;
	return rc;
}

/* SIGHUP: TLS certificates again, and a new configuration if the caller accepts one
 * (then the run ends as at a stop, for the caller to start again on it). */
static void hangup(struct floe_runner *r, bool *stop)
{
	for (size_t i = 0; i < r->in.n; i++)
		if (r->in.syslogs[i])
			floe_syslog_in_reload(r->in.syslogs[i]);
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
 * then makes no system call per file and turn. A turn that rescans reads them all too,
 * so that the two periodic passes share one wake-up. */
static bool quiet_turn(struct floe_runner *r, struct loop *l)
{
	int64_t now = floe_run_mono_us(r);
	bool quiet = r->in.watch_added && l->idle_turns > IDLE_TURNS && !r->in.watch_fired &&
		     now - l->last_full_read < (int64_t)QUIET_FULL_MS * 1000 &&
		     now - l->last_scan < rescan_us(r, l);
	if (!quiet) {
		l->last_full_read = now;
		r->in.watch_fired = false;
	}
	return quiet;
}

/* One turn of the loop: the committer's report, read, time out, maybe flush (--once),
 * maybe seal and commit, maybe rescan, maybe wait. *done: the loop ends. */
static int turn(struct floe_runner *r, struct loop *l, bool *done)
{
	int rc = check_commit(r, l, false, done);
	if (rc || *done)
		return rc;
	rc = while_blocked(r, l, floe_run_mono_us(r));
	size_t progress = 0;
	if (rc == 0)
		rc = read_inputs(r, &progress, quiet_turn(r, l));
	if (rc == 0)
		rc = poll_assemblers(r, false);
	if (rc) {
		*done = true;
		return rc;
	}
	bool stop = floe_run_stopping(r);
	if (floe_signal_take_hangup())
		hangup(r, &stop);
	if (l->once && progress == 0 && !r->lake.blocked) {
		if ((rc = flush_inputs(r)) < 0) {
			*done = true;
			return rc;
		}
		stop = true;
	}
	int64_t now = floe_run_mono_us(r);
	if ((rc = commit_due(r, l, stop, now, done)) || *done)
		return rc;
	if (!l->once && now - l->last_scan >= rescan_us(r, l)) {
		for (size_t i = 0; i < r->in.n; i++)
			if (r->in.tails[i])
				floe_tail_scan(r->in.tails[i]);
		l->last_scan = now;
	}
	floe_runner_status_publish(r, false);
	if (progress == 0 && !l->once) {
		if (!r->in.watch && !r->in.nsyslog && !r->in.njournal &&
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

/* The end of a run: what the syslog inputs received and the last read could not take
 * (a failed last seal, a full spool) dies with the process. Counted in the metrics
 * written next, and logged. */
static void abandon_syslog(struct floe_runner *r)
{
	if (!r->in.nsyslog)
		return;
	floe_syslog_rx_stop(r->in.rx);
	for (size_t i = 0; i < r->in.n; i++) {
		if (!r->in.syslogs[i])
			continue;
		floe_syslog_in_close(r->in.syslogs[i]);
		uint64_t n = floe_syslog_in_abandon(r->in.syslogs[i]);
		if (n)
			floe_warn("runner: input %zu: %" PRIu64 " syslog messages received and not "
				  "committed are lost at the stop (lost_at_stop)",
				  i + 1, n);
	}
}

int floe_runner_run(struct floe_runner *r, bool once)
{
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
		explain_nothing_read(r);
	abandon_syslog(r);
	floe_runner_write_metrics(r);
	if (rc)
		floe_batch_abort(r->b.batch);
	return rc;
}
