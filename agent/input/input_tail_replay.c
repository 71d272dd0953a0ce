/* A tail's part of a damaged seal read again (input.h's floe_input_reread). Whether the
 * bytes are the same is decided the way the tail decides it on a restart: a file is known
 * by its device and inode, its first bytes (fingerprint) and the bytes just before a
 * position (pre-hash); both the start and the end positions must pass that check, and the
 * re-read must end exactly at the end positions. Otherwise the rows are lost, and that is
 * logged with the files and byte ranges (FLOE_ENOTFOUND). */
#include "agent/input/input_impl.h"

#include "agent/input/tail.h"
#include "agent/input/tail_span.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Read passes in a row that may take nothing of a seal's files (see read_span). */
#define RESCUE_IDLE 1024u
#define RESCUE_BUDGET (1u << 20) /* bytes per read pass */

/* A file the tail re-reading an input follows: which span file it is (NULL: none, its
 * lines are not in the seal). */
struct known {
	uint64_t file_id;
	struct floe_span_file *span;
};

struct replay {
	struct floe_alloc *a;
	const struct floe_input_span *sp;
	const struct floe_input_sink *sink;
	struct floe_span_file *files;
	size_t nfiles;
	uint64_t *reached; /* per span file: the end of the last byte taken */
	struct known *known;
	size_t nknown, capknown;
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
		struct known *k = floe_realloc(p->a, p->known, cap * sizeof(*k));
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
	struct floe_input_line l = {line->path, line->offset, line->data, len, end, line->file_id};
	int rc = p->sink->line(p->sink->ctx, &l);
	if (rc < 0)
		return p->err ? p->err : (p->err = rc);
	return all_reached(p) ? 1 : 0;
}

/* A tail of o restored to blob and scanned. *changed: the scan found that a file the
 * positions name no longer holds the bytes before its position (reset). */
static int open_tail(struct floe_alloc *a, const struct floe_tail_options *o, const uint8_t *blob,
		     size_t len, struct floe_tail **out, bool *changed)
{
	struct floe_tail *t = NULL;
	int rc = floe_tail_new(a, o, &t);
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

/* Reads the seal's bytes with tail t into the sink. */
static int read_span(struct replay *p, struct floe_tail *t)
{
	int rc = 0;
	bool flushed = false;
	unsigned idle = 0;
	uint64_t last = 0;
	/* Bounded: a pass reads at least a byte or ends the loop, and a stop signal ends it
	 * (the entry is rebuilt at the next commit). Files that are not the seal's are read
	 * too (the tail reads them in turn) and may grow while they are: after RESCUE_IDLE
	 * passes (of up to RESCUE_BUDGET bytes) that took nothing of the seal's files, the
	 * bytes still missing are taken as gone. */
	while (!all_reached(p) && idle < RESCUE_IDLE) {
		if (p->sp->stop && p->sp->stop(p->sp->stop_ctx))
			return FLOE_EINVAL;
		size_t got = 0;
		rc = floe_tail_read(t, RESCUE_BUDGET, on_line, p, &got);
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
	return 0;
}

/* Logs what the input loses of the entry: each file's byte range, and why. why applies
 * to every file; without it, a file is at fault if it ended before its end position (the
 * others go with the entry, which is rebuilt whole or not at all). */
static void log_ranges(const struct replay *p, const char *why)
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
			   p->sp->seq, p->sp->name, f->path, f->from, f->to, because);
	}
}

#define CHANGED "the file no longer holds the bytes it had: rotated away, truncated or rewritten"

int floe_input_tail_reread(struct floe_alloc *a, const struct floe_tail_options *o,
			   const struct floe_input_span *sp, const struct floe_input_sink *sink)
{
	struct replay p;
	memset(&p, 0, sizeof(p));
	p.a = a;
	p.sp = sp;
	p.sink = sink;
	int rc = floe_span_files(a, sp->from, sp->from_len, sp->to, sp->to_len, &p.files, &p.nfiles);
	if (rc)
		return rc == FLOE_ENOTFOUND || rc == FLOE_ECORRUPT ? FLOE_ENOTFOUND : rc;
	if (p.nfiles == 0) {
		floe_span_free(a, p.files, p.nfiles);
		return 0;
	}
	struct floe_tail *t = NULL;
	bool changed = false;
	const char *why = NULL;
	if (!(p.reached = floe_calloc(a, p.nfiles, sizeof(*p.reached)))) {
		rc = FLOE_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < p.nfiles && !why; k++)
		if (!p.files[k].readable)
			why = "the file went back to an earlier position during the seal";
	/* The end positions first: each file must still hold the bytes before them. */
	if (!why && (rc = open_tail(a, o, sp->to, sp->to_len, &t, &changed)) == 0) {
		floe_tail_free(t);
		t = NULL;
		if (changed)
			why = CHANGED;
	}
	if (!why && rc == 0 && (rc = open_tail(a, o, sp->from, sp->from_len, &t, &changed)) == 0 &&
	    changed)
		why = CHANGED;
	if (!why && rc == 0)
		rc = read_span(&p, t);
	bool short_read = false;
	for (size_t k = 0; k < p.nfiles && !why && rc == 0; k++)
		short_read = short_read || p.reached[k] != p.files[k].to;
	if (why || short_read) {
		log_ranges(&p, why);
		rc = FLOE_ENOTFOUND;
	}
out:
	floe_tail_free(t);
	floe_free(a, p.known);
	floe_free(a, p.reached);
	floe_span_free(a, p.files, p.nfiles);
	return rc;
}
