/* The aggregator: its plan and start-up, windows by event time, and the per-event path
 * (filter, key, group, metrics), which allocates nothing. See aggregator.h. */
#include "agent/agg/aggregator_impl.h"

#include "agent/parse/regex.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/libm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUND8(n) (((n) + 7u) & ~(uint64_t)7u)
/* A `where: matches` value longer than this does not match (the regex's bound). */
#define WHERE_MAX_BYTES (1u << 20)

/* ---- the plan ------------------------------------------------------------------------- */

static void dds_config(const struct floe_config_metric *m, struct floe_dds_config *out)
{
	floe_dds_config_default(out);
	out->rel_acc = m->accuracy;
}

/* Dense sketch blocks per window and sketch metric: one for every FLOE_AGG_DENSE_SHARE
 * groups (agent/agg/README.md says why it is 1 for now: with fewer, the busy groups past
 * the pool's share went coarse, and a coarse DDSketch's low quantiles are off). */
#define FLOE_AGG_DENSE_SHARE 1u

static uint64_t dense_blocks(uint32_t max_groups)
{
	return max_groups / FLOE_AGG_DENSE_SHARE + 1;
}

/* Bytes of one dense block of a sketch metric's pool, or 0 for other metrics. */
static uint64_t block_bytes(const struct floe_config_metric *m)
{
	struct floe_dds_config dc;
	if (m->kind == FLOE_METRIC_DISTINCT)
		return ROUND8(floe_hll_pool_block(m->precision));
	if (m->kind != FLOE_METRIC_QUANTILES)
		return 0;
	dds_config(m, &dc);
	return ROUND8(floe_dds_bytes(&dc));
}

/* Bytes of a metric's state in a group (8-aligned). */
static uint64_t metric_bytes(const struct floe_config_metric *m)
{
	switch (m->kind) {
	case FLOE_METRIC_COUNT:
		return 8;
	case FLOE_METRIC_DISTINCT:
		return ROUND8(sizeof(struct floe_hll)) + ROUND8(floe_hll_list_bytes(m->precision));
	case FLOE_METRIC_QUANTILES:
		return ROUND8(sizeof(struct floe_dds)) + ROUND8(floe_dds_sparse_bytes());
	case FLOE_METRIC_TOP_K:
		return ROUND8(sizeof(struct floe_ss)) + ROUND8(floe_ss_bytes(m->k, m->key_bytes));
	default:
		return sizeof(struct agg_num);
	}
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
	uint64_t gb = sizeof(struct agg_group) + ROUND8(c->max_key_bytes), pool = 0;
	for (size_t i = 0; i < c->nmetrics; i++) {
		gb += metric_bytes(&c->metrics[i]);
		pool += dense_blocks(c->max_groups) * block_bytes(&c->metrics[i]);
	}
	uint64_t groups = (uint64_t)c->max_groups + 1;
	/* Each window: its groups, its index and its dense blocks; the sums stay far below
	 * 2^64 (at most 256 windows of 10^7 + 1 groups of a few hundred KiB), but size_t
	 * may be 32 bits. */
	uint64_t per_window =
	    groups * gb + index_slots(c->max_groups) * sizeof(uint32_t) + pool;
	uint64_t total = windows * (per_window + sizeof(struct agg_window)) + 64 * 1024;
	if (total > SIZE_MAX / 2)
		return floe_err_set(
		    err, FLOE_ELIMIT,
		    "%llu windows of %llu groups of %llu bytes do not fit in memory",
		    (unsigned long long)windows, (unsigned long long)groups,
		    (unsigned long long)gb);
	*out = (struct floe_agg_plan){(uint32_t)windows, gb + (pool + groups - 1) / groups, groups,
				      total, dense_blocks(c->max_groups)};
	return 0;
}

/* ---- start-up ------------------------------------------------------------------------- */

static enum floe_aggcol_type key_type(const struct floe_field_ref *r)
{
	if (r->src == FLOE_FIELD_SEVERITY || r->src == FLOE_FIELD_FACILITY)
		return FLOE_AGGCOL_INT;
	return r->src == FLOE_FIELD_OFFSET ? FLOE_AGGCOL_LONG : FLOE_AGGCOL_STRING;
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
		keys[i].name = floe_field_ref_column(&g->keys[i], c->group_by[i], &len);
		keys[i].type = key_type(&g->keys[i]);
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

static int make_filters(struct floe_aggregator *g, struct floe_err *err)
{
	const struct floe_config_agg *c = g->cfg;
	for (size_t i = 0; i < c->ngroup_by; i++)
		if (floe_field_ref_parse(c->group_by[i], strlen(c->group_by[i]), &g->keys[i], err))
			return FLOE_EINVAL;
	if (c->where.field &&
	    floe_field_ref_parse(c->where.field, strlen(c->where.field), &g->where_ref, err))
		return FLOE_EINVAL;
	if (c->where.matches)
		return floe_regex_new(g->a, c->where.matches, strlen(c->where.matches),
				      WHERE_MAX_BYTES, FLOE_REGEX_NOSUB, &g->re, err);
	return 0;
}

static int make_metrics(struct floe_aggregator *g, struct floe_err *err)
{
	const struct floe_config_agg *c = g->cfg;
	g->metrics = floe_calloc(g->a, c->nmetrics, sizeof(*g->metrics));
	if (!g->metrics)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for the metrics");
	size_t off = sizeof(struct agg_group) + ROUND8(c->max_key_bytes);
	for (size_t i = 0; i < c->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		m->cfg = &c->metrics[i];
		m->off = off;
		off += metric_bytes(m->cfg);
		dds_config(m->cfg, &m->dds);
		m->has_field = m->cfg->field != NULL;
		if (m->has_field &&
		    floe_field_ref_parse(m->cfg->field, strlen(m->cfg->field), &m->ref, err))
			return FLOE_EINVAL;
		m->same = -1;
		for (size_t j = 0; m->has_field && j < i && m->same < 0; j++)
			if (g->metrics[j].has_field && strcmp(g->metrics[j].cfg->field,
							      m->cfg->field) == 0)
				m->same = (ptrdiff_t)j;
	}
	g->stride = off;
	return 0;
}

static int make_windows(struct floe_aggregator *g, struct floe_err *err)
{
	uint32_t nw = g->plan.windows;
	size_t nm = g->cfg->nmetrics, groups = (size_t)g->plan.groups * g->stride, pool = 0;
	for (size_t k = 0; k < nm; k++)
		pool += (size_t)(g->plan.dense * block_bytes(g->metrics[k].cfg));
	size_t per = groups + g->cap * sizeof(uint32_t) + pool;
	g->win = floe_calloc(g->a, nw, sizeof(*g->win));
	g->pools = floe_calloc(g->a, (size_t)nw * nm + 1, sizeof(*g->pools));
	g->key = floe_malloc(g->a, g->key_cap);
	/* One slab for every window; calloc: pages are only touched by the groups used. */
	g->slab = floe_calloc(g->a, nw, per);
	if (!g->win || !g->pools || !g->slab || !g->key)
		return floe_err_set(err, FLOE_ENOMEM,
				    "out of memory for %u windows of %zu bytes of groups", nw, per);
	for (uint32_t i = 0; i < nw; i++) {
		struct agg_window *w = &g->win[i];
		w->groups = g->slab + (size_t)i * per;
		w->index = (uint32_t *)(void *)(w->groups + groups);
		w->pools = g->pools + (size_t)i * nm;
		uint8_t *at = (uint8_t *)(w->index + g->cap);
		for (size_t k = 0; k < nm; k++) {
			size_t b = (size_t)block_bytes(g->metrics[k].cfg);
			w->pools[k] = (struct floe_agg_pool){at, b, b ? (uint32_t)g->plan.dense : 0,
							     0, &g->stats.coarse};
			at += (size_t)g->plan.dense * b;
		}
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
		 struct floe_aggregator **out, struct floe_err *err)
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
	g->key_cap = c->max_key_bytes;
	g->cap = (size_t)index_slots(c->max_groups);
	g->closed_until = INT64_MIN;
	int rc = floe_agg_plan(c, &g->plan, err);
	if (!rc)
		rc = load_libm(c, err);
	if (!rc)
		rc = make_filters(g, err);
	if (!rc)
		rc = make_metrics(g, err);
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
		      struct floe_aggtable **out, struct floe_err *err)
{
	struct floe_aggregator *g = floe_calloc(a, 1, sizeof(*g));
	if (!g)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for an aggregation");
	g->a = a;
	g->cfg = c;
	int rc = make_filters(g, err);
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
		floe_free(g->a, m->sketch_buf);
		floe_free(g->a, m->items);
		floe_free(g->a, (void *)m->keys);
		floe_free(g->a, m->key_lens);
		floe_free(g->a, m->ivals);
	}
	floe_free(g->a, g->metrics);
	floe_free(g->a, g->row);
	floe_free(g->a, g->img);
	floe_free(g->a, g->slab);
	floe_free(g->a, g->key);
	floe_free(g->a, g->win);
	floe_free(g->a, g->pools);
	floe_regex_free(g->re);
	floe_aggtable_free(g->table);
	floe_free(g->a, g);
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

/* ---- fields of a record ----------------------------------------------------------------- */

/* A field's value: a string (s, len) or an integer (isint, i). */
static bool str_of(struct floe_str v, struct agg_fval *out)
{
	out->s = v.p;
	out->len = v.len;
	return v.p != NULL;
}

static bool int_of(bool has, int64_t v, struct agg_fval *out)
{
	out->isint = true;
	out->i = v;
	int n = snprintf(out->num, sizeof(out->num), "%lld", (long long)v);
	out->s = out->num;
	out->len = n > 0 ? (size_t)n : 0;
	return has;
}

/* Reads field f of r into out; false when the record has no value there. An attribute
 * is looked for first in the slot *hint it was found in last time (records of one input
 * carry their attributes in one order), then in every slot. */
static bool field_get(const struct floe_record *r, const struct floe_field_ref *f, size_t *hint,
		      struct agg_fval *out)
{
	out->isint = false;
	switch (f->src) {
	case FLOE_FIELD_HOST:
		return str_of(r->host, out);
	case FLOE_FIELD_SOURCE:
		return str_of(r->source, out);
	case FLOE_FIELD_APP:
		return str_of(r->app, out);
	case FLOE_FIELD_PROC_ID:
		return str_of(r->proc_id, out);
	case FLOE_FIELD_MSG_ID:
		return str_of(r->msg_id, out);
	case FLOE_FIELD_MESSAGE:
		return str_of(r->message, out);
	case FLOE_FIELD_SEVERITY:
		return int_of(r->has_severity, r->severity, out);
	case FLOE_FIELD_FACILITY:
		return int_of(r->has_facility, r->facility, out);
	case FLOE_FIELD_OFFSET:
		return int_of(r->has_offset, r->offset, out);
	case FLOE_FIELD_ATTR:
		break;
	}
	size_t i = *hint;
	if (i >= r->nattrs || r->attr_key_lens[i] != f->attr_len ||
	    memcmp(r->attr_keys[i], f->attr, f->attr_len) != 0) {
		for (i = 0; i < r->nattrs; i++)
			if (r->attr_key_lens[i] == f->attr_len &&
			    memcmp(r->attr_keys[i], f->attr, f->attr_len) == 0)
				break;
		if (i == r->nattrs)
			return false;
		*hint = i;
	}
	out->s = r->attr_vals[i];
	out->len = out->s ? r->attr_val_lens[i] : 0;
	return out->s != NULL;
}

/* Exact powers of ten as doubles (10^22 is the largest a double holds exactly). */
static const double pow10_exact[] = {1e0,  1e1,	 1e2,  1e3,  1e4,  1e5,	 1e6,  1e7,
				     1e8,  1e9,	 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				     1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* The common case of number_of without strtod: an optional sign, digits and an optional
 * fraction, at most 15 digits in all. The digits then form an integer below 2^53 and the
 * divisor is an exact power of ten, so one IEEE division rounds correctly and gives
 * exactly strtod's double (Clinger's fast path). Returns -1 when the text is outside
 * this case (strtod decides), else 1 with *out set. */
static int fast_decimal(const char *s, size_t n, double *out)
{
	size_t i = 0, digits = 0, frac = 0;
	bool neg = false, dot = false;
	uint64_t mant = 0;
	if (n && (s[0] == '-' || s[0] == '+'))
		neg = s[i++] == '-';
	for (; i < n; i++) {
		unsigned c = (unsigned char)s[i];
		if (c == '.' && !dot) {
			dot = true;
			continue;
		}
		if (c - '0' > 9 || ++digits > 15)
			return -1;
		mant = mant * 10 + (c - '0');
		frac += dot;
	}
	if (!digits)
		return -1;
	double d = (double)mant / pow10_exact[frac];
	*out = neg ? -d : d;
	return 1;
}

/* A number from a field: an integer field as is, a string when it is a whole finite
 * decimal (strtod's syntax less hex, inf and nan). */
static bool number_of(const struct agg_fval *v, double *out)
{
	if (v->isint) {
		*out = (double)v->i;
		return true;
	}
	if (fast_decimal(v->s, v->len, out) > 0)
		return true;
	char buf[64];
	if (v->len == 0 || v->len >= sizeof(buf))
		return false;
	for (size_t i = 0; i < v->len; i++)
		if (!memchr("0123456789.eE+-", v->s[i], 15))
			return false;
	memcpy(buf, v->s, v->len);
	buf[v->len] = '\0';
	char *end = NULL;
	double d = strtod(buf, &end);
	if (end != buf + v->len || !isfinite(d))
		return false;
	*out = d;
	return true;
}

static bool where_keeps(struct floe_aggregator *g, const struct floe_record *r)
{
	const struct floe_config_agg *c = g->cfg;
	if (!c->where.field)
		return true;
	struct agg_fval v;
	if (!field_get(r, &g->where_ref, &g->where_hint, &v))
		return false;
	if (c->where.equals)
		return strlen(c->where.equals) == v.len && memcmp(c->where.equals, v.s, v.len) == 0;
	if (g->re) {
		bool matched = false;
		return floe_regex_test(g->re, v.s, v.len, &matched) == 0 && matched;
	}
	return true; /* present */
}

/* ---- groups ----------------------------------------------------------------------------- */

/* Encodes r's group key into key (g->key_cap bytes); false when it does not fit. */
static bool make_key(struct floe_aggregator *g, const struct floe_record *r, uint8_t *key,
		     size_t *len)
{
	size_t n = 0;
	for (size_t i = 0; i < g->cfg->ngroup_by; i++) {
		struct agg_fval v;
		bool has = field_get(r, &g->keys[i], &g->key_hint[i], &v);
		size_t need = !has ? 1 : v.isint ? 9 : 5 + v.len;
		if (need > g->key_cap - n)
			return false;
		key[n] = !has ? 0 : v.isint ? 2 : 1;
		if (has && v.isint) {
			memcpy(key + n + 1, &v.i, 8);
		} else if (has) {
			uint32_t l = (uint32_t)v.len;
			memcpy(key + n + 1, &l, 4);
			memcpy(key + n + 5, v.s, v.len);
		}
		n += need;
	}
	*len = n;
	return true;
}

static void metrics_reset(struct floe_aggregator *g, struct agg_window *w, uint8_t *grp)
{
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		uint8_t *st = grp + m->off;
		size_t hdr;
		switch (m->cfg->kind) {
		case FLOE_METRIC_DISTINCT:
			hdr = ROUND8(sizeof(struct floe_hll));
			(void)floe_hll_init_pooled((struct floe_hll *)(void *)st,
						   m->cfg->precision, st + hdr,
						   floe_hll_list_bytes(m->cfg->precision),
						   &w->pools[i]);
			break;
		case FLOE_METRIC_QUANTILES:
			hdr = ROUND8(sizeof(struct floe_dds));
			(void)floe_dds_init_pooled((struct floe_dds *)(void *)st, &m->dds,
						   st + hdr, floe_dds_sparse_bytes(),
						   &w->pools[i]);
			break;
		case FLOE_METRIC_TOP_K:
			hdr = ROUND8(sizeof(struct floe_ss));
			(void)floe_ss_init((struct floe_ss *)(void *)st, m->cfg->k,
					   m->cfg->key_bytes, st + hdr,
					   floe_ss_bytes(m->cfg->k, m->cfg->key_bytes));
			break;
		default:
			memset(st, 0,
			       m->cfg->kind == FLOE_METRIC_COUNT ? 8 : sizeof(struct agg_num));
		}
	}
}

/* The group of key in w: found, taken, or the overflow group. Sketches are laid over
 * their memory when a group is taken, so a window's reuse costs only the groups used. */
static uint8_t *group_for(struct floe_aggregator *g, struct agg_window *w, const uint8_t *key,
			  size_t len, bool fits)
{
	size_t over = g->cfg->max_groups;
	struct agg_group *h;
	if (fits) {
		uint64_t hash = floe_hll_hash(key, len);
		size_t mask = g->cap - 1, s = (size_t)hash & mask;
		for (; w->index[s]; s = (s + 1) & mask) {
			h = agg_group_at(g, w, w->index[s] - 1);
			if (h->hash == hash && h->keylen == len &&
			    memcmp((uint8_t *)(h + 1), key, len) == 0)
				return (uint8_t *)h;
		}
		if (w->ngroups < over) {
			h = agg_group_at(g, w, w->ngroups);
			w->index[s] = ++w->ngroups;
			h->hash = hash;
			h->keylen = (uint32_t)len;
			h->used = 1;
			memcpy((uint8_t *)(h + 1), key, len);
			metrics_reset(g, w, (uint8_t *)h);
			return (uint8_t *)h;
		}
	}
	h = agg_group_at(g, w, over);
	if (!h->used) {
		h->used = 1;
		h->keylen = 0;
		metrics_reset(g, w, (uint8_t *)h);
	}
	g->stats.overflowed++;
	return (uint8_t *)h;
}

static void num_update(enum floe_agg_metric_kind k, struct agg_num *s, double d)
{
	if (s->n == 0 || k == FLOE_METRIC_SUM || k == FLOE_METRIC_AVG)
		s->v = s->n == 0 ? d : s->v + d;
	else if (k == FLOE_METRIC_MIN ? d < s->v : d > s->v)
		s->v = d;
	s->n++;
}

/* The value of metric m's field in r, read once per event for every metric of that
 * field (metrics_add resets cur_num first). */
static bool metric_value(struct floe_aggregator *g, struct agg_metric *m,
			 const struct floe_record *r)
{
	if (m->same < 0) {
		m->cur_has = field_get(r, &m->ref, &m->hint, &m->cur);
		return m->cur_has;
	}
	const struct agg_metric *o = &g->metrics[m->same];
	m->cur_has = o->cur_has;
	m->cur = o->cur;
	if (o->cur.s == o->cur.num)
		m->cur.s = m->cur.num;
	m->cur_num = o->cur_num;
	m->cur_d = o->cur_d;
	return m->cur_has;
}

/* Metric m's value as a number, parsed at most once per event for all its metrics. */
static bool metric_number(struct agg_metric *m, double *d)
{
	if (m->cur_num == 0)
		m->cur_num = number_of(&m->cur, &m->cur_d) ? 1 : -1;
	*d = m->cur_d;
	return m->cur_num > 0;
}

/* Reads the metrics' fields of r, and starts loading the HyperLogLog register each
 * distinct metric will update: with a thousand groups the registers are megabytes apart,
 * and the load would otherwise stall the update after the other metrics' work. */
static void metrics_read(struct floe_aggregator *g, uint8_t *grp, const struct floe_record *r)
{
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		m->cur_num = 0;
		m->cur_has = !m->has_field || metric_value(g, m, r);
		if (m->cur_has && m->cfg->kind == FLOE_METRIC_DISTINCT) {
			m->cur_hash = floe_hll_hash(m->cur.s, m->cur.len);
			/* The sketch's header and the start of its coupon list. */
			__builtin_prefetch(grp + m->off, 1);
		}
	}
}

static void metrics_add(struct floe_aggregator *g, uint8_t *grp, const struct floe_record *r)
{
	metrics_read(g, grp, r);
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		uint8_t *st = grp + m->off;
		double d;
		if (!m->cur_has)
			continue;
		switch (m->cfg->kind) {
		case FLOE_METRIC_COUNT:
			(*(uint64_t *)(void *)st)++;
			break;
		case FLOE_METRIC_DISTINCT:
			floe_hll_add_hash((struct floe_hll *)(void *)st, m->cur_hash);
			break;
		case FLOE_METRIC_TOP_K:
			floe_ss_add((struct floe_ss *)(void *)st, m->cur.s, m->cur.len);
			break;
		case FLOE_METRIC_QUANTILES:
			if (!metric_number(m, &d) ||
			    floe_dds_add((struct floe_dds *)(void *)st, d))
				g->stats.unparsable++;
			break;
		default:
			if (metric_number(m, &d))
				num_update(m->cfg->kind, (struct agg_num *)(void *)st, d);
			else
				g->stats.unparsable++;
		}
	}
}

/* ---- windows ----------------------------------------------------------------------------- */

/* The open window of start, opened if need be (its slot is free: windows are closed
 * before a newer one can need their slot). */
static struct agg_window *window_for(struct floe_aggregator *g, int64_t start)
{
	struct agg_window *w = agg_slot_of(g, start);
	if (w->open && w->start == start)
		return w;
	w->open = true;
	w->start = start;
	w->ngroups = 0;
	w->late = g->pending_late;
	g->pending_late = 0;
	agg_group_at(g, w, g->cfg->max_groups)->used = 0;
	memset(w->index, 0, g->cap * sizeof(uint32_t));
	for (size_t i = 0; i < g->cfg->nmetrics; i++)
		floe_agg_pool_reset(&w->pools[i]);
	return w;
}

static struct agg_window *oldest_open(struct floe_aggregator *g)
{
	struct agg_window *o = NULL;
	for (uint32_t i = 0; i < g->plan.windows; i++)
		if (g->win[i].open && (!o || g->win[i].start < o->start))
			o = &g->win[i];
	return o;
}

/* Emits and frees, oldest first, every open window ending at or before until. */
static int close_until(struct floe_aggregator *g, int64_t until, bool partial,
		       floe_agg_emit_fn emit, void *arg)
{
	struct agg_window *w;
	while ((w = oldest_open(g)) && (partial || w->start + g->window_us <= until)) {
		int rc = floe_agg_emit_window(g, w, partial, emit, arg);
		if (rc)
			return rc;
		w->open = false;
		/* A flushed window may open again (events after a restart add a row to it). */
		if (!partial && w->start + g->window_us > g->closed_until)
			g->closed_until = w->start + g->window_us;
	}
	if (until > g->closed_until)
		g->closed_until = until;
	return 0;
}

static void add_to(struct floe_aggregator *g, struct agg_window *w, const struct floe_record *r,
		   const uint8_t *key, size_t len, bool fits)
{
	metrics_add(g, group_for(g, w, key, len, fits), r);
}

int floe_agg_add(struct floe_aggregator *g, const struct floe_record *r, floe_agg_emit_fn emit,
		 void *arg)
{
	if (!where_keeps(g, r)) {
		g->stats.filtered++;
		return 0;
	}
	g->stats.events++;
	g->last_received = r->received_at;
	/* An event time far ahead of the clock (a device's clock reset, a mistyped year)
	 * would move the watermark there and make every real event after it late, across
	 * restarts too (the watermark is in the image). It opens no window and moves
	 * nothing: it goes where a late event goes, and is counted. The difference is taken
	 * unsigned, where it cannot overflow. */
	bool future = r->ts > r->received_at &&
		      (uint64_t)r->ts - (uint64_t)r->received_at > (uint64_t)g->future_us;
	if (!future && (!g->seen || r->ts > g->max_ts)) {
		g->seen = true;
		g->max_ts = r->ts;
		int rc = close_until(g, g->max_ts - g->lateness_us, false, emit, arg);
		if (rc)
			return rc;
	}
	uint8_t *key = g->key;
	size_t len = 0;
	bool fits = make_key(g, r, key, &len);
	bool added = false;
	int64_t last = agg_floor_div(r->ts, g->slide_us) * g->slide_us;
	for (int64_t s = last; !future && s > r->ts - g->window_us; s -= g->slide_us) {
		if (s + g->window_us <= g->closed_until)
			break; /* this and every earlier window closed */
		add_to(g, window_for(g, s), r, key, len, fits);
		added = true;
	}
	if (added)
		return 0;
	if (future)
		g->stats.future++;
	g->stats.late++;
	struct agg_window *o = oldest_open(g);
	if (!o) {
		g->pending_late++;
		g->stats.late_dropped++;
		return 0;
	}
	o->late++;
	if (g->cfg->late == FLOE_LATE_OLDEST_OPEN)
		add_to(g, o, r, key, len, fits);
	else
		g->stats.late_dropped++;
	return 0;
}

int floe_agg_tick(struct floe_aggregator *g, int64_t now_us, floe_agg_emit_fn emit, void *arg)
{
	if (!g->seen || now_us - g->last_received < g->idle_us || !oldest_open(g))
		return 0;
	/* Every open window closes as if the watermark had passed them all: they start at
	 * or before the newest event time. */
	return close_until(g, g->max_ts + g->window_us, false, emit, arg);
}

int floe_agg_flush(struct floe_aggregator *g, floe_agg_emit_fn emit, void *arg)
{
	return close_until(g, INT64_MIN, true, emit, arg);
}
