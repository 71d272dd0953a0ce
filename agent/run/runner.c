/* The runner's start-up and the lives of its objects: settings from the configuration,
 * the installation, the warehouse and the table, the spool and the batch, the inputs,
 * then recovery (runner_state.c). The run loop is in runner_loop.c. */
#include "agent/run/runner.h"

#include "agent/run/runner_impl.h"
#include "agent/run/counters.h"
#include "agent/run/colplan.h"
#include "agent/run/memory.h"
#include "agent/run/spool_left.h"

#include "agent/config/config.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/decode.h"
#include "agent/pipeline/route.h"
#include "formats/base/buf.h"
#include "formats/iceberg/metadata.h"
#include "formats/parquet/footer_ids.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/loop.h"
#include "platform/machine.h"
#include "platform/owner.h"
#include "platform/signal.h"
#include "platform/store.h"
#ifndef FLOE_NO_S3
#include "platform/s3/store_s3.h"
#endif
#include "platform/worker.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static bool signal_stop(void *ctx)
{
	(void)ctx;
	return floe_signal_stop_requested();
}

static void set_env(struct run_env *env, const struct floe_runner_options *opt)
{
	if (opt)
		env->o = *opt;
	if (!env->o.clock)
		env->o.clock = floe_env_clock();
	if (!env->o.rand)
		env->o.rand = floe_env_rand();
	if (!env->o.stop) {
		env->o.stop = signal_stop;
		env->o.stop_ctx = NULL;
	}
}

/* state_dir and this installation in it. */
static int open_state(struct floe_runner *r, struct floe_err *err)
{
	const char *dir = r->set.state_dir;
	int rc = floe_fs_mkdirs(dir);
	if (rc)
		return floe_err_set(err, rc, "cannot create state_dir %s: %s", dir,
				    floe_strerror(rc));
	char machine[17] = "";
	if (floe_identity_machine(FLOE_MACHINE_ID_PATH, machine) != 0)
		machine[0] = '\0';
	r->ck.committed_seq = -1;
	rc = floe_identity_open(r->alloc, dir, machine, true, r->env.o.rand, &r->ck.id, err);
	r->stats.state_damaged += r->ck.id.damaged;
	r->stats.installation_renewed += r->ck.id.renewed;
	/* Where this installation runs: its commits say so, so that the next installation
	 * here, after the state_dir was wiped, can tell it is this one (identity.h). */
	char hw[FLOE_MACHINE_HW_HEX + 1];
	if (rc == 0 && floe_machine_hardware(NULL, hw) == 0)
		floe_identity_home(hw, machine, dir, r->ck.id.home);
	return rc;
}

int floe_runner_open_table(struct floe_runner *r, size_t k, bool later, struct floe_table **out,
			   struct floe_err *err)
{
	const struct floe_config *cfg = r->set.cfg;
	const struct floe_config_table *tc = r->raw[k].cfg;
	char existed_at[FLOE_PATH_MAX];
	int rc = floe_warehouse_probe(r->lake.store, cfg, r->ck.id.installation, err);
	if (rc)
		return rc;
	struct floe_table_options topt =
	    floe_run_table_options(r, tc->name, &tc->partition, &tc->props, r->raw[k].spool_dir,
				   r->raw[k].what, existed_at);
	/* Each raw table evolves its schema with its own typed columns' plan. */
	topt.columns = &r->raw[k].com_cols;
	topt.sort_order = true;
	topt.sort_keys = tc->sort_keys;
	topt.nsort_keys = tc->nsort_by;
	struct floe_err e = {0};
	struct floe_table *t = NULL;
	if ((rc = floe_table_open(r->alloc, &topt, &t, &e))) {
		if (e.msg[0] && strcmp(e.msg, floe_strerror(rc)) != 0)
			return floe_err_set(err, rc, "%s", e.msg);
		return floe_err_set(err, rc, "cannot open table %s/%s/%s: %s", cfg->lake.warehouse,
				    cfg->lake.namespace, tc->name, floe_strerror(rc));
	}
	if (!later) {
		r->raw[k].spec = *floe_table_spec(t);
		*out = t;
		return 0;
	}
	/* The spool was written while the table was away, with the configuration's spec,
	 * which the table takes as a spec of its own with the first commit
	 * (floe_table_evolve_spec): its entries name no spec id. */
	/* The logs table against the checkpoint's record, as at the start (the output
	 * checks every table against its own record after this). */
	if (k == 0)
		rc = floe_runner_check_behind(r, t, err);
	if (rc) {
		floe_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* A table the start could not reach gives the typed columns their ids at the
 * committer's first contact: the plan is learnt and saved as at a start, the table's
 * commits evolve with it from now on (the files spooled under provisional ids get its
 * ids before their commit, reid_entry), and the report hands it to the main thread,
 * whose batch takes it at a seal. */
static void learn_columns(struct floe_runner *r, size_t k, struct floe_table *t)
{
	FLOE_OWNER(FLOE_ROLE_COMMITTER);
	struct run_table *rt = &r->raw[k];
	struct floe_colplan p, all;
	struct floe_err e = {0};
	if (rt->com_cols.planned || rt->com_cols.n == 0)
		return;
	/* Files written under a saved plan may wait in the spool: its ids must hold. */
	int rc = floe_run_columns_start(r->set.cfg, k, r->set.state_dir, floe_table_meta(t), t,
					floe_table_location(t), true, &p, &all, &e);
	if (rc) {
		/* The start had no plan of these columns (else com_cols would be planned): the
		 * writers' ids are provisional, and their entries wait. */
		floe_error("columns: %s; the files written under provisional ids wait in the "
			   "spool",
			   floe_err_text(&e, rc));
		return;
	}
	rt->com_cols = all;
	rt->cols_learnt_plan = p;
	rt->cols_learnt = true;
	r->com.rep.cols_learnt = true;
}

/* A raw table's output opens its table here at its first contact with the store. */
static int open_later(void *ctx, struct floe_table **out, struct floe_err *err)
{
	struct run_table *rt = ctx;
	struct floe_runner *r = rt->opener;
	size_t k = (size_t)(rt - r->raw);
	int rc = floe_runner_open_table(r, k, true, out, err);
	if (rc == 0)
		learn_columns(r, k, *out);
	return rc;
}

/* An entry written while the table was away carries provisional ids: on the committer
 * thread, before it is committed, its files get the ids the commits' plan has learnt
 * from the table (at the first contact or the start). */
static int reid_entry(void *ctx, struct floe_spool *sp, const struct floe_spool_entry *e,
		      struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_COMMITTER);
	struct run_table *rt = ctx;
	struct floe_runner *r = rt->opener;
	struct floe_table *t = floe_output_table(rt->out);
	struct floe_pq_reid map[FLOE_SPOOL_PROV_MAX];
	size_t n = 0;
	int64_t t0 = floe_run_mono_us(r);
	const char *where = t ? floe_table_location(t) : rt->cfg->name;
	int rc = t ? floe_run_columns_extend(r->set.state_dir, rt == r->raw ? NULL : rt->cfg->name, t,
					     where, e, &rt->com_cols, err)
		   : 0;
	if (rc == 0)
		rc = floe_run_columns_reid_map(&rt->com_cols, t ? floe_table_meta(t) : NULL, where, e,
					       map, &n, err);
	if (rc == 0)
		rc = floe_spool_reid(sp, e, map, n, err);
	if (rc == 0)
		floe_info("columns: spool entry %" PRIu64 " of %s (%zu files, %" PRIu64 " bytes) now "
			  "has the table's field ids, in %.1f ms",
			  e->seq, rt->what, e->nfiles, floe_spool_entry_bytes(e),
			  (double)(floe_run_mono_us(r) - t0) / 1e3);
	return rc;
}

/* Requests of an S3 store try once (once) or retry as configured. */
static void start_retries(struct floe_store *st, bool once)
{
#ifdef FLOE_NO_S3
	(void)st;
	(void)once;
#else
	(void)floe_store_s3_set_max_retries(st, once ? -1 : 0);
#endif
}

/* Raw table k: its table (a store away at the start is waited out, as the committer
 * opens it at its first contact), its spool and its output. logs' spool is state_dir/spool
 * as ever; a further table's is state_dir/tables/<name>. */
static int open_raw(struct floe_runner *r, size_t k, struct floe_err *err)
{
	struct run_table *rt = &r->raw[k];
	rt->cfg = floe_config_table_at(r->set.cfg, k);
	rt->spec = rt->cfg->partition;
	rt->opener = r;
	rt->ck_sealed = -1;
	rt->next_seq = 1;
	rt->interval_us = (int64_t)rt->cfg->commit_interval_ms * 1000;
	rt->lent_us = floe_run_mono_us(r); /* its first interval starts with the agent */
	snprintf(rt->what, sizeof(rt->what), k ? "table %s" : "the logs table", rt->cfg->name);
	int rc = k ? floe_fmt(rt->spool_dir, sizeof(rt->spool_dir), "%s/tables/%s",
			      r->set.state_dir, rt->cfg->name)
		   : floe_fmt(rt->spool_dir, sizeof(rt->spool_dir), "%s", r->set.spool_dir);
	if (rc || (rc = floe_fs_mkdirs(rt->spool_dir)))
		return floe_err_set(err, rc, "cannot make spool %s: %s", rt->spool_dir,
				    floe_strerror(rc));
	/* One attempt per request at start-up: a dead endpoint costs one connect timeout
	 * before the inputs open, not a round of backoffs; the committer retries. */
	struct floe_table *t = NULL;
	struct floe_err back = {0};
	if (!r->lake.store_down) {
		start_retries(r->lake.store, true);
		rc = floe_runner_open_table(r, k, false, &t, &back);
		start_retries(r->lake.store, false);
	}
	if (rc && rc != FLOE_EREGRESS)
		floe_err_set(err, rc, "%s", floe_err_text(&back, rc));
	if (rc && floe_warehouse_waited_out(rc)) {
		floe_warn("runner: %s; starting without it: the inputs are read into the spool, "
			  "and the table is opened (or created) and the spool committed once the "
			  "store answers",
			  floe_err_text(&back, rc));
		r->lake.store_down = true;
		r->lake.table_missing = rc == FLOE_EGONE;
		snprintf(r->lake.store_error, sizeof(r->lake.store_error), "%s", floe_err_text(&back, rc));
		r->com.last_rc = rc;
		rc = 0;
	}
	/* A history that went backwards (a stray or missing metadata file) holds back only
	 * this table's commits, as a table behind its record does: the output says so once
	 * and opens the table again at every commit. */
	bool regress = rc == FLOE_EREGRESS;
	if (rc && !regress)
		return rc;
	rc = 0;
	struct floe_output_options oo = {
	    .alloc = r->alloc,
	    .installation = r->ck.id.installation,
	    .what = rt->what,
	    /* From the positions its entries record, its own records alone (the replay
	     * routes them again). */
	    .rebuildable = true,
	    .open = open_later,
	    .open_ctx = rt,
	    .reid = reid_entry,
	};
	rc = floe_spool_open(r->alloc, rt->spool_dir, &rt->spec, &rt->spool);
	oo.spool = rt->spool;
	if (rc == 0)
		rc = floe_output_new(&oo, t, &rt->out);
	if (rc) {
		floe_table_free(t);
		return floe_err_set(err, rc, "cannot open spool %s: %s", rt->spool_dir,
				    floe_strerror(rc));
	}
	if (regress)
		floe_output_set_behind(rt->out, &back);
	return 0;
}

/* The warehouse, the table in it and the spool, with a second handle on the spool for
 * the committer thread (after start-up only the committer uses the table and the store).
 * Both threads allocate from the one budget, whose counters are atomic. A store that is
 * away or refuses for now (floe_warehouse_waited_out) does not stop the start: the
 * agent reads, spools and listens, and the committer opens the table at its first
 * contact. */
static int open_lake(struct floe_runner *r, struct floe_err *err)
{
	const struct floe_config *cfg = r->set.cfg;
	int rc = floe_warehouse_open(r->alloc, cfg, false, &r->lake.store, err);
	if (rc == 0 && cfg->lake.catalog == FLOE_CATALOG_REST)
		rc = floe_catalog_rest_new(r->alloc, cfg, r->env.o.clock, r->env.o.rand, &r->lake.catalog, err);
	if (rc)
		return rc;
	r->com.last_rc = 0;
	r->raw = floe_calloc(r->alloc, floe_config_ntables(cfg), sizeof(*r->raw));
	/* The counters, then as many for the documents' snapshot (runner_counters.c). */
	r->tabctr = floe_calloc(r->alloc, 2 * floe_config_ntables(cfg), sizeof(*r->tabctr));
	if (!r->raw || !r->tabctr)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	for (size_t k = 0; k < floe_config_ntables(cfg); k++)
		r->tabctr[k].name = floe_config_table_at(cfg, k)->name;
	for (; r->nraw < floe_config_ntables(cfg); r->nraw++)
		if ((rc = open_raw(r, r->nraw, err)))
			return rc;
	/* Each table's typed columns' plan, once its spool tells whether files written
	 * under the saved one wait in it. */
	for (size_t k = 0; rc == 0 && k < r->nraw; k++) {
		struct run_table *rt = &r->raw[k];
		struct floe_table *t = floe_output_table(rt->out);
		uint64_t *seqs = NULL;
		size_t spooled = 0;
		if (floe_spool_list(rt->spool, &seqs, &spooled) == 0)
			floe_free(r->alloc, seqs);
		rc = floe_run_columns_start(cfg, k, r->set.state_dir, t ? floe_table_meta(t) : NULL,
					    t, t ? floe_table_location(t) : rt->cfg->name,
					    spooled > 0, &rt->cols, &rt->com_cols, err);
	}
	/* A further table found behind the record of its last commit lost commits: only its
	 * commits wait (the output logs it and checks again at every commit). The logs table
	 * is checked against the checkpoint's record instead, which knows the metadata
	 * version too (runner_state.c, floe_runner_check_behind). */
	for (size_t k = 1; rc == 0 && k < r->nraw; k++) {
		struct floe_err e = {0};
		(void)floe_output_check_behind(r->raw[k].out, &e);
	}
	return rc;
}

static void left_one(void *ctx, const struct floe_spool_left *left)
{
	struct floe_runner *r = ctx;
	floe_warn("runner: %s is the spool of %s table %s, which this configuration does not "
		  "name (removed or renamed): its %" PRIu64 " entries (%" PRIu64 " bytes) are not "
		  "committed and do not count in spool.max_bytes until the table is configured "
		  "again, which commits them; delete the directory to give their rows up",
		  left->dir, left->agg ? "the aggregate" : "the", left->table, left->entries,
		  left->bytes);
	r->lake.left_entries += left->entries;
	r->lake.left_bytes += left->bytes;
}

/* Entries a previous configuration left in the spool of a table this one does not name
 * wait there, committed only when the table comes back: said at every start, and shown
 * in spool_left_entries, so that an operator who removed or renamed a table learns that
 * rows still wait for it. */
static void report_spools_left(struct floe_runner *r)
{
	r->lake.left_entries = r->lake.left_bytes = 0;
	floe_run_spools_left(r->alloc, r->set.cfg, r->set.state_dir, left_one, r);
}

/* The outputs the committer's loop goes over: the logs table's, then the aggregations'. */
static int open_outputs(struct floe_runner *r, struct floe_err *err)
{
	size_t n = r->nraw + r->set.cfg->naggs;
	if (!(r->com.outs = floe_calloc(r->alloc, n, sizeof(*r->com.outs))))
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	for (size_t i = 0; i < n; i++)
		r->com.outs[i] = i < r->nraw ? r->raw[i].out : floe_run_aggs_output(r, i - r->nraw);
	r->com.nouts = n;
	return 0;
}

/* The main thread's loop (the inputs' watch and descriptors, the committer's wake-ups)
 * and the committer thread. */
static int open_loop(struct floe_runner *r, struct floe_err *err)
{
	int rc = floe_loop_new(NULL, &r->loop);
	if (rc)
		return floe_err_set(err, rc, "cannot start the event loop: %s", floe_strerror(rc));
	return 0;
}

static int open_committer(struct floe_runner *r, struct floe_err *err)
{
	int rc = floe_worker_new(1, &r->com.thread);
	if (rc)
		return floe_err_set(err, rc, "cannot start the event loop and the committer thread: %s",
				    floe_strerror(rc));
	r->com.wake = r->loop;
	floe_run_stall_init(r);
	return 0;
}

/* The batch and, on a machine with more than one CPU, the threads that compress its
 * pages (on one CPU a thread would only take turns with the main one). */
static int open_batch(struct floe_runner *r, struct floe_err *err)
{
	uint32_t threads = r->set.cfg->agent.compress_threads;
	int rc;
	if (threads > 0 && floe_worker_cpus() > 1) {
		if ((rc = floe_worker_new(threads, &r->lake.pool)))
			return floe_err_set(err, rc, "cannot start compression threads: %s",
					    floe_strerror(rc));
		r->lake.offload = (struct floe_pq_offload){r->lake.pool, floe_worker_submit_cb,
							   floe_worker_wait_cb};
		r->set.batch.pq.offload = &r->lake.offload;
	}
	/* Partitions: as many writers as the budget holds beside the rest, then the stage,
	 * shared evenly by the raw tables. */
	struct floe_memory_partitions parts;
	if (floe_memory_partitions(r->set.cfg, &parts) == 0) {
		r->set.batch.max_writers = parts.writers / r->nraw ? parts.writers / r->nraw : 1;
		r->set.batch.stage_buffer = (size_t)(parts.stage / r->nraw);
	}
	/* The typed columns follow the built-in ones, under each table's field ids. */
	rc = 0;
	for (size_t k = 0; k < r->nraw && rc == 0; k++) {
		struct run_table *rt = &r->raw[k];
		floe_colplan_pq_columns(&rt->cols, rt->pqcols, &rt->npqcols);
		if (k == 0) {
			r->set.batch.cols = rt->pqcols;
			r->set.batch.ncols = rt->npqcols;
			rt->opt = r->set.batch;
		} else {
			floe_run_batch_options(&r->set, rt->cfg, rt->bloom, &rt->opt);
			rt->opt.pq.offload = r->set.batch.pq.offload;
			rt->opt.max_writers = r->set.batch.max_writers;
			rt->opt.stage_buffer = r->set.batch.stage_buffer;
			rt->opt.cols = rt->pqcols;
			rt->opt.ncols = rt->npqcols;
		}
		rc = floe_batch_new(r->alloc, &rt->spec, &rt->opt, rt->spool, &rt->batch);
		if (rc == 0)
			rc = floe_run_columns_mark(&rt->cols, rt->spool);
	}
	if (rc)
		return floe_err_set(err, rc, "cannot allocate the batch: %s", floe_strerror(rc));
	return 0;
}

/* Input i, of whatever type; for one that hands over lines, its decoder and, when it
 * joins lines into records, its assembler. */
static int open_input(struct floe_runner *r, size_t i, struct floe_err *err)
{
	const struct floe_config_input *in = &r->set.cfg->inputs[i];
	struct floe_err e = {0};
	int rc = floe_input_new(r->alloc, r->in.shared, i, &r->in.all[i], err);
	if (rc)
		return rc;
	if (in->nroutes || in->table_idx) {
		if ((rc = floe_route_new(r->alloc, in, &r->in.routes[i], &e)))
			return floe_err_set(err, rc, "input %s (line %d): route: %s", in->name,
					    in->line, floe_err_text(&e, rc));
	}
	r->in.n++;
	if (!floe_input_reads_lines(r->in.all[i]))
		return 0;
	if (in->format != FLOE_FORMAT_RAW || in->multiline.start) {
		struct floe_assemble_options ao;
		floe_run_assemble_options(&r->set, i, &ao);
		if ((rc = floe_assemble_new(r->alloc, &ao, &r->in.asm_[i], &e)))
			return floe_err_set(err, rc, "input %s (line %d): multiline.start: %s",
					    in->name, in->line, floe_err_text(&e, rc));
	}
	if ((rc = floe_decoder_new(r->alloc, in, &r->in.decoders[i], &e)))
		return floe_err_set(err, rc, "input %s (line %d): %s", in->name, in->line,
				    floe_err_text(&e, rc));
	char dname[32];
	snprintf(dname, sizeof(dname), "input %s", in->name);
	floe_decoder_set_name(r->in.decoders[i], dname);
	/* An input whose records all go to one table converts them at parse time, under
	 * that table's plan (with raw: false, the logs table's, for its aggregations); a
	 * routed one's are converted once routed (runner_record.c). */
	if (in->nroutes == 0)
		floe_decoder_set_columns(r->in.decoders[i], &r->raw[in->table_idx].cols);
	return 0;
}

static int open_inputs(struct floe_runner *r, struct floe_err *err)
{
	size_t n = r->set.cfg->ninputs ? r->set.cfg->ninputs : 1;
	r->in.all = floe_calloc(r->alloc, n, sizeof(*r->in.all));
	r->in.decoders = floe_calloc(r->alloc, n, sizeof(*r->in.decoders));
	r->in.asm_ = floe_calloc(r->alloc, n, sizeof(*r->in.asm_));
	r->in.routes = floe_calloc(r->alloc, n, sizeof(*r->in.routes));
	if (!r->in.all || !r->in.decoders || !r->in.asm_ || !r->in.routes)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	r->in.sink = (struct floe_input_sink){floe_runner_on_line, floe_runner_on_input_record, r};
	struct floe_input_shared_options so = {
	    .cfg = r->set.cfg,
	    .clock = r->env.o.clock,
	    .loop = r->loop,
	    .poll = r->env.o.poll,
	    .fd_pct = r->set.fd_pct,
	    .host = r->host.name,
	    .host_len = r->host.len,
	    .keep = r->env.o.carry ? r->env.o.carry->inputs : NULL,
	};
	int rc = floe_input_shared_new(r->alloc, &so, &r->in.shared, err);
	for (size_t i = 0; i < r->set.cfg->ninputs && rc == 0; i++)
		rc = open_input(r, i, err);
	return rc;
}

int floe_runner_new(const struct floe_config *cfg, const struct floe_runner_options *opt,
		    struct floe_runner **out, struct floe_err *err)
{
	/* The runner struct itself lives outside the budget it manages. */
	struct floe_runner *r = floe_calloc(NULL, 1, sizeof(*r));
	if (!r)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	set_env(&r->env, opt);
	/* memory_limit may be 4 GiB, which a 32-bit size_t cannot hold: it would wrap to 0,
	 * the allocator's "unlimited". Such a process cannot address more than SIZE_MAX
	 * bytes anyway, so that is the same limit. */
	uint64_t limit = cfg->agent.memory_limit;
	size_t lim = limit < SIZE_MAX ? (size_t)limit : SIZE_MAX;
	struct floe_runner_carry *c = r->env.o.carry;
	r->alloc = c ? &c->alloc : &r->own_alloc;
	if (c && c->alloc_ready) {
		/* No other thread allocates between two runners (the receiver is stopped). */
		c->alloc.limit = lim;
	} else {
		floe_alloc_init(r->alloc, lim);
		if (c)
			c->alloc_ready = true;
	}
	int rc = floe_run_settings_init(&r->set, cfg, err);
	if (floe_hostname(r->host.name, sizeof(r->host.name)) != 0)
		snprintf(r->host.name, sizeof(r->host.name), "%s", cfg->agent.id);
	r->host.len = strlen(r->host.name);
	if (rc == 0)
		rc = open_state(r, err);
	if (rc == 0)
		rc = open_lake(r, err);
	if (rc == 0)
		rc = open_batch(r, err);
	if (rc == 0)
		rc = floe_run_aggs_open(r, err);
	if (rc == 0)
		rc = open_outputs(r, err);
	if (rc == 0)
		rc = open_loop(r, err);
	if (rc == 0)
		rc = open_inputs(r, err);
	/* What the previous configuration kept open that no input here took (before the
	 * receiver starts: it may be on it). */
	struct floe_input_keep *keep = r->env.o.carry ? r->env.o.carry->inputs : NULL;
	if (rc == 0)
		floe_input_keep_close_rest(keep);
	if (rc == 0)
		rc = open_committer(r, err);
	if (rc == 0)
		rc = floe_input_shared_start(r->in.shared, err);
	if (rc == 0) {
		struct floe_err e = {0};
		if ((rc = floe_runner_recover(r, &e)) && e.msg[0])
			floe_err_set(err, rc, "%s", e.msg);
		else if (rc)
			floe_err_set(err, rc, "recovery failed: %s", floe_strerror(rc));
	}
	if (rc == 0)
		report_spools_left(r);
	/* How much the first seal may take, and whether there is room for one at all. */
	if (rc == 0 && floe_runner_update_room(r)) {
		floe_warn("runner: the file system of state_dir %s has %" PRIu64
			  " bytes free: inputs wait for commits to make room",
			  r->set.state_dir, r->lake.disk_avail);
		r->lake.blocked = true;
	}
	if (rc == 0)
		rc = floe_runner_status_start(r, err);
	if (rc) {
		if (err && err->code != rc)
			floe_err_set(err, rc, "%s", floe_strerror(rc));
		/* The listeners this configuration took stay open for the one that runs
		 * instead (the caller goes back to the previous one). */
		floe_runner_free(r);
		floe_runner_carry_expect(opt ? opt->carry : NULL, NULL);
		return rc;
	}
	floe_runner_carry_expect(r->env.o.carry, NULL);
	r->env.made = true;
	*out = r;
	return 0;
}

int floe_runner_carry_new(struct floe_runner_carry **out)
{
	struct floe_runner_carry *c = floe_calloc(NULL, 1, sizeof(*c));
	if (!c || floe_counter_totals_new(&c->totals) || floe_input_keep_new(&c->inputs)) {
		floe_runner_carry_free(c);
		return FLOE_ENOMEM;
	}
	*out = c;
	return 0;
}

void floe_runner_carry_free(struct floe_runner_carry *c)
{
	if (!c)
		return;
	floe_run_status_release(c);
	floe_input_keep_free(c->inputs);
	floe_counter_totals_free(c->totals);
	floe_free(NULL, c);
}

void floe_runner_carry_expect(struct floe_runner_carry *c, const struct floe_config *next)
{
	if (!c)
		return;
	c->next = next;
	floe_input_keep_expect(c->inputs, next);
}

void floe_runner_free(struct floe_runner *r)
{
	if (!r)
		return;
	/* Its counters go on in the next runner's (a reload). */
	floe_run_counters_fold(r);
	floe_runner_status_stop(r);
	if (r->com.task)
		floe_run_stall_wait(r); /* a stop ends it within its grace, or it is stuck */
	floe_worker_free(r->com.thread);
	/* The inputs' threads stop before the inputs go, the loop after them. */
	floe_input_shared_stop(r->in.shared);
	for (size_t i = 0; r->in.all && i < r->set.cfg->ninputs; i++)
		floe_input_free(r->in.all[i]);
	floe_input_shared_free(r->in.shared);
	floe_loop_free(r->loop);
	for (size_t i = 0; r->in.decoders && i < r->set.cfg->ninputs; i++)
		floe_decoder_free(r->in.decoders[i]);
	for (size_t i = 0; r->in.asm_ && i < r->set.cfg->ninputs; i++)
		floe_assemble_free(r->in.asm_[i]);
	for (size_t i = 0; r->in.routes && i < r->set.cfg->ninputs; i++)
		floe_route_free(r->in.routes[i]);
	floe_free(r->alloc, r->in.routes);
	floe_runner_drop_deferred(r);
	floe_free(r->alloc, r->b.from);
	floe_free(r->alloc, r->in.asm_);
	floe_free(r->alloc, r->in.all);
	floe_free(r->alloc, r->in.decoders);
	for (size_t k = 0; k < r->nraw; k++)
		floe_batch_free(r->raw[k].batch);
	floe_worker_free(r->lake.pool); /* after the writers: they wait for their pages */
	floe_free(r->alloc, r->com.outs);
	floe_run_aggs_free(r);
	for (size_t k = 0; k < r->nraw; k++) {
		floe_output_free(r->raw[k].out); /* before the spool it borrows */
		floe_spool_free(r->raw[k].spool);
	}
	floe_free(r->alloc, r->raw);
	floe_free(r->alloc, r->tabctr);
	floe_store_free(r->lake.store);
	floe_catalog_rest_free(r->lake.catalog);
	floe_free(r->alloc, r->ck.pos);
	floe_free(NULL, r);
}

void floe_runner_get_stats(const struct floe_runner *r, struct floe_runner_stats *out)
{
	*out = r->stats;
}
