/* Tests for agent/config's report of every error of a file in one run, as compilers do:
 * each "file:line:column: message" in document order, the first also in err as before;
 * a section with an error does not run its cross-key rules on half-read keys; log_format
 * is reported for the caller to print the errors as the file asked; every byte freed;
 * a file with one error reports exactly that one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

static const char bad_yaml[] = "agent:\n"
			       "  id: a\n"
			       "  colour: blue\n"
			       "  log_format: json\n"
			       "tables:\n"
			       "  logs:\n"
			       "    codec: gzip\n"
			       "    commit_interval: soon\n"
			       "inputs:\n"
			       "  - type: tail\n"
			       "    paths: [\"/x/*.log\"]\n"
			       "    start_at: middle\n"
			       "  - type: tail\n"
			       "    pathz: 3\n";

static void test_every_error(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	static struct floe_config_errors all;
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	int rc = floe_config_parse_all(&a, "t.yaml", bad_yaml, strlen(bad_yaml), "h", &c, &err, &all);
	assert_int_equal(rc, FLOE_EFORMAT);
	assert_null(c);
	assert_int_equal(all.n, 5);
	assert_int_equal(all.shown, 5);
	assert_true(all.log_json);
	const char *want[] = {"t.yaml:3:3: unknown key 'agent.colour'",
			      "t.yaml:7:12: key 'tables.logs.codec'",
			      "t.yaml:8:22: key 'tables.logs.commit_interval'",
			      "t.yaml:12:15: key 'inputs[0].start_at'",
			      "t.yaml:14:5: unknown key 'inputs[1].pathz'"};
	const char *p = all.text;
	for (size_t i = 0; i < 5; i++) {
		if (strncmp(p, want[i], strlen(want[i])) != 0)
			print_error("line %zu: %.80s\n", i, p);
		assert_memory_equal(p, want[i], strlen(want[i]));
		p = strchr(p, '\n');
		assert_non_null(p);
		p++;
	}
	assert_int_equal(*p, '\0');
	/* err holds the first, as floe_config_parse always did. */
	assert_memory_equal(err.msg, want[0], strlen(want[0]));
	assert_int_equal(a.used, 0);
}

/* One error: one line, and the same message floe_config_parse gives. */
static void test_one_error(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	static struct floe_config_errors all;
	const char *y = "agent:\n  id: a\ntables:\n  logs:\n    codec: gzip\n";
	struct floe_config *c = NULL;
	struct floe_err err = {0}, err1 = {0};
	assert_int_equal(floe_config_parse_all(&a, "t.yaml", y, strlen(y), "h", &c, &err, &all),
			 FLOE_EFORMAT);
	assert_int_equal(floe_config_parse(&a, "t.yaml", y, strlen(y), "h", &c, &err1),
			 FLOE_EFORMAT);
	assert_int_equal(all.n, 1);
	assert_false(all.log_json);
	assert_string_equal(err.msg, err1.msg);
	assert_int_equal(strlen(all.text), strlen(err.msg) + 1);
	assert_memory_equal(all.text, err.msg, strlen(err.msg));
	assert_int_equal(a.used, 0);
}

/* Many errors: as many lines as fit, and the count of all of them. */
static void test_many_errors(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	static char y[64 * 1024];
	size_t n = (size_t)snprintf(y, sizeof(y), "agent:\n  id: a\ninputs:\n");
	for (int i = 0; i < 500; i++)
		n += (size_t)snprintf(y + n, sizeof(y) - n, "  - type: tail\n    nope%d: 1\n", i);
	static struct floe_config_errors all;
	struct floe_config *c = NULL;
	assert_int_equal(floe_config_parse_all(&a, "t.yaml", y, n, "h", &c, NULL, &all),
			 FLOE_EFORMAT);
	assert_int_equal(all.n, 500);
	assert_true(all.shown > 10 && all.shown < 500);
	assert_true(all.len < sizeof(all.text));
	assert_int_equal(a.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_error),
	    cmocka_unit_test(test_one_error),
	    cmocka_unit_test(test_many_errors),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
