/* The agent's main loop and its crash recovery. */
#include "runner.h"

#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/state/blobfile.h"
#include "agent/input/preflight.h"
#include "agent/input/tail.h"
#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/state/identity.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/json/json.h"
#include "platform/clock.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"
#include "platform/path.h"
#include "platform/signal.h"
#include "platform/store.h"
#include "platform/watch.h"
#include "platform/worker.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>



static int seal(struct floe_runner *r, const char *why);

static enum floe_pq_codec codec_of(enum floe_codec c)
{
	switch (c) {
	case FLOE_CODEC_LZ4_RAW:
		return FLOE_PQ_LZ4_RAW;
	case FLOE_CODEC_UNCOMPRESSED:
		return FLOE_PQ_UNCOMPRESSED;
	default:
		return FLOE_PQ_ZSTD;
	}
}

void floe_runner_tail_options(const struct floe_runner *r, size_t i, struct floe_preflight_tail *out)
{
	floe_preflight_tail_options(r->cfg, i, r->fd_pct, out);
}

/* Input i groups lines into records (container partial lines, multiline). Every file
 * with lines in flight has a state of up to two record buffers per joiner, so the number
 * of states is bounded by half the memory budget as well as by max_open_files. */
void floe_runner_assemble_options(const struct floe_runner *r, size_t i, struct floe_assemble_options *out)
{
	const struct floe_config_input *in = &r->cfg->inputs[i];
	struct floe_assemble_options ao;
	memset(&ao, 0, sizeof(ao));
	ao.format = in->format == FLOE_FORMAT_CRI      ? FLOE_ASSEMBLE_CRI
		    : in->format == FLOE_FORMAT_DOCKER ? FLOE_ASSEMBLE_DOCKER
						       : FLOE_ASSEMBLE_RAW;
	ao.start = in->multiline.start;
	ao.max_lines = in->multiline.max_lines;
	ao.max_bytes = (size_t)in->multiline.max_bytes;
	ao.max_line_bytes = (size_t)in->max_line_bytes;
	ao.timeout_us = (int64_t)in->multiline.flush_timeout_ms * 1000;
	uint64_t per = 0;
	if (ao.start)
		per += 2 * (uint64_t)(ao.max_bytes ? ao.max_bytes : 1u << 20);
	if (ao.format != FLOE_ASSEMBLE_RAW)
		per += 3 * (uint64_t)(ao.max_line_bytes ? ao.max_line_bytes : 1u << 20);
	uint64_t fit = per ? r->cfg->agent.memory_limit / 2 / per : 0;
	ao.max_states = in->max_open_files ? in->max_open_files : 256;
	if (fit < 1)
		fit = 1;
	if (fit < ao.max_states)
		ao.max_states = (size_t)fit;
	*out = ao;
}

static int assembler_new(struct floe_runner *r, size_t i, char *why, size_t cap)
{
	const struct floe_config_input *in = &r->cfg->inputs[i];
	struct floe_assemble_options ao;
	floe_runner_assemble_options(r, i, &ao);
	struct floe_err e = {0};
	int rc = floe_assemble_new(&r->alloc, &ao, &r->asm_[i], &e);
	if (rc)
		snprintf(why, cap, "input %zu (line %d): multiline.start: %s", i + 1, in->line,
			 floe_err_text(&e, rc));
	return rc;
}

int floe_runner_new(const struct floe_config *cfg, struct floe_runner **out, char *why, size_t cap)
{
	/* The runner struct itself lives outside the budget it manages. */
	struct floe_runner *r = floe_calloc(NULL, 1, sizeof(*r));
	if (!r)
		return FLOE_ENOMEM;
	r->cfg = cfg;
	/* memory_limit may be 4 GiB, which a 32-bit size_t cannot hold: it would wrap to 0,
	 * the allocator's "unlimited". Such a process cannot address more than SIZE_MAX
	 * bytes anyway, so that is the same limit. */
	uint64_t limit = cfg->agent.memory_limit;
	floe_alloc_init(&r->alloc, limit < SIZE_MAX ? (size_t)limit : SIZE_MAX);
	int rc = floe_hostname(r->host, sizeof(r->host));
	if (rc)
		snprintf(r->host, sizeof(r->host), "%s", cfg->agent.id);
	r->host_len = strlen(r->host);
	snprintf(r->pq_created_by, sizeof(r->pq_created_by), "floe version %s", FLOE_VERSION);

	char tmp[4096];
	if ((rc = floe_path_absolute(cfg->agent.state_dir, r->state_dir, sizeof(r->state_dir)))) {
		snprintf(why, cap, "bad path: %s", floe_strerror(rc));
		goto err;
	}
	snprintf(r->checkpoint_path, sizeof(r->checkpoint_path), "%s/checkpoint", r->state_dir);
	snprintf(r->metrics_path, sizeof(r->metrics_path), "%s/metrics.json", r->state_dir);
	r->spool_max = cfg->spool.max_bytes;
	r->drop_oldest = cfg->spool.policy == FLOE_SPOOL_DROP_OLDEST;
	if ((rc = floe_fs_mkdirs(r->state_dir))) {
		snprintf(why, cap, "cannot create state_dir %s: %s", r->state_dir, floe_strerror(rc));
		goto err;
	}
	char machine[17] = "";
	if (floe_identity_machine(FLOE_MACHINE_ID_PATH, machine) != 0)
		machine[0] = '\0';
	struct floe_err e = {0};
	if ((rc = floe_identity_open(&r->alloc, r->state_dir, machine, true, NULL, &r->id, &e))) {
		snprintf(why, cap, "%s", floe_err_text(&e, rc));
		goto err;
	}
	r->ck_committed_seq = -1;
	if ((rc = floe_warehouse_open(cfg, true, &r->store, &e))) {
		snprintf(why, cap, "%s", floe_err_text(&e, rc));
		goto err;
	}
	struct floe_table_options topt = {
	    .store = r->store,
	    .namespace = cfg->lake.namespace,
	    .name = cfg->logs.name,
	    .spec = &cfg->logs.partition,
	    .agent_id = cfg->agent.id,
	    .installation_id = r->id.installation,
	    .legacy_agent_id = r->id.legacy_agent_id[0] ? r->id.legacy_agent_id : NULL,
	    .replaces = cfg->agent.replaces,
	};
	if ((rc = floe_table_open(&r->alloc, &topt, &r->table, &e))) {
		snprintf(why, cap, "%s", e.msg[0] ? e.msg : floe_strerror(rc));
		goto err;
	}
	if ((rc = floe_fmt(tmp, sizeof(tmp), "%s/spool", r->state_dir)) ||
	    (rc = floe_spool_open(&r->alloc, tmp, floe_table_spec(r->table), &r->spool))) {
		snprintf(why, cap, "cannot open spool %s: %s", tmp, floe_strerror(rc));
		goto err;
	}

	/* Memory: a writer's open row group holds its open pages, dictionaries (capped) and
	 * the finished pages of all but its largest column, which the memory budget below
	 * caps at 1 MiB whatever the row group's size; so row groups can be as large as
	 * configured. */
	struct floe_batch_options bopt;
	memset(&bopt, 0, sizeof(bopt));
	bopt.max_partitions = 4;
	bopt.target_file_size = cfg->logs.target_file_size;
	bopt.pq.codec = codec_of(cfg->logs.codec);
	bopt.pq.zstd_level = cfg->logs.zstd_level;
	bopt.pq.created_by = r->pq_created_by;
	bopt.pq.row_group_size = (size_t)cfg->logs.row_group_size;
	bopt.pq.dictionary_cap = FLOE_BATCH_DICTIONARY_CAP;
	/* Pages of all but the largest column wait for their row group: a budget per writer
	 * keeps that at about 1 MiB, whatever the file's size. */
	bopt.pq.memory_budget = FLOE_BATCH_PAGE_BUDGET;
	bopt.pq.profile = cfg->logs.profile == FLOE_PROFILE_COMPACT ? FLOE_PQ_PROFILE_COMPACT
								    : FLOE_PQ_PROFILE_DEFAULT;
	const struct floe_pq_column *cols = floe_log_columns();
	for (size_t b = 0; b < cfg->logs.nbloom_filters && r->nbloom < FLOE_LOG_NCOLS; b++)
		for (size_t c = 0; c < FLOE_LOG_NCOLS; c++)
			if (strcmp(cols[c].name, cfg->logs.bloom_filters[b]) == 0)
				r->bloom[r->nbloom++] = (struct floe_pq_bloom_column){cols[c].field_id, 0};
	bopt.pq.bloom = r->bloom;
	bopt.pq.bloom_count = r->nbloom;
	/* sort_by: the configuration checked the names; the batch copies the keys. */
	enum floe_sort_key sort_keys[FLOE_SORT_NKEYS];
	for (size_t k = 0; k < cfg->logs.nsort_by && bopt.nsort_by < FLOE_SORT_NKEYS; k++)
		if (floe_log_sort_key_parse(cfg->logs.sort_by[k], strlen(cfg->logs.sort_by[k]),
					   &sort_keys[bopt.nsort_by]) == 0)
			bopt.nsort_by++;
	bopt.sort_by = sort_keys;
	bopt.sort_buffer = (size_t)cfg->logs.sort_buffer;
	/* A second core compresses the pages the main thread has encoded; on one CPU a
	 * thread would only take turns with it. */
	if (cfg->agent.compress_threads > 0 && floe_worker_cpus() > 1) {
		if ((rc = floe_worker_new(cfg->agent.compress_threads, &r->pool))) {
			snprintf(why, cap, "cannot start compression threads: %s", floe_strerror(rc));
			goto err;
		}
		r->offload = (struct floe_pq_offload){r->pool, floe_worker_submit_cb, floe_worker_wait_cb};
		bopt.pq.offload = &r->offload;
	}
	if ((rc = floe_batch_new(&r->alloc, floe_table_spec(r->table), &bopt, r->spool, &r->batch))) {
		snprintf(why, cap, "cannot allocate the batch: %s", floe_strerror(rc));
		goto err;
	}

	r->tails = floe_calloc(&r->alloc, cfg->ninputs ? cfg->ninputs : 1, sizeof(*r->tails));
	r->decoders = floe_calloc(&r->alloc, cfg->ninputs ? cfg->ninputs : 1, sizeof(*r->decoders));
	r->asm_ = floe_calloc(&r->alloc, cfg->ninputs ? cfg->ninputs : 1, sizeof(*r->asm_));
	if (!r->tails || !r->decoders || !r->asm_) {
		rc = FLOE_ENOMEM;
		goto err;
	}
	/* The inputs' descriptors within the process's limit (raised first if it can be). */
	unsigned fd_pct;
	unsigned long long fd_limit;
	floe_preflight_descriptors(cfg, &fd_pct, &fd_limit);
	r->fd_pct = fd_pct;
	if (fd_pct < 100)
		floe_warn("runner: the inputs' max_open_files exceed the %llu descriptors allowed "
			  "(RLIMIT_NOFILE): each input gets %u %% of its max_open_files",
			  fd_limit, fd_pct);
	for (size_t i = 0; i < cfg->ninputs; i++) {
		const struct floe_config_input *in = &cfg->inputs[i];
		if (in->format != FLOE_FORMAT_RAW || in->multiline.start) {
			if ((rc = assembler_new(r, i, why, cap)))
				goto err;
		}
		if ((rc = floe_decoder_new(&r->alloc, in, &r->decoders[i], &e))) {
			snprintf(why, cap, "input %zu (line %d): %s", i + 1, in->line,
				 floe_err_text(&e, rc));
			goto err;
		}
		char dname[32];
		snprintf(dname, sizeof(dname), "input %zu", i + 1);
		floe_decoder_set_name(r->decoders[i], dname);
		struct floe_preflight_tail to;
		floe_runner_tail_options(r, i, &to);
		if ((rc = floe_tail_new(&r->alloc, &to.o, &r->tails[i]))) {
			snprintf(why, cap, "input %zu (line %d): %s", i + 1, in->line, floe_strerror(rc));
			goto err;
		}
		r->ntails++;
		/* One watch for every tail; without one (no inotify, no memory) the loop polls. */
		if (!r->watch && floe_watch_new(0, &r->watch) != 0)
			r->watch = NULL;
		if (r->watch)
			floe_tail_set_watch(r->tails[i], r->watch);
	}
	if ((rc = floe_runner_recover(r, why, cap))) {
		if (!why[0])
			snprintf(why, cap, "recovery failed: %s", floe_strerror(rc));
		goto err;
	}
	*out = r;
	return 0;
err:
	floe_runner_free(r);
	return rc ? rc : FLOE_EINVAL;
}

void floe_runner_free(struct floe_runner *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->ntails; i++)
		floe_tail_free(r->tails[i]);
	floe_watch_free(r->watch);
	for (size_t i = 0; r->decoders && i < r->cfg->ninputs; i++)
		floe_decoder_free(r->decoders[i]);
	for (size_t i = 0; r->asm_ && i < r->cfg->ninputs; i++)
		floe_assemble_free(r->asm_[i]);
	for (size_t k = 0; k < r->ndefer; k++) {
		floe_free(&r->alloc, r->defer[k].path);
		floe_free(&r->alloc, r->defer[k].msg);
	}
	floe_free(&r->alloc, r->from);
	floe_free(&r->alloc, r->asm_);
	floe_free(&r->alloc, r->tails);
	floe_free(&r->alloc, r->decoders);
	floe_batch_free(r->batch);
	floe_worker_free(r->pool); /* after the writers: they wait for their pages */
	floe_spool_free(r->spool);
	floe_table_free(r->table);
	floe_store_free(r->store);
	floe_free(&r->alloc, r->ck_pos);
	floe_free(NULL, r);
}

void floe_runner_get_stats(const struct floe_runner *r, struct floe_runner_stats *out)
{
	*out = r->stats;
}

static int on_line_assembled(struct floe_runner *r, const struct floe_tail_line *line);

/* A line from a tail becomes a record in the batch. Returning a negative code leaves
 * the line unconsumed in the tail, to be read again after the seal. */
static int on_line(void *ctx, const struct floe_tail_line *line)
{
	struct floe_runner *r = ctx;
	if (r->asm_[r->cur_input])
		return on_line_assembled(r, line);
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = r->read_us;
	rec.received_at = r->read_us;
	rec.host.p = r->host;
	rec.host.len = r->host_len;
	rec.source.p = line->path;
	rec.source.len = strlen(line->path);
	rec.has_offset = true;
	rec.offset = (int64_t)line->offset;
	rec.message.p = line->data;
	rec.message.len = line->len;
	floe_decoder_apply(r->decoders[r->cur_input], &rec);
	int rc = floe_runner_batch_add(r, &rec, r->next_seq);
	if (rc == 2) {
		r->line_refused = true;
		r->seal_needed = true;
		return FLOE_ELIMIT;
	}
	if (rc < 0) {
		r->add_error = rc;
		return rc;
	}
	r->stats.lines++;
	if (rc == 1) {
		r->seal_needed = true;
		return 1;
	}
	return 0;
}

/* Decodes an assembled record and adds it: floe_batch_add's result (2 also for a full
 * budget with rows to seal). */
static int add_assembled(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			 int64_t received_at)
{
	int rc = floe_runner_add_record(r, input, a, received_at, r->next_seq);
	if (rc >= 0 && rc != 2)
		r->stats.lines++;
	return rc;
}

static int defer_rec(struct floe_runner *r, const struct floe_assemble_rec *a)
{
	if (r->ndefer == DEFER_MAX) {
		/* Cannot happen: the runner stops feeding assemblers while records wait. */
		floe_error("runner: too many records waiting for a seal");
		return FLOE_ELIMIT;
	}
	struct deferred *d = &r->defer[r->ndefer];
	memset(d, 0, sizeof(*d));
	d->input = r->cur_input;
	d->file_id = a->file_id;
	d->len = a->len;
	d->offset = a->offset;
	d->received_at = r->read_us;
	d->has_ts = a->has_ts;
	d->ts_us = a->ts_us;
	d->stream_len = a->stream ? (a->stream_len < sizeof(d->stream) ? a->stream_len : sizeof(d->stream)) : 0;
	if (d->stream_len)
		memcpy(d->stream, a->stream, d->stream_len);
	d->path = floe_strdup(&r->alloc, a->path);
	d->msg = floe_malloc(&r->alloc, a->len ? a->len : 1);
	if (!d->path || !d->msg) {
		floe_free(&r->alloc, d->path);
		floe_free(&r->alloc, d->msg);
		floe_error("runner: no memory to keep a record for the next batch");
		return FLOE_ENOMEM;
	}
	if (a->len)
		memcpy(d->msg, a->msg, a->len);
	r->ndefer++;
	r->seal_needed = true;
	return 0;
}

/* An assembler's record: into the batch, or kept for after the seal when the batch
 * refuses it (or records are already waiting, to keep the file order). */
static int on_record(void *ctx, const struct floe_assemble_rec *a)
{
	struct floe_runner *r = ctx;
	if (r->ndefer == 0) {
		int rc = add_assembled(r, r->cur_input, a, r->read_us);
		if (rc == 1)
			r->seal_needed = true;
		if (rc == 0 || rc == 1)
			return 0;
		if (rc != 2) {
			r->add_error = rc;
			return rc;
		}
	}
	int rc = defer_rec(r, a);
	if (rc)
		r->add_error = rc;
	return rc ? rc : 1;
}

/* Adds the waiting records, in order, until the batch refuses one again. */
static int add_deferred(struct floe_runner *r)
{
	while (r->ndefer) {
		struct deferred *d = &r->defer[0];
		struct floe_assemble_rec a = {
		    .file_id = d->file_id, .path = d->path, .msg = d->msg, .len = d->len,
		    .offset = d->offset, .has_ts = d->has_ts, .ts_us = d->ts_us,
		    .stream = d->stream_len ? d->stream : NULL, .stream_len = d->stream_len,
		};
		int rc = add_assembled(r, d->input, &a, d->received_at);
		if (rc == 2) {
			if (floe_batch_rows(r->batch) == 0)
				return FLOE_ENOMEM; /* refused by an empty batch: out of budget */
			r->seal_needed = true;
			return 0;
		}
		if (rc < 0)
			return rc;
		if (rc == 1)
			r->seal_needed = true;
		floe_free(&r->alloc, d->path);
		floe_free(&r->alloc, d->msg);
		memmove(&r->defer[0], &r->defer[1], (r->ndefer - 1) * sizeof(r->defer[0]));
		r->ndefer--;
	}
	return 0;
}

/* A line of an input with an assembler. The line is consumed once the assembler has it;
 * while records wait for a seal no line is taken. */
static int on_line_assembled(struct floe_runner *r, const struct floe_tail_line *line)
{
	if (r->ndefer) {
		r->line_refused = true;
		r->seal_needed = true;
		return FLOE_ELIMIT;
	}
	int rc = floe_assemble_push(r->asm_[r->cur_input], line->file_id, line->path, line->data,
				    line->len, (int64_t)line->offset, (int64_t)line->end, r->mono_us,
				    on_record, r);
	if (rc == FLOE_ENOMEM && r->add_error == 0 && floe_batch_rows(r->batch) > 0) {
		/* Not consumed: seal to free the budget, then the line comes again. */
		r->line_refused = true;
		r->seal_needed = true;
		return FLOE_ELIMIT;
	}
	if (rc < 0) {
		if (!r->add_error)
			r->add_error = rc;
		return rc;
	}
	return r->seal_needed || r->ndefer ? 1 : 0;
}

/* Seals while asked to and puts the waiting records in the next batch. */
static int settle(struct floe_runner *r)
{
	int rc = 0;
	while (rc == 0 && (r->seal_needed || r->ndefer)) {
		bool had = r->seal_needed;
		if (r->seal_needed && (rc = seal(r, NULL)))
			break;
		if ((rc = add_deferred(r)))
			break;
		if (!had && !r->seal_needed && r->ndefer) {
			rc = FLOE_ELIMIT; /* no progress possible */
			break;
		}
	}
	return rc;
}

/* Timeouts of every assembler; with end = true (--once), everything they hold. */
static int poll_assemblers(struct floe_runner *r, bool end)
{
	int rc = 0;
	for (size_t i = 0; i < r->ntails && rc == 0; i++) {
		/* A full spool (policy block) stops records from timeouts too. */
		if (!r->asm_[i] || (r->blocked && !end))
			continue;
		r->cur_input = i;
		r->read_us = floe_clock_now_us();
		do {
			rc = end ? floe_assemble_flush(r->asm_[i], on_record, r)
				 : floe_assemble_poll(r->asm_[i], floe_clock_mono_ns() / 1000, on_record, r);
			if (rc >= 0) {
				int src = settle(r);
				if (src)
					return src;
			}
		} while (rc == 1 && end);
		if (rc == 1)
			rc = 0; /* the rest is polled next time */
	}
	if (rc < 0)
		floe_error("runner: assembling records: %s", floe_strerror(r->add_error ? r->add_error : rc));
	return rc;
}

/* The next batch starts where this one ended. Without memory for the copy its entry
 * only records no start (a damaged file of it could not be rebuilt). */
static void set_from(struct floe_runner *r, const uint8_t *p, size_t len)
{
	floe_free(&r->alloc, r->from);
	r->from = NULL;
	r->from_len = 0;
	if ((r->from = floe_malloc(&r->alloc, len ? len : 1))) {
		memcpy(r->from, p, len);
		r->from_len = len;
	}
}

/* Seals the batch into the next spool entry. why says what closes it (NULL: the
 * batch's own reason, else the memory budget): logged, so that files far below
 * target_file_size can be traced to what sealed them. */
static int seal(struct floe_runner *r, const char *why)
{
	r->seal_needed = false;
	uint64_t rows = floe_batch_rows(r->batch);
	if (rows == 0)
		return 0;
	if (!why)
		why = floe_batch_seal_reason(r->batch);
	if (!why)
		why = "memory budget";
	struct floe_buf pos;
	floe_buf_init(&pos, &r->alloc, POSITIONS_MAX);
	int rc = floe_runner_collect_positions(r, &pos);
	if (rc == 0)
		rc = floe_batch_seal_range(r->batch, floe_clock_now_us(), r->from, r->from_len, pos.data, pos.len);
	if (rc == 0)
		set_from(r, pos.data, pos.len);
	if (rc == 0) {
		uint64_t seq = r->next_seq++;
		r->stats.seals++;
		floe_info("runner: sealed spool entry %" PRIu64 ": %" PRIu64 " rows (%s)", seq, rows, why);
		/* The entry is durable and holds the positions too; the checkpoint must be
		 * written before a commit may remove the entry, so a failure here stops the
		 * agent (a restart recovers the positions from the entry). */
		floe_crashpoint("seal-before-checkpoint");
		rc = floe_runner_save_checkpoint(r, seq, pos.data, pos.len);
		if (rc)
			floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		else
			rc = floe_runner_enforce_spool_limit(r);
	}
	floe_buf_fini(&pos);
	r->seal_needed = false;
	return rc;
}

/* Sleeps until a watched directory changes (a file grew, appeared or was rotated), at
 * most IDLE_SLEEP_MS (which also paces rotate_wait closes), and hands the events to every
 * tail. */
static void idle_wait(struct floe_runner *r)
{
	if (!r->watch) {
		floe_signal_sleep_ms(IDLE_SLEEP_MS);
		return;
	}
	if (floe_watch_wait(r->watch, IDLE_SLEEP_MS) <= 0)
		return;
	struct floe_watch_event ev;
	while (floe_watch_next(r->watch, &ev) > 0)
		for (size_t i = 0; i < r->ntails; i++)
			floe_tail_notify(r->tails[i], &ev);
}

/* One read pass over every input. *progress gets the bytes consumed. */
static int read_inputs(struct floe_runner *r, size_t *progress)
{
	*progress = 0;
	if (r->blocked)
		return 0;
	r->read_us = floe_clock_now_us();
	r->mono_us = floe_clock_mono_ns() / 1000;
	for (size_t i = 0; i < r->ntails; i++) {
		size_t got = 0;
		r->line_refused = false;
		r->cur_input = i;
		int rc = floe_tail_read(r->tails[i], READ_BUDGET, on_line, r, &got);
		*progress += got;
		if (rc < 0 && !r->line_refused) {
			/* A failure of the batch is one of writing into the spool (a full or
			 * read-only state_dir), not of reading the input. */
			if (r->add_error)
				floe_error("runner: writing input %zu's lines into the spool (%s/spool) "
					   "failed: %s",
					   i + 1, r->state_dir, floe_strerror(r->add_error));
			else
				floe_error("runner: reading input %zu: %s", i + 1, floe_strerror(rc));
			return r->add_error ? r->add_error : rc;
		}
		if (r->seal_needed || r->ndefer) {
			if ((rc = settle(r)))
				return rc;
			*progress += 1; /* there is more to read */
		}
	}
	return 0;
}

/* `run --once` that read no line says why, input by input, from what the tails know. */
static void explain_nothing_read(const struct floe_runner *r)
{
	for (size_t i = 0; i < r->ntails; i++) {
		struct floe_tail_stats st;
		floe_tail_get_stats(r->tails[i], &st);
		uint64_t followed = st.files_open + st.files_parked;
		char why[512];
		int n = snprintf(why, sizeof(why), "%" PRIu64 " files followed", followed);
		if (st.started_at_end && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n,
				      ", %" PRIu64 " of them started at their end (start_at: end; "
				      "start_at: beginning reads files seen for the first time whole)",
				      st.started_at_end);
		else if (followed && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n,
				      ", all read up to their end by an earlier run");
		if (st.patterns_unmatched && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n,
				      ", %" PRIu64 " patterns matching no file", st.patterns_unmatched);
		if (st.files_unreadable && n > 0 && (size_t)n < sizeof(why))
			n += snprintf(why + n, sizeof(why) - (size_t)n, ", %" PRIu64 " files unreadable",
				      st.files_unreadable);
		if (st.files_skipped && n > 0 && (size_t)n < sizeof(why))
			(void)!snprintf(why + n, sizeof(why) - (size_t)n,
					", %" PRIu64 " files skipped (links or the agent's own files)",
					st.files_skipped);
		floe_info("runner: input %zu read no line: %s", i + 1, why);
	}
}

/* A stop whose commit failed: says what waits in the spool. */
static void stopped_uncommitted(struct floe_runner *r, int rc)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	if (floe_spool_list(r->spool, &seqs, &n) == 0)
		floe_free(&r->alloc, seqs);
	floe_warn("runner: stopping without the last commit (%s): the spool holds %zu entries "
		  "(%" PRIu64 " bytes) that the next start commits",
		  floe_strerror(rc), n, floe_spool_bytes(r->spool));
}

int floe_runner_run(struct floe_runner *r, bool once)
{
	int rc = 0;
	for (size_t i = 0; i < r->ntails; i++) {
		if ((rc = floe_tail_scan(r->tails[i]))) {
			floe_error("runner: scanning input %zu: %s", i + 1, floe_strerror(rc));
			return rc;
		}
	}
	/* The first batch starts at the positions the scans settled on. */
	struct floe_buf pos;
	floe_buf_init(&pos, &r->alloc, POSITIONS_MAX);
	if (floe_runner_collect_positions(r, &pos) == 0)
		set_from(r, pos.data, pos.len);
	floe_buf_fini(&pos);
	/* Entries left by an earlier run go in first. */
	int crc = floe_runner_commit(r);
	if (crc && (once || floe_runner_fatal(crc)))
		return crc;
	int64_t interval_us = (int64_t)r->cfg->logs.commit_interval_ms * 1000;
	int64_t last_commit = floe_clock_mono_ns() / 1000;
	int64_t last_scan = last_commit, blocked_since = 0;
	/* After a failed commit the next one waits longer (up to 5 minutes), so that an
	 * unreachable store does not take the time the inputs need for reading. */
	int64_t commit_backoff_us = 0;
	for (;;) {
		int64_t now = floe_clock_mono_ns() / 1000;
		if (r->blocked) {
			if (!blocked_since)
				blocked_since = now;
			if (once) {
				/* --once cannot wait for the next interval: make room now or fail. */
				if ((rc = floe_runner_commit(r)))
					break;
				if (r->blocked) {
					floe_error("runner: the spool is full and committing did not make room");
					rc = FLOE_ELIMIT;
					break;
				}
			}
		} else if (blocked_since) {
			r->stats.blocked_ms += (uint64_t)(now - blocked_since) / 1000;
			blocked_since = 0;
		}
		size_t progress;
		if ((rc = read_inputs(r, &progress)))
			break;
		if ((rc = poll_assemblers(r, false)))
			break;
		bool stop = floe_signal_stop_requested();
		if (floe_signal_take_hangup())
			floe_info("runner: SIGHUP: nothing is reloaded while running; a changed "
				  "configuration takes effect at the next start");
		if (once && progress == 0 && !r->blocked) {
			for (size_t i = 0; i < r->ntails && rc == 0; i++) {
				r->cur_input = i;
				r->read_us = floe_clock_now_us();
				r->mono_us = floe_clock_mono_ns() / 1000;
				for (;;) {
					r->line_refused = false;
					rc = floe_tail_flush_partial(r->tails[i], on_line, r);
					if (rc < 0 && !r->line_refused)
						break;
					if (rc == 0 && !r->seal_needed && !r->ndefer)
						break;
					/* The batch was full, or asked for a seal: seal, go on. */
					if ((rc = settle(r)))
						break;
				}
			}
			/* Then what the assemblers still hold: the input is over. */
			if (rc == 0)
				rc = poll_assemblers(r, true);
			if (rc < 0)
				break;
			stop = true;
		}
		now = floe_clock_mono_ns() / 1000;
		if (stop || now - last_commit >= interval_us + commit_backoff_us) {
			if ((rc = seal(r, stop ? (once ? "end of input" : "stopping") : "commit_interval")))
				break;
			rc = floe_runner_commit(r);
			last_commit = floe_clock_mono_ns() / 1000;
			if (rc && stop && floe_signal_stop_requested()) {
				/* The store did not take the last commit within the stop grace:
				 * the spool keeps it for the next start, which is no failure. */
				stopped_uncommitted(r, rc);
				rc = 0;
			}
			if (stop || (rc && (once || floe_runner_fatal(rc))))
				break;
			if (rc) {
				commit_backoff_us = commit_backoff_us ? commit_backoff_us * 2 : interval_us;
				if (commit_backoff_us > 300 * 1000000LL)
					commit_backoff_us = 300 * 1000000LL;
			} else {
				commit_backoff_us = 0;
			}
			rc = 0; /* the spool keeps what failed; a later commit retries */
		}
		if (!once && now - last_scan >= (int64_t)RESCAN_MS * 1000) {
			for (size_t i = 0; i < r->ntails; i++)
				floe_tail_scan(r->tails[i]);
			last_scan = now;
		}
		if (progress == 0 && !once)
			idle_wait(r);
	}
	if (blocked_since)
		r->stats.blocked_ms += (uint64_t)(floe_clock_mono_ns() / 1000 - blocked_since) / 1000;
	if (once && rc == 0 && r->stats.lines == 0)
		explain_nothing_read(r);
	floe_runner_write_metrics(r);
	if (rc)
		floe_batch_abort(r->batch);
	return rc;
}
