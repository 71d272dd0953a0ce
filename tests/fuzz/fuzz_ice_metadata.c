/* Fuzz target for Iceberg metadata parsing: whatever parses must answer every accessor,
 * write, parse again to the same bytes, and take (or cleanly refuse) a new snapshot. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/schema.h"
#include "formats/json/json.h"

static void touch(const char *s)
{
	/* Reads the whole string, so ASan sees a dangling or unterminated one. */
	if (s && strlen(s) == SIZE_MAX)
		abort();
}

static void read_all(const struct floe_ice_meta *m)
{
	touch(floe_ice_meta_uuid(m));
	if (!floe_ice_meta_location(m))
		abort();
	touch(floe_ice_meta_location(m));
	int v = floe_ice_meta_format_version(m);
	if (v < 1 || v > 2)
		abort();
	(void)floe_ice_meta_last_sequence(m);
	(void)floe_ice_meta_last_updated_ms(m);
	(void)floe_ice_meta_current_schema_id(m);
	(void)floe_ice_meta_default_spec_id(m);
	int64_t cur = floe_ice_meta_current_snapshot_id(m);
	if (cur != -1 && floe_ice_meta_find_snapshot(m, cur) < 0)
		abort();
	if (!floe_ice_meta_current_schema(m) || !floe_ice_meta_default_spec_fields(m))
		abort();
	for (int32_t id = -1; id < 8; id++) {
		const char *type = NULL, *name = NULL;
		bool req;
		if (floe_ice_meta_schema_field(m, id, &type, &req, &name)) {
			touch(type);
			touch(name);
		}
	}
	size_t n = floe_ice_meta_snapshot_count(m);
	for (size_t i = 0; i <= n; i++) {
		int64_t id, parent, seq, ts;
		const char *ml;
		int rc = floe_ice_meta_snapshot_at(m, i, &id, &parent, &seq, &ts, &ml);
		if ((rc == 0) != (i < n))
			abort();
		if (rc == 0) {
			touch(ml);
			if (floe_ice_meta_find_snapshot(m, id) < 0)
				abort();
		}
		touch(floe_ice_meta_snapshot_summary(m, i, "operation"));
		size_t c = floe_ice_meta_snapshot_summary_count(m, i);
		for (size_t k = 0; k <= c; k++) {
			const char *key, *val;
			if ((floe_ice_meta_snapshot_summary_at(m, i, k, &key, &val) == 0) !=
			    (k < c))
				abort();
			if (k < c) {
				touch(key);
				touch(val);
			}
		}
	}
}

/* A writer's columns on whatever schema parsed: evolved or refused cleanly, and once
 * evolved, the same columns plan to no change (the next commit writes no new schema). */
static void evolve(struct floe_ice_meta *m)
{
	static const struct floe_ice_column cols[] = {
	    {"ts", "timestamptz", NULL, 0}, {"status", "int", NULL, 0}, {"msg", "string", "message", 0}};
	struct floe_ice_col_plan plan[3];
	bool changed = false;
	int rc = floe_ice_meta_evolve_schema(m, cols, 3, plan, &changed, "prev.json", 1, 3, NULL);
	if (rc != 0) {
		if (rc != FLOE_ESCHEMA && rc != FLOE_EFORMAT && rc != FLOE_ENOMEM && rc != FLOE_ELIMIT &&
		    rc != FLOE_EINVAL)
			abort();
		return;
	}
	read_all(m);
	if (floe_ice_schema_plan(m, cols, 3, plan, &changed, NULL) != 0 || changed)
		abort();
	for (size_t i = 0; i < 3; i++) {
		const char *type = NULL, *name = NULL;
		bool req;
		if (!floe_ice_meta_schema_field(m, plan[i].id, &type, &req, &name) ||
		    strcmp(name, cols[i].name) != 0 || strcmp(type, plan[i].type) != 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)64 << 20);
	struct floe_ice_meta *m = NULL, *m2 = NULL;
	struct floe_buf w1, w2;
	floe_buf_init(&w1, &a, (size_t)32 << 20);
	floe_buf_init(&w2, &a, (size_t)32 << 20);
	if (floe_ice_meta_parse(&a, (const char *)data, size, &m, NULL) != 0)
		goto out;
	read_all(m);
	if (floe_ice_meta_write(m, &w1) != 0 ||
	    floe_ice_meta_parse(&a, (const char *)w1.data, w1.len, &m2, NULL) != 0)
		abort();
	if (floe_ice_meta_write(m2, &w2) != 0 || w1.len != w2.len ||
	    memcmp(w1.data, w2.data, w1.len) != 0)
		abort();

	/* The next commit on top of whatever is current. */
	int64_t parent = floe_ice_meta_current_snapshot_id(m), pts = 0;
	if (parent >= 0)
		floe_ice_meta_snapshot_at(m, (size_t)floe_ice_meta_find_snapshot(m, parent), NULL,
					  NULL, NULL, &pts, NULL);
	static const struct floe_ice_kv sum[] = {{"floe.commit-seq", "1"}};
	struct floe_ice_snapshot s = {.snapshot_id = INT64_MAX - 1,
				      .parent_id = parent,
				      .sequence_number = floe_ice_meta_last_sequence(m) + 1,
				      .timestamp_ms = pts < INT64_MAX ? pts + 1 : pts,
				      .manifest_list = "m.avro",
				      .operation = "append",
				      .summary = sum,
				      .summary_count = 1};
	if (floe_ice_meta_last_sequence(m) == INT64_MAX)
		s.sequence_number = 0;
	int rc = floe_ice_meta_add_snapshot(m, &s, "prev.json", 1, 3);
	if (rc == 0) {
		if (floe_ice_meta_current_snapshot_id(m) != s.snapshot_id)
			abort();
		read_all(m);
		floe_buf_reset(&w1);
		if (floe_ice_meta_write(m, &w1) != 0)
			abort();
	} else if (rc != FLOE_EINVAL && rc != FLOE_EUNSUPPORTED && rc != FLOE_ENOMEM) {
		abort();
	}
	evolve(m2);
out:
	floe_ice_meta_free(m);
	floe_ice_meta_free(m2);
	floe_buf_fini(&w1);
	floe_buf_fini(&w2);
	if (a.used != 0)
		abort();
	return 0;
}
