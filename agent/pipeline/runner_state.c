/* The runner's durable state: input positions, the checkpoint, and recovery at start-up
 * (what the spool and the table already hold). */
#include "agent/pipeline/runner_impl.h"

#include "agent/config/config.h"
#include "agent/input/checkpoint.h"
#include "agent/input/tail.h"
#include "agent/lake/partition.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/pipeline/record.h"
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



static void hold_cb(void *ctx, uint64_t file_id, int64_t offset)
{
	/* A file the tail no longer follows has no position to hold back. */
	(void)floe_tail_hold(ctx, file_id, offset < 0 ? 0 : (uint64_t)offset);
}

/* Exactly-once: lines kept by an assembler (grouped, not yet a record) and records
 * waiting for the next batch are not in the batch being sealed, so their files' saved
 * positions stop at the first of them; a restart reads them again. */
static void set_holds(struct floe_runner *r, size_t i)
{
	if (!r->asm_ || !r->asm_[i])
		return;
	floe_tail_hold_clear(r->tails[i]);
	floe_assemble_pending(r->asm_[i], hold_cb, r->tails[i]);
	for (size_t k = 0; k < r->ndefer; k++)
		if (r->defer[k].input == i)
			hold_cb(r->tails[i], r->defer[k].file_id, r->defer[k].offset);
}

/* Input positions of every tail, concatenated as (u32 length, blob) pairs. */
int floe_runner_collect_positions(struct floe_runner *r, struct floe_buf *out)
{
	struct floe_buf one;
	floe_buf_init(&one, &r->alloc, POSITIONS_MAX);
	int rc = floe_buf_put_le32(out, (uint32_t)r->ntails);
	for (size_t i = 0; i < r->ntails && rc == 0; i++) {
		floe_buf_reset(&one);
		set_holds(r, i);
		if ((rc = floe_tail_positions(r->tails[i], &one)))
			break;
		if ((rc = floe_buf_put_le32(out, (uint32_t)one.len)) == 0)
			rc = floe_buf_append(out, one.data, one.len);
	}
	floe_buf_fini(&one);
	return rc;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Restores every tail from collect_positions' format. A blob saved with another number
 * of inputs restores the inputs it still has in order: the configuration changed. */
static int restore_positions(struct floe_runner *r, const uint8_t *p, size_t len)
{
	if (len < 4)
		return FLOE_ECORRUPT;
	uint32_t n = le32(p);
	size_t off = 4;
	for (uint32_t i = 0; i < n; i++) {
		if (len - off < 4)
			return FLOE_ECORRUPT;
		uint32_t l = le32(p + off);
		off += 4;
		if (l > len - off)
			return FLOE_ECORRUPT;
		if (i < r->ntails) {
			int rc = floe_tail_restore(r->tails[i], p + off, l);
			if (rc)
				return rc;
		}
		off += l;
	}
	if (n != r->ntails)
		floe_warn("runner: the checkpoint has %u inputs, the configuration %zu", n, r->ntails);
	return 0;
}

int floe_runner_save_checkpoint(struct floe_runner *r, uint64_t last_seq, const uint8_t *pos, size_t len)
{
	struct floe_buf b;
	floe_buf_init(&b, &r->alloc, 2 * POSITIONS_MAX + 4096);
	int rc = floe_buf_printf(&b, "{\"version\":%d,\"agent_id\":", CHECKPOINT_VERSION);
	if (rc == 0)
		rc = floe_json_write_str(&b, r->cfg->agent.id, strlen(r->cfg->agent.id));
	if (rc == 0)
		rc = floe_buf_printf(&b, ",\"last_seq\":%" PRIu64 ",\"positions\":\"", last_seq);
	if (rc == 0)
		rc = floe_hex_put(&b, pos, len);
	if (rc == 0)
		rc = floe_buf_puts(&b, "\"}");
	if (rc == 0)
		rc = floe_checkpoint_save(r->checkpoint_path, b.data, b.len);
	floe_buf_fini(&b);
	return rc;
}

/* Loads the checkpoint: *last_seq (0 when there is none) and the positions (NULL). */
static int load_checkpoint(struct floe_runner *r, uint64_t *last_seq, uint8_t **pos, size_t *len)
{
	uint8_t *blob = NULL;
	size_t blen = 0;
	struct floe_json_doc *doc = NULL;
	*last_seq = 0;
	*pos = NULL;
	*len = 0;
	int rc = floe_checkpoint_load(&r->alloc, r->checkpoint_path, &blob, &blen);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	rc = floe_json_parse(&r->alloc, (const char *)blob, blen, 2 * POSITIONS_MAX + 4096, &doc, NULL);
	if (rc == 0) {
		const struct floe_json *root = floe_json_root(doc);
		int64_t version, seq;
		const char *hex, *agent;
		if (floe_json_get_int(root, "version", &version) || version != CHECKPOINT_VERSION ||
		    floe_json_get_int(root, "last_seq", &seq) || seq < 0 ||
		    floe_json_get_str(root, "agent_id", &agent) || floe_json_get_str(root, "positions", &hex)) {
			rc = FLOE_ECORRUPT;
		} else if (strcmp(agent, r->cfg->agent.id) != 0) {
			floe_warn("runner: the checkpoint belongs to agent %s, not %s: starting over", agent,
				  r->cfg->agent.id);
		} else {
			*last_seq = (uint64_t)seq;
			rc = floe_hex_decode(&r->alloc, hex, strlen(hex), pos, len);
		}
	}
	floe_json_doc_free(doc);
	floe_free(&r->alloc, blob);
	return rc;
}

/* Start-up: drop spool entries that the table already holds, find the newest durable
 * positions (the checkpoint, or a newer seal in the spool) and the next sequence. */
int floe_runner_recover(struct floe_runner *r)
{
	uint64_t ck_seq;
	uint8_t *pos = NULL;
	size_t pos_len = 0;
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = load_checkpoint(r, &ck_seq, &pos, &pos_len);
	if (rc) {
		floe_error("runner: checkpoint %s: %s", r->checkpoint_path, floe_strerror(rc));
		return rc;
	}
	int64_t committed = floe_table_committed_seq(r->table, r->cfg->agent.id);
	uint64_t max_seq = ck_seq;
	if (committed > 0 && (uint64_t)committed > max_seq)
		max_seq = (uint64_t)committed;
	if ((rc = floe_spool_list(r->spool, &seqs, &n)))
		goto out;
	/* First the newest positions: a seal newer than the checkpoint (a crash came between
	 * the two writes) holds newer ones. They go to the checkpoint before any entry is
	 * removed, here or by the first commit, or a restart would read those lines again. */
	uint64_t pos_seq = 0;
	for (size_t i = 0; i < n; i++) {
		struct floe_spool_entry *e = NULL;
		rc = floe_spool_load(r->spool, seqs[i], &e);
		if (rc == FLOE_ECORRUPT) {
			floe_spool_quarantine(r->spool, seqs[i]);
			seqs[i] = 0; /* skipped below */
			rc = 0;
			continue;
		}
		if (rc)
			goto out;
		if (seqs[i] > ck_seq) {
			floe_free(&r->alloc, pos);
			pos = e->positions;
			pos_len = e->positions_len;
			pos_seq = seqs[i];
			e->positions = NULL;
			e->positions_len = 0;
		}
		if (seqs[i] > max_seq)
			max_seq = seqs[i];
		floe_spool_entry_free(&r->alloc, e);
	}
	if (pos_seq && (rc = floe_runner_save_checkpoint(r, pos_seq, pos, pos_len))) {
		floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		goto out;
	}
	for (size_t i = 0; committed >= 0 && i < n; i++) {
		if (seqs[i] == 0 || seqs[i] > (uint64_t)committed)
			continue;
		struct floe_spool_entry *e = NULL;
		if ((rc = floe_spool_load(r->spool, seqs[i], &e)))
			goto out;
		floe_info("runner: spool entry %" PRIu64 " is already in the table", seqs[i]);
		rc = floe_spool_remove(r->spool, e);
		floe_spool_entry_free(&r->alloc, e);
		if (rc)
			goto out;
	}
	if (pos && (rc = restore_positions(r, pos, pos_len))) {
		floe_error("runner: input positions are unreadable: %s", floe_strerror(rc));
		goto out;
	}
	r->next_seq = max_seq + 1;
	floe_info("runner: recovered: next seal %" PRIu64 ", table holds commits up to %" PRId64
		  ", %zu spool entries", r->next_seq, committed, n);
out:
	floe_free(&r->alloc, seqs);
	floe_free(&r->alloc, pos);
	return rc;
}

