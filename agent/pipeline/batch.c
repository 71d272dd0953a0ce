/* Batch: partitioned streaming writers into the spool. */
#include "batch.h"

#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/iceberg/transform.h"
#include "formats/parquet/utf8.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t inside struct fragment */
#include <xxhash.h>

#define BOUND_CODEPOINTS 16
#define SORT_BUFFER_DEFAULT (4u << 20)
/* Records with a value this long or longer are checked against the memory budget before
 * they go in (memory_fits). Shorter ones are what the budget is sized for. */
#define LARGE_VALUE ((size_t)64 << 10)

struct fragment {
	struct floe_part_key key;
	struct floe_pq_writer *w;
	struct floe_file *file;
	char name[64];
	int err; /* first sink error */
	/* The checksum of the file as it will be uploaded, computed as the writer streams
	 * its bytes out rather than by reading the file again: the spool entry records it
	 * and the commit checks it before the file leaves the spool. */
	XXH64_state_t hash;
};

struct floe_batch {
	struct floe_alloc *alloc;
	struct floe_part_spec spec;
	struct floe_batch_options opt;
	struct floe_spool *spool;
	struct fragment *frags;
	size_t nfrags;
	uint64_t seq;
	uint64_t rows;
	size_t last; /* fragment of the previous record: logs arrive mostly in order */
	const char *why; /* why the batch asked for a seal (static), or NULL */
	size_t name_base; /* the first file of a seal is <seq>-<name_base>.parquet */
	struct floe_sortbuf *sort; /* NULL without sort_by */
	size_t ctx_bytes; /* a writer's compression contexts (floe_pq_writer_context_bytes) */
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
	if (b->opt.max_partitions == 0)
		b->opt.max_partitions = 8;
	b->spool = spool;
	/* The keys are copied by the sort buffer; the options must not keep the caller's. */
	b->opt.sort_by = NULL;
	int rc = FLOE_ENOMEM;
	b->frags = floe_calloc(a, b->opt.max_partitions, sizeof(*b->frags));
	if (!b->frags)
		goto out;
	if (opt->nsort_by &&
	    (rc = floe_sortbuf_new(a, opt->sort_by, opt->nsort_by,
				   opt->sort_buffer ? opt->sort_buffer : SORT_BUFFER_DEFAULT, &b->sort)))
		goto out;
	rc = floe_pq_writer_context_bytes(&b->opt.pq, &b->ctx_bytes);
out:
	if (rc) {
		floe_sortbuf_free(b->sort);
		floe_free(a, b->frags);
		floe_free(a, b);
		return rc;
	}
	*out = b;
	return 0;
}

static void drop_fragments(struct floe_batch *b)
{
	for (size_t i = 0; i < b->nfrags; i++) {
		struct fragment *f = &b->frags[i];
		char path[FLOE_PATH_MAX];
		floe_pq_writer_free(f->w);
		if (f->file)
			floe_file_close(f->file);
		snprintf(path, sizeof(path), "%s/%s.tmp", floe_spool_dir(b->spool), f->name);
		floe_fs_unlink(path);
		memset(f, 0, sizeof(*f));
	}
	if (b->sort)
		floe_sortbuf_clear(b->sort);
	b->nfrags = 0;
	b->rows = 0;
	b->last = 0;
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
	floe_sortbuf_free(b->sort);
	floe_free(b->alloc, b->frags);
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

static int open_fragment(struct floe_batch *b, const struct floe_part_key *key, struct fragment **out)
{
	struct fragment *f = &b->frags[b->nfrags];
	char path[FLOE_PATH_MAX];
	memset(f, 0, sizeof(*f));
	floe_part_key_copy(&b->spec, &f->key, key);
	snprintf(f->name, sizeof(f->name), "%020" PRIu64 "-%zu.parquet", b->seq, b->name_base + b->nfrags);
	XXH64_reset(&f->hash, 0);
	snprintf(path, sizeof(path), "%s/%s.tmp", floe_spool_dir(b->spool), f->name);
	int rc = floe_file_create(path, &f->file);
	if (rc)
		return rc;
	rc = floe_pq_writer_new(b->alloc, floe_log_columns(), FLOE_LOG_NCOLS, &b->opt.pq, sink, f, &f->w);
	if (rc) {
		floe_file_close(f->file);
		floe_fs_unlink(path);
		f->file = NULL;
		return rc;
	}
	b->nfrags++;
	*out = f;
	return 0;
}

static int write_row(struct fragment *f, const struct floe_record *rec)
{
	struct floe_pq_value row[FLOE_LOG_NCOLS];
	floe_record_to_row(rec, row);
	int rc = floe_pq_writer_add_row(f->w, row);
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

static int drain_one(void *ctx, uint32_t tag, const struct floe_record *rec)
{
	struct floe_batch *b = ctx;
	return write_row(&b->frags[tag], rec);
}

/* Sends the sort buffer's rows to their writers. Returns 0, 1 (a file reached its
 * target size) or a writer's error. */
static int drain(struct floe_batch *b)
{
	int rc = floe_sortbuf_drain(b->sort, drain_one, b);
	if (rc)
		return rc;
	for (size_t i = 0; i < b->nfrags; i++) {
		if (at_target(b, &b->frags[i])) {
			b->why = "target_file_size";
			return 1;
		}
	}
	return 0;
}

/* Adds rec to the sort buffer, which goes to the writers first when full. A record
 * larger than the whole buffer goes straight to its writer, after the buffer: a run of
 * its own. */
static int add_sorted(struct floe_batch *b, struct fragment *f, const struct floe_record *rec)
{
	uint32_t tag = (uint32_t)(f - b->frags);
	int full = 0;
	int rc = floe_sortbuf_add(b->sort, tag, rec);
	if (rc == 1) {
		if ((full = drain(b)) < 0)
			return full;
		rc = floe_sortbuf_add(b->sort, tag, rec);
		if (rc == 1) {
			if ((rc = write_row(f, rec)))
				return rc;
			if ((full = at_target(b, f)))
				b->why = "target_file_size";
		}
	}
	if (rc < 0)
		return rc;
	b->rows++;
	return full;
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
	size_t v[5] = {msg_len, attrs_len(rec->attr_key_lens, NULL, rec->nattrs),
		       attrs_len(rec->attr_val_lens, rec->attr_vals, rec->nattrs), rec->source.len, 0};
	size_t n = 4;
	if (floe_pq_utf8_valid((const uint8_t *)rec->message.p, msg_len) != msg_len) {
		v[0] = 3 * msg_len;
		v[n++] = 3 * msg_len; /* the repaired copy */
	}
	return floe_pq_writer_row_need(&b->opt.pq, v, n, fresh, b->ctx_bytes);
}

/* Whether the budget can take rec (for a writer that exists, or a fresh one). */
static bool memory_fits(const struct floe_batch *b, const struct floe_record *rec, size_t msg_len, bool fresh)
{
	const struct floe_alloc *a = b->alloc;
	if (!a || a->limit == 0)
		return true;
	size_t used = a->used;
	uint64_t free = a->limit > used ? a->limit - used : 0;
	uint64_t need = record_need(b, rec, msg_len, fresh);
	/* A new writer beside others: they finish at the seal too (one at a time). */
	if (fresh && b->nfrags)
		need += floe_pq_writer_row_need(&b->opt.pq, NULL, 0, false, b->ctx_bytes);
	return need <= free;
}

static bool large(const struct floe_record *rec)
{
	if (rec->message.len >= LARGE_VALUE || rec->source.len >= LARGE_VALUE)
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

int floe_batch_add(struct floe_batch *b, uint64_t seq, const struct floe_record *rec)
{
	struct floe_part_key key;
	int rc = floe_part_key_of(&b->spec, rec, &key);
	if (rc)
		return rc;
	if (b->nfrags == 0)
		b->seq = seq;
	struct fragment *f = NULL;
	if (b->nfrags && floe_part_key_equal(&b->spec, &b->frags[b->last].key, &key)) {
		f = &b->frags[b->last];
	} else {
		for (size_t i = 0; i < b->nfrags; i++) {
			if (floe_part_key_equal(&b->spec, &b->frags[i].key, &key)) {
				f = &b->frags[i];
				break;
			}
		}
	}
	/* A large record that the budget cannot take must not go in: a writer that runs out
	 * of memory in the middle of a row is good for nothing but free, with the batch's
	 * other rows. The batch is sealed first; an empty batch that cannot take it either
	 * has it cut (floe_batch_room). The same goes for a new partition's writer beside
	 * others: its compression context and their finishing must fit as well. */
	if ((large(rec) || (!f && b->nfrags > 0)) && !memory_fits(b, rec, rec->message.len, f == NULL)) {
		if (b->rows > 0) {
			b->why = "memory budget";
			return 2;
		}
		return 3;
	}
	if (!f) {
		if (b->nfrags == b->opt.max_partitions) {
			b->why = "every partition slot taken";
			return 2;
		}
		if ((rc = open_fragment(b, &key, &f)))
			return rc;
	}
	b->last = (size_t)(f - b->frags);
	if (b->sort)
		return add_sorted(b, f, rec);
	if ((rc = write_row(f, rec)))
		return rc;
	b->rows++;
	if (!at_target(b, f))
		return 0;
	b->why = "target_file_size";
	return 1;
}

/* Appends one metric, copying bounds; strings are truncated as Iceberg's truncate(16). */
static int add_metric(struct floe_alloc *a, const struct floe_pq_leaf_stats *s, bool is_string,
		      bool bounds, struct floe_ice_column_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->field_id = s->field_id;
	m->column_size = (int64_t)s->compressed_size;
	m->value_count = (int64_t)s->value_count;
	m->null_count = (int64_t)s->null_count;
	/* Map keys and values get counts only, as Java's writers do; so do binary columns
	 * (sketches: their bytes are no useful bound). */
	if (!s->has_min_max || !bounds)
		return 0;
	size_t lo_len = s->min_len, hi_len = s->max_len;
	const uint8_t *hi_src = s->max;
	char upper[4 * BOUND_CODEPOINTS + 4];
	if (is_string) {
		lo_len = floe_ice_truncate_lower((const char *)s->min, s->min_len, BOUND_CODEPOINTS);
		size_t u = floe_ice_truncate_upper((const char *)s->max, s->max_len, BOUND_CODEPOINTS,
						   upper, sizeof(upper));
		if (u > 0) {
			hi_src = (const uint8_t *)upper;
			hi_len = u;
		} else if (floe_ice_truncate_lower((const char *)s->max, s->max_len, BOUND_CODEPOINTS) <
			   s->max_len) {
			/* Longer than 16 code points and no upper bound exists: omit bounds. */
			return 0;
		}
	}
	uint8_t *lo = floe_malloc(a, lo_len + 1), *hi = floe_malloc(a, hi_len + 1);
	if (!lo || !hi) {
		floe_free(a, lo);
		floe_free(a, hi);
		return FLOE_ENOMEM;
	}
	memcpy(lo, s->min, lo_len);
	memcpy(hi, hi_src, hi_len);
	m->lower = lo;
	m->lower_len = lo_len;
	m->upper = hi;
	m->upper_len = hi_len;
	m->has_bounds = true;
	return 0;
}

int floe_batch_metrics(struct floe_alloc *a, const struct floe_pq_writer *w,
		       struct floe_ice_column_metrics **out, size_t *n)
{
	return floe_batch_metrics_of(a, w, floe_log_columns(), FLOE_LOG_NCOLS, out, n);
}

int floe_batch_metrics_of(struct floe_alloc *a, const struct floe_pq_writer *w,
			  const struct floe_pq_column *cols, size_t ncols,
			  struct floe_ice_column_metrics **out, size_t *n)
{
	size_t count;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &count);
	struct floe_ice_column_metrics *m = floe_calloc(a, count ? count : 1, sizeof(*m));
	if (!m)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < count; i++) {
		bool is_string = false, bounds = false;
		for (size_t c = 0; c < ncols; c++) {
			if (cols[c].field_id == st[i].field_id) {
				is_string = cols[c].kind == FLOE_PQ_STRING;
				bounds = cols[c].kind != FLOE_PQ_BINARY &&
					 cols[c].kind != FLOE_PQ_MAP_STRING &&
					 cols[c].kind != FLOE_PQ_MAP_STRING_LONG;
			}
		}
		int rc = add_metric(a, &st[i], is_string, bounds, &m[i]);
		if (rc) {
			for (size_t k = 0; k < i; k++) {
				floe_free(a, (void *)m[k].lower);
				floe_free(a, (void *)m[k].upper);
			}
			floe_free(a, m);
			return rc;
		}
	}
	*out = m;
	*n = count;
	return 0;
}

static int finish_fragment(struct floe_batch *b, struct fragment *f, struct floe_spool_file *sf)
{
	char tmp[FLOE_PATH_MAX], path[FLOE_PATH_MAX];
	int rc = floe_pq_writer_finish(f->w);
	if (rc)
		return f->err ? f->err : rc;
	if ((rc = floe_file_sync(f->file)))
		return rc;
	rc = floe_file_close(f->file);
	f->file = NULL;
	if (rc)
		return rc;
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", floe_spool_dir(b->spool), f->name);
	snprintf(path, sizeof(path), "%s/%s", floe_spool_dir(b->spool), f->name);
	if ((rc = floe_fs_rename(tmp, path)))
		return rc;
	if (!(sf->name = floe_strdup(b->alloc, f->name)))
		return FLOE_ENOMEM;
	sf->records = (int64_t)floe_pq_writer_rows(f->w);
	sf->size = (int64_t)floe_pq_writer_file_size(f->w);
	sf->xxh64 = XXH64_digest(&f->hash);
	sf->has_xxh64 = true;
	floe_part_key_copy(&b->spec, &sf->key, &f->key);
	if ((rc = floe_batch_metrics(b->alloc, f->w, &sf->metrics, &sf->nmetrics)))
		return rc;
	size_t nsplits;
	const int64_t *splits = floe_pq_writer_row_group_offsets(f->w, &nsplits);
	if (!(sf->splits = floe_calloc(b->alloc, nsplits ? nsplits : 1, sizeof(int64_t))))
		return FLOE_ENOMEM;
	memcpy(sf->splits, splits, nsplits * sizeof(int64_t));
	sf->nsplits = nsplits;
	return 0;
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
	int rc = b->sort ? drain(b) : 0;
	e.seq = b->seq;
	if (rc < 0)
		goto out;
	rc = FLOE_ENOMEM;
	e.created_us = now_us;
	e.positions = (uint8_t *)positions;
	e.positions_len = positions_len;
	e.from = (uint8_t *)from;
	e.from_len = from_len;
	e.nfiles = b->nfrags;
	if (!(e.files = floe_calloc(b->alloc, b->nfrags ? b->nfrags : 1, sizeof(*e.files))))
		goto out;
	for (size_t i = 0; i < b->nfrags; i++) {
		if ((rc = finish_fragment(b, &b->frags[i], &e.files[i])))
			goto out;
		e.replaced_utf8 += floe_pq_writer_replaced(b->frags[i].w);
	}
	floe_crashpoint("seal-before-entry");
	rc = floe_spool_write_entry(b->spool, &e);
out:
	if (rc) {
		floe_error("batch: sealing spool entry %" PRIu64 " failed: %s", e.seq, floe_strerror(rc));
		for (size_t i = 0; i < b->nfrags; i++) {
			char path[FLOE_PATH_MAX];
			snprintf(path, sizeof(path), "%s/%s", floe_spool_dir(b->spool), b->frags[i].name);
			floe_fs_unlink(path);
		}
	}
	/* The entry struct borrowed the positions; detach them before freeing. */
	e.positions = NULL;
	e.from = NULL;
	floe_spool_entry_fini(b->alloc, &e);
	drop_fragments(b);
	return rc;
}
