/* The counter tables and their two renderers (counters.h). A counter added here appears
 * in metrics.json and in /metrics at once; tests check that the two documents name the
 * same counters both ways. */
#include "agent/run/counters.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum {
	GAUGE = 1, /* else a counter, whose family ends in _total */
	MS = 2,	   /* milliseconds in metrics.json, seconds (with a fraction) in /metrics */
};

struct ctr {
	const char *json, *prom, *help;
	size_t off;
	unsigned flags;
};

#define G(f) offsetof(struct floe_run_counters, f)

/* In metrics.json's historical order: its readers look for `"parse_failures":N,`. */
static const struct ctr glob[] = {
    {"lines", "floe_lines_total", "Lines read by every input.", G(lines), 0},
    {"seals", "floe_seals_total", "Batches sealed into the spool.", G(seals), 0},
    {"commits", "floe_commits_total", "Successful commits to the table.", G(commits), 0},
    {"commit_failures", "floe_commit_failures_total", "Commits that failed (retried later).",
     G(commit_failures), 0},
    {"commit_attempts", "floe_commit_attempts_total",
     "Attempts to create the next metadata version (a lost race is retried).",
     G(commit_attempts), 0},
    {"commit_conflicts", "floe_commit_conflicts_total",
     "Attempts another writer won (the commit was retried on its version).",
     G(commit_conflicts), 0},
    {"commit_ms", "floe_commit_seconds_total",
     "Time the timed commits took, uploads and retries included (the sum of "
     "floe_commit_duration_seconds).",
     G(commit_ms), MS},
    {"commits_timed", "floe_commits_timed_total",
     "Commits timed in commit_ms: those that committed something or failed.",
     G(commits_timed), 0},
    {"rows_committed", "floe_rows_committed_total", "Rows committed to the table.",
     G(rows_committed), 0},
    {"replaced_utf8", "floe_replaced_utf8_total",
     "Lines whose invalid UTF-8 bytes were replaced.", G(replaced_utf8), 0},
    {"dropped_entries", "floe_spool_dropped_entries_total",
     "Spool entries dropped by policy drop_oldest.", G(dropped_entries), 0},
    {"dropped_rows", "floe_spool_dropped_rows_total", "Rows of the dropped entries.",
     G(dropped_rows), 0},
    {"dropped_bytes", "floe_spool_dropped_bytes_total", "Bytes of the dropped entries.",
     G(dropped_bytes), 0},
    {"quarantined", "floe_spool_quarantined_entries", "Damaged spool entries set aside.",
     G(quarantined), GAUGE},
    {"blocked_ms", "floe_spool_blocked_seconds_total",
     "Time the inputs waited for a full spool (policy block), the wait under way included.",
     G(blocked_ms), MS},
    {"spool_bytes", "floe_spool_bytes",
     "Bytes of sealed files waiting in the spool (raw and aggregate tables').",
     G(spool_bytes), GAUGE},
    {"spool_max_bytes", "floe_spool_max_bytes", "spool.max_bytes.", G(spool_max_bytes), GAUGE},
    {"spool_entries", "floe_spool_entries", "Sealed batches waiting in the spool.",
     G(spool_entries), GAUGE},
    {"next_seq", "floe_spool_next_seq", "The sequence number of the next sealed batch.",
     G(next_seq), GAUGE},
    {"groups_evicted", "floe_multiline_groups_evicted_total",
     "Multiline groups closed early: too many open at once.", G(groups_evicted), 0},
    {"group_timeouts", "floe_multiline_group_timeouts_total",
     "Multiline groups closed by their timeout.", G(group_timeouts), 0},
    {"container_format_errors", "floe_container_format_errors_total",
     "Container log lines (cri, docker) that did not parse, kept as they were.",
     G(container_format_errors), 0},
    {"records_truncated", "floe_records_truncated_total",
     "Assembled records cut at their size limit.", G(records_truncated), 0},
    {"partial_incomplete", "floe_partial_incomplete_total",
     "Partial container lines whose end never came, committed as they were.",
     G(partial_incomplete), 0},
    {"spool_damaged", "floe_spool_damaged_total",
     "Spool entries whose data files failed their check before upload.", G(spool_damaged), 0},
    {"spool_reread_entries", "floe_spool_reread_entries_total",
     "Damaged spool entries rebuilt from their inputs.", G(spool_reread_entries), 0},
    {"spool_reread_rows", "floe_spool_reread_rows_total", "Rows of the rebuilt entries.",
     G(spool_reread_rows), 0},
    {"spool_lost_entries", "floe_spool_lost_entries_total",
     "Damaged spool entries lost: their input no longer held the bytes.",
     G(spool_lost_entries), 0},
    {"spool_lost_rows", "floe_spool_lost_rows_total", "Rows of the lost entries.",
     G(spool_lost_rows), 0},
    {"state_damaged", "floe_state_damaged_total",
     "Damaged state files set aside (the checkpoint, the installation file or its copy, an "
     "aggregation's open windows).",
     G(state_damaged), 0},
    {"installation_renewed", "floe_installation_renewed_total",
     "New installation ids made because the installation file, its copy and the checkpoint "
     "were all damaged (what the old id committed but had not recorded may come again).",
     G(installation_renewed), 0},
    {"agg_windows_lost", "floe_agg_windows_lost_total",
     "Open aggregation windows a restart could not restore: their image was of another "
     "configuration of the aggregation or another build, or damaged (events in them are "
     "in no row).",
     G(agg_windows_lost), 0},
    {"lines_truncated_memory", "floe_lines_truncated_memory_total",
     "Lines cut to what the memory budget could take.", G(lines_truncated_memory), 0},
    {"bytes_truncated_memory", "floe_bytes_truncated_memory_total",
     "Bytes cut off those lines.", G(bytes_truncated_memory), 0},
    {"lines_dropped_memory", "floe_lines_dropped_memory_total",
     "Lines dropped: the memory budget could take nothing of them.", G(lines_dropped_memory),
     0},
    {"parse_failures", "floe_parse_failures_total",
     "Lines or messages the inputs' parsers rejected (kept as plain lines).",
     G(parse_failures), 0},
    {"ts_failures", "floe_ts_failures_total",
     "Lines or messages whose timestamp was absent or did not parse (receive time used).",
     G(ts_failures), 0},
    {"memory_used", "floe_memory_used_bytes", "Bytes allocated against agent.memory_limit.",
     G(memory_used), GAUGE},
    {"memory_peak", "floe_memory_peak_bytes", "Most bytes allocated at once.", G(memory_peak),
     GAUGE},
    {"memory_limit", "floe_memory_limit_bytes", "agent.memory_limit.", G(memory_limit), GAUGE},
    {"state_free_bytes", "floe_state_free_bytes",
     "Free bytes of state_dir's file system when last asked.", G(state_free_bytes), GAUGE},
    {"state_disk_low", "floe_state_disk_low",
     "1 while state_dir's file system is too full for a seal: inputs wait.",
     G(state_disk_low), GAUGE},
    {"store_reachable", "floe_store_reachable",
     "0 while the warehouse cannot be reached or refuses (the spool waits), else 1.",
     G(store_reachable), GAUGE},
    {"table_missing", "floe_table_missing",
     "1 while a table this agent committed to is missing from the warehouse (not created "
     "again unless lake.recreate_tables: its commits wait in the spool), else 0.",
     G(table_missing), GAUGE},
    {"table_behind", "floe_table_behind",
     "Tables found behind this agent's record of its commits (restored from an older copy, "
     "a metadata file deleted) or whose history went backwards (a stray metadata file): "
     "their commits wait in the spool until the metadata is restored; the log and floe "
     "status name them. 0 when none.",
     G(table_behind), GAUGE},
    {"spool_left_entries", "floe_spool_left_entries",
     "Spool entries of tables this configuration no longer names (removed or renamed), as "
     "found at the start: committed only when the table is configured again; the log "
     "names each directory. 0 when none.",
     G(spool_left_entries), GAUGE},
    {"spool_left_bytes", "floe_spool_left_bytes", "The data bytes of those entries.",
     G(spool_left_bytes), GAUGE},
    {"config_fallback", "floe_config_fallback",
     "1 while the agent runs on its last good configuration because the file's has errors.",
     G(config_fallback), GAUGE},
    {"thread_stalls", "floe_thread_stalls_total",
     "Times a thread (the committer) was found making no progress for its bound; the log "
     "names it and what it was doing.",
     G(thread_stalls), 0},
    {"threads_stalled", "floe_threads_stalled",
     "Threads making no progress for their bound now: /healthz and /livez answer 503, the "
     "watchdog is not fed, and the agent exits (code 4) after the longer bound.",
     G(threads_stalled), GAUGE},
    {"agg_late", "floe_agg_late_events_total",
     "Events of the aggregations that came after their window closed.", G(agg_late), 0},
    {"agg_late_dropped", "floe_agg_late_dropped_total", "Late events dropped (policy drop).",
     G(agg_late_dropped), 0},
    {"agg_future", "floe_agg_future_events_total",
     "Events dated further ahead of the clock than max_future_skew (handled as late).",
     G(agg_future), 0},
    {"agg_clock_steps", "floe_agg_clock_steps_total",
     "Steps back of the wall clock the aggregations saw (beyond allowed_lateness, and at "
     "least a second): each closed their open windows early (partial rows) and started "
     "their windows again, so that the events after it were not late.",
     G(agg_clock_steps), 0},
    {"agg_unparsable", "floe_agg_unparsable_values_total",
     "Values the aggregations could not use: a metric's value that is no number (not "
     "aggregated), an integer key's text that is no integer (a null key).",
     G(agg_unparsable), 0},
    {"agg_coarse", "floe_agg_coarse_sketches_total",
     "Sketches made coarse because their window's pool could not grow (its share of "
     "agent.memory_limit was taken): distinct at a lower precision, low quantiles folded.",
     G(agg_coarse), 0},
    {"agg_pool_bytes", "floe_agg_pool_bytes",
     "Bytes the aggregations' sketches hold in their open windows' pools.",
     G(agg_pool_bytes), GAUGE},
    {"agg_pool_grown_bytes", "floe_agg_pool_grown_bytes",
     "Bytes of chunks the open windows' pools grew beyond what start-up reserved.",
     G(agg_pool_grown_bytes), GAUGE},
};

/* Per raw table, labelled table="NAME". */
#define T(i) (offsetof(struct floe_table_counters, v) + (i) * sizeof(uint64_t))
static const struct ctr table_fams[] = {
    {"rows_committed", "floe_table_rows_committed_total", "Rows committed, by raw table.",
     T(FLOE_TABLE_ROWS), 0},
    {"files_committed", "floe_table_files_committed_total",
     "Data files committed, by raw table.", T(FLOE_TABLE_FILES), 0},
    {"commits", "floe_table_commits_total", "Successful commits, by raw table.",
     T(FLOE_TABLE_COMMITS), 0},
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static uint64_t at(const void *base, size_t off)
{
	return *(const uint64_t *)(const void *)((const char *)base + off);
}

int floe_counters_json(const struct floe_run_counters *g, const struct floe_input_counters *in,
		       size_t n, struct floe_buf *b)
{
	int rc = 0;
	for (size_t k = 0; k < N(glob) && rc == 0; k++)
		rc = floe_buf_printf(b, "%s\"%s\":%" PRIu64, k ? "," : "{", glob[k].json,
				     at(g, glob[k].off));
	for (size_t k = 0; k < g->ncolumns && rc == 0; k++)
		rc = floe_buf_printf(b, "%s\"%s\":%" PRIu64, k ? "," : ",\"conversion_failures\":{",
				     g->column_names[k], g->conv_failures[k]);
	if (rc == 0 && g->ncolumns)
		rc = floe_buf_printf(b, "}");
	for (size_t k = 0; k < g->ntables && rc == 0; k++) {
		const struct floe_table_counters *t = &g->tables[k];
		rc = floe_buf_printf(b, "%s\"%s\":", k ? "," : ",\"tables\":{", t->name);
		for (size_t f = 0; f < N(table_fams) && rc == 0; f++)
			rc = floe_buf_printf(b, "%s\"%s\":%" PRIu64, f ? "," : "{", table_fams[f].json,
					     at(t, table_fams[f].off));
		bool any = false;
		for (size_t c = 0; c < g->ntabcols && rc == 0; c++) {
			if (strcmp(g->tabcol_table[c], t->name) != 0)
				continue;
			rc = floe_buf_printf(b, "%s\"%s\":%" PRIu64,
					     any ? "," : ",\"conversion_failures\":{",
					     g->tabcol_column[c], g->tabcol_failures[c]);
			any = true;
		}
		if (rc == 0 && any)
			rc = floe_buf_printf(b, "}");
		if (rc == 0)
			rc = floe_buf_printf(b, "}%s", k + 1 == g->ntables ? "}" : "");
	}
	if (rc == 0)
		rc = floe_buf_printf(b, ",\"inputs\":[");
	for (size_t i = 0; i < n && rc == 0; i++) {
		rc = floe_buf_printf(b, "%s{\"type\":\"%s\"", i ? "," : "", in[i].kind);
		if (rc == 0 && in[i].name)
			rc = floe_buf_printf(b, ",\"name\":\"%s\"", in[i].name);
		for (size_t k = 0; k < in[i].n && rc == 0; k++)
			rc = floe_buf_printf(b, ",\"%s\":%" PRIu64, in[i].table[k].json,
					     in[i].values[k]);
		if (rc == 0)
			rc = floe_buf_printf(b, "}");
	}
	return rc ? rc : floe_buf_printf(b, "]}\n");
}

static int family(struct floe_buf *b, const char *prom, const char *help, const char *json,
		  bool gauge, const char *where)
{
	const char *type = gauge ? "gauge" : "counter";
	return floe_buf_printf(b, "# HELP %s %s metrics.json: %s%s.\n# TYPE %s %s\n", prom, help,
			       where, json, prom, type);
}

static int sample(struct floe_buf *b, const char *prom, bool ms, const char *labels, uint64_t v)
{
	if (ms)
		return floe_buf_printf(b, "%s%s %" PRIu64 ".%03u\n", prom, labels, v / 1000,
				       (unsigned)(v % 1000));
	return floe_buf_printf(b, "%s%s %" PRIu64 "\n", prom, labels, v);
}

/* Input i's counter of Prometheus family prom, or NULL. */
static const struct floe_input_metric *metric_of(const struct floe_input_counters *in,
						 const char *prom, size_t *k)
{
	for (*k = 0; *k < in->n; (*k)++)
		if (strcmp(in->table[*k].prom, prom) == 0)
			return &in->table[*k];
	return NULL;
}

/* The family of input i's counter k, with the samples of every input that has it, unless
 * an earlier input or counter wrote it. */
static int input_family(const struct floe_input_counters *in, size_t n, size_t i, size_t k,
			struct floe_buf *b)
{
	const struct floe_input_metric *m = &in[i].table[k];
	size_t at_k;
	for (size_t j = 0; j < i; j++)
		if (metric_of(&in[j], m->prom, &at_k))
			return 0;
	if (metric_of(&in[i], m->prom, &at_k) && at_k < k)
		return 0;
	int rc = family(b, m->prom, m->help, m->json, m->flags & FLOE_INPUT_M_GAUGE, "inputs[].");
	for (size_t j = i; j < n && rc == 0; j++) {
		if (!metric_of(&in[j], m->prom, &at_k))
			continue;
		char labels[64];
		if (in[j].name)
			snprintf(labels, sizeof(labels), "{input=\"%s\"}", in[j].name);
		else
			snprintf(labels, sizeof(labels), "{input=\"%zu\"}", j + 1);
		rc = sample(b, m->prom, false, labels, in[j].values[at_k]);
	}
	return rc;
}

/* A family of typed columns' conversion failures, its n samples labelled by column (and
 * by table, with tables), under metrics.json's where + "conversion_failures"; none when n
 * is 0. */
static int conv_family(struct floe_buf *b, const char *prom, const char *help, const char *where,
		       size_t n, const char *const *tables, const char *const *columns,
		       const uint64_t *v)
{
	int rc = n ? family(b, prom, help, "conversion_failures", false, where) : 0;
	for (size_t k = 0; k < n && rc == 0; k++) {
		char labels[FLOE_COL_NAME_MAX + 160];
		if (tables)
			snprintf(labels, sizeof(labels), "{table=\"%s\",column=\"%s\"}", tables[k],
				 columns[k]);
		else
			snprintf(labels, sizeof(labels), "{column=\"%s\"}", columns[k]);
		rc = sample(b, prom, false, labels, v[k]);
	}
	return rc;
}

int floe_counters_prom(const struct floe_run_counters *g, const struct floe_input_counters *in,
		       size_t n, struct floe_buf *b)
{
	int rc = 0;
	for (size_t k = 0; k < N(glob) && rc == 0; k++) {
		rc = family(b, glob[k].prom, glob[k].help, glob[k].json, glob[k].flags & GAUGE, "");
		if (rc == 0)
			rc = sample(b, glob[k].prom, glob[k].flags & MS, "", at(g, glob[k].off));
	}
	if (rc == 0)
		rc = conv_family(
		    b, "floe_column_conversion_failures_total",
		    "Values of a typed column that did not convert to its type (written null, "
		    "their text kept in attrs), by column, over the raw tables.",
		    "", g->ncolumns, NULL, g->column_names, g->conv_failures);
	if (rc == 0)
		rc = conv_family(
		    b, "floe_table_column_conversion_failures_total",
		    "Values of a typed column that did not convert to its type, by raw table "
		    "and column.",
		    "tables.NAME.", g->ntabcols, g->tabcol_table, g->tabcol_column,
		    g->tabcol_failures);
	for (size_t f = 0; f < N(table_fams) && g->ntables && rc == 0; f++) {
		rc = family(b, table_fams[f].prom, table_fams[f].help, table_fams[f].json, false,
			    "tables.NAME.");
		for (size_t k = 0; k < g->ntables && rc == 0; k++) {
			char labels[160];
			snprintf(labels, sizeof(labels), "{table=\"%s\"}", g->tables[k].name);
			rc = sample(b, table_fams[f].prom, false, labels, at(&g->tables[k], table_fams[f].off));
		}
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		for (size_t k = 0; k < in[i].n && rc == 0; k++)
			rc = input_family(in, n, i, k, b);
	return rc;
}

/* ---- totals across runners ---------------------------------------------------------- */

/* A table's column is named "TABLE/COLUMN" here: 128 + 1 + 64 bytes and the NUL. */
#define TOTALS_NAME_MAX 200

/* One input's counters by name and kind (a name longer than TOTALS_NAME_MAX is
 * compared on its first bytes). */
struct input_total {
	char name[TOTALS_NAME_MAX];
	const char *kind; /* a kind's static string */
	const struct floe_input_metric *table;
	size_t n;
	uint64_t values[FLOE_INPUT_METRICS_MAX];
};

/* A labelled counter's totals, by what it counts and its name: a typed column's
 * conversion failures (v[0]; over the tables, and of one table's column), a raw table's
 * rows, files and commits (v[0..2]). A column or
 * table the next configuration still has goes on counting from them. */
enum { NAMED_COLUMN, NAMED_TABLE, NAMED_TABLE_COLUMN };
struct named_total {
	int kind;
	char name[TOTALS_NAME_MAX];
	uint64_t v[FLOE_TABLE_NCOUNTERS];
};

struct floe_counter_totals {
	struct floe_run_counters g;
	struct input_total *in;
	size_t nin;
	struct named_total *col;
	size_t ncol;
};

int floe_counter_totals_new(struct floe_counter_totals **out)
{
	*out = floe_calloc(NULL, 1, sizeof(**out));
	return *out ? 0 : FLOE_ENOMEM;
}

void floe_counter_totals_free(struct floe_counter_totals *t)
{
	if (!t)
		return;
	floe_free(NULL, t->in);
	floe_free(NULL, t->col);
	floe_free(NULL, t);
}

static struct named_total *find_named(const struct floe_counter_totals *t, int kind,
				      const char *name)
{
	for (size_t i = 0; i < t->ncol; i++)
		if (t->col[i].kind == kind && strncmp(t->col[i].name, name, TOTALS_NAME_MAX - 1) == 0)
			return &t->col[i];
	return NULL;
}

/* The name of the i-th labelled counter of g (columns, then tables, then tables'
 * columns) into key, its kind and its values' slots (nv of them). */
static const char *named_at(struct floe_run_counters *g, size_t i, int *kind, uint64_t **v,
			    size_t *nv, char key[TOTALS_NAME_MAX])
{
	if (i < g->ncolumns) {
		*kind = NAMED_COLUMN;
		*v = &g->conv_failures[i];
		*nv = 1;
		snprintf(key, TOTALS_NAME_MAX, "%s", g->column_names[i]);
		return key;
	}
	i -= g->ncolumns;
	if (i < g->ntables) {
		struct floe_table_counters *tc = &g->tables[i];
		*kind = NAMED_TABLE;
		*v = tc->v;
		*nv = FLOE_TABLE_NCOUNTERS;
		snprintf(key, TOTALS_NAME_MAX, "%s", tc->name);
		return key;
	}
	i -= g->ntables;
	*kind = NAMED_TABLE_COLUMN;
	*v = &g->tabcol_failures[i];
	*nv = 1;
	snprintf(key, TOTALS_NAME_MAX, "%s/%s", g->tabcol_table[i], g->tabcol_column[i]);
	return key;
}

/* The input of name and kind in t (an input without a name has its position). */
static struct input_total *find_input(const struct floe_counter_totals *t,
				      const struct floe_input_counters *c, size_t pos)
{
	char name[TOTALS_NAME_MAX];
	if (c->name)
		snprintf(name, sizeof(name), "%s", c->name);
	else
		snprintf(name, sizeof(name), "#%zu", pos + 1);
	for (size_t i = 0; i < t->nin; i++)
		if (strcmp(t->in[i].name, name) == 0 && strcmp(t->in[i].kind, c->kind) == 0)
			return &t->in[i];
	return NULL;
}

int floe_counter_totals_add(struct floe_counter_totals *t, const struct floe_run_counters *g,
			    const struct floe_input_counters *in, size_t n)
{
	/* Room for every input first, so that a failure adds nothing. */
	size_t fresh = 0;
	for (size_t i = 0; i < n; i++)
		fresh += find_input(t, &in[i], i) == NULL;
	if (fresh) {
		struct input_total *more =
		    floe_realloc(NULL, t->in, (t->nin + fresh) * sizeof(*t->in));
		if (!more)
			return FLOE_ENOMEM;
		t->in = more;
	}
	size_t fresh_cols = 0, nnamed = g->ncolumns + g->ntables + g->ntabcols, nv;
	char key[TOTALS_NAME_MAX];
	struct floe_run_counters *gw = (struct floe_run_counters *)g; /* named_at reads only */
	uint64_t *v;
	int kind;
	for (size_t c = 0; c < nnamed; c++) {
		const char *name = named_at(gw, c, &kind, &v, &nv, key);
		fresh_cols += find_named(t, kind, name) == NULL;
	}
	if (fresh_cols) {
		struct named_total *more =
		    floe_realloc(NULL, t->col, (t->ncol + fresh_cols) * sizeof(*t->col));
		if (!more)
			return FLOE_ENOMEM;
		t->col = more;
	}
	for (size_t c = 0; c < nnamed; c++) {
		const char *name = named_at(gw, c, &kind, &v, &nv, key);
		struct named_total *ct = find_named(t, kind, name);
		if (!ct) {
			ct = &t->col[t->ncol++];
			memset(ct, 0, sizeof(*ct));
			ct->kind = kind;
			snprintf(ct->name, sizeof(ct->name), "%s", name);
		}
		for (size_t k = 0; k < nv; k++)
			ct->v[k] += v[k];
	}
	for (size_t k = 0; k < N(glob); k++)
		if (!(glob[k].flags & GAUGE))
			*(uint64_t *)(void *)((char *)&t->g + glob[k].off) += at(g, glob[k].off);
	for (size_t i = 0; i < n; i++) {
		struct input_total *it = find_input(t, &in[i], i);
		if (!it) {
			it = &t->in[t->nin++];
			memset(it, 0, sizeof(*it));
			if (in[i].name)
				snprintf(it->name, sizeof(it->name), "%s", in[i].name);
			else
				snprintf(it->name, sizeof(it->name), "#%zu", i + 1);
			it->kind = in[i].kind;
			it->table = in[i].table;
			it->n = in[i].n;
		}
		for (size_t k = 0; k < in[i].n && k < it->n; k++)
			if (!(in[i].table[k].flags & FLOE_INPUT_M_GAUGE))
				it->values[k] += in[i].values[k];
	}
	return 0;
}

void floe_counter_totals_apply(const struct floe_counter_totals *t, struct floe_run_counters *g,
			       struct floe_input_counters *in, size_t n)
{
	if (!t)
		return;
	for (size_t k = 0; k < N(glob); k++)
		if (!(glob[k].flags & GAUGE))
			*(uint64_t *)(void *)((char *)g + glob[k].off) += at(&t->g, glob[k].off);
	for (size_t c = 0; c < g->ncolumns + g->ntables + g->ntabcols; c++) {
		uint64_t *v;
		size_t nv;
		int kind;
		char key[TOTALS_NAME_MAX];
		const char *name = named_at(g, c, &kind, &v, &nv, key);
		const struct named_total *ct = find_named(t, kind, name);
		for (size_t k = 0; ct && k < nv; k++)
			v[k] += ct->v[k];
	}
	for (size_t i = 0; i < n; i++) {
		const struct input_total *it = find_input(t, &in[i], i);
		for (size_t k = 0; it && k < in[i].n && k < it->n; k++)
			if (!(in[i].table[k].flags & FLOE_INPUT_M_GAUGE))
				in[i].values[k] += it->values[k];
	}
}
