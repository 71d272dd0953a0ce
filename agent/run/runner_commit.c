/* The committer thread: spool entries lent by the main thread go into the table (upload,
 * manifest, metadata) and leave the spool. It runs as a task on the runner's one-thread
 * worker, one commit per task, and touches only what commits need: the table (and its
 * store), its own handle on the spool, the shared budget and the report. Everything the
 * main thread owns (the batch, the inputs, the checkpoint, the counters) stays there:
 * the report tells the main thread what happened. The aggregate tables' entries lent
 * with the commit go after the logs table's (runner_agg.c). */
#include "agent/run/runner_impl.h"

#include "agent/lake/spool.h"
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
	struct floe_spool *sp; /* the committer's handle */
	struct floe_alloc *a;  /* the runner's (shared, atomic) */
	struct commit_report *rep;
	struct floe_err terr; /* why the table refused, for the log */
};

static uint64_t rows_of(const struct floe_spool_entry *e)
{
	uint64_t rows = 0;
	for (size_t f = 0; f < e->nfiles; f++)
		rows += (uint64_t)e->files[f].records;
	return rows;
}

/* The lent entries: those up to the lease, ascending (the spool also holds entries
 * sealed since, which are the main thread's). *seqs is from c->a. */
static int lent(struct commit *c, uint64_t **seqs, size_t *n)
{
	int rc = floe_spool_list(c->sp, seqs, n);
	size_t keep = 0;
	for (size_t i = 0; rc == 0 && i < *n; i++)
		if ((*seqs)[i] <= c->r->com.lease)
			(*seqs)[keep++] = (*seqs)[i];
	if (rc == 0)
		*n = keep;
	return rc;
}

/* An earlier commit whose outcome was unknown (the store went away before floe could
 * read back the metadata it wrote) may have landed: entries the table holds go, so that
 * they are never committed twice along with newer ones. Compacts seqs[0..*n) to the
 * rest. */
static int drop_landed(struct commit *c, uint64_t *seqs, size_t *n)
{
	struct floe_runner *r = c->r;
	int rc = floe_table_refresh(r->lake.table, &c->terr);
	if (rc)
		return rc;
	int64_t committed = floe_table_committed_seq(r->lake.table, r->ck.id.installation);
	size_t keep = 0;
	for (size_t i = 0; i < *n && rc == 0; i++) {
		if (committed < 0 || seqs[i] > (uint64_t)committed) {
			seqs[keep++] = seqs[i];
			continue;
		}
		struct floe_spool_entry *e = NULL;
		if ((rc = floe_spool_load(c->sp, seqs[i], &e)) == 0) {
			floe_info("runner: spool entry %" PRIu64 " is already in the table", seqs[i]);
			c->rep->rows_committed += rows_of(e);
			rc = floe_spool_remove(c->sp, e);
			floe_spool_entry_free(c->a, e);
		} else if (rc == FLOE_ECORRUPT) {
			rc = floe_spool_quarantine(c->sp, seqs[i]);
		}
	}
	*n = keep;
	return rc;
}

/* Loads entry seq and checks its data files against it, immediately before they leave
 * the spool (for every store: the table copies or uploads them next). Returns 0 (*out
 * loaded and checked), FLOE_ECORRUPT for an entry file that fails its own checksum
 * (quarantined: skip it), 1 for data files that fail their check (the main thread
 * rebuilds the entry: stop before it), or an error (the entry stays for a later try). */
static int load_checked(struct commit *c, uint64_t seq, struct floe_spool_entry **out)
{
	struct floe_spool_entry *e = NULL;
	int rc = floe_spool_load(c->sp, seq, &e);
	if (rc == 0 && (rc = floe_spool_verify(c->sp, e, NULL)) == FLOE_ECORRUPT) {
		c->rep->spool_damaged++;
		c->rep->damaged = seq;
		rc = 1;
	} else if (rc == FLOE_ECORRUPT) {
		int q = floe_spool_quarantine(c->sp, seq);
		if (q)
			floe_error("runner: moving spool entry %" PRIu64 " to quarantine: %s", seq,
				   floe_strerror(q));
	}
	if (rc) {
		floe_spool_entry_free(c->a, e);
		return rc;
	}
	*out = e;
	return 0;
}

/* Commits es[0..n) as one snapshot and removes them from the spool. */
static int commit_some(struct commit *c, struct floe_spool_entry **es, size_t n)
{
	int rc = floe_table_commit(c->r->lake.table, c->sp, es, n, &c->terr);
	if (rc)
		return rc;
	floe_crashpoint("commit-before-spool-remove");
	for (size_t i = 0; i < n; i++) {
		c->rep->rows_committed += rows_of(es[i]);
		c->rep->replaced_utf8 += es[i]->replaced_utf8;
		int rm = floe_spool_remove(c->sp, es[i]);
		if (rm)
			floe_warn("runner: removing committed spool entry %" PRIu64 ": %s", es[i]->seq,
				  floe_strerror(rm));
	}
	c->rep->commits++;
	return 0;
}

/* Commits seqs[0..n) in order, at most COMMIT_MAX_ENTRIES per snapshot, up to a
 * damaged entry. */
static int commit_all(struct commit *c, const uint64_t *seqs, size_t n)
{
	size_t done = 0;
	int rc = 0;
	while (done < n && rc == 0 && !c->rep->damaged) {
		size_t k = n - done < COMMIT_MAX_ENTRIES ? n - done : COMMIT_MAX_ENTRIES;
		struct floe_spool_entry **es = floe_calloc(c->a, k, sizeof(*es));
		if (!es)
			return FLOE_ENOMEM;
		size_t loaded = 0, skipped = 0;
		/* Tests damage a sealed file here, between seal and upload. */
		floe_crashpoint("commit-before-upload");
		for (; loaded < k; loaded++) {
			rc = load_checked(c, seqs[done + loaded], &es[loaded]);
			if (rc == FLOE_ECORRUPT)
				skipped = 1; /* quarantined: handled */
			if (rc)
				break;
		}
		if (rc == FLOE_ECORRUPT || rc == 1)
			rc = 0;
		if (rc == 0 && loaded > 0)
			rc = commit_some(c, es, loaded);
		for (size_t i = 0; i < loaded; i++)
			floe_spool_entry_free(c->a, es[i]);
		floe_free(c->a, es);
		done += loaded + skipped;
	}
	return rc;
}

/* Logs the commit's result. A store that is away or refuses for now is logged when that
 * starts, changes and ends, not at every retry of the wait: a device offline for a week
 * would otherwise fill its log with one line per attempt. */
static void log_result(struct commit *c, int rc)
{
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
	else if (rc && !waited)
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
	struct commit_report *rep = c->rep;
	const char *why = floe_err_text(&c->terr, rc), *last = store_last_error(c->r->lake.store);
	if (last[0] && !strstr(why, last))
		snprintf(rep->store_error, sizeof(rep->store_error), "%.250s (%.250s)", why, last);
	else
		snprintf(rep->store_error, sizeof(rep->store_error), "%s", why);
	rep->store_down = floe_warehouse_waited_out(rc);
}

void floe_committer_task(void *arg)
{
	/* The lent entries, the table and its store, the report: the committer's until
	 * com.done (agent/README.md, "Threads"). */
	unsigned prev = floe_owner_enter(FLOE_ROLE_COMMITTER);
	struct floe_runner *r = arg;
	struct commit c = {r, r->com.spool, &r->alloc, &r->com.rep, {0}};
	int64_t t0 = floe_run_mono_us(r);
	memset(c.rep, 0, sizeof(*c.rep));
	c.rep->committed_seq = -1;
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = 0;
	/* The store was away at the start: the table is opened (or created) at the first
	 * contact, before anything is committed. */
	if (!r->lake.table)
		rc = floe_runner_open_table(r, true, &c.terr);
	if (rc == 0)
		rc = lent(&c, &seqs, &n);
	if (rc == 0 && n > 0)
		rc = drop_landed(&c, seqs, &n);
	if (rc == 0)
		rc = commit_all(&c, seqs, n);
	floe_free(c.a, seqs);
	if (rc)
		set_store_error(&c, rc);
	log_result(&c, rc);
	c.rep->rc = rc;
	/* The aggregate tables' entries, lent with the same lease: after the logs table's,
	 * unless that was refused for good (another installation, a table gone back). */
	if (!floe_runner_fatal(rc) && r->lake.table)
		c.rep->agg_rc = floe_run_aggs_commit_lent(r);
	if (r->lake.table) {
		c.rep->committed_seq = floe_table_committed_seq(r->lake.table, r->ck.id.installation);
		c.rep->committed_version = floe_table_version(r->lake.table);
		const char *u = floe_ice_meta_uuid(floe_table_meta(r->lake.table));
		snprintf(c.rep->table_uuid, sizeof(c.rep->table_uuid), "%s", u ? u : "");
		floe_table_commit_counts(r->lake.table, &c.rep->attempts, &c.rep->conflicts);
	}
	c.rep->duration_us = floe_run_mono_us(r) - t0;
	__atomic_store_n(&r->com.done, 1, __ATOMIC_RELEASE);
	floe_loop_wake(r->com.wake);
	floe_owner_leave(prev);
}
