/* Tests for partition-spec evolution in the table commit: a table opened with another
 * partition_by gets the spec with its next commit; a commit whose spool holds entries of
 * the old spec (named by id) and of the new one writes one manifest per spec, the
 * configuration's first, and the manifest list names each manifest's spec; an entry whose
 * partition values do not fit the spec it is read under is refused, the table unchanged;
 * manifest merging never puts manifests of two specs together. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/config.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "formats/json/json.h"
#include "table_fixture.h"

#define INST_A "aaaaaaaa-0000-4000-8000-00000000000a"
#define DAY (86400LL * 1000000)

static int setup(void **state)
{
	*state = fixture_new("/tmp/floe-test-table-specs.XXXXXX", "day(ts)", 4, true);
	return *state ? 0 : -1;
}

/* n lines of seal seq at ts into b, apps app0..app2 in turn, then the seal. */
static void seal_into(struct floe_batch *b, uint64_t seq, int64_t ts, int n)
{
	for (int i = 0; i < n; i++) {
		char msg[64], app[8];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = ts + i;
		r.host = (struct floe_str){"h1", 2};
		r.source = (struct floe_str){"/var/log/x.log", 14};
		snprintf(app, sizeof(app), "app%d", i % 3);
		r.app = (struct floe_str){app, strlen(app)};
		snprintf(msg, sizeof(msg), "line %d of seal %llu", i, (unsigned long long)seq);
		r.message = (struct floe_str){msg, strlen(msg)};
		assert_int_equal(floe_batch_add(b, seq, &r), 0);
	}
	const uint8_t pos[] = {1, 2, 3, (uint8_t)seq};
	assert_int_equal(floe_batch_seal(b, 1, pos, sizeof(pos)), 0);
}

static struct floe_spool_entry *load(struct floe_spool *sp, uint64_t seq)
{
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(sp, seq, &e), 0);
	return e;
}

static struct floe_batch_options batch_options(void)
{
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.target_file_size = 1u << 20;
	return bo;
}

/* The restart with partition_by [day(ts), app]: the table opened again with o and that
 * spec (in *spec, which o points at afterwards). */
static struct floe_table *reopen_app_spec(struct fixture *f, struct floe_table_options *o,
					  struct floe_part_spec *spec)
{
	char *parts[] = {"day(ts)", "app"};
	struct floe_table *t = NULL;
	struct floe_err err = {0};
	assert_int_equal(floe_part_spec_from_config(spec, parts, 2, NULL), 0);
	o->spec = spec;
	assert_int_equal(floe_table_open(&f->alloc, o, &t, &err), 0);
	return t;
}

/* The current snapshot's manifest list of the table in f's warehouse. */
static struct floe_ice_manifest_list *current_list(struct fixture *f, const struct floe_ice_meta *m)
{
	int64_t id, parent, seq, ts;
	const char *uri = NULL;
	long i = floe_ice_meta_find_snapshot(m, floe_ice_meta_current_snapshot_id(m));
	assert_true(i >= 0);
	assert_int_equal(floe_ice_meta_snapshot_at(m, (size_t)i, &id, &parent, &seq, &ts, &uri), 0);
	assert_true(strncmp(uri, "file://", 7) == 0);
	FILE *fp = fopen(uri + 7, "rb");
	assert_non_null(fp);
	static uint8_t buf[1 << 16];
	size_t len = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	struct floe_ice_manifest_list *l = NULL;
	assert_int_equal(floe_ice_manifest_list_read(&f->alloc, buf, len, &l, NULL), 0);
	return l;
}

static void test_entries_of_two_specs(void **state)
{
	struct fixture *f = *state;
	struct floe_err err = {0};
	struct floe_table_options o = fixture_table(f, "agent-a", INST_A);
	struct floe_table *t = NULL;
	assert_int_equal(floe_table_open(&f->alloc, &o, &t, &err), 0);
	assert_int_equal(floe_table_spec(t)->spec_id, 0);

	/* Entry 1 was spooled under spec 0 (day(ts)) before a restart. */
	seal_into(f->batch, 1, 19000 * DAY, 30);
	struct floe_spool_entry *e1 = load(f->spool, 1);
	assert_int_equal(e1->spec_id, -1);
	e1->spec_id = 0;
	floe_table_free(t);

	/* The restart: partition_by [day(ts), app]. The table gets spec 1 with the next
	 * commit; until then the spool's entries name no spec. */
	struct floe_part_spec spec2;
	t = reopen_app_spec(f, &o, &spec2);
	assert_int_equal(floe_table_spec(t)->spec_id, -1);
	assert_int_equal(floe_table_spec(t)->n, 2);
	struct floe_spool *sp2 = NULL;
	struct floe_batch *b2 = NULL;
	struct floe_batch_options bo = batch_options();
	assert_int_equal(floe_spool_open(&f->alloc, f->spooldir, floe_table_spec(t), &sp2), 0);
	assert_int_equal(floe_batch_new(&f->alloc, floe_table_spec(t), &bo, sp2, &b2), 0);
	seal_into(b2, 2, 19001 * DAY, 30);
	struct floe_spool_entry *e2 = load(sp2, 2);
	assert_int_equal(e2->spec_id, -1);
	assert_int_equal(e2->files[0].nparts, 2);

	struct floe_spool_entry *es[] = {e1, e2};
	assert_int_equal(floe_table_commit(t, sp2, es, 2, &err), 0);
	const struct floe_ice_meta *m = floe_table_meta(t);
	assert_int_equal(floe_ice_meta_default_spec_id(m), 1);
	assert_int_equal(floe_json_len(floe_ice_meta_spec_fields(m, 1)), 2);
	assert_int_equal(floe_table_spec(t)->spec_id, 1);
	struct floe_ice_manifest_list *l = current_list(f, m);
	assert_int_equal(floe_ice_manifest_list_count(l), 2);
	const struct floe_ice_manifest_entry *m0 = floe_ice_manifest_list_at(l, 0);
	const struct floe_ice_manifest_entry *m1 = floe_ice_manifest_list_at(l, 1);
	/* The configuration's spec first: three files (one per app) of 30 rows. */
	assert_int_equal(m0->spec_id, 1);
	assert_int_equal(m0->added_files, 3);
	assert_int_equal(m0->added_rows, 30);
	assert_int_equal(m0->npartitions, 2);
	assert_int_equal(m1->spec_id, 0);
	assert_int_equal(m1->added_files, 1);
	assert_int_equal(m1->added_rows, 30);
	assert_int_equal(m1->npartitions, 1);
	floe_ice_manifest_list_free(l);
	assert_string_equal(floe_ice_meta_snapshot_summary(m, 0, "added-records"), "60");

	/* A later entry is written under spec 1 by id now that the table holds it. */
	struct floe_spool *sp3 = NULL;
	assert_int_equal(floe_spool_open(&f->alloc, f->spooldir, floe_table_spec(t), &sp3), 0);
	floe_batch_free(b2);
	assert_int_equal(floe_batch_new(&f->alloc, floe_table_spec(t), &bo, sp3, &b2), 0);
	seal_into(b2, 3, 19002 * DAY, 3);
	struct floe_spool_entry *e3 = load(sp3, 3);
	assert_int_equal(e3->spec_id, 1);

	/* An entry with one value a file, read under spec 1 (two fields), is refused. */
	seal_into(f->batch, 4, 19002 * DAY, 3);
	struct floe_spool_entry *e4 = load(f->spool, 4);
	assert_int_equal(floe_table_commit(t, sp3, &e4, 1, &err), FLOE_ESCHEMA);
	assert_non_null(strstr(err.msg, "partition values"));
	assert_int_equal(floe_table_refresh(t, &err), 0);
	assert_int_equal(floe_ice_meta_snapshot_count(floe_table_meta(t)), 1);

	floe_spool_entry_free(&f->alloc, e1);
	floe_spool_entry_free(&f->alloc, e2);
	floe_spool_entry_free(&f->alloc, e3);
	floe_spool_entry_free(&f->alloc, e4);
	floe_batch_free(b2);
	floe_spool_free(sp2);
	floe_spool_free(sp3);
	floe_table_free(t);
}

/* Manifest merging on a table of two specs (min-count-to-merge 2): the spec 1 manifests
 * of the agent's commits are merged, the spec 0 manifest never goes into them. */
static void test_merge_keeps_specs_apart(void **state)
{
	struct fixture *f = *state;
	struct floe_err err = {0};
	struct floe_table_props props = {
	    .merge_enabled = true,
	    .merge_min_count = 2,
	    .merge_target_bytes = 8u << 20,
	    .max_snapshot_age_ms = 1000000000,
	    .min_snapshots = 100,
	    .previous_versions_max = 100,
	};
	struct floe_table_options o = fixture_table(f, "agent-a", INST_A);
	o.props = &props;
	struct floe_table *t = NULL;
	assert_int_equal(floe_table_open(&f->alloc, &o, &t, &err), 0);
	seal_into(f->batch, 1, 19000 * DAY, 6);
	struct floe_spool_entry *e = load(f->spool, 1);
	assert_int_equal(floe_table_commit(t, f->spool, &e, 1, &err), 0);
	floe_spool_entry_free(&f->alloc, e);
	floe_table_free(t);

	struct floe_part_spec spec2;
	t = reopen_app_spec(f, &o, &spec2);
	struct floe_spool *sp = NULL;
	struct floe_batch *b = NULL;
	struct floe_batch_options bo = batch_options();
	for (uint64_t seq = 2; seq <= 5; seq++) {
		assert_int_equal(floe_spool_open(&f->alloc, f->spooldir, floe_table_spec(t), &sp), 0);
		assert_int_equal(floe_batch_new(&f->alloc, floe_table_spec(t), &bo, sp, &b), 0);
		seal_into(b, seq, 19001 * DAY, 6);
		e = load(sp, seq);
		assert_int_equal(floe_table_commit(t, sp, &e, 1, &err), 0);
		floe_spool_entry_free(&f->alloc, e);
		floe_batch_free(b);
		floe_spool_free(sp);
	}
	struct floe_ice_manifest_list *l = current_list(f, floe_table_meta(t));
	size_t n = floe_ice_manifest_list_count(l), of0 = 0;
	int64_t rows[2] = {0, 0};
	assert_true(n < 5); /* four spec-1 manifests and one spec-0 one, some merged */
	for (size_t i = 0; i < n; i++) {
		const struct floe_ice_manifest_entry *m = floe_ice_manifest_list_at(l, i);
		assert_true(m->spec_id == 0 || m->spec_id == 1);
		assert_int_equal(m->npartitions, m->spec_id == 0 ? 1 : 2);
		of0 += m->spec_id == 0;
		rows[m->spec_id] += m->added_rows + m->existing_rows;
	}
	assert_int_equal(of0, 1);
	assert_int_equal(rows[0], 6);
	assert_int_equal(rows[1], 24);
	floe_ice_manifest_list_free(l);
	floe_table_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_entries_of_two_specs, setup, fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_merge_keeps_specs_apart, setup, fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
