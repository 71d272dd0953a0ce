/* The aggregations in the run: per aggregation its aggregator, its spool
 * (state_dir/agg/<table>), its table output (agent/lake/output.h: the table, the lease and
 * the commit protocol, the same as the logs table's, exactly-once rule included) and the
 * Parquet file its closed windows are written to. Records added to the batch feed the
 * aggregations that take from their input. The committer's loop commits the aggregate
 * outputs after the logs table's: each commit the main thread hands over lends them the
 * aggregate entries sealed so far too (floe_run_aggs_lend), and until the report the main
 * thread touches neither those entries nor the aggregate tables. At a stop open windows
 * are flushed with partial = true before the last commit.
 *
 * Exactly once across a crash: the aggregators' state must always be restored to what
 * the events before the input positions the runner resumes from made of it. Those
 * positions are a raw seal's (its spool entry or the checkpoint after it), so every raw
 * seal S first persists the aggregations as of its last row (floe_run_aggs_seal): the
 * rows of windows closed since the last one go into an aggregate spool entry, then the
 * open windows' image (agg/aggregator.h), tagged with the last aggregate entry, into
 * state_dir/agg/<name>.windows.<S> (write-temp, fsync, rename). Only then is raw entry S
 * written. The image of the previous seal is kept until the next one is written, since a
 * crash before entry S is durable resumes from the previous seal's positions. Between
 * seals, windows that close while the batch is empty (an idle timeout, a stop) are
 * persisted under the current seal's number again, replacing its image. At start-up
 * (floe_run_aggs_restore) the image of the seal whose positions were restored is loaded,
 * and the aggregate entries sealed after its tag, which belong to a seal that never
 * became durable, are removed; the events they came from are read again. An aggregate
 * entry is committed only once the image that records it is durable. Calls no other file
 * of the runner.
 *
 * Inputs with raw: false put no row in the batch, so their events may move the positions
 * while no raw seal comes. Such a stretch is sealed without a raw entry (a rowless seal,
 * floe_run_aggs_seal_rowless, on the commit interval and at the end): the closed windows go
 * into an aggregate entry, the image is written as seal S.k (S the last raw seal, k = 1, 2,
 * ... the rowless seals since it; S.0 is S's own) in agg/<name>.windows.<S>.<k>, and then
 * the checkpoint, which is the durability point of these positions, records S and k. Why
 * not a raw spool entry with no file: the raw table could not commit it (an empty
 * snapshot per interval for an aggregate-only input), so the committer would have to drop
 * it uncommitted, and start-up would then see a hole between the table's last commit-seq
 * and the checkpoint's seal, which it rightly reports as lost entries; S stays the last
 * raw entry's number, so the raw spool, the committer and that check are untouched. A
 * crash before the checkpoint resumes from S.(k-1), whose image is kept as the previous
 * one until the next is written, exactly as for raw seals. */
#include "agent/run/runner_impl.h"
#include "agent/run/colplan.h"
#include "agent/run/memory.h"

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/columns.h"
#include "agent/state/blobfile.h"
#include "formats/base/buf.h"
#include "formats/iceberg/metadata.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/owner.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t inside struct agg_out */
#include <xxhash.h>

struct agg_out {
	struct floe_runner *r;
	const struct floe_config_agg *cfg;
	struct floe_aggregator *g;
	struct floe_spool *spool;   /* the main thread's handle: seals */
	struct floe_output *out;    /* the table, its commits (lent), the spool limit's side */
	char what[96];		    /* "aggregate table <name>", for the log */
	struct floe_part_spec spec; /* unpartitioned */
	struct floe_pq_options pq;
	uint64_t next_seq;
	/* The file being written (NULL: none since the last seal). */
	struct floe_file *file;
	struct floe_pq_writer *w;
	XXH64_state_t hash;
	char name[48];
	int err;
	/* The seals of the newest open windows' image and of the one before it (has_*:
	 * written by this run or found at start-up), with their rowless numbers. */
	uint64_t state_seq, prev_seq;
	uint64_t state_sub, prev_sub;
	bool has_state, has_prev;
};

struct run_aggs {
	size_t n;
	struct agg_out *o;
	uint64_t seal; /* the raw seal whose positions the open windows go with */
	uint64_t sub;  /* and the rowless seals since it (0: the raw seal's own positions) */
	bool unsealed; /* a raw: false input's event came since the last seal */
};

static int schema_check(const void *ctx, const struct floe_ice_meta *m, struct floe_err *err)
{
	return floe_aggtable_schema_check(ctx, m, err);
}

/* Opens aggregation o's table (o->g made): at start-up, or at the first contact on the
 * committer thread when the store was away (o->out's open). */
static int open_table(void *ctx, struct floe_table **out, struct floe_err *err)
{
	struct agg_out *o = ctx;
	struct floe_runner *r = o->r;
	const struct floe_config *cfg = r->set.cfg;
	const struct floe_aggtable *t = floe_agg_table(o->g);
	size_t nf;
	const struct floe_ice_field *fields = floe_aggtable_fields(t, &nf);
	char dir[FLOE_PATH_MAX], existed_at[FLOE_PATH_MAX];
	if (floe_fmt(dir, sizeof(dir), "%s/agg/%s", r->set.state_dir, o->cfg->table))
		return floe_err_set(err, FLOE_ELIMIT, "state_dir is too long for %s", o->cfg->table);
	struct floe_table_options topt =
	    floe_run_table_options(r, o->cfg->table, &o->spec, &cfg->logs.props, dir, o->what, existed_at);
	topt.fields = fields;
	topt.nfields = nf;
	topt.schema_check = schema_check;
	topt.schema_ctx = t;
	struct floe_err e = {0};
	int rc = floe_table_open(r->alloc, &topt, out, &e);
	if (rc)
		return floe_err_set(err, rc, "aggregation '%s': table %s/%s: %s", o->cfg->name,
				    cfg->lake.namespace, o->cfg->table, floe_err_text(&e, rc));
	return 0;
}

/* The aggregation, its spool and its output. A store that is away or refuses for now
 * does not stop the start, as for the logs table: the output opens the table at the
 * first commit, and the entries are numbered on from what the spool and the output's
 * record of its last commit hold. */
static int open_one(struct floe_runner *r, const struct floe_config_agg *c, struct agg_out *o,
		    struct floe_err *err)
{
	o->r = r;
	o->cfg = c;
	snprintf(o->what, sizeof(o->what), "aggregate table %s", c->table);
	/* Group keys and metrics read the typed columns the configuration gives the logs
	 * table, and the natural ones of its inputs written to no table, by their configured
	 * types: the aggregate table's key columns follow those, whether or not the table was
	 * reached to learn the columns' ids. */
	struct floe_colplan cols;
	int rc = floe_run_columns_agg(r->set.cfg, (size_t)(c - r->set.cfg->aggs), &cols, err);
	if (!rc)
		rc = floe_agg_new(r->alloc, c, &cols, &o->g, err);
	if (rc)
		return rc;
	/* Its pools grow at run time within what floe check counted for them: the rest of
	 * the aggregations' share once every reservation is made (the memory rule). */
	struct floe_memory_need need = {0};
	if (r->set.cfg->ninputs)
		(void)floe_memory_need(r->set.cfg, &need);
	floe_agg_set_growth(
	    o->g, floe_agg_growth(r->set.cfg, need.total, (size_t)(c - r->set.cfg->aggs)));
	struct floe_table *t = NULL;
	struct floe_err back = {0};
	/* A history that went backwards holds back only this table (as for a raw table). */
	if (!r->lake.store_down && (rc = open_table(o, &t, &back)) &&
	    !floe_warehouse_waited_out(rc) && rc != FLOE_EREGRESS)
		return floe_err_set(err, rc, "%s", floe_err_text(&back, rc));
	bool regress = rc == FLOE_EREGRESS;
	char dir[FLOE_PATH_MAX];
	int w = snprintf(dir, sizeof(dir), "%s/agg/%s", r->set.state_dir, c->table);
	struct floe_output_options oo = {
	    .alloc = r->alloc,
	    .installation = r->ck.id.installation,
	    .what = o->what,
	    .rebuildable = false, /* its events went on into the open windows */
	    .open = open_table,
	    .open_ctx = o,
	};
	if (w < 0 || (size_t)w >= sizeof(dir))
		rc = floe_err_set(err, FLOE_ELIMIT, "state_dir is too long for %s", c->table);
	else if ((rc = floe_fs_mkdirs(dir)) ||
		 (rc = floe_spool_open(r->alloc, dir, &o->spec, &o->spool)) ||
		 (oo.spool = o->spool, rc = floe_output_new(&oo, t, &o->out)))
		rc = floe_err_set(err, rc, "cannot open spool %s: %s", dir, floe_strerror(rc));
	if (rc) {
		floe_table_free(t);
		return rc;
	}
	/* A table found behind the record of its last commit lost commits (as for a raw
	 * table: floe_output_check_behind): only its commits wait. */
	struct floe_err e = {0};
	if (regress)
		floe_output_set_behind(o->out, &back);
	else
		(void)floe_output_check_behind(o->out, &e);
	o->next_seq = floe_output_last_seq(o->out) + 1;
	/* The logs table's writer options without its bloom filters (field ids differ) and
	 * without the page threads (rows here are few). */
	o->pq = r->set.batch.pq;
	o->pq.bloom = NULL;
	o->pq.bloom_count = 0;
	o->pq.offload = NULL;
	return 0;
}

int floe_run_aggs_open(struct floe_runner *r, struct floe_err *err)
{
	const struct floe_config *cfg = r->set.cfg;
	if (cfg->naggs == 0)
		return 0;
	struct run_aggs *a = floe_calloc(r->alloc, 1, sizeof(*a));
	if (!a || !(a->o = floe_calloc(r->alloc, cfg->naggs, sizeof(*a->o)))) {
		floe_free(r->alloc, a);
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for the aggregations");
	}
	r->aggs = a;
	for (; a->n < cfg->naggs; a->n++) {
		int rc = open_one(r, &cfg->aggs[a->n], &a->o[a->n], err);
		if (rc) {
			a->n++;
			return rc;
		}
	}
	return 0;
}

static void drop_file(struct floe_runner *r, struct agg_out *o)
{
	char path[FLOE_PATH_MAX];
	floe_pq_writer_free(o->w);
	o->w = NULL;
	if (o->file) {
		floe_file_close(o->file);
		o->file = NULL;
		snprintf(path, sizeof(path), "%s/%s.tmp", floe_spool_dir(o->spool), o->name);
		floe_fs_unlink(path);
	}
	(void)r;
}

void floe_run_aggs_free(struct floe_runner *r)
{
	struct run_aggs *a = r->aggs;
	if (!a)
		return;
	for (size_t i = 0; i < a->n; i++) {
		drop_file(r, &a->o[i]);
		floe_output_free(a->o[i].out); /* before the spool it borrows */
		floe_spool_free(a->o[i].spool);
		floe_agg_free(a->o[i].g);
	}
	floe_free(r->alloc, a->o);
	floe_free(r->alloc, a);
	r->aggs = NULL;
}

static int sink(void *ctx, const void *data, size_t len)
{
	struct agg_out *o = ctx;
	int rc = floe_file_write(o->file, data, len);
	if (rc && !o->err)
		o->err = rc;
	if (rc == 0)
		XXH64_update(&o->hash, data, len);
	return rc;
}

struct emit_ctx {
	struct floe_runner *r;
	struct agg_out *o;
};

/* A closed window's row: into the aggregation's file, opened at its first row. */
static int emit_row(void *arg, const struct floe_pq_value *row, size_t ncols)
{
	struct emit_ctx *e = arg;
	struct agg_out *o = e->o;
	(void)ncols;
	if (!o->w) {
		char path[FLOE_PATH_MAX];
		size_t n;
		const struct floe_pq_column *cols = floe_aggtable_columns(floe_agg_table(o->g), &n);
		snprintf(o->name, sizeof(o->name), "%020" PRIu64 "-0.parquet", o->next_seq);
		snprintf(path, sizeof(path), "%s/%s.tmp", floe_spool_dir(o->spool), o->name);
		XXH64_reset(&o->hash, 0);
		o->err = 0;
		int rc = floe_file_create(path, &o->file);
		if (rc == 0 &&
		    (rc = floe_pq_writer_new(e->r->alloc, cols, n, &o->pq, sink, o, &o->w))) {
			floe_file_close(o->file);
			o->file = NULL;
			floe_fs_unlink(path);
		}
		if (rc)
			return rc;
	}
	return floe_pq_writer_add_row(o->w, row);
}

/* Tells o's aggregator the clock; a step back it finds is said once, here. */
static int agg_clock(struct floe_runner *r, struct agg_out *o, int64_t now_us)
{
	struct emit_ctx e = {r, o};
	uint64_t steps = floe_agg_clock_steps(o->g);
	int64_t was = floe_agg_clock_now(o->g);
	int rc = floe_agg_clock(o->g, now_us, emit_row, &e);
	if (rc == 0 && floe_agg_clock_steps(o->g) != steps)
		floe_warn("runner: aggregation %s: the clock went back %.3f s: its open "
			  "windows were written as they were (partial rows), and its windows "
			  "start again from the next event",
			  o->cfg->name, (double)((uint64_t)was - (uint64_t)now_us) / 1e6);
	return rc;
}

int floe_run_aggs_record(struct floe_runner *r, size_t input, const struct floe_record *rec)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_aggs *a = r->aggs;
	if (a && !r->set.cfg->inputs[input].raw)
		a->unsealed = true;
	for (size_t i = 0; a && i < a->n; i++) {
		if (!floe_agg_takes(a->o[i].g, input))
			continue;
		struct emit_ctx e = {r, &a->o[i]};
		/* The clock the record's input was read at: a step back since the last one
		 * closes the open windows before the record goes in (aggregator.h). */
		int rc = agg_clock(r, &a->o[i], r->in.read_us);
		if (rc == 0)
			rc = floe_agg_add(a->o[i].g, rec, emit_row, &e);
		if (rc)
			return rc;
	}
	return 0;
}

/* Finishes the file into spool entry next_seq (a crash before the entry leaves debris
 * that the spool removes at the next start). */
static int seal_one(struct floe_runner *r, struct agg_out *o)
{
	char tmp[FLOE_PATH_MAX], path[FLOE_PATH_MAX];
	struct floe_spool_file sf = {0};
	struct floe_spool_entry e = {.seq = o->next_seq, .files = &sf, .nfiles = 1};
	int rc = floe_pq_writer_finish(o->w);
	if (rc == 0 && !(rc = o->err) && !(rc = floe_file_sync(o->file))) {
		rc = floe_file_close(o->file);
		o->file = NULL;
	}
	snprintf(tmp, sizeof(tmp), "%s/%s.tmp", floe_spool_dir(o->spool), o->name);
	snprintf(path, sizeof(path), "%s/%s", floe_spool_dir(o->spool), o->name);
	if (rc == 0)
		rc = floe_fs_rename(tmp, path);
	size_t n;
	const struct floe_pq_column *cols = floe_aggtable_columns(floe_agg_table(o->g), &n);
	if (rc == 0) {
		sf.name = o->name;
		sf.records = (int64_t)floe_pq_writer_rows(o->w);
		sf.size = (int64_t)floe_pq_writer_file_size(o->w);
		sf.has_xxh64 = true;
		sf.xxh64 = XXH64_digest(&o->hash);
		e.created_us = floe_run_wall_us(r);
		rc = floe_batch_metrics_of(r->alloc, o->w, cols, n, &sf.metrics, &sf.nmetrics);
	}
	if (rc == 0)
		rc = floe_spool_write_entry(o->spool, &e);
	for (size_t i = 0; i < sf.nmetrics; i++) {
		floe_free(r->alloc, (void *)sf.metrics[i].lower);
		floe_free(r->alloc, (void *)sf.metrics[i].upper);
	}
	floe_free(r->alloc, sf.metrics);
	if (rc) {
		floe_fs_unlink(path);
		floe_error("runner: sealing the rows of aggregate table %s failed: %s",
			   o->cfg->table, floe_strerror(rc));
	} else {
		o->next_seq++;
	}
	drop_file(r, o);
	return rc;
}

/* ---- the open windows' images ------------------------------------------------------ */

static int state_path(const struct floe_runner *r, const struct agg_out *o, uint64_t seq,
		      uint64_t sub, char *out, size_t cap)
{
	int n = sub ? snprintf(out, cap, "%s/agg/%s.windows.%020" PRIu64 ".%" PRIu64,
			       r->set.state_dir, o->cfg->name, seq, sub)
		    : snprintf(out, cap, "%s/agg/%s.windows.%020" PRIu64, r->set.state_dir,
			       o->cfg->name, seq);
	return n < 0 || (size_t)n >= cap ? FLOE_ELIMIT : 0;
}

/* Seals o's closed windows' rows into an aggregate entry, then writes the image of its
 * open windows as seal seq's, tagged with the newest aggregate entry; forgets the image
 * before the previous one (a resume can only be from seq or the seal before it). */
static int write_image(void *ctx, const void *p, size_t n)
{
	return floe_file_write(ctx, p, n);
}

/* Writes o's image to path: a temporary file, fsynced, renamed into place. */
static int save_image(struct agg_out *o, const char *path)
{
	char tmp[FLOE_PATH_MAX + 8];
	struct floe_file *f = NULL;
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int rc = floe_file_create(tmp, &f);
	if (rc)
		return rc;
	rc = floe_agg_save(o->g, o->next_seq - 1, write_image, f);
	if (rc == 0)
		rc = floe_file_sync(f);
	int c = floe_file_close(f);
	rc = rc ? rc : c;
	if (rc == 0)
		rc = floe_fs_rename(tmp, path);
	if (rc)
		(void)floe_fs_unlink(tmp);
	return rc;
}

static int persist(struct floe_runner *r, struct agg_out *o, uint64_t seq, uint64_t sub)
{
	char path[FLOE_PATH_MAX];
	int rc = o->w ? seal_one(r, o) : 0;
	if (rc == 0)
		rc = state_path(r, o, seq, sub, path, sizeof(path));
	if (rc)
		return rc;
	floe_crashpoint("agg-before-windows");
	if ((rc = save_image(o, path))) {
		floe_error("runner: writing the open windows of aggregation %s to %s failed: %s",
			   o->cfg->name, path, floe_strerror(rc));
		return rc;
	}
	if (o->has_state && (o->state_seq != seq || o->state_sub != sub)) {
		if (o->has_prev && (o->prev_seq != seq || o->prev_sub != sub) &&
		    state_path(r, o, o->prev_seq, o->prev_sub, path, sizeof(path)) == 0)
			(void)floe_fs_unlink(path);
		o->prev_seq = o->state_seq;
		o->prev_sub = o->state_sub;
		o->has_prev = true;
	}
	o->state_seq = seq;
	o->state_sub = sub;
	o->has_state = true;
	return 0;
}

static int seal_all(struct run_aggs *a, struct floe_runner *r, uint64_t seq, uint64_t sub)
{
	int rc = 0;
	for (size_t i = 0; a && i < a->n && rc == 0; i++)
		rc = persist(r, &a->o[i], seq, sub);
	if (a && rc == 0) {
		a->seal = seq;
		a->sub = sub;
		a->unsealed = false;
	}
	return rc;
}

int floe_run_aggs_seal(struct floe_runner *r, uint64_t seq)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	return seal_all(r->aggs, r, seq, 0);
}

bool floe_run_aggs_unsealed(const struct floe_runner *r)
{
	return r->aggs && r->aggs->unsealed;
}

int floe_run_aggs_seal_rowless(struct floe_runner *r, uint64_t seq, uint64_t *sub)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_aggs *a = r->aggs;
	*sub = a && a->seal == seq ? a->sub + 1 : 1;
	return seal_all(a, r, seq, *sub);
}

/* An image being read, through a buffer: restoring makes many small reads. */
struct image_file {
	int fd;
	uint64_t off; /* of the file, after buf's bytes */
	size_t pos, len;
	uint8_t buf[16384];
};

static int read_image(void *ctx, void *p, size_t n)
{
	struct image_file *f = ctx;
	while (n > 0) {
		if (f->pos == f->len) {
			size_t got = 0;
			int rc = floe_fs_pread(f->fd, f->buf, sizeof(f->buf), f->off, &got);
			if (rc)
				return rc;
			if (got == 0)
				return FLOE_ECORRUPT; /* cut short */
			f->off += got;
			f->pos = 0;
			f->len = got;
		}
		size_t k = f->len - f->pos < n ? f->len - f->pos : n;
		memcpy(p, f->buf + f->pos, k);
		f->pos += k;
		p = (uint8_t *)p + k;
		n -= k;
	}
	return 0;
}

struct stale {
	const struct floe_runner *r;
	const struct agg_out *o;
	uint64_t keep, keep_sub;
};

/* Removes images of o's aggregation other than keep's (later seals that never became
 * durable, earlier ones that are superseded) and temporary files a crash left. */
static int drop_stale(void *ctx, const char *name)
{
	struct stale *s = ctx;
	size_t nl = strlen(s->o->cfg->name);
	char path[FLOE_PATH_MAX];
	if (strncmp(name, s->o->cfg->name, nl) != 0 || strncmp(name + nl, ".windows.", 9) != 0)
		return 0;
	char *end = NULL;
	unsigned long long seq = strtoull(name + nl + 9, &end, 10), sub = 0;
	if (end && end[0] == '.' && end[1] >= '0' && end[1] <= '9')
		sub = strtoull(end + 1, &end, 10); /* a rowless seal's */
	if (!end || (*end && strcmp(end, ".tmp") != 0) ||
	    (!*end && seq == s->keep && sub == s->keep_sub))
		return 0;
	int w = snprintf(path, sizeof(path), "%s/agg/%s", s->r->set.state_dir, name);
	if (w > 0 && (size_t)w < sizeof(path))
		(void)floe_fs_unlink(path);
	return 0;
}

/* A damaged image goes to agg/quarantine/ for an operator to look at, counted. */
static int set_aside(struct floe_runner *r, const char *path)
{
	char to[FLOE_PATH_MAX];
	int rc = floe_blobfile_quarantine(path, to, sizeof(to));
	r->stats.state_damaged++;
	if (rc)
		floe_warn("runner: moving %s to quarantine: %s", path, floe_strerror(rc));
	return 0;
}

static int restore_one(struct floe_runner *r, struct agg_out *o, uint64_t seq, uint64_t sub,
		       struct floe_err *err)
{
	char path[FLOE_PATH_MAX];
	struct stale st = {r, o, seq, sub};
	int rc = snprintf(path, sizeof(path), "%s/agg", r->set.state_dir) > 0
		     ? floe_fs_list(r->alloc, path, drop_stale, &st)
		     : FLOE_ELIMIT;
	if (rc == 0)
		rc = state_path(r, o, seq, sub, path, sizeof(path));
	struct image_file f = {.fd = -1};
	int64_t committed = floe_output_committed(o->out);
	uint64_t tag = committed > 0 ? (uint64_t)committed : 0;
	if (rc == 0 && (rc = floe_fs_open_read(path, &f.fd)) == -ENOENT) {
		/* No image of that seal (the aggregation is new, or that seal's image was never
		 * written): the aggregation starts empty there, and entries the table does not
		 * hold yet are of a seal that never became durable. */
		if (seq > 0 || sub > 0)
			floe_info("runner: aggregation %s: no open windows saved at seal %" PRIu64
				  ".%" PRIu64 ": it starts empty",
				  o->cfg->name, seq, sub);
		rc = 0;
	} else if (rc) {
		return floe_err_set(err, rc, "cannot open %s: %s", path, floe_strerror(rc));
	} else {
		struct floe_err le = {0};
		rc = floe_agg_load(o->g, read_image, &f, &tag, &le);
		floe_fs_close(f.fd);
		r->stats.agg_windows_lost += floe_agg_load_lost(o->g);
		o->has_state = true;
		o->state_seq = seq;
		o->state_sub = sub;
		if (rc == FLOE_EFORMAT && floe_agg_load_lost(o->g) == 0)
			/* An image of another configuration with no window open in it (a clean
			 * stop or a reload wrote the windows as partial rows first): nothing is
			 * lost, and an error here would be a false alarm at every such change. */
			floe_info("runner: aggregation %s: %s held no open window (%s): it "
				  "starts empty",
				  o->cfg->name, path, floe_err_text(&le, rc));
		else if (rc == FLOE_EFORMAT || rc == FLOE_ECORRUPT)
			/* Nothing can bring those events back: said, and the aggregation goes on.
			 * The entries a damaged image names are unknown: all are kept. */
			floe_error("runner: aggregation %s: the open windows in %s are lost: %s",
				   o->cfg->name, path, floe_err_text(&le, rc));
		if (rc == FLOE_ECORRUPT)
			return set_aside(r, path);
		if (rc && rc != FLOE_EFORMAT)
			return floe_err_set(err, rc, "cannot read %s: %s", path,
					    floe_err_text(&le, rc));
		rc = 0;
	}
	/* Entries after the image's tag were sealed by a seal that did not become durable:
	 * their rows will be made again from the events read again. */
	if ((rc = floe_output_forget_after(o->out, tag)))
		return floe_err_set(err, rc, "cannot clean spool %s: %s", floe_spool_dir(o->spool),
				    floe_strerror(rc));
	o->next_seq = tag + 1;
	if (committed >= 0 && (uint64_t)committed >= o->next_seq)
		o->next_seq = (uint64_t)committed + 1;
	return 0;
}

int floe_run_aggs_restore(struct floe_runner *r, uint64_t seq, uint64_t sub, struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_aggs *a = r->aggs;
	int rc = 0;
	for (size_t i = 0; a && i < a->n && rc == 0; i++)
		rc = restore_one(r, &a->o[i], seq, sub, err);
	if (a) {
		a->seal = seq;
		a->sub = sub;
	}
	return rc;
}

/* ---- commits: the outputs, which the committer's loop takes -------------------------- */

struct floe_output *floe_run_aggs_output(const struct floe_runner *r, size_t i)
{
	return r->aggs->o[i].out;
}

void floe_run_aggs_lend(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_aggs *a = r->aggs;
	for (size_t i = 0; a && i < a->n; i++)
		floe_output_lend(a->o[i].out, a->o[i].next_seq - 1);
}

void floe_run_aggs_late(const struct floe_runner *r, uint64_t *late, uint64_t *dropped,
			uint64_t *future, uint64_t *steps)
{
	*late = *dropped = *future = *steps = 0;
	for (size_t i = 0; r->aggs && i < r->aggs->n; i++) {
		const struct floe_agg_stats *st = floe_agg_stats(r->aggs->o[i].g);
		*late += st->late;
		*dropped += st->late_dropped;
		*future += st->future;
		*steps += floe_agg_clock_steps(r->aggs->o[i].g);
	}
}

uint64_t floe_run_aggs_unparsable(const struct floe_runner *r)
{
	uint64_t n = 0;
	for (size_t i = 0; r->aggs && i < r->aggs->n; i++)
		n += floe_agg_stats(r->aggs->o[i].g)->unparsable;
	return n;
}

void floe_run_aggs_pool(const struct floe_runner *r, uint64_t *coarse, uint64_t *bytes,
			uint64_t *grown)
{
	*coarse = *bytes = *grown = 0;
	for (size_t i = 0; r->aggs && i < r->aggs->n; i++) {
		const struct floe_agg_stats *st = floe_agg_stats(r->aggs->o[i].g);
		*coarse += st->coarse;
		*bytes += st->pool_bytes;
		*grown += st->pool_grown;
	}
}

/* ---- closing windows between seals, on the main thread --------------------------------- */

int floe_run_aggs_close(struct floe_runner *r, bool stop)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct run_aggs *a = r->aggs;
	int rc = 0;
	/* Windows close here only when the batch is empty and no raw: false input's event
	 * came since the last seal: the open windows then cover the events up to the last
	 * seal's positions, and their image can be its. */
	bool settled = floe_runner_rows(r) == 0 && !(a && a->unsealed);
	for (size_t i = 0; a && i < a->n; i++) {
		struct agg_out *o = &a->o[i];
		struct emit_ctx e = {r, o};
		int64_t now = floe_run_wall_us(r);
		int one = !settled ? 0
			  : stop   ? floe_agg_flush(o->g, emit_row, &e)
				   : agg_clock(r, o, now);
		if (one == 0 && settled && !stop)
			one = floe_agg_tick(o->g, now, emit_row, &e);
		if (one == 0 && o->w)
			one = persist(r, o, a->seal, a->sub);
		if (one && !rc)
			rc = one;
		/* What the aggregation could not use, said once at the stop. */
		const struct floe_agg_stats *st = floe_agg_stats(o->g);
		if (stop)
			floe_info("runner: aggregation %s: %" PRIu64 " events (%" PRIu64
				  " filtered out), %" PRIu64 " rows in %" PRIu64
				  " windows; %" PRIu64 " late (%" PRIu64 " dropped, %" PRIu64
				  " too far ahead of the clock), %" PRIu64
				  " values not numbers, %" PRIu64 " events in __overflow__, %" PRIu64
				  " sketches coarse (their window's pool could not grow: its share "
				  "of agent.memory_limit was taken), %" PRIu64 " steps back of the clock",
				  o->cfg->name, st->events, st->filtered, st->rows, st->windows,
				  st->late, st->late_dropped, st->future, st->unparsable, st->overflowed,
				  st->coarse, floe_agg_clock_steps(o->g));
	}
	return rc;
}
