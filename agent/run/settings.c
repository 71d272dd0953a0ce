/* The runner's settings, taken from the configuration once at start-up: paths under
 * state_dir, the host column, the Parquet writers' options, the spool policy, and each
 * input's tail and assembler options. Nothing here reads the configuration again later. */
#include "agent/run/runner_impl.h"
#include "agent/run/settings.h"

#include "agent/config/config.h"
#include "agent/input/preflight.h"
#include "agent/pipeline/assemble.h"
#include "formats/base/buf.h"
#include "platform/clock.h"
#include "platform/log.h"
#include "platform/path.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

void floe_run_pq_options(const struct floe_config_table *t, struct floe_pq_options *o)
{
	memset(o, 0, sizeof(*o));
	o->codec = t->codec == FLOE_CODEC_LZ4_RAW	? FLOE_PQ_LZ4_RAW
		   : t->codec == FLOE_CODEC_UNCOMPRESSED ? FLOE_PQ_UNCOMPRESSED
								: FLOE_PQ_ZSTD;
	o->zstd_level = t->zstd_level;
	o->row_group_size = (size_t)t->row_group_size;
	/* Memory: a writer's open row group holds its open pages, dictionaries (capped) and
	 * the finished pages of all but its largest column, which a budget per writer keeps
	 * at about 1 MiB whatever the file's size; so row groups can be as large as
	 * configured. */
	o->dictionary_cap = FLOE_BATCH_DICTIONARY_CAP;
	o->memory_budget = FLOE_BATCH_PAGE_BUDGET;
	o->profile = t->profile == FLOE_PROFILE_COMPACT ? FLOE_PQ_PROFILE_COMPACT
							       : FLOE_PQ_PROFILE_DEFAULT;
}

/* Table t's batch options: the writers', the seal rules, the sort keys and bloom filters
 * the configuration parsed (agent/config holds them typed); bloom (FLOE_LOG_NCOLS) is
 * where b->pq.bloom points. */
void floe_run_batch_options(const struct run_settings *s, const struct floe_config_table *t,
			    struct floe_pq_bloom_column *bloom, struct floe_batch_options *b)
{
	memset(b, 0, sizeof(*b));
	floe_run_pq_options(t, &b->pq);
	b->pq.created_by = s->pq_created_by;
	/* max_writers and stage_buffer: the runner's, from the memory budget
	 * (floe_memory_partitions); the batch measures once more when a writer opens. */
	b->target_file_size = t->target_file_size;
	for (size_t i = 0; i < t->nbloom_filters && i < FLOE_LOG_NCOLS; i++)
		bloom[i] = (struct floe_pq_bloom_column){t->bloom_ids[i], 0};
	b->pq.bloom = bloom;
	b->pq.bloom_count = t->nbloom_filters < FLOE_LOG_NCOLS ? t->nbloom_filters : FLOE_LOG_NCOLS;
	b->sort_by = t->sort_keys;
	b->nsort_by = t->nsort_by;
	b->sort_buffer = (size_t)t->sort_buffer;
}

int floe_run_settings_init(struct run_settings *s, const struct floe_config *cfg,
			   struct floe_err *err)
{
	memset(s, 0, sizeof(*s));
	s->cfg = cfg;
	snprintf(s->pq_created_by, sizeof(s->pq_created_by), "floe version %s", FLOE_VERSION);
	int rc = floe_path_absolute(cfg->agent.state_dir, s->state_dir, sizeof(s->state_dir));
	if (rc)
		return floe_err_set(err, rc, "bad path: %s", floe_strerror(rc));
	if ((rc = floe_fmt(s->checkpoint_path, sizeof(s->checkpoint_path), "%s/checkpoint",
			   s->state_dir)) ||
	    (rc = floe_fmt(s->metrics_path, sizeof(s->metrics_path), "%s/metrics.json",
			   s->state_dir)) ||
	    (rc = floe_fmt(s->spool_dir, sizeof(s->spool_dir), "%s/spool", s->state_dir)))
		return floe_err_set(err, rc, "state_dir %s: path too long", s->state_dir);
	s->spool_max = cfg->spool.max_bytes;
	s->drop_oldest = cfg->spool.policy == FLOE_SPOOL_DROP_OLDEST;
	/* The loop seals and commits on the shortest of the tables' intervals; each table's
	 * entries go to the committer on its own (floe_runner_commit_start). */
	s->commit_interval_us = (int64_t)cfg->logs.commit_interval_ms * 1000;
	for (size_t k = 1; k < floe_config_ntables(cfg); k++)
		if ((int64_t)floe_config_table_at(cfg, k)->commit_interval_ms * 1000 < s->commit_interval_us)
			s->commit_interval_us = (int64_t)floe_config_table_at(cfg, k)->commit_interval_ms * 1000;
	floe_run_batch_options(s, &cfg->logs, s->bloom, &s->batch);
	/* The inputs' descriptors within the process's limit (raised first if it can be). */
	unsigned long long fd_limit;
	floe_preflight_descriptors(cfg, &s->fd_pct, &fd_limit);
	if (s->fd_pct < 100)
		floe_warn("runner: the inputs' max_open_files and max_connections exceed the %llu "
			  "descriptors allowed (RLIMIT_NOFILE): each input gets %u %% of its "
			  "max_open_files, each syslog listener of its max_connections",
			  fd_limit, s->fd_pct);
	return 0;
}

/* Input i groups lines into records (container partial lines, multiline). Every file
 * with lines in flight has a state of up to two record buffers per joiner, so the number
 * of states is bounded by half the memory budget as well as by max_open_files. */
void floe_run_assemble_options(const struct run_settings *s, size_t i,
			       struct floe_assemble_options *out)
{
	const struct floe_config_input *in = &s->cfg->inputs[i];
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
	uint64_t fit = per ? s->cfg->agent.memory_limit / 2 / per : 0;
	ao.max_states = in->max_open_files ? in->max_open_files : 256;
	if (fit < 1)
		fit = 1;
	if (fit < ao.max_states)
		ao.max_states = (size_t)fit;
	*out = ao;
}
