/* The runner's commits: spool entries into the table, the spool limit and its policies,
 * and the metrics file. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/state/blobfile.h"
#include "agent/input/tail.h"
#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/json/json.h"
#include "platform/clock.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/path.h"
#include "platform/signal.h"
#include "platform/store.h"
#include "platform/watch.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>


/* Writes state_dir/metrics.json: the counters an operator (or a test) reads to see what
 * the agent did, including every drop. Replaced atomically; a failure is only logged. */
/* Each input's counters and state, in the order of the configuration: what it read,
 * what it could not (unreadable files, patterns matching nothing, refused paths, long
 * lines), and what its parser made of it. Closes the object metrics.json is. */
static int write_input_metrics(struct floe_runner *r, struct floe_buf *b)
{
	int rc = floe_buf_printf(b, ",\"inputs\":[");
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		struct floe_tail_stats ts;
		struct floe_decode_stats ds;
		floe_tail_get_stats(r->in.tails[i], &ts);
		floe_decoder_get_stats(r->in.decoders[i], &ds);
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

void floe_runner_write_metrics(struct floe_runner *r)
{
	struct floe_buf b;
	floe_buf_init(&b, &r->alloc, 4096);
	r->stats.parse_failures = r->stats.ts_failures = 0;
	for (size_t i = 0; i < r->in.n; i++) {
		struct floe_decode_stats ds;
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
	    st->quarantined, st->blocked_ms, floe_spool_bytes(r->lake.spool), r->b.next_seq,
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

/* Applies the spool limit after a seal: drop_oldest removes the oldest entries (never
 * the one just sealed) until the spool fits, counting every row; block makes the inputs
 * wait until commits make room. */
int floe_runner_enforce_spool_limit(struct floe_runner *r)
{
	if (floe_spool_bytes(r->lake.spool) <= r->set.spool_max) {
		r->lake.blocked = false;
		return 0;
	}
	if (!r->set.drop_oldest) {
		if (!r->lake.blocked)
			floe_warn("runner: spool holds %" PRIu64
				  " bytes, over its limit of %" PRIu64 ": inputs wait for commits",
				  floe_spool_bytes(r->lake.spool), r->set.spool_max);
		r->lake.blocked = true;
		return 0;
	}
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = floe_spool_list(r->lake.spool, &seqs, &n);
	for (size_t i = 0;
	     rc == 0 && i + 1 < n && floe_spool_bytes(r->lake.spool) > r->set.spool_max; i++) {
		struct floe_spool_entry *e = NULL;
		rc = floe_spool_load(r->lake.spool, seqs[i], &e);
		if (rc == FLOE_ECORRUPT) {
			rc = floe_spool_quarantine(r->lake.spool, seqs[i]);
			continue;
		}
		if (rc)
			break;
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
	}
	floe_free(&r->alloc, seqs);
	return rc;
}

/* Loads entry seq for a commit and checks its data files against it, immediately before
 * they leave the spool (for every store: the table copies or uploads them next). A
 * damaged entry is rebuilt from its input when the input still holds its bytes, else its
 * rows are counted lost and it goes to quarantine. Returns 0 (*out loaded and checked),
 * FLOE_ECORRUPT (quarantined: skip it), or an error (the entry stays for a later try). */
static int load_checked(struct floe_runner *r, uint64_t seq, struct floe_spool_entry **out)
{
	struct floe_spool_entry *e = NULL;
	int rc = floe_spool_load(r->lake.spool, seq, &e);
	if (rc == 0 && (rc = floe_spool_verify(r->lake.spool, e, NULL)) == FLOE_ECORRUPT) {
		r->stats.spool_damaged++;
		rc = floe_runner_reread(r, e);
		if (rc == 0) {
			floe_spool_entry_free(&r->alloc, e);
			e = NULL;
			rc = floe_spool_load(r->lake.spool, seq, &e);
			if (rc == 0)
				rc = floe_spool_verify(r->lake.spool, e, NULL);
		} else if (rc == FLOE_ENOTFOUND) {
			uint64_t rows = 0;
			for (size_t f = 0; f < e->nfiles; f++)
				rows += (uint64_t)e->files[f].records;
			r->stats.spool_lost_entries++;
			r->stats.spool_lost_rows += rows;
			floe_error("runner: spool entry %" PRIu64 " is damaged and its input no longer holds its "
				   "bytes: %" PRIu64 " rows LOST (the damaged files go to quarantine)", seq, rows);
			rc = FLOE_ECORRUPT;
		}
	}
	if (rc == FLOE_ECORRUPT) {
		int q = floe_spool_quarantine(r->lake.spool, seq);
		if (q)
			floe_error("runner: moving spool entry %" PRIu64 " to quarantine: %s", seq, floe_strerror(q));
	}
	if (rc) {
		floe_spool_entry_free(&r->alloc, e);
		return rc;
	}
	*out = e;
	return 0;
}

/* Commits spool entries in order, at most COMMIT_MAX_ENTRIES per snapshot. */
int floe_runner_commit(struct floe_runner *r)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	struct floe_err terr = {0}; /* why the table refused, for the log */
	int rc = floe_spool_list(r->lake.spool, &seqs, &n);
	if (rc)
		return rc;
	/* An earlier commit whose outcome was unknown (the store went away before floe could
	 * read back the metadata it wrote) may have landed: entries the table holds go, so
	 * that they are never committed twice along with newer ones. */
	if (n > 0 && (rc = floe_table_refresh(r->lake.table, &terr)) == 0) {
		int64_t committed = floe_table_committed_seq(r->lake.table, r->ck.id.installation);
		size_t keep = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (committed < 0 || seqs[i] > (uint64_t)committed) {
				seqs[keep++] = seqs[i];
				continue;
			}
			struct floe_spool_entry *e = NULL;
			if ((rc = floe_spool_load(r->lake.spool, seqs[i], &e)) == 0) {
				floe_info("runner: spool entry %" PRIu64 " is already in the table", seqs[i]);
				for (size_t f = 0; f < e->nfiles; f++)
					r->stats.rows_committed += (uint64_t)e->files[f].records;
				rc = floe_spool_remove(r->lake.spool, e);
				floe_spool_entry_free(&r->alloc, e);
			} else if (rc == FLOE_ECORRUPT) {
				rc = floe_spool_quarantine(r->lake.spool, seqs[i]);
			}
		}
		n = keep;
	}
	size_t done = 0;
	while (done < n && rc == 0) {
		size_t k = n - done < COMMIT_MAX_ENTRIES ? n - done : COMMIT_MAX_ENTRIES;
		struct floe_spool_entry **es = floe_calloc(&r->alloc, k, sizeof(*es));
		if (!es) {
			rc = FLOE_ENOMEM;
			break;
		}
		size_t loaded = 0;
		/* Tests damage a sealed file here, between seal and upload. */
		floe_crashpoint("commit-before-upload");
		for (; loaded < k; loaded++) {
			rc = load_checked(r, seqs[done + loaded], &es[loaded]);
			if (rc == FLOE_ECORRUPT) {
				rc = 0;
				es[loaded] = NULL;
				break;
			}
			if (rc)
				break;
		}
		if (rc == 0 && loaded > 0)
			rc = floe_table_commit(r->lake.table, r->lake.spool, es, loaded, &terr);
		if (rc == 0 && loaded > 0)
			floe_crashpoint("commit-before-spool-remove");
		for (size_t i = 0; i < loaded; i++) {
			if (rc == 0) {
				for (size_t f = 0; f < es[i]->nfiles; f++)
					r->stats.rows_committed += (uint64_t)es[i]->files[f].records;
				r->stats.replaced_utf8 += es[i]->replaced_utf8;
				int rm = floe_spool_remove(r->lake.spool, es[i]);
				if (rm)
					floe_warn("runner: removing committed spool entry %" PRIu64 ": %s",
						  es[i]->seq, floe_strerror(rm));
			}
			floe_spool_entry_free(&r->alloc, es[i]);
		}
		floe_free(&r->alloc, es);
		if (rc == 0 && loaded > 0)
			r->stats.commits++;
		/* A quarantined entry counts as handled. */
		done += loaded + (loaded < k && rc == 0 ? 1 : 0);
	}
	floe_free(&r->alloc, seqs);
	r->stats.quarantined = floe_spool_quarantined(r->lake.spool);
	if (rc == 0)
		floe_runner_note_committed(r);
	if (rc && floe_runner_fatal(rc)) {
		r->stats.commit_failures++;
		floe_error(
		    "runner: commit refused: %s; the spool keeps the data, and the agent stops",
		    floe_err_text(&terr, rc));
	} else if (rc) {
		r->stats.commit_failures++;
		floe_error("runner: commit failed: %s (the spool keeps the data; retrying later)",
			   floe_err_text(&terr, rc));
	} else if (r->lake.blocked && floe_spool_bytes(r->lake.spool) <= r->set.spool_max) {
		floe_info("runner: spool below its limit again: inputs resume");
		r->lake.blocked = false;
	}
	floe_runner_write_metrics(r);
	return rc;
}

