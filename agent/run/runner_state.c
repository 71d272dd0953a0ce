/* The runner's durable state: input positions, the checkpoint, and recovery at start-up
 * (what the spool and the table already hold). */
#include "agent/run/runner_impl.h"
#include "agent/run/span.h"

#include "agent/config/config.h"
#include "agent/state/blobfile.h"
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
#include "platform/owner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>



static void hold_cb(void *ctx, uint64_t file_id, int64_t offset)
{
	floe_input_hold_at(ctx, file_id, offset < 0 ? 0 : (uint64_t)offset);
}

/* Exactly-once: lines kept by an assembler (grouped, not yet a record) and records
 * waiting for the next batch are not in the batch being sealed, so their files' saved
 * positions stop at the first of them; a restart reads them again. */
static void set_holds(struct floe_runner *r, size_t i)
{
	if (!r->in.asm_ || !r->in.asm_[i])
		return;
	floe_input_hold_clear(r->in.all[i]);
	floe_assemble_pending(r->in.asm_[i], hold_cb, r->in.all[i]);
	for (size_t k = 0; k < r->b.ndefer; k++)
		if (r->b.defer[k].input == i)
			hold_cb(r->in.all[i], r->b.defer[k].file_id, r->b.defer[k].offset);
}

/* Input positions of every input, concatenated as (u32 length, blob) pairs. */
int floe_runner_collect_positions(struct floe_runner *r, struct floe_buf *out)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_buf one;
	floe_buf_init(&one, r->alloc, POSITIONS_MAX);
	int rc = floe_buf_put_le32(out, (uint32_t)r->in.n);
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		floe_buf_reset(&one);
		set_holds(r, i);
		if ((rc = floe_input_positions(r->in.all[i], &one)))
			break;
		if ((rc = floe_buf_put_le32(out, (uint32_t)one.len)) == 0)
			rc = floe_buf_append(out, one.data, one.len);
	}
	floe_buf_fini(&one);
	return rc;
}

/* Restores every input from collect_positions' format (read by span.c). A blob saved with
 * another number of inputs restores the inputs it still has in order: the configuration
 * changed. */
static int restore_positions(struct floe_runner *r, const uint8_t *p, size_t len)
{
	uint32_t n = 0;
	const uint8_t *blob;
	size_t blen;
	int rc = floe_span_input(p, len, 0, &n, &blob, &blen);
	if (rc == FLOE_ENOTFOUND && n == 0)
		rc = 0; /* no input at all */
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		if ((rc = floe_span_input(p, len, i, &n, &blob, &blen)) || i >= r->in.n)
			continue;
		bool other = false;
		rc = floe_input_restore(r->in.all[i], blob, blen, &other);
		if (other)
			floe_warn("runner: input %u changed its type since the checkpoint: it "
				  "starts afresh",
				  i + 1);
	}
	if (rc)
		return rc;
	if (n != r->in.n)
		floe_warn("runner: the checkpoint has %u inputs, the configuration %zu", n,
			  r->in.n);
	return 0;
}

/* The durable positions of the last seal (r->ck.pos), with the positions the inputs chose
 * for the sources they saw first since then, into out: the checkpoint must still say
 * where the sealed lines end. */
static int merge_new(struct floe_runner *r, struct floe_buf *out)
{
	struct floe_buf one;
	floe_buf_init(&one, r->alloc, POSITIONS_MAX);
	int rc = floe_buf_put_le32(out, (uint32_t)r->in.n);
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		uint32_t n;
		const uint8_t *blob = NULL;
		size_t blen = 0;
		if ((rc = floe_span_input(r->ck.pos, r->ck.pos_len, i, &n, &blob, &blen)) ==
		    FLOE_ENOTFOUND)
			rc = 0; /* start-up rewrites a checkpoint with fewer inputs */
		floe_buf_reset(&one);
		if (rc == 0)
			rc = floe_input_positions_with_new(r->in.all[i], blob, blen, &one);
		if (rc == 0 && (rc = floe_buf_put_le32(out, (uint32_t)one.len)) == 0)
			rc = floe_buf_append(out, one.data, one.len);
	}
	floe_buf_fini(&one);
	return rc;
}

int floe_runner_save_new_positions(struct floe_runner *r, bool nothing_read)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	size_t unsaved = 0;
	for (size_t i = 0; i < r->in.n; i++)
		unsaved += floe_input_unsaved(r->in.all[i]);
	uint32_t n = 0;
	const uint8_t *b;
	size_t bl;
	bool whole = r->ck.pos &&
		     floe_span_input(r->ck.pos, r->ck.pos_len, 0, &n, &b, &bl) != FLOE_ECORRUPT &&
		     n == r->in.n;
	if (!unsaved && (whole || !nothing_read))
		return 0;
	struct floe_buf pos;
	floe_buf_init(&pos, r->alloc, 2 * POSITIONS_MAX);
	/* Before anything is read, the positions now are exactly the durable ones. */
	int rc = nothing_read ? floe_runner_collect_positions(r, &pos) : merge_new(r, &pos);
	uint64_t seq = r->ck.pos ? r->ck.seq : r->raw[0].next_seq - 1;
	uint64_t sub = r->ck.pos ? r->ck.sub : 0;
	if (rc == 0)
		rc = floe_runner_save_checkpoint(r, seq, sub, pos.data, pos.len);
	floe_buf_fini(&pos);
	if (rc) {
		floe_error("runner: writing the positions of new files into %s failed: %s",
			   r->set.checkpoint_path, floe_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < r->in.n; i++)
		floe_input_confirm(r->in.all[i]);
	return 0;
}

int floe_runner_save_checkpoint(struct floe_runner *r, uint64_t last_seq, uint64_t sub,
				const uint8_t *pos, size_t len)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (pos != r->ck.pos) {
		uint8_t *copy = floe_malloc(r->alloc, len ? len : 1);
		if (!copy)
			return FLOE_ENOMEM;
		if (len)
			memcpy(copy, pos, len);
		floe_free(r->alloc, r->ck.pos);
		r->ck.pos = copy;
		r->ck.pos_len = len;
	}
	r->ck.seq = last_seq;
	r->ck.sub = sub;
	struct floe_buf b;
	floe_buf_init(&b, r->alloc, 2 * POSITIONS_MAX + 4096);
	int rc = floe_buf_printf(&b, "{\"version\":%d,\"installation\":\"%s\",\"agent_id\":",
				 CHECKPOINT_VERSION, r->ck.id.installation);
	if (rc == 0)
		rc = floe_json_write_str(&b, r->set.cfg->agent.id, strlen(r->set.cfg->agent.id));
	if (rc == 0)
		rc = floe_buf_printf(&b,
				     ",\"last_seq\":%" PRIu64 ",\"committed_seq\":%" PRId64
				     ",\"committed_version\":%" PRId64 ",\"table_uuid\":",
				     last_seq, r->ck.committed_seq, r->ck.committed_version);
	if (rc == 0)
		rc = floe_json_write_str(&b, r->ck.table_uuid, strlen(r->ck.table_uuid));
	/* The table's last-sequence-number after that commit, once known (a checkpoint
	 * without it reads as 0: not recorded). */
	if (rc == 0 && r->ck.committed_snapseq > 0)
		rc = floe_buf_printf(&b, ",\"committed_sequence_number\":%" PRId64,
				     r->ck.committed_snapseq);
	/* Only after a rowless seal (runner_agg.c): a checkpoint without it reads as 0. */
	if (rc == 0 && sub)
		rc = floe_buf_printf(&b, ",\"rowless_seals\":%" PRIu64, sub);
	/* With further raw tables: each one's last entry sealed (runner_seal.c). */
	for (size_t k = 1; rc == 0 && k < r->nraw; k++) {
		rc = floe_buf_puts(&b, k == 1 ? ",\"tables\":{" : ",");
		if (rc == 0)
			rc = floe_json_write_str(&b, r->raw[k].cfg->name, strlen(r->raw[k].cfg->name));
		if (rc == 0)
			rc = floe_buf_printf(&b, ":%" PRIu64 "%s", r->raw[k].next_seq - 1,
					     k + 1 == r->nraw ? "}" : "");
	}
	if (rc == 0)
		rc = floe_buf_puts(&b, ",\"positions\":\"");
	if (rc == 0)
		rc = floe_hex_put(&b, r->ck.pos, r->ck.pos_len);
	if (rc == 0)
		rc = floe_buf_puts(&b, "\"}");
	if (rc == 0)
		rc = floe_blobfile_save(r->set.checkpoint_path, b.data, b.len);
	floe_buf_fini(&b);
	return rc;
}

static void table_uuid(const struct floe_runner *r, char out[64])
{
	const char *u = floe_ice_meta_uuid(floe_table_meta(floe_run_table(r)));
	snprintf(out, 64, "%s", u ? u : "");
}

void floe_runner_note_committed(struct floe_runner *r, int64_t seq, int64_t version,
				int64_t snapseq, const char *uuid)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (seq <= r->ck.committed_seq)
		return;
	r->ck.committed_seq = seq;
	r->ck.committed_version = version;
	r->ck.committed_snapseq = snapseq;
	snprintf(r->ck.table_uuid, sizeof(r->ck.table_uuid), "%s", uuid);
	/* Before the first seal there are no positions to keep: the next seal writes it. */
	if (!r->ck.pos)
		return;
	int rc = floe_runner_save_checkpoint(r, r->ck.seq, r->ck.sub, r->ck.pos, r->ck.pos_len);
	if (rc)
		floe_warn("runner: recording commit-seq %" PRId64 " in %s failed: %s", seq,
			  r->set.checkpoint_path, floe_strerror(rc));
}

struct loaded_checkpoint {
	int version;		   /* 0 when there is none */
	uint64_t last_seq;	   /* 0 when there is none */
	uint64_t sub;		   /* rowless seals since last_seq (0 when not recorded) */
	int64_t committed_seq;	   /* -1: no record (none, or a version 1 checkpoint) */
	int64_t committed_version; /* 0: no record */
	int64_t committed_snapseq; /* the table's last-sequence-number then; 0: no record */
	char table_uuid[64];	   /* "" with no record */
	uint8_t *pos;		   /* owned; NULL when there is none */
	size_t len;
};

/* Reads a version 1 or 2 checkpoint's fields into ck. A checkpoint is this installation's
 * whatever agent id it names: a changed agent.id keeps the positions. */
static int parse_checkpoint(struct floe_runner *r, const struct floe_json *root,
			    struct loaded_checkpoint *ck, struct floe_err *err)
{
	int64_t version, seq;
	const char *hex, *agent, *inst = NULL, *uuid = "";
	if (floe_json_get_int(root, "version", &version) || (version != 1 && version != CHECKPOINT_VERSION) ||
	    floe_json_get_int(root, "last_seq", &seq) || seq < 0 || floe_json_get_str(root, "agent_id", &agent) ||
	    floe_json_get_str(root, "positions", &hex) ||
	    (version == 2 && (floe_json_get_str(root, "installation", &inst) ||
			      floe_json_get_int(root, "committed_seq", &ck->committed_seq) ||
			      floe_json_get_int(root, "committed_version", &ck->committed_version) ||
			      floe_json_get_str(root, "table_uuid", &uuid)))) {
		return floe_err_set(err, FLOE_ECORRUPT,
				    "checkpoint %s: %s (a field is missing or out of range)",
				    r->set.checkpoint_path, floe_strerror(FLOE_ECORRUPT));
	}
	if (inst && strcmp(inst, r->ck.id.installation) != 0)
		return floe_err_set(
		    err, FLOE_EIDENTITY,
		    "checkpoint %s belongs to installation %s, but this state_dir is installation "
		    "%s (%s/%s): its files come from two installations; restore the matching "
		    "installation file, or empty state_dir to start over",
		    r->set.checkpoint_path, inst, r->ck.id.installation, r->set.state_dir,
		    FLOE_IDENTITY_FILE);
	if (strcmp(agent, r->set.cfg->agent.id) != 0)
		floe_warn("runner: agent.id changed from %s to %s; the positions are kept "
			  "(installation %s)",
			  agent, r->set.cfg->agent.id, r->ck.id.installation);
	int64_t sub = 0;
	if (floe_json_get_int(root, "rowless_seals", &sub) || sub < 0)
		sub = 0;
	if (floe_json_get_int(root, "committed_sequence_number", &ck->committed_snapseq) ||
	    ck->committed_snapseq < 0)
		ck->committed_snapseq = 0;
	const struct floe_json *tables = floe_json_get(root, "tables");
	for (size_t k = 1; k < r->nraw; k++)
		if (floe_json_get_int(tables, r->raw[k].cfg->name, &r->raw[k].ck_sealed) ||
		    r->raw[k].ck_sealed < 0)
			r->raw[k].ck_sealed = -1;
	ck->last_seq = (uint64_t)seq;
	ck->sub = (uint64_t)sub;
	ck->version = (int)version;
	snprintf(ck->table_uuid, sizeof(ck->table_uuid), "%s", uuid);
	return floe_hex_decode(r->alloc, hex, strlen(hex), &ck->pos, &ck->len);
}

/* Loads the checkpoint into ck (all empty when there is none). */
/* A checkpoint that fails its checksum is set aside, counted and said, and the start
 * goes on as if there were none: the positions come from the newest spool entry if there
 * is one, else each input starts at its start_at, which may read lines twice or skip
 * some. Stopping instead would stop the device for good (every restart the same),
 * losing everything that comes after. */
static int set_aside(struct floe_runner *r)
{
	char to[FLOE_PATH_MAX];
	int rc = floe_blobfile_quarantine(r->set.checkpoint_path, to, sizeof(to));
	if (rc) {
		floe_error("runner: checkpoint %s is corrupt and cannot be moved aside: %s",
			   r->set.checkpoint_path, floe_strerror(rc));
		return FLOE_ECORRUPT;
	}
	r->stats.state_damaged++;
	floe_error("runner: checkpoint %s is corrupt (its checksum fails): moved to %s; the "
		   "input positions are taken from the newest spool entry, or each input starts "
		   "at its start_at, so lines may be read twice or skipped",
		   r->set.checkpoint_path, to);
	return 0;
}

static int load_checkpoint(struct floe_runner *r, struct loaded_checkpoint *ck,
			   struct floe_err *err)
{
	uint8_t *blob = NULL;
	size_t blen = 0;
	struct floe_json_doc *doc = NULL;
	struct floe_err e = {0};
	memset(ck, 0, sizeof(*ck));
	ck->committed_seq = -1;
	int rc = floe_blobfile_load(r->alloc, r->set.checkpoint_path, &blob, &blen);
	if (rc == -ENOENT)
		return 0;
	if (rc == FLOE_ECORRUPT)
		return set_aside(r);
	if (rc == 0)
		rc = floe_json_parse(r->alloc, (const char *)blob, blen, 2 * POSITIONS_MAX + 4096, &doc, NULL);
	if (rc == 0)
		rc = parse_checkpoint(r, floe_json_root(doc), ck, &e);
	if (rc && e.msg[0] && err)
		*err = e;
	else if (rc)
		floe_err_set(
		    err, rc,
		    "checkpoint %s: %s (expected floe's checkpoint file; move it aside to start "
		    "over from each input's start_at)",
		    r->set.checkpoint_path, floe_strerror(rc));
	floe_json_doc_free(doc);
	floe_free(r->alloc, blob);
	return rc;
}

int floe_runner_check_behind(const struct floe_runner *r, const struct floe_table *t,
			     struct floe_err *err)
{
	const struct run_committer *c = &r->com;
	const struct floe_ice_meta *m = floe_table_meta(t);
	const char *uuid = floe_ice_meta_uuid(m);
	int64_t version = floe_table_version(t), last = floe_ice_meta_last_sequence(m);
	int64_t committed = floe_table_committed_seq(t, r->ck.id.installation);
	/* Another table (another table-uuid) holds nothing of the record; a table whose
	 * last-sequence-number reached the record's moved on since (another engine's
	 * snapshot expiry removes this installation's commit-seqs with the snapshots, and
	 * the metadata versions go on growing). */
	if ((c->expect_uuid[0] && (!uuid || strcmp(c->expect_uuid, uuid) != 0)) ||
	    (c->expect_committed <= committed && c->expect_version <= version) ||
	    (c->expect_snapseq > 0 && last >= c->expect_snapseq))
		return 0;
	char held[48] = "none";
	if (committed >= 0)
		snprintf(held, sizeof(held), "up to commit-seq %" PRId64, committed);
	return floe_err_set(
	    err, FLOE_EBEHIND,
	    "the table %s is behind this agent: installation %s committed up to commit-seq %" PRId64
	    " (the table was then at metadata v%" PRId64 ", last-sequence-number %" PRId64
	    "), but the table holds its commits %s and is at v%" PRId64 ", last-sequence-number "
	    "%" PRId64 ". Commits were lost from the table (a metadata file deleted, or the table "
	    "restored from an older copy); their rows are not in it. Restore the table's "
	    "metadata; to accept the table as it is, move %s aside (inputs then start again from "
	    "start_at)",
	    floe_table_location(t), r->ck.id.installation, c->expect_committed, c->expect_version,
	    c->expect_snapseq, held, version, last, r->set.checkpoint_path);
}

/* The table must hold every commit this installation recorded: one found behind the
 * record lost commits (a metadata file deleted, or the table restored from an older
 * copy), and carrying on would commit on top of the loss without a word. The record is
 * the committer's too (com.expect_*), for a table opened later. */
static int check_not_behind(struct floe_runner *r, struct loaded_checkpoint *ck,
			    struct floe_err *err)
{
	char uuid[64];
	table_uuid(r, uuid);
	if (ck->table_uuid[0] && strcmp(ck->table_uuid, uuid) != 0) {
		/* Another table: lake.warehouse changed, or the table was made anew after all of
		 * its metadata was deleted. Nothing of it can be behind; the positions go on. */
		floe_warn(
		    "runner: %s is not the table this installation committed to (table-uuid %s, "
		    "now %s): the positions are kept, and lines from here on go to this table",
		    floe_table_location(floe_run_table(r)), ck->table_uuid, uuid);
		ck->committed_seq = -1;
		ck->committed_version = 0;
		ck->committed_snapseq = 0;
		snprintf(ck->table_uuid, sizeof(ck->table_uuid), "%s", uuid);
	}
	r->com.expect_committed = ck->committed_seq;
	r->com.expect_version = ck->committed_version;
	r->com.expect_snapseq = ck->committed_snapseq;
	snprintf(r->com.expect_uuid, sizeof(r->com.expect_uuid), "%s", ck->table_uuid);
	return floe_runner_check_behind(r, floe_run_table(r), err);
}

/* Start-up: drop spool entries that the table already holds, find the newest durable
 * positions (the checkpoint, or a newer seal in the spool) and the next sequence. */
/* Every seal after the table's last commit of this installation, up to the checkpoint's,
 * must still be in the spool (seqs, ascending; 0 for one set aside as corrupt). One that
 * is not was deleted while the agent was down, or dropped by spool.policy drop_oldest:
 * its lines are not in the table and the positions are past them, so they cannot be
 * read again. Said loudly and counted, never silent. */
static void report_missing(struct floe_runner *r, const uint64_t *seqs, size_t n, int64_t committed,
			   uint64_t last)
{
	uint64_t from = committed < 0 ? 1 : (uint64_t)committed + 1;
	if (last < from)
		return;
	/* Entries set aside as corrupt (0 here) were reported when they were; count them as
	 * present so as not to report them twice. */
	uint64_t present = 0, first = from;
	bool gap = false;
	for (size_t j = 0; j < n; j++) {
		if (seqs[j] == 0) {
			present++;
		} else if (seqs[j] >= from && seqs[j] <= last) {
			present++;
			if (!gap && seqs[j] == first)
				first++;
			else
				gap = true;
		}
	}
	uint64_t want = last - from + 1;
	if (present >= want)
		return;
	uint64_t missing = want - present;
	r->stats.spool_lost_entries += missing;
	floe_error("runner: %" PRIu64 " sealed spool entries from %" PRIu64 " to %" PRIu64
		   " are missing from %s and were never committed (deleted, or dropped by "
		   "spool.policy drop_oldest): their lines are lost and cannot be read again",
		   missing, first, last, floe_spool_dir(r->raw[0].spool));
}

/* The newest positions and the highest sequence in the spool. */
struct newest {
	uint8_t *pos; /* owned: the checkpoint's, or a newer entry's */
	size_t len;
	uint64_t seq;
	uint64_t max_seq;
	bool newer; /* a spool entry is newer than the checkpoint */
};

/* Loads every entry of seqs[0..n) (a corrupt one goes to quarantine, its seq set to 0):
 * one newer than the checkpoint's last_seq gives its positions to nw. */
static int newest_in_spool(struct floe_runner *r, uint64_t *seqs, size_t n, uint64_t last_seq,
			   struct newest *nw, struct floe_err *err)
{
	for (size_t i = 0; i < n; i++) {
		struct floe_spool_entry *e = NULL;
		int rc = floe_output_load(r->raw[0].out, seqs[i], &e);
		if (rc == FLOE_ECORRUPT) {
			seqs[i] = 0; /* quarantined (logged): skipped below */
			continue;
		}
		if (rc)
			return floe_err_set(err, rc, "spool entry %" PRIu64 " in %s: %s", seqs[i],
					    floe_spool_dir(r->raw[0].spool), floe_strerror(rc));
		if (seqs[i] > last_seq) {
			floe_free(r->alloc, nw->pos);
			nw->pos = e->positions;
			nw->len = e->positions_len;
			nw->seq = seqs[i];
			nw->newer = true;
			e->positions = NULL;
			e->positions_len = 0;
		}
		if (seqs[i] > nw->max_seq)
			nw->max_seq = seqs[i];
		floe_spool_entry_free(r->alloc, e);
	}
	return 0;
}

/* What the table (or, without it, the checkpoint) says was committed, into *committed
 * and the runner's record of it. Without the table (the store was away at the start) the
 * checkpoint's record is all there is: the committer checks the table against it at its
 * first contact, and drops entries the table already holds before each commit. A table
 * behind the record is let go as if it had been away (floe_output_set_behind): only its
 * commits wait, and the committer reads and checks it again at every commit. */
static void adopt_committed(struct floe_runner *r, struct loaded_checkpoint *ck,
			    int64_t *committed)
{
	struct floe_err e = {0};
	*committed = ck->committed_seq;
	if (floe_run_table(r)) {
		int64_t held = floe_table_committed_seq(floe_run_table(r), r->ck.id.installation);
		if (check_not_behind(r, ck, &e) == FLOE_EBEHIND)
			floe_output_set_behind(r->raw[0].out, &e);
		else if (held > ck->committed_seq)
			*committed = held;
	} else {
		r->com.expect_committed = ck->committed_seq;
		r->com.expect_version = ck->committed_version;
		r->com.expect_snapseq = ck->committed_snapseq;
		snprintf(r->com.expect_uuid, sizeof(r->com.expect_uuid), "%s", ck->table_uuid);
	}
	r->ck.committed_seq = *committed > ck->committed_seq ? *committed : ck->committed_seq;
	r->ck.committed_version = *committed > ck->committed_seq
				      ? floe_table_version(floe_run_table(r))
				      : ck->committed_version;
	r->ck.committed_snapseq =
	    *committed > ck->committed_seq
		? floe_ice_meta_last_sequence(floe_table_meta(floe_run_table(r)))
		: ck->committed_snapseq;
	if (r->ck.committed_seq >= 0 && floe_run_table(r))
		table_uuid(r, r->ck.table_uuid);
	else if (!floe_run_table(r))
		snprintf(r->ck.table_uuid, sizeof(r->ck.table_uuid), "%s", ck->table_uuid);
}

/* Further raw table k at start-up, once the logs table's recovery knows whether the last
 * seal was durable (keep: its logs entry is there, or the checkpoint has no record of
 * k): entries after the checkpoint's record of k belong to a seal that never became
 * durable and go (their lines are read again); entries the table holds go; the next
 * entry is numbered past every one the table or the spool used. */
static int recover_table(struct floe_runner *r, size_t k, bool keep, struct floe_err *err)
{
	struct run_table *rt = &r->raw[k];
	int rc = 0;
	struct floe_output_report landed = {0};
	if (!keep && rt->ck_sealed >= 0)
		rc = floe_output_forget_after(rt->out, (uint64_t)rt->ck_sealed);
	if (rc == 0 && floe_output_table(rt->out))
		rc = floe_output_drop_landed(rt->out, floe_output_committed(rt->out), &landed);
	if (rc)
		return floe_err_set(err, rc, "cleaning spool %s: %s", rt->spool_dir,
				    floe_strerror(rc));
	uint64_t used = floe_output_last_seq(rt->out);
	if (rt->ck_sealed > 0 && (uint64_t)rt->ck_sealed > used)
		used = (uint64_t)rt->ck_sealed;
	rt->next_seq = used + 1;
	return 0;
}

int floe_runner_recover(struct floe_runner *r, struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct loaded_checkpoint ck;
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = load_checkpoint(r, &ck, err);
	if (rc)
		return rc;
	uint8_t *pos = ck.pos;
	size_t pos_len = ck.len;
	int64_t committed;
	adopt_committed(r, &ck, &committed);
	uint64_t max_seq = ck.last_seq;
	if (committed > 0 && (uint64_t)committed > max_seq)
		max_seq = (uint64_t)committed;
	if ((rc = floe_spool_list(r->raw[0].spool, &seqs, &n))) {
		floe_err_set(err, rc, "spool %s: %s", floe_spool_dir(r->raw[0].spool),
			     floe_strerror(rc));
		goto out;
	}
	/* First the newest positions: a seal newer than the checkpoint (a crash came between
	 * the two writes) holds newer ones. They go to the checkpoint before any entry is
	 * removed, here or by the first commit, or a restart would read those lines again. */
	struct newest nw = {pos, pos_len, ck.last_seq, max_seq, false};
	rc = newest_in_spool(r, seqs, n, ck.last_seq, &nw, err);
	pos = nw.pos;
	pos_len = nw.len;
	uint64_t pos_seq = nw.seq;
	bool newer = nw.newer;
	/* A raw entry newer than the checkpoint has its own positions: no rowless seal. */
	uint64_t pos_sub = newer ? 0 : ck.sub;
	max_seq = nw.max_seq;
	if (rc)
		goto out;
	report_missing(r, seqs, n, committed, ck.last_seq);
	for (size_t k = 1; k < r->nraw; k++)
		if ((rc = recover_table(r, k, newer || !ck.version || r->raw[k].ck_sealed < 0, err)))
			goto out;
	/* A checkpoint of an older floe (or a missing committed record) is rewritten in the
	 * current format now, so that it names this installation from the start. */
	if (pos &&
	    (newer || ck.version != CHECKPOINT_VERSION || ck.committed_seq != r->ck.committed_seq ||
	     strcmp(ck.table_uuid, r->ck.table_uuid) != 0) &&
	    (rc = floe_runner_save_checkpoint(r, pos_seq, pos_sub, pos, pos_len))) {
		floe_err_set(err, rc, "writing checkpoint %s failed: %s", r->set.checkpoint_path,
			     floe_strerror(rc));
		goto out;
	}
	/* Entries the table holds go (their rows were counted by the commit that landed). */
	struct floe_output_report landed = {0};
	if (floe_run_table(r) && (rc = floe_output_drop_landed(r->raw[0].out, committed, &landed))) {
		floe_err_set(err, rc, "cleaning spool %s: %s", floe_spool_dir(r->raw[0].spool),
			     floe_strerror(rc));
		goto out;
	}
	if (pos && (rc = restore_positions(r, pos, pos_len))) {
		floe_err_set(err, rc, "checkpoint %s: the input positions are unreadable: %s",
			     r->set.checkpoint_path, floe_strerror(rc));
		goto out;
	}
	if (pos && pos != r->ck.pos) {
		/* Kept for rewriting the checkpoint after a commit. */
		floe_free(r->alloc, r->ck.pos);
		r->ck.pos = pos;
		r->ck.pos_len = pos_len;
		r->ck.seq = pos_seq;
		r->ck.sub = pos_sub;
		pos = NULL;
	}
	/* Past every number the logs table's output used, as its record of its last commit
	 * knows it too: a checkpoint set aside while the store is away and the spool is
	 * empty must not number seals from 1 again (the table would take them for commits
	 * it already holds). */
	uint64_t used = floe_output_last_seq(r->raw[0].out);
	if (used > max_seq)
		max_seq = used;
	r->raw[0].next_seq = max_seq + 1;
	/* The aggregations' open windows as they were at the seal whose positions reading
	 * resumes from. */
	if ((rc = floe_run_aggs_restore(r, pos_seq, pos_sub, err)))
		goto out;
	floe_info("runner: recovered: installation %s, next seal %" PRIu64
		  ", table holds its commits up to %" PRId64 ", %zu spool entries",
		  r->ck.id.installation, r->raw[0].next_seq, committed, n);
out:
	floe_free(r->alloc, seqs);
	if (pos != r->ck.pos)
		floe_free(r->alloc, pos);
	return rc;
}
