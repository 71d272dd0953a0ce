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

/* No raw row since the last seal, but events of raw: false inputs went into the
 * aggregations: their positions and the open windows' image are recorded without a raw
 * entry, the checkpoint being their durability point (runner_agg.c says why). */
static int seal_rowless(struct floe_runner *r)
{
	struct floe_buf pos;
	floe_buf_init(&pos, r->alloc, POSITIONS_MAX);
	uint64_t seq = r->b.next_seq - 1, sub = 0;
	int rc = floe_runner_collect_positions(r, &pos);
	if (rc == 0)
		rc = floe_run_aggs_seal_rowless(r, seq, &sub);
	if (rc == 0) {
		floe_runner_set_from(r, pos.data, pos.len);
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
int floe_runner_seal(struct floe_runner *r, const char *why)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	r->b.seal_needed = false;
	uint64_t rows = floe_batch_rows(r->b.batch);
	if (rows == 0)
		return floe_run_aggs_unsealed(r) ? seal_rowless(r) : 0;
	if (!why)
		why = floe_batch_seal_reason(r->b.batch);
	if (!why)
		why = "memory budget";
	struct floe_buf pos;
	floe_buf_init(&pos, r->alloc, POSITIONS_MAX);
	int rc = floe_runner_collect_positions(r, &pos);
	if (rc == 0)
		rc = floe_run_aggs_seal(r, r->b.next_seq);
	if (rc == 0 &&
	    (rc = floe_batch_seal_range(r->b.batch, floe_run_wall_us(r), r->b.from, r->b.from_len,
					pos.data, pos.len)) < 0)
		floe_error("runner: sealing the batch into the spool (%s/spool) failed: %s",
			   r->set.state_dir, floe_strerror(rc));
	if (rc == 0)
		floe_runner_set_from(r, pos.data, pos.len);
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
