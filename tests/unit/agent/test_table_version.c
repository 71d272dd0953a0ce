/* Unit tests for agent/lake/table_version.c: how floe finds a table's current metadata
 * version, and the histories it refuses (a stray copy past a gap or after the current
 * version, a deleted current file), with the same decision for writers and readers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/schema/partition.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/store.h"

#include "table_fixture.h"

#define INST "aaaaaaaa-0000-4000-8000-00000000000a"
#define DAY (86400LL * 1000000)

/* Why the last table call failed (every call here passes it). */
static struct floe_err terr;

static int setup(void **state)
{
	*state = fixture_new("/tmp/floe-test-tver.XXXXXX", NULL, 1, true);
	return *state ? 0 : -1;
}

static int open_table(struct fixture *f, struct floe_table **t, char *why, size_t cap)
{
	struct floe_table_options o = fixture_table(f, "a", INST);
	struct floe_err e = {0};
	int rc = floe_table_open(&f->alloc, &o, t, &e);
	snprintf(why, cap, "%s", e.msg);
	return rc;
}

/* Seals ten rows and commits them: returns floe_table_commit's result. */
static int commit_one(struct fixture *f, struct floe_table *t)
{
	uint64_t seq = ++f->seq;
	for (int i = 0; i < 10; i++) {
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = 19000 * DAY + i;
		r.host = (struct floe_str){"h", 1};
		r.source = (struct floe_str){"s", 1};
		r.message = (struct floe_str){"m", 1};
		assert_int_equal(floe_batch_add(f->batch, seq, &r), 0);
	}
	const uint8_t pos[] = {1};
	assert_int_equal(floe_batch_seal(f->batch, 1, pos, 1), 0);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(f->spool, seq, &e), 0);
	int rc = floe_table_commit(t, f->spool, &e, 1, &terr);
	if (rc == 0)
		assert_int_equal(floe_spool_remove(f->spool, e), 0);
	floe_spool_entry_free(&f->alloc, e);
	return rc;
}

static void sh(const char *fmt, const char *a, const char *b)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), fmt, a, b, a, b);
	assert_int_equal(system(cmd), 0);
}

/* A table at v3 (two commits). */
static struct floe_table *table_at_v3(struct fixture *f)
{
	struct floe_table *t = NULL;
	char why[1024] = "";
	assert_int_equal(open_table(f, &t, why, sizeof(why)), 0);
	assert_int_equal(commit_one(f, t), 0);
	assert_int_equal(commit_one(f, t), 0);
	assert_int_equal(floe_table_version(t), 3);
	return t;
}

static int load_ro(struct fixture *f, char *why, size_t cap)
{
	struct floe_table *ro = NULL;
	struct floe_err e = {0};
	int rc = floe_table_load(&f->alloc, f->store, "default/logs", &ro, &e);
	snprintf(why, cap, "%s", e.msg);
	floe_table_free(ro);
	return rc;
}

/* The case: v5 is a copy of v3 and v4 is absent. Probing alone stops at v3, and
 * after a commit of v4 would reach the stale v5 and drop v4. */
static void test_stray_past_a_gap(void **state)
{
	struct fixture *f = *state;
	struct floe_table *t = table_at_v3(f);
	sh("cp %s/v3.metadata.json %s/v5.metadata.json", f->meta, f->meta);
	assert_int_equal(commit_one(f, t), FLOE_EREGRESS);
	assert_non_null(strstr(terr.msg, "v5.metadata.json exists but v4.metadata.json does not"));
	sh("test ! -e %s/v4.metadata.json # %s", f->meta, f->meta);
	/* A new agent and floe inspect decide the same. */
	struct floe_table *t2 = NULL;
	char why[1024] = "";
	assert_int_equal(open_table(f, &t2, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "v5.metadata.json exists but v4.metadata.json does not"));
	assert_int_equal(load_ro(f, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "a gap after the current version v3"));
	/* A gap farther out is found by the listing at open. */
	sh("mv %s/v5.metadata.json %s/v9.metadata.json", f->meta, f->meta);
	assert_int_equal(load_ro(f, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "v9.metadata.json exists but v4.metadata.json does not"));
	/* Without a hint, a listing that skips v4..v8 does not make v9 current. */
	sh("mv %s/version-hint.text %s/hint.saved", f->meta, f->meta);
	assert_int_equal(load_ro(f, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "has no version-hint.text, and of the versions v1 to v9 in it 5 are missing"));
	sh("mv %s/hint.saved %s/version-hint.text", f->meta, f->meta);
	/* Moved aside, the table goes on. */
	sh("rm %s/v9.metadata.json # %s", f->meta, f->meta);
	assert_int_equal(commit_one(f, t), 0);
	assert_int_equal(floe_table_version(t), 4);
	floe_table_free(t);
}

/* A copy of an older version right after the current one is not its successor. */
static void test_stray_after_current(void **state)
{
	struct fixture *f = *state;
	struct floe_table *t = table_at_v3(f);
	sh("cp %s/v2.metadata.json %s/v4.metadata.json", f->meta, f->meta);
	assert_int_equal(floe_table_refresh(t, &terr), FLOE_EREGRESS);
	assert_non_null(strstr(terr.msg, "v4.metadata.json was not made from v3.metadata.json"));
	char why[1024] = "";
	assert_int_equal(load_ro(f, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "its metadata-log ends with"));
	/* Without a metadata-log, the lower last-sequence-number gives it away. */
	sh("sed -i 's/\"metadata-log\":\\[[^]]*\\]/\"metadata-log\":[]/' %s/v4.metadata.json # %s", f->meta,
	   f->meta);
	assert_int_equal(load_ro(f, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "has last-sequence-number 1, lower than v3's 2"));
	floe_table_free(t);
}

/* The current metadata file deleted: the hint names a missing version. */
static void test_current_deleted(void **state)
{
	struct fixture *f = *state;
	struct floe_table *t = table_at_v3(f);
	sh("rm %s/v3.metadata.json # %s", f->meta, f->meta);
	assert_int_equal(commit_one(f, t), FLOE_EREGRESS);
	assert_non_null(strstr(terr.msg, "version-hint.text names v3 but"));
	assert_non_null(strstr(terr.msg, "v3.metadata.json is missing (the newest is v2)"));
	char why[1024] = "";
	struct floe_table *t2 = NULL;
	assert_int_equal(open_table(f, &t2, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "version-hint.text names v3 but"));
	assert_int_equal(load_ro(f, why, sizeof(why)), FLOE_EREGRESS);
	sh("test ! -e %s/v3.metadata.json # %s", f->meta, f->meta);
	/* Every metadata file gone but the hint: no new table is made over it. */
	sh("rm %s/v1.metadata.json %s/v2.metadata.json", f->meta, f->meta);
	assert_int_equal(open_table(f, &t2, why, sizeof(why)), FLOE_EREGRESS);
	assert_non_null(strstr(why, "none is left"));
	floe_table_free(t);
}

/* The hint lags behind what this process saw, and that version is deleted. */
static void test_seen_version_deleted(void **state)
{
	struct fixture *f = *state;
	struct floe_table *t = table_at_v3(f);
	sh("printf 2 > %s/version-hint.text; rm %s/v3.metadata.json", f->meta, f->meta);
	assert_int_equal(floe_table_refresh(t, &terr), FLOE_EREGRESS);
	assert_non_null(strstr(terr.msg, "v3.metadata.json, the current version when floe last "
					 "read the table, is gone (the newest is v2)"));
	floe_table_free(t);
}

/* What must keep working: a lagging or missing hint, and old files cleaned up. */
static void test_lagging_hint(void **state)
{
	struct fixture *f = *state;
	struct floe_table *t = table_at_v3(f);
	char why[1024] = "";
	sh("printf 2 > %s/version-hint.text # %s", f->meta, f->meta);
	assert_int_equal(load_ro(f, why, sizeof(why)), 0);
	sh("rm %s/version-hint.text # %s", f->meta, f->meta);
	assert_int_equal(load_ro(f, why, sizeof(why)), 0);
	assert_int_equal(commit_one(f, t), 0);
	assert_int_equal(floe_table_version(t), 4);
	/* A hint at v1, whose file maintenance deleted, with v2..v4 there. */
	sh("printf 1 > %s/version-hint.text; rm %s/v1.metadata.json", f->meta, f->meta);
	struct floe_table *ro = NULL;
	assert_int_equal(floe_table_load(&f->alloc, f->store, "default/logs", &ro, NULL), 0);
	assert_int_equal(floe_table_version(ro), 4);
	floe_table_free(ro);
	floe_table_free(t);
}

/* A store in front of the fixture's that, the first time it is asked whether a chosen key
 * exists, lets another writer commit twice and then answers as it would have just before:
 * the race of a reader that looks at v4, then v5, while two commits land in between. */
struct racing_store {
	struct floe_store base;
	struct floe_store *inner;
	const char *key; /* the key whose first look is stale */
	struct fixture *f;
	struct floe_table *other;
	int fired;
};

static int rs_get(struct floe_store *s, const char *k, size_t m, void **d, size_t *l)
{
	struct racing_store *r = (struct racing_store *)s;
	return r->inner->ops->get(r->inner, k, m, d, l);
}
static int rs_exists(struct floe_store *s, const char *k)
{
	struct racing_store *r = (struct racing_store *)s;
	if (!r->fired && strstr(k, r->key)) {
		r->fired = 1;
		int was = r->inner->ops->exists(r->inner, k);
		assert_int_equal(commit_one(r->f, r->other), 0);
		assert_int_equal(commit_one(r->f, r->other), 0);
		return was;
	}
	return r->inner->ops->exists(r->inner, k);
}
static int rs_list(struct floe_store *s, const char *p, int (*fn)(void *, const char *), void *c)
{
	struct racing_store *r = (struct racing_store *)s;
	return r->inner->ops->list(r->inner, p, fn, c);
}
static void rs_destroy(struct floe_store *s)
{
	(void)s;
}

/* Versions that other writers commit while floe probes are no gap: a reader that found v4
 * absent and then v5 present looks at v4 again, and reaches v5. Once this was refused as
 * a gap, and the agent stopped. */
static void test_commits_during_probe(void **state)
{
	struct fixture *f = *state;
	struct floe_table *t = table_at_v3(f);
	static const struct floe_store_ops ops = {.get = rs_get, .exists = rs_exists, .list = rs_list,
						  .destroy = rs_destroy};
	struct racing_store rs = {.base = {.ops = &ops, .alloc = f->store->alloc},
				  .inner = f->store,
				  .key = "v4.metadata.json",
				  .f = f,
				  .other = t};
	snprintf(rs.base.uri, sizeof(rs.base.uri), "%s", f->store->uri);
	struct floe_table *ro = NULL;
	struct floe_err why;
	floe_err_clear(&why);
	int rc = floe_table_load(&f->alloc, &rs.base, "default/logs", &ro, &why);
	if (rc)
		fail_msg("%s", why.msg);
	assert_int_equal(rs.fired, 1);
	assert_int_equal(floe_table_version(ro), 5);
	floe_table_free(ro);
	floe_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_stray_past_a_gap, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_stray_after_current, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_current_deleted, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_seen_version_deleted, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_lagging_hint, setup, fixture_teardown),
		cmocka_unit_test_setup_teardown(test_commits_during_probe, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
