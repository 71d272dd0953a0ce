/* The runner's counters gathered into counters.h's snapshot, for metrics.json
 * (runner_handoff.c) and /metrics (runner_status.c) alike: one gathering, one table, so
 * that the two documents count the same things. */
#include "agent/run/runner_impl.h"

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/pipeline/assemble.h"
#include "agent/pipeline/decode.h"
#include "agent/run/counters.h"
#include "agent/run/maintain.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"
#include "platform/log.h"
#include "platform/owner.h"

#include <stdio.h>
#include <string.h>

/* Input i's counters: its own, with its decoder's rejected lines and timestamps where
 * it hands over lines. */
static void input_counters(struct floe_runner *r, size_t i, struct floe_input_counters *c)
{
	memset(c, 0, sizeof(*c));
	c->kind = floe_input_kind(r->in.all[i]);
	c->n = floe_input_metrics(r->in.all[i], &c->table);
	if (c->n > FLOE_INPUT_METRICS_MAX)
		c->n = FLOE_INPUT_METRICS_MAX;
	floe_input_metric_values(r->in.all[i], c->values);
	struct floe_decode_stats ds = {0};
	if (r->in.decoders[i])
		floe_decoder_get_stats(r->in.decoders[i], &ds);
	for (size_t k = 0; k < c->n; k++) {
		if (c->table[k].flags & FLOE_INPUT_M_PARSE)
			c->values[k] += ds.parse_failures;
		if (c->table[k].flags & FLOE_INPUT_M_TS)
			c->values[k] += ds.ts_failures;
	}
}

/* v conversion failures of column name of raw table table into g: its table's counter,
 * and the total of the columns of that name. */
static void add_conv(struct floe_run_counters *g, const char *table, const char *name, uint64_t v)
{
	size_t k = 0;
	while (k < g->ncolumns && strcmp(g->column_names[k], name) != 0)
		k++;
	if (k == g->ncolumns && k < FLOE_CONV_COUNTERS_MAX) {
		g->column_names[g->ncolumns++] = name;
		g->conv_failures[k] = 0;
	}
	if (k < FLOE_CONV_COUNTERS_MAX)
		g->conv_failures[k] += v;
	if (g->ntabcols == FLOE_CONV_COUNTERS_MAX)
		return;
	g->tabcol_table[g->ntabcols] = table;
	g->tabcol_column[g->ntabcols] = name;
	g->tabcol_failures[g->ntabcols++] = v;
}

/* The runner's counters; the parse and timestamp failures summed over the inputs. */
static void run_counters(struct floe_runner *r, const struct floe_input_counters *in,
			 struct floe_run_counters *g)
{
	struct floe_assemble_stats as = {0}, one;
	for (size_t i = 0; i < r->in.n; i++) {
		if (!r->in.asm_[i])
			continue;
		floe_assemble_get_stats(r->in.asm_[i], &one);
		as.evictions += one.evictions;
		as.timeouts += one.timeouts;
		as.format_errors += one.format_errors;
		as.truncated += one.truncated;
		as.incomplete += one.incomplete;
	}
	r->stats.parse_failures = r->stats.ts_failures = 0;
	for (size_t i = 0; i < r->in.n; i++)
		for (size_t k = 0; k < in[i].n; k++) {
			if (in[i].table[k].flags & FLOE_INPUT_M_PARSE)
				r->stats.parse_failures += in[i].values[k];
			if (in[i].table[k].flags & FLOE_INPUT_M_TS)
				r->stats.ts_failures += in[i].values[k];
		}
	size_t entries = floe_runner_spool_entries(r);
	uint64_t late = 0, late_dropped = 0, future = 0, steps = 0;
	floe_run_aggs_late(r, &late, &late_dropped, &future, &steps);
	uint64_t unparsable = floe_run_aggs_unparsable(r);
	uint64_t coarse = 0, pool_bytes = 0, pool_grown = 0;
	floe_run_aggs_pool(r, &coarse, &pool_bytes, &pool_grown);
	const struct floe_runner_stats *st = &r->stats;
	*g = (struct floe_run_counters){
	    .lines = st->lines,
	    .seals = st->seals,
	    .commits = st->commits,
	    .commit_failures = st->commit_failures,
	    .commit_attempts = r->hist.attempts,
	    .commit_conflicts = r->hist.conflicts,
	    .commit_ms = (uint64_t)(r->hist.sum_s * 1000 + 0.5),
	    .commits_timed = r->hist.n,
	    .rows_committed = st->rows_committed,
	    .replaced_utf8 = st->replaced_utf8,
	    .dropped_entries = st->dropped_entries,
	    .dropped_rows = st->dropped_rows,
	    .dropped_bytes = st->dropped_bytes,
	    .quarantined = st->quarantined,
	    .blocked_ms = st->blocked_ms,
	    .spool_bytes = floe_runner_spool_bytes(r),
	    .spool_max_bytes = r->set.spool_max,
	    .spool_entries = entries,
	    .next_seq = r->raw[0].next_seq,
	    .ntables = r->nraw,
	    .tables = memcpy(r->tabctr + r->nraw, r->tabctr, r->nraw * sizeof(*r->tabctr)),
	    .groups_evicted = as.evictions,
	    .group_timeouts = as.timeouts,
	    .container_format_errors = as.format_errors,
	    .records_truncated = as.truncated,
	    .partial_incomplete = as.incomplete,
	    .spool_damaged = st->spool_damaged,
	    .spool_reread_entries = st->spool_reread_entries,
	    .spool_reread_rows = st->spool_reread_rows,
	    .spool_lost_entries = st->spool_lost_entries,
	    .spool_lost_rows = st->spool_lost_rows,
	    .state_damaged = st->state_damaged,
	    .installation_renewed = st->installation_renewed,
	    .agg_windows_lost = st->agg_windows_lost,
	    .lines_truncated_memory = st->lines_truncated_memory,
	    .bytes_truncated_memory = st->bytes_truncated_memory,
	    .lines_dropped_memory = st->lines_dropped_memory,
	    .parse_failures = st->parse_failures,
	    .ts_failures = st->ts_failures,
	    .memory_used = floe_alloc_used(r->alloc),
	    .memory_peak = floe_alloc_peak(r->alloc),
	    .memory_limit = r->alloc->limit,
	    .state_free_bytes = r->lake.disk_avail,
	    .state_disk_low = r->lake.disk_low ? 1 : 0,
	    .store_reachable = r->lake.store_down ? 0 : 1,
	    .table_missing = r->lake.table_missing ? 1 : 0,
	    .table_behind = floe_runner_tables_behind(r, NULL, 0),
	    .spool_left_entries = r->lake.left_entries,
	    .spool_left_bytes = r->lake.left_bytes,
	    .config_fallback = r->env.o.config_note ? 1 : 0,
	    .thread_stalls = st->thread_stalls,
	    .threads_stalled = floe_run_stalled(r) ? 1 : 0,
	    .agg_late = late,
	    .agg_late_dropped = late_dropped,
	    .agg_future = future,
	    .agg_clock_steps = steps,
	    .agg_unparsable = unparsable,
	    .agg_coarse = coarse,
	    .agg_pool_bytes = pool_bytes,
	    .agg_pool_grown_bytes = pool_grown,
	};
	/* Typed columns: each table's plan, the decoders' that of their input's table; a
	 * column of one name in several tables is a counter of each, and one total. */
	g->ncolumns = g->ntabcols = 0;
	for (size_t k = 0; k < r->nraw; k++) {
		const struct run_table *rt = &r->raw[k];
		const struct floe_colplan *p = &rt->cols;
		for (size_t c = 0; p->planned && c < p->n; c++) {
			uint64_t v = rt->conv_failures[c];
			for (size_t i = 0; i < r->in.n; i++) {
				const struct floe_config_input *ic = &r->set.cfg->inputs[i];
				size_t nc = 0;
				const uint64_t *cf =
				    r->in.decoders[i] && ic->nroutes == 0 && ic->table_idx == k
					? floe_decoder_conv_failures(r->in.decoders[i], &nc)
					: NULL;
				v += cf && c < nc ? cf[c] : 0;
			}
			add_conv(g, rt->cfg->name, p->col[c].name, v);
		}
	}
}

/* The name of output i's table (r->com.outs: the raw tables', then the aggregations'). */
static const char *out_table(const struct floe_runner *r, size_t i)
{
	return i < r->nraw ? r->raw[i].cfg->name : r->set.cfg->aggs[i - r->nraw].table;
}

uint64_t floe_runner_tables_behind(const struct floe_runner *r, char *names, size_t cap)
{
	uint64_t n = 0;
	size_t len = 0;
	if (names && cap)
		names[0] = '\0';
	for (size_t i = 0; i < r->com.nouts; i++) {
		if (!floe_output_behind(r->com.outs[i]))
			continue;
		n++;
		if (names && len < cap) {
			int w = snprintf(names + len, cap - len, "%s%s", len ? ", " : "", out_table(r, i));
			len += w > 0 ? (size_t)w : 0;
		}
	}
	return n;
}

/* metrics.json's member "tables_behind": the names of the tables behind (for floe
 * status), before the document's closing brace; none while no table is. */
static void behind_names(struct floe_runner *r, struct floe_buf *b)
{
	size_t len = b->len;
	if (!floe_runner_tables_behind(r, NULL, 0) || len < 2 || memcmp(b->data + len - 2, "}\n", 2) != 0)
		return;
	b->len = len - 2;
	int rc = floe_buf_puts(b, ",\"tables_behind\":[");
	for (size_t i = 0, k = 0; rc == 0 && i < r->com.nouts; i++) {
		if (!floe_output_behind(r->com.outs[i]))
			continue;
		const char *name = out_table(r, i);
		if ((rc = floe_buf_puts(b, k++ ? "," : "")) == 0)
			rc = floe_json_write_str(b, name, strlen(name));
	}
	if (rc == 0)
		rc = floe_buf_puts(b, "]}\n");
	if (rc) {
		b->len = len - 2;
		(void)floe_buf_puts(b, "}\n"); /* fits: it was there */
	}
}

/* The last `floe maintain` run of this state_dir (its record in state_dir/maintain, see
 * agent/run/maintain.h), after the counters: in /metrics as gauges by table, in
 * metrics.json as its member "maintain". A record that does not fit the document is left
 * out of it (the document stays whole): the agent's own counters come first. */
static void maintain_record(struct floe_runner *r, bool prom, struct floe_buf *b)
{
	char path[FLOE_PATH_MAX + 32];
	size_t len = b->len;
	if (snprintf(path, sizeof(path), "%s/maintain/metrics.json", r->set.state_dir) >=
	    (int)sizeof(path))
		return;
	if (prom) {
		(void)floe_maintain_record_render(r->alloc, path, true, b);
		return;
	}
	/* metrics.json ends with "}\n": the member goes before it. */
	if (len < 2 || memcmp(b->data + len - 2, "}\n", 2) != 0)
		return;
	b->len = len - 2;
	size_t at = b->len;
	if (floe_buf_printf(b, ",\"maintain\":") ||
	    floe_maintain_record_render(r->alloc, path, false, b) || b->len == at + 12 ||
	    floe_buf_printf(b, "}\n")) {
		b->len = len - 2;
		(void)floe_buf_printf(b, "}\n"); /* fits: it was there */
	}
}

/* The runner's counters now, into *in (owned, from the budget; n entries) and g: its
 * own, without what earlier runners counted. */
static int gather(struct floe_runner *r, struct floe_input_counters **in, struct floe_run_counters *g)
{
	size_t n = r->in.n ? r->in.n : 1;
	if (!(*in = floe_calloc(r->alloc, n, sizeof(**in))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < r->in.n; i++) {
		input_counters(r, i, &(*in)[i]);
		(*in)[i].name = r->set.cfg->inputs[i].name;
	}
	run_counters(r, *in, g);
	return 0;
}

int floe_run_counters_render(struct floe_runner *r, bool prom, struct floe_buf *b)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_input_counters *in;
	struct floe_run_counters g;
	int rc = gather(r, &in, &g);
	if (rc)
		return rc;
	if (r->env.o.carry)
		floe_counter_totals_apply(r->env.o.carry->totals, &g, in, r->in.n);
	rc = prom ? floe_counters_prom(&g, in, r->in.n, b) : floe_counters_json(&g, in, r->in.n, b);
	floe_free(r->alloc, in);
	if (rc == 0)
		maintain_record(r, prom, b);
	if (rc == 0 && !prom)
		behind_names(r, b);
	return rc;
}

void floe_run_counters_fold(struct floe_runner *r)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_runner_carry *c = r->env.o.carry;
	if (!c || !r->env.made)
		return;
	struct floe_input_counters *in;
	struct floe_run_counters g;
	int rc = gather(r, &in, &g);
	if (rc == 0) {
		rc = floe_counter_totals_add(c->totals, &g, in, r->in.n);
		floe_free(r->alloc, in);
	}
	if (rc)
		floe_error("runner: the counters of the configuration that ends could not be kept "
			   "(%s): metrics.json and /metrics count from zero again",
			   floe_strerror(rc));
	for (size_t i = 0; i <= COMMIT_BUCKETS; i++)
		c->hist.count[i] += r->hist.count[i];
	c->hist.n += r->hist.n;
	c->hist.sum_s += r->hist.sum_s;
}
