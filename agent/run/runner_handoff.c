/* The main thread's side of commits: lending sealed entries to the committer thread
 * (runner_commit.c), taking its reports back, rebuilding the entries it found damaged,
 * the spool limit and its policies, and the metrics file. The main thread never waits on
 * the committer here unless asked to (the start and end of --once, a stop). */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/input/tail.h"
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

/* A syslog input's counters (metrics.json). */
static int write_syslog_metrics(struct floe_runner *r, size_t i, struct floe_buf *b)
{
	struct floe_syslog_in_stats s;
	floe_syslog_in_stats(r->in.syslogs[i], &s);
	return floe_buf_printf(
	    b,
	    "%s{\"type\":\"syslog\",\"lines\":%" PRIu64 ",\"bytes\":%" PRIu64
	    ",\"truncated\":%" PRIu64 ",\"bad_length\":%" PRIu64 ",\"at_close\":%" PRIu64
	    ",\"dropped\":%" PRIu64 ",\"kernel_drops\":%" PRIu64 ",\"connections\":%" PRIu64
	    ",\"rejected\":%" PRIu64 ",\"open\":%" PRIu64 ",\"closed_idle\":%" PRIu64
	    ",\"handshake_failures\":%" PRIu64 ",\"read_errors\":%" PRIu64
	    ",\"paused\":%" PRIu64 "}",
	    i ? "," : "", s.messages, s.bytes, s.truncated, s.bad_length, s.at_close, s.dropped,
	    s.kernel_drops, s.connections, s.rejected, s.open, s.closed_idle, s.handshake_failures,
	    s.read_errors, s.paused);
}

/* Each input's counters and state, in the order of the configuration: what it read,
 * what it could not (unreadable files, patterns matching nothing, refused paths, long
 * lines), and what its parser made of it. Closes the object metrics.json is. */
static int write_input_metrics(struct floe_runner *r, struct floe_buf *b)
{
	int rc = floe_buf_printf(b, ",\"inputs\":[");
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		struct floe_tail_stats ts;
		struct floe_decode_stats ds;
		floe_run_input_counts(r, i, &ts, &ds);
		if (r->in.syslogs[i]) {
			rc = write_syslog_metrics(r, i, b);
			continue;
		}
		if (r->in.journals[i]) {
			struct floe_journal_in_stats js;
			floe_journal_in_stats(r->in.journals[i], &js);
			rc = floe_buf_printf(b,
					     "%s{\"type\":\"journal\",\"lines\":%" PRIu64
					     ",\"bytes\":%" PRIu64 ",\"resets\":%" PRIu64
					     ",\"truncated\":%" PRIu64 ",\"own_skipped\":%" PRIu64
					     ",\"files_unreadable\":%" PRIu64
					     ",\"read_errors\":%" PRIu64 "}",
					     i ? "," : "", js.entries, js.bytes, js.resets, js.truncated,
					     js.own_skipped, js.files_unreadable, js.read_errors);
			continue;
		}
		rc = floe_buf_printf(
		    b,
		    "%s{\"lines\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"files_open\":%" PRIu64
		    ",\"files_parked\":%" PRIu64 ",\"files_unreadable\":%" PRIu64
		    ",\"patterns_unmatched\":%" PRIu64 ",\"files_skipped\":%" PRIu64
		    ",\"long_lines_split\":%" PRIu64 ",\"long_lines_truncated\":%" PRIu64
		    ",\"truncations\":%" PRIu64 ",\"rotated_closed\":%" PRIu64
		    ",\"parse_failures\":%" PRIu64 ",\"ts_failures\":%" PRIu64
		    ",\"lag_bytes\":%" PRIu64 ",\"files_draining\":%" PRIu64 "}",
		    i ? "," : "", ts.lines, ts.bytes, ts.files_open, ts.files_parked,
		    ts.files_unreadable, ts.patterns_unmatched, ts.files_skipped, ts.long_lines_split,
		    ts.long_lines_truncated, ts.truncations, ts.rotated_closed, ds.parse_failures,
		    ds.ts_failures, ts.lag_bytes, ts.files_draining);
	}
	return rc ? rc : floe_buf_printf(b, "]}\n");
}

/* Writes state_dir/metrics.json: the counters an operator (or a test) reads to see what
 * the agent did, including every drop. Replaced atomically; a failure is only logged. */
void floe_runner_write_metrics(struct floe_runner *r)
{
	struct floe_buf b;
	floe_buf_init(&b, &r->alloc, 4096);
	r->stats.parse_failures = r->in.sys_parse_failures;
	r->stats.ts_failures = 0;
	for (size_t i = 0; i < r->in.n; i++) {
		struct floe_decode_stats ds;
		if (!r->in.decoders[i])
			continue;
		floe_decoder_get_stats(r->in.decoders[i], &ds);
		r->stats.parse_failures += ds.parse_failures;
		r->stats.ts_failures += ds.ts_failures;
	}
	/* Record assembly (multiline, container formats), over every input. */
	struct floe_assemble_stats as = {0}, one;
	for (size_t i = 0; i < r->in.n; i++) {
		if (!r->in.asm_[i])
			continue;
		floe_assemble_get_stats(r->in.asm_[i], &one);
		as.evictions += one.evictions;
		as.timeouts += one.timeouts;
		as.format_errors += one.format_errors;
		as.truncated += one.truncated;
		as.incomplete += one.incomplete;
	}
	const struct floe_runner_stats *st = &r->stats;
	int rc = floe_buf_printf(
	    &b,
	    "{\"lines\":%" PRIu64 ",\"seals\":%" PRIu64 ",\"commits\":%" PRIu64
	    ",\"commit_failures\":%" PRIu64 ",\"rows_committed\":%" PRIu64
	    ",\"replaced_utf8\":%" PRIu64 ",\"dropped_entries\":%" PRIu64
	    ",\"dropped_rows\":%" PRIu64 ",\"dropped_bytes\":%" PRIu64 ",\"quarantined\":%" PRIu64
	    ",\"blocked_ms\":%" PRIu64 ",\"spool_bytes\":%" PRIu64 ",\"next_seq\":%" PRIu64
	    ",\"groups_evicted\":%" PRIu64 ",\"group_timeouts\":%" PRIu64
	    ",\"container_format_errors\":%" PRIu64 ",\"records_truncated\":%" PRIu64
	    ",\"partial_incomplete\":%" PRIu64,
	    st->lines, st->seals, st->commits, st->commit_failures, st->rows_committed,
	    st->replaced_utf8, st->dropped_entries, st->dropped_rows, st->dropped_bytes,
	    st->quarantined, st->blocked_ms, spool_bytes(r), r->b.next_seq,
	    as.evictions, as.timeouts, as.format_errors, as.truncated, as.incomplete);
	/* Damaged spool files, and lines cut or dropped for the memory budget. */
	if (rc == 0)
		rc = floe_buf_printf(&b,
				     ",\"spool_damaged\":%" PRIu64 ",\"spool_reread_entries\":%" PRIu64
				     ",\"spool_reread_rows\":%" PRIu64 ",\"spool_lost_entries\":%" PRIu64
				     ",\"spool_lost_rows\":%" PRIu64 ",\"lines_truncated_memory\":%" PRIu64
				     ",\"bytes_truncated_memory\":%" PRIu64 ",\"lines_dropped_memory\":%" PRIu64,
				     st->spool_damaged, st->spool_reread_entries, st->spool_reread_rows,
				     st->spool_lost_entries, st->spool_lost_rows, st->lines_truncated_memory,
				     st->bytes_truncated_memory, st->lines_dropped_memory);
	if (rc == 0)
		rc = floe_buf_printf(&b, ",\"parse_failures\":%" PRIu64 ",\"ts_failures\":%" PRIu64,
				     st->parse_failures, st->ts_failures);
	if (rc == 0)
		rc = write_input_metrics(r, &b);
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
 * spools fit, counting every row; block makes the inputs wait until commits make room. */
int floe_runner_enforce_spool_limit(struct floe_runner *r)
{
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
	if (rep->rc == 0 && rep->committed_seq >= 0)
		floe_runner_note_committed(r, rep->committed_seq, rep->committed_version,
					   rep->table_uuid);
	if (rep->rc == 0 && r->lake.blocked &&
	    spool_bytes(r) <= r->set.spool_max) {
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
