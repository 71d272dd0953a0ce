/* The main thread's side of commits: lending sealed entries to the committer thread
 * (runner_commit.c), taking its reports back, rebuilding the entries it found damaged,
 * the spool limit and its policies, and the metrics file. The main thread never waits on
 * the committer here unless asked to (the start and end of --once, a stop). */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/decode.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/worker.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* What counts against spool.max_bytes: the raw spool and the aggregations' spools. */
static uint64_t spool_bytes(const struct floe_runner *r)
{
	return floe_spool_bytes(r->lake.spool) + floe_run_aggs_spool_bytes(r);
}

/* Writes state_dir/metrics.json: the counters an operator (or a test) reads to see what
 * the agent did, including every drop (the same table as /metrics). Replaced atomically;
 * a failure is only logged. */
void floe_runner_write_metrics(struct floe_runner *r)
{
	struct floe_buf b;
	floe_buf_init(&b, &r->alloc, (16u << 10) + r->in.n * 1536u);
	int rc = floe_run_counters_render(r, false, &b);
	if (rc == 0)
		rc = floe_fs_write_atomic(r->set.metrics_path, b.data, b.len);
	if (rc)
		floe_warn("runner: writing %s failed: %s", r->set.metrics_path, floe_strerror(rc));
	floe_buf_fini(&b);
}

/* Drops entry seq (policy drop_oldest), counting its rows. */
static int drop_entry(struct floe_runner *r, uint64_t seq)
{
	struct floe_spool_entry *e = NULL;
	int rc = floe_spool_load(r->lake.spool, seq, &e);
	if (rc == FLOE_ECORRUPT)
		return floe_spool_quarantine(r->lake.spool, seq);
	if (rc)
		return rc;
	uint64_t rows = 0, bytes = 0;
	for (size_t f = 0; f < e->nfiles; f++) {
		rows += (uint64_t)e->files[f].records;
		bytes += (uint64_t)e->files[f].size;
	}
	if ((rc = floe_spool_remove(r->lake.spool, e)) == 0) {
		r->stats.dropped_entries++;
		r->stats.dropped_rows += rows;
		r->stats.dropped_bytes += bytes;
		floe_warn("runner: spool over its limit: dropped entry %" PRIu64 " (%" PRIu64
			  " rows, %" PRIu64 " bytes; policy drop_oldest)", e->seq, rows, bytes);
	}
	floe_spool_entry_free(&r->alloc, e);
	return rc;
}

/* Applies the spool limit after a seal: drop_oldest removes the oldest entries (never
 * the one just sealed, nor those lent to a commit in flight), raw ones first, until the
 * spools fit, counting every row; block makes the inputs wait until commits make room.
 * A full file system under state_dir makes them wait too, whatever the policy: dropping
 * sealed entries would lose rows that a commit can still save. */
int floe_runner_enforce_spool_limit(struct floe_runner *r)
{
	bool was_low = r->lake.disk_low;
	if (floe_runner_update_room(r)) {
		if (!was_low)
			floe_warn("runner: the file system of state_dir %s has %" PRIu64
				  " bytes free: inputs wait for commits to make room",
				  r->set.state_dir, r->lake.disk_avail);
		r->lake.blocked = true;
		return 0;
	}
	if (was_low)
		floe_info("runner: the file system of state_dir has %" PRIu64
			  " bytes free again: inputs resume", r->lake.disk_avail);
	if (spool_bytes(r) <= r->set.spool_max) {
		r->lake.blocked = false;
		return 0;
	}
	if (!r->set.drop_oldest) {
		if (!r->lake.blocked)
			floe_warn("runner: spool holds %" PRIu64
				  " bytes, over its limit of %" PRIu64 ": inputs wait for commits",
				  spool_bytes(r), r->set.spool_max);
		r->lake.blocked = true;
		return 0;
	}
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = floe_spool_list(r->lake.spool, &seqs, &n);
	for (size_t i = 0;
	     rc == 0 && i + 1 < n && spool_bytes(r) > r->set.spool_max; i++) {
		if (r->com.task && seqs[i] <= r->com.lease)
			continue; /* the committer's until its report */
		rc = drop_entry(r, seqs[i]);
	}
	floe_free(&r->alloc, seqs);
	return rc ? rc : floe_run_aggs_drop_oldest(r);
}

int floe_runner_commit_start(struct floe_runner *r)
{
	if (r->com.task)
		return FLOE_EINVAL;
	r->com.lease = r->b.next_seq - 1;
	floe_run_aggs_lend(r);
	__atomic_store_n(&r->com.done, 0, __ATOMIC_RELAXED);
	int rc = floe_worker_submit(r->com.thread, floe_committer_task, r, &r->com.task);
	if (rc) {
		r->com.task = NULL;
		floe_error("runner: cannot hand a commit to the committer thread: %s",
			   floe_strerror(rc));
	}
	return rc;
}

bool floe_runner_committing(const struct floe_runner *r)
{
	return r->com.task != NULL;
}

/* Folds a report into the main thread's state. */
static void take(struct floe_runner *r, const struct commit_report *rep)
{
	r->stats.commits += rep->commits;
	r->stats.rows_committed += rep->rows_committed;
	r->stats.replaced_utf8 += rep->replaced_utf8;
	r->stats.spool_damaged += rep->spool_damaged;
	r->stats.spool_lost_entries += rep->agg_lost_entries;
	r->stats.spool_lost_rows += rep->agg_lost_rows;
	/* A commit that committed something, or failed, is one for the latency histogram. */
	if (rep->commits || rep->rc) {
		double s = (double)rep->duration_us / 1e6;
		size_t b = 0;
		while (b < COMMIT_BUCKETS && s > commit_bucket_s[b])
			b++;
		r->hist.count[b]++;
		r->hist.n++;
		r->hist.sum_s += s;
	}
	r->hist.attempts = rep->attempts;
	r->hist.conflicts = rep->conflicts;
	r->stats.quarantined = floe_spool_quarantined(r->lake.spool) + floe_run_aggs_quarantined(r);
	if (rep->rc || rep->agg_rc)
		r->stats.commit_failures++;
	r->lake.store_down = rep->store_down;
	snprintf(r->lake.store_error, sizeof(r->lake.store_error), "%s",
		 rep->store_down ? rep->store_error : "");
	if (rep->rc == 0 && rep->committed_seq >= 0)
		floe_runner_note_committed(r, rep->committed_seq, rep->committed_version,
					   rep->table_uuid);
	if (rep->rc == 0 && r->lake.blocked && r->lake.disk_low)
		(void)floe_runner_enforce_spool_limit(r);
	else if (rep->rc == 0 && r->lake.blocked && spool_bytes(r) <= r->set.spool_max) {
		floe_info("runner: spool below its limit again: inputs resume");
		r->lake.blocked = false;
	}
	floe_runner_write_metrics(r);
}

int floe_runner_commit_take(struct floe_runner *r, bool wait, int *rc, uint64_t *damaged)
{
	if (!r->com.task)
		return 0;
	if (!wait && !__atomic_load_n(&r->com.done, __ATOMIC_ACQUIRE))
		return 0;
	/* Returns at once once done is set (the task's last step), else waits for it. */
	floe_worker_wait(r->com.thread, r->com.task);
	r->com.task = NULL;
	take(r, &r->com.rep);
	/* A failed aggregate commit is retried like a failed one of the logs table. */
	*rc = r->com.rep.rc ? r->com.rep.rc : r->com.rep.agg_rc;
	*damaged = r->com.rep.damaged;
	return 1;
}

int floe_runner_rebuild(struct floe_runner *r, uint64_t seq)
{
	struct floe_spool_entry *e = NULL;
	int rc = floe_spool_load(r->lake.spool, seq, &e);
	if (rc == 0)
		rc = floe_runner_reread(r, e);
	if (rc == FLOE_ENOTFOUND) {
		uint64_t rows = 0;
		for (size_t f = 0; f < e->nfiles; f++)
			rows += (uint64_t)e->files[f].records;
		r->stats.spool_lost_entries++;
		r->stats.spool_lost_rows += rows;
		floe_error("runner: spool entry %" PRIu64 " is damaged and its input no longer holds its "
			   "bytes: %" PRIu64 " rows LOST (the damaged files go to quarantine)", seq, rows);
		rc = FLOE_ECORRUPT;
	}
	if (rc == FLOE_ECORRUPT) {
		int q = floe_spool_quarantine(r->lake.spool, seq);
		if (q)
			floe_error("runner: moving spool entry %" PRIu64 " to quarantine: %s", seq, floe_strerror(q));
		rc = 0;
	}
	if (rc)
		floe_error("runner: rebuilding damaged spool entry %" PRIu64 " failed: %s (tried again "
			   "at the next commit)", seq, floe_strerror(rc));
	floe_spool_entry_free(&r->alloc, e);
	r->stats.quarantined = floe_spool_quarantined(r->lake.spool);
	return rc;
}
