/* The aggregator tests' fixture (test_agg_aggregator.c, test_agg_aggregator_pool.c;
 * include after cmocka.h): an aggregator made from a YAML configuration, events added
 * with attributes k and v, the emitted rows collected (the first key as text, the window,
 * the values as numbers) and found by window and key, and an open windows' image saved
 * into and read from one buffer. */
#ifndef FLOE_TEST_AGG_LIB_H
#define FLOE_TEST_AGG_LIB_H

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SEC 1000000LL
#define MAXROWS 64

/* What the emit callback keeps of each row: the first key as text, the window, and the
 * value columns as numbers (NAN for null). */
struct row {
	int64_t start, end;
	char key[32];
	double v[12];
	int64_t late;
	bool partial;
	size_t top_n;
	char top0[16];
	int64_t top0_count;
	size_t sketch_len[2];
};

struct sink {
	const struct floe_aggtable *t;
	size_t nkeys, nvals;
	struct row rows[MAXROWS];
	size_t n;
};

static inline int collect(void *arg, const struct floe_pq_value *v, size_t ncols)
{
	struct sink *s = arg;
	const struct floe_pq_column *cols;
	size_t n;
	cols = floe_aggtable_columns(s->t, &n);
	assert_int_equal(n, ncols);
	assert_true(s->n < MAXROWS);
	struct row *r = &s->rows[s->n++];
	memset(r, 0, sizeof(*r));
	r->start = v[0].i;
	r->end = v[1].i;
	size_t k = floe_aggtable_first_key(s->t), fv = floe_aggtable_first_value(s->t);
	if (fv > k && !v[k].is_null) {
		if (cols[k].kind == FLOE_PQ_STRING)
			snprintf(r->key, sizeof(r->key), "%.*s", (int)v[k].len, v[k].s);
		else
			snprintf(r->key, sizeof(r->key), "%lld", (long long)v[k].i);
	}
	size_t late = floe_aggtable_late_col(s->t);
	for (size_t i = fv, j = 0; i < late && j < 12; i++, j++) {
		if (v[i].is_null)
			r->v[j] = NAN;
		else if (cols[i].kind == FLOE_PQ_DOUBLE)
			r->v[j] = v[i].d;
		else if (cols[i].kind == FLOE_PQ_MAP_STRING_LONG) {
			r->top_n = v[i].n;
			if (v[i].n) {
				snprintf(r->top0, sizeof(r->top0), "%.*s", (int)v[i].key_lens[0],
					 v[i].keys[0]);
				r->top0_count = v[i].ivals[0];
			}
			r->v[j] = (double)v[i].n;
		} else
			r->v[j] = (double)v[i].i;
	}
	r->late = v[late].i;
	r->partial = v[floe_aggtable_partial_col(s->t)].i != 0;
	size_t sk = floe_aggtable_first_sketch(s->t);
	for (size_t i = sk, j = 0; i < ncols && j < 2; i++, j++)
		r->sketch_len[j] = v[i].is_null ? 0 : v[i].len;
	return 0;
}

struct fixture {
	struct floe_config *cfg;
	struct floe_alloc a;
	struct floe_aggregator *g;
	struct sink sink;
};

static inline void setup(struct fixture *f, const char *yaml)
{
	struct floe_err err = {0};
	memset(f, 0, sizeof(*f));
	int rc = floe_config_parse(NULL, "t.yaml", yaml, strlen(yaml), "host-1", &f->cfg, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	floe_alloc_init(&f->a, 0);
	rc = floe_agg_new(&f->a, &f->cfg->aggs[0], NULL, &f->g, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	f->sink.t = floe_agg_table(f->g);
}

static inline void teardown(struct fixture *f)
{
	floe_agg_free(f->g);
	assert_int_equal(f->a.used, 0);
	floe_config_free(f->cfg);
}

/* One event at ts seconds, read at now seconds (the clock then), with attributes k and v
 * (v may be NULL). */
static inline void add_read_at(struct fixture *f, double ts, double now, const char *k,
			       const char *v)
{
	const char *keys[2] = {"k", "v"}, *vals[2] = {k, v};
	size_t klens[2] = {1, 1}, vlens[2] = {k ? strlen(k) : 0, v ? strlen(v) : 0};
	struct floe_record r = {.ts = (int64_t)(ts * SEC),
				.received_at = (int64_t)(now * SEC),
				.host = {"h", 1},
				.message = {"m", 1},
				.nattrs = v ? 2 : 1,
				.attr_keys = keys,
				.attr_key_lens = klens,
				.attr_vals = vals,
				.attr_val_lens = vlens};
	assert_int_equal(floe_agg_add(f->g, &r, collect, &f->sink), 0);
}

/* One event at ts seconds, read then. */
static inline void add(struct fixture *f, double ts, const char *k, const char *v)
{
	add_read_at(f, ts, ts, k, v);
}

static inline const struct row *find(const struct sink *s, int64_t start_s, const char *key)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->rows[i].start == start_s * SEC && strcmp(s->rows[i].key, key) == 0)
			return &s->rows[i];
	print_error("no row for window %lld key %s\n", (long long)start_s, key);
	fail();
	return NULL;
}

/* An image as one buffer (the runner writes the pieces to a file). */
struct image {
	uint8_t *p;
	size_t len, off;
};

static inline int write_image(void *ctx, const void *p, size_t n)
{
	struct image *im = ctx;
	uint8_t *q = realloc(im->p, im->len + n);
	assert_non_null(q);
	memcpy(q + im->len, p, n);
	im->p = q;
	im->len += n;
	return 0;
}

static inline void save_image(struct fixture *f, uint64_t tag, struct image *im)
{
	memset(im, 0, sizeof(*im));
	assert_int_equal(floe_agg_save(f->g, tag, write_image, im), 0);
}

static inline int read_image(void *ctx, void *p, size_t n)
{
	struct image *im = ctx;
	if (n > im->len - im->off)
		return FLOE_ECORRUPT;
	memcpy(p, im->p + im->off, n);
	im->off += n;
	return 0;
}

#endif
