/* Batch: partitioned streaming writers into the spool. */
#include "batch.h"

#include "agent/pipeline/parts.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/base/utf8.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t inside struct fragment */
#include <xxhash.h>

#define SORT_BUFFER_DEFAULT (4u << 20)
/* Records with a value this long or longer are checked against the memory budget before
 * they go in (memory_fits). Shorter ones are what the budget is sized for. */
#define LARGE_VALUE ((size_t)64 << 10)
/* Files a batch finishes early before it asks for a seal: the entry lists them all, and
 * their descriptions (name, column metrics) wait in memory until then. */
#define FILES_PER_SEAL 1024
/* The largest block the stage allocates at once (sortbuf.c's BLOCK_MAX). */
#define STAGE_BLOCK ((size_t)1 << 20)

/* An open writer and its temporary file. */
struct fragment {
	size_t part; /* partition number (floe_parts) */
	struct floe_pq_writer *w;
	struct floe_file *file;
	char name[64];
	int err; /* first sink error */
	size_t ncols; /* the writer's columns (the batch's) */
	/* The checksum of the file as it will be uploaded, computed as the writer streams
	 * its bytes out rather than by reading the file again: the spool entry records it
	 * and the commit checks it before the file leaves the spool. */
	XXH64_state_t hash;
};

/* A partition of the batch: it has a writer of its own (resident) from the moment it
 * came while one was free, or its rows wait in the stage (staging) and go to files of
 * their own when the stage is full and at the seal. */
struct part {
	struct fragment *f; /* resident: its writer */
	bool staging;
	bool flush;    /* picked for the stage's partial drain */
	size_t staged; /* bytes of its rows in the stage (staging partitions) */
};

struct floe_batch {
	struct floe_alloc *alloc;
	struct floe_part_spec spec;
	struct floe_batch_options opt;
	struct floe_spool *spool;
	struct floe_parts *parts;
	struct part *ps; /* by partition number */
	size_t ps_cap;
	struct fragment **open; /* resident writers, in the order they opened */
	size_t nopen;
	/* Files finished before the seal (closed, synced, still named .tmp: debris if the
	 * process dies before the entry that lists them), then at the seal all of them. */
	struct floe_spool_file *done;
	size_t ndone, done_cap;
	size_t nnamed; /* files named since the last seal */
	struct fragment *temp; /* the writer of a staging partition being flushed */
	bool seq_fixed;
	uint64_t seq;
	uint64_t rows;
	const char *why; /* why the batch asked for a seal (static), or NULL */
	size_t name_base; /* the first file of a seal is <seq>-<name_base>.parquet */
	struct floe_sortbuf *sort; /* NULL without sort_by */
	/* The rows of staging partitions: the sort buffer with sort_by, else a buffer of
	 * stage_buffer bytes made when a partition first finds no writer free. */
	struct floe_sortbuf *stage;
	size_t staged; /* bytes of staging partitions' rows in it */
	uint64_t replaced; /* invalid UTF-8 sequences replaced in the files finished */
	size_t ctx_bytes; /* a writer's compression contexts (floe_pq_writer_context_bytes) */
	struct floe_pq_column cols[FLOE_LOG_MAX_COLS]; /* the writers' columns */
	size_t ncols;
};

int floe_batch_new(struct floe_alloc *a, const struct floe_part_spec *spec,
		   const struct floe_batch_options *opt, struct floe_spool *spool, struct floe_batch **out)
{
	struct floe_batch *b = floe_calloc(a, 1, sizeof(*b));
	if (!b)
		return FLOE_ENOMEM;
	b->alloc = a;
	b->spec = *spec;
	b->opt = *opt;
	if (b->opt.max_writers == 0)
		b->opt.max_writers = 8;
	if (b->opt.stage_buffer == 0)
		b->opt.stage_buffer = SORT_BUFFER_DEFAULT;
	b->spool = spool;
	/* The keys are copied by the sort buffer; the options must not keep the caller's. */
	b->opt.sort_by = NULL;
	b->ncols = opt->cols ? opt->ncols : FLOE_LOG_NCOLS;
	if (b->ncols < FLOE_LOG_NCOLS || b->ncols > FLOE_LOG_MAX_COLS) {
		floe_free(a, b);
		return FLOE_EINVAL;
	}
	memcpy(b->cols, opt->cols ? opt->cols : floe_log_columns(), b->ncols * sizeof(b->cols[0]));
	b->opt.cols = NULL;
	int rc = FLOE_ENOMEM;
	b->open = floe_calloc(a, b->opt.max_writers, sizeof(*b->open));
	if (!b->open || floe_parts_new(a, &b->spec, &b->parts))
		goto out;
	if (opt->nsort_by &&
	    (rc = floe_sortbuf_new(a, opt->sort_by, opt->nsort_by,
				   opt->sort_buffer ? opt->sort_buffer : SORT_BUFFER_DEFAULT, &b->sort)))
		goto out;
	b->stage = b->sort;
	rc = floe_pq_writer_context_bytes(&b->opt.pq, &b->ctx_bytes);
out:
	if (rc) {
		floe_sortbuf_free(b->sort);
		floe_parts_free(b->parts);
		floe_free(a, b->open);
		floe_free(a, b);
		return rc;
	}
	*out = b;
	return 0;
}

static void tmp_path(const struct floe_batch *b, const char *name, char *out, size_t cap)
{
	snprintf(out, cap, "%s/%s.tmp", floe_spool_dir(b->spool), name);
}

/* Frees f's writer and file; its temporary file is removed unless keep. */
static void drop_fragment(struct floe_batch *b, struct fragment *f, bool keep)
{
	char path[FLOE_PATH_MAX];
	if (!f)
		return;
	floe_pq_writer_free(f->w);
	if (f->file)
		floe_file_close(f->file);
	if (!keep) {
		tmp_path(b, f->name, path, sizeof(path));
		floe_fs_unlink(path);
	}
	floe_free(b->alloc, f);
}

static void drop_done(struct floe_batch *b)
{
	struct floe_spool_entry e;
	memset(&e, 0, sizeof(e));
	for (size_t i = 0; i < b->ndone; i++) {
		char path[FLOE_PATH_MAX];
		if (!b->done[i].name)
			continue;
		tmp_path(b, b->done[i].name, path, sizeof(path));
		floe_fs_unlink(path);
	}
	e.files = b->done;
	e.nfiles = b->ndone;
	floe_spool_entry_fini(b->alloc, &e);
	b->done = NULL;
	b->ndone = b->done_cap = 0;
}

static void drop_fragments(struct floe_batch *b)
{
	for (size_t i = 0; i < b->nopen; i++)
		drop_fragment(b, b->open[i], false);
	drop_fragment(b, b->temp, false);
	b->temp = NULL;
	drop_done(b);
	if (b->stage)
		floe_sortbuf_clear(b->stage);
	if (b->ps)
		memset(b->ps, 0, floe_parts_count(b->parts) * sizeof(*b->ps));
	floe_parts_clear(b->parts);
	b->nopen = 0;
	b->nnamed = 0;
	b->staged = 0;
	b->replaced = 0;
	b->rows = 0;
	b->seq_fixed = false;
	b->why = NULL;
	b->name_base = 0;
}

void floe_batch_abort(struct floe_batch *b)
{
	drop_fragments(b);
}

void floe_batch_free(struct floe_batch *b)
{
	if (!b)
		return;
	drop_fragments(b);
	if (b->stage != b->sort)
		floe_sortbuf_free(b->stage);
	floe_sortbuf_free(b->sort);
	floe_parts_free(b->parts);
	floe_free(b->alloc, b->ps);
	floe_free(b->alloc, b->open);
	floe_free(b->alloc, b);
}

uint64_t floe_batch_rows(const struct floe_batch *b)
{
	return b->rows;
}

const char *floe_batch_seal_reason(const struct floe_batch *b)
{
	return b->why;
}

size_t floe_batch_files(const struct floe_batch *b)
{
	return b->ndone + b->nopen;
}

int floe_batch_set_columns(struct floe_batch *b, const struct floe_pq_column *cols, size_t ncols)
{
	/* A file is written under one set of columns: a batch that holds rows keeps its own
	 * until the seal empties it. */
	if (b->rows || b->nopen || b->ndone || b->staged)
		return FLOE_EINVAL;
	if (ncols < FLOE_LOG_NCOLS || ncols > FLOE_LOG_MAX_COLS)
		return FLOE_EINVAL;
	memcpy(b->cols, cols, ncols * sizeof(b->cols[0]));
	b->ncols = ncols;
	return 0;
}

static int sink(void *ctx, const void *data, size_t len)
{
	struct fragment *f = ctx;
	int rc = floe_file_write(f->file, data, len);
	if (rc && !f->err)
		f->err = rc;
	if (rc == 0)
		XXH64_update(&f->hash, data, len);
	return rc;
}

/* A writer for partition part, into a new temporary file. */
static int new_fragment(struct floe_batch *b, size_t part, struct fragment **out)
{
	char path[FLOE_PATH_MAX];
	struct fragment *f = floe_calloc(b->alloc, 1, sizeof(*f));
	if (!f)
		return FLOE_ENOMEM;
	f->part = part;
	f->ncols = b->ncols;
	snprintf(f->name, sizeof(f->name), "%020" PRIu64 "-%zu.parquet", b->seq, b->name_base + b->nnamed);
	XXH64_reset(&f->hash, 0);
	tmp_path(b, f->name, path, sizeof(path));
	int rc = floe_file_create(path, &f->file);
	if (rc == 0)
		rc = floe_pq_writer_new(b->alloc, b->cols, b->ncols, &b->opt.pq, sink, f, &f->w);
	if (rc) {
		drop_fragment(b, f, f->file == NULL);
		return rc;
	}
	b->nnamed++;
	*out = f;
	return 0;
}

static int write_row(struct fragment *f, const struct floe_record *rec)
{
	struct floe_pq_value values[FLOE_LOG_MAX_COLS];
	int rc = floe_pq_writer_add_row(f->w, floe_record_row(rec, values, f->ncols));
	return rc ? (f->err ? f->err : rc) : 0;
}

/* Whether f's file has reached its target size. The estimate counts compressed bytes
 * only, apart from the open pages: adding the open row group's uncompressed bytes (64 MiB
 * at most, and the row group rarely closes earlier on log text, whose small columns
 * compress to little) to the bytes written made 1 GiB of log lines 22 files of 12.8 MB
 * instead of 64 MiB ones, whatever the memory limit. */
static bool at_target(const struct floe_batch *b, const struct fragment *f)
{
	return floe_pq_writer_size_estimate(f->w) >= b->opt.target_file_size;
}

/* Finishes f's file (synced and closed, still under its temporary name) and describes it
 * in sf. */
static int finish_writer(struct floe_batch *b, struct fragment *f, struct floe_spool_file *sf)
{
	int rc = floe_pq_writer_finish(f->w);
	if (rc)
		return f->err ? f->err : rc;
	if ((rc = floe_file_sync(f->file)))
		return rc;
	rc = floe_file_close(f->file);
	f->file = NULL;
	if (rc)
		return rc;
	if (!(sf->name = floe_strdup(b->alloc, f->name)))
		return FLOE_ENOMEM;
	sf->records = (int64_t)floe_pq_writer_rows(f->w);
	sf->size = (int64_t)floe_pq_writer_file_size(f->w);
	sf->xxh64 = XXH64_digest(&f->hash);
	sf->has_xxh64 = true;
	struct floe_part_key key;
	floe_parts_key(b->parts, f->part, &key);
	floe_part_key_copy(&b->spec, &sf->key, &key);
	if ((rc = floe_batch_metrics_of(b->alloc, f->w, b->cols, b->ncols, &sf->metrics, &sf->nmetrics)))
		return rc;
	size_t nsplits;
	const int64_t *splits = floe_pq_writer_row_group_offsets(f->w, &nsplits);
	if (!(sf->splits = floe_calloc(b->alloc, nsplits ? nsplits : 1, sizeof(int64_t))))
		return FLOE_ENOMEM;
	memcpy(sf->splits, splits, nsplits * sizeof(int64_t));
	sf->nsplits = nsplits;
	return 0;
}

/* Finishes f into the batch's finished files and frees its writer (f too). On error f
 * stays the caller's, for the batch's abort. */
static int close_fragment(struct floe_batch *b, struct fragment *f)
{
	if (b->ndone == b->done_cap) {
		size_t cap = b->done_cap ? 2 * b->done_cap : 8;
		struct floe_spool_file *d = floe_realloc(b->alloc, b->done, cap * sizeof(*d));
		if (!d)
			return FLOE_ENOMEM;
		b->done = d;
		b->done_cap = cap;
	}
	struct floe_spool_file *sf = &b->done[b->ndone];
	memset(sf, 0, sizeof(*sf));
	int rc = finish_writer(b, f, sf);
	b->ndone++; /* what it holds is freed with the others, even on error */
	if (rc)
		return rc;
	b->replaced += floe_pq_writer_replaced(f->w);
	drop_fragment(b, f, true);
	return 0;
}

static size_t attrs_len(const size_t *lens, const char *const *p, size_t n)
{
	size_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += p && !p[i] ? 0 : lens[i];
	return t;
}

/* What adding rec with its message cut to msg_len bytes would take at most, as far as a
 * large value goes: the leaves it fills (invalid UTF-8 may triple when it is replaced, in
 * a copy), and a new writer's own state when fresh. */
static uint64_t record_need(const struct floe_batch *b, const struct floe_record *rec, size_t msg_len, bool fresh)
{
	size_t v[6 + FLOE_COLS_MAX] = {msg_len, attrs_len(rec->attr_key_lens, NULL, rec->nattrs),
				       attrs_len(rec->attr_val_lens, rec->attr_vals, rec->nattrs),
				       rec->source.len};
	size_t n = 4;
	if (floe_utf8_valid((const uint8_t *)rec->message.p, msg_len) != msg_len) {
		v[0] = 3 * msg_len;
		v[n++] = 3 * msg_len; /* the repaired copy */
	}
	/* A leaf per typed column: a string column's bytes, any other's one value. */
	for (size_t i = FLOE_LOG_NCOLS; i < b->ncols; i++) {
		const struct floe_pq_value *t = i - FLOE_LOG_NCOLS < rec->ntyped ? &rec->typed[i - FLOE_LOG_NCOLS] : NULL;
		v[n++] = t && !t->is_null && t->s ? t->len : 8;
	}
	return floe_pq_writer_row_need(&b->opt.pq, v, n, fresh, b->ctx_bytes);
}

/* Whether the budget can take need bytes more, and with a new writer beside others what
 * finishing them takes (they finish at the seal too, one at a time). */
static bool budget_fits(const struct floe_batch *b, uint64_t need, bool fresh)
{
	const struct floe_alloc *a = b->alloc;
	if (!a || a->limit == 0)
		return true;
	size_t used = floe_alloc_used(a);
	uint64_t free = a->limit > used ? a->limit - used : 0;
	if (fresh && b->nopen)
		need += floe_pq_writer_row_need(&b->opt.pq, NULL, 0, false, b->ctx_bytes);
	return need <= free;
}

/* Whether the budget can take rec (for a writer that exists, or a fresh one). */
static bool memory_fits(const struct floe_batch *b, const struct floe_record *rec, size_t msg_len, bool fresh)
{
	return budget_fits(b, record_need(b, rec, msg_len, fresh), fresh);
}

static bool large(const struct floe_record *rec)
{
	if (rec->message.len >= LARGE_VALUE || rec->source.len >= LARGE_VALUE)
		return true;
	/* The length first: it rules out all but a long string at one load a value (the
	 * other order cost about 45 instructions a line with ten typed columns). None to
	 * visit when the record's maker bounds them (floe_record.typed_len_max). */
	if (rec->typed_len_max == 0 || rec->typed_len_max >= LARGE_VALUE)
		for (size_t i = 0; i < rec->ntyped; i++)
			if (rec->typed[i].len >= LARGE_VALUE && rec->typed[i].s &&
			    !rec->typed[i].is_null)
				return true;
	return attrs_len(rec->attr_val_lens, rec->attr_vals, rec->nattrs) >= LARGE_VALUE ||
	       attrs_len(rec->attr_key_lens, NULL, rec->nattrs) >= LARGE_VALUE;
}

size_t floe_batch_room(const struct floe_batch *b, const struct floe_record *rec)
{
	size_t lo = 0, hi = rec->message.len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo + 1) / 2;
		if (memory_fits(b, rec, mid, true))
			lo = mid;
		else
			hi = mid - 1;
	}
	/* Not in the middle of a UTF-8 sequence: when the first byte left out continues one,
	 * that sequence's lead byte (at most 3 back) is left out too. */
	const uint8_t *p = (const uint8_t *)rec->message.p;
	if (lo < rec->message.len && (p[lo] & 0xc0) == 0x80) {
		size_t k = lo;
		while (k > 0 && lo - k < 3 && (p[k] & 0xc0) == 0x80)
			k--;
		if ((p[k] & 0xc0) != 0x80)
			lo = k;
	}
	return lo;
}

/* ---- the stage ---------------------------------------------------------------------- */

/* The stage's rows of a resident partition go to its writer; those of a staging one to a
 * writer of its own (rows come sorted by partition), finished when the next partition's
 * rows come and after the drain. */
static int drain_one(void *ctx, uint32_t tag, const struct floe_record *rec)
{
	struct floe_batch *b = ctx;
	struct part *p = &b->ps[tag];
	if (p->f)
		return write_row(p->f, rec);
	int rc;
	if (b->temp && b->temp->part != tag) {
		if ((rc = close_fragment(b, b->temp)))
			return rc;
		b->temp = NULL;
	}
	if (!b->temp && (rc = new_fragment(b, tag, &b->temp)))
		return rc;
	return write_row(b->temp, rec);
}

static bool pick_flush(void *ctx, uint32_t tag)
{
	const struct floe_batch *b = ctx;
	return b->ps[tag].flush || b->ps[tag].f;
}

/* Drains the stage's picked partitions (flush set, and the resident ones: with sort_by
 * their rows are there too), finishes the last staging partition's file and forgets
 * what the picked partitions had staged. */
static int drain_picked(struct floe_batch *b)
{
	int rc = floe_sortbuf_drain_some(b->stage, pick_flush, drain_one, b);
	if (rc == 0 && b->temp) {
		if ((rc = close_fragment(b, b->temp)))
			return rc;
		b->temp = NULL;
	}
	size_t n = floe_parts_count(b->parts);
	for (size_t i = 0; i < n; i++) {
		struct part *p = &b->ps[i];
		if (p->flush) {
			b->staged -= p->staged;
			p->staged = 0;
			p->flush = false;
		}
	}
	return rc;
}

/* Finishes the open writers, in the order they opened, after their rows in the sort
 * buffer; their partitions stage from now on. */
static int close_open(struct floe_batch *b)
{
	int rc = b->sort ? drain_picked(b) : 0;
	for (; rc == 0 && b->nopen > 0; b->nopen--) {
		struct fragment *f = b->open[0];
		size_t part = f->part;
		if ((rc = close_fragment(b, f)))
			break;
		b->ps[part].f = NULL;
		b->ps[part].staging = true;
		memmove(b->open, b->open + 1, (b->nopen - 1) * sizeof(*b->open));
	}
	return rc;
}

/* The stage is full. Resident partitions' rows go to their writers, and the staging
 * partitions with the most bytes there, whole, each to a file of its own, until half of
 * what staging partitions hold is free: a partition that is flushed early makes one
 * file of many rows, and those with few rows wait for the seal. Returns 0, 1 (a resident
 * file reached its target size), 2 (the budget cannot take another writer now: seal) or
 * an error. */
static int flush_stage(struct floe_batch *b)
{
	size_t n = floe_parts_count(b->parts), freed = 0;
	uint64_t writer = floe_pq_writer_row_need(&b->opt.pq, NULL, 0, true, b->ctx_bytes);
	int rc;
	if (b->staged && !budget_fits(b, writer, true)) {
		/* No room for a writer beside the open ones: they finish first, early, and
		 * their partitions stage from now on. */
		if ((rc = close_open(b)))
			return rc;
		if (!budget_fits(b, writer, false)) {
			b->why = "memory budget";
			return 2;
		}
	}
	while (freed < (b->staged + 1) / 2) {
		struct part *max = NULL;
		for (size_t i = 0; i < n; i++) {
			struct part *p = &b->ps[i];
			if (!p->flush && p->staged && (!max || p->staged > max->staged))
				max = p;
		}
		if (!max)
			break;
		max->flush = true;
		freed += max->staged;
	}
	if ((rc = drain_picked(b)))
		return rc;
	for (size_t i = 0; i < b->nopen; i++) {
		if (at_target(b, b->open[i])) {
			b->why = "target_file_size";
			return 1;
		}
	}
	/* Each finished file's description waits in memory for the entry. */
	if (b->ndone + b->nopen >= FILES_PER_SEAL) {
		b->why = "files per seal";
		return 1;
	}
	return 0;
}

/* A record larger than the whole stage: a run of its own, after the rows of its
 * partition in the stage. */
static int write_alone(struct floe_batch *b, size_t idx, const struct floe_record *rec)
{
	struct part *p = &b->ps[idx];
	if (p->f)
		return write_row(p->f, rec);
	p->flush = true;
	int rc = floe_sortbuf_drain_some(b->stage, pick_flush, drain_one, b);
	b->staged -= p->staged;
	p->staged = 0;
	p->flush = false;
	if (rc == 0 && !b->temp)
		rc = new_fragment(b, idx, &b->temp);
	if (rc == 0)
		rc = write_row(b->temp, rec);
	if (rc == 0 && (rc = close_fragment(b, b->temp)) == 0)
		b->temp = NULL;
	return rc;
}

/* Adds rec to the stage (tag: its partition), which is drained first when full. */
static int add_staged(struct floe_batch *b, size_t idx, const struct floe_record *rec)
{
	int full = 0, rc;
	if (!b->stage && (rc = floe_sortbuf_new(b->alloc, NULL, 0, b->opt.stage_buffer, &b->stage)))
		return rc;
	size_t cost = floe_sortbuf_cost(rec);
	/* The stage grows as rows come, as long as the budget keeps room beside it for the
	 * writer that a flush opens and for finishing the open ones; when it does not, the
	 * stage is full (and keeps its blocks, emptied by the flush). */
	uint64_t writer = floe_pq_writer_row_need(&b->opt.pq, NULL, 0, true, b->ctx_bytes);
	if (floe_sortbuf_rows(b->stage) > 0 && !floe_sortbuf_fits(b->stage, rec) &&
	    !budget_fits(b, cost + STAGE_BLOCK + writer, true))
		rc = 1;
	else
		rc = floe_sortbuf_add(b->stage, (uint32_t)idx, rec);
	if (rc == 1) {
		if ((full = flush_stage(b)) < 0 || full == 2)
			return full;
		rc = floe_sortbuf_add(b->stage, (uint32_t)idx, rec);
		if (rc == FLOE_ENOMEM && b->rows > 0 && !budget_fits(b, cost + STAGE_BLOCK + writer, true)) {
			b->why = "memory budget";
			return 2;
		}
		if (rc == 1) {
			cost = 0;
			if ((rc = write_alone(b, idx, rec)) == 0 && b->ps[idx].f && at_target(b, b->ps[idx].f)) {
				b->why = "target_file_size";
				full = 1;
			}
		}
	}
	if (rc < 0)
		return rc;
	if (!b->ps[idx].f) {
		b->ps[idx].staged += cost;
		b->staged += cost;
	}
	b->rows++;
	return full;
}

/* ---- adding ------------------------------------------------------------------------- */

/* The partition of key: its number, and room for its state. */
static int find_part(struct floe_batch *b, const struct floe_part_key *key, size_t *idx)
{
	size_t n = floe_parts_count(b->parts);
	if (n == b->ps_cap) {
		size_t cap = b->ps_cap ? 2 * b->ps_cap : 16;
		struct part *ps = floe_realloc(b->alloc, b->ps, cap * sizeof(*ps));
		if (!ps)
			return FLOE_ENOMEM;
		memset(ps + b->ps_cap, 0, (cap - b->ps_cap) * sizeof(*ps));
		b->ps = ps;
		b->ps_cap = cap;
	}
	int rc = floe_parts_find(b->parts, key, idx);
	return rc < 0 ? rc : 0;
}

/* A partition seen for the first time since the seal gets a writer of its own while one
 * is free and the budget takes it beside the others; else it stages. */
static int place(struct floe_batch *b, size_t idx, const struct floe_record *rec)
{
	struct part *p = &b->ps[idx];
	if (b->nopen == b->opt.max_writers || (b->nopen && !memory_fits(b, rec, rec->message.len, true))) {
		p->staging = true;
		return 0;
	}
	int rc = new_fragment(b, idx, &p->f);
	if (rc)
		return rc;
	b->open[b->nopen++] = p->f;
	return 0;
}

int floe_batch_add(struct floe_batch *b, uint64_t seq, const struct floe_record *rec)
{
	struct floe_part_key key;
	size_t idx;
	int rc;
	/* A record of the last partition's day (or hour) is known by its time: its key is
	 * made, and found, only when the time leaves it (a key of day(ts) cost about 100
	 * instructions a line). */
	bool known = floe_parts_find_time(b->parts, rec->ts, &idx);
	if (!known && (rc = floe_part_key_of(&b->spec, rec, &key)))
		return rc;
	if (!b->seq_fixed) {
		b->seq = seq;
		b->seq_fixed = true;
	}
	if (!known && (rc = find_part(b, &key, &idx)))
		return rc;
	struct part *p = &b->ps[idx];
	/* A large record that the budget cannot take must not go in: a writer that runs out
	 * of memory in the middle of a row is good for nothing but free, with the batch's
	 * other rows. The batch is sealed first; an empty batch that cannot take it either
	 * has it cut (floe_batch_room). The same goes for a new partition's writer beside
	 * others: its compression context and their finishing must fit as well. A staging
	 * partition's rows get a writer when the stage drains, beside the others too. */
	if (large(rec) && !memory_fits(b, rec, rec->message.len, p->f == NULL)) {
		if (b->rows > 0) {
			b->why = "memory budget";
			return 2;
		}
		return 3;
	}
	if (!p->f && !p->staging && (rc = place(b, idx, rec)))
		return rc;
	if (p->staging || b->sort)
		return add_staged(b, idx, rec);
	if ((rc = write_row(p->f, rec)))
		return rc;
	b->rows++;
	if (!at_target(b, p->f))
		return 0;
	b->why = "target_file_size";
	return 1;
}

/* ---- sealing ------------------------------------------------------------------------ */

/* Every row into a finished file: resident writers get their rows from the sort buffer
 * and finish first (their memory is free before the staging partitions get theirs), then
 * each staging partition's rows go, whole, to a file of its own. */
static int finish_all(struct floe_batch *b)
{
	int rc = close_open(b);
	if (rc || !b->stage)
		return rc;
	size_t n = floe_parts_count(b->parts);
	for (size_t i = 0; i < n; i++)
		b->ps[i].flush = true;
	return drain_picked(b);
}

void floe_batch_set_name_base(struct floe_batch *b, size_t base)
{
	b->name_base = base;
}

int floe_batch_seal(struct floe_batch *b, int64_t now_us, const uint8_t *positions, size_t positions_len)
{
	return floe_batch_seal_range(b, now_us, NULL, 0, positions, positions_len);
}

int floe_batch_seal_range(struct floe_batch *b, int64_t now_us, const uint8_t *from, size_t from_len,
			  const uint8_t *positions, size_t positions_len)
{
	struct floe_spool_entry e;
	memset(&e, 0, sizeof(e));
	e.seq = b->seq;
	int rc = finish_all(b);
	size_t renamed = 0;
	for (; rc == 0 && renamed < b->ndone; renamed++) {
		char tmp[FLOE_PATH_MAX], path[FLOE_PATH_MAX];
		tmp_path(b, b->done[renamed].name, tmp, sizeof(tmp));
		snprintf(path, sizeof(path), "%s/%s", floe_spool_dir(b->spool), b->done[renamed].name);
		rc = floe_fs_rename(tmp, path);
	}
	if (rc)
		goto out;
	e.created_us = now_us;
	e.positions = (uint8_t *)positions;
	e.positions_len = positions_len;
	e.from = (uint8_t *)from;
	e.from_len = from_len;
	e.replaced_utf8 = b->replaced;
	/* A key's strings point into its own struct, which moved with the array. */
	for (size_t i = 0; i < b->ndone; i++)
		for (size_t k = 0; k < b->spec.n; k++)
			if (b->done[i].key.v[k].s)
				b->done[i].key.v[k].s = b->done[i].key.str[k];
	e.files = b->done;
	e.nfiles = b->ndone;
	floe_crashpoint("seal-before-entry");
	rc = floe_spool_write_entry(b->spool, &e);
out:
	if (rc) {
		floe_error("batch: sealing spool entry %" PRIu64 " failed: %s", e.seq, floe_strerror(rc));
		for (size_t i = 0; i < renamed && i < b->ndone; i++) {
			char path[FLOE_PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", floe_spool_dir(b->spool), b->done[i].name);
			floe_fs_unlink(path);
		}
	}
	drop_fragments(b);
	return rc;
}
