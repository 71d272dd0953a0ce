/* Tests of agent/parse/syslog_file: hand-checked lines (BSD and RFC 3339 times, with and
 * without a pid, a year inferred across New Year), a zone given as a function (zone:
 * local), near misses, and the loghub Linux and
 * OpenSSH samples, which rsyslog wrote in this format: every line parses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/env/env.h"
#include "agent/parse/fields.h"
#include "agent/parse/syslog_file.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"
#include "fields_expect.h"

#include <stdio.h>
#include <string.h>

static struct floe_fields *f;

static int setup(void **state)
{
	return floe_fields_new(NULL, 16, 0, &f);
}

static int teardown(void **state)
{
	floe_fields_free(f);
	return 0;
}

static void expect_val(const char *k, const char *v)
{
	expect_field(f, k, v, strlen(v));
}

/* 2026-12-03T12:00:00Z, the receive time of the tests. */
#define NOW (1796299200LL * 1000000)

static void test_lines(void **state)
{
	int64_t ts = 0;
	struct floe_str pid = {0};
	struct floe_err why = {0};
	const char *l = "Dec  3 11:59:58 edge-7 sshd[24200]: Invalid user webmaster from 10.0.0.9";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, 0, 0, NULL, f, &ts, &pid, &why), 0);
	assert_int_equal(ts, NOW - 2000000);
	expect_val("host", "edge-7");
	expect_val("app", "sshd");
	expect_val("pid", "24200");
	expect_val("msg", "Invalid user webmaster from 10.0.0.9");
	assert_int_equal(pid.len, 5);
	assert_ptr_equal(pid.p, l + 28);
	/* No pid; a December line received in January belongs to the year before; a zone
	 * of +01:00 for the zone-less time. */
	l = "Dec 31 23:30:00 h kernel: [ 1.5] eth0: link up";
	floe_fields_reset(f);
	assert_int_equal(
	    floe_syslog_file_parse(l, strlen(l), 1798761600LL * 1000000, 0, 3600, NULL, f, &ts, &pid, &why),
	    0);
	assert_int_equal(ts, (1798759800LL - 3600) * 1000000);
	assert_null(pid.p);
	expect_val("app", "kernel");
	expect_val("msg", "[ 1.5] eth0: link up");
	/* rsyslog's high-precision format. */
	l = "2026-12-03T11:00:00.250+01:00 h cron[7]: (root) CMD (true)";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, 0, 0, NULL, f, &ts, &pid, &why), 0);
	assert_int_equal(ts, NOW - 7200000000LL + 250000);
	expect_val("app", "cron");
}

/* A zone given as a function (zone: local; here one that is an hour ahead until the
 * receive time's midnight and two hours after, as a summer time would be, with calls
 * counted): a BSD time goes through it with the receive time as its hint, the year is
 * inferred in it, an RFC 3339 time with its own offset does not go through it, one
 * without does, and the fixed offset given beside it is not used. */
struct fake_zone {
	int64_t change_us; /* UTC: +1 h before, +2 h from it */
	int calls;
	int64_t hint_us;
};

static int32_t fake_offset_at(void *ctx, int64_t utc_us)
{
	struct fake_zone *z = ctx;
	return utc_us < z->change_us ? 3600 : 7200;
}

static int64_t fake_to_utc(void *ctx, int64_t local_us, int64_t hint_us)
{
	struct fake_zone *z = ctx;
	z->calls++;
	z->hint_us = hint_us;
	int64_t u = local_us - 3600LL * 1000000;
	return u < z->change_us ? u : local_us - 7200LL * 1000000;
}

static void test_zone_function(void **state)
{
	int64_t ts = 0;
	struct floe_str pid = {0};
	struct floe_err why = {0};
	struct fake_zone z = {.change_us = NOW};
	struct floe_zone_fn fn = {fake_to_utc, fake_offset_at, &z};
	const char *l = "Dec  3 12:59:58 edge-7 sshd[24200]: before the change";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, 0, -18000, &fn, f, &ts, &pid, &why),
			 0);
	assert_int_equal(ts, NOW - 2000000);
	assert_true(z.calls >= 1); /* once per year tried */
	assert_int_equal(z.hint_us, NOW);
	l = "Dec  3 14:00:01 edge-7 sshd[24200]: after it";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, 0, -18000, &fn, f, &ts, &pid, &why),
			 0);
	assert_int_equal(ts, NOW + 1000000);
	/* The previous line's time, when given and within a day of the line's, picks the
	 * reading of a repeated hour (a file read a month late); one far from it does not. */
	const int64_t prev = NOW - 5000000;
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW + 30 * 86400000000LL, prev, -18000,
						&fn, f, &ts, &pid, &why),
			 0);
	assert_int_equal(z.hint_us, prev);
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, NOW - 90 * 86400000000LL, -18000,
						&fn, f, &ts, &pid, &why),
			 0);
	assert_int_equal(z.hint_us, NOW);
	/* New Year in the zone before it is in UTC: Jan 1 00:30 local, received at
	 * 2026-12-31 23:40 UTC (Jan 1 00:40 local), is of 2027. */
	z.change_us = INT64_MAX;
	l = "Jan  1 00:30:00 h app: happy";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), (1798761600LL - 1200) * 1000000, 0, 0, &fn,
						f, &ts, &pid, &why),
			 0);
	assert_int_equal(ts, (1798761600LL - 1800) * 1000000);
	/* RFC 3339 with an offset: its own; without one: through the zone. */
	z.calls = 0;
	l = "2026-12-03T11:00:00.250+01:00 h cron[7]: (root) CMD (true)";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, 0, 0, &fn, f, &ts, &pid, &why), 0);
	assert_int_equal(ts, NOW - 7200000000LL + 250000);
	assert_int_equal(z.calls, 0);
	l = "2026-12-03T11:00:00.250 h cron[7]: (root) CMD (true)";
	floe_fields_reset(f);
	assert_int_equal(floe_syslog_file_parse(l, strlen(l), NOW, 0, 0, &fn, f, &ts, &pid, &why), 0);
	assert_int_equal(ts, NOW - 7200000000LL + 250000);
	assert_int_equal(z.calls, 1);
}

static void test_near_misses(void **state)
{
	static const char *const bad[] = {
	    "",
	    "plain text, no time",
	    "<13>Dec  3 11:59:58 h app: x",
	    "Feb 30 11:59:58 h app: x",
	    "Dec  3 25:59:58 h app: x",
	    "{\"time\":\"Dec  3 11:59:58\"}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		floe_fields_reset(f);
		floe_fields_add(f, "k", 1, "v", 1);
		int64_t ts;
		struct floe_str pid;
		struct floe_err why = {0};
		int rc = floe_syslog_file_parse(bad[i], strlen(bad[i]), NOW, 0, 0, NULL, f, &ts, &pid, &why);
		if (rc != FLOE_EPARSE || why.code != FLOE_EPARSE || why.offset > strlen(bad[i]))
			fail_msg("%s: rc %d offset %zu", bad[i], rc, why.offset);
		assert_int_equal(floe_fields_count(f), 0);
	}
}

static void sample(const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/loghub/%s", FLOE_TEST_DATA, name);
	FILE *in = fopen(path, "r");
	assert_non_null(in);
	char line[8192];
	size_t n = 0;
	while (fgets(line, sizeof(line), in)) {
		size_t len = strcspn(line, "\n");
		int64_t ts;
		struct floe_str pid;
		struct floe_err why = {0};
		floe_fields_reset(f);
		if (floe_syslog_file_parse(line, len, NOW, 0, 0, NULL, f, &ts, &pid, &why))
			fail_msg("%s line %zu: %s: %s", name, n + 1, why.msg, line);
		const char *v;
		size_t vl;
		assert_true(floe_fields_find(f, "app", 3, &v, &vl) && vl > 0);
		n++;
	}
	fclose(in);
	assert_int_equal(n, 2000);
}

static void test_loghub(void **state)
{
	sample("Linux_2k.log");
	sample("OpenSSH_2k.log");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines),
	    cmocka_unit_test(test_zone_function),
	    cmocka_unit_test(test_near_misses),
	    cmocka_unit_test(test_loghub),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
