/* The run loop's input side: read passes over the inputs (whatever their types, through
 * agent/input/input.h), the assemblers' timeouts, the end of input (--once), the inputs'
 * last reads at a stop, and what the idle wait needs to know of them. Main thread. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "platform/log.h"
#include "platform/loop.h"
#include "platform/owner.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int floe_runner_poll_assemblers(struct floe_runner *r, bool end)
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
				int src = floe_runner_settle(r);
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

void floe_runner_take_watch_events(struct floe_runner *r)
{
	if (floe_input_shared_take_events(r->in.shared, r->in.all, r->in.n))
		r->in.watch_fired = true;
}

bool floe_runner_inputs_unmatched(const struct floe_runner *r)
{
	for (size_t i = 0; i < r->in.n; i++)
		if (floe_input_unmatched(r->in.all[i]))
			return true;
	return false;
}

void floe_runner_inputs_wake(struct floe_runner *r, bool arm, struct run_wake *w)
{
	memset(w, 0, sizeof(*w));
	w->all_wake = true;
	for (size_t i = 0; i < r->in.n; i++) {
		struct floe_input_wake k;
		floe_input_wake_info(r->in.all[i], &k);
		w->on_loop = w->on_loop || k.on_loop;
		w->drain_loop = w->drain_loop || k.drain_loop;
		w->all_wake = w->all_wake && k.wakes;
		if (k.nap_ms > w->nap_ms)
			w->nap_ms = k.nap_ms;
		w->assembling = w->assembling || r->in.asm_[i];
		if (arm && floe_input_arm_wake(r->in.all[i]))
			w->pending = true;
	}
}

int floe_runner_scan_inputs(struct floe_runner *r, bool report)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	for (size_t i = 0; i < r->in.n; i++) {
		int rc = floe_input_scan(r->in.all[i]);
		if (rc && report) {
			floe_error("runner: scanning input %s: %s", r->set.cfg->inputs[i].name,
				   floe_strerror(rc));
			return rc;
		}
	}
	return 0;
}

void floe_runner_reload_inputs(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	for (size_t i = 0; i < r->in.n; i++)
		floe_input_reload(r->in.all[i]);
}

/* After input i's read that ended with rc: a seal before the batch's files could fill
 * state_dir, new sources' positions made durable, a failure logged, a seal asked for
 * done. Returns 0 or the error that ends the pass. */
static int after_read(struct floe_runner *r, size_t i, int rc, size_t got, size_t *progress)
{
	*progress += got;
	/* The batch's files must fit on state_dir's file system: a seal comes before they
	 * could fill it, so a backlog larger than the disk goes in smaller entries, and a
	 * full disk makes the inputs wait (enforce_spool_limit). */
	r->b.unsealed_bytes += got;
	if (rc >= 0 && r->b.unsealed_bytes >= r->b.room && floe_runner_rows(r) > 0 &&
	    !r->b.seal_needed) {
		r->b.seal_needed = true;
		r->b.seal_why = "state_dir's free space";
	}
	/* Sources seen for the first time wait for their position to be durable. */
	if (rc >= 0 && floe_input_unsaved(r->in.all[i])) {
		int src = floe_runner_save_new_positions(r, false);
		if (src)
			return src;
		*progress += 1; /* they are read next */
	}
	if (rc < 0 && !r->b.line_refused) {
		/* A failure of the batch is one of writing into the spool (a full or read-only
		 * state_dir), not of reading the input. */
		if (r->b.add_error)
			floe_error("runner: writing input %s's lines into the spool (%s/spool) "
				   "failed: %s",
				   r->set.cfg->inputs[i].name, r->set.state_dir,
				   floe_strerror(r->b.add_error));
		else
			floe_error("runner: reading input %s: %s", r->set.cfg->inputs[i].name,
				   floe_strerror(rc));
		return r->b.add_error ? r->b.add_error : rc;
	}
	if (r->b.seal_needed || r->b.ndefer) {
		if ((rc = floe_runner_settle(r)))
			return rc;
		*progress += 1; /* there is more to read */
	}
	return 0;
}

int floe_runner_read_inputs(struct floe_runner *r, size_t *progress, bool quiet)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	*progress = 0;
	/* A full spool stops the sockets too: senders wait, the kernel counts datagrams. */
	for (size_t i = 0; i < r->in.n; i++)
		floe_input_hold(r->in.all[i], r->lake.blocked);
	if (r->lake.blocked)
		return 0;
	/* The events of inputs whose descriptors are on the loop (the journal's). */
	struct run_wake w;
	floe_runner_inputs_wake(r, false, &w);
	if (w.drain_loop)
		floe_loop_run_once(r->loop, 0);
	r->in.read_us = floe_run_wall_us(r);
	r->in.mono_us = floe_run_mono_us(r);
	for (size_t i = 0; i < r->in.n; i++) {
		size_t got = 0;
		r->b.line_refused = false;
		r->in.cur = i;
		if (quiet && floe_input_quiet_skippable(r->in.all[i]))
			continue;
		int rc = floe_input_read(r->in.all[i], READ_BUDGET, &r->in.sink, &got);
		if ((rc = after_read(r, i, rc, got, progress)))
			return rc;
	}
	return 0;
}

/* Everything input i took in on its thread, into the batch (sealing as needed): with
 * hold, the input is held first, and what it had taken in by the time it answered goes
 * in too (at the end of --once, at a stop, so that nothing a sender's connection
 * delivered stays behind in floe's memory). Bounded: an input that does not answer
 * within 2 s is logged and left. Nothing for an input without a thread. */
static int drain_input(struct floe_runner *r, size_t i, bool hold)
{
	struct floe_input *in = r->in.all[i];
	if (!floe_input_takes_in(in))
		return 0;
	if (hold)
		floe_input_hold(in, true);
	int64_t until = floe_run_mono_us(r) + 2000000;
	int rc = 0;
	for (;;) {
		/* Held first, then empty: what came before the hold is in the queue by then. */
		bool held = !hold || floe_input_held(in);
		if (floe_input_pending(in)) {
			size_t got = 0;
			r->b.line_refused = false;
			r->in.cur = i;
			rc = floe_input_read(in, READ_BUDGET, &r->in.sink, &got);
			if (rc < 0 && !r->b.line_refused)
				break;
			if ((rc = floe_runner_settle(r)))
				break;
			continue;
		}
		if (held)
			break;
		if (floe_run_mono_us(r) > until) {
			floe_warn("runner: input %s: the %s receiver did not stop reading within "
				  "2 s",
				  r->set.cfg->inputs[i].name, floe_input_kind(in));
			break;
		}
		floe_loop_run_once(r->loop, 1);
	}
	return rc;
}

/* At a stop: what the inputs with a thread take in goes in while their senders' bytes
 * still arrive (what the sockets held at the signal), until nothing new came for 50 ms,
 * at most 1 s. */
static int quiesce(struct floe_runner *r)
{
	int64_t until = floe_run_mono_us(r) + 1000000;
	uint64_t last = UINT64_MAX;
	int rc = 0;
	while (rc == 0 && floe_run_mono_us(r) < until) {
		uint64_t seen = 0;
		for (size_t i = 0; i < r->in.n; i++)
			seen += floe_input_received(r->in.all[i]);
		if (seen == last)
			break;
		last = seen;
		for (size_t i = 0; i < r->in.n && rc == 0; i++)
			rc = drain_input(r, i, false);
		floe_loop_run_once(r->loop, 50);
	}
	return rc;
}

static bool any_takes_in(const struct floe_runner *r)
{
	for (size_t i = 0; i < r->in.n; i++)
		if (floe_input_takes_in(r->in.all[i]))
			return true;
	return false;
}

int floe_runner_drain_inputs(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (!any_takes_in(r))
		return 0;
	/* What the sockets hold at the stop is read first (senders saw it written). */
	int rc = quiesce(r);
	for (size_t i = 0; i < r->in.n && rc == 0; i++)
		rc = drain_input(r, i, true);
	/* Then the connections close as their senders' closes would: a frame half sent is
	 * kept (counted at_close), not left in a framer that dies with the process. */
	if (rc == 0) {
		floe_input_shared_stop(r->in.shared);
		for (size_t i = 0; i < r->in.n && rc == 0; i++) {
			floe_input_close(r->in.all[i]);
			rc = drain_input(r, i, false);
		}
	}
	return rc;
}

int floe_runner_flush_inputs(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	int rc = 0;
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		r->in.cur = i;
		r->in.read_us = floe_run_wall_us(r);
		r->in.mono_us = floe_run_mono_us(r);
		if ((rc = drain_input(r, i, true)))
			break;
		for (;;) {
			r->b.line_refused = false;
			rc = floe_input_flush(r->in.all[i], &r->in.sink);
			if (rc < 0 && !r->b.line_refused)
				break;
			if (rc == 0 && !r->b.seal_needed && !r->b.ndefer)
				break;
			/* The batch was full, or asked for a seal: seal, go on. */
			if ((rc = floe_runner_settle(r)))
				break;
		}
	}
	if (rc == 0)
		rc = floe_runner_poll_assemblers(r, true);
	return rc;
}

void floe_runner_explain_nothing_read(const struct floe_runner *r)
{
	for (size_t i = 0; i < r->in.n; i++) {
		char why[512];
		if (floe_input_explain_idle(r->in.all[i], why, sizeof(why)))
			floe_info("runner: input %s read no line: %s", r->set.cfg->inputs[i].name,
				  why);
	}
}

void floe_runner_abandon_inputs(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (!any_takes_in(r))
		return;
	floe_input_shared_stop(r->in.shared);
	for (size_t i = 0; i < r->in.n; i++) {
		floe_input_close(r->in.all[i]);
		uint64_t n = floe_input_abandon(r->in.all[i]);
		if (n)
			floe_warn("runner: input %zu: %" PRIu64 " %s messages received and not "
				  "committed are lost at the stop (lost_at_stop)",
				  i + 1, n, floe_input_kind(r->in.all[i]));
	}
}
