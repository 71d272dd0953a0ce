/* Compaction: the small files of each closed partition are read in order (older data
 * first: by data sequence number, then path) with the streaming Parquet reader, and their
 * rows go, value by value as read, into the writer the agent uses, with the table's
 * writer options; an output file is finished at the first file boundary once it reaches
 * target_file_size, so each old file's rows are in exactly one new file. Memory is the
 * reader's pages and the writer's budget, never a file.
 *
 * A new file is written into tmp_dir, then created in the warehouse under a name no run
 * ever chose before (compact-<run uuid>-<n>.parquet, an exclusive create), and listed by
 * nothing until its replace commits. A crash leaves such files unreferenced and the
 * table as it was; the next run starts afresh. The replace validates on the table as it
 * is at commit time (agent/lake/table_replace.c); an abandoned one costs only its files,
 * which are removed.
 *
 * Not done here: rows are not re-sorted by sort_by (each old file's order is kept; a
 * k-way merge of sorted files is future work). */
#include "agent/run/maintain.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/table.h"
#include "agent/pipeline/batch.h"
#include "agent/run/settings.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/reader.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLS 64
#define OUTS_MAX 8 /* new files per replace snapshot at most */

/* The new file being written. */
struct output {
	struct floe_file *file;
	struct floe_pq_writer *w;
	int err; /* the sink's first failure */
	char tmp[FLOE_PATH_MAX];
	struct floe_pq_column cols[MAX_COLS];
	char names[MAX_COLS][128];
	size_t ncols;
};

/* One replace being built: old files, and the new files finished for them. */
struct pending {
	const char **old;
	size_t nold, cap;
	struct floe_ice_data_file added[OUTS_MAX];
	char keys[OUTS_MAX][FLOE_PATH_MAX];
	char uris[OUTS_MAX][FLOE_PATH_MAX + 16];
	size_t nadded;
};

struct compact {
	struct floe_alloc *a;
	const struct floe_maintain_options *o;
	struct floe_maintain_stats *st;
	struct floe_err *err;
	struct floe_pq_options pq;
	struct floe_pq_bloom_column bloom[FLOE_LOG_NCOLS];
	char created_by[64];
	char table_key[FLOE_PATH_MAX]; /* the table's key prefix in the store */
	char run[37];		       /* this run's uuid: names its files */
	unsigned nout;		       /* files this run has written */
	uint64_t target;
	struct output out;
	struct pending p;
	const struct floe_table_files *fs;
};

/* ---- reading an old file ---- */

struct source {
	struct floe_store *store;
	char key[FLOE_PATH_MAX];
};

static int source_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct source *s = ctx;
	return floe_store_read_at(s->store, s->key, off, buf, len);
}

/* ---- the new file ---- */

static int sink(void *ctx, const void *data, size_t len)
{
	struct output *out = ctx;
	int rc = floe_file_write(out->file, data, len);
	if (rc && !out->err)
		out->err = rc;
	return rc;
}

static bool same_columns(const struct output *out, const struct floe_pq_column *c, size_t n)
{
	if (n != out->ncols)
		return false;
	for (size_t i = 0; i < n; i++) {
		const struct floe_pq_column *o = &out->cols[i];
		if (strcmp(o->name, c[i].name) != 0 || o->field_id != c[i].field_id || o->kind != c[i].kind ||
		    o->optional != c[i].optional || o->key_field_id != c[i].key_field_id ||
		    o->value_field_id != c[i].value_field_id)
			return false;
	}
	return true;
}

static int output_open(struct compact *c, const struct floe_pq_column *cols, size_t n)
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

static void output_drop(struct output *out)
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
static int data_key(struct compact *c, size_t part, char *key, size_t cap)
{
	char dir[1024];
	int rc = floe_part_key_path(floe_table_spec(c->o->table), &c->fs->keys[part], dir, sizeof(dir));
	if (rc == 0)
		rc = floe_fmt(key, cap, "%s%sdata/%s%scompact-%s-%u.parquet", c->table_key, c->table_key[0] ? "/" : "",
			      dir, dir[0] ? "/" : "", c->run, c->nout);
	return rc;
}

/* Describes the finished file for the manifest: size, rows, metrics, splits. */
static int describe(struct compact *c, size_t part, struct floe_ice_data_file *df)
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
	    .partition = c->fs->keys[part].v,
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
static int output_finish(struct compact *c, size_t part)
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
	if ((rc = data_key(c, part, p->keys[k], sizeof(p->keys[k]))) ||
	    (rc = floe_store_uri(c->o->store, p->keys[k], p->uris[k], sizeof(p->uris[k]))) ||
	    (rc = describe(c, part, &p->added[k])))
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
static void pending_reset(struct compact *c, bool drop)
{
	for (size_t i = 0; i < c->p.nadded; i++) {
		if (drop && c->p.keys[i][0])
			floe_store_remove(c->o->store, c->p.keys[i]);
		added_fini(c, &c->p.added[i]);
	}
	c->p.nadded = 0;
	c->p.nold = 0;
}

static int pending_add_old(struct compact *c, const char *path)
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
static int pending_commit(struct compact *c)
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
		pending_reset(c, false);
		return 0;
	}
	/* Committed or not is unknown only for errors past the metadata write: the files
	 * stay then (removing them could break a landed commit). */
	bool known = rc == FLOE_ENOTFOUND || rc == FLOE_ECONFLICT;
	pending_reset(c, known);
	if (rc == FLOE_ENOTFOUND || rc == FLOE_ECONFLICT) {
		floe_warn("maintain: replace of %zu files abandoned: %s", p->nold, floe_err_text(&why, rc));
		c->st->abandoned++;
		return 0;
	}
	return floe_err_set(c->err, rc, "%s", floe_err_text(&why, rc));
}

/* Copies every row of the old file f into the open output (opened, or rolled over when
 * the file's columns differ from its own). */
static int copy_file(struct compact *c, const struct floe_table_file *f)
{
	struct source src = {.store = c->o->store};
	struct floe_pq_source ps = {.ctx = &src, .size = (uint64_t)f->size, .read_at = source_read};
	struct floe_pq_reader *r = NULL;
	struct floe_err why = {0};
	int rc = floe_store_key(c->o->store, f->path, src.key, sizeof(src.key));
	if (rc)
		return floe_err_set(c->err, rc, "data file %s is outside the warehouse", f->path);
	if ((rc = floe_pq_reader_open(c->a, &ps, NULL, &r, &why)))
		return floe_err_set(c->err, rc, "reading %s: %s", f->path, floe_err_text(&why, rc));
	size_t n;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &n);
	if (c->out.w && !same_columns(&c->out, cols, n))
		rc = output_finish(c, f->part);
	if (rc == 0 && !c->out.w)
		rc = output_open(c, cols, n);
	const struct floe_pq_value *row;
	uint64_t rows = 0;
	if (rc) {
		floe_pq_reader_free(r);
		return rc;
	}
	while ((rc = floe_pq_reader_next(r, &row)) == 1) {
		rows++;
		if ((rc = floe_pq_writer_add_row(c->out.w, row))) {
			floe_err_set(c->err, rc, "writing the rows of %s into %s: %s", f->path, c->out.tmp,
				     floe_strerror(c->out.err ? c->out.err : rc));
			break;
		}
	}
	if (rc < 0 && floe_pq_reader_error(r)->code)
		floe_err_set(c->err, rc, "reading %s: %s", f->path, floe_err_text(floe_pq_reader_error(r), rc));
	else if (rc == 0 && rows != (uint64_t)f->records)
		rc = floe_err_set(c->err, FLOE_ECORRUPT, "%s holds %" PRIu64 " rows, its manifest says %" PRId64,
				  f->path, rows, f->records);
	floe_pq_reader_free(r);
	if (rc == 0) {
		c->st->rows += rows;
		c->st->bytes_in += (uint64_t)f->size;
	}
	return rc;
}

/* Rewrites the files idx[0..n) of one partition (in their order), committing a replace
 * every OUTS_MAX new files or max_files_per_commit old ones, and at the end. */
static int compact_partition(struct compact *c, const size_t *idx, size_t n)
{
	size_t per = c->o->max_files_per_commit ? c->o->max_files_per_commit : 10000;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct floe_table_file *f = &c->fs->f[idx[i]];
		if ((rc = copy_file(c, f)) || (rc = pending_add_old(c, f->path)))
			break;
		bool full = c->p.nold >= per;
		if (floe_pq_writer_size_estimate(c->out.w) >= c->target || full || i + 1 == n)
			rc = output_finish(c, f->part);
		if (rc == 0 && (c->p.nadded >= OUTS_MAX || full))
			rc = pending_commit(c);
	}
	if (rc == 0)
		rc = pending_commit(c);
	output_drop(&c->out);
	pending_reset(c, rc != 0 && rc != FLOE_ECONFLICT);
	return rc;
}

/* Orders a partition's files: older data first (data sequence number), then by path. */
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

static int compact_all(struct compact *c, size_t *idx)
{
	for (size_t i = 0; i < c->fs->n; i++)
		idx[i] = i;
	sort_fs = c->fs;
	qsort(idx, c->fs->n, sizeof(*idx), cmp_file);
	int rc = 0;
	for (size_t i = 0; i < c->fs->n && rc == 0;) {
		size_t j = i + 1;
		while (j < c->fs->n && c->fs->f[idx[j]].part == c->fs->f[idx[i]].part)
			j++;
		/* One small file alone is left as it is: rewriting it gains nothing. */
		if (j - i >= 2) {
			rc = compact_partition(c, idx + i, j - i);
			c->st->partitions += rc == 0;
		}
		i = j;
	}
	return rc;
}

/* A crashed run's file being written (removed at the start of the next run: one
 * maintain at a time uses a state_dir). */
static int remove_stale(void *ctx, const char *name)
{
	const char *dir = ctx;
	size_t n = strlen(name);
	char path[FLOE_PATH_MAX];
	if (n > 12 && strcmp(name + n - 12, ".parquet.tmp") == 0 &&
	    snprintf(path, sizeof(path), "%s/%s", dir, name) < (int)sizeof(path))
		floe_fs_unlink(path);
	return 0;
}

static void writer_options(struct compact *c, const struct floe_config *cfg)
{
	floe_run_pq_options(cfg, &c->pq);
	snprintf(c->created_by, sizeof(c->created_by), "floe version %s", FLOE_VERSION);
	c->pq.created_by = c->created_by;
	size_t nb = cfg->logs.nbloom_filters < FLOE_LOG_NCOLS ? cfg->logs.nbloom_filters : FLOE_LOG_NCOLS;
	for (size_t i = 0; i < nb; i++)
		c->bloom[i] = (struct floe_pq_bloom_column){cfg->logs.bloom_ids[i], 0};
	c->pq.bloom = c->bloom;
	c->pq.bloom_count = nb;
	c->target = cfg->logs.target_file_size;
}

int floe_maintain_compact(struct floe_alloc *a, const struct floe_maintain_options *o,
			  struct floe_maintain_stats *st, struct floe_err *err)
{
	static struct floe_err none;
	struct compact *c = floe_calloc(a, 1, sizeof(*c));
	struct floe_table_files fs = {0};
	size_t *idx = NULL;
	memset(st, 0, sizeof(*st));
	if (!c)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	*c = (struct compact){.a = a, .o = o, .st = st, .err = err ? err : &none, .fs = &fs};
	writer_options(c, o->cfg);
	struct floe_table_scan_options so = {
	    .max_size = (int64_t)(c->target / 2),
	    .closed_before_us = o->now_us - (int64_t)o->cfg->maintain.min_age_ms * 1000,
	    .max_files = 100000,
	};
	int rc = floe_env_uuid4(floe_env_rand(), c->run);
	if (rc == 0 && (rc = floe_fs_mkdirs(o->tmp_dir)))
		floe_err_set(c->err, rc, "cannot create %s: %s", o->tmp_dir, floe_strerror(rc));
	if (rc == 0)
		(void)floe_fs_list(a, o->tmp_dir, remove_stale, (void *)(uintptr_t)o->tmp_dir);
	if (rc == 0 && (rc = floe_store_key(o->store, floe_table_location(o->table), c->table_key,
					    sizeof(c->table_key))))
		floe_err_set(c->err, rc, "the table %s is outside the warehouse", floe_table_location(o->table));
	if (rc == 0)
		rc = floe_table_scan(o->table, &so, &fs, c->err);
	st->left = fs.skipped;
	if (rc == 0 && fs.n && !(idx = floe_calloc(a, fs.n, sizeof(*idx))))
		rc = floe_err_set(c->err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	if (rc == 0 && fs.n)
		rc = compact_all(c, idx);
	if (rc == 0)
		rc = floe_table_expire_now(o->table, &st->expired, c->err);
	floe_free(a, idx);
	floe_free(a, c->p.old);
	floe_table_files_fini(&fs);
	floe_free(a, c);
	return rc;
}
