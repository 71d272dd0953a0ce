/* The aggregator's plan (what a configuration costs: floe check's figures and the
 * memory rule's) and its start-up and end: the table, filters, metrics and windows built
 * once, so that the per-event path (aggregator.c) allocates nothing. See aggregator.h. */
#include "agent/agg/aggregator_impl.h"

#include "agent/parse/regex.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/libm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A `where: matches` value longer than this does not match (the regex's bound). */
#define WHERE_MAX_BYTES (1u << 20)

/* ---- the plan ------------------------------------------------------------------------- */

static void dds_config(const struct floe_config_metric *m, struct floe_dds_config *out)
{
	floe_dds_config_default(out);
	out->rel_acc = m->accuracy;
}

/* A window's pool holds, per group, this fraction of the largest form of each of its
 * sketches (a dense HLL, a DDSketch's full windows). The pool is shared by all the
 * window's groups and sketch metrics, and a sketch takes from it only what its values
 * need (a DDSketch window is sized to its occupied range), so it is an average over the
 * groups a window really fills, most of which never leave their own small memory: with
 * 5 hosts x 1,000 routes at 100 events a second, none do; with 1,000 keys of 300 events
 * each, a window of max_groups 1,000 takes about 9 MiB of its 16 MiB. Where a window's
 * groups need more, its pool grows at run time within the aggregation's ceiling
 * (floe_agg_set_growth), and only the sketches that find that taken go coarse, counted
 * (README.md). */
#define FLOE_AGG_POOL_FRACTION 8u

/* The largest form metric m's sketch takes from a pool: 0 for other metrics. */
static uint64_t largest_form(const struct floe_config_metric *m)
{
	struct floe_dds_config dc;
	if (m->kind == FLOE_METRIC_DISTINCT)
		return FLOE_AGG_ROUND8(floe_hll_pool_block(m->precision));
	if (m->kind != FLOE_METRIC_QUANTILES)
		return 0;
	dds_config(m, &dc);
	return FLOE_AGG_ROUND8(floe_dds_bytes(&dc));
}

/* A window's pool: the fraction per group, and one largest form of each sketch whatever
 * the fraction, so that one busy group (the __overflow__ group is one by design) keeps
 * its accuracy when max_groups is small. */
static uint64_t pool_bytes(const struct floe_config_agg *c)
{
	uint64_t groups = (uint64_t)c->max_groups + 1, pool = 0;
	for (size_t i = 0; i < c->nmetrics; i++) {
		uint64_t f = largest_form(&c->metrics[i]);
		pool += groups * FLOE_AGG_ROUND8(f / FLOE_AGG_POOL_FRACTION) + f;
	}
	return pool;
}

/* Bytes of a metric's state in a group (8-aligned). */
static uint64_t metric_bytes(const struct floe_config_metric *m)
{
	switch (m->kind) {
	case FLOE_METRIC_COUNT:
		return 8;
	case FLOE_METRIC_DISTINCT:
		return FLOE_AGG_ROUND8(sizeof(struct floe_hll)) + FLOE_AGG_ROUND8(floe_hll_list_bytes(m->precision));
	case FLOE_METRIC_QUANTILES:
		return FLOE_AGG_ROUND8(sizeof(struct floe_dds)) + FLOE_AGG_ROUND8(floe_dds_sparse_bytes());
	case FLOE_METRIC_TOP_K:
		return FLOE_AGG_ROUND8(sizeof(struct floe_ss)) + FLOE_AGG_ROUND8(floe_ss_bytes(m->k, m->key_bytes));
	default:
		return sizeof(struct agg_num);
	}
}

/* The windows an event goes in: window over slide (the configuration makes slide a
 * divisor of the window; rounded up all the same). */
static uint32_t event_windows(const struct floe_config_agg *c)
{
	return (uint32_t)((c->window_ms + c->slide_ms - 1) / c->slide_ms);
}

/* Rows of the batch (aggregator_batch.c): FLOE_AGG_BATCH, or one event's rows when a
 * top_k metric reads the record's text, which is borrowed only until floe_agg_add
 * returns, as it is added. */
static uint32_t batch_rows(const struct floe_config_agg *c)
{
	uint32_t nwin = event_windows(c);
	for (size_t i = 0; i < c->nmetrics; i++)
		if (c->metrics[i].kind == FLOE_METRIC_TOP_K)
			return nwin;
	return FLOE_AGG_BATCH > nwin ? FLOE_AGG_BATCH : nwin;
}

static uint64_t index_slots(uint32_t max_groups)
{
	uint64_t cap = 16;
	while (cap < 2 * (uint64_t)max_groups)
		cap *= 2;
	return cap;
}

int floe_agg_plan(const struct floe_config_agg *c, struct floe_agg_plan *out, struct floe_err *err)
{
	/* Open windows start in (newest - lateness - window, newest]: windows end past the
	 * watermark, and none starts after the newest event. Windows are closed before a
	 * record opens one, so that span over slide, rounded up, is all that is open. */
	uint64_t span = c->window_ms + c->allowed_lateness_ms;
	uint64_t windows = (span + c->slide_ms - 1) / c->slide_ms;
	if (windows > FLOE_AGG_MAX_WINDOWS)
		return floe_err_set(
		    err, FLOE_ELIMIT,
		    "window + allowed_lateness is %llu slides: %llu windows would be "
		    "open at once (at most %d)",
		    (unsigned long long)(span / c->slide_ms), (unsigned long long)windows,
		    FLOE_AGG_MAX_WINDOWS);
	uint64_t gb = sizeof(struct agg_group) + FLOE_AGG_ROUND8(c->max_key_bytes);
	uint64_t groups = (uint64_t)c->max_groups + 1, pool = pool_bytes(c), keys = 0;
	for (size_t i = 0; i < c->nmetrics; i++) {
		gb += metric_bytes(&c->metrics[i]);
		if (c->metrics[i].kind == FLOE_METRIC_QUANTILES)
			keys += FLOE_AGG_INT_KEYS * sizeof(int32_t);
	}
	/* Each window: its groups, its index and its pool; the sums stay far below
	 * 2^64 (at most 256 windows of 10^7 + 1 groups of a few hundred KiB), but size_t
	 * may be 32 bits. */
	uint64_t per_window =
	    groups * gb + index_slots(c->max_groups) * sizeof(uint32_t) + pool;
	uint64_t total = windows * (per_window + sizeof(struct agg_window)) + 64 * 1024 +
			 floe_agg_batch_bytes(c->nmetrics, batch_rows(c), c->max_key_bytes) + keys;
	if (total > SIZE_MAX / 2)
		return floe_err_set(
		    err, FLOE_ELIMIT,
		    "%llu windows of %llu groups of %llu bytes do not fit in memory",
		    (unsigned long long)windows, (unsigned long long)groups,
		    (unsigned long long)gb);
	*out = (struct floe_agg_plan){(uint32_t)windows, gb + (pool + groups - 1) / groups, groups,
				      total, pool};
	return 0;
}

/* ---- start-up ------------------------------------------------------------------------- */

/* A group key's column: an integer record column's type, an int or long typed column's
 * (its values are hashed and written as the integers they are), else a string (the
 * other typed columns' keys are their values' text). */
static enum floe_aggcol_type key_type(const struct agg_field *f)
{
	const struct floe_field_ref *r = &f->ref;
	if (r->src == FLOE_FIELD_SEVERITY || r->src == FLOE_FIELD_FACILITY ||
	    (f->typed && f->type == FLOE_COL_INT))
		return FLOE_AGGCOL_INT;
	if (r->src == FLOE_FIELD_OFFSET || (f->typed && f->type == FLOE_COL_LONG))
		return FLOE_AGGCOL_LONG;
	return FLOE_AGGCOL_STRING;
}

typedef char colname[FLOE_AGG_NAME_MAX + 1];

/* The value and sketch columns of metric m, names into names (as config checked them). */
static void metric_cols(const struct floe_config_metric *m, colname *names, size_t *nn,
			struct floe_aggcol *vals, size_t *nv, struct floe_aggcol *sk, size_t *ns)
{
	if (m->kind == FLOE_METRIC_QUANTILES) {
		for (size_t q = 0; q < m->nq; q++) {
			(void)floe_aggtable_quantile_name(m->name, m->qv[q], names[*nn],
							  sizeof(colname));
			vals[(*nv)++] = (struct floe_aggcol){names[(*nn)++], FLOE_AGGCOL_DOUBLE};
		}
	} else {
		enum floe_aggcol_type t = m->kind == FLOE_METRIC_COUNT	    ? FLOE_AGGCOL_LONG
					  : m->kind == FLOE_METRIC_DISTINCT ? FLOE_AGGCOL_LONG
					  : m->kind == FLOE_METRIC_TOP_K    ? FLOE_AGGCOL_MAP_LONG
									    : FLOE_AGGCOL_DOUBLE;
		vals[(*nv)++] = (struct floe_aggcol){m->name, t};
	}
	if (m->kind == FLOE_METRIC_QUANTILES || m->kind == FLOE_METRIC_DISTINCT) {
		(void)floe_aggtable_sketch_name(m->name, m->kind == FLOE_METRIC_QUANTILES,
						names[*nn], sizeof(colname));
		sk[(*ns)++] = (struct floe_aggcol){names[(*nn)++], FLOE_AGGCOL_BINARY};
	}
}

static int make_table(struct floe_aggregator *g, struct floe_err *err)
{
	const struct floe_config_agg *c = g->cfg;
	size_t cap = 8 + 2;
	for (size_t i = 0; i < c->nmetrics; i++)
		cap += c->metrics[i].nq + 2;
	struct floe_aggcol *cols = floe_calloc(g->a, cap, sizeof(*cols));
	colname *names = floe_calloc(g->a, cap, sizeof(*names));
	int rc = FLOE_ENOMEM;
	if (!cols || !names) {
		floe_err_set(err, rc, "out of memory for the aggregate table's columns");
		goto out;
	}
	struct floe_aggcol *keys = cols, *vals = cols + c->ngroup_by, *sk;
	size_t nn = 0, nv = 0, ns = 0;
	for (size_t i = 0; i < c->ngroup_by; i++) {
		size_t len;
		keys[i].name = floe_field_ref_column(&g->keys[i].ref, c->group_by[i], &len);
		keys[i].type = g->key_type[i] = key_type(&g->keys[i]);
	}
	for (size_t i = 0; i < c->nmetrics; i++)
		nv += c->metrics[i].kind == FLOE_METRIC_QUANTILES ? c->metrics[i].nq : 1;
	sk = vals + nv;
	nv = 0;
	for (size_t i = 0; i < c->nmetrics; i++)
		metric_cols(&c->metrics[i], names, &nn, vals, &nv, sk, &ns);
	rc = floe_aggtable_new(g->a, keys, c->ngroup_by, vals, nv, sk, ns, &g->table, err);
out:
	floe_free(g->a, cols);
	floe_free(g->a, names);
	return rc;
}

/* Reads field reference name into f, and whether a typed column of cols (NULL: none)
 * takes that attribute, as the record's typed values are matched (by the field a
 * column's values come from). */
static int field_parse(const char *name, const struct floe_colplan *cols, struct agg_field *f,
		       struct floe_err *err)
{
	memset(f, 0, sizeof(*f));
	f->col = -1;
	if (floe_field_ref_parse(name, strlen(name), &f->ref, err))
		return FLOE_EINVAL;
	for (size_t k = 0; cols && f->ref.src == FLOE_FIELD_ATTR && k < cols->n; k++) {
		const struct floe_col *c = &cols->col[k];
		if (strlen(c->from) == f->ref.attr_len &&
		    memcmp(c->from, f->ref.attr, f->ref.attr_len) == 0) {
			f->typed = true;
			f->type = c->type;
			break;
		}
	}
	return 0;
}

static int make_filters(struct floe_aggregator *g, const struct floe_colplan *cols,
			struct floe_err *err)
{
	const struct floe_config_agg *c = g->cfg;
	for (size_t i = 0; i < c->ngroup_by; i++)
		if (field_parse(c->group_by[i], cols, &g->keys[i], err))
			return FLOE_EINVAL;
	if (c->where.field && field_parse(c->where.field, cols, &g->where, err))
		return FLOE_EINVAL;
	if (c->where.matches)
		return floe_regex_new(g->a, c->where.matches, strlen(c->where.matches),
				      WHERE_MAX_BYTES, FLOE_REGEX_NOSUB, &g->re, err);
	return 0;
}

static int make_metrics(struct floe_aggregator *g, const struct floe_colplan *cols,
			struct floe_err *err)
{
	const struct floe_config_agg *c = g->cfg;
	g->metrics = floe_calloc(g->a, c->nmetrics, sizeof(*g->metrics));
	if (!g->metrics)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for the metrics");
	size_t off = sizeof(struct agg_group) + FLOE_AGG_ROUND8(c->max_key_bytes);
	for (size_t i = 0; i < c->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		m->cfg = &c->metrics[i];
		m->off = off;
		off += metric_bytes(m->cfg);
		dds_config(m->cfg, &m->dds);
		if (m->cfg->kind == FLOE_METRIC_QUANTILES) {
			m->int_keys = floe_calloc(g->a, FLOE_AGG_INT_KEYS, sizeof(int32_t));
			if (!m->int_keys)
				return floe_err_set(err, FLOE_ENOMEM, "out of memory for the metrics");
			floe_dds_int_keys(&m->dds, m->int_keys, FLOE_AGG_INT_KEYS);
		}
		m->has_field = m->cfg->field != NULL;
		if (m->has_field && field_parse(m->cfg->field, cols, &m->f, err))
			return FLOE_EINVAL;
		m->src = m;
		for (size_t j = 0; m->has_field && j < i && m->src == m; j++)
			if (g->metrics[j].has_field && strcmp(g->metrics[j].cfg->field,
							      m->cfg->field) == 0)
				m->src = &g->metrics[j];
	}
	g->stride = off;
	g->vcols = floe_calloc(g->a, c->nmetrics ? c->nmetrics : 1, sizeof(*g->vcols));
	if (!g->vcols)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for the metrics");
	g->pend_cap = batch_rows(c);
	if (floe_agg_batch_init(g))
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for the metrics");
	return 0;
}

static int make_windows(struct floe_aggregator *g, struct floe_err *err)
{
	uint32_t nw = g->plan.windows;
	size_t groups = (size_t)g->plan.groups * g->stride, pool = (size_t)g->plan.pool;
	size_t per = groups + g->cap * sizeof(uint32_t) + pool;
	g->win = floe_calloc(g->a, nw, sizeof(*g->win));
	/* One slab for every window; calloc: pages are only touched by the groups used and
	 * the part of a pool really taken. */
	g->slab = floe_calloc(g->a, nw, per);
	if (!g->win || !g->slab)
		return floe_err_set(err, FLOE_ENOMEM,
				    "out of memory for %u windows of %zu bytes of groups", nw, per);
	g->grow = (struct floe_agg_growth){.a = g->a,
					   .held = &g->stats.pool_grown,
					   .in_use = &g->stats.pool_bytes,
					   .refused = &g->stats.coarse};
	for (uint32_t i = 0; i < nw; i++) {
		struct agg_window *w = &g->win[i];
		w->groups = g->slab + (size_t)i * per;
		w->index = (uint32_t *)(void *)(w->groups + groups);
		w->pool = (struct floe_agg_pool){
		    .mem = (uint8_t *)(w->index + g->cap), .size = pool, .grow = &g->grow};
	}
	return 0;
}

/* The sketches of distinct and quantiles metrics call libm, which is loaded for them
 * only (platform/libm.h): where it cannot be, the aggregation fails here with the
 * loader's reason, not silently at its first group. */
static int load_libm(const struct floe_config_agg *c, struct floe_err *err)
{
	for (size_t i = 0; i < c->nmetrics; i++) {
		enum floe_agg_metric_kind k = c->metrics[i].kind;
		if (k != FLOE_METRIC_DISTINCT && k != FLOE_METRIC_QUANTILES)
			continue;
		char why[256];
		int rc = floe_libm_load(why, sizeof(why));
		if (rc)
			return floe_err_set(err, rc, "aggregation '%s': %s: distinct and quantiles "
					    "metrics need libm (Debian: the libc6 package)",
					    c->name, why);
		break;
	}
	return 0;
}

int floe_agg_new(struct floe_alloc *a, const struct floe_config_agg *c,
		 const struct floe_colplan *cols, struct floe_aggregator **out, struct floe_err *err)
{
	struct floe_aggregator *g = floe_calloc(a, 1, sizeof(*g));
	if (!g)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for an aggregation");
	g->a = a;
	g->cfg = c;
	g->window_us = (int64_t)c->window_ms * 1000;
	g->slide_us = (int64_t)c->slide_ms * 1000;
	g->lateness_us = (int64_t)c->allowed_lateness_ms * 1000;
	g->future_us = (int64_t)c->max_future_skew_ms * 1000;
	g->idle_us = (int64_t)c->idle_timeout_ms * 1000;
	g->now = INT64_MIN;
	g->timed_at = INT64_MIN;
	/* A step back within allowed_lateness loses nothing (the events after it are not
	 * late); a second is the floor, below which the clock's own reads differ. */
	g->clock_step_us = g->lateness_us > FLOE_AGG_CLOCK_STEP_MIN_US ? g->lateness_us
									: FLOE_AGG_CLOCK_STEP_MIN_US;
	g->key_cap = c->max_key_bytes;
	g->cap = (size_t)index_slots(c->max_groups);
	g->closed_until = INT64_MIN;
	g->next_close = INT64_MIN;
	g->step_hi = INT64_MIN; /* no step yet: every time is outside [0, INT64_MIN) */
	g->nwin = event_windows(c);
	int rc = floe_agg_plan(c, &g->plan, err);
	if (!rc)
		rc = load_libm(c, err);
	if (!rc)
		rc = make_filters(g, cols, err);
	if (!rc)
		rc = make_metrics(g, cols, err);
	if (!rc)
		rc = make_table(g, err);
	if (!rc)
		rc = make_windows(g, err);
	if (!rc)
		rc = floe_agg_emit_init(g);
	if (!rc)
		rc = floe_agg_state_init(g);
	if (rc == FLOE_ENOMEM)
		floe_err_set(err, rc, "out of memory for aggregation '%s'", c->name);
	if (rc) {
		floe_agg_free(g);
		return rc;
	}
	*out = g;
	return 0;
}

int floe_agg_table_of(struct floe_alloc *a, const struct floe_config_agg *c,
		      const struct floe_colplan *cols, struct floe_aggtable **out,
		      struct floe_err *err)
{
	struct floe_aggregator *g = floe_calloc(a, 1, sizeof(*g));
	if (!g)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for an aggregation");
	g->a = a;
	g->cfg = c;
	int rc = make_filters(g, cols, err);
	if (!rc)
		rc = make_table(g, err);
	if (!rc) {
		*out = g->table;
		g->table = NULL;
	}
	floe_agg_free(g);
	return rc;
}

void floe_agg_free(struct floe_aggregator *g)
{
	if (!g)
		return;
	for (size_t i = 0; g->metrics && i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		floe_free(g->a, m->int_keys);
		floe_free(g->a, m->sketch_buf);
		floe_free(g->a, m->items);
		floe_free(g->a, (void *)m->keys);
		floe_free(g->a, m->key_lens);
		floe_free(g->a, m->ivals);
	}
	for (uint32_t i = 0; g->win && i < g->plan.windows; i++)
		floe_agg_pool_reset(&g->win[i].pool);
	floe_free(g->a, g->metrics);
	floe_agg_batch_fini(g);
	floe_free(g->a, g->vcols);
	floe_free(g->a, g->row);
	floe_free(g->a, g->img);
	floe_free(g->a, g->slab);
	floe_free(g->a, g->win);
	floe_regex_free(g->re);
	floe_aggtable_free(g->table);
	floe_free(g->a, g);
}

void floe_agg_set_growth(struct floe_aggregator *g, uint64_t ceiling)
{
	g->grow.ceiling = ceiling;
}

const struct floe_aggtable *floe_agg_table(const struct floe_aggregator *g)
{
	return g->table;
}

const struct floe_agg_stats *floe_agg_stats(const struct floe_aggregator *g)
{
	return &g->stats;
}

bool floe_agg_takes(const struct floe_aggregator *g, size_t input)
{
	for (size_t k = 0; k < g->cfg->nfrom; k++)
		if (g->cfg->from_idx[k] == input)
			return true;
	return g->cfg->nfrom == 0;
}
