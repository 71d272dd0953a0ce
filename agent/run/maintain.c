/* Compaction: the small files of each closed partition are read in order (older data
 * first: by data sequence number, then path) with the streaming Parquet reader, and their
 * rows go, value by value as read, into the writer the agent uses, with the table's
 * writer options; an output file is finished at the first file boundary once it reaches
 * target_file_size, so each old file's rows are in exactly one new file. Memory is the
 * reader's pages and the writer's budget, never a file.
 *
 * A new file is written into tmp_dir, then created in the warehouse under a name no run
 * ever chose before (compact-<ms>-<run uuid>-<n>.parquet, ms the wall clock when it is
 * named: an exclusive create), and listed by nothing until its replace commits. A crash
 * leaves such files unreferenced and the table as it was; the next run starts afresh,
 * and deletes them once they are older than maintain.min_age (maintain_orphans.c). The replace validates on the table as it
 * is at commit time (agent/lake/table_replace.c); an abandoned one costs only its files,
 * which are removed.
 *
 * With sort_by, files are merged rather than concatenated (below, "sort_by"). */
#include "agent/run/maintain_impl.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/table.h"
#include "agent/pipeline/batch.h"
#include "agent/run/settings.h"
#include "agent/schema/record.h"
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

/* Copies every row of the old file f into the open output (opened, or rolled over when
 * the file's columns differ from its own). */
static int copy_file(struct compact *c, const struct floe_table_file *f)
{
	struct source src;
	struct floe_pq_reader *r = NULL;
	int rc = floe_maintain_reader_open(c, c->a, f, &src, &r);
	if (rc)
		return rc;
	size_t n;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &n);
	if (c->out.w && !floe_maintain_same_columns(c->out.cols, c->out.ncols, cols, n))
		rc = floe_maintain_output_finish(c, &c->fs->keys[f->part]);
	if (rc == 0 && !c->out.w)
		rc = floe_maintain_output_open(c, cols, n);
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
		if ((rc = copy_file(c, f)) || (rc = floe_maintain_pending_add_old(c, f->path)))
			break;
		bool full = c->p.nold >= per;
		if (floe_pq_writer_size_estimate(c->out.w) >= c->target || full || i + 1 == n)
			rc = floe_maintain_output_finish(c, &c->fs->keys[f->part]);
		if (rc == 0 && (c->p.nadded >= OUTS_MAX || full))
			rc = floe_maintain_pending_commit(c);
	}
	if (rc == 0)
		rc = floe_maintain_pending_commit(c);
	floe_maintain_output_drop(&c->out);
	floe_maintain_pending_reset(c, rc != 0 && rc != FLOE_ECONFLICT);
	return rc;
}

/* ---- sort_by: a k-way merge of sorted files ----
 *
 * With sort_by, the writer sorts each file (in runs of its sort buffer: a file written in
 * one run is fully sorted), so compaction merges files instead of concatenating them: a
 * streaming reader per file, and a heap of their current rows ordered by the sort keys,
 * ties to the file that comes first (older data first, as without sort_by) and, within a
 * file, rows leave in their order, so every source's rows keep their relative order.
 *
 * Memory: each reader holds a page and a dictionary per column, so the files merged at
 * once are bounded by the readers' memory, measured (each reader counts its own
 * allocations) once it holds its first row: files join a group while the group's readers
 * hold under MERGE_MEMORY (at least two files, at most MERGE_FILES), and while its input
 * is under OUTS_MAX / 2 target files. A partition with more files is split into several
 * groups, each merged into its own sorted output files and committed as one replace
 * (its old files are replaced by exactly the files their rows went to). Groups are not
 * merged again in further passes: that would write every row once per pass through
 * tmp_dir, for files that are each sorted, and whose groups follow the data's age, so
 * that they overlap little in time; a later run merges what it finds small again. */
#define MERGE_FILES 32
#define MERGE_MEMORY ((size_t)8 << 20)

struct head {
	struct floe_alloc mem; /* this reader's allocations, counted */
	struct floe_pq_reader *r;
	struct source src;
	const struct floe_table_file *f;
	const struct floe_pq_value *row; /* its current row; NULL once it is read */
	uint64_t rows;
};

struct merge {
	struct head h[MERGE_FILES];
	size_t n;
	size_t heap[MERGE_FILES], nheap;
	size_t col[FLOE_SORT_NKEYS]; /* the sort keys' columns; SIZE_MAX: not in the file */
	bool str[FLOE_SORT_NKEYS];
	size_t nkeys;
};

static int cmp_value(const struct floe_pq_value *a, const struct floe_pq_value *b, bool str)
{
	if (a->is_null || b->is_null)
		return (int)!a->is_null - (int)!b->is_null; /* nulls first, as the writer's sort */
	if (!str)
		return (a->i > b->i) - (a->i < b->i);
	size_t n = a->len < b->len ? a->len : b->len;
	int d = n ? memcmp(a->s, b->s, n) : 0;
	return d ? d : (a->len > b->len) - (a->len < b->len);
}

/* Does head x's row come before head y's: by the keys, then by the file's place. */
static bool before(const struct merge *m, size_t x, size_t y)
{
	for (size_t k = 0; k < m->nkeys; k++) {
		if (m->col[k] == SIZE_MAX)
			continue;
		int d = cmp_value(&m->h[x].row[m->col[k]], &m->h[y].row[m->col[k]], m->str[k]);
		if (d)
			return d < 0;
	}
	return x < y;
}

static void sift_down(struct merge *m, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		if (l < m->nheap && before(m, m->heap[l], m->heap[s]))
			s = l;
		if (r < m->nheap && before(m, m->heap[r], m->heap[s]))
			s = r;
		if (s == i)
			return;
		size_t t = m->heap[i];
		m->heap[i] = m->heap[s];
		m->heap[s] = t;
		i = s;
	}
}

/* The sort keys' columns in the group's files (their columns are the same). */
static void merge_keys(struct compact *c, struct merge *m, const struct floe_pq_column *cols, size_t n)
{
	m->nkeys = c->nsort;
	for (size_t k = 0; k < c->nsort; k++) {
		const char *name = floe_log_sort_key_name(c->sort[k]);
		int32_t id = name ? floe_log_column_id(name, strlen(name)) : 0;
		m->col[k] = SIZE_MAX;
		for (size_t i = 0; id && i < n; i++)
			if (cols[i].field_id == id) {
				m->col[k] = i;
				m->str[k] = cols[i].kind == FLOE_PQ_STRING || cols[i].kind == FLOE_PQ_BINARY;
			}
	}
}

/* Opens f's reader and reads its first row. */
static int head_open(struct compact *c, struct head *h, const struct floe_table_file *f)
{
	*h = (struct head){.f = f};
	floe_alloc_init(&h->mem, 0);
	int rc = floe_maintain_reader_open(c, &h->mem, f, &h->src, &h->r);
	if (rc)
		return rc;
	if ((rc = floe_pq_reader_next(h->r, &h->row)) < 0)
		return floe_err_set(c->err, rc, "reading %s: %s", f->path,
				    floe_err_text(floe_pq_reader_error(h->r), rc));
	h->rows = (uint64_t)rc;
	if (rc == 0)
		h->row = NULL;
	return 0;
}

static void head_close(struct head *h)
{
	floe_pq_reader_free(h->r);
	h->r = NULL;
}

/* Opens the readers of the next group among idx[0..n): at least one file; *used gets how
 * many. The output is opened with the first file's columns, a file with other columns
 * ends the group. */
static int group_open(struct compact *c, struct merge *m, const size_t *idx, size_t n, size_t *used)
{
	size_t per = c->o->max_files_per_commit ? c->o->max_files_per_commit : 10000;
	size_t mem = 0;
	uint64_t bytes = 0;
	int rc = 0;
	m->n = 0;
	while (m->n < n && m->n < MERGE_FILES && m->n < per &&
	       (m->n < 2 || (mem < MERGE_MEMORY && bytes < c->target * (OUTS_MAX / 2)))) {
		const struct floe_table_file *f = &c->fs->f[idx[m->n]];
		struct head *h = &m->h[m->n];
		if ((rc = head_open(c, h, f))) {
			head_close(h);
			break;
		}
		size_t nc;
		const struct floe_pq_column *cols = floe_pq_reader_columns(h->r, &nc);
		if (m->n == 0) {
			merge_keys(c, m, cols, nc);
			rc = floe_maintain_output_open(c, cols, nc);
		} else if (!floe_maintain_same_columns(c->out.cols, c->out.ncols, cols, nc)) {
			head_close(h);
			break;
		}
		m->n++;
		if (rc)
			break;
		mem += floe_alloc_used(&h->mem);
		bytes += (uint64_t)f->size;
	}
	*used = m->n;
	return rc;
}

/* Writes the group's rows in merged order into output files (a new one at a row boundary
 * once the open one reaches the target, but never more than OUTS_MAX for the group: the
 * last one takes the rest), then commits them as replacing the group's files. */
static int group_merge(struct compact *c, struct merge *m, size_t part)
{
	const struct floe_pq_column *cols = NULL;
	size_t nc = 0, seen = 0;
	int rc = 0;
	cols = floe_pq_reader_columns(m->h[0].r, &nc);
	m->nheap = 0;
	for (size_t i = 0; i < m->n; i++)
		if (m->h[i].row)
			m->heap[m->nheap++] = i;
	for (size_t i = m->nheap / 2; i-- > 0;)
		sift_down(m, i);
	while (rc == 0 && m->nheap) {
		struct head *h = &m->h[m->heap[0]];
		if ((rc = floe_pq_writer_add_row(c->out.w, h->row))) {
			floe_err_set(c->err, rc, "writing the rows of %s into %s: %s", h->f->path, c->out.tmp,
				     floe_strerror(c->out.err ? c->out.err : rc));
			break;
		}
		if ((rc = floe_pq_reader_next(h->r, &h->row)) < 0) {
			floe_err_set(c->err, rc, "reading %s: %s", h->f->path,
				     floe_err_text(floe_pq_reader_error(h->r), rc));
			break;
		}
		h->rows += (uint64_t)rc;
		if (rc == 0)
			m->heap[0] = m->heap[--m->nheap];
		rc = 0;
		sift_down(m, 0);
		/* The size estimate walks the columns: asked every 256 rows. */
		if ((++seen & 255) == 0 && c->p.nadded + 1 < OUTS_MAX &&
		    floe_pq_writer_size_estimate(c->out.w) >= c->target &&
		    (rc = floe_maintain_output_finish(c, &c->fs->keys[part])) == 0)
			rc = floe_maintain_output_open(c, cols, nc);
	}
	if (rc == 0)
		rc = floe_maintain_output_finish(c, &c->fs->keys[part]);
	for (size_t i = 0; rc == 0 && i < m->n; i++) {
		const struct floe_table_file *f = m->h[i].f;
		if (m->h[i].rows != (uint64_t)f->records)
			rc = floe_err_set(c->err, FLOE_ECORRUPT, "%s holds %" PRIu64 " rows, its manifest says %" PRId64,
					  f->path, m->h[i].rows, f->records);
		else if ((rc = floe_maintain_pending_add_old(c, f->path)) == 0) {
			c->st->rows += m->h[i].rows;
			c->st->bytes_in += (uint64_t)f->size;
		}
	}
	return rc ? rc : floe_maintain_pending_commit(c);
}

/* Merges the files idx[0..n) of one partition, group by group. */
static int merge_partition(struct compact *c, const size_t *idx, size_t n)
{
	struct merge *m = floe_calloc(c->a, 1, sizeof(*m));
	int rc = m ? 0 : floe_err_set(c->err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	for (size_t i = 0, used = 0; rc == 0 && i < n; i += used) {
		size_t part = c->fs->f[idx[i]].part;
		rc = group_open(c, m, idx + i, n - i, &used);
		if (rc == 0)
			rc = group_merge(c, m, part);
		for (size_t k = 0; k < m->n; k++)
			head_close(&m->h[k]);
		floe_maintain_output_drop(&c->out);
	}
	floe_maintain_pending_reset(c, rc != 0);
	floe_free(c->a, m);
	return rc;
}

static int compact_all(struct compact *c, size_t *idx)
{
	floe_maintain_order(c->fs, idx);
	int rc = 0;
	for (size_t i = 0; i < c->fs->n && rc == 0;) {
		size_t j = i + 1;
		while (j < c->fs->n && c->fs->f[idx[j]].part == c->fs->f[idx[i]].part)
			j++;
		/* One small file alone is left as it is: rewriting it gains nothing. */
		if (j - i >= 2) {
			rc = c->nsort ? merge_partition(c, idx + i, j - i) : compact_partition(c, idx + i, j - i);
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

static void writer_options(struct compact *c, const struct floe_maintain_options *o)
{
	const struct floe_config_table *tc = o->tc;
	floe_run_pq_options(tc, &c->pq);
	snprintf(c->created_by, sizeof(c->created_by), "floe version %s", FLOE_VERSION);
	c->pq.created_by = c->created_by;
	/* An aggregate table's columns are not the logs table's: its files carry no bloom
	 * filter and no sort order (runner_agg.c writes them so). */
	size_t nb = o->aggregate			  ? 0
		    : tc->nbloom_filters < FLOE_LOG_NCOLS ? tc->nbloom_filters
							  : FLOE_LOG_NCOLS;
	for (size_t i = 0; i < nb; i++)
		c->bloom[i] = (struct floe_pq_bloom_column){tc->bloom_ids[i], 0};
	c->pq.bloom = c->bloom;
	c->pq.bloom_count = nb;
	c->target = tc->target_file_size;
	c->sort = tc->sort_keys;
	c->nsort = o->aggregate			    ? 0
		   : tc->nsort_by < FLOE_SORT_NKEYS ? tc->nsort_by
						    : FLOE_SORT_NKEYS;
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
	writer_options(c, o);
	struct floe_table_scan_options so = {
	    .max_size = (int64_t)(c->target / 2),
	    .closed_before_us = o->now_us - (int64_t)o->cfg->maintain.min_age_ms * 1000,
	    .max_files = 100000,
	    .time_field_id = floe_maintain_time_field(o),
	};
	int rc = floe_env_uuid4(floe_env_rand(), c->run);
	if (rc == 0 && (rc = floe_fs_mkdirs(o->tmp_dir)))
		floe_err_set(c->err, rc, "cannot create %s: %s", o->tmp_dir, floe_strerror(rc));
	if (rc == 0)
		(void)floe_fs_list(a, o->tmp_dir, remove_stale, (void *)(uintptr_t)o->tmp_dir);
	if (rc == 0 && (rc = floe_store_key(o->store, floe_table_location(o->table), c->table_key,
					    sizeof(c->table_key))))
		floe_err_set(c->err, rc, "the table %s is outside the warehouse", floe_table_location(o->table));
	/* A failure to clean up is no reason not to compact: the files stay for a later run. */
	struct floe_err why = {0};
	if (rc == 0 && floe_maintain_orphans(a, o, c->table_key, &st->orphans, &why))
		floe_warn("maintain: output files of interrupted runs left: %s", floe_err_text(&why, why.code));
	if (rc == 0)
		rc = floe_table_scan(o->table, &so, &fs, c->err);
	st->left = fs.skipped;
	if (rc == 0 && fs.n && !(idx = floe_calloc(a, fs.n, sizeof(*idx))))
		rc = floe_err_set(c->err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	if (rc == 0 && fs.n)
		rc = compact_all(c, idx);
	if (rc == 0)
		rc = floe_maintain_respec(c);
	if (rc == 0)
		rc = floe_table_expire_now(o->table, &st->expired, c->err);
	floe_free(a, idx);
	floe_free(a, c->p.old);
	floe_table_files_fini(&fs);
	floe_free(a, c);
	return rc;
}
