/* The agent's counters, one table behind both of their outputs: state_dir/metrics.json
 * (written after every commit cycle, read by `floe status` and by tests) and the status
 * listener's /metrics (Prometheus text format). Each counter is declared once, with its
 * metrics.json key, its Prometheus family and its help; both documents are rendered from
 * the same snapshot by walking that table, so that a counter cannot exist in one and not
 * the other. Pure: the caller fills the snapshot (runner_counters.c). */
#ifndef FLOE_AGENT_RUN_COUNTERS_H
#define FLOE_AGENT_RUN_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "agent/input/input.h"
#include "agent/schema/columns.h"

struct floe_buf;

/* Typed columns' conversion counters kept at most, over the raw tables (a column past
 * them is not counted: eight tables of FLOE_COLS_MAX columns each fit). */
#define FLOE_CONV_COUNTERS_MAX (8 * FLOE_COLS_MAX)

/* One raw table's commits (name borrowed): the families labelled by table. */
enum { FLOE_TABLE_ROWS, FLOE_TABLE_FILES, FLOE_TABLE_COMMITS, FLOE_TABLE_NCOUNTERS };
struct floe_table_counters {
	const char *name;
	uint64_t v[FLOE_TABLE_NCOUNTERS]; /* committed rows, data files, commits */
};

/* The runner's own counters and gauges, over every input. */
struct floe_run_counters {
	uint64_t lines, seals, commits, commit_failures, commit_attempts, commit_conflicts;
	uint64_t commit_ms, commits_timed;
	uint64_t rows_committed, replaced_utf8;
	uint64_t dropped_entries, dropped_rows, dropped_bytes, quarantined, blocked_ms;
	uint64_t spool_bytes, spool_max_bytes, spool_entries, next_seq;
	uint64_t groups_evicted, group_timeouts, container_format_errors, records_truncated,
	    partial_incomplete;
	uint64_t spool_damaged, spool_reread_entries, spool_reread_rows, spool_lost_entries,
	    spool_lost_rows, state_damaged, installation_renewed, agg_windows_lost;
	uint64_t lines_truncated_memory, bytes_truncated_memory, lines_dropped_memory;
	uint64_t parse_failures, ts_failures;
	uint64_t memory_used, memory_peak, memory_limit;
	uint64_t state_free_bytes, state_disk_low, store_reachable, table_missing, table_behind;
	uint64_t spool_left_entries, spool_left_bytes, config_fallback;
	uint64_t thread_stalls, threads_stalled;
	uint64_t agg_late, agg_late_dropped, agg_future, agg_unparsable, agg_clock_steps;
	uint64_t agg_coarse, agg_pool_bytes, agg_pool_grown_bytes;
	/* Per typed column name (borrowed), over the raw tables: values that did not convert
	 * to its type, written null, their text kept in attrs. The totals of the counters
	 * below, by column name. */
	size_t ncolumns;
	const char *column_names[FLOE_CONV_COUNTERS_MAX];
	uint64_t conv_failures[FLOE_CONV_COUNTERS_MAX];
	/* The same per raw table and column (names borrowed): two tables with a column of one
	 * name count apart. In metrics.json under tables.NAME.conversion_failures, in
	 * /metrics labelled table and column. */
	size_t ntabcols;
	const char *tabcol_table[FLOE_CONV_COUNTERS_MAX], *tabcol_column[FLOE_CONV_COUNTERS_MAX];
	uint64_t tabcol_failures[FLOE_CONV_COUNTERS_MAX];
	/* Per raw table (logs first; borrowed): what its commits committed. The unlabelled
	 * commits and rows_committed are the logs table's. */
	size_t ntables;
	struct floe_table_counters *tables; /* totals_apply adds to them */
};

/* One input's counters: its kind's table (agent/input/input.h) and their values. */
struct floe_input_counters {
	const char *kind; /* "tail": metrics.json's type */
	const char *name; /* inputs[].name (borrowed): the input label; NULL: its position */
	const struct floe_input_metric *table;
	size_t n;
	uint64_t values[FLOE_INPUT_METRICS_MAX];
};

/* metrics.json:
 * {"lines":N,...,"conversion_failures":{"COLUMN":N,...},"tables":{"NAME":{"rows_committed":N,...,
 * "conversion_failures":{"COLUMN":N,...}},...},"inputs":[{"type":"tail",...},...]} and a newline.
 */
int floe_counters_json(const struct floe_run_counters *g, const struct floe_input_counters *in,
		       size_t n, struct floe_buf *b);
/* The same counters as Prometheus families (HELP, TYPE, samples; per input labelled
 * input="name", or its 1-based position), each HELP naming its metrics.json key. The
 * inputs' families come in the order they first appear, each with the samples of every
 * input that has it. */
int floe_counters_prom(const struct floe_run_counters *g, const struct floe_input_counters *in,
		       size_t n, struct floe_buf *b);

/* What the runners of earlier configurations counted, in a process that reloads: a
 * Prometheus scraper reads a counter that goes down as a restart of the process, and
 * rate() then shows a spike, so the counters belong to the process, not to one
 * configuration's runner. Each runner folds its last snapshot in when it ends; each
 * snapshot after adds the totals to its counters (gauges are of now: never added). An
 * input's counters are matched by its name and kind; an input the new configuration no
 * longer has keeps its share in the agent's counters (lines, parse_failures, ...).
 * Outside the memory budget, as the runner struct is: it outlives every budget. */
struct floe_counter_totals;
int floe_counter_totals_new(struct floe_counter_totals **out);
void floe_counter_totals_free(struct floe_counter_totals *t);
/* Adds snapshot g and in[0..n) (borrowed) to t. FLOE_ENOMEM leaves t as it was. */
int floe_counter_totals_add(struct floe_counter_totals *t, const struct floe_run_counters *g,
			    const struct floe_input_counters *in, size_t n);
/* Adds t's counters to snapshot g and in[0..n) (t may be NULL: nothing to add). */
void floe_counter_totals_apply(const struct floe_counter_totals *t, struct floe_run_counters *g,
			       struct floe_input_counters *in, size_t n);

#endif
