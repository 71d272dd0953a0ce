/* The main thread's side of commits: lending sealed entries to the committer thread
 * (runner_commit.c), taking its reports back, rebuilding the entries it found damaged,
 * the spool limit and its policies, and the metrics file. The main thread never waits on
 * the committer here unless asked to (the start and end of --once, a stop). */
#include "agent/run/runner_impl.h"
#include "agent/run/colplan.h"
#include "agent/run/counters.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/schema/columns.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/worker.h"
#include "platform/owner.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static uint64_t quarantined(const struct floe_runner *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->com.nouts; i++)
		n += floe_output_quarantined(r->com.outs[i]);
	return n;
}

/* Writes state_dir/metrics.json: the counters an operator (or a test) reads to see what
 * the agent did, including every drop (the same table as /metrics). Replaced atomically;
 * a failure is only logged. */
void floe_runner_write_metrics(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_buf b;
	floe_buf_init(&b, r->alloc, (32u << 10) + r->in.n * 1536u); /* with maintain's record */
	int rc = floe_run_counters_render(r, false, &b);
	if (rc == 0)
		rc = floe_fs_write_atomic(r->set.metrics_path, b.data, b.len);
	if (rc)
		floe_warn("runner: writing %s failed: %s", r->set.metrics_path, floe_strerror(rc));
	floe_buf_fini(&b);
}

/* Applies the spool limit after a seal: drop_oldest removes the oldest entries (never
 * the one just sealed, nor those lent to a commit in flight), raw ones first, until the
 * spools fit, counting every row; block makes the inputs wait until commits make room.
 * A full file system under state_dir makes them wait too, whatever the policy: dropping
 * sealed entries would lose rows that a commit can still save. */
int floe_runner_enforce_spool_limit(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
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
	if (floe_runner_spool_bytes(r) <= r->set.spool_max) {
		r->lake.blocked = false;
		return 0;
	}
	if (!r->set.drop_oldest) {
		if (!r->lake.blocked)
			floe_warn("runner: spool holds %" PRIu64
				  " bytes, over its limit of %" PRIu64 ": inputs wait for commits",
				  floe_runner_spool_bytes(r), r->set.spool_max);
		r->lake.blocked = true;
		return 0;
	}
	struct floe_output_drops d = {0};
	int rc = 0;
	for (size_t i = 0; i < r->com.nouts && rc >= 0; i++) {
		rc = 1;
		while (rc == 1 && floe_runner_spool_bytes(r) > r->set.spool_max)
			rc = floe_output_drop_oldest(r->com.outs[i], r->com.task != NULL, &d);
	}
	r->stats.dropped_entries += d.entries;
	r->stats.dropped_rows += d.rows;
	r->stats.dropped_bytes += d.bytes;
	r->stats.quarantined = quarantined(r);
	return rc < 0 ? rc : 0;
}

bool floe_runner_table_due(const struct floe_runner *r, size_t k)
{
	/* A table of the loop's (the shortest) interval is always due; a longer one half a
	 * loop interval early, as the loop's turns fall. */
	int64_t loop = r->set.commit_interval_us, want = r->raw[k].interval_us;
	return want <= loop || floe_run_mono_us(r) - r->raw[k].lent_us >= want - loop / 2;
}

/* Each raw table's entries are lent on its own commit_interval (the run loop seals and
 * commits on the shortest one): a table kept a year and written to rarely need not get a
 * snapshot a minute. */
int floe_runner_commit_start(struct floe_runner *r, bool all)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (r->com.task)
		return FLOE_EINVAL;
	for (size_t k = 0; k < r->nraw; k++) {
		if (!all && !floe_runner_table_due(r, k))
			continue;
		floe_output_lend(r->raw[k].out, r->raw[k].next_seq - 1);
		r->raw[k].lent_us = floe_run_mono_us(r);
	}
	floe_run_aggs_lend(r);
	__atomic_store_n(&r->com.done, 0, __ATOMIC_RELAXED);
	floe_run_stall_reset(r);
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

/* Table k's learnt plan, if its batch is empty. */
static void take_columns_of(struct floe_runner *r, size_t k)
{
	struct run_table *rt = &r->raw[k];
	struct floe_pq_column pq[FLOE_LOG_MAX_COLS];
	size_t n = 0;
	if (!rt->cols_pending)
		return;
	floe_colplan_pq_columns(&rt->cols_next, pq, &n);
	if (floe_batch_set_columns(rt->batch, pq, n) != 0)
		return; /* rows came first: the next seal */
	rt->cols = rt->cols_next;
	rt->cols_pending = false;
	/* Entries sealed from here on have the table's ids: no provisional mark. */
	(void)floe_run_columns_mark(&rt->cols, rt->spool);
	/* The writers borrow the names: from the plan that stays. */
	floe_colplan_pq_columns(&rt->cols, rt->pqcols, &rt->npqcols);
	(void)floe_batch_set_columns(rt->batch, rt->pqcols, rt->npqcols);
	/* The decoders of the inputs that write only here (as at the start). */
	for (size_t i = 0; i < r->in.n; i++) {
		const struct floe_config_input *in = &r->set.cfg->inputs[i];
		if (r->in.decoders[i] && in->nroutes == 0 && in->table_idx == k)
			floe_decoder_set_columns(r->in.decoders[i], &rt->cols);
	}
	floe_info("columns: %s was reached: the typed columns are written from spool entry "
		  "%" PRIu64 " on",
		  rt->what, rt->next_seq);
}

void floe_runner_take_columns(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	for (size_t k = 0; k < r->nraw; k++)
		take_columns_of(r, k);
}

/* Folds a report into the main thread's state. */
static void take(struct floe_runner *r, const struct commit_report *rep)
{
	/* The counters of commits and committed rows are the logs table's; damage and losses
	 * are every table's. */
	r->stats.commits += rep->raw.commits;
	r->stats.rows_committed += rep->raw.rows_committed;
	r->stats.replaced_utf8 += rep->raw.replaced_utf8;
	r->stats.spool_damaged += rep->raw.damaged + rep->aggs.damaged;
	r->stats.spool_lost_entries += rep->raw.lost_entries + rep->aggs.lost_entries;
	r->stats.spool_lost_rows += rep->raw.lost_rows + rep->aggs.lost_rows;
	/* Each raw table's commits, labelled by table; the further tables' damage and losses
	 * count with every table's. */
	for (size_t k = 0; k < r->nraw; k++) {
		const struct floe_output_report *o = &r->raw[k].rep;
		r->tabctr[k].v[FLOE_TABLE_ROWS] += o->rows_committed;
		r->tabctr[k].v[FLOE_TABLE_FILES] += o->files_committed;
		r->tabctr[k].v[FLOE_TABLE_COMMITS] += o->commits;
		if (k == 0)
			continue;
		r->stats.replaced_utf8 += o->replaced_utf8;
		r->stats.spool_damaged += o->damaged;
		r->stats.spool_lost_entries += o->lost_entries;
		r->stats.spool_lost_rows += o->lost_rows;
	}
	/* A commit that committed something, or failed, is one for the latency histogram. */
	if (rep->raw.commits || rep->rc) {
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
	r->stats.quarantined = quarantined(r);
	/* A table behind its record does not fail a commit each cycle: it holds its own
	 * back, counted in table_behind, and nothing is retried until it is restored. */
	if ((rep->rc && rep->rc != FLOE_EBEHIND) || (rep->agg_rc && rep->agg_rc != FLOE_EBEHIND))
		r->stats.commit_failures++;
	r->lake.store_down = rep->store_down;
	r->lake.table_missing = rep->rc == FLOE_EGONE || rep->agg_rc == FLOE_EGONE;
	snprintf(r->lake.store_error, sizeof(r->lake.store_error), "%s",
		 rep->store_down ? rep->store_error : "");
	if (!rep->rc && !rep->agg_rc)
		r->lake.commit_error[0] = '\0';
	else if (!rep->store_down && rep->store_error[0])
		snprintf(r->lake.commit_error, sizeof(r->lake.commit_error), "%s", rep->store_error);
	if (rep->rc == 0 && rep->committed_seq >= 0)
		floe_runner_note_committed(r, rep->committed_seq, rep->committed_version,
					   rep->committed_snapseq, rep->table_uuid);
	if (rep->rc == 0 && r->lake.blocked && r->lake.disk_low)
		(void)floe_runner_enforce_spool_limit(r);
	else if (rep->rc == 0 && r->lake.blocked && floe_runner_spool_bytes(r) <= r->set.spool_max) {
		floe_info("runner: spool below its limit again: inputs resume");
		r->lake.blocked = false;
	}
	if (rep->cols_learnt) {
		for (size_t k = 0; k < r->nraw; k++) {
			struct run_table *rt = &r->raw[k];
			if (rt->cols_learnt) {
				rt->cols_next = rt->cols_learnt_plan;
				rt->cols_pending = true;
				rt->cols_learnt = false;
			}
		}
		floe_runner_take_columns(r);
	}
	floe_runner_write_metrics(r);
}

int floe_runner_commit_take(struct floe_runner *r, bool wait, int *rc, uint64_t *damaged)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (!r->com.task)
		return 0;
	if (!wait && !__atomic_load_n(&r->com.done, __ATOMIC_ACQUIRE))
		return 0;
	/* Returns at once once done is set (the task's last step), else waits for it,
	 * looking at the committer meanwhile (a stuck one ends the process). */
	floe_run_stall_wait(r);
	take(r, &r->com.rep);
	/* A failed aggregate commit is retried like a failed one of the logs table; a table
	 * behind its record (only its commits wait) says least. */
	*rc = r->com.rep.rc && r->com.rep.rc != FLOE_EBEHIND ? r->com.rep.rc : r->com.rep.agg_rc;
	if (!*rc)
		*rc = r->com.rep.rc;
	*damaged = r->com.rep.raw.rebuild;
	return 1;
}

int floe_runner_rebuild(struct floe_runner *r, uint64_t seq)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_spool_entry *e = NULL;
	struct floe_output_report lost = {0};
	size_t k = r->com.rep.rebuild_table < r->nraw ? r->com.rep.rebuild_table : 0;
	int rc = floe_output_load(r->raw[k].out, seq, &e);
	if (rc == 0)
		rc = floe_runner_reread(r, k, e);
	if (rc == FLOE_ENOTFOUND || (rc == FLOE_ECORRUPT && e)) {
		int q = floe_output_lose(r->raw[k].out, e, &lost);
		if (q)
			floe_error("runner: moving spool entry %" PRIu64 " to quarantine: %s", seq,
				   floe_strerror(q));
		rc = 0;
	} else if (rc == FLOE_ECORRUPT) {
		rc = 0; /* the entry file itself: quarantined by the load */
	}
	if (rc)
		floe_error("runner: rebuilding damaged spool entry %" PRIu64 " failed: %s (tried again "
			   "at the next commit)", seq, floe_strerror(rc));
	floe_spool_entry_free(r->alloc, e);
	r->stats.spool_lost_entries += lost.lost_entries;
	r->stats.spool_lost_rows += lost.lost_rows;
	r->stats.quarantined = quarantined(r);
	return rc;
}
