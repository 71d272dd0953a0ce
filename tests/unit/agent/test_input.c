/* Unit tests of agent/input/input.c: what the inputs' one interface knows of every kind
 * without making one. Each kind's counters table is well formed (lines and bytes first,
 * no key twice, a Prometheus family shared by several kinds worded the same in each, so
 * that /metrics names and helps it once); a position blob is recognised by its own kind
 * only, and one of another kind reads as a changed type; the memory rule's needs follow
 * each kind's own limit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/config/config.h"
#include "agent/input/input_impl.h"

#include <string.h>

static void test_metric_tables(void **state)
{
	(void)state;
	const char *kind[8];
	const struct floe_input_metric *t[8];
	size_t n[8], kinds = 0;
	while (kinds < 8 && (n[kinds] = floe_input_kind_metrics(kinds, &kind[kinds], &t[kinds])))
		kinds++;
	assert_int_equal(kinds, 3);
	for (size_t k = 0; k < kinds; k++) {
		assert_true(n[k] <= FLOE_INPUT_METRICS_MAX);
		assert_string_equal(t[k][0].json, "lines");
		assert_string_equal(t[k][1].json, "bytes");
		for (size_t i = 0; i < n[k]; i++)
			for (size_t j = i + 1; j < n[k]; j++) {
				assert_string_not_equal(t[k][i].json, t[k][j].json);
				assert_string_not_equal(t[k][i].prom, t[k][j].prom);
			}
		/* Every family of this kind another kind has too is the same counter there. */
		for (size_t o = 0; o < k; o++)
			for (size_t i = 0; i < n[k]; i++)
				for (size_t j = 0; j < n[o]; j++)
					if (strcmp(t[k][i].prom, t[o][j].prom) == 0) {
						assert_string_equal(t[k][i].json, t[o][j].json);
						assert_string_equal(t[k][i].help, t[o][j].help);
						assert_int_equal(t[k][i].flags, t[o][j].flags);
					}
		for (size_t o = 0; o < k; o++)
			assert_string_not_equal(kind[k], kind[o]);
	}
}

static void test_recognise(void **state)
{
	(void)state;
	uint8_t tail[12] = {'F', 'L', 'T', 'P', 3, 0, 0, 0, 0, 0, 0, 0};
	uint8_t sys[16] = {'F', 'S', 'Y', 'S', 1, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0};
	uint8_t junk[16] = {'x'};
	assert_true(floe_input_tail_recognise(tail, sizeof(tail)));
	assert_false(floe_input_syslog_recognise(tail, sizeof(tail)));
	assert_false(floe_input_journal_recognise(tail, sizeof(tail)));
	assert_true(floe_input_syslog_recognise(sys, sizeof(sys)));
	assert_false(floe_input_tail_recognise(sys, sizeof(sys)));
	assert_false(floe_input_journal_recognise(sys, sizeof(sys)));
	assert_false(floe_input_tail_recognise(junk, sizeof(junk)));
	assert_false(floe_input_syslog_recognise(junk, sizeof(junk)));
	assert_false(floe_input_tail_recognise(tail, 0));
}

static void test_need(void **state)
{
	(void)state;
	struct floe_config_input in;
	struct floe_input_need need;
	memset(&in, 0, sizeof(in));
	in.type = FLOE_INPUT_TAIL;
	in.max_line_bytes = 1000;
	floe_input_need(&in, 4000, &need);
	assert_true(need.lines);
	assert_false(need.attrs);
	assert_int_equal(need.longest, 1000);
	assert_int_equal(need.read, (64u << 10) + 4000 + 2);
	assert_string_equal(need.key, "max_line_bytes");
	memset(&in, 0, sizeof(in));
	in.type = FLOE_INPUT_SYSLOG;
	in.syslog.max_message_bytes = 8192;
	floe_input_need(&in, 0, &need);
	assert_false(need.lines);
	assert_true(need.attrs);
	assert_int_equal(need.longest, 8192);
	assert_true(need.read > 8192);
	assert_string_equal(need.key, "max_message_bytes");
	memset(&in, 0, sizeof(in));
	in.type = FLOE_INPUT_JOURNAL;
	floe_input_need(&in, 0, &need);
	assert_false(need.lines);
	assert_int_equal(need.longest, 64 * 1024);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_metric_tables),
	    cmocka_unit_test(test_recognise),
	    cmocka_unit_test(test_need),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
