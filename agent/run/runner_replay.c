/* Rebuilding a damaged spool entry from its inputs. A spool file that no longer matches
 * the size and checksum its entry recorded is never uploaded; its rows are read again
 * from the input positions where the seal started and where it ended, when the files
 * still hold those bytes, and sealed again as the same entry (same seq, same positions),
 * so that the table gets every line exactly once. Whether the bytes are the same is
 * decided the way the tail decides it on a restart: a file is known by its device and
 * inode, its first bytes (fingerprint) and the bytes just before a position (pre-hash);
 * both the start and the end positions must pass that check, and the re-read must end
 * exactly at the end positions (and, for inputs without an assembler, give as many
 * rows as the entry recorded). Otherwise the rows are lost, and that is counted and
 * logged with the files and byte ranges. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/input/journal_in.h"
#include "agent/input/syslog_in.h"
#include "agent/input/tail.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/run/span.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Read passes in a row that may take nothing of a seal's files (see read_span). */
#define RESCUE_IDLE 1024u

/* A file the tail re-reading an input follows: which span file it is (NULL: none, its
 * lines are not in the seal). */
struct known {
	uint64_t file_id;
	struct floe_span_file *span;
};

struct replay {
	struct floe_runner *r;
	const struct floe_spool_entry *e;
	size_t input;
	struct floe_span_file *files;
	size_t nfiles;
	uint64_t *reached; /* per span file: the end of the last byte taken */
	struct known *known;
	size_t nknown, capknown;
	struct floe_assemble *as; /* a fresh assembler when the input has one */
	uint64_t rows;
	int err;
};

static struct floe_span_file *span_of(struct replay *p, const struct floe_tail_line *line)
{
	for (size_t k = 0; k < p->nknown; k++)
		if (p->known[k].file_id == line->file_id)
			return p->known[k].span;
	/* First line of this file: which span file is it? By identity, then by path. */
	struct floe_span_file *span = NULL;
	struct floe_fs_stat st;
	if (floe_fs_stat(line->path, &st) == 0)
		for (size_t i = 0; i < p->nfiles && !span; i++)
			if (p->files[i].dev == st.dev && p->files[i].ino == st.ino)
				span = &p->files[i];
	for (size_t i = 0; i < p->nfiles && !span; i++)
		if (strcmp(p->files[i].path, line->path) == 0)
			span = &p->files[i];
	if (p->nknown == p->capknown) {
		size_t cap = p->capknown ? p->capknown * 2 : 16;
		struct known *k = floe_realloc(&p->r->alloc, p->known, cap * sizeof(*k));
		if (!k) {
			p->err = FLOE_ENOMEM;
			return NULL;
		}
		p->known = k;
		p->capknown = cap;
	}
	p->known[p->nknown++] = (struct known){line->file_id, span};
	return span;
}

static int add_rec(struct replay *p, const struct floe_assemble_rec *a)
{
	int rc = floe_runner_add_record(p->r, p->input, a, p->e->created_us, p->e->seq);
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

static bool all_reached(const struct replay *p)
{
	for (size_t i = 0; i < p->nfiles; i++)
		if (p->files[i].readable && p->reached[i] < p->files[i].to)
			return false;
	return true;
}

/* A line of the re-reading tail: the part before the file's end position goes in. */
static int on_line(void *ctx, const struct floe_tail_line *line)
{
	struct replay *p = ctx;
	struct floe_span_file *span = span_of(p, line);
	if (p->err)
		return p->err;
	if (!span || !span->readable || line->offset >= span->to)
		return all_reached(p) ? 1 : 0;
	/* A line cut at the end position: the seal ended in it (a partial last line that
	 * `run --once` took; the rest came later as a line of its own). */
	size_t len = line->len;
	uint64_t end = line->end;
	if (end > span->to) {
		end = span->to;
		if (len > span->to - line->offset)
			len = (size_t)(span->to - line->offset);
	}
	size_t k = (size_t)(span - p->files);
	if (end > p->reached[k])
		p->reached[k] = end;
	struct floe_assemble_rec a = {.file_id = line->file_id, .path = line->path, .msg = line->data,
				      .len = len, .offset = (int64_t)line->offset};
	int rc = p->as ? floe_assemble_push(p->as, line->file_id, line->path, line->data, len,
					    (int64_t)line->offset, (int64_t)end, 0, on_record, p)
		       : add_rec(p, &a);
	if (rc < 0)
		return p->err ? p->err : (p->err = rc);
	return all_reached(p) ? 1 : 0;
}

/* A tail over input i restored to blob and scanned. *changed: the scan found that a file
 * the positions name no longer holds the bytes before its position (reset). */
static int open_tail(struct floe_runner *r, size_t i, const uint8_t *blob, size_t len, struct floe_tail **out,
		     bool *changed)
{
	struct floe_preflight_tail to;
	floe_run_tail_options(&r->set, i, r->env.o.clock, &to);
	to.o.start_at_end = false; /* files found during the seal were read from 0 */
	to.o.partial_idle = false; /* the seal's partial lines were complete when read */
	struct floe_tail *t = NULL;
	int rc = floe_tail_new(&r->alloc, &to.o, &t);
	if (rc)
		return rc;
	if ((rc = floe_tail_restore(t, blob, len)) == 0)
		rc = floe_tail_scan(t);
	if (rc) {
		floe_tail_free(t);
		return rc;
	}
	struct floe_tail_stats st;
	floe_tail_get_stats(t, &st);
	*changed = st.resets > 0;
	*out = t;
	return 0;
}

/* The sum of the bytes taken from the seal's files so far. */
static uint64_t taken(const struct replay *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->nfiles; i++)
		n += p->reached[i];
	return n;
}

/* Reads the seal's bytes of input p->input with tail t into the batch. */
static int read_span(struct replay *p, struct floe_tail *t)
{
	int rc = 0;
	bool flushed = false;
	unsigned idle = 0;
	uint64_t last = 0;
	/* Bounded: a pass reads at least a byte or ends the loop, and a stop signal ends it
	 * (the entry is rebuilt at the next commit). Files that are not the seal's are read
	 * too (the tail reads them in turn) and may grow while they are: after RESCUE_IDLE
	 * passes (of up to READ_BUDGET bytes) that took nothing of the seal's files, the
	 * bytes still missing are taken as gone. */
	while (!all_reached(p) && idle < RESCUE_IDLE) {
		if (floe_run_stopping(p->r))
			return FLOE_EINVAL;
		size_t got = 0;
		rc = floe_tail_read(t, READ_BUDGET, on_line, p, &got);
		if (rc < 0)
			return p->err ? p->err : rc;
		uint64_t now = taken(p);
		idle = now == last ? idle + 1 : 0;
		last = now;
		if (got > 0)
			continue;
		/* At the end of what the files hold: a partial last line counts too. */
		if (flushed)
			break;
		flushed = true;
		do
			rc = floe_tail_flush_partial(t, on_line, p);
		while (rc == 1 && !all_reached(p));
		if (rc < 0)
			return p->err ? p->err : rc;
	}
	if (p->as) {
		do
			rc = floe_assemble_flush(p->as, on_record, p);
		while (rc == 1);
		if (rc < 0)
			return p->err ? p->err : rc;
	}
	return 0;
}

/* Logs what input i loses of entry e: each file's byte range, and why. why applies to
 * every file; without it, a file is at fault if it ended before its end position (the
 * others go with the entry, which is rebuilt whole or not at all). */
static void log_ranges(const struct replay *p, size_t i, const char *why)
{
	for (size_t k = 0; k < p->nfiles; k++) {
		const struct floe_span_file *f = &p->files[k];
		char tmp[128];
		const char *because = why;
		if (!because && p->reached[k] == f->to) {
			because = "lost with the rest of the entry";
		} else if (!because) {
			struct floe_fs_stat st;
			if (p->reached[k] <= f->from && floe_fs_stat(f->path, &st) != 0)
				because = "the file is gone";
			else
				because = tmp;
			snprintf(tmp, sizeof(tmp), "the file ends at byte %" PRIu64 ", before the seal's end",
				 p->reached[k] > f->from ? p->reached[k] : f->from);
		}
		floe_error("runner: spool entry %" PRIu64 ": input %s: %s bytes %" PRIu64 "-%" PRIu64
			   " cannot be read again (%s)",
			   p->e->seq, p->r->set.cfg->inputs[i].name, f->path, f->from, f->to, because);
	}
}

/* A syslog input's part of entry e: nothing to read again when it took no message between
 * the entry's start and end; otherwise those messages are gone (nobody can send them
 * again), which is logged and FLOE_ENOTFOUND. */
static int reread_syslog(const struct floe_spool_entry *e, const char *name, const uint8_t *from,
			 size_t from_len, const uint8_t *to, size_t to_len)
{
	uint64_t a = 0, b = 0;
	if (floe_syslog_in_blob_taken(from, from_len, &a) || floe_syslog_in_blob_taken(to, to_len, &b))
		return FLOE_ENOTFOUND;
	if (a == b)
		return 0;
	floe_error("runner: spool entry %" PRIu64 ": input %s: %" PRIu64 " syslog messages "
		   "received over the network cannot be read again",
		   e->seq, name, b - a);
	return FLOE_ENOTFOUND;
}

/* A journal input's part of entry e: nothing when the cursor did not move. Reading the
 * journal again between two cursors is not done yet: those entries are counted lost,
 * logged with both cursors (journalctl --after-cursor shows them). */
static int reread_journal(const struct floe_spool_entry *e, const char *name, const uint8_t *from,
			  size_t from_len, const uint8_t *to, size_t to_len)
{
	const char *a, *b;
	size_t al, bl;
	if (floe_journal_in_blob_cursor(from, from_len, &a, &al) ||
	    floe_journal_in_blob_cursor(to, to_len, &b, &bl))
		return FLOE_ENOTFOUND;
	if (al == bl && memcmp(a, b, al) == 0)
		return 0;
	floe_error("runner: spool entry %" PRIu64 ": input %s: the journal entries after cursor "
		   "'%.*s' up to '%.*s' are not read again",
		   e->seq, name, (int)al, a, (int)bl, b);
	return FLOE_ENOTFOUND;
}

/* Re-reads input i's part of entry e into the batch. FLOE_ENOTFOUND when the bytes are
 * not there any more (logged). */
static int reread_input(struct floe_runner *r, const struct floe_spool_entry *e, size_t i, uint64_t *rows)
{
	const uint8_t *from, *to;
	size_t from_len, to_len;
	uint32_t nf, nt;
	struct replay p;
	memset(&p, 0, sizeof(p));
	p.r = r;
	p.e = e;
	p.input = i;
	int rc = floe_span_input(e->from, e->from_len, i, &nf, &from, &from_len);
	if (rc == 0)
		rc = floe_span_input(e->positions, e->positions_len, i, &nt, &to, &to_len);
	if (rc == 0 && r->in.syslogs[i])
		return reread_syslog(e, r->set.cfg->inputs[i].name, from, from_len, to, to_len);
	if (rc == 0 && r->in.journals[i])
		return reread_journal(e, r->set.cfg->inputs[i].name, from, from_len, to, to_len);
	if (rc == 0)
		rc = floe_span_files(&r->alloc, from, from_len, to, to_len, &p.files, &p.nfiles);
	if (rc)
		return rc == FLOE_ENOTFOUND || rc == FLOE_ECORRUPT ? FLOE_ENOTFOUND : rc;
	if (p.nfiles == 0) {
		floe_span_free(&r->alloc, p.files, p.nfiles);
		return 0;
	}
	struct floe_tail *t = NULL;
	bool changed = false;
	const char *why = NULL;
	if (!(p.reached = floe_calloc(&r->alloc, p.nfiles, sizeof(*p.reached)))) {
		rc = FLOE_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < p.nfiles && !why; k++)
		if (!p.files[k].readable)
			why = "the file went back to an earlier position during the seal";
	/* The end positions first: each file must still hold the bytes before them. */
	if (!why && (rc = open_tail(r, i, to, to_len, &t, &changed)) == 0) {
		floe_tail_free(t);
		t = NULL;
		if (changed)
			why = "the file no longer holds the bytes it had: rotated away, truncated or rewritten";
	}
	if (!why && rc == 0 && (rc = open_tail(r, i, from, from_len, &t, &changed)) == 0 && changed)
		why = "the file no longer holds the bytes it had: rotated away, truncated or rewritten";
	if (!why && rc == 0 && r->in.asm_[i]) {
		struct floe_assemble_options ao;
		floe_run_assemble_options(&r->set, i, &ao);
		rc = floe_assemble_new(&r->alloc, &ao, &p.as, NULL);
	}
	if (!why && rc == 0)
		rc = read_span(&p, t);
	bool short_read = false;
	for (size_t k = 0; k < p.nfiles && !why && rc == 0; k++)
		short_read = short_read || p.reached[k] != p.files[k].to;
	if (why || short_read) {
		log_ranges(&p, i, why);
		rc = FLOE_ENOTFOUND;
	}
	*rows += p.rows;
out:
	floe_assemble_free(p.as);
	floe_tail_free(t);
	floe_free(&r->alloc, p.known);
	floe_free(&r->alloc, p.reached);
	floe_span_free(&r->alloc, p.files, p.nfiles);
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

int floe_runner_reread(struct floe_runner *r, const struct floe_spool_entry *e)
{
	uint64_t recorded = floe_spool_entry_rows(e), rows = 0;
	if (!e->from || e->from_len == 0) {
		floe_error("runner: spool entry %" PRIu64 " (%" PRIu64 " rows) records no start positions "
			   "(written by an older floe): its rows cannot be read again",
			   e->seq, recorded);
		return FLOE_ENOTFOUND;
	}
	if (floe_batch_rows(r->b.batch) > 0)
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
	floe_batch_set_name_base(r->b.batch, next_name(e));
	bool raw = true;
	int rc = 0;
	for (size_t i = 0; i < r->in.n && rc == 0; i++) {
		if (!r->set.cfg->inputs[i].raw)
			continue; /* none of its records is in the entry */
		raw = raw && !r->in.asm_[i];
		rc = reread_input(r, e, i, &rows);
	}
	/* Without assemblers one line is one row: another count means other bytes. (An
	 * assembler's timeouts may have cut records elsewhere the first time.) */
	if (rc == 0 && ((raw && rows != recorded) || rows == 0)) {
		floe_error("runner: spool entry %" PRIu64 ": reading its input again gave %" PRIu64
			   " rows, the entry records %" PRIu64 ": its rows are lost", e->seq, rows, recorded);
		rc = FLOE_ENOTFOUND;
	}
	if (rc == 0)
		rc = floe_output_rebuilding(r->lake.out, e);
	if (rc == 0)
		rc = floe_batch_seal_range(r->b.batch, e->created_us, e->from, e->from_len,
					   e->positions, e->positions_len);
	if (rc) {
		floe_batch_abort(r->b.batch);
		return rc;
	}
	floe_warn("runner: spool entry %" PRIu64 " rebuilt from its input: %" PRIu64 " rows read again", e->seq,
		  rows);
	r->stats.spool_reread_entries++;
	r->stats.spool_reread_rows += rows;
	return 0;
}
