/* Seals: the batch into the next spool entry with the inputs' positions where it ends
 * (or, with no raw row, those positions into the checkpoint alone), and the records that
 * waited for a seal into the next batch. Main thread. */
#include "agent/run/runner_impl.h"

#include "agent/pipeline/batch.h"
#include "formats/base/buf.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/owner.h"

#include <inttypes.h>
#include <string.h>

/* The next batch starts where this one ended. Without memory for the copy its entry
 * only records no start (a damaged file of it could not be rebuilt). */
void floe_runner_set_from(struct floe_runner *r, const uint8_t *p, size_t len)
{
	floe_free(r->alloc, r->b.from);
	r->b.from = NULL;
	r->b.from_len = 0;
	if ((r->b.from = floe_malloc(r->alloc, len ? len : 1))) {
		memcpy(r->b.from, p, len);
		r->b.from_len = len;
	}
}

/* No row of the logs table since the last seal, but events of raw: false inputs went
 * into the aggregations, or rows into further tables (sealed already): the positions pos
 * (collected) and the open windows' image are recorded without a logs entry, the
 * checkpoint being their durability point (runner_agg.c says why). */
static int seal_rowless(struct floe_runner *r, const struct floe_buf *pos)
{
	uint64_t seq = r->raw[0].next_seq - 1, sub = 0;
	int rc = floe_run_aggs_seal_rowless(r, seq, &sub);
	if (rc == 0) {
		floe_runner_set_from(r, pos->data, pos->len);
		floe_crashpoint("rowless-before-checkpoint");
		rc = floe_runner_save_checkpoint(r, seq, sub, pos->data, pos->len);
		if (rc)
			floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		else
			rc = floe_runner_enforce_spool_limit(r);
	}
	return rc;
}

/* Raw table k's rows (if any) into its next spool entry, with the positions where the
 * seal starts and ends. */
static int seal_table(struct floe_runner *r, size_t k, const struct floe_buf *pos)
{
	struct run_table *rt = &r->raw[k];
	uint64_t rows = floe_batch_rows(rt->batch);
	if (rows == 0)
		return 0;
	int rc = floe_batch_seal_range(rt->batch, floe_run_wall_us(r), r->b.from, r->b.from_len,
				       pos->data, pos->len);
	if (rc < 0) {
		floe_error("runner: sealing %s's batch into its spool (%s) failed: %s", rt->what,
			   rt->spool_dir, floe_strerror(rc));
		return rc;
	}
	floe_info("runner: sealed spool entry %" PRIu64 " of %s: %" PRIu64 " rows", rt->next_seq,
		  rt->what, rows);
	rt->next_seq++;
	return 0;
}

/* Seals the batch into the next spool entry. why says what closes it (NULL: the
 * batch's own reason, else the memory budget): logged, so that files far below
 * target_file_size can be traced to what sealed them.
 *
 * With further raw tables, one seal writes an entry in each table that has rows, the
 * further tables' first, the logs table's last, then the checkpoint, which records the
 * further tables' last entries. A crash in between leaves entries no durable seal
 * recorded: start-up keeps them when the logs table's entry of that seal is there (every
 * other was written before it), else removes them (runner_state.c), and the lines are
 * read again from the positions of the last seal that was durable. */
int floe_runner_seal(struct floe_runner *r, const char *why)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	r->b.seal_needed = false;
	uint64_t rows = floe_batch_rows(r->raw[0].batch), all = floe_runner_rows(r);
	if (all == 0 && !floe_run_aggs_unsealed(r))
		return 0;
	if (!why)
		why = floe_batch_seal_reason(r->raw[0].batch);
	if (!why)
		why = "memory budget";
	struct floe_buf pos;
	floe_buf_init(&pos, r->alloc, POSITIONS_MAX);
	int rc = floe_runner_collect_positions(r, &pos);
	for (size_t k = 1; k < r->nraw && rc == 0; k++) {
		if ((rc = seal_table(r, k, &pos)) == 0)
			floe_crashpoint("seal-between-tables");
	}
	if (rc == 0 && rows == 0) {
		rc = seal_rowless(r, &pos);
		if (rc == 0 && all > 0) {
			r->stats.seals++;
			r->b.unsealed_bytes = 0;
		}
		floe_buf_fini(&pos);
		return rc;
	}
	if (rc == 0)
		rc = floe_run_aggs_seal(r, r->raw[0].next_seq);
	if (rc == 0 &&
	    (rc = floe_batch_seal_range(r->raw[0].batch, floe_run_wall_us(r), r->b.from, r->b.from_len,
					pos.data, pos.len)) < 0)
		floe_error("runner: sealing the batch into the spool (%s/spool) failed: %s",
			   r->set.state_dir, floe_strerror(rc));
	if (rc == 0)
		floe_runner_set_from(r, pos.data, pos.len);
	if (rc == 0) {
		uint64_t seq = r->raw[0].next_seq++;
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
	if (rc == 0)
		floe_runner_take_columns(r);
	return rc;
}

/* Seals while asked to and puts the waiting records in the next batch. */
int floe_runner_settle(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	int rc = 0;
	while (rc == 0 && (r->b.seal_needed || r->b.ndefer)) {
		bool had = r->b.seal_needed;
		if (r->b.seal_needed && (rc = floe_runner_seal(r, r->b.seal_why)))
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
