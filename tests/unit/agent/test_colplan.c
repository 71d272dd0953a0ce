/* Unit tests for agent/run/colplan: the columns a configuration asks for (its list, or
 * the built-in parsers' own), and the plan of a start: learnt from the table and saved,
 * the saved one taken while the table is away (only for the same columns), provisional
 * ids for the columns no saved plan holds, a spool written under the saved plan refused
 * when the table now gives a column another id, the columns of spooled files kept in
 * the commits' plan, and the map from a spooled entry's provisional ids to the table's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/run/colplan.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/parquet/footer_ids.h"

#include "logs_meta.h"

static struct floe_config *config(const char *text)
{
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	if (floe_config_parse(NULL, "t.yaml", text, strlen(text), "h", &c, &err))
		fail_msg("%s", err.msg);
	return c;
}

static void remove_dir(const char *dir)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

static void test_wanted(void **state)
{
	(void)state;
	struct floe_colplan p;
	struct floe_config *c =
	    config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: nginx_combined }\n"
		   "  - { type: tail, paths: [/y/*.log], parser: syslog_file }\n"
		   "  - { type: tail, paths: [/z/*.log], parser: apache_common }\n");
	assert_int_equal(floe_run_columns_wanted(c, 0, &p, NULL), 0);
	/* The access logs' nine (status, bytes, then the strings), pid: once each; the
	 * common format's seven are among the combined one's. */
	assert_int_equal(p.n, 10);
	assert_string_equal(p.col[0].name, "status");
	assert_int_equal(p.col[0].type, FLOE_COL_INT);
	assert_string_equal(p.col[1].name, "bytes");
	assert_int_equal(p.col[1].type, FLOE_COL_LONG);
	assert_string_equal(p.col[5].name, "path");
	assert_int_equal(p.col[5].type, FLOE_COL_STRING);
	assert_string_equal(p.col[8].name, "user_agent");
	assert_string_equal(p.col[9].name, "pid");
	floe_config_free(c);
	/* The common format alone: no referer, no user agent. */
	c = config("inputs:\n  - { type: tail, paths: [/z/*.log], parser: apache_common }\n");
	assert_int_equal(floe_run_columns_wanted(c, 0, &p, NULL), 0);
	assert_int_equal(p.n, 7);
	assert_string_equal(p.col[6].name, "protocol");
	floe_config_free(c);
	/* A list replaces the parsers' own. */
	c = config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: nginx_combined }\n"
		   "tables: {logs: {columns: [{name: code, type: long, from: status}]}}\n");
	assert_int_equal(floe_run_columns_wanted(c, 0, &p, NULL), 0);
	assert_int_equal(p.n, 1);
	assert_string_equal(p.col[0].from, "status");
	floe_config_free(c);
	/* [] written in the file: none, the parsers' own neither. */
	c = config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: nginx_combined }\n"
		   "tables: {logs: {columns: []}}\n");
	assert_int_equal(floe_run_columns_wanted(c, 0, &p, NULL), 0);
	assert_int_equal(p.n, 0);
	floe_config_free(c);
	c = config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: json }\n");
	assert_int_equal(floe_run_columns_wanted(c, 0, &p, NULL), 0);
	assert_int_equal(p.n, 0);
	floe_config_free(c);
}

/* Each raw table's columns come from the parsers of the inputs that can send records to
 * it (their table or a route rule's), and its plan is saved beside its spool. */
static void test_per_table(void **state)
{
	(void)state;
	char dir[] = "/tmp/floe-test-colplan.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct floe_config *c =
	    config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: apache_combined, table: "
		   "access }\n"
		   "  - { type: tail, paths: [/y/*.log], parser: syslog_file,\n"
		   "      route: [{field: app, equals: sshd, table: security}] }\n"
		   "tables: {access: {}, security: {}}\n");
	struct floe_colplan p, all;
	assert_int_equal(floe_run_columns_wanted(c, 0, &p, NULL), 0);
	assert_int_equal(p.n, 1); /* logs: pid of the routed input's default */
	assert_string_equal(p.col[0].name, "pid");
	assert_int_equal(floe_run_columns_wanted(c, 1, &p, NULL), 0);
	assert_int_equal(p.n, 9); /* access: status, bytes and the seven strings */
	assert_string_equal(p.col[0].name, "status");
	assert_int_equal(floe_run_columns_wanted(c, 2, &p, NULL), 0);
	assert_int_equal(p.n, 1); /* security: pid, by the rule */
	assert_string_equal(p.col[0].name, "pid");
	char path[256];
	snprintf(path, sizeof(path), "mkdir -p %s/tables/access", dir);
	assert_int_equal(system(path), 0);
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	assert_int_equal(floe_run_columns_start(c, 1, dir, m, NULL, "t", false, &p, &all, NULL), 0);
	assert_true(p.planned);
	floe_ice_meta_free(m);
	snprintf(path, sizeof(path), "%s/tables/access/columns", dir);
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/columns", dir);
	assert_null(fopen(path, "rb"));
	/* Offline: the table's own saved plan. */
	assert_int_equal(floe_run_columns_start(c, 1, dir, NULL, NULL, "t", true, &p, &all, NULL),
			 0);
	assert_true(p.planned);
	assert_int_equal(p.n, 9);
	floe_config_free(c);
	remove_dir(dir);
}

static void test_start(void **state)
{
	(void)state;
	char dir[] = "/tmp/floe-test-colplan.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct floe_config *c =
	    config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: apache_combined }\n");
	struct floe_colplan p, all;
	/* First start offline, no saved plan: the writers' columns take provisional ids above
	 * the built-in ones, in order; the commits' plan waits for the table. */
	assert_int_equal(floe_run_columns_start(c, 0, dir, NULL, NULL, "t", false, &p, &all, NULL),
			 0);
	assert_int_equal(p.n, 9);
	assert_true(p.planned);
	assert_true(p.provisional);
	for (size_t i = 0; i < p.n; i++) {
		assert_true(p.col[i].provisional);
		assert_int_equal(p.col[i].id, 15 + (int)i);
	}
	assert_false(all.planned);
	assert_false(all.provisional);
	/* A start that reaches the table learns the ids and saves them. */
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	assert_int_equal(floe_run_columns_start(c, 0, dir, m, NULL, "t", false, &p, &all, NULL), 0);
	assert_true(p.planned);
	assert_int_equal(p.col[0].id, 15);
	floe_ice_meta_free(m);
	/* Offline again: the saved plan, with its ids. */
	struct floe_colplan q;
	assert_int_equal(floe_run_columns_start(c, 0, dir, NULL, NULL, "t", true, &q, &all, NULL),
			 0);
	assert_true(q.planned);
	assert_int_equal(q.col[1].id, 16);
	assert_false(q.provisional);
	/* Offline with another list: a column of the saved plan keeps its id there, a new
	 * one takes a provisional id above every saved one (status, bytes and the seven
	 * strings took 15 to 23). */
	struct floe_config *c2 = config(
	    "inputs:\n  - { type: tail, paths: [/x/*.log], parser: apache_combined }\n"
	    "tables: {logs: {columns: [{name: status, type: int}, {name: took, type: double}]}}\n");
	assert_int_equal(floe_run_columns_start(c2, 0, dir, NULL, NULL, "t", true, &q, &all, NULL),
			 0);
	assert_true(q.planned);
	assert_true(q.provisional);
	assert_false(q.col[0].provisional);
	assert_int_equal(q.col[0].id, 15);
	assert_true(q.col[1].provisional);
	assert_int_equal(q.col[1].id, 24);
	/* Files spooled under the saved plan, and another writer took id 15: refused. */
	struct floe_ice_field other = {15, "other", "string", false, 0, 0, NULL, NULL, false};
	m = logs_meta(&other, 1);
	struct floe_err e = {0};
	assert_int_equal(floe_run_columns_start(c, 0, dir, m, NULL, "t", true, &q, &all, &e),
			 FLOE_ESCHEMA);
	assert_non_null(strstr(e.msg, "column 'status' as field id 15"));
	/* With an empty spool the new ids are fine. */
	assert_int_equal(floe_run_columns_start(c, 0, dir, m, NULL, "t", false, &q, &all, NULL), 0);
	assert_int_equal(q.col[0].id, 16);
	floe_ice_meta_free(m);
	/* A table whose status is a string refuses an int column, naming the table. */
	struct floe_ice_field s = {15, "status", "string", false, 0, 0, NULL, NULL, false};
	m = logs_meta(&s, 1);
	memset(&e, 0, sizeof(e));
	assert_int_equal(
	    floe_run_columns_start(c, 0, dir, m, NULL, "the-table", false, &q, &all, &e),
	    FLOE_ESCHEMA);
	assert_non_null(strstr(e.msg, "table the-table: "));
	assert_non_null(strstr(e.msg, "status"));
	floe_ice_meta_free(m);
	floe_config_free(c);
	floe_config_free(c2);
	remove_dir(dir);
}

/* A column removed from the list while files written under it wait in the spool: the
 * commits still give it to the table (under the id its files carry); once the spool is
 * empty, only the list's columns. */
static void test_spooled_columns(void **state)
{
	(void)state;
	char dir[] = "/tmp/floe-test-colplan.XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct floe_config *c =
	    config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: apache_combined }\n");
	struct floe_config *less =
	    config("inputs:\n  - { type: tail, paths: [/x/*.log], parser: apache_combined }\n"
		   "tables: {logs: {columns: [{name: status, type: int}]}}\n");
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	struct floe_colplan p, all;
	/* Planned (status 15, bytes 16) and saved; files written under it are spooled. */
	assert_int_equal(floe_run_columns_start(c, 0, dir, m, NULL, "t", false, &p, &all, NULL), 0);
	assert_int_equal(p.col[1].id, 16);
	/* bytes removed: written no more, but committed with the spooled files. */
	assert_int_equal(floe_run_columns_start(less, 0, dir, m, NULL, "t", true, &p, &all, NULL),
			 0);
	assert_true(p.planned);
	assert_int_equal(p.n, 1);
	assert_int_equal(p.col[0].id, 15);
	assert_true(all.planned);
	assert_int_equal(all.n, 9); /* status, and the eight removed */
	assert_string_equal(all.col[1].name, "bytes");
	assert_int_equal(all.col[1].id, 16);
	/* The saved plan keeps it for a start while the table is away. */
	assert_int_equal(
	    floe_run_columns_start(less, 0, dir, NULL, NULL, "t", true, &p, &all, NULL), 0);
	assert_true(p.planned);
	assert_int_equal(p.col[0].id, 15);
	assert_int_equal(all.n, 9);
	assert_int_equal(all.col[1].id, 16);
	/* The spool empty: the list's columns alone. */
	assert_int_equal(floe_run_columns_start(less, 0, dir, m, NULL, "t", false, &p, &all, NULL),
			 0);
	assert_int_equal(all.n, 1);
	floe_ice_meta_free(m);
	floe_config_free(c);
	floe_config_free(less);
	remove_dir(dir);
}

/* A spooled entry's provisional ids map by name to the table's, whatever their order;
 * a type the table's cannot read, or a column the plan lacks, is refused by name. */
static void test_reid_map(void **state)
{
	(void)state;
	struct floe_colplan learnt = {0};
	assert_int_equal(floe_colplan_add(&learnt, "status", FLOE_COL_INT, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&learnt, "bytes", FLOE_COL_LONG, NULL, NULL), 0);
	struct floe_ice_field bytes = {15, "bytes", "long", false, 0, 0, NULL, NULL, false};
	struct floe_ice_meta *m = logs_meta(&bytes, 1);
	assert_int_equal(floe_colplan_learn(&learnt, m, NULL), 0);
	assert_int_equal(learnt.col[0].id, 16);
	struct floe_spool_prov prov[] = {{"status", "int", 15}, {"bytes", "int", 16}};
	struct floe_spool_entry e = {.seq = 4, .prov = prov, .nprov = 2};
	struct floe_pq_reid map[2];
	size_t n = 0;
	struct floe_err err = {0};
	assert_int_equal(floe_run_columns_reid_map(&learnt, m, "t", &e, map, &n, &err), 0);
	assert_int_equal(n, 2);
	assert_int_equal(map[0].from, 15);
	assert_int_equal(map[0].to, 16);
	assert_int_equal(map[1].from, 16); /* an int file under a long column: a promotion */
	assert_int_equal(map[1].to, 15);
	struct floe_spool_prov bad[] = {{"bytes", "string", 15}};
	e.prov = bad;
	e.nprov = 1;
	assert_int_equal(floe_run_columns_reid_map(&learnt, m, "t", &e, map, &n, &err), FLOE_ESCHEMA);
	assert_non_null(strstr(err.msg, "table t"));
	assert_non_null(strstr(err.msg, "'bytes'"));
	assert_non_null(strstr(err.msg, "long"));
	assert_non_null(strstr(err.msg, "string"));
	struct floe_spool_prov gone[] = {{"nope", "int", 17}};
	e.prov = gone;
	assert_int_equal(floe_run_columns_reid_map(&learnt, m, "t", &e, map, &n, &err), FLOE_ESCHEMA);
	assert_non_null(strstr(err.msg, "'nope'"));
	/* Not learnt yet (the first contact refused): nothing maps. */
	learnt.planned = false;
	e.prov = prov;
	e.nprov = 2;
	assert_int_equal(floe_run_columns_reid_map(&learnt, m, "t", &e, map, &n, &err), FLOE_ESCHEMA);
	floe_ice_meta_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_wanted),
	    cmocka_unit_test(test_per_table),
	    cmocka_unit_test(test_start),
	    cmocka_unit_test(test_spooled_columns),
	    cmocka_unit_test(test_reid_map),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
