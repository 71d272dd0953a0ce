/* The new files of compaction and the replace they are committed in: an output file is
 * written into tmp_dir, then created in the warehouse under a name no run chose before,
 * and the pending replace gathers old files and the new ones until it is committed. */
#include "agent/run/maintain_impl.h"

#include "agent/env/env.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/aggtable.h"
#include "formats/iceberg/metadata.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int floe_maintain_source_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct source *s = ctx;
	return floe_store_read_at(s->store, s->key, off, buf, len);
}

int floe_maintain_reader_open(struct compact *c, struct floe_alloc *a, const struct floe_table_file *f,
			      struct source *src, struct floe_pq_reader **r)
{
	struct floe_err why = {0};
	struct floe_pq_source ps = {.ctx = src, .size = (uint64_t)f->size, .read_at = floe_maintain_source_read};
	src->store = c->o->store;
	int rc = floe_store_key(c->o->store, f->path, src->key, sizeof(src->key));
	if (rc)
		return floe_err_set(c->err, rc, "data file %s is outside the warehouse", f->path);
	if ((rc = floe_pq_reader_open(a, &ps, NULL, r, &why)))
		return floe_err_set(c->err, rc, "reading %s: %s", f->path, floe_err_text(&why, rc));
	return 0;
}

static int sink(void *ctx, const void *data, size_t len)
{
	struct output *out = ctx;
	int rc = floe_file_write(out->file, data, len);
	if (rc && !out->err)
		out->err = rc;
	return rc;
}

bool floe_maintain_same_columns(const struct floe_pq_column *a, size_t na, const struct floe_pq_column *c, size_t n)
{
	if (n != na)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct floe_pq_column *o = &a[i];
		if (strcmp(o->name, c[i].name) != 0 || o->field_id != c[i].field_id || o->kind != c[i].kind ||
		    o->optional != c[i].optional || o->key_field_id != c[i].key_field_id ||
		    o->value_field_id != c[i].value_field_id)
			return false;
	}
	return true;
}

int floe_maintain_output_open(struct compact *c, const struct floe_pq_column *cols, size_t n)
{
	struct output *out = &c->out;
	if (n > MAX_COLS)
		return floe_err_set(c->err, FLOE_EUNSUPPORTED, "a data file with %zu columns (at most %d)", n, MAX_COLS);
	for (size_t i = 0; i < n; i++) {
		if (strlen(cols[i].name) >= sizeof(out->names[i]))
			return floe_err_set(c->err, FLOE_ELIMIT, "column name '%s' too long", cols[i].name);
		memcpy(out->names[i], cols[i].name, strlen(cols[i].name) + 1);
		out->cols[i] = cols[i];
		out->cols[i].name = out->names[i];
	}
	out->ncols = n;
	out->err = 0;
	snprintf(out->tmp, sizeof(out->tmp), "%s/%s-%u.parquet.tmp", c->o->tmp_dir, c->run, c->nout);
	int rc = floe_file_create(out->tmp, &out->file);
	if (rc)
		return floe_err_set(c->err, rc, "creating %s failed: %s", out->tmp, floe_strerror(rc));
	if ((rc = floe_pq_writer_new(c->a, out->cols, n, &c->pq, sink, out, &out->w)))
		return floe_err_set(c->err, rc, "a Parquet writer for %s: %s", out->tmp, floe_strerror(rc));
	return 0;
}

void floe_maintain_output_drop(struct output *out)
{
	floe_pq_writer_free(out->w);
	out->w = NULL;
	if (out->file) {
		floe_file_close(out->file);
		out->file = NULL;
		floe_fs_unlink(out->tmp);
	}
}

/* The partition directory of partition index part, under data/. */
static int data_key(struct compact *c, const struct floe_part_key *part, char *key, size_t cap)
{
	char dir[1024];
	const struct floe_clock *clock = floe_env_clock();
	int64_t ms = clock->wall_us(clock->ctx) / 1000;
	int rc = floe_part_key_path(floe_table_spec(c->o->table), part, dir, sizeof(dir));
	if (rc == 0)
		rc = floe_fmt(key, cap, "%s%sdata/%s%scompact-%" PRId64 "-%s-%u.parquet", c->table_key,
			      c->table_key[0] ? "/" : "", dir, dir[0] ? "/" : "", ms < 0 ? 0 : ms, c->run, c->nout);
	return rc;
}

/* Describes the finished file for the manifest: size, rows, metrics, splits. */
static int describe(struct compact *c, const struct floe_part_key *part, struct floe_ice_data_file *df)
{
	struct floe_ice_column_metrics *m = NULL;
	size_t nm = 0, ns = 0;
	int rc = floe_batch_metrics_of(c->a, c->out.w, c->out.cols, c->out.ncols, &m, &nm);
	if (rc)
		return rc;
	const int64_t *splits = floe_pq_writer_row_group_offsets(c->out.w, &ns);
	int64_t *sp = floe_calloc(c->a, ns ? ns : 1, sizeof(*sp));
	if (!sp) {
		for (size_t i = 0; i < nm; i++) {
			floe_free(c->a, (void *)m[i].lower);
			floe_free(c->a, (void *)m[i].upper);
		}
		floe_free(c->a, m);
		return FLOE_ENOMEM;
	}
	memcpy(sp, splits, ns * sizeof(*sp));
	*df = (struct floe_ice_data_file){
	    .record_count = (int64_t)floe_pq_writer_rows(c->out.w),
	    .file_size = (int64_t)floe_pq_writer_file_size(c->out.w),
	    .partition = part->v,
	    .metrics = m,
	    .metrics_count = nm,
	    .split_offsets = sp,
	    .split_count = ns,
	};
	return 0;
}

static void added_fini(struct compact *c, struct floe_ice_data_file *df)
{
	for (size_t i = 0; df->metrics && i < df->metrics_count; i++) {
		floe_free(c->a, (void *)df->metrics[i].lower);
		floe_free(c->a, (void *)df->metrics[i].upper);
	}
	floe_free(c->a, (void *)df->metrics);
	floe_free(c->a, (void *)df->split_offsets);
	memset(df, 0, sizeof(*df));
}

/* Finishes the open file, makes it durable, and creates it in the warehouse. */
int floe_maintain_output_finish(struct compact *c, const struct floe_part_key *key)
{
	struct output *out = &c->out;
	struct pending *p = &c->p;
	size_t k = p->nadded;
	int rc = floe_pq_writer_finish(out->w);
	if (rc == 0)
		rc = floe_file_sync(out->file);
	if (rc == 0) {
		rc = floe_file_close(out->file);
		out->file = NULL;
	}
	if (rc)
		return floe_err_set(c->err, out->err ? out->err : rc, "writing %s failed: %s", out->tmp,
				    floe_strerror(out->err ? out->err : rc));
	memset(p->pkeys[k].v, 0, sizeof(p->pkeys[k].v));
	floe_part_key_copy(floe_table_spec(c->o->table), &p->pkeys[k], key);
	if ((rc = data_key(c, &p->pkeys[k], p->keys[k], sizeof(p->keys[k]))) ||
	    (rc = floe_store_uri(c->o->store, p->keys[k], p->uris[k], sizeof(p->uris[k]))) ||
	    (rc = describe(c, &p->pkeys[k], &p->added[k])))
		return floe_err_set(c->err, rc, "describing %s: %s", out->tmp, floe_strerror(rc));
	p->added[k].path = p->uris[k];
	p->nadded++;
	c->nout++;
	rc = floe_store_put_file_if_absent(c->o->store, p->keys[k], out->tmp);
	if (rc)
		p->keys[k][0] = '\0'; /* not ours to remove: -EEXIST, or nothing there */
	floe_fs_unlink(out->tmp);
	floe_pq_writer_free(out->w);
	out->w = NULL;
	if (rc)
		return floe_err_set(c->err, rc == -EEXIST ? FLOE_EEXIST : rc, "storing %s failed: %s", p->uris[k],
				    floe_strerror(rc));
	floe_crashpoint("maintain-after-output");
	return 0;
}

/* Forgets the pending replace; with drop, removes the new files from the warehouse (no
 * snapshot lists them). */
void floe_maintain_pending_reset(struct compact *c, bool drop)
{
	for (size_t i = 0; i < c->p.nadded; i++) {
		if (drop && c->p.keys[i][0])
			floe_store_remove(c->o->store, c->p.keys[i]);
		added_fini(c, &c->p.added[i]);
	}
	c->p.nadded = 0;
	c->p.nold = 0;
}

int floe_maintain_pending_add_old(struct compact *c, const char *path)
{
	struct pending *p = &c->p;
	if (p->nold == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		const char **n = cap > SIZE_MAX / sizeof(*n) ? NULL : floe_realloc(c->a, p->old, cap * sizeof(*n));
		if (!n)
			return FLOE_ENOMEM;
		p->old = n;
		p->cap = cap;
	}
	p->old[p->nold++] = path;
	return 0;
}

/* Commits the pending replace. An abandoned one (its files were replaced meanwhile) is
 * logged and counted, and its new files removed. */
int floe_maintain_pending_commit(struct compact *c)
{
	struct pending *p = &c->p;
	if (p->nadded == 0)
		return 0;
	struct floe_err why = {0};
	floe_crashpoint("maintain-before-replace");
	int rc = floe_table_replace(c->o->table, p->old, p->nold, p->added, p->nadded, &why);
	if (rc == 0) {
		c->st->commits++;
		c->st->files_in += p->nold;
		c->st->files_out += p->nadded;
		for (size_t i = 0; i < p->nadded; i++)
			c->st->bytes_out += (uint64_t)p->added[i].file_size;
		floe_maintain_pending_reset(c, false);
		return 0;
	}
	/* Committed or not is unknown only for errors past the metadata write: the files
	 * stay then (removing them could break a landed commit). */
	bool known = rc == FLOE_ENOTFOUND || rc == FLOE_ECONFLICT;
	floe_maintain_pending_reset(c, known);
	if (rc == FLOE_ENOTFOUND || rc == FLOE_ECONFLICT) {
		floe_warn("maintain: replace of %zu files abandoned: %s", p->nold, floe_err_text(&why, rc));
		c->st->abandoned++;
		return 0;
	}
	return floe_err_set(c->err, rc, "%s", floe_err_text(&why, rc));
}


/* qsort has no context argument: the list being ordered, set just before. */
static const struct floe_table_files *sort_fs;
static int cmp_file(const void *a, const void *b)
{
	const struct floe_table_file *x = &sort_fs->f[*(const size_t *)a], *y = &sort_fs->f[*(const size_t *)b];
	if (x->part != y->part)
		return x->part < y->part ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return strcmp(x->path, y->path);
}

void floe_maintain_order(const struct floe_table_files *fs, size_t *idx)
{
	for (size_t i = 0; i < fs->n; i++)
		idx[i] = i;
	sort_fs = fs;
	qsort(idx, fs->n, sizeof(*idx), cmp_file);
}

int32_t floe_maintain_time_field(const struct floe_maintain_options *o)
{
	if (!o->aggregate)
		return FLOE_COL_TS;
	/* window_end is the aggregate table's second field; a table whose second field is
	 * something else (made by another writer) has no closed file. */
	const char *type = NULL, *name = NULL;
	bool required;
	int32_t id = 2;
	if (!floe_ice_meta_schema_field(floe_table_meta(o->table), id, &type, &required, &name) ||
	    !name || strcmp(name, FLOE_AGG_COL_WINDOW_END) != 0 || !type ||
	    strcmp(type, "timestamptz") != 0)
		return 0;
	return id;
}
