/* Unit tests for the typed columns: the column plan (agent/schema/columns.c: ids learnt
 * from a table's schema, conflicts, the state file's encoding, the commit's check), the
 * record's typed values in a row, the decoder's conversion (values out of attrs, a bad
 * one counted and kept there), and the batch writing them, through the sort buffer, under
 * their field ids. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/config/config.h"
#include "agent/lake/spool.h"
#include "agent/parse/fields.h"
#include "agent/pipeline/batch.h"
#include "agent/pipeline/decode.h"
#include "agent/schema/columns.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"

#include "logs_meta.h"
#include "formats/iceberg/schema.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"

#include "build_skip.h"

/* The logs table as floe creates it, plus extra fields (NULL: none). */
static void plan_two(struct floe_colplan *p)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(floe_colplan_add(p, "status", FLOE_COL_INT, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(p, "bytes", FLOE_COL_LONG, "size", NULL), 0);
}

static void test_plan_learns_the_table_ids(void **state)
{
	(void)state;
	struct floe_colplan p;
	plan_two(&p);
	assert_false(p.planned);
	assert_string_equal(p.col[0].from, "status");
	assert_string_equal(p.col[1].from, "size");
	/* A name declared twice keeps its first declaration. */
	assert_int_equal(floe_colplan_add(&p, "status", FLOE_COL_STRING, NULL, NULL), 0);
	assert_int_equal(p.n, 2);
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
	assert_true(p.planned);
	assert_int_equal(p.col[0].id, FLOE_LOG_LAST_COLUMN_ID + 1);
	assert_int_equal(p.col[1].id, FLOE_LOG_LAST_COLUMN_ID + 2);
	/* The commit evolves the schema to exactly those ids, which the check accepts. */
	struct floe_ice_column cols[FLOE_COLS_MAX];
	floe_colplan_ice_columns(&p, cols);
	bool changed = false;
	assert_int_equal(floe_ice_meta_evolve_schema(m, cols, p.n, NULL, &changed, NULL, 2, 10, NULL), 0);
	assert_true(changed);
	assert_int_equal(floe_colplan_check(&p, m, NULL), 0);
	/* The writer's columns: the built-in ones, then these under their ids. */
	struct floe_pq_column pc[FLOE_LOG_MAX_COLS];
	size_t npc = 0;
	floe_colplan_pq_columns(&p, pc, &npc);
	assert_int_equal(npc, FLOE_LOG_NCOLS + 2);
	assert_string_equal(pc[FLOE_LOG_NCOLS].name, "status");
	assert_int_equal(pc[FLOE_LOG_NCOLS].kind, FLOE_PQ_INT32);
	assert_int_equal(pc[FLOE_LOG_NCOLS + 1].field_id, FLOE_LOG_LAST_COLUMN_ID + 2);
	assert_int_equal(pc[FLOE_LOG_NCOLS + 1].kind, FLOE_PQ_INT64);
	floe_ice_meta_free(m);
}

static void test_plan_conflicts(void **state)
{
	(void)state;
	/* status is a string in the table: no promotion makes an int of it. */
	struct floe_ice_field status = {15, "status", "string", false, 0, 0, NULL, NULL, false};
	struct floe_ice_meta *m = logs_meta(&status, 1);
	struct floe_colplan p;
	plan_two(&p);
	struct floe_err e = {0};
	assert_int_equal(floe_colplan_learn(&p, m, &e), FLOE_ESCHEMA);
	assert_non_null(strstr(e.msg, "status"));
	assert_non_null(strstr(e.msg, "string"));
	assert_non_null(strstr(e.msg, "int"));
	assert_false(p.planned);
	floe_ice_meta_free(m);
	/* The table's long is wider than the config's int: written as long. */
	struct floe_ice_field wide = {15, "status", "long", false, 0, 0, NULL, NULL, false};
	m = logs_meta(&wide, 1);
	plan_two(&p);
	assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
	assert_int_equal(p.col[0].type, FLOE_COL_LONG);
	assert_int_equal(p.col[0].id, 15);
	assert_int_equal(p.col[1].id, 16);
	floe_ice_meta_free(m);
	/* Planned on a table whose id 15 another writer then gave another column. */
	m = logs_meta(NULL, 0);
	plan_two(&p);
	assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
	floe_ice_meta_free(m);
	struct floe_ice_field other = {15, "other", "int", false, 0, 0, NULL, NULL, false};
	m = logs_meta(&other, 1);
	memset(&e, 0, sizeof(e));
	assert_int_equal(floe_colplan_check(&p, m, &e), FLOE_ESCHEMA);
	assert_non_null(strstr(e.msg, "'other'"));
	floe_ice_meta_free(m);
}

/* Planned (ids 15 and 16) and written, then another writer adds a column of its own
 * (id 40) before the commit: the commit's evolution keeps the ids the files carry, and
 * the other writer's column; where the other writer took one of those ids, it cannot. */
static void test_evolve_keeps_the_written_ids(void **state)
{
	(void)state;
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	struct floe_colplan p;
	plan_two(&p);
	assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
	floe_ice_meta_free(m);
	struct floe_ice_field zone = {40, "zone", "string", false, 0, 0, NULL, NULL, false};
	m = logs_meta(&zone, 1);
	struct floe_ice_column cols[FLOE_COLS_MAX];
	floe_colplan_ice_columns(&p, cols);
	struct floe_ice_col_plan plan[2];
	bool changed = false;
	assert_int_equal(floe_ice_meta_evolve_schema(m, cols, p.n, plan, &changed, NULL, 2, 10, NULL), 0);
	assert_true(changed);
	assert_int_equal(plan[0].id, 15);
	assert_int_equal(plan[1].id, 16);
	assert_int_equal(floe_colplan_check(&p, m, NULL), 0);
	/* A column added after those is given an id past every one the table used. */
	assert_int_equal(floe_colplan_add(&p, "level", FLOE_COL_STRING, NULL, NULL), 0);
	floe_colplan_ice_columns(&p, cols);
	struct floe_ice_col_plan plan3[3];
	assert_int_equal(floe_ice_schema_plan(m, cols, 3, plan3, &changed, NULL), 0);
	assert_int_equal(plan3[2].id, 41);
	floe_ice_meta_free(m);
	/* The other writer took id 15: status gets a fresh id, which the check refuses. */
	plan_two(&p);
	m = logs_meta(NULL, 0);
	assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
	floe_ice_meta_free(m);
	struct floe_ice_field taken = {15, "zone", "string", false, 0, 0, NULL, NULL, false};
	m = logs_meta(&taken, 1);
	floe_colplan_ice_columns(&p, cols);
	assert_int_equal(floe_ice_meta_evolve_schema(m, cols, p.n, plan, &changed, NULL, 2, 10, NULL), 0);
	assert_int_equal(plan[0].id, 16);
	assert_int_equal(plan[1].id, 17);
	assert_int_equal(floe_colplan_check(&p, m, NULL), FLOE_ESCHEMA);
	floe_ice_meta_free(m);
}

static void test_plan_file_round_trip(void **state)
{
	(void)state;
	struct floe_colplan p, q;
	plan_two(&p);
	assert_int_equal(floe_colplan_add(&p, "http_status", FLOE_COL_INT, "st", "code"), 0);
	struct floe_ice_field code = {15, "code", "int", false, 0, 0, NULL, NULL, false};
	struct floe_ice_meta *m = logs_meta(&code, 1);
	assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
	floe_ice_meta_free(m);
	assert_int_equal(p.col[2].id, 15); /* the rename keeps the id */
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 16);
	assert_int_equal(floe_colplan_encode(&p, &b), 0);
	memset(&q, 0, sizeof(q));
	assert_int_equal(floe_colplan_decode(b.data, b.len, &q), 0);
	assert_true(q.planned);
	assert_int_equal(q.n, 3);
	for (size_t i = 0; i < 3; i++) {
		assert_string_equal(q.col[i].name, p.col[i].name);
		assert_string_equal(q.col[i].from, p.col[i].from);
		assert_string_equal(q.col[i].renamed_from, p.col[i].renamed_from);
		assert_int_equal(q.col[i].type, p.col[i].type);
		assert_int_equal(q.col[i].id, p.col[i].id);
	}
	assert_true(floe_colplan_same_columns(&q, &p));
	/* Every cut of the encoding is refused, not half taken. */
	for (size_t cut = 0; cut < b.len - 1; cut++) {
		struct floe_colplan r = {0};
		int rc = floe_colplan_decode(b.data, cut, &r);
		if (rc == 0) /* a cut at a line's end is a shorter plan */
			assert_true(r.n < 3);
		else
			assert_int_equal(rc, FLOE_ECORRUPT);
	}
	b.data[b.len - 3] = '\t';
	assert_int_equal(floe_colplan_decode(b.data, b.len, &q), FLOE_ECORRUPT);
	floe_buf_fini(&b);
	/* Another column list is not the same plan. */
	plan_two(&q);
	assert_false(floe_colplan_same_columns(&q, &p));
}

static void test_row_takes_the_typed_values(void **state)
{
	(void)state;
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.message = (struct floe_str){"m", 1};
	struct floe_pq_value tv[2] = {{.i = 404}, {.is_null = true}};
	rec.typed = tv;
	rec.ntyped = 2;
	struct floe_pq_value row[FLOE_LOG_NCOLS + 3];
	memset(row, 0xff, sizeof(row));
	floe_record_to_row(&rec, row, FLOE_LOG_NCOLS + 3);
	assert_false(row[FLOE_LOG_NCOLS].is_null);
	assert_int_equal(row[FLOE_LOG_NCOLS].i, 404);
	assert_true(row[FLOE_LOG_NCOLS + 1].is_null);
	assert_true(row[FLOE_LOG_NCOLS + 2].is_null); /* beyond what the record has */
	assert_int_equal(row[10].len, 1);
}

/* A planned plan of status int, latency double (from lat), user string. */
static void plan_three(struct floe_colplan *p)
{
	memset(p, 0, sizeof(*p));
	assert_int_equal(floe_colplan_add(p, "status", FLOE_COL_INT, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(p, "latency", FLOE_COL_DOUBLE, "lat", NULL), 0);
	assert_int_equal(floe_colplan_add(p, "user", FLOE_COL_STRING, NULL, NULL), 0);
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	assert_int_equal(floe_colplan_learn(p, m, NULL), 0);
	floe_ice_meta_free(m);
}

static void test_decoder_converts_and_keeps_failures(void **state)
{
	(void)state;
	struct floe_config_input in;
	memset(&in, 0, sizeof(in));
	in.parser = FLOE_PARSER_JSON;
	in.max_line_bytes = 1 << 20;
	in.timestamp.field = "message";
	struct floe_decoder *d = NULL;
	assert_int_equal(floe_decoder_new(NULL, &in, &d, NULL), 0);
	struct floe_colplan p;
	plan_three(&p);
	floe_decoder_set_columns(d, &p);
	const char *l1 = "{\"msg\":\"a\",\"status\":200,\"lat\":1.5,\"user\":\"ann\",\"k\":\"v\"}";
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.message = (struct floe_str){l1, strlen(l1)};
	floe_decoder_apply(d, &rec);
	assert_int_equal(rec.ntyped, 3);
	assert_int_equal(rec.typed[0].i, 200);
	assert_true(rec.typed[1].d == 1.5);
	assert_false(rec.typed[2].is_null);
	assert_int_equal(rec.typed[2].len, 3);
	assert_memory_equal(rec.typed[2].s, "ann", 3);
	/* Only msg and k are left in attrs. */
	assert_int_equal(rec.nattrs, 2);
	const char *l2 = "{\"msg\":\"b\",\"status\":\"oops\",\"lat\":null}";
	memset(&rec, 0, sizeof(rec));
	rec.message = (struct floe_str){l2, strlen(l2)};
	floe_decoder_apply(d, &rec);
	assert_true(rec.typed[0].is_null);
	assert_true(rec.typed[1].is_null);
	assert_true(rec.typed[2].is_null);
	/* status stays in attrs as text; lat (a null) is taken, as null. */
	assert_int_equal(rec.nattrs, 2);
	bool kept = false;
	for (size_t i = 0; i < rec.nattrs; i++)
		kept |= rec.attr_key_lens[i] == 6 && memcmp(rec.attr_keys[i], "status", 6) == 0 &&
			rec.attr_val_lens[i] == 4 && memcmp(rec.attr_vals[i], "oops", 4) == 0;
	assert_true(kept);
	size_t n = 0;
	const uint64_t *cf = floe_decoder_conv_failures(d, &n);
	assert_int_equal(n, 3);
	assert_int_equal(cf[0], 1);
	assert_int_equal(cf[1], 0);
	/* Without a planned plan nothing is taken. */
	struct floe_colplan none = {0};
	floe_decoder_set_columns(d, &none);
	memset(&rec, 0, sizeof(rec));
	rec.message = (struct floe_str){l1, strlen(l1)};
	floe_decoder_apply(d, &rec);
	assert_int_equal(rec.ntyped, 0);
	assert_int_equal(rec.nattrs, 5);
	floe_decoder_free(d);
}

/* The plan takes its fields wherever they are among the attributes: in another order
 * than the plan's, changing from record to record, past the 64th, beside keys that are a
 * prefix or an extension of a field's name; and what no column took stays, in order. */
static void test_take_finds_fields_in_any_order(void **state)
{
	(void)state;
	struct floe_colplan p;
	plan_three(&p); /* status, latency from lat, user */
	enum { N = 70 };
	const char *keys[N], *vals[N];
	size_t klens[N], vlens[N];
	char names[N][24]; /* room for any size_t: gcc -O with sanitizers checks the bound */
	struct floe_pq_value typed[FLOE_COLS_MAX];
	const char *tk[N], *tv[N];
	size_t tkl[N], tvl[N];
	uint64_t failures[FLOE_COLS_MAX] = {0};
	static const size_t counts[] = {6, 6, N};
	for (int round = 0; round < 3; round++) {
		size_t n = counts[round];
		for (size_t i = 0; i < n; i++) {
			snprintf(names[i], sizeof(names[i]), "k%zu", i);
			keys[i] = names[i];
			klens[i] = strlen(names[i]);
			vals[i] = "v";
			vlens[i] = 1;
		}
		/* Round 0: user, stat, lat, statusx, status, ""; round 1: "", status, lat,
		 * statusx, stat, user; round 2: user at 2, lat at 40 and status at 66 among
		 * 70, stat at 1 and statusx at 3. */
		size_t at_user = round == 0 ? 0 : round == 1 ? 5 : 2;
		size_t at_lat = round == 2 ? 40 : 2;
		size_t at_status = round == 0 ? 4 : round == 1 ? 1 : 66;
		size_t at_stat = round == 1 ? 4 : 1, at_statusx = 3;
		keys[at_user] = "user", klens[at_user] = 4, vals[at_user] = "ann", vlens[at_user] = 3;
		keys[at_lat] = "lat", klens[at_lat] = 3, vals[at_lat] = "2.5", vlens[at_lat] = 3;
		keys[at_status] = "status", klens[at_status] = 6, vals[at_status] = "503";
		vlens[at_status] = 3;
		keys[at_stat] = "stat", klens[at_stat] = 4;
		keys[at_statusx] = "statusx", klens[at_statusx] = 7;
		if (round < 2)
			keys[round == 0 ? 5 : 0] = "", klens[round == 0 ? 5 : 0] = 0;
		struct floe_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.nattrs = n;
		rec.attr_keys = keys;
		rec.attr_key_lens = klens;
		rec.attr_vals = vals;
		rec.attr_val_lens = vlens;
		floe_colplan_take(&p, &rec, typed, tk, tkl, tv, tvl, failures);
		assert_int_equal(rec.ntyped, 3);
		assert_int_equal(rec.typed[0].i, 503);
		assert_true(rec.typed[1].d == 2.5);
		assert_int_equal(rec.typed[2].len, 3);
		assert_memory_equal(rec.typed[2].s, "ann", 3);
		assert_int_equal(rec.nattrs, n - 3);
		size_t j = 0;
		for (size_t i = 0; i < n; i++) {
			if (i == at_user || i == at_lat || i == at_status)
				continue;
			assert_ptr_equal(rec.attr_keys[j], keys[i]);
			assert_int_equal(rec.attr_key_lens[j], klens[i]);
			j++;
		}
	}
	assert_int_equal(failures[0] + failures[1] + failures[2], 0);
}

/* What no column took stays, in order, with the taken ones on either side of the 64th
 * attribute (the kept ones below it are visited by their bits, those past it one by
 * one): 62 to 66 attributes, user taken at 0, 63 or 64 and status at the last. */
static void test_take_keeps_the_rest_around_64(void **state)
{
	(void)state;
	struct floe_colplan p;
	plan_three(&p); /* status, latency from lat, user */
	enum { N = 66 };
	const char *keys[N], *vals[N], *tk[N], *tv[N];
	size_t klens[N], vlens[N], tkl[N], tvl[N];
	char names[N][24];
	struct floe_pq_value typed[FLOE_COLS_MAX];
	uint64_t failures[FLOE_COLS_MAX] = {0};
	for (size_t n = 62; n <= N; n++) {
		for (size_t at_user = 0; at_user <= 64; at_user += at_user ? 1 : 63) {
			if (at_user >= n - 1)
				continue;
			for (size_t i = 0; i < n; i++) {
				snprintf(names[i], sizeof(names[i]), "k%zu", i);
				keys[i] = names[i];
				klens[i] = strlen(names[i]);
				vals[i] = "v";
				vlens[i] = 1;
			}
			keys[at_user] = "user", klens[at_user] = 4;
			keys[n - 1] = "status", klens[n - 1] = 6, vals[n - 1] = "200", vlens[n - 1] = 3;
			struct floe_record rec;
			memset(&rec, 0, sizeof(rec));
			rec.nattrs = n;
			rec.attr_keys = keys;
			rec.attr_key_lens = klens;
			rec.attr_vals = vals;
			rec.attr_val_lens = vlens;
			floe_colplan_take(&p, &rec, typed, tk, tkl, tv, tvl, failures);
			assert_int_equal(rec.typed[0].i, 200);
			assert_int_equal(rec.nattrs, n - 2);
			for (size_t i = 0, j = 0; i < n; i++) {
				if (i == at_user || i == n - 1)
					continue;
				assert_ptr_equal(rec.attr_keys[j], keys[i]);
				assert_ptr_equal(rec.attr_vals[j], vals[i]);
				j++;
			}
		}
	}
}

struct memsrc {
	const uint8_t *p;
	size_t n;
};
static int mem_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct memsrc *m = ctx;
	memcpy(buf, m->p + off, len);
	return 0;
}

/* The batch writes the typed columns under their ids, through the sort buffer (which
 * copies the values and their strings: the caller's bytes are gone by the seal). */
static void test_batch_writes_typed_columns(void **state)
{
	(void)state;
	char dir[] = "/tmp/floe-test-columns.XXXXXX", spooldir[64];
	assert_non_null(mkdtemp(dir));
	snprintf(spooldir, sizeof(spooldir), "%s/spool", dir);
	struct floe_alloc a;
	floe_alloc_init(&a, 64u << 20);
	struct floe_part_spec spec;
	assert_int_equal(floe_part_spec_from_config(&spec, NULL, 0, NULL), 0);
	struct floe_spool *sp = NULL;
	assert_int_equal(floe_spool_open(&a, spooldir, &spec, &sp), 0);
	struct floe_colplan p;
	plan_three(&p);
	struct floe_pq_column cols[FLOE_LOG_MAX_COLS];
	size_t ncols = 0;
	floe_colplan_pq_columns(&p, cols, &ncols);
	enum floe_sort_key keys[] = {FLOE_SORT_OFFSET};
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.pq.dictionary_cap = 256u << 10;
	bo.pq.memory_budget = 1u << 20;
	bo.target_file_size = 64u << 20;
	bo.sort_by = keys;
	bo.nsort_by = 1;
	bo.cols = cols;
	bo.ncols = ncols;
	struct floe_batch *b = NULL;
	assert_int_equal(floe_batch_new(&a, &spec, &bo, sp, &b), 0);
	for (int i = 2; i >= 0; i--) { /* sorted back by offset */
		char user[16];
		snprintf(user, sizeof(user), "user%d", i);
		struct floe_pq_value tv[3] = {{.i = 200 + i}, {.d = i / 2.0}, {.s = user, .len = 5}};
		if (i == 1)
			tv[0] = (struct floe_pq_value){.is_null = true};
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.host = r.source = (struct floe_str){"h", 1};
		r.message = (struct floe_str){"m", 1};
		r.has_offset = true;
		r.offset = i;
		r.typed = tv;
		r.ntyped = 3;
		assert_int_equal(floe_batch_add(b, 1, &r), 0);
		memset(user, 'X', sizeof(user)); /* the batch has its own copy */
	}
	assert_int_equal(floe_batch_seal(b, 1, NULL, 0), 0);
	struct floe_spool_entry *e = NULL;
	assert_int_equal(floe_spool_load(sp, 1, &e), 0);
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", spooldir, e->files[0].name);
	FILE *fp = fopen(path, "rb");
	assert_non_null(fp);
	static uint8_t data[1 << 20];
	size_t n = fread(data, 1, sizeof(data), fp);
	fclose(fp);
	struct memsrc ms = {data, n};
	struct floe_pq_source src = {&ms, n, mem_read};
	struct floe_pq_reader *rd = NULL;
	assert_int_equal(floe_pq_reader_open(&a, &src, NULL, &rd, NULL), 0);
	size_t nc = 0;
	const struct floe_pq_column *fc = floe_pq_reader_columns(rd, &nc);
	assert_int_equal(nc, FLOE_LOG_NCOLS + 3);
	assert_string_equal(fc[FLOE_LOG_NCOLS].name, "status");
	assert_int_equal(fc[FLOE_LOG_NCOLS].field_id, FLOE_LOG_LAST_COLUMN_ID + 1);
	assert_int_equal(fc[FLOE_LOG_NCOLS + 2].field_id, FLOE_LOG_LAST_COLUMN_ID + 3);
	const struct floe_pq_value *row;
	for (int i = 0; i < 3; i++) {
		assert_int_equal(floe_pq_reader_next(rd, &row), 1);
		assert_int_equal(row[4].i, i);
		assert_int_equal(row[FLOE_LOG_NCOLS].is_null, i == 1);
		if (i != 1)
			assert_int_equal(row[FLOE_LOG_NCOLS].i, 200 + i);
		assert_true(row[FLOE_LOG_NCOLS + 1].d == i / 2.0);
		char want[8];
		snprintf(want, sizeof(want), "user%d", i);
		assert_int_equal(row[FLOE_LOG_NCOLS + 2].len, 5);
		assert_memory_equal(row[FLOE_LOG_NCOLS + 2].s, want, 5);
	}
	assert_int_equal(floe_pq_reader_next(rd, &row), 0);
	/* The file's metrics carry the typed columns' ids too. */
	bool seen = false;
	for (size_t i = 0; i < e->files[0].nmetrics; i++)
		seen |= e->files[0].metrics[i].field_id == FLOE_LOG_LAST_COLUMN_ID + 1;
	assert_true(seen);
	floe_pq_reader_free(rd);
	floe_spool_entry_free(&a, e);
	floe_batch_free(b);
	floe_spool_free(sp);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

/* Two decoders of the same input: one with the plan (its parser's fields go to their
 * columns by the map built when the plan is set) and one without, whose records the
 * general floe_colplan_take takes from by name. Every line must give the same row. */
struct both {
	struct floe_decoder *mapped, *plain;
	struct floe_colplan plan;
	uint64_t failures[FLOE_COLS_MAX];
	struct floe_pq_value typed[FLOE_COLS_MAX];
	const char *tk[64], *tv[64];
	size_t tkl[64], tvl[64];
	size_t lines, taken, kept;
};

static void both_open(struct both *b, const struct floe_config_input *in)
{
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	assert_int_equal(floe_colplan_learn(&b->plan, m, NULL), 0);
	floe_ice_meta_free(m);
	assert_int_equal(floe_decoder_new(NULL, in, &b->mapped, NULL), 0);
	assert_int_equal(floe_decoder_new(NULL, in, &b->plain, NULL), 0);
	floe_decoder_set_columns(b->mapped, &b->plan);
}

static void same_value(const struct floe_pq_value *a, const struct floe_pq_value *b)
{
	assert_int_equal(a->is_null, b->is_null);
	assert_int_equal(a->i, b->i);
	assert_true(a->d == b->d || (a->d != a->d && b->d != b->d));
	assert_int_equal(a->len, b->len);
	if (a->len)
		assert_memory_equal(a->s, b->s, a->len);
}

static void both_line(struct both *b, const char *line, size_t len)
{
	struct floe_record x, y;
	memset(&x, 0, sizeof(x));
	x.message = (struct floe_str){line, len};
	x.received_at = x.ts = 1700000000000000LL;
	y = x;
	floe_decoder_apply(b->mapped, &x);
	floe_decoder_apply(b->plain, &y);
	assert_int_equal(y.ntyped, 0);
	floe_colplan_take(&b->plan, &y, b->typed, b->tk, b->tkl, b->tv, b->tvl, b->failures);
	assert_int_equal(x.ntyped, b->plan.n);
	assert_int_equal(y.ntyped, b->plan.n);
	for (size_t i = 0; i < b->plan.n; i++) {
		same_value(&x.typed[i], &y.typed[i]);
		b->taken += !x.typed[i].is_null;
	}
	assert_int_equal(x.nattrs, y.nattrs);
	for (size_t k = 0; k < x.nattrs; k++) {
		assert_int_equal(x.attr_key_lens[k], y.attr_key_lens[k]);
		assert_memory_equal(x.attr_keys[k], y.attr_keys[k], x.attr_key_lens[k]);
		assert_int_equal(x.attr_val_lens[k], y.attr_val_lens[k]);
		assert_memory_equal(x.attr_vals[k], y.attr_vals[k], x.attr_val_lens[k]);
	}
	b->kept += x.nattrs;
	assert_int_equal(x.ts, y.ts);
	assert_int_equal(x.has_severity, y.has_severity);
	assert_int_equal(x.severity, y.severity);
	assert_int_equal(x.message.len, y.message.len);
	b->lines++;
}

/* The failures the mapped decoder counted, column by column, are the general way's. */
static void both_close(struct both *b)
{
	size_t n = 0;
	const uint64_t *cf = floe_decoder_conv_failures(b->mapped, &n);
	assert_int_equal(n, b->plan.n);
	assert_memory_equal(cf, b->failures, n * sizeof(*cf));
	floe_decoder_free(b->mapped);
	floe_decoder_free(b->plain);
}

/* The loghub Apache sample (an error log) through a regex whose groups feed columns: one
 * that every line has and a level list also reads (level), one only some lines have
 * (client), two columns of one field, two that never convert (a date that is no RFC
 * 3339 time, the text as a number: their text stays in attrs), a column from no group. */
static void test_mapped_take_is_the_general_take_regex(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* parser: regex */
	struct both b;
	memset(&b, 0, sizeof(b));
	struct floe_config_input in;
	memset(&in, 0, sizeof(in));
	in.parser = FLOE_PARSER_REGEX;
	in.max_line_bytes = 1 << 20;
	in.pattern = "^\\[(?<time>[^]]+)\\] \\[(?<level>[a-z]+)\\]"
		     "(?: \\[client (?<client>[^]]+)\\])? (?<text>.*)$";
	assert_int_equal(floe_colplan_add(&b.plan, "level", FLOE_COL_STRING, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "when", FLOE_COL_TIMESTAMPTZ, "time", NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "client", FLOE_COL_STRING, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "client_n", FLOE_COL_INT, "client", NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "pid", FLOE_COL_INT, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "text_n", FLOE_COL_INT, "text", NULL), 0);
	both_open(&b, &in);
	FILE *f = fopen(FLOE_TEST_DATA "/loghub/Apache_2k.log", "r");
	assert_non_null(f);
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		size_t len = strcspn(line, "\r\n");
		both_line(&b, line, len);
	}
	fclose(f);
	assert_int_equal(b.lines, 2000);
	/* Every line's time failed, the client column's int twin on each client, the text
	 * as a number on each line but the empty ones (its text kept last). */
	assert_int_equal(b.failures[1], 2000);
	assert_true(b.failures[3] > 0 && b.failures[3] < 2000);
	assert_true(b.failures[5] > 1000);
	assert_int_equal(b.failures[0] + b.failures[2] + b.failures[4], 0);
	assert_true(b.taken > 2000 && b.kept > 2000);
	both_close(&b);
}

/* Access-log lines with fields left out ("-"), a request that does not split, numbers
 * that do not convert, and lines that do not parse. */
static void test_mapped_take_is_the_general_take_access_log(void **state)
{
	(void)state;
	static const char *const lines[] = {
	    "1.2.3.4 - - [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.0\" 200 2326 \"-\" \"-\"",
	    ("1.2.3.4 id frank [10/Oct/2000:13:55:36 -0700] \"GET /a HTTP/1.0\" 404 - "
	     "\"http://x/\" \"curl/8\""),
	    "::1 - bob [10/Oct/2000:13:55:36 +0000] \"\\x16\\x03\\x01\" 400 157 \"-\" \"-\"",
	    "h - - [10/Oct/2000:13:55:36 +0000] \"GET /b\" 500 99999999999999999999 \"r\" \"a\"",
	    "h - - [10/Oct/2000:13:55:36 +0000] \"POST /c HTTP/1.1\" 200 4294967296 \"r\" \"a\"",
	    "not an access log line",
	    "",
	};
	struct both b;
	memset(&b, 0, sizeof(b));
	struct floe_config_input in;
	memset(&in, 0, sizeof(in));
	in.parser = FLOE_PARSER_APACHE_COMBINED;
	in.max_line_bytes = 1 << 20;
	static const char *const strings[] = {"client", "user", "method", "path", "protocol",
					      "referer", "user_agent"};
	assert_int_equal(floe_colplan_add(&b.plan, "status", FLOE_COL_INT, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "bytes", FLOE_COL_LONG, NULL, NULL), 0);
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		assert_int_equal(floe_colplan_add(&b.plan, strings[i], FLOE_COL_STRING, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "bytes_i", FLOE_COL_INT, "bytes", NULL), 0);
	assert_int_equal(floe_colplan_add(&b.plan, "ident_n", FLOE_COL_INT, "ident", NULL), 0);
	both_open(&b, &in);
	for (int round = 0; round < 2; round++)
		for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++)
			both_line(&b, lines[i], strlen(lines[i]));
	/* bytes: the 20-digit count, twice; bytes_i: that and 2^32; ident_n: "id". */
	assert_int_equal(b.failures[1], 2);
	assert_int_equal(b.failures[9], 4);
	assert_int_equal(b.failures[10], 2);
	both_close(&b);
}

/* A record whose attributes carry no ids of the map (no parser with fixed names made
 * them) is taken by name, as by floe_colplan_take. */
static void test_mapped_take_falls_back_without_ids(void **state)
{
	(void)state;
	struct floe_colplan p;
	plan_three(&p);
	static const char *const names[] = {"status", "lat"};
	static const size_t lens[] = {6, 3};
	struct floe_colmap m;
	assert_int_equal(floe_colmap_build(&m, &p, names, lens, 2), 0);
	const char *keys[] = {"user", "status"}, *vals[] = {"ann", "201"};
	size_t klens[] = {4, 6}, vlens[] = {3, 3};
	const uint8_t ids[] = {FLOE_FIELD_NOID, FLOE_FIELD_NOID};
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.nattrs = 2;
	rec.attr_keys = keys;
	rec.attr_key_lens = klens;
	rec.attr_vals = vals;
	rec.attr_val_lens = vlens;
	struct floe_pq_value typed[FLOE_COLS_MAX];
	const char *tk[2], *tv[2];
	size_t tkl[2], tvl[2];
	uint64_t failures[FLOE_COLS_MAX] = {0};
	floe_colplan_take_ids(&p, &m, ids, &rec, typed, tk, tkl, tv, tvl, failures);
	assert_int_equal(rec.nattrs, 0);
	assert_int_equal(rec.typed[0].i, 201);
	assert_true(rec.typed[1].is_null);
	assert_memory_equal(rec.typed[2].s, "ann", 3);
	/* With ids, the map alone says where a value goes: its key is not read. */
	const uint8_t ids2[] = {1, 0};
	const char *keys2[] = {"x", "y"}, *vals2[] = {"2.5", "7"};
	rec.nattrs = 2;
	rec.attr_keys = keys2;
	rec.attr_vals = vals2;
	rec.attr_key_lens = klens;
	rec.attr_val_lens = (const size_t[]){3, 1};
	floe_colplan_take_ids(&p, &m, ids2, &rec, typed, tk, tkl, tv, tvl, failures);
	assert_int_equal(rec.nattrs, 0);
	assert_int_equal(rec.typed[0].i, 7);
	assert_true(rec.typed[1].d == 2.5);
	assert_true(rec.typed[2].is_null);
	/* A complete map (its user vouches that every id is one of its names) skips the
	 * check of each and takes the same values. */
	m.complete = true;
	rec.nattrs = 2;
	rec.attr_keys = keys2;
	rec.attr_vals = vals2;
	rec.attr_key_lens = klens;
	rec.attr_val_lens = (const size_t[]){3, 1};
	floe_colplan_take_ids(&p, &m, ids2, &rec, typed, tk, tkl, tv, tvl, failures);
	assert_int_equal(rec.nattrs, 0);
	assert_int_equal(rec.typed[0].i, 7);
	assert_true(rec.typed[1].d == 2.5);
	assert_true(rec.typed[2].is_null);
}

/* A typed string value of 64 KiB or more is a large one, which the budget is asked about
 * before it goes in (an empty batch that cannot take it says so: 3); a null value or a
 * number is none, whatever length its struct carries. */
static void test_batch_large_typed_value(void **state)
{
	(void)state;
	char dir[] = "/tmp/floe-test-columns.XXXXXX", spooldir[64];
	assert_non_null(mkdtemp(dir));
	snprintf(spooldir, sizeof(spooldir), "%s/spool", dir);
	struct floe_alloc a;
	floe_alloc_init(&a, 5u << 19);
	struct floe_part_spec spec;
	assert_int_equal(floe_part_spec_from_config(&spec, NULL, 0, NULL), 0);
	struct floe_spool *sp = NULL;
	assert_int_equal(floe_spool_open(&a, spooldir, &spec, &sp), 0);
	struct floe_colplan p;
	plan_three(&p);
	struct floe_pq_column cols[FLOE_LOG_MAX_COLS];
	size_t ncols = 0;
	floe_colplan_pq_columns(&p, cols, &ncols);
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.pq.dictionary_cap = 256u << 10;
	bo.pq.memory_budget = 1u << 20;
	bo.target_file_size = 64u << 20;
	bo.cols = cols;
	bo.ncols = ncols;
	struct floe_batch *b = NULL;
	assert_int_equal(floe_batch_new(&a, &spec, &bo, sp, &b), 0);
	static char big[2u << 20];
	memset(big, 'u', sizeof(big));
	for (int v = 0; v < 3; v++) {
		struct floe_pq_value tv[3] = {{.i = 200}, {.d = 0.5}, {.s = big, .len = sizeof(big)}};
		if (v == 1)
			tv[2].is_null = true; /* its bytes are not written */
		if (v == 2) {
			tv[0].len = sizeof(big); /* a number's length means nothing */
			tv[2] = (struct floe_pq_value){.s = "u", .len = 1};
		}
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.host = r.source = (struct floe_str){"h", 1};
		r.message = (struct floe_str){"m", 1};
		r.typed = tv;
		r.ntyped = 3;
		assert_int_equal(floe_batch_add(b, 1, &r), v == 0 ? 3 : 0);
	}
	assert_int_equal(floe_batch_rows(b), 2);
	floe_batch_abort(b);
	floe_batch_free(b);
	floe_spool_free(sp);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plan_learns_the_table_ids),
	    cmocka_unit_test(test_plan_conflicts),
	    cmocka_unit_test(test_evolve_keeps_the_written_ids),
	    cmocka_unit_test(test_plan_file_round_trip),
	    cmocka_unit_test(test_row_takes_the_typed_values),
	    cmocka_unit_test(test_decoder_converts_and_keeps_failures),
	    cmocka_unit_test(test_take_finds_fields_in_any_order),
	    cmocka_unit_test(test_take_keeps_the_rest_around_64),
	    cmocka_unit_test(test_batch_writes_typed_columns),
	    cmocka_unit_test(test_batch_large_typed_value),
	    cmocka_unit_test(test_mapped_take_is_the_general_take_regex),
	    cmocka_unit_test(test_mapped_take_is_the_general_take_access_log),
	    cmocka_unit_test(test_mapped_take_falls_back_without_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
