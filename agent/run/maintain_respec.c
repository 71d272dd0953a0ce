/* Rewriting the files of older partition specs: after partition_by changed, the files
 * written before keep their spec, and readers prune them by it. Once their partition's
 * time range is closed (maintain.min_age), their rows are written again under the current
 * spec, split by its partition values, and a replace snapshot swaps the files.
 *
 * The files of one old partition are taken in groups (older data first, as compaction
 * takes them) of at most target_file_size together, with the same columns. A group is read
 * once to find the current spec's partitions its rows fall in, then once more per such
 * partition, each pass writing that partition's rows, in the group's order, into one new
 * file: one reader and one writer at a time, whatever the fan-out. With sort_by, a group is
 * one file (sorted already), so each new file is sorted too. A group whose rows fall in
 * more partitions than a replace holds new files (OUTS_MAX) is cut short; one file alone
 * that does is left as it is, counted among the files left, and said in the log. */
#include "agent/run/maintain_impl.h"

#include "agent/config/config.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "platform/crash.h"
#include "platform/log.h"
#include "platform/store.h"

#include <inttypes.h>
#include <string.h>

/* An old file being read, and where the columns the current spec reads are in it. */
struct old_file {
	struct floe_pq_reader *r;
	struct source src;
	size_t ts, host, app; /* column indexes; SIZE_MAX: not in the file */
};

/* The current spec's partitions of a group's rows. */
struct respec {
	struct floe_part_key keys[OUTS_MAX];
	size_t nkeys;
	struct floe_part_key k;
	struct floe_pq_column cols[MAX_COLS]; /* the group's columns (names: first's reader) */
	size_t ncols;
	struct old_file first; /* the group's first file, open while the group is found */
};

static int old_open(struct compact *c, const struct floe_table_file *f, struct old_file *of)
{
	*of = (struct old_file){.ts = SIZE_MAX, .host = SIZE_MAX, .app = SIZE_MAX};
	int rc = floe_maintain_reader_open(c, c->a, f, &of->src, &of->r);
	if (rc)
		return rc;
	size_t n;
	const struct floe_pq_column *cols = floe_pq_reader_columns(of->r, &n);
	for (size_t i = 0; i < n; i++) {
		if (cols[i].field_id == FLOE_COL_TS)
			of->ts = i;
		else if (cols[i].field_id == FLOE_COL_HOST)
			of->host = i;
		else if (cols[i].field_id == FLOE_COL_APP)
			of->app = i;
	}
	return 0;
}

static void old_close(struct old_file *of)
{
	floe_pq_reader_free(of->r);
	of->r = NULL;
}

static struct floe_str str_at(const struct floe_pq_value *row, size_t i)
{
	if (i == SIZE_MAX || row[i].is_null)
		return (struct floe_str){NULL, 0};
	return (struct floe_str){row[i].s ? row[i].s : "", row[i].len};
}

/* The current spec's partition of a row, computed as the writer computes a record's. */
static int row_key(struct compact *c, const struct old_file *of, const struct floe_pq_value *row,
		   struct floe_part_key *k)
{
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	if (of->ts != SIZE_MAX && !row[of->ts].is_null)
		rec.ts = row[of->ts].i;
	rec.host = str_at(row, of->host);
	rec.app = str_at(row, of->app);
	return floe_part_key_of(floe_table_spec(c->o->table), &rec, k);
}

/* Reads f whole, adding the partitions of its rows to rs (1, no error set, past OUTS_MAX
 * of them) and checking its row count. */
static int find_keys(struct compact *c, struct respec *rs, const struct floe_table_file *f, struct old_file *of)
{
	const struct floe_part_spec *spec = floe_table_spec(c->o->table);
	const struct floe_pq_value *row;
	uint64_t rows = 0;
	int rc;
	while ((rc = floe_pq_reader_next(of->r, &row)) == 1) {
		rows++;
		if ((rc = row_key(c, of, row, &rs->k)))
			return floe_err_set(c->err, rc, "a row of %s has no partition under the current spec: %s",
					    f->path, floe_strerror(rc));
		size_t i = 0;
		while (i < rs->nkeys && !floe_part_key_equal(spec, &rs->keys[i], &rs->k))
			i++;
		if (i == rs->nkeys) {
			if (rs->nkeys == OUTS_MAX)
				return 1;
			memset(rs->keys[i].v, 0, sizeof(rs->keys[i].v));
			floe_part_key_copy(spec, &rs->keys[rs->nkeys++], &rs->k);
		}
	}
	if (rc < 0)
		return floe_err_set(c->err, rc, "reading %s: %s", f->path,
				    floe_err_text(floe_pq_reader_error(of->r), rc));
	if (rows != (uint64_t)f->records)
		return floe_err_set(c->err, FLOE_ECORRUPT, "%s holds %" PRIu64 " rows, its manifest says %" PRId64,
				    f->path, rows, f->records);
	return 0;
}

/* Forms the group among idx[0..n) (*used files) and finds its partitions. *used is 0 when
 * the first file alone falls in more partitions than a replace holds. */
static int group_find(struct compact *c, struct respec *rs, const size_t *idx, size_t n, size_t *used)
{
	size_t per = c->o->max_files_per_commit ? c->o->max_files_per_commit : 10000;
	uint64_t bytes = 0;
	int rc = 0;
	rs->nkeys = 0;
	*used = 0;
	while (*used < n && *used < per && (*used == 0 || (c->nsort == 0 && bytes < c->target))) {
		const struct floe_table_file *f = &c->fs->f[idx[*used]];
		struct old_file of, *o = *used == 0 ? &rs->first : &of;
		if ((rc = old_open(c, f, o)))
			break;
		size_t nc;
		const struct floe_pq_column *cols = floe_pq_reader_columns(o->r, &nc);
		if (*used == 0) {
			if (nc > MAX_COLS) {
				rc = floe_err_set(c->err, FLOE_EUNSUPPORTED, "%s has %zu columns (at most %d)", f->path, nc,
						  MAX_COLS);
				break;
			}
			memcpy(rs->cols, cols, nc * sizeof(*cols));
			rs->ncols = nc;
		} else if (!floe_maintain_same_columns(rs->cols, rs->ncols, cols, nc)) {
			old_close(o);
			break;
		}
		size_t before = rs->nkeys;
		rc = find_keys(c, rs, f, o);
		if (o != &rs->first)
			old_close(o);
		if (rc == 1) {
			rs->nkeys = before; /* this file goes to the next group */
			rc = 0;
			break;
		}
		if (rc)
			break;
		bytes += (uint64_t)f->size;
		(*used)++;
	}
	return rc;
}

/* Writes the rows of the group's files idx[0..n) that fall in partition rs->keys[j], in
 * order, into one new file. */
static int write_part(struct compact *c, struct respec *rs, const size_t *idx, size_t n, size_t j)
{
	const struct floe_part_spec *spec = floe_table_spec(c->o->table);
	int rc = floe_maintain_output_open(c, rs->cols, rs->ncols);
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct floe_table_file *f = &c->fs->f[idx[i]];
		const struct floe_pq_value *row;
		struct old_file of;
		if ((rc = old_open(c, f, &of)))
			break;
		while ((rc = floe_pq_reader_next(of.r, &row)) == 1) {
			if ((rc = row_key(c, &of, row, &rs->k)) == 0 && floe_part_key_equal(spec, &rs->keys[j], &rs->k))
				rc = floe_pq_writer_add_row(c->out.w, row);
			if (rc) {
				floe_err_set(c->err, rc, "writing the rows of %s into %s: %s", f->path, c->out.tmp,
					     floe_strerror(c->out.err ? c->out.err : rc));
				break;
			}
		}
		if (rc < 0 && floe_pq_reader_error(of.r)->code)
			floe_err_set(c->err, rc, "reading %s: %s", f->path, floe_err_text(floe_pq_reader_error(of.r), rc));
		old_close(&of);
	}
	if (rc == 0)
		rc = floe_maintain_output_finish(c, &rs->keys[j]);
	return rc;
}

/* Rewrites the group idx[0..n) (its partitions found) and commits its replace. */
static int group_rewrite(struct compact *c, struct respec *rs, const size_t *idx, size_t n)
{
	int rc = 0;
	for (size_t j = 0; j < rs->nkeys && rc == 0; j++) {
		rc = write_part(c, rs, idx, n, j);
		floe_crashpoint("maintain-respec-after-output");
	}
	for (size_t i = 0; i < n && rc == 0; i++) {
		const struct floe_table_file *f = &c->fs->f[idx[i]];
		if ((rc = floe_maintain_pending_add_old(c, f->path)) == 0) {
			c->st->rows += (uint64_t)f->records;
			c->st->bytes_in += (uint64_t)f->size;
		}
	}
	if (rc == 0)
		floe_crashpoint("maintain-respec-before-replace");
	size_t abandoned = c->st->abandoned;
	if (rc == 0 && (rc = floe_maintain_pending_commit(c)) == 0 && c->st->abandoned == abandoned)
		c->st->respecced += n;
	return rc;
}

static int respec_all(struct compact *c, struct respec *rs, const size_t *idx)
{
	int rc = 0;
	for (size_t i = 0; i < c->fs->n && rc == 0;) {
		size_t j = i + 1, used = 0;
		while (j < c->fs->n && c->fs->f[idx[j]].part == c->fs->f[idx[i]].part)
			j++;
		rc = group_find(c, rs, idx + i, j - i, &used);
		if (rc == 0 && used == 0) {
			floe_warn("maintain: %s is left under partition spec %d: its rows fall in more than %d "
				  "partitions of the current spec",
				  c->fs->f[idx[i]].path, (int)c->fs->f[idx[i]].spec_id, OUTS_MAX);
			c->st->left++;
			used = 1;
		} else if (rc == 0) {
			rc = group_rewrite(c, rs, idx + i, used);
		}
		old_close(&rs->first);
		floe_maintain_output_drop(&c->out);
		floe_maintain_pending_reset(c, rc != 0);
		i += used;
	}
	return rc;
}

int floe_maintain_respec(struct compact *c)
{
	const struct floe_maintain_options *o = c->o;
	struct floe_table_files fs = {0};
	struct floe_table_scan_options so = {
	    .closed_before_us = o->now_us - (int64_t)o->cfg->maintain.min_age_ms * 1000,
	    .max_files = 100000,
	    .old_specs = true,
	    .time_field_id = floe_maintain_time_field(o),
	};
	const struct floe_table_files *cur = c->fs;
	struct respec *rs = floe_calloc(c->a, 1, sizeof(*rs));
	size_t *idx = NULL;
	int rc = rs ? floe_table_scan(o->table, &so, &fs, c->err)
		    : floe_err_set(c->err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	c->st->left += fs.skipped;
	if (rc == 0 && fs.n && !(idx = floe_calloc(c->a, fs.n, sizeof(*idx))))
		rc = floe_err_set(c->err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	if (rc == 0 && fs.n) {
		c->fs = &fs;
		floe_maintain_order(&fs, idx);
		rc = respec_all(c, rs, idx);
		c->fs = cur;
	}
	floe_free(c->a, idx);
	floe_free(c->a, rs);
	floe_table_files_fini(&fs);
	return rc;
}
