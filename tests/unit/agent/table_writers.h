/* For the tests of writers racing on one table (test_table_maint.c,
 * test_table_replace.c): table_fixture.h's fixture with an injected wall clock that
 * moves a second a commit and counting randomness whose first fill can run another
 * writer's commit (f->hook), and the steps those tests take. Include after cmocka.h. */
#ifndef FLOE_TEST_TABLE_WRITERS_H
#define FLOE_TEST_TABLE_WRITERS_H

#include <dirent.h>

#include "agent/schema/record.h"
#include "formats/base/error.h"

#include "table_fixture.h"

#define INST_A "aaaaaaaa-0000-4000-8000-00000000000a"
#define INST_B "bbbbbbbb-0000-4000-8000-00000000000b"
#define DAY_US (86400LL * 1000000)

static struct floe_err terr;

static inline int64_t fake_wall(void *ctx)
{
	return ((struct fixture *)ctx)->wall_us;
}

static inline void fake_sleep(void *ctx, unsigned ms)
{
	(void)ctx;
	(void)ms;
}

static inline void seal(struct fixture *f, uint64_t seq)
{
	for (int i = 0; i < 3; i++) {
		char msg[64];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = 19000 * DAY_US + i;
		r.host = (struct floe_str){"h1", 2};
		r.source = (struct floe_str){"/x.log", 6};
		snprintf(msg, sizeof(msg), "line %d of seal %llu", i, (unsigned long long)seq);
		r.message = (struct floe_str){msg, strlen(msg)};
		assert_int_equal(floe_batch_add(f->batch, seq, &r), 0);
	}
	const uint8_t pos[] = {1, (uint8_t)seq};
	assert_int_equal(floe_batch_seal(f->batch, 1, pos, sizeof(pos)), 0);
}

static inline void commit(struct fixture *f, struct floe_table *t, uint64_t seq, int want)
{
	seal(f, seq);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, seq, &e), 0);
	assert_int_equal(floe_table_commit(t, f->spool, &e, 1, &terr), want);
	floe_spool_entry_free(&f->alloc, e);
	f->wall_us += 1000000;
}

static inline int fake_fill(void *ctx, void *p, size_t n)
{
	struct fixture *f = ctx;
	for (size_t i = 0; i < n; i++)
		((uint8_t *)p)[i] = f->next++;
	if (f->hook) {
		f->hook = false;
		commit(f, f->other, 100, 0);
	}
	return 0;
}

/* The fixture with the injected clock and randomness, partitioned by day. */
static inline int setup(void **state)
{
	struct fixture *f = fixture_new("/tmp/floe-test-maint.XXXXXX", "day(ts)", 2, true);
	if (!f)
		return -1;
	f->wall_us = 1700000000000000LL;
	f->next = 1;
	f->clock = (struct floe_clock){fake_wall, fake_wall, fake_sleep, f};
	f->rand = (struct floe_rand){fake_fill, f};
	*state = f;
	return 0;
}

/* The table as agent with installation inst, which replaces the installation named
 * (NULL: none) and runs at home (NULL: unknown); rc the open's result expected. */
static inline struct floe_table *open_home(struct fixture *f, const char *agent, const char *inst,
					   const char *replaces, const char *home, int rc)
{
	struct floe_table_options o = fixture_table(f, agent, inst);
	o.max_attempts = 2;
	o.clock = &f->clock;
	o.rand = &f->rand;
	o.replaces = replaces;
	o.home = home;
	struct floe_table *t = NULL;
	assert_int_equal(floe_table_open(&f->alloc, &o, &t, &terr), rc);
	return t;
}

static inline struct floe_table *open_as(struct fixture *f, const char *agent, const char *inst,
				  const struct floe_table_props *props)
{
	struct floe_table_options o = fixture_table(f, agent, inst);
	o.max_attempts = 2;
	o.props = props;
	o.clock = &f->clock;
	o.rand = &f->rand;
	struct floe_table *t = NULL;
	assert_int_equal(floe_table_open(&f->alloc, &o, &t, &terr), 0);
	return t;
}

/* Files in the table's metadata directory whose name contains s. */
static inline int count_meta(struct fixture *f, const char *s)
{
	DIR *d = opendir(f->meta);
	assert_non_null(d);
	int n = 0;
	for (struct dirent *e; (e = readdir(d));)
		n += strstr(e->d_name, s) != NULL;
	closedir(d);
	return n;
}

#endif
