/* Rebuilding a damaged spool entry from its inputs. A spool file that no longer matches
 * the size and checksum its entry recorded is never uploaded; its rows are read again
 * from the input positions where the seal started and where it ended, when the inputs
 * still hold what they handed over then (floe_input_reread: each kind decides how it
 * knows), and sealed again as the same entry (same seq, same positions), so that the
 * table gets every line exactly once. The re-read must, for inputs without an
 * assembler, give as many rows as the entry recorded. Otherwise the rows are lost, and
 * that is counted and logged with what the inputs could not give again. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/run/span.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/log.h"
#include "platform/owner.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct replay {
	struct floe_runner *r;
	const struct floe_spool_entry *e;
	size_t input;
	size_t table;		  /* the raw table whose entry is rebuilt: its records alone */
	struct floe_assemble *as; /* a fresh assembler when the input has one */
	uint64_t rows;
	int err;
};

static int add_rec(struct replay *p, const struct floe_assemble_rec *a)
{
	int rc = floe_runner_add_record(p->r, p->input, a, p->e->created_us, p->table, p->e->seq);
	if (rc == 4)
		return 0; /* routed to another table, which holds it */
	if (rc == 2)
		rc = FLOE_ELIMIT; /* one entry cannot take it: more partitions than slots */
	if (rc < 0)
		return p->err = rc;
	p->rows++;
	return 0;
}

static int on_record(void *ctx, const struct floe_assemble_rec *a)
{
	return add_rec(ctx, a);
}

/* A line the input reads again, cut at the seal's end: into the assembler or the batch. */
static int on_line(void *ctx, const struct floe_input_line *line)
{
	struct replay *p = ctx;
	struct floe_assemble_rec a = {.file_id = line->file_id, .path = line->path, .msg = line->data,
				      .len = line->len, .offset = (int64_t)line->offset};
	int rc = p->as ? floe_assemble_push(p->as, line->file_id, line->path, line->data, line->len,
					    (int64_t)line->offset, (int64_t)line->end, 0, on_record, p)
		       : add_rec(p, &a);
	return rc < 0 ? (p->err ? p->err : (p->err = rc)) : 0;
}

/* A record the input maps itself, read again: into the batch as the entry's. */
static int on_input_record(void *ctx, struct floe_record *rec)
{
	struct replay *p = ctx;
	int rc = floe_runner_add_to(p->r, p->input, rec, p->table, p->e->seq);
	if (rc == 4)
		return 0; /* routed to another table, which holds it */
	if (rc == 2)
		rc = FLOE_ELIMIT;
	if (rc < 0)
		return p->err = rc;
	p->rows++;
	return 0;
}

static bool stopping(void *ctx)
{
	return floe_run_stopping(ctx);
}

/* Re-reads input i's part of entry e into the batch. FLOE_ENOTFOUND when what it handed
 * over is not there any more (logged). */
static int reread_input(struct floe_runner *r, size_t k, const struct floe_spool_entry *e, size_t i,
			uint64_t *rows)
{
	struct replay p = {.r = r, .e = e, .input = i, .table = k};
	struct floe_input_span sp = {.seq = e->seq, .name = r->set.cfg->inputs[i].name,
				     .stop = stopping, .stop_ctx = r};
	uint32_t nf, nt;
	int rc = floe_span_input(e->from, e->from_len, i, &nf, &sp.from, &sp.from_len);
	if (rc == 0)
		rc = floe_span_input(e->positions, e->positions_len, i, &nt, &sp.to, &sp.to_len);
	if (rc)
		return rc == FLOE_ENOTFOUND || rc == FLOE_ECORRUPT ? FLOE_ENOTFOUND : rc;
	if (r->in.asm_[i]) {
		struct floe_assemble_options ao;
		floe_run_assemble_options(&r->set, i, &ao);
		if ((rc = floe_assemble_new(r->alloc, &ao, &p.as, NULL)))
			return rc;
	}
	struct floe_input_sink sink = {on_line, on_input_record, &p};
	rc = floe_input_reread(r->in.all[i], &sp, &sink);
	if (rc < 0 && p.err && rc != FLOE_ENOTFOUND)
		rc = p.err;
	while (rc == 0 && p.as && (rc = floe_assemble_flush(p.as, on_record, &p)) == 1)
		;
	if (rc < 0 && p.err)
		rc = p.err;
	*rows += p.rows;
	floe_assemble_free(p.as);
	return rc;
}

/* The first index after e's files' (<seq>-<k>.parquet): a rebuilt entry's files take
 * new names, never those of the damaged ones (which an earlier attempt may have put in
 * the warehouse already). */
static size_t next_name(const struct floe_spool_entry *e)
{
	size_t base = 0;
	for (size_t i = 0; i < e->nfiles; i++) {
		const char *dash = strchr(e->files[i].name, '-');
		unsigned long long k = dash ? strtoull(dash + 1, NULL, 10) : 0;
		if (k + 1 > base)
			base = (size_t)(k + 1);
	}
	return base;
}

int floe_runner_reread(struct floe_runner *r, size_t k, const struct floe_spool_entry *e)
{
	struct floe_batch *b = r->raw[k].batch;
	FLOE_OWNER(FLOE_ROLE_MAIN);
	uint64_t recorded = floe_spool_entry_rows(e), rows = 0;
	if (!e->from || e->from_len == 0) {
		floe_error("runner: spool entry %" PRIu64 " (%" PRIu64 " rows) records no start positions "
			   "(written by an older floe): its rows cannot be read again",
			   e->seq, recorded);
		return FLOE_ENOTFOUND;
	}
	if (floe_batch_rows(b) > 0)
		return FLOE_EINVAL; /* commits run between seals; try again at the next one */
	uint32_t n = 0;
	const uint8_t *blob;
	size_t blen;
	if (floe_span_input(e->positions, e->positions_len, 0, &n, &blob, &blen) == FLOE_ECORRUPT ||
	    n != r->in.n) {
		floe_error("runner: spool entry %" PRIu64 " (%" PRIu64
			   " rows) was read from %u inputs, the "
			   "configuration has %zu: its rows cannot be read again",
			   e->seq, recorded, n, r->in.n);
		return FLOE_ENOTFOUND;
	}
	floe_batch_set_name_base(b, next_name(e));
	bool raw = true;
	int rc = 0;
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		if (!r->set.cfg->inputs[i].raw)
			continue; /* none of its records is in the entry */
		raw = raw && !r->in.asm_[i];
		rc = reread_input(r, k, e, i, &rows);
	}
	/* Without assemblers one line is one row: another count means other bytes. (An
	 * assembler's timeouts may have cut records elsewhere the first time.) */
	if (rc == 0 && ((raw && rows != recorded) || rows == 0)) {
		floe_error("runner: spool entry %" PRIu64 ": reading its input again gave %" PRIu64
			   " rows, the entry records %" PRIu64 ": its rows are lost", e->seq, rows, recorded);
		rc = FLOE_ENOTFOUND;
	}
	if (rc == 0)
		rc = floe_output_rebuilding(r->raw[k].out, e);
	if (rc == 0)
		rc = floe_batch_seal_range(b, e->created_us, e->from, e->from_len, e->positions,
					   e->positions_len);
	if (rc) {
		floe_batch_abort(b);
		return rc;
	}
	floe_warn("runner: spool entry %" PRIu64 " rebuilt from its input: %" PRIu64 " rows read again", e->seq,
		  rows);
	r->stats.spool_reread_entries++;
	r->stats.spool_reread_rows += rows;
	return 0;
}
