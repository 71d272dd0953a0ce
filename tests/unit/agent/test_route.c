/* Unit tests for agent/pipeline/route: an input's rules tried in order (equals, a
 * pattern, a present field; built-in string and integer fields and attributes), the
 * input's table for the rest, a missing field never matching, and whether an input's
 * records all go to logs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "agent/config/config.h"
#include "agent/parse/regex.h"
#include "agent/pipeline/route.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

static const char *keys[] = {"kind", "user"};
static const size_t klens[] = {4, 4};

/* A record with app (NULL: null), severity (negative: null) and attrs kind and user. */
static struct floe_record rec(const char *app, int severity, const char *kind, const char **vals)
{
	struct floe_record r;
	memset(&r, 0, sizeof(r));
	r.message.p = "m";
	r.message.len = 1;
	if (app) {
		r.app.p = app;
		r.app.len = strlen(app);
	}
	r.has_severity = severity >= 0;
	r.severity = severity;
	static size_t vlens[2];
	vals[0] = kind;
	vals[1] = "u1";
	vlens[0] = kind ? strlen(kind) : 0;
	vlens[1] = 2;
	r.nattrs = 2;
	r.attr_keys = keys;
	r.attr_key_lens = klens;
	r.attr_vals = vals;
	r.attr_val_lens = vlens;
	return r;
}

static void test_rules_in_order(void **state)
{
	(void)state;
	struct floe_config_route rules[] = {
	    {.field = "kind", .equals = "access", .table_idx = 1},
	    {.field = "app", .matches = "^(sshd|sudo|login)$", .table_idx = 2},
	    {.field = "severity", .equals = "2", .table_idx = 3},
	    {.field = "attrs.user", .table_idx = 4},
	};
	struct floe_config_input in;
	memset(&in, 0, sizeof(in));
	in.routes = rules;
	in.nroutes = 3;
	in.table_idx = 0;
	struct floe_route *rt = NULL;
	struct floe_err err = {0};
	if (!floe_regex_available())
		skip();
	assert_int_equal(floe_route_new(NULL, &in, &rt, &err), 0);
	const char *v[2];
	struct floe_record r = rec("sshd", -1, "access", v);
	assert_int_equal(floe_route_pick(rt, &r), 1); /* the first rule wins */
	r = rec("sshd", -1, "other", v);
	assert_int_equal(floe_route_pick(rt, &r), 2);
	r = rec("sshdx", -1, NULL, v);
	assert_int_equal(floe_route_pick(rt, &r), 0); /* no rule: the input's table */
	r = rec(NULL, 2, NULL, v);
	assert_int_equal(floe_route_pick(rt, &r), 3); /* an integer field as its decimal text */
	r = rec(NULL, -1, NULL, v);
	assert_int_equal(floe_route_pick(rt, &r), 0); /* a null field matches nothing */
	floe_route_free(rt);

	/* A rule with neither equals nor matches takes records that have the field. */
	in.routes = &rules[3];
	in.nroutes = 1;
	in.table_idx = 5;
	assert_int_equal(floe_route_new(NULL, &in, &rt, &err), 0);
	r = rec(NULL, -1, NULL, v);
	assert_int_equal(floe_route_pick(rt, &r), 4);
	r.nattrs = 0;
	assert_int_equal(floe_route_pick(rt, &r), 5);
	floe_route_free(rt);
}

/* A rule to the logs table, and a null route, pick table 0. */
static void test_logs_only(void **state)
{
	(void)state;
	struct floe_config_route to_logs = {.field = "app", .equals = "x", .table_idx = 0};
	struct floe_config_input in;
	memset(&in, 0, sizeof(in));
	in.routes = &to_logs;
	in.nroutes = 1;
	struct floe_route *rt = NULL;
	assert_int_equal(floe_route_new(NULL, &in, &rt, NULL), 0);
	const char *v[2];
	struct floe_record r = rec("x", -1, NULL, v);
	assert_int_equal(floe_route_pick(rt, &r), 0);
	floe_route_free(rt);
	assert_int_equal(floe_route_pick(NULL, &r), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_rules_in_order),
	    cmocka_unit_test(test_logs_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
