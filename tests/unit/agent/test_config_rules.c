/* Tests for agent/config: what a route rule (and an aggregation's where) means, settled
 * when the file is read: an equals on a numeric field written as the number compared,
 * a rule on a typed column's name made one on the field the column takes, and the rules
 * that can never match, which floe check refuses and floe run warns of. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config_lib.h"

/* An equals on severity, facility or offset is kept as the decimal text the field is
 * compared as: a name in any case (a level's, as the parsers read it, for severity) and
 * leading zeros give the number; the same text on an attribute stays as it is. */
static void test_numeric_equals(void **state)
{
	(void)state;
	struct floe_config *c =
	    parse_ok(NULL, "inputs:\n"
			   "  - type: tail\n"
			   "    paths: /a\n"
			   "    route:\n"
			   "      - {field: severity, equals: err, table: logs}\n"
			   "      - {field: severity, equals: \"04\", table: logs}\n"
			   "      - {field: facility, equals: Local7, table: logs}\n"
			   "      - {field: offset, equals: \"0012\", table: logs}\n"
			   "      - {field: level, equals: err, table: logs}\n"
			   "      - {field: severity, equals: Fatal, table: logs}\n"
			   "      - {field: severity, equals: trace, table: logs}\n"
			   "aggregations:\n"
			   "  - {name: w, where: {field: severity, equals: WARN}}\n");
	const struct floe_config_input *in = &c->inputs[0];
	assert_int_equal(in->nroutes, 7);
	assert_string_equal(in->routes[0].equals, "3");
	assert_string_equal(in->routes[1].equals, "4");
	assert_string_equal(in->routes[2].equals, "23");
	assert_string_equal(in->routes[3].equals, "12");
	assert_string_equal(in->routes[4].equals, "err");
	assert_string_equal(in->routes[5].equals, "0");
	assert_string_equal(in->routes[6].equals, "7");
	assert_string_equal(c->aggs[0].where.equals, "4");
	floe_config_free(c);
}

/* A route rule on a typed column's name tests the field the column takes (rules test the
 * parsed fields, before columns take them); on a name a column takes as its field, or on
 * attrs.KEY, the rule stays as written. */
static void test_rule_on_column(void **state)
{
	(void)state;
	struct floe_config *c = parse_ok(
	    NULL, "inputs:\n"
		  "  - type: tail\n"
		  "    paths: /a\n"
		  "    route:\n"
		  "      - {field: http_status, equals: 500, table: errors}\n"
		  "      - {field: attrs.http_status, equals: 500, table: errors}\n"
		  "      - {field: lat, equals: 1, table: errors}\n"
		  "      - {field: other, equals: 1, table: errors}\n"
		  "tables:\n"
		  "  logs: {columns: [{name: http_status, type: int, from: status},\n"
		  "                   {name: latency, type: double, from: lat}]}\n"
		  "  errors: {columns: [{name: http_status, type: int, from: attrs.status},\n"
		  "                     {name: lat, type: double, from: t}]}\n");
	const struct floe_config_input *in = &c->inputs[0];
	assert_string_equal(in->routes[0].field, "attrs.status");
	assert_string_equal(in->routes[1].field, "attrs.http_status");
	assert_string_equal(in->routes[2].field, "lat"); /* logs' latency takes lat */
	assert_string_equal(in->routes[3].field, "other");
	char *d = dump(c);
	struct floe_config *c2 = parse_ok(NULL, d);
	assert_string_equal(c2->inputs[0].routes[0].field, "attrs.status");
	floe_free(NULL, d);
	floe_config_free(c2);
	floe_config_free(c);
	/* Two tables whose columns of that name take different fields: which is meant? The
	 * rule stays as written and takes nothing; floe check refuses it, floe run says so. */
	c = parse_ok(NULL,
		     "inputs:\n"
		     "  - {type: tail, paths: /a, route: [{field: code, equals: 1, table: t}]}\n"
		     "tables:\n"
		     "  logs: {columns: [{name: code, type: int, from: status}]}\n"
		     "  t: {columns: [{name: code, type: int, from: rc}]}\n");
	assert_string_equal(c->inputs[0].routes[0].field, "code");
	assert_non_null(c->warnings);
	assert_string_equal(c->warnings,
			    "t.yaml:2:37: key 'inputs[0].route[0].field': 'code' is a column that "
			    "takes the field 'status' in one table and 'rc' in another; a rule reads "
			    "the parsed field: name it\n");
	floe_config_free(c);
}

/* An aggregation's where and metrics written on a typed column's name read the field the
 * column takes, as a route rule does, the metric's column keeping the name written; a
 * group key on it is a warning (its column would change type with its source). */
static void test_agg_on_column(void **state)
{
	(void)state;
	struct floe_config *c =
	    parse_ok(NULL, "inputs:\n"
			   "  - {type: tail, paths: /a}\n"
			   "tables:\n"
			   "  logs: {columns: [{name: http_status, type: int, from: status},\n"
			   "                   {name: host_name, type: string, from: hn}]}\n"
			   "aggregations:\n"
			   "  - name: a\n"
			   "    where: {field: http_status, equals: \"500\"}\n"
			   "    group_by: [status, hn, other]\n"
			   "    metrics: [count, {sum: http_status}, {max: hn}]\n");
	const struct floe_config_agg *g = &c->aggs[0];
	assert_string_equal(g->where.field, "attrs.status");
	assert_string_equal(g->metrics[1].field, "attrs.status");
	assert_string_equal(g->metrics[1].name, "sum_http_status");
	assert_string_equal(g->metrics[2].field, "hn"); /* a column takes hn itself */
	assert_null(c->warnings);
	/* The effective configuration reads back the same. */
	char *d = dump(c);
	struct floe_config *c2 = parse_ok(NULL, d);
	assert_string_equal(c2->aggs[0].metrics[1].field, "attrs.status");
	assert_string_equal(c2->aggs[0].metrics[1].name, "sum_http_status");
	floe_free(NULL, d);
	floe_config_free(c2);
	floe_config_free(c);
	/* A group key on the column's name, read by an aggregation of the input whose table
	 * has the column: a warning; one of an input whose tables have none: nothing. */
	c = parse_ok(NULL, "inputs:\n"
			   "  - {type: tail, paths: /a}\n"
			   "  - {type: tail, paths: /b, table: t}\n"
			   "tables:\n"
			   "  t: {columns: [{name: http_status, type: int, from: status}]}\n"
			   "aggregations:\n"
			   "  - {name: a, from: [0], group_by: [http_status]}\n"
			   "  - {name: b, from: [1], group_by: [http_status]}\n");
	assert_string_equal(c->aggs[1].group_by[0], "http_status");
	assert_non_null(c->warnings);
	assert_string_equal(c->warnings,
			    "t.yaml:8:5: key 'aggregations[1].group_by[0]': 'http_status' is a "
			    "column that takes the field 'status'; a group key reads the parsed "
			    "field, and this one would be null in every row: write 'status' (its "
			    "key column is then named so)\n");
	floe_config_free(c);
}

/* A rule that can never match (an equals no severity, facility or offset can have, a
 * pattern no severity's number matches) is a warning, not an error: an earlier release
 * took it without a word, and refusing it at run would stop a device at an upgrade. floe
 * check refuses what is in warnings; the rule is kept as written and takes nothing. */
static void test_rule_never_matches(void **state)
{
	(void)state;
	static const struct {
		const char *yaml, *warning;
	} cases[] = {
	    {"inputs:\n  - {type: tail, paths: [a], route: [{field: severity, equals: 9, table: "
	     "logs}]}\n",
	     "t.yaml:2:64: key 'inputs[0].route[0].equals': severity is a number, 0 (emerg) to 7 "
	     "(debug), or a level's name: '9' is neither, and never equals it\n"},
	    {"inputs:\n  - {type: tail, paths: [a], route: [{field: facility, equals: local8, "
	     "table: logs}]}\n",
	     "t.yaml:2:64: key 'inputs[0].route[0].equals': facility is a number, 0 (kern) to 23 "
	     "(local7), or its syslog name: 'local8' is neither, and never equals it\n"},
	    {"inputs:\n  - {type: tail, paths: [a], route: [{field: offset, equals: \"-1\", table: "
	     "logs}]}\n",
	     "t.yaml:2:62: key 'inputs[0].route[0].equals': offset is a number, 0 or more: '-1' is "
	     "neither, and never equals it\n"},
#ifndef FLOE_NO_PCRE2 /* a build without it refuses every matches */
	    {"inputs:\n  - {type: tail, paths: [a], route: [{field: severity, matches: "
	     "\"^(err|crit)$\", table: logs}]}\n",
	     "t.yaml:2:65: key 'inputs[0].route[0].matches': severity is matched as its number, 0 "
	     "to 7: '^(err|crit)$' matches none of them\n"},
#endif
	    {"aggregations:\n  - {name: e, window: 1m, where: {field: severity, equals: severe}}\n",
	     "t.yaml:2:60: key 'aggregations[0].where.equals': severity is a number, 0 (emerg) to 7 "
	     "(debug), or a level's name: 'severe' is neither, and never equals it\n"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floe_config *c = parse_ok(NULL, cases[i].yaml);
		assert_non_null(c->warnings);
		assert_string_equal(c->warnings, cases[i].warning);
		floe_config_free(c);
	}
	/* The equals is kept as written: it compares as before, and takes nothing. */
	struct floe_config *c = parse_ok(NULL, cases[0].yaml);
	assert_string_equal(c->inputs[0].routes[0].equals, "9");
	floe_config_free(c);
	/* A file with none has none. */
	c = parse_ok(NULL, "inputs:\n  - {type: tail, paths: [a]}\n");
	assert_null(c->warnings);
	floe_config_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_numeric_equals),
	    cmocka_unit_test(test_rule_on_column),
	    cmocka_unit_test(test_rule_never_matches),
	    cmocka_unit_test(test_agg_on_column),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
