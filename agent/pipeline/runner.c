/* The agent's main loop and its crash recovery. */
#include "runner.h"

#include "agent/config/config.h"
#include "agent/input/checkpoint.h"
#include "agent/input/tail.h"
#include "agent/lake/partition.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/pipeline/record.h"
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

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define READ_BUDGET (1u << 20)      /* bytes per read pass before checking timers */
#define POSITIONS_MAX (64u << 20)
#define COMMIT_MAX_ENTRIES 256      /* spool entries per snapshot */
#define IDLE_SLEEP_MS 200
#define RESCAN_MS 2000
#define CHECKPOINT_VERSION 1
/* Records an assembler may emit while the batch refuses them: a push completes at most 4
 * (see floe_assemble_push), a poll or flush step at most 2 per state. */
#define DEFER_MAX 8
#define ATTRS_MAX 80 /* the decoder's fields (64) plus the runtime's stream */

/* An assembled record the batch could not take yet (it needs a seal first), copied: the
 * assembler's buffers move on. Its file is held at its offset until it is added. */
struct deferred {
	size_t input;
	uint64_t file_id;
	char *path; /* owned */
	char *msg;  /* owned */
	size_t len;
	int64_t offset, received_at;
	bool has_ts;
	int64_t ts_us;
	char stream[16];
	size_t stream_len;
};

struct floe_runner {
	const struct floe_config *cfg;
	struct floe_alloc alloc;
	char host[256];
	char state_dir[4096];
	char checkpoint_path[4200];
	struct floe_store *store;
	struct floe_table *table;
	struct floe_spool *spool;
	struct floe_batch *batch;
	struct floe_tail **tails;
	struct floe_decoder **decoders; /* one per input, like tails */
	struct floe_assemble **asm_;    /* one per input; NULL: each line is a record */
	struct deferred defer[DEFER_MAX]; /* FIFO of records waiting for a seal */
	size_t ndefer;
	int64_t mono_us;                /* monotonic time of the read pass (timeouts) */
	const char *akeys[ATTRS_MAX], *avals[ATTRS_MAX];
	size_t aklens[ATTRS_MAX], avlens[ATTRS_MAX];
	struct floe_watch *watch;       /* NULL: fixed idle sleeps */
	size_t ntails;
	size_t cur_input;               /* the input whose lines on_line receives */
	uint64_t next_seq;      /* sequence of the batch being built */
	int64_t read_us;        /* receive time of the lines being read */
	bool seal_needed;       /* the batch asked to be sealed */
	bool line_refused;      /* the batch could not take the current line */
	int add_error;
	struct floe_runner_stats stats;
	char pq_created_by[64];
	uint64_t spool_max;     /* spool.max_bytes */
	bool drop_oldest;       /* spool.policy: drop_oldest (else block) */
	bool blocked;           /* the spool is full: inputs wait (policy block) */
	char metrics_path[4200];
	struct floe_pq_bloom_column bloom[FLOE_LOG_NCOLS];
	size_t nbloom;
};

static void hold_cb(void *ctx, uint64_t file_id, int64_t offset)
{
	/* A file the tail no longer follows has no position to hold back. */
	(void)floe_tail_hold(ctx, file_id, offset < 0 ? 0 : (uint64_t)offset);
}

/* Exactly-once: lines kept by an assembler (grouped, not yet a record) and records
 * waiting for the next batch are not in the batch being sealed, so their files' saved
 * positions stop at the first of them; a restart reads them again. */
static void set_holds(struct floe_runner *r, size_t i)
{
	if (!r->asm_ || !r->asm_[i])
		return;
	floe_tail_hold_clear(r->tails[i]);
	floe_assemble_pending(r->asm_[i], hold_cb, r->tails[i]);
	for (size_t k = 0; k < r->ndefer; k++)
		if (r->defer[k].input == i)
			hold_cb(r->tails[i], r->defer[k].file_id, r->defer[k].offset);
}

static int seal(struct floe_runner *r);

/* Input positions of every tail, concatenated as (u32 length, blob) pairs. */
static int collect_positions(struct floe_runner *r, struct floe_buf *out)
{
	struct floe_buf one;
	floe_buf_init(&one, &r->alloc, POSITIONS_MAX);
	int rc = floe_buf_put_le32(out, (uint32_t)r->ntails);
	for (size_t i = 0; i < r->ntails && rc == 0; i++) {
		floe_buf_reset(&one);
		set_holds(r, i);
		if ((rc = floe_tail_positions(r->tails[i], &one)))
			break;
		if ((rc = floe_buf_put_le32(out, (uint32_t)one.len)) == 0)
			rc = floe_buf_append(out, one.data, one.len);
	}
	floe_buf_fini(&one);
	return rc;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Restores every tail from collect_positions' format. A blob saved with another number
 * of inputs restores the inputs it still has in order: the configuration changed. */
static int restore_positions(struct floe_runner *r, const uint8_t *p, size_t len)
{
	if (len < 4)
		return FLOE_ECORRUPT;
	uint32_t n = le32(p);
	size_t off = 4;
	for (uint32_t i = 0; i < n; i++) {
		if (len - off < 4)
			return FLOE_ECORRUPT;
		uint32_t l = le32(p + off);
		off += 4;
		if (l > len - off)
			return FLOE_ECORRUPT;
		if (i < r->ntails) {
			int rc = floe_tail_restore(r->tails[i], p + off, l);
			if (rc)
				return rc;
		}
		off += l;
	}
	if (n != r->ntails)
		floe_warn("runner: the checkpoint has %u inputs, the configuration %zu", n, r->ntails);
	return 0;
}

static int save_checkpoint(struct floe_runner *r, uint64_t last_seq, const uint8_t *pos, size_t len)
{
	struct floe_buf b;
	floe_buf_init(&b, &r->alloc, 2 * POSITIONS_MAX + 4096);
	int rc = floe_buf_printf(&b, "{\"version\":%d,\"agent_id\":", CHECKPOINT_VERSION);
	if (rc == 0)
		rc = floe_json_write_str(&b, r->cfg->agent.id, strlen(r->cfg->agent.id));
	if (rc == 0)
		rc = floe_buf_printf(&b, ",\"last_seq\":%" PRIu64 ",\"positions\":\"", last_seq);
	if (rc == 0)
		rc = floe_hex_put(&b, pos, len);
	if (rc == 0)
		rc = floe_buf_puts(&b, "\"}");
	if (rc == 0)
		rc = floe_checkpoint_save(r->checkpoint_path, b.data, b.len);
	floe_buf_fini(&b);
	return rc;
}

/* Loads the checkpoint: *last_seq (0 when there is none) and the positions (NULL). */
static int load_checkpoint(struct floe_runner *r, uint64_t *last_seq, uint8_t **pos, size_t *len)
{
	uint8_t *blob = NULL;
	size_t blen = 0;
	struct floe_json_doc *doc = NULL;
	*last_seq = 0;
	*pos = NULL;
	*len = 0;
	int rc = floe_checkpoint_load(&r->alloc, r->checkpoint_path, &blob, &blen);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	rc = floe_json_parse(&r->alloc, (const char *)blob, blen, 2 * POSITIONS_MAX + 4096, &doc, NULL);
	if (rc == 0) {
		const struct floe_json *root = floe_json_root(doc);
		int64_t version, seq;
		const char *hex, *agent;
		if (floe_json_get_int(root, "version", &version) || version != CHECKPOINT_VERSION ||
		    floe_json_get_int(root, "last_seq", &seq) || seq < 0 ||
		    floe_json_get_str(root, "agent_id", &agent) || floe_json_get_str(root, "positions", &hex)) {
			rc = FLOE_ECORRUPT;
		} else if (strcmp(agent, r->cfg->agent.id) != 0) {
			floe_warn("runner: the checkpoint belongs to agent %s, not %s: starting over", agent,
				  r->cfg->agent.id);
		} else {
			*last_seq = (uint64_t)seq;
			rc = floe_hex_decode(&r->alloc, hex, strlen(hex), pos, len);
		}
	}
	floe_json_doc_free(doc);
	floe_free(&r->alloc, blob);
	return rc;
}

/* Start-up: drop spool entries that the table already holds, find the newest durable
 * positions (the checkpoint, or a newer seal in the spool) and the next sequence. */
static int recover(struct floe_runner *r)
{
	uint64_t ck_seq;
	uint8_t *pos = NULL;
	size_t pos_len = 0;
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = load_checkpoint(r, &ck_seq, &pos, &pos_len);
	if (rc) {
		floe_error("runner: checkpoint %s: %s", r->checkpoint_path, floe_strerror(rc));
		return rc;
	}
	int64_t committed = floe_table_committed_seq(r->table, r->cfg->agent.id);
	uint64_t max_seq = ck_seq;
	if (committed > 0 && (uint64_t)committed > max_seq)
		max_seq = (uint64_t)committed;
	if ((rc = floe_spool_list(r->spool, &seqs, &n)))
		goto out;
	/* First the newest positions: a seal newer than the checkpoint (a crash came between
	 * the two writes) holds newer ones. They go to the checkpoint before any entry is
	 * removed, here or by the first commit, or a restart would read those lines again. */
	uint64_t pos_seq = 0;
	for (size_t i = 0; i < n; i++) {
		struct floe_spool_entry *e = NULL;
		rc = floe_spool_load(r->spool, seqs[i], &e);
		if (rc == FLOE_ECORRUPT) {
			floe_spool_quarantine(r->spool, seqs[i]);
			seqs[i] = 0; /* skipped below */
			rc = 0;
			continue;
		}
		if (rc)
			goto out;
		if (seqs[i] > ck_seq) {
			floe_free(&r->alloc, pos);
			pos = e->positions;
			pos_len = e->positions_len;
			pos_seq = seqs[i];
			e->positions = NULL;
			e->positions_len = 0;
		}
		if (seqs[i] > max_seq)
			max_seq = seqs[i];
		floe_spool_entry_free(&r->alloc, e);
	}
	if (pos_seq && (rc = save_checkpoint(r, pos_seq, pos, pos_len))) {
		floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		goto out;
	}
	for (size_t i = 0; committed >= 0 && i < n; i++) {
		if (seqs[i] == 0 || seqs[i] > (uint64_t)committed)
			continue;
		struct floe_spool_entry *e = NULL;
		if ((rc = floe_spool_load(r->spool, seqs[i], &e)))
			goto out;
		floe_info("runner: spool entry %" PRIu64 " is already in the table", seqs[i]);
		rc = floe_spool_remove(r->spool, e);
		floe_spool_entry_free(&r->alloc, e);
		if (rc)
			goto out;
	}
	if (pos && (rc = restore_positions(r, pos, pos_len))) {
		floe_error("runner: input positions are unreadable: %s", floe_strerror(rc));
		goto out;
	}
	r->next_seq = max_seq + 1;
	floe_info("runner: recovered: next seal %" PRIu64 ", table holds commits up to %" PRId64
		  ", %zu spool entries", r->next_seq, committed, n);
out:
	floe_free(&r->alloc, seqs);
	floe_free(&r->alloc, pos);
	return rc;
}

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

/* Input i groups lines into records (container partial lines, multiline). Every file
 * with lines in flight has a state of up to two record buffers per joiner, so the number
 * of states is bounded by half the memory budget as well as by max_open_files. */
static int assembler_new(struct floe_runner *r, size_t i, char *why, size_t cap)
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
	char tmp[256] = "";
	int rc;
	r->asm_[i] = floe_assemble_new(&r->alloc, &ao, tmp, sizeof(tmp), &rc);
	if (!r->asm_[i]) {
		snprintf(why, cap, "input %zu (line %d): multiline.start: %s", i + 1, in->line,
			 tmp[0] ? tmp : floe_strerror(rc));
		return rc ? rc : FLOE_EINVAL;
	}
	return 0;
}

int floe_runner_new(const struct floe_config *cfg, struct floe_runner **out, char *why, size_t cap)
{
	/* The runner struct itself lives outside the budget it manages. */
	struct floe_runner *r = floe_calloc(NULL, 1, sizeof(*r));
	if (!r)
		return FLOE_ENOMEM;
	r->cfg = cfg;
	floe_alloc_init(&r->alloc, cfg->agent.memory_limit);
	int rc = floe_hostname(r->host, sizeof(r->host));
	if (rc)
		snprintf(r->host, sizeof(r->host), "%s", cfg->agent.id);
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
	if ((rc = floe_warehouse_open(cfg, true, &r->store, why, cap)))
		goto err;
	struct floe_part_spec spec;
	if ((rc = floe_part_spec_from_config(&spec, cfg->logs.partition_by, cfg->logs.npartition_by, why, cap)))
		goto err;
	struct floe_table_options topt = {
		.store = r->store,
		.namespace = cfg->lake.namespace,
		.name = cfg->logs.name,
		.spec = &spec,
		.agent_id = cfg->agent.id,
	};
	if ((rc = floe_table_open(&r->alloc, &topt, &r->table, why, cap))) {
		if (!why[0])
			snprintf(why, cap, "cannot open table %s/%s/%s: %s", cfg->lake.warehouse, cfg->lake.namespace,
				 cfg->logs.name, floe_strerror(rc));
		goto err;
	}
	if ((rc = floe_fmt(tmp, sizeof(tmp), "%s/spool", r->state_dir)) ||
	    (rc = floe_spool_open(&r->alloc, tmp, floe_table_spec(r->table), &r->spool))) {
		snprintf(why, cap, "cannot open spool %s: %s", tmp, floe_strerror(rc));
		goto err;
	}

	/* Memory: the writers' open row groups are the big consumer; give them a quarter of
	 * the budget between them. */
	struct floe_batch_options bopt;
	memset(&bopt, 0, sizeof(bopt));
	bopt.max_partitions = 4;
	bopt.target_file_size = cfg->logs.target_file_size;
	bopt.pq.codec = codec_of(cfg->logs.codec);
	bopt.pq.zstd_level = cfg->logs.zstd_level;
	bopt.pq.created_by = r->pq_created_by;
	uint64_t rg = cfg->agent.memory_limit / 4 / bopt.max_partitions;
	bopt.pq.row_group_size = (size_t)(cfg->logs.row_group_size < rg ? cfg->logs.row_group_size : rg);
	bopt.pq.dictionary_cap = 256u << 10;
	/* Pages of all but the largest column wait for their row group: a budget per writer
	 * keeps that at about 1 MiB, whatever the file's size. */
	bopt.pq.memory_budget = 1u << 20;
	bopt.pq.profile = cfg->logs.profile == FLOE_PROFILE_COMPACT ? FLOE_PQ_PROFILE_COMPACT
								    : FLOE_PQ_PROFILE_DEFAULT;
	const struct floe_pq_column *cols = floe_log_columns();
	for (size_t b = 0; b < cfg->logs.nbloom_filters && r->nbloom < FLOE_LOG_NCOLS; b++)
		for (size_t c = 0; c < FLOE_LOG_NCOLS; c++)
			if (strcmp(cols[c].name, cfg->logs.bloom_filters[b]) == 0)
				r->bloom[r->nbloom++] = (struct floe_pq_bloom_column){cols[c].field_id, 0};
	bopt.pq.bloom = r->bloom;
	bopt.pq.bloom_count = r->nbloom;
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
	for (size_t i = 0; i < cfg->ninputs; i++) {
		const struct floe_config_input *in = &cfg->inputs[i];
		if (in->format != FLOE_FORMAT_RAW || in->multiline.start) {
			if ((rc = assembler_new(r, i, why, cap)))
				goto err;
		}
		r->decoders[i] = floe_decoder_new(&r->alloc, in, why, cap, &rc);
		if (!r->decoders[i]) {
			char tmp2[512];
			snprintf(tmp2, sizeof(tmp2), "%s", why);
			snprintf(why, cap, "input %zu (line %d): %s", i + 1, in->line, tmp2);
			goto err;
		}
		struct floe_tail_options to = {
			.paths = (const char *const *)in->paths,
			.npaths = in->npaths,
			.exclude = (const char *const *)in->exclude,
			.nexclude = in->nexclude,
			.start_at_end = in->start_at_end,
			.max_line_bytes = (size_t)in->max_line_bytes,
			.read_chunk = 64u << 10,
			.rotate_wait_ms = in->rotate_wait_ms,
			.max_open_files = in->max_open_files,
			.forget_after_ms = in->forget_after_ms,
		};
		r->tails[i] = floe_tail_new(&r->alloc, &to, &rc);
		if (!r->tails[i]) {
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
	if ((rc = recover(r))) {
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
	floe_free(&r->alloc, r->asm_);
	floe_free(&r->alloc, r->tails);
	floe_free(&r->alloc, r->decoders);
	floe_batch_free(r->batch);
	floe_spool_free(r->spool);
	floe_table_free(r->table);
	floe_store_free(r->store);
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
	rec.host.len = strlen(r->host);
	rec.source.p = line->path;
	rec.source.len = strlen(line->path);
	rec.has_offset = true;
	rec.offset = (int64_t)line->offset;
	rec.message.p = line->data;
	rec.message.len = line->len;
	floe_decoder_apply(r->decoders[r->cur_input], &rec);
	int rc = floe_batch_add(r->batch, r->next_seq, &rec);
	if (rc == FLOE_ENOMEM && floe_batch_rows(r->batch) > 0)
		rc = 2; /* out of budget: seal what we have, then retry this line */
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

/* Adds the runtime's stream to the decoded attrs (it replaces a parsed "stream"). */
static void add_stream(struct floe_runner *r, struct floe_record *rec, const char *st, size_t sl)
{
	size_t n = rec->nattrs < ATTRS_MAX ? rec->nattrs : ATTRS_MAX - 1;
	size_t at = n;
	for (size_t k = 0; k < n; k++) {
		r->akeys[k] = rec->attr_keys[k];
		r->aklens[k] = rec->attr_key_lens[k];
		r->avals[k] = rec->attr_vals[k];
		r->avlens[k] = rec->attr_val_lens[k];
		if (r->aklens[k] == 6 && memcmp(r->akeys[k], "stream", 6) == 0)
			at = k;
	}
	if (at == n && n == ATTRS_MAX)
		return;
	r->akeys[at] = "stream";
	r->aklens[at] = 6;
	r->avals[at] = st;
	r->avlens[at] = sl;
	rec->nattrs = at == n ? n + 1 : n;
	rec->attr_keys = r->akeys;
	rec->attr_key_lens = r->aklens;
	rec->attr_vals = r->avals;
	rec->attr_val_lens = r->avlens;
}

/* Decodes an assembled record and adds it: floe_batch_add's result (2 also for a full
 * budget with rows to seal). */
static int add_assembled(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			 int64_t received_at)
{
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = a->has_ts ? a->ts_us : received_at;
	rec.received_at = received_at;
	rec.host.p = r->host;
	rec.host.len = strlen(r->host);
	rec.source.p = a->path;
	rec.source.len = strlen(a->path);
	rec.has_offset = true;
	rec.offset = a->offset;
	rec.message.p = a->msg;
	rec.message.len = a->len;
	/* The runtime's time stays unless a timestamp option finds one in the message. */
	floe_decoder_apply(r->decoders[input], &rec);
	if (a->stream)
		add_stream(r, &rec, a->stream, a->stream_len);
	int rc = floe_batch_add(r->batch, r->next_seq, &rec);
	if (rc == FLOE_ENOMEM && floe_batch_rows(r->batch) > 0)
		rc = 2;
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
		if (r->seal_needed && (rc = seal(r)))
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

/* Writes state_dir/metrics.json: the counters an operator (or a test) reads to see what
 * the agent did, including every drop. Replaced atomically; a failure is only logged. */
static void write_metrics(struct floe_runner *r)
{
	struct floe_buf b;
	floe_buf_init(&b, &r->alloc, 4096);
	r->stats.parse_failures = r->stats.ts_failures = 0;
	for (size_t i = 0; i < r->ntails; i++) {
		struct floe_decode_stats ds;
		floe_decoder_get_stats(r->decoders[i], &ds);
		r->stats.parse_failures += ds.parse_failures;
		r->stats.ts_failures += ds.ts_failures;
	}
	/* Record assembly (multiline, container formats), over every input. */
	struct floe_assemble_stats as = {0}, one;
	for (size_t i = 0; i < r->ntails; i++) {
		if (!r->asm_[i])
			continue;
		floe_assemble_get_stats(r->asm_[i], &one);
		as.evictions += one.evictions;
		as.timeouts += one.timeouts;
		as.format_errors += one.format_errors;
		as.truncated += one.truncated;
		as.incomplete += one.incomplete;
	}
	const struct floe_runner_stats *st = &r->stats;
	int rc = floe_buf_printf(
		&b,
		"{\"lines\":%" PRIu64 ",\"seals\":%" PRIu64 ",\"commits\":%" PRIu64
		",\"commit_failures\":%" PRIu64 ",\"rows_committed\":%" PRIu64 ",\"replaced_utf8\":%" PRIu64
		",\"dropped_entries\":%" PRIu64 ",\"dropped_rows\":%" PRIu64 ",\"dropped_bytes\":%" PRIu64
		",\"quarantined\":%" PRIu64 ",\"blocked_ms\":%" PRIu64 ",\"spool_bytes\":%" PRIu64
		",\"next_seq\":%" PRIu64 ",\"groups_evicted\":%" PRIu64 ",\"group_timeouts\":%" PRIu64
		",\"container_format_errors\":%" PRIu64 ",\"records_truncated\":%" PRIu64
		",\"partial_incomplete\":%" PRIu64 ",\"parse_failures\":%" PRIu64 ",\"ts_failures\":%" PRIu64 "}\n",
		st->lines, st->seals, st->commits, st->commit_failures, st->rows_committed, st->replaced_utf8,
		st->dropped_entries, st->dropped_rows, st->dropped_bytes, st->quarantined, st->blocked_ms,
		floe_spool_bytes(r->spool), r->next_seq, as.evictions, as.timeouts, as.format_errors,
		as.truncated, as.incomplete, st->parse_failures, st->ts_failures);
	if (rc == 0)
		rc = floe_fs_write_atomic(r->metrics_path, b.data, b.len);
	if (rc)
		floe_warn("runner: writing %s failed: %s", r->metrics_path, floe_strerror(rc));
	floe_buf_fini(&b);
}

/* Applies the spool limit after a seal: drop_oldest removes the oldest entries (never
 * the one just sealed) until the spool fits, counting every row; block makes the inputs
 * wait until commits make room. */
static int enforce_spool_limit(struct floe_runner *r)
{
	if (floe_spool_bytes(r->spool) <= r->spool_max) {
		r->blocked = false;
		return 0;
	}
	if (!r->drop_oldest) {
		if (!r->blocked)
			floe_warn("runner: spool holds %" PRIu64 " bytes, over its limit of %" PRIu64
				  ": inputs wait for commits", floe_spool_bytes(r->spool), r->spool_max);
		r->blocked = true;
		return 0;
	}
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = floe_spool_list(r->spool, &seqs, &n);
	for (size_t i = 0; rc == 0 && i + 1 < n && floe_spool_bytes(r->spool) > r->spool_max; i++) {
		struct floe_spool_entry *e = NULL;
		rc = floe_spool_load(r->spool, seqs[i], &e);
		if (rc == FLOE_ECORRUPT) {
			rc = floe_spool_quarantine(r->spool, seqs[i]);
			continue;
		}
		if (rc)
			break;
		uint64_t rows = 0, bytes = 0;
		for (size_t f = 0; f < e->nfiles; f++) {
			rows += (uint64_t)e->files[f].records;
			bytes += (uint64_t)e->files[f].size;
		}
		if ((rc = floe_spool_remove(r->spool, e)) == 0) {
			r->stats.dropped_entries++;
			r->stats.dropped_rows += rows;
			r->stats.dropped_bytes += bytes;
			floe_warn("runner: spool over its limit: dropped entry %" PRIu64 " (%" PRIu64
				  " rows, %" PRIu64 " bytes; policy drop_oldest)", e->seq, rows, bytes);
		}
		floe_spool_entry_free(&r->alloc, e);
	}
	floe_free(&r->alloc, seqs);
	return rc;
}

static int seal(struct floe_runner *r)
{
	r->seal_needed = false;
	if (floe_batch_rows(r->batch) == 0)
		return 0;
	struct floe_buf pos;
	floe_buf_init(&pos, &r->alloc, POSITIONS_MAX);
	int rc = collect_positions(r, &pos);
	if (rc == 0)
		rc = floe_batch_seal(r->batch, floe_clock_now_us(), pos.data, pos.len);
	if (rc == 0) {
		uint64_t seq = r->next_seq++;
		r->stats.seals++;
		/* The entry is durable and holds the positions too; the checkpoint must be
		 * written before a commit may remove the entry, so a failure here stops the
		 * agent (a restart recovers the positions from the entry). */
		floe_crashpoint("seal-before-checkpoint");
		rc = save_checkpoint(r, seq, pos.data, pos.len);
		if (rc)
			floe_error("runner: checkpoint write failed: %s", floe_strerror(rc));
		else
			rc = enforce_spool_limit(r);
	}
	floe_buf_fini(&pos);
	r->seal_needed = false;
	return rc;
}

/* Commits spool entries in order, at most COMMIT_MAX_ENTRIES per snapshot. */
static int commit(struct floe_runner *r)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = floe_spool_list(r->spool, &seqs, &n);
	if (rc)
		return rc;
	/* An earlier commit whose outcome was unknown (the store went away before floe could
	 * read back the metadata it wrote) may have landed: entries the table holds go, so
	 * that they are never committed twice along with newer ones. */
	if (n > 0 && (rc = floe_table_refresh(r->table)) == 0) {
		int64_t committed = floe_table_committed_seq(r->table, r->cfg->agent.id);
		size_t keep = 0;
		for (size_t i = 0; i < n && rc == 0; i++) {
			if (committed < 0 || seqs[i] > (uint64_t)committed) {
				seqs[keep++] = seqs[i];
				continue;
			}
			struct floe_spool_entry *e = NULL;
			if ((rc = floe_spool_load(r->spool, seqs[i], &e)) == 0) {
				floe_info("runner: spool entry %" PRIu64 " is already in the table", seqs[i]);
				for (size_t f = 0; f < e->nfiles; f++)
					r->stats.rows_committed += (uint64_t)e->files[f].records;
				rc = floe_spool_remove(r->spool, e);
				floe_spool_entry_free(&r->alloc, e);
			} else if (rc == FLOE_ECORRUPT) {
				rc = floe_spool_quarantine(r->spool, seqs[i]);
			}
		}
		n = keep;
	}
	size_t done = 0;
	while (done < n && rc == 0) {
		size_t k = n - done < COMMIT_MAX_ENTRIES ? n - done : COMMIT_MAX_ENTRIES;
		struct floe_spool_entry **es = floe_calloc(&r->alloc, k, sizeof(*es));
		if (!es) {
			rc = FLOE_ENOMEM;
			break;
		}
		size_t loaded = 0;
		for (; loaded < k; loaded++) {
			rc = floe_spool_load(r->spool, seqs[done + loaded], &es[loaded]);
			if (rc == 0 && (rc = floe_spool_check_files(r->spool, es[loaded])) != 0) {
				floe_spool_entry_free(&r->alloc, es[loaded]);
				es[loaded] = NULL;
			}
			if (rc == FLOE_ECORRUPT) {
				floe_spool_quarantine(r->spool, seqs[done + loaded]);
				rc = 0;
				es[loaded] = NULL;
				break;
			}
			if (rc)
				break;
		}
		if (rc == 0 && loaded > 0)
			rc = floe_table_commit(r->table, r->spool, es, loaded);
		if (rc == 0 && loaded > 0)
			floe_crashpoint("commit-before-spool-remove");
		for (size_t i = 0; i < loaded; i++) {
			if (rc == 0) {
				for (size_t f = 0; f < es[i]->nfiles; f++)
					r->stats.rows_committed += (uint64_t)es[i]->files[f].records;
				r->stats.replaced_utf8 += es[i]->replaced_utf8;
				int rm = floe_spool_remove(r->spool, es[i]);
				if (rm)
					floe_warn("runner: removing committed spool entry %" PRIu64 ": %s",
						  es[i]->seq, floe_strerror(rm));
			}
			floe_spool_entry_free(&r->alloc, es[i]);
		}
		floe_free(&r->alloc, es);
		if (rc == 0 && loaded > 0)
			r->stats.commits++;
		/* A quarantined entry counts as handled. */
		done += loaded + (loaded < k && rc == 0 ? 1 : 0);
	}
	floe_free(&r->alloc, seqs);
	r->stats.quarantined = floe_spool_quarantined(r->spool);
	if (rc) {
		r->stats.commit_failures++;
		floe_error("runner: commit failed: %s (the spool keeps the data; retrying later)",
			   floe_strerror(rc));
	} else if (r->blocked && floe_spool_bytes(r->spool) <= r->spool_max) {
		floe_info("runner: spool below its limit again: inputs resume");
		r->blocked = false;
	}
	write_metrics(r);
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
			floe_error("runner: reading input %zu: %s", i + 1,
				   floe_strerror(r->add_error ? r->add_error : rc));
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

int floe_runner_run(struct floe_runner *r, bool once)
{
	int rc = 0;
	for (size_t i = 0; i < r->ntails; i++) {
		if ((rc = floe_tail_scan(r->tails[i]))) {
			floe_error("runner: scanning input %zu: %s", i + 1, floe_strerror(rc));
			return rc;
		}
	}
	/* Entries left by an earlier run go in first. */
	int crc = commit(r);
	if (crc && once)
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
				if ((rc = commit(r)))
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
			if ((rc = seal(r)))
				break;
			rc = commit(r);
			last_commit = floe_clock_mono_ns() / 1000;
			if (stop || (rc && once))
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
	write_metrics(r);
	if (rc)
		floe_batch_abort(r->batch);
	return rc;
}
