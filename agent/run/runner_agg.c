/* The aggregations in the run (issue 17): per aggregation its aggregator, its table, its
 * spool (state_dir/agg/<table>) and the Parquet file its closed windows are written to.
 * Records added to the batch feed the aggregations that take from their input; at every
 * commit of the logs table the file is sealed into a spool entry and the entries are
 * committed to the aggregate table with floe_table_commit, the same commit path and
 * exactly-once rule (floe.commit-seq per installation) as the raw rows. At a stop open
 * windows are flushed with partial = true. Open windows are not checkpointed: a crash
 * loses them (see the README). Calls no other file of the runner. */
#include "agent/run/runner_impl.h"

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/schema/aggtable.h"
#include "formats/iceberg/metadata.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t inside struct agg_out */
#include <xxhash.h>

struct agg_out {
	const struct floe_config_agg *cfg;
	struct floe_aggregator *g;
	struct floe_table *table;
	struct floe_spool *spool;
	struct floe_part_spec spec; /* unpartitioned */
	struct floe_pq_options pq;
	uint64_t next_seq;
	/* The file being written (NULL: none since the last seal). */
	struct floe_file *file;
	struct floe_pq_writer *w;
	XXH64_state_t hash;
	char name[48];
	int err;
};

struct run_aggs {
	size_t n;
	struct agg_out *o;
};

static int schema_check(const void *ctx, const struct floe_ice_meta *m, struct floe_err *err)
{
	return floe_aggtable_schema_check(ctx, m, err);
}

static int open_one(struct floe_runner *r, const struct floe_config_agg *c, struct agg_out *o,
		    struct floe_err *err)
{
	const struct floe_config *cfg = r->set.cfg;
	o->cfg = c;
	int rc = floe_agg_new(&r->alloc, c, &o->g, err);
	if (rc)
		return rc;
	const struct floe_aggtable *t = floe_agg_table(o->g);
	size_t nf;
	const struct floe_ice_field *fields = floe_aggtable_fields(t, &nf);
	struct floe_table_options topt = {
	    .store = r->lake.store,
	    .namespace = cfg->lake.namespace,
	    .name = c->table,
	    .spec = &o->spec,
	    .agent_id = cfg->agent.id,
	    .installation_id = r->ck.id.installation,
	    .legacy_agent_id = r->ck.id.legacy_agent_id[0] ? r->ck.id.legacy_agent_id : NULL,
	    .replaces = cfg->agent.replaces,
	    .clock = r->env.clock,
	    .rand = r->env.rand,
	    .fields = fields,
	    .nfields = nf,
	    .schema_check = schema_check,
	    .schema_ctx = t,
	};
	if ((rc = floe_table_open(&r->alloc, &topt, &o->table, err)))
		return rc;
	char dir[FLOE_PATH_MAX];
	int w = snprintf(dir, sizeof(dir), "%s/agg/%s", r->set.state_dir, c->table);
	if (w < 0 || (size_t)w >= sizeof(dir))
		return floe_err_set(err, FLOE_ELIMIT, "state_dir is too long for %s", c->table);
	if ((rc = floe_fs_mkdirs(dir)) ||
	    (rc = floe_spool_open(&r->alloc, dir, &o->spec, &o->spool)))
		return floe_err_set(err, rc, "cannot open spool %s: %s", dir, floe_strerror(rc));
	uint64_t *seqs = NULL;
	size_t n = 0;
	if ((rc = floe_spool_list(o->spool, &seqs, &n)))
		return floe_err_set(err, rc, "cannot list spool %s: %s", dir, floe_strerror(rc));
	int64_t committed = floe_table_committed_seq(o->table, r->ck.id.installation);
	o->next_seq = (n ? seqs[n - 1] : 0) + 1;
	if (committed >= 0 && (uint64_t)committed >= o->next_seq)
		o->next_seq = (uint64_t)committed + 1;
	floe_free(&r->alloc, seqs);
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
	struct run_aggs *a = floe_calloc(&r->alloc, 1, sizeof(*a));
	if (!a || !(a->o = floe_calloc(&r->alloc, cfg->naggs, sizeof(*a->o)))) {
		floe_free(&r->alloc, a);
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
		floe_spool_free(a->o[i].spool);
		floe_table_free(a->o[i].table);
		floe_agg_free(a->o[i].g);
	}
	floe_free(&r->alloc, a->o);
	floe_free(&r->alloc, a);
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
		    (rc = floe_pq_writer_new(&e->r->alloc, cols, n, &o->pq, sink, o, &o->w))) {
			floe_file_close(o->file);
			o->file = NULL;
			floe_fs_unlink(path);
		}
		if (rc)
			return rc;
	}
	return floe_pq_writer_add_row(o->w, row);
}

int floe_run_aggs_record(struct floe_runner *r, size_t input, const struct floe_record *rec)
{
	struct run_aggs *a = r->aggs;
	for (size_t i = 0; a && i < a->n; i++) {
		if (!floe_agg_takes(a->o[i].g, input))
			continue;
		struct emit_ctx e = {r, &a->o[i]};
		int rc = floe_agg_add(a->o[i].g, rec, emit_row, &e);
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
		rc = floe_batch_metrics_of(&r->alloc, o->w, cols, n, &sf.metrics, &sf.nmetrics);
	}
	if (rc == 0)
		rc = floe_spool_write_entry(o->spool, &e);
	for (size_t i = 0; i < sf.nmetrics; i++) {
		floe_free(&r->alloc, (void *)sf.metrics[i].lower);
		floe_free(&r->alloc, (void *)sf.metrics[i].upper);
	}
	floe_free(&r->alloc, sf.metrics);
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

/* Commits every entry of o's spool, oldest first, skipping those the table holds. */
static int commit_one(struct floe_runner *r, struct agg_out *o)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	struct floe_err terr = {0};
	int rc = floe_spool_list(o->spool, &seqs, &n);
	if (rc || n == 0) {
		floe_free(&r->alloc, seqs);
		return rc;
	}
	if (n > COMMIT_MAX_ENTRIES)
		n = COMMIT_MAX_ENTRIES;
	struct floe_spool_entry **es = floe_calloc(&r->alloc, n, sizeof(*es));
	size_t k = 0;
	rc = es ? floe_table_refresh(o->table, &terr) : FLOE_ENOMEM;
	int64_t committed = floe_table_committed_seq(o->table, r->ck.id.installation);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct floe_spool_entry *e = NULL;
		if ((rc = floe_spool_load(o->spool, seqs[i], &e)))
			break;
		if (committed >= 0 && seqs[i] <= (uint64_t)committed) {
			rc = floe_spool_remove(o->spool, e); /* an earlier commit landed */
			floe_spool_entry_free(&r->alloc, e);
		} else {
			es[k++] = e;
		}
	}
	if (rc == 0 && k > 0)
		rc = floe_table_commit(o->table, o->spool, es, k, &terr);
	for (size_t i = 0; i < k; i++) {
		if (rc == 0)
			(void)floe_spool_remove(o->spool, es[i]);
		floe_spool_entry_free(&r->alloc, es[i]);
	}
	floe_free(&r->alloc, es);
	floe_free(&r->alloc, seqs);
	if (rc)
		floe_error("runner: commit to aggregate table %s failed: %s (its spool keeps the "
			   "rows; retrying later)",
			   o->cfg->table, floe_err_text(&terr, rc));
	return rc;
}

int floe_run_aggs_commit(struct floe_runner *r, bool stop)
{
	struct run_aggs *a = r->aggs;
	int rc = 0;
	for (size_t i = 0; a && i < a->n; i++) {
		struct agg_out *o = &a->o[i];
		struct emit_ctx e = {r, o};
		int one = stop ? floe_agg_flush(o->g, emit_row, &e)
			       : floe_agg_tick(o->g, floe_run_wall_us(r), emit_row, &e);
		if (one == 0 && o->w)
			one = seal_one(r, o);
		if (one == 0)
			one = commit_one(r, o);
		if (one && !rc)
			rc = one;
		/* What the aggregation could not use, said once at the stop. */
		const struct floe_agg_stats *st = floe_agg_stats(o->g);
		if (stop)
			floe_info("runner: aggregation %s: %" PRIu64 " events (%" PRIu64
				  " filtered out), %" PRIu64 " rows in %" PRIu64 " windows; %" PRIu64
				  " late (%" PRIu64 " dropped), %" PRIu64 " values not numbers, %" PRIu64
				  " events in __overflow__",
				  o->cfg->name, st->events, st->filtered, st->rows, st->windows,
				  st->late, st->late_dropped, st->unparsable, st->overflowed);
	}
	return rc;
}
