/* The aggregator over typed columns: a record whose fields are typed values (as a parser
 * with typed columns gives them) and the same record as attribute text make the same
 * aggregate rows, byte for byte, sketches included; a key from an int or long column is
 * an int or long key column; a key's text that is no integer is a null key, counted. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/parquet/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000LL

/* Every row emitted, each value printed by its column's kind, into one text. */
struct rows {
	const struct floe_aggtable *t;
	char *buf;
	size_t len, cap;
	size_t n;
	char first_key[64][32]; /* the first key column of the first rows, as text ("null") */
};

static void put(struct rows *s, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int w = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	assert_true(w >= 0 && (size_t)w < s->cap - s->len);
	s->len += (size_t)w;
}

static int collect(void *arg, const struct floe_pq_value *v, size_t ncols)
{
	struct rows *s = arg;
	size_t n;
	const struct floe_pq_column *cols = floe_aggtable_columns(s->t, &n);
	assert_int_equal(n, ncols);
	size_t k = floe_aggtable_first_key(s->t);
	if (s->n < 64) {
		if (v[k].is_null)
			snprintf(s->first_key[s->n], 32, "null");
		else if (cols[k].kind == FLOE_PQ_STRING)
			snprintf(s->first_key[s->n], 32, "'%.*s'", (int)v[k].len, v[k].s);
		else
			snprintf(s->first_key[s->n], 32, "%lld", (long long)v[k].i);
	}
	s->n++;
	for (size_t i = 0; i < ncols; i++) {
		if (v[i].is_null) {
			put(s, "null,");
			continue;
		}
		switch (cols[i].kind) {
		case FLOE_PQ_DOUBLE:
			put(s, "%a,", v[i].d);
			break;
		case FLOE_PQ_STRING:
		case FLOE_PQ_BINARY:
			put(s, "[");
			for (size_t b = 0; b < v[i].len; b++)
				put(s, "%02x", (unsigned char)v[i].s[b]);
			put(s, "],");
			break;
		case FLOE_PQ_MAP_STRING_LONG:
			for (size_t e = 0; e < v[i].n; e++)
				put(s, "%.*s=%lld;", (int)v[i].key_lens[e], v[i].keys[e],
				    (long long)v[i].ivals[e]);
			put(s, ",");
			break;
		default:
			put(s, "%lld,", (long long)v[i].i);
		}
	}
	put(s, "\n");
	return 0;
}

struct fixture {
	struct floe_config *cfg;
	struct floe_alloc a;
	struct floe_colplan plan;
	struct floe_aggregator *g;
	struct rows rows;
	floe_agg_emit_fn emit; /* NULL: collect into rows */
	void *emit_arg;
};

/* An aggregation of yaml over records whose k is an int column, v a long one and d a
 * double one. */
static void setup(struct fixture *f, const char *yaml)
{
	struct floe_err err = {0};
	memset(f, 0, sizeof(*f));
	int rc = floe_config_parse(NULL, "t.yaml", yaml, strlen(yaml), "host-1", &f->cfg, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_int_equal(floe_colplan_add(&f->plan, "k", FLOE_COL_INT, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&f->plan, "v", FLOE_COL_LONG, NULL, NULL), 0);
	assert_int_equal(floe_colplan_add(&f->plan, "d", FLOE_COL_DOUBLE, NULL, NULL), 0);
	f->plan.planned = true;
	floe_alloc_init(&f->a, 0);
	rc = floe_agg_new(&f->a, &f->cfg->aggs[0], &f->plan, &f->g, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	f->rows.t = floe_agg_table(f->g);
	f->rows.cap = 1u << 20;
	f->rows.buf = calloc(1, f->rows.cap);
	assert_non_null(f->rows.buf);
}

static void teardown(struct fixture *f)
{
	floe_agg_free(f->g);
	assert_int_equal(f->a.used, 0);
	floe_config_free(f->cfg);
	free(f->rows.buf);
}

/* One event at ts seconds: k, v and d as attribute text (typed false; NULL: absent), or
 * as typed values converted from that text, as a parser's column plan converts them. */
static void add(struct fixture *f, bool typed, double ts, const char *k, const char *v,
		const char *d)
{
	const char *keys[3] = {"k", "v", "d"}, *vals[3] = {k, v, d};
	size_t vlens[3] = {k ? strlen(k) : 0, v ? strlen(v) : 0, d ? strlen(d) : 0};
	const char *ok[3], *ov[3];
	size_t okl[3], ovl[3];
	size_t na = 0;
	for (size_t i = 0; i < 3; i++) {
		if (!vals[i])
			continue;
		ok[na] = keys[i], okl[na] = 1, ov[na] = vals[i], ovl[na] = vlens[i];
		na++;
	}
	struct floe_record r = {.ts = (int64_t)(ts * SEC),
				.received_at = (int64_t)(ts * SEC),
				.host = {"h", 1},
				.message = {"m", 1},
				.nattrs = na,
				.attr_keys = ok,
				.attr_key_lens = okl,
				.attr_vals = ov,
				.attr_val_lens = ovl};
	struct floe_pq_value tv[3];
	const char *tk[3], *tav[3];
	size_t tkl[3], tavl[3];
	uint64_t fails[3] = {0};
	if (typed)
		floe_colplan_take(&f->plan, &r, tv, tk, tkl, tav, tavl, fails);
	assert_int_equal(f->emit ? floe_agg_add(f->g, &r, f->emit, f->emit_arg)
				 : floe_agg_add(f->g, &r, collect, &f->rows),
			 0);
}

static uint64_t seed = 7;
static uint64_t rnd(void)
{
	seed = seed * 6364136223846793005ull + 1442695040888963407ull;
	return seed >> 33;
}

/* Flushes text and typed, which took the same events as text and as typed values, and
 * requires the same rows byte for byte (more than 30) and no value unparsable; frees
 * both. */
static void same_rows(struct fixture *text, struct fixture *typed)
{
	assert_int_equal(floe_agg_flush(text->g, collect, &text->rows), 0);
	assert_int_equal(floe_agg_flush(typed->g, collect, &typed->rows), 0);
	assert_true(typed->rows.n > 30);
	assert_int_equal(text->rows.n, typed->rows.n);
	assert_int_equal(text->rows.len, typed->rows.len);
	assert_memory_equal(text->rows.buf, typed->rows.buf, text->rows.len);
	assert_int_equal(floe_agg_stats(typed->g)->unparsable, 0);
	assert_int_equal(floe_agg_stats(text->g)->unparsable, 0);
	teardown(text);
	teardown(typed);
}

/* The same 3,000 events, as text and as typed values, through every kind of metric over
 * a long and a double, keyed by an int column (and host): the same rows, byte for byte,
 * and the key column is an int. */
static void test_typed_same_as_text(void **state)
{
	(void)state;
	const char *yaml =
	    "aggregations: [{name: a, window: 10s, group_by: [k, host], "
	    "metrics: [count, {sum: v}, {min: v}, {max: d}, {avg: d}, {quantiles: v}, "
	    "{distinct: v}, {top_k: v, k: 3}, {quantiles: d}]}]\n";
	struct fixture text, typed;
	setup(&text, yaml);
	setup(&typed, yaml);
	size_t n;
	const struct floe_pq_column *cols = floe_aggtable_columns(typed.rows.t, &n);
	const struct floe_ice_field *fields = floe_aggtable_fields(typed.rows.t, &n);
	size_t k = floe_aggtable_first_key(typed.rows.t);
	assert_string_equal(cols[k].name, "k");
	assert_int_equal(cols[k].kind, FLOE_PQ_INT32);
	assert_string_equal(fields[k].type, "int");
	assert_int_equal(cols[k + 1].kind, FLOE_PQ_STRING);
	for (int i = 0; i < 3000; i++) {
		char kb[16], vb[24], db[32];
		snprintf(kb, sizeof(kb), "%d", (int)(rnd() % 12) - 2);
		snprintf(vb, sizeof(vb), "%lld", (long long)(rnd() % 100000) - 1000);
		/* Doubles whose text is what %.17g prints, so that both read the same number. */
		snprintf(db, sizeof(db), "%.17g", (double)(rnd() % 1000) / 8.0);
		double ts = i / 100.0;
		const char *d = i % 7 ? db : NULL;
		add(&text, false, ts, kb, vb, d);
		add(&typed, true, ts, kb, vb, d);
	}
	same_rows(&text, &typed);
}

/* A key from an int column whose text is no integer (as text, or kept in attrs by a
 * conversion that failed) is a null key, counted; "-" is a null key, not counted; a
 * number beyond int is refused by the column's own conversion. */
static void test_typed_key_not_int(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 10s, group_by: [k], metrics: [count]}]\n");
	add(&f, false, 1, "x", "1", NULL);	    /* text, not an integer */
	add(&f, true, 1, "y", "1", NULL);	    /* typed: the conversion failed, text kept */
	add(&f, false, 1, "-", "1", NULL);	    /* null */
	add(&f, false, 1, "4294967296", "1", NULL); /* beyond int */
	add(&f, true, 1, "7", "1", NULL);
	add(&f, false, 1, "7", "1", NULL);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.rows), 0);
	assert_int_equal(f.rows.n, 2);
	assert_string_equal(f.rows.first_key[0], "null");
	assert_string_equal(f.rows.first_key[1], "7");
	assert_non_null(strstr(f.rows.buf, ",4,0,1,\n")); /* null key: count 4 */
	assert_int_equal(floe_agg_stats(f.g)->unparsable, 3);
	teardown(&f);
}

/* A typed key's overflow group writes a null key, as an integer record column's does. */
static void test_typed_key_overflow(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 10s, group_by: [k, host], metrics: [count],"
		  " max_groups: 2}]\n");
	add(&f, true, 1, "1", "1", NULL);
	add(&f, true, 1, "2", "1", NULL);
	add(&f, true, 1, "3", "1", NULL);
	assert_int_equal(floe_agg_flush(f.g, collect, &f.rows), 0);
	assert_int_equal(f.rows.n, 3);
	assert_string_equal(f.rows.first_key[2], "null");
	/* The host key of __overflow__, its count 1. */
	assert_non_null(strstr(f.rows.buf, "[5f5f6f766572666c6f775f5f],1,0,1,\n"));
	teardown(&f);
}

/* An image in memory. */
struct image {
	uint8_t *p;
	size_t len, off;
};

static int put_image(void *ctx, const void *p, size_t n)
{
	struct image *im = ctx;
	im->p = realloc(im->p, im->len + n);
	assert_non_null(im->p);
	memcpy(im->p + im->len, p, n);
	im->len += n;
	return 0;
}

static int get_image(void *ctx, void *p, size_t n)
{
	struct image *im = ctx;
	if (n > im->len - im->off)
		return FLOE_ECORRUPT;
	memcpy(p, im->p + im->off, n);
	im->off += n;
	return 0;
}

/* Events read and not yet added to their groups (the aggregator adds them in batches of
 * thousands) are in the image: an aggregator restored from an image saved with 77 events
 * pending goes on to the same rows as the one that saved it. */
static void test_image_with_pending(void **state)
{
	(void)state;
	const char *yaml = "aggregations: [{name: a, window: 10s, group_by: [k], "
			   "metrics: [count, {sum: v}, {distinct: v}, {quantiles: v}]}]\n";
	struct fixture f, g;
	setup(&f, yaml);
	setup(&g, yaml);
	char kb[16], vb[16];
	for (int i = 0; i < 77; i++) {
		snprintf(kb, sizeof(kb), "%d", i % 3);
		snprintf(vb, sizeof(vb), "%d", i * 7);
		add(&f, true, 1 + i / 100.0, kb, vb, NULL);
	}
	struct image im = {0};
	assert_int_equal(floe_agg_save(f.g, 5, put_image, &im), 0);
	uint64_t tag = 0;
	assert_int_equal(floe_agg_load(g.g, get_image, &im, &tag, NULL), 0);
	assert_int_equal(tag, 5);
	for (int i = 0; i < 40; i++) {
		snprintf(kb, sizeof(kb), "%d", i % 4);
		snprintf(vb, sizeof(vb), "%d", i);
		add(&f, true, 3 + i / 10.0, kb, vb, NULL);
		add(&g, true, 3 + i / 10.0, kb, vb, NULL);
	}
	assert_int_equal(floe_agg_flush(f.g, collect, &f.rows), 0);
	assert_int_equal(floe_agg_flush(g.g, collect, &g.rows), 0);
	assert_int_equal(f.rows.n, 4);
	assert_int_equal(f.rows.len, g.rows.len);
	assert_memory_equal(f.rows.buf, g.rows.buf, f.rows.len);
	assert_non_null(strstr(g.rows.buf, ",36,")); /* key 0: 26 events, then 10 */
	free(im.p);
	teardown(&f);
	teardown(&g);
}

/* What the batch test expects of one (window, key): count and sum in event order. */
struct expect {
	int64_t start;
	int key; /* -1: the overflow group */
	uint64_t count;
	double sum;
};

#define BATCH_KEYS 80
#define BATCH_GROUPS 50 /* max_groups: the 30 keys seen last in a window overflow */
#define BATCH_EVENTS (3 * 4096 + 77)

struct seen {
	struct expect *e;
	size_t n, cap;
};

static struct expect *expect_of(struct seen *s, int64_t start, int key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->e[i].start == start && s->e[i].key == key)
			return &s->e[i];
	return NULL;
}

/* Adds an event of key k and value v at ts (µs) to the reference: the windows of 4 s
 * sliding by 1 s that hold ts, each with its first BATCH_GROUPS keys, the rest in the
 * overflow group. */
static void expect_add(struct seen *s, int64_t ts, int k, double v)
{
	for (int64_t start = ts / SEC * SEC; start > ts - 4 * SEC; start -= SEC) {
		struct expect *e = expect_of(s, start, k);
		if (!e) {
			size_t groups = 0;
			for (size_t i = 0; i < s->n; i++)
				groups += s->e[i].start == start && s->e[i].key >= 0;
			int key = groups < BATCH_GROUPS ? k : -1;
			if (!(e = expect_of(s, start, key))) {
				assert_true(s->n < s->cap);
				e = &s->e[s->n++];
				*e = (struct expect){start, key, 0, 0};
			}
		}
		e->count++;
		e->sum = e->count == 1 ? v : e->sum + v;
	}
}

/* Checks each row against the reference, and counts the rows. */
struct checked {
	struct seen *s;
	const struct floe_aggtable *t;
	size_t rows;
};

static int check_row(void *arg, const struct floe_pq_value *v, size_t ncols)
{
	struct checked *c = arg;
	size_t k = floe_aggtable_first_key(c->t), m = floe_aggtable_first_value(c->t);
	(void)ncols;
	struct expect *e = expect_of(c->s, v[0].i, v[k].is_null ? -1 : (int)v[k].i);
	assert_non_null(e);
	assert_int_equal(v[m].i, e->count);
	/* Exactly equal: the values are added in event order, where order changes the sum. */
	assert_true(v[m + 1].d == e->sum);
	e->count = 0; /* seen */
	c->rows++;
	return 0;
}

/* Events are added in batches of thousands, group by group: across batches, hopping
 * windows that close inside a batch, 80 keys over max_groups 50 and values whose sum
 * depends on their order (1e16 beside 1), every row is the one adding the events one by
 * one in their order makes. */
static void test_batches_keep_event_order(void **state)
{
	(void)state;
	struct fixture f;
	setup(&f, "aggregations: [{name: a, window: 4s, slide: 1s, allowed_lateness: 2s, "
		  "group_by: [k], max_groups: 50, metrics: [count, {sum: d}]}]\n");
	static struct expect e[64 * 81];
	struct seen s = {e, 0, sizeof(e) / sizeof(e[0])};
	static const double vals[] = {1e16, 1, -1e16, 0.5, 3, 1e-3, -7.25};
	struct checked c = {&s, f.rows.t, 0};
	f.emit = check_row;
	f.emit_arg = &c;
	for (int i = 0; i < BATCH_EVENTS; i++) {
		/* 1,000 events a second, each up to 1.5 s behind the newest: within the
		 * lateness, so that every event lands in all its windows. */
		int64_t ts = (int64_t)i * 1000 - (int64_t)(rnd() % 1500000);
		if (ts < 0)
			ts = 0;
		int k = (int)(rnd() % BATCH_KEYS);
		double v = vals[rnd() % 7];
		char kb[16], db[32];
		snprintf(kb, sizeof(kb), "%d", k);
		snprintf(db, sizeof(db), "%.17g", v);
		add(&f, true, (double)ts / SEC, kb, NULL, db);
		expect_add(&s, (int64_t)((double)ts / SEC * SEC), k, v); /* as add() takes it */
	}
	assert_int_equal(floe_agg_flush(f.g, check_row, &c), 0);
	assert_int_equal(c.rows, s.n);
	assert_int_equal(floe_agg_stats(f.g)->late, 0);
	assert_true(floe_agg_stats(f.g)->overflowed > 0);
	teardown(&f);
}

/* Without typed columns the same field is a string key, as before. */
static void test_text_key_stays_string(void **state)
{
	(void)state;
	struct floe_config *cfg = NULL;
	struct floe_err err = {0};
	struct floe_aggtable *t = NULL;
	const char *y = "aggregations: [{name: a, window: 10s, group_by: [k, severity], "
			"metrics: [count]}]\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", y, strlen(y), "h", &cfg, &err), 0);
	assert_int_equal(floe_agg_table_of(NULL, &cfg->aggs[0], NULL, &t, &err), 0);
	size_t n;
	const struct floe_pq_column *cols = floe_aggtable_columns(t, &n);
	size_t k = floe_aggtable_first_key(t);
	assert_int_equal(cols[k].kind, FLOE_PQ_STRING);
	assert_int_equal(cols[k + 1].kind, FLOE_PQ_INT32);
	floe_aggtable_free(t);
	floe_config_free(cfg);
}

/* The record plan the aggregator resolved its fields against changes in place, as a
 * reload or a plan learnt at first contact changes it: the same struct takes other
 * columns in another order (n unchanged), then a plan no floe_colplan_add signed. Every
 * field is still read from its own column: the rows are those of the same events as
 * text. */
static void test_plan_changed_in_place(void **state)
{
	(void)state;
	const char *yaml = "aggregations: [{name: a, window: 10s, group_by: [k], "
			   "metrics: [count, {sum: v}, {max: d}, {distinct: v}]}]\n";
	struct fixture text, typed;
	setup(&text, yaml);
	setup(&typed, yaml);
	for (int i = 0; i < 3000; i++) {
		if (i == 1000) {
			struct floe_colplan q;
			memset(&q, 0, sizeof(q));
			assert_int_equal(floe_colplan_add(&q, "d", FLOE_COL_DOUBLE, NULL, NULL), 0);
			assert_int_equal(floe_colplan_add(&q, "k", FLOE_COL_INT, NULL, NULL), 0);
			assert_int_equal(floe_colplan_add(&q, "v", FLOE_COL_LONG, NULL, NULL), 0);
			q.planned = true;
			assert_true(q.from_sig != typed.plan.from_sig);
			typed.plan = q;
		}
		if (i == 2000) {
			struct floe_col c = typed.plan.col[0];
			typed.plan.col[0] = typed.plan.col[2];
			typed.plan.col[2] = c;
			typed.plan.from_sig = 0;
		}
		char kb[16], vb[24], db[32];
		snprintf(kb, sizeof(kb), "%d", (int)(rnd() % 12));
		snprintf(vb, sizeof(vb), "%lld", (long long)(rnd() % 100000) - 1000);
		snprintf(db, sizeof(db), "%.17g", (double)(rnd() % 1000) / 8.0);
		add(&text, false, i / 100.0, kb, vb, db);
		add(&typed, true, i / 100.0, kb, vb, db);
	}
	same_rows(&text, &typed);
}

/* The fast read of typed values (aggregator.c's key_fast and values_fast) against the
 * same events as text: nulls and values that did not convert (their text kept) go to the
 * general read, and a column widened in place (int to long, as planning against the table
 * widens it, re-signing the plan) is read by its new type: a key configured int then
 * holds a value beyond int's range, which is a null key, counted, as its text is. Late
 * events go to the oldest open window with the values the fast read took. */
static void test_fast_read_widened(void **state)
{
	(void)state;
	const char *yaml =
	    "aggregations: [{name: a, window: 10s, group_by: [k], late: oldest_open, "
	    "metrics: [count, {sum: v}, {distinct: v}, {max: d}, {quantiles: d}]}]\n";
	struct fixture text, typed;
	setup(&text, yaml);
	setup(&typed, yaml);
	for (int i = 0; i < 3000; i++) {
		if (i == 1000) {
			typed.plan.col[0].type = FLOE_COL_LONG;
			floe_colplan_sign(&typed.plan);
		}
		char kb[24], vb[24], db[32];
		if (i >= 1000 && i % 5 == 0)
			snprintf(kb, sizeof(kb), "%lld", 3000000000ll + (long long)(rnd() % 3));
		else
			snprintf(kb, sizeof(kb), "%d", (int)(rnd() % 12) - 2);
		snprintf(vb, sizeof(vb), "%lld", (long long)(rnd() % 100000) - 1000);
		snprintf(db, sizeof(db), "%.17g", (double)(rnd() % 1000) / 8.0);
		const char *v = i % 11 == 3 ? "x" : vb, *d = i % 7 ? db : NULL;
		/* Every 97th event late, into the oldest open window (late: oldest_open). */
		double ts = i % 97 == 50 ? i / 100.0 - 15 : i / 100.0;
		add(&text, false, ts, kb, v, d);
		add(&typed, true, ts, kb, v, d);
	}
	assert_int_equal(floe_agg_flush(text.g, collect, &text.rows), 0);
	assert_int_equal(floe_agg_flush(typed.g, collect, &typed.rows), 0);
	assert_true(typed.rows.n > 30);
	assert_int_equal(text.rows.n, typed.rows.n);
	assert_int_equal(text.rows.len, typed.rows.len);
	assert_memory_equal(text.rows.buf, typed.rows.buf, text.rows.len);
	assert_true(floe_agg_stats(typed.g)->unparsable > 0);
	assert_true(floe_agg_stats(typed.g)->late > floe_agg_stats(typed.g)->late_dropped);
	assert_int_equal(floe_agg_stats(typed.g)->unparsable, floe_agg_stats(text.g)->unparsable);
	teardown(&text);
	teardown(&typed);
}

/* distinct over a long column hashes the integer's decimal text: every length of it, the
 * powers of ten and their neighbours, 0, and both ends of the range give the sketch the
 * same text gives. */
static void test_typed_distinct_every_length(void **state)
{
	(void)state;
	const char *yaml = "aggregations: [{name: a, window: 10s, group_by: [k], "
			   "metrics: [count, {distinct: v}, {max: v}]}]\n";
	struct fixture text, typed;
	setup(&text, yaml);
	setup(&typed, yaml);
	int n = 0;
	for (int sign = 0; sign < 2; sign++) {
		unsigned long long p = 1;
		for (int d = 0; d < 20; d++, p *= 10) {
			for (int o = -1; o <= 1; o++) {
				char vb[32], kb[8];
				unsigned long long u = p + (unsigned long long)(long long)o;
				if (u > 9223372036854775807ull)
					continue;
				snprintf(vb, sizeof(vb), "%s%llu", sign && u ? "-" : "", u);
				snprintf(kb, sizeof(kb), "%d", n % 40);
				add(&text, false, n / 10.0, kb, vb, NULL);
				add(&typed, true, n / 10.0, kb, vb, NULL);
				n++;
			}
		}
	}
	const char *ends[] = {"9223372036854775807", "-9223372036854775808", "0", "-1"};
	for (int i = 0; i < 4; i++, n++) {
		add(&text, false, n / 10.0, "1", ends[i], NULL);
		add(&typed, true, n / 10.0, "1", ends[i], NULL);
	}
	same_rows(&text, &typed);
}

/* Metrics of one field that take the same kind of value read it once and share it (a
 * value column of the batch), but a second quantiles metric of the field keeps its own
 * buckets. The same events through metrics that share their values (all of v) and
 * through metrics spread over v and d (which take the same numbers: d is v as a double)
 * give the same rows and count the same unparsable values: over hopping windows (an
 * event's values copied to its five windows' rows), late events added to the oldest
 * open window, values that are no numbers, and with a top_k (one event's rows a batch). */
static void test_shared_values_same_as_apart(void **state)
{
	(void)state;
	const char *common = "aggregations: [{name: a, window: 10s, slide: 2s, "
			     "allowed_lateness: 1s, late: oldest_open, group_by: [k], metrics: [";
	const char *shared[2] = {
	    "count, {count: v}, {sum: v}, {quantiles: v}, {quantiles: v, accuracy: 0.02, name: "
	    "q2}, {max: v}, {distinct: v}]}]\n",
	    "{count: v}, {top_k: v, k: 3}, {sum: v}, {quantiles: v}, {distinct: v}]}]\n"};
	const char *apart[2] = {
	    "count, {count: d}, {sum: v}, {quantiles: d}, {quantiles: v, accuracy: 0.02, name: "
	    "q2}, {max: d}, {distinct: v}]}]\n",
	    "{count: d}, {top_k: v, k: 3}, {sum: d}, {quantiles: v}, {distinct: d}]}]\n"};
	for (int c = 0; c < 2; c++) {
		char ys[512], ya[512];
		snprintf(ys, sizeof(ys), "%s%s", common, shared[c]);
		snprintf(ya, sizeof(ya), "%s%s", common, apart[c]);
		struct fixture fs, fa;
		setup(&fs, ys);
		setup(&fa, ya);
		struct fixture *both[2] = {&fs, &fa};
		for (int k = 0; k < 2; k++) { /* rows of five windows' sketches: more room */
			both[k]->rows.cap = 16u << 20;
			both[k]->rows.buf = realloc(both[k]->rows.buf, both[k]->rows.cap);
			assert_non_null(both[k]->rows.buf);
		}
		for (int i = 0; i < 3000; i++) {
			char kb[16], vb[24];
			snprintf(kb, sizeof(kb), "%d", (int)(rnd() % 5));
			if (i % 97 == 0)
				snprintf(vb, sizeof(vb), "x%d", i); /* no number */
			else
				snprintf(vb, sizeof(vb), "%lld", (long long)(rnd() % 2000) - 500);
			/* Every tenth event 12 s late: the oldest open window takes it. */
			double ts = i / 100.0 - (i % 10 == 0 ? 12.0 : 0.0);
			const char *v = i % 13 ? vb : NULL;
			add(&fs, true, ts, kb, v, v);
			add(&fa, true, ts, kb, v, v);
		}
		assert_int_equal(floe_agg_flush(fs.g, collect, &fs.rows), 0);
		assert_int_equal(floe_agg_flush(fa.g, collect, &fa.rows), 0);
		assert_true(fs.rows.n > 30);
		assert_int_equal(fs.rows.n, fa.rows.n);
		assert_int_equal(fs.rows.len, fa.rows.len);
		assert_memory_equal(fs.rows.buf, fa.rows.buf, fs.rows.len);
		const struct floe_agg_stats *ss = floe_agg_stats(fs.g), *sa = floe_agg_stats(fa.g);
		assert_true(ss->unparsable > 0);
		assert_true(ss->late > 0);
		assert_int_equal(ss->unparsable, sa->unparsable);
		assert_int_equal(ss->late, sa->late);
		assert_int_equal(ss->events, sa->events);
		teardown(&fs);
		teardown(&fa);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_typed_same_as_text),
	    cmocka_unit_test(test_typed_key_not_int),
	    cmocka_unit_test(test_typed_key_overflow),
	    cmocka_unit_test(test_text_key_stays_string),
	    cmocka_unit_test(test_image_with_pending),
	    cmocka_unit_test(test_batches_keep_event_order),
	    cmocka_unit_test(test_plan_changed_in_place),
	    cmocka_unit_test(test_fast_read_widened),
	    cmocka_unit_test(test_shared_values_same_as_apart),
	    cmocka_unit_test(test_typed_distinct_every_length),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
