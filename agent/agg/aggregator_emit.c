/* A closed window's rows: per group its key columns decoded from the group's key, each
 * metric's values, late_events, partial and the serialised sketches, made in buffers
 * reserved at start-up. */
#include "agent/agg/aggregator_impl.h"

#include "agent/agg/agg_math.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

#include <math.h>
#include <string.h>

int floe_agg_emit_init(struct floe_aggregator *g)
{
	size_t n;
	(void)floe_aggtable_columns(g->table, &n);
	g->ncols = n;
	if (!(g->row = floe_calloc(g->a, n, sizeof(*g->row))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		unsigned k = m->cfg->k;
		switch (m->cfg->kind) {
		case FLOE_METRIC_DISTINCT:
			m->sketch_cap = FLOE_HLL_HEADER_BYTES + floe_hll_bytes(m->cfg->precision);
			break;
		case FLOE_METRIC_QUANTILES:
			/* Each bucket is one packed double at most, plus the messages' headers. */
			m->sketch_cap = ((size_t)m->dds.pos_bins + m->dds.neg_bins) * 8 + 256;
			break;
		case FLOE_METRIC_TOP_K:
			m->items = floe_calloc(g->a, k, sizeof(*m->items));
			m->keys = floe_calloc(g->a, k, sizeof(*m->keys));
			m->key_lens = floe_calloc(g->a, k, sizeof(*m->key_lens));
			m->ivals = floe_calloc(g->a, k, sizeof(*m->ivals));
			if (!m->items || !m->keys || !m->key_lens || !m->ivals)
				return FLOE_ENOMEM;
			break;
		default:
			break;
		}
		if (m->sketch_cap && !(m->sketch_buf = floe_malloc(g->a, m->sketch_cap)))
			return FLOE_ENOMEM;
	}
	return 0;
}

/* The key columns of group h (the overflow group when over). */
static void put_keys(struct floe_aggregator *g, const struct agg_group *h, bool over,
		     struct floe_pq_value *v)
{
	const uint8_t *p = (const uint8_t *)(h + 1);
	for (size_t i = 0; i < g->cfg->ngroup_by; i++, v++) {
		*v = (struct floe_pq_value){.is_null = true};
		if (over) {
			if (g->key_type[i] == FLOE_AGGCOL_STRING)
				*v = (struct floe_pq_value){.s = FLOE_AGG_OVERFLOW,
							    .len = strlen(FLOE_AGG_OVERFLOW)};
			continue;
		}
		uint8_t tag = *p++;
		if (tag == 2) {
			int64_t x;
			memcpy(&x, p, 8);
			p += 8;
			*v = (struct floe_pq_value){.i = x};
		} else if (tag == 1) {
			uint32_t l;
			memcpy(&l, p, 4);
			*v = (struct floe_pq_value){.s = (const char *)p + 4, .len = l};
			p += 4 + (size_t)l;
		}
	}
}

/* The value columns of metric m (not distinct: put_distinct) from its state st; returns how
 * many it filled. */
static size_t put_values(const struct agg_metric *m, const uint8_t *st, struct floe_pq_value *v)
{
	const struct floe_config_metric *c = m->cfg;
	if (c->kind == FLOE_METRIC_COUNT) {
		uint64_t n;
		memcpy(&n, st, 8);
		*v = (struct floe_pq_value){.i = (int64_t)n};
		return 1;
	}
	if (c->kind == FLOE_METRIC_QUANTILES) {
		const struct floe_dds *s = (const struct floe_dds *)(const void *)st;
		for (size_t q = 0; q < c->nq; q++) {
			double x = floe_dds_quantile(s, c->qv[q]);
			v[q] = isnan(x) ? (struct floe_pq_value){.is_null = true}
					: (struct floe_pq_value){.d = x};
		}
		return c->nq;
	}
	if (c->kind == FLOE_METRIC_TOP_K) {
		const struct floe_ss *s = (const struct floe_ss *)(const void *)st;
		size_t n = floe_ss_top(s, m->items, c->k);
		for (size_t i = 0; i < n; i++) {
			m->keys[i] = (const char *)m->items[i].key;
			m->key_lens[i] = m->items[i].len;
			m->ivals[i] = (int64_t)m->items[i].count;
		}
		*v = (struct floe_pq_value){
		    .n = n, .keys = m->keys, .key_lens = m->key_lens, .ivals = m->ivals};
		return 1;
	}
	struct agg_num s;
	memcpy(&s, st, sizeof(s));
	if (s.n == 0)
		*v = (struct floe_pq_value){.is_null = true};
	else
		*v = (struct floe_pq_value){.d = c->kind == FLOE_METRIC_AVG ? s.v / (double)s.n
									    : s.v};
	return 1;
}

/* The sketch column of metric m (quantiles), serialised into its buffer. */
static void put_sketch(const struct agg_metric *m, const uint8_t *st, struct floe_pq_value *v)
{
	const struct floe_dds *s = (const struct floe_dds *)(const void *)st;
	size_t n = floe_dds_proto_size(s);
	int rc = floe_dds_encode_proto(s, m->sketch_buf, m->sketch_cap);
	*v = rc ? (struct floe_pq_value){.is_null = true}
		: (struct floe_pq_value){.s = (const char *)m->sketch_buf, .len = n};
}

/* A distinct metric's estimate (v) and image (sk) from one pass over its registers: the
 * registers' histogram is most of a dense sketch's emission, and both need it. */
static void put_distinct(const struct agg_metric *m, const uint8_t *st, struct floe_pq_value *v,
			 struct floe_pq_value *sk)
{
	const struct floe_hll *h = (const struct floe_hll *)(const void *)st;
	size_t n = floe_hll_serialized_size(h);
	double e;
	if (floe_hll_serialize_estimate(h, m->sketch_buf, m->sketch_cap, &e) == 0) {
		*sk = (struct floe_pq_value){.s = (const char *)m->sketch_buf, .len = n};
	} else {
		*sk = (struct floe_pq_value){.is_null = true};
		e = floe_hll_estimate(h);
	}
	*v = (struct floe_pq_value){.i = floe_agg_llround(e)};
}

static int emit_group(struct floe_aggregator *g, const struct agg_window *w,
		      const struct agg_group *h, bool over, bool partial, floe_agg_emit_fn emit,
		      void *arg)
{
	struct floe_pq_value *row = g->row;
	size_t c = floe_aggtable_first_key(g->table);
	row[0] = (struct floe_pq_value){.i = w->start};
	row[1] = (struct floe_pq_value){.i = w->start + g->window_us};
	put_keys(g, h, over, row + c);
	c = floe_aggtable_first_value(g->table);
	size_t sk = floe_aggtable_first_sketch(g->table);
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		const struct agg_metric *m = &g->metrics[i];
		const uint8_t *st = (const uint8_t *)h + m->off;
		if (m->cfg->kind == FLOE_METRIC_DISTINCT) {
			put_distinct(m, st, row + c++, row + sk++);
			continue;
		}
		c += put_values(m, st, row + c);
		if (m->cfg->kind == FLOE_METRIC_QUANTILES)
			put_sketch(m, st, row + sk++);
	}
	/* A window's late events are counted once, in its first row. */
	bool first = h == agg_group_at(g, w, 0) || (over && w->ngroups == 0);
	row[floe_aggtable_late_col(g->table)] =
	    (struct floe_pq_value){.i = first ? (int64_t)w->late : 0};
	row[floe_aggtable_partial_col(g->table)] = (struct floe_pq_value){.i = partial};
	g->stats.rows++;
	return emit(arg, row, g->ncols);
}

int floe_agg_emit_window(struct floe_aggregator *g, const struct agg_window *w, bool partial,
			 floe_agg_emit_fn emit, void *arg)
{
	int rc = 0;
	for (uint32_t i = 0; rc == 0 && i < w->ngroups; i++)
		rc = emit_group(g, w, agg_group_at(g, w, i), false, partial, emit, arg);
	const struct agg_group *over = agg_group_at(g, w, g->cfg->max_groups);
	if (rc == 0 && over->used)
		rc = emit_group(g, w, over, true, partial, emit, arg);
	if (rc == 0)
		g->stats.windows++;
	return rc;
}
