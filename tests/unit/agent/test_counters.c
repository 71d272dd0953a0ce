/* Tests of agent/run/counters: metrics.json and /metrics rendered from one snapshot hold
 * the same counters (the raw tables' and the typed columns' included). Every field of the snapshot gets a value of its own, so each value
 * in metrics.json must be found as exactly one sample of /metrics (milliseconds as
 * seconds) and the other way round, for a tail, a syslog and a journal input alike; and
 * each /metrics family's HELP names a key metrics.json has. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/run/counters.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXV 512

/* The numbers after each "key": of a JSON text (none of ours is in a string). */
static size_t json_values(const char *s, uint64_t *v, size_t cap)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, "\":")) != NULL; p += 2)
		if (p[2] >= '0' && p[2] <= '9' && n < cap)
			v[n++] = strtoull(p + 2, NULL, 10);
	return n;
}

/* The samples of a Prometheus text, in thousandths (a seconds value keeps its fraction). */
static size_t prom_values(const char *s, uint64_t *v, bool *ms, size_t cap)
{
	size_t n = 0;
	for (const char *line = s; *line && n < cap; line = strchr(line, '\n') + 1) {
		if (*line != '#') {
			const char *sp = strchr(line, ' ');
			char *end;
			uint64_t whole = strtoull(sp + 1, &end, 10);
			ms[n] = *end == '.';
			v[n] = ms[n] ? whole * 1000 + strtoull(end + 1, NULL, 10) : whole;
			n++;
		}
	}
	return n;
}

static void test_same_counters(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_run_counters g;
	uint64_t *gf = (uint64_t *)&g;
	uint64_t next = 1000;
	memset(&g, 0, sizeof(g));
	for (size_t i = 0; i < offsetof(struct floe_run_counters, ncolumns) / sizeof(uint64_t); i++)
		gf[i] = next++;
	/* Typed columns' counters, labelled by column. */
	g.ncolumns = 2;
	g.column_names[0] = "status";
	g.column_names[1] = "bytes";
	g.conv_failures[0] = next++;
	g.conv_failures[1] = next++;
	/* And per raw table: status in two tables counts apart. */
	g.ntabcols = 3;
	g.tabcol_table[0] = "logs", g.tabcol_column[0] = "status", g.tabcol_failures[0] = next++;
	g.tabcol_table[1] = "access", g.tabcol_column[1] = "status", g.tabcol_failures[1] = next++;
	g.tabcol_table[2] = "access", g.tabcol_column[2] = "bytes", g.tabcol_failures[2] = next++;
	/* Raw tables' counters, labelled by table. */
	struct floe_table_counters tabs[2] = {{"logs", {next, next + 1, next + 2}},
					      {"access", {next + 3, next + 4, next + 5}}};
	next += 6;
	g.ntables = 2;
	g.tables = tabs;
	/* One input of every kind there is. */
	struct floe_input_counters in[3];
	for (size_t k = 0; k < 3; k++) {
		memset(&in[k], 0, sizeof(in[k]));
		in[k].n = floe_input_kind_metrics(k, &in[k].kind, &in[k].table);
		assert_true(in[k].n > 0 && in[k].n <= FLOE_INPUT_METRICS_MAX);
		for (size_t i = 0; i < in[k].n; i++)
			in[k].values[i] = next++;
	}
	const char *none;
	const struct floe_input_metric *t;
	assert_int_equal(floe_input_kind_metrics(3, &none, &t), 0);
	struct floe_buf j, p;
	floe_buf_init(&j, &a, 1 << 20);
	floe_buf_init(&p, &a, 1 << 20);
	assert_int_equal(floe_counters_json(&g, in, 3, &j), 0);
	assert_int_equal(floe_counters_prom(&g, in, 3, &p), 0);
	assert_int_equal(floe_buf_append(&j, "", 1), 0);
	assert_int_equal(floe_buf_append(&p, "", 1), 0);
	const char *js = (const char *)j.data, *ps = (const char *)p.data;

	static uint64_t jv[MAXV], pv[MAXV];
	static bool ms[MAXV];
	size_t nj = json_values(js, jv, MAXV), np = prom_values(ps, pv, ms, MAXV);
	assert_true(nj > 60);
	/* The same number of values, and each JSON value is one sample's. */
	assert_int_equal(nj, np);
	for (size_t i = 0; i < nj; i++) {
		size_t hits = 0;
		for (size_t k = 0; k < np; k++)
			hits += pv[k] == jv[i];
		if (hits != 1)
			print_error("metrics.json value %" PRIu64 ": %zu samples\n", jv[i], hits);
		assert_int_equal(hits, 1);
	}
	/* Each HELP names a key of metrics.json. */
	size_t helps = 0;
	for (const char *h = ps; (h = strstr(h, "# HELP ")) != NULL; h++) {
		const char *k = strstr(h, "metrics.json: ");
		assert_non_null(k);
		k += strlen("metrics.json: ");
		if (strncmp(k, "inputs[].", 9) == 0)
			k += 9;
		if (strncmp(k, "tables.NAME.", 12) == 0)
			k += 12;
		char key[64];
		size_t n = strcspn(k, "\n") - 1; /* the final '.' */
		assert_true(n > 0 && n < sizeof(key) - 3);
		key[0] = '"';
		memcpy(key + 1, k, n);
		memcpy(key + 1 + n, "\":", 3);
		assert_non_null(strstr(js, key));
		helps++;
	}
	assert_true(helps > 50);
	floe_buf_fini(&j);
	floe_buf_fini(&p);
	assert_int_equal(a.used, 0);
}

/* Totals across runners: the counters of an ended runner are added to the next one's,
 * its gauges are not; an input is matched by name and kind, and one that is gone keeps
 * its share in the agent's counters only. */
static void test_totals(void **state)
{
	(void)state;
	const char *kind;
	const struct floe_input_metric *table;
	size_t nm = 0, syslog_k = 0;
	for (size_t k = 0; (nm = floe_input_kind_metrics(k, &kind, &table)) != 0; k++)
		if (strcmp(kind, "syslog") == 0) {
			syslog_k = k;
			break;
		}
	assert_true(nm > 0);
	(void)floe_input_kind_metrics(syslog_k, &kind, &table);
	size_t open = nm;
	for (size_t k = 0; k < nm; k++)
		if (table[k].flags & FLOE_INPUT_M_GAUGE)
			open = k;
	assert_true(open < nm);
	struct floe_input_counters one = {.kind = kind, .name = "net", .table = table, .n = nm};
	for (size_t k = 0; k < nm; k++)
		one.values[k] = 10;
	struct floe_run_counters g = {.lines = 7, .rows_committed = 5, .spool_bytes = 100,
				      .memory_used = 50, .dropped_rows = 2};
	struct floe_counter_totals *t = NULL;
	assert_int_equal(floe_counter_totals_new(&t), 0);
	assert_int_equal(floe_counter_totals_add(t, &g, &one, 1), 0);
	/* The next runner: the same input, and another of another name. */
	struct floe_input_counters two[2] = {
	    {.kind = kind, .name = "net", .table = table, .n = nm},
	    {.kind = kind, .name = "other", .table = table, .n = nm},
	};
	for (size_t k = 0; k < nm; k++)
		two[0].values[k] = two[1].values[k] = 1;
	struct floe_run_counters now = {.lines = 1, .spool_bytes = 3, .memory_used = 4};
	floe_counter_totals_apply(t, &now, two, 2);
	assert_int_equal(now.lines, 8);
	assert_int_equal(now.rows_committed, 5);
	assert_int_equal(now.dropped_rows, 2);
	assert_int_equal(now.spool_bytes, 3);  /* a gauge: of now */
	assert_int_equal(now.memory_used, 4); /* a gauge */
	for (size_t k = 0; k < nm; k++) {
		assert_int_equal(two[0].values[k], k == open ? 1 : 11);
		assert_int_equal(two[1].values[k], 1);
	}
	/* A second end adds again; applying to nothing is fine. */
	assert_int_equal(floe_counter_totals_add(t, &g, &one, 1), 0);
	struct floe_run_counters zero = {0};
	floe_counter_totals_apply(t, &zero, NULL, 0);
	assert_int_equal(zero.lines, 14);
	floe_counter_totals_apply(NULL, &zero, NULL, 0);
	assert_int_equal(zero.lines, 14);
	floe_counter_totals_free(t);
	floe_counter_totals_free(NULL);
}

/* A typed column's conversion failures go on from the ended runner's when the next
 * configuration still has the column (by name, wherever it is in the list); a column it
 * gained starts from zero. */
static void test_totals_columns(void **state)
{
	(void)state;
	struct floe_run_counters g = {.ncolumns = 2, .column_names = {"status", "bytes"},
				      .conv_failures = {3, 4}};
	struct floe_counter_totals *t = NULL;
	assert_int_equal(floe_counter_totals_new(&t), 0);
	assert_int_equal(floe_counter_totals_add(t, &g, NULL, 0), 0);
	struct floe_run_counters now = {.ncolumns = 3, .column_names = {"latency", "bytes", "status"},
					.conv_failures = {1, 1, 1}};
	floe_counter_totals_apply(t, &now, NULL, 0);
	assert_int_equal(now.conv_failures[0], 1);
	assert_int_equal(now.conv_failures[1], 5);
	assert_int_equal(now.conv_failures[2], 4);
	/* That runner ends: its own counts (not the totals applied) are added. */
	struct floe_run_counters ended = {.ncolumns = 3, .column_names = {"latency", "bytes", "status"},
					  .conv_failures = {1, 1, 1}};
	assert_int_equal(floe_counter_totals_add(t, &ended, NULL, 0), 0);
	struct floe_run_counters later = {.ncolumns = 1, .column_names = {"status"}};
	floe_counter_totals_apply(t, &later, NULL, 0);
	assert_int_equal(later.conv_failures[0], 4);
	floe_counter_totals_free(t);
}

/* A table's column counts apart from another table's column of the same name, and goes
 * on across runners by both names. */
static void test_totals_table_columns(void **state)
{
	(void)state;
	struct floe_run_counters g = {.ntabcols = 2,
				      .tabcol_table = {"logs", "access"},
				      .tabcol_column = {"status", "status"},
				      .tabcol_failures = {3, 5}};
	struct floe_counter_totals *t = NULL;
	assert_int_equal(floe_counter_totals_new(&t), 0);
	assert_int_equal(floe_counter_totals_add(t, &g, NULL, 0), 0);
	struct floe_run_counters now = {.ntabcols = 3,
					.tabcol_table = {"access", "security", "logs"},
					.tabcol_column = {"status", "status", "status"},
					.tabcol_failures = {1, 1, 1}};
	floe_counter_totals_apply(t, &now, NULL, 0);
	assert_int_equal(now.tabcol_failures[0], 6);
	assert_int_equal(now.tabcol_failures[1], 1);
	assert_int_equal(now.tabcol_failures[2], 4);
	floe_counter_totals_free(t);
}

/* A raw table's counters go on across runners by its name; a column of the same name is
 * another counter. */
static void test_totals_tables(void **state)
{
	(void)state;
	struct floe_table_counters first[2] = {{"logs", {10, 2, 2}}, {"access", {5, 1, 1}}};
	struct floe_run_counters g = {.ncolumns = 1, .column_names = {"access"},
				      .conv_failures = {7}, .ntables = 2, .tables = first};
	struct floe_counter_totals *t = NULL;
	assert_int_equal(floe_counter_totals_new(&t), 0);
	assert_int_equal(floe_counter_totals_add(t, &g, NULL, 0), 0);
	/* The next configuration drops logs' column and adds a table. */
	struct floe_table_counters next[3] = {{"logs", {1, 1, 1}}, {"security", {3, 1, 1}},
					      {"access", {0, 0, 0}}};
	struct floe_run_counters now = {.ntables = 3, .tables = next};
	floe_counter_totals_apply(t, &now, NULL, 0);
	assert_int_equal(next[0].v[FLOE_TABLE_ROWS], 11);
	assert_int_equal(next[0].v[FLOE_TABLE_COMMITS], 3);
	assert_int_equal(next[1].v[FLOE_TABLE_ROWS], 3);
	assert_int_equal(next[2].v[FLOE_TABLE_ROWS], 5);
	assert_int_equal(next[2].v[FLOE_TABLE_FILES], 1);
	floe_counter_totals_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_same_counters),	 cmocka_unit_test(test_totals),
	    cmocka_unit_test(test_totals_columns),	 cmocka_unit_test(test_totals_tables),
	    cmocka_unit_test(test_totals_table_columns),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
