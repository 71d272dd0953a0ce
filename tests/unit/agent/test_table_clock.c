/* Tests of agent/lake/table on a wall clock that steps back (an RTC that ran ahead set
 * right, a date set by hand): snapshot times never go back, and behind the table's time
 * they go on by the monotonic clock, so that snapshot expiry by age still works. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "agent/config/config.h"
#include "formats/iceberg/metadata.h"

#include "table_writers.h"

#define YEAR_US (365 * DAY_US)

/* The monotonic clock: the fixture's wall clock less the steps the test made it take. */
static int64_t stepped_us;

static int64_t fake_mono(void *ctx)
{
	return ((struct fixture *)ctx)->wall_us - stepped_us;
}

/* The newest snapshot's time (ms) and how many snapshots t's table holds. */
static int64_t newest(struct floe_table *t, size_t *count)
{
	const struct floe_ice_meta *m = floe_table_meta(t);
	int64_t best = 0;
	*count = floe_ice_meta_snapshot_count(m);
	for (size_t i = 0; i < *count; i++) {
		int64_t id, parent, seq, ts;
		const char *ml;
		assert_int_equal(floe_ice_meta_snapshot_at(m, i, &id, &parent, &seq, &ts, &ml), 0);
		if (ts > best)
			best = ts;
	}
	return best;
}

static void step(struct fixture *f, int64_t us)
{
	f->wall_us += us;
	stepped_us += us;
}

static void test_step_back_keeps_time_and_expiry(void **state)
{
	struct fixture *f = *state;
	stepped_us = 0;
	f->clock.mono_us = fake_mono;
	struct floe_table_props props = {
	    .max_snapshot_age_ms = 86400000, /* a day */
	    .min_snapshots = 1,
	    .previous_versions_max = 100,
	};
	struct floe_table *a = open_as(f, "agent-a", INST_A, &props);
	size_t n;
	int64_t t0 = f->wall_us / 1000;
	commit(f, a, 1, 0); /* at t0; the clock moves a second a commit */
	assert_int_equal(newest(a, &n), t0);
	step(f, -YEAR_US);
	commit(f, a, 2, 0);
	/* Not before the first, and a second after it, as the monotonic clock says. */
	assert_int_equal(newest(a, &n), t0 + 1000);
	assert_int_equal(n, 2);
	f->wall_us += 2 * DAY_US;
	commit(f, a, 3, 0);
	/* Two days on: the first two snapshots are older than a day and expire. */
	assert_int_equal(newest(a, &n), t0 + 2000 + 2 * DAY_US / 1000);
	assert_int_equal(n, 1);
	/* Once the wall clock is past the table's time again, it is the wall clock's. */
	step(f, YEAR_US);
	int64_t w = f->wall_us / 1000;
	commit(f, a, 4, 0);
	assert_int_equal(newest(a, &n), w);
	floe_table_free(a);
}

/* A new handle (a restart) has no monotonic reference: a millisecond after the parent,
 * then on by the monotonic clock from its own first snapshot. */
static void test_step_back_restart(void **state)
{
	struct fixture *f = *state;
	stepped_us = 0;
	f->clock.mono_us = fake_mono;
	struct floe_table *a = open_as(f, "agent-a", INST_A, NULL);
	int64_t t0 = f->wall_us / 1000;
	commit(f, a, 1, 0);
	floe_table_free(a);
	step(f, -YEAR_US);
	a = open_as(f, "agent-a", INST_A, NULL);
	size_t n;
	commit(f, a, 2, 0);
	assert_int_equal(newest(a, &n), t0 + 1);
	f->wall_us += 60 * 1000000LL;
	commit(f, a, 3, 0);
	assert_int_equal(newest(a, &n), t0 + 1 + 61000);
	floe_table_free(a);
}

/* floe maintain's expiry after a step back: ages are measured on the table's time (its
 * last update), not on a wall clock a year behind every snapshot. */
static void test_maintain_expiry_after_step_back(void **state)
{
	struct fixture *f = *state;
	stepped_us = 0;
	f->clock.mono_us = fake_mono;
	struct floe_table *a = open_as(f, "agent-a", INST_A, NULL); /* no expiry on commit */
	commit(f, a, 1, 0);
	f->wall_us += 2 * DAY_US;
	commit(f, a, 2, 0);
	floe_table_free(a);
	step(f, -YEAR_US);
	struct floe_table_props props = {
	    .max_snapshot_age_ms = 86400000,
	    .min_snapshots = 1,
	    .previous_versions_max = 100,
	};
	struct floe_table *m = open_as(f, "maintain", INST_B, &props);
	size_t expired = 0, n;
	assert_int_equal(floe_table_expire_now(m, &expired, &terr), 0);
	assert_int_equal(expired, 1);
	newest(m, &n);
	assert_int_equal(n, 1);
	floe_table_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_step_back_keeps_time_and_expiry, setup,
					    fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_step_back_restart, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_maintain_expiry_after_step_back, setup,
					    fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
