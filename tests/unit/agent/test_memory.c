/* Unit tests for agent/run/memory.c, the memory rule of `floe check`: a budget that
 * cannot hold an input's longest record through sealing is refused with the keys and the
 * numbers (memory_limit 4MiB with the default max_line_bytes, and 32MiB
 * with max_line_bytes 64MiB, crash-looped on one long line), and what the message
 * suggests passes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/config.h"
#include "agent/run/memory.h"
#include "formats/base/error.h"

#include "build_skip.h"

static struct floe_config *parse(const char *agent, const char *input)
{
	char text[1024];
	snprintf(text, sizeof(text),
		 "agent: { id: t, state_dir: /tmp/x%s }\n"
		 "inputs:\n"
		 "  - type: tail\n"
		 "    paths: [\"/var/log/*.log\"]\n"
		 "%s",
		 agent, input);
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	int rc = floe_config_parse(NULL, "floe.yaml", text, strlen(text), "h", &c, &err);
	if (rc)
		fail_msg("%s", err.msg);
	return c;
}

/* Runs the rule; returns its code, err gets the message. */
static int rule(const char *agent, const char *input, char *err, size_t cap)
{
	struct floe_config *c = parse(agent, input);
	struct floe_err e = {0};
	int rc = floe_memory_check(c, &e);
	snprintf(err, cap, "%s", e.msg);
	floe_config_free(c);
	return rc;
}

static void test_defaults_pass(void **state)
{
	(void)state;
	char err[FLOE_ERR_MSG_MAX];
	/* 32 MiB, and 8 MiB too (the file-size benchmark runs there with every default). */
	assert_int_equal(rule("", "", err, sizeof(err)), 0);
	assert_int_equal(rule(", memory_limit: 8MiB", "", err, sizeof(err)), 0);
	struct floe_config *c = parse(", memory_limit: 8MiB", "");
	struct floe_memory_need n;
	assert_int_equal(floe_memory_need(c, &n), 0);
	assert_true(n.total <= c->agent.memory_limit);
	assert_int_equal(n.record, 1u << 20);
	assert_true(n.writer > 4 * n.record); /* the page, its doubling, its compressed copies */
	floe_config_free(c);
}

static void test_issue_budgets_refused(void **state)
{
	(void)state;
	char err[FLOE_ERR_MSG_MAX];
	assert_int_equal(rule(", memory_limit: 4MiB", "", err, sizeof(err)), FLOE_EFORMAT);
	/* At the key, with the numbers and what would fit. */
	assert_non_null(strstr(err, "floe.yaml:1:"));
	assert_non_null(strstr(err,
			       "key 'agent.memory_limit': 4.0MiB cannot hold a record of 1.0MiB "
			       "(inputs[0].max_line_bytes) through sealing"));
	assert_non_null(strstr(err, "raise agent.memory_limit to "));
	assert_non_null(strstr(err, "or lower inputs[0].max_line_bytes to "));
	unsigned long mib = 0, kib = 0;
	const char *p = strstr(err, "raise agent.memory_limit to ");
	assert_int_equal(
	    sscanf(p,
		   "raise agent.memory_limit to %luMiB or lower inputs[0].max_line_bytes to %luKiB",
		   &mib, &kib),
	    2);
	char a[64], in[64];
	snprintf(a, sizeof(a), ", memory_limit: %luMiB", mib);
	assert_int_equal(rule(a, "", err, sizeof(err)), 0);
	snprintf(in, sizeof(in), "    max_line_bytes: %luKiB\n", kib);
	assert_int_equal(rule(", memory_limit: 4MiB", in, err, sizeof(err)), 0);
	snprintf(in, sizeof(in), "    max_line_bytes: %luKiB\n", kib + 64);
	assert_int_equal(rule(", memory_limit: 4MiB", in, err, sizeof(err)), FLOE_EFORMAT);

	/* 64 MiB lines in 32 MiB; the message points at the input when memory_limit is not set. */
	assert_int_equal(rule("", "    max_line_bytes: 64MiB\n", err, sizeof(err)), FLOE_EFORMAT);
	assert_non_null(strstr(
	    err,
	    "floe.yaml:3:5: key 'agent.memory_limit': 32.0MiB cannot hold a record of 64.0MiB"));
}

static void test_what_else_counts(void **state)
{
	(void)state;
	/* A parser puts the line's bytes into attrs too: twice the pages. */
	struct floe_config *plain = parse(", memory_limit: 64MiB", "    max_line_bytes: 4MiB\n");
	struct floe_config *json =
	    parse(", memory_limit: 64MiB", "    max_line_bytes: 4MiB\n    parser: json\n");
	struct floe_memory_need a, b;
	assert_int_equal(floe_memory_need(plain, &a), 0);
	assert_int_equal(floe_memory_need(json, &b), 0);
	assert_true(b.writer > a.writer + 2 * (4u << 20));
	floe_config_free(plain);
	floe_config_free(json);
	/* Every input's read buffer counts. */
	struct floe_config *two = parse("", "  - type: tail\n    paths: [\"/b/*.log\"]\n");
	assert_int_equal(floe_memory_need(two, &a), 0);
	assert_true(a.read >= 2 * (1u << 20));
	floe_config_free(two);
}

/* A multiline record longer than a line is the longest record, and named. */
static void test_multiline_record_counts(void **state)
{
	(void)state;
	NEEDS_PCRE2();
	char err[FLOE_ERR_MSG_MAX];
	assert_int_equal(rule(", memory_limit: 8MiB",
			      "    multiline: { start: \"^[0-9]\", max_bytes: 4MiB }\n", err,
			      sizeof(err)),
			 FLOE_EFORMAT);
	assert_non_null(strstr(err, "(inputs[0].multiline.max_bytes)"));
	assert_non_null(strstr(err, "or lower inputs[0].multiline.max_bytes"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_pass),
	    cmocka_unit_test(test_issue_budgets_refused),
	    cmocka_unit_test(test_what_else_counts),
	    cmocka_unit_test(test_multiline_record_counts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
