/* The committer thread: spool entries lent by the main thread go into their tables
 * (upload, manifest, metadata) and leave the spool. It runs as a task on the runner's
 * one-thread worker, one commit per task: one loop over the table outputs (the logs
 * table's first, then the aggregations'), each of which owns the whole protocol of its
 * table (agent/lake/output.h). It touches only what commits need: the outputs (their
 * tables, store and spool handles), the shared budget and the report. Everything the
 * main thread owns (the batch, the inputs, the checkpoint, the counters) stays there:
 * the report tells the main thread what happened. */
#include "agent/run/runner_impl.h"

#include "agent/lake/catalog_rest.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/loop.h"
#include "platform/owner.h"
#ifndef FLOE_NO_S3
#include "platform/s3/store_s3.h"
#endif

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct commit {
	struct floe_runner *r;
	struct commit_report *rep;
	struct floe_err terr; /* why the table refused, for the log */
};

/* Logs the commit's result. A store that is away or refuses for now is logged when that
 * starts, changes and ends, not at every retry of the wait: a device offline for a week
 * would otherwise fill its log with one line per attempt. */
static void log_result(struct commit *c, int rc)
{
	FLOE_OWNER(FLOE_ROLE_COMMITTER);
	int last = c->r->com.last_rc;
	c->r->com.last_rc = rc;
	bool waited = floe_warehouse_waited_out(rc);
	if (rc && floe_runner_fatal(rc))
		floe_error(
		    "runner: commit refused: %s; the spool keeps the data, and the agent stops",
		    c->rep->store_error);
	else if (waited && rc != last)
		floe_error("runner: the store is away or refuses: %s (the spool keeps the data; "
			   "retrying with backoff, logged again when this changes)",
			   c->rep->store_error);
	else if (rc && !waited && rc != FLOE_EBEHIND) /* the output said so */
		floe_error("runner: commit failed: %s (the spool keeps the data; retrying later)",
			   c->rep->store_error);
	else if (!rc && floe_warehouse_waited_out(last))
		floe_info("runner: the store answers again: the spool is being committed");
}

/* The S3 client's account of the store's last failed request ("" for a local one). */
static const char *store_last_error(const struct floe_store *st)
{
#ifdef FLOE_NO_S3
	(void)st;
	return "";
#else
	return floe_store_s3_last_error(st);
#endif
}

/* Why the commit failed, with the store's own account of its last failed request (the
 * URL and curl's reason, or the S3 error code) when the table's message lacks it. */
static void set_store_error(struct commit *c, int rc)
{
	FLOE_OWNER(FLOE_ROLE_COMMITTER);
	struct commit_report *rep = c->rep;
	const char *why = floe_err_text(&c->terr, rc), *last = store_last_error(c->r->lake.store);
	if (last[0] && !strstr(why, last))
		snprintf(rep->store_error, sizeof(rep->store_error), "%.250s (%.250s)", why, last);
	else
		snprintf(rep->store_error, sizeof(rep->store_error), "%s", why);
	rep->store_down = floe_warehouse_waited_out(rc);
}

/* The aggregate tables' outputs are committed after the logs table's, unless that was
 * refused for good (another installation, a table gone back) or the store is away (they
 * would only fail too, and log it at every retry). */
static bool go_on(int rc)
{
	return !rc || (!floe_runner_fatal(rc) && !floe_warehouse_waited_out(rc));
}

void floe_committer_task(void *arg)
{
	/* The lent entries, the table and its store, the report: the committer's until
	 * com.done (agent/README.md, "Threads"). */
	unsigned prev = floe_owner_enter(FLOE_ROLE_COMMITTER);
	struct floe_runner *r = arg;
	/* Each step below (a table's commit, a store operation, request bytes that move)
	 * beats, for the main thread's watch (runner_stall.c). */
	struct floe_beat *beat0 = floe_beat_attach(&r->com.beat);
	floe_beat_what("starting a commit");
	struct commit c = {r, &r->com.rep, {0}};
	int64_t t0 = floe_run_mono_us(r);
	uint64_t attempts0 = 0, conflicts0 = 0;
	if (floe_run_table(r))
		floe_table_commit_counts(floe_run_table(r), &attempts0, &conflicts0);
	memset(c.rep, 0, sizeof(*c.rep));
	c.rep->committed_seq = -1;
	int rc = 0;
	for (size_t i = 0; i < r->com.nouts && go_on(rc); i++) {
		struct floe_output *o = r->com.outs[i];
		struct floe_err e = {0};
		if (i < r->nraw)
			memset(&r->raw[i].rep, 0, sizeof(r->raw[i].rep));
		floe_beat_what(floe_output_what(o));
		int one = floe_output_commit(o, COMMIT_MAX_ENTRIES,
					     i < r->nraw ? &r->raw[i].rep : &c.rep->aggs,
					     i ? &e : &c.terr);
		/* Between two raw tables' commits: each table's record of its commits, and the
		 * entries left in its spool, must be all a restart needs. */
		if (i + 1 < r->nraw)
			floe_crashpoint("commit-between-tables");
		if (i == 0) {
			rc = one;
			if (rc)
				set_store_error(&c, rc);
			log_result(&c, rc);
		} else if (one) {
			/* A table behind its record: the output logged it, once. */
			if (one != FLOE_EBEHIND) {
				floe_error("runner: commit to %s failed: %s (its spool keeps the "
					   "rows; retrying later)",
					   floe_output_what(o), floe_err_text(&e, one));
				if (!c.rep->store_error[0])
					snprintf(c.rep->store_error, sizeof(c.rep->store_error),
						 "%s: %s", floe_output_what(o), floe_err_text(&e, one));
			}
			if (!c.rep->agg_rc || c.rep->agg_rc == FLOE_EBEHIND || floe_runner_fatal(one))
				c.rep->agg_rc = one;
		}
	}
	c.rep->rc = rc;
	c.rep->raw = r->raw[0].rep;
	c.rep->raw.rebuild = 0;
	for (size_t k = 0; k < r->nraw && !c.rep->raw.rebuild; k++)
		if (r->raw[k].rep.rebuild) {
			c.rep->raw.rebuild = r->raw[k].rep.rebuild;
			c.rep->rebuild_table = k;
		}
	struct floe_table *t = floe_run_table(r);
	if (t) {
		c.rep->committed_seq = floe_table_committed_seq(t, r->ck.id.installation);
		c.rep->committed_version = floe_table_version(t);
		c.rep->committed_snapseq = floe_ice_meta_last_sequence(floe_table_meta(t));
		const char *u = floe_ice_meta_uuid(floe_table_meta(t));
		snprintf(c.rep->table_uuid, sizeof(c.rep->table_uuid), "%s", u ? u : "");
		floe_table_commit_counts(t, &c.rep->attempts, &c.rep->conflicts);
	}
	c.rep->duration_us = floe_run_mono_us(r) - t0;
	if (rc || c.rep->agg_rc) {
		/* The store or the catalog said when to come back: the longer wait. */
		int64_t wait = floe_catalog_rest_retry_after_us(r->lake.catalog);
#ifndef FLOE_NO_S3
		int64_t s3 = floe_store_s3_retry_after_ms(r->lake.store) * 1000;
		wait = s3 > wait ? s3 : wait;
#endif
		c.rep->retry_after_us = wait;
	}
	/* One line per commit, with what it cost: a catalog or store that slows down, or
	 * writers that keep winning the race, show here before they show as failures. */
	uint64_t att = c.rep->attempts >= attempts0 ? c.rep->attempts - attempts0 : c.rep->attempts;
	uint64_t lost = c.rep->conflicts >= conflicts0 ? c.rep->conflicts - conflicts0 : c.rep->conflicts;
	if (c.rep->raw.commits || rc)
		floe_debug("runner: commit %s in %.3f s, %" PRIu64 " attempts (%" PRIu64 " lost to other writers)",
			   rc ? "failed" : "done", (double)c.rep->duration_us / 1e6, att, lost);
	floe_beat_what("reporting a commit");
	floe_beat_attach(beat0);
	__atomic_store_n(&r->com.done, 1, __ATOMIC_RELEASE);
	floe_loop_wake(r->com.wake);
	floe_owner_leave(prev);
}
