/* Adding a batch of read events: the rows' groups are found (keys hashed in one loop,
 * looked up in event order), the rows partitioned by group (a counting sort, stable, so
 * a group's events keep their order), then each group's metrics are run over its values,
 * one loop per metric, while that group's sketches sit in cache. See aggregator_impl.h
 * (struct agg_batch) and README.md ("Adding in batches, by group"). */
#include "agent/agg/aggregator_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

/* The map's slots for rows rows: a power of two at least twice as many, so that it is at
 * most half full when every row has its own group. */
static uint32_t map_slots(uint32_t rows)
{
	uint32_t n = 16;
	while (n < 2 * rows)
		n *= 2;
	return n;
}

/* The keys' room for rows rows of keys up to key_cap bytes: 32 bytes a row (three keys of
 * a few bytes each fit; a batch of longer keys is added before its rows are all taken),
 * and at least one key of key_cap. */
static uint64_t keys_room(uint32_t rows, size_t key_cap)
{
	return FLOE_AGG_ROUND8(32 * (uint64_t)rows + key_cap);
}

uint64_t floe_agg_batch_bytes(size_t nmetrics, uint32_t rows, size_t key_cap)
{
	uint64_t slots = map_slots(rows), n = rows;
	return (nmetrics ? nmetrics : 1) * n * sizeof(struct agg_mval) + n * 3 * sizeof(void *) +
	       n * sizeof(uint64_t) + slots * sizeof(uint8_t *) + (6 * n + 1) * sizeof(uint32_t) +
	       slots * sizeof(uint32_t) + keys_room(rows, key_cap);
}

/* The kind of value metric m takes from each event. */
static enum agg_vkind vkind(const struct agg_metric *m)
{
	switch (m->cfg->kind) {
	case FLOE_METRIC_COUNT:
		return AGG_V_PRESENT;
	case FLOE_METRIC_TOP_K:
		return AGG_V_TEXT;
	case FLOE_METRIC_DISTINCT:
		return AGG_V_HASH;
	default:
		return AGG_V_NUMBER;
	}
}

/* Lays out g's value columns over the batch's values (at most one per metric) and points
 * each metric at its column's rows. */
static void vcols_make(struct floe_aggregator *g)
{
	g->nvcols = 0;
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		bool q = m->cfg->kind == FLOE_METRIC_QUANTILES;
		m->vals = NULL;
		if (!m->has_field)
			continue; /* count: every event */
		struct agg_vcol *c = NULL;
		for (uint32_t k = 0; k < g->nvcols && !c; k++)
			if (g->vcols[k].src == m->src && g->vcols[k].kind == vkind(m) &&
			    !(q && g->vcols[k].keyed))
				c = &g->vcols[k];
		if (!c) {
			c = &g->vcols[g->nvcols];
			*c = (struct agg_vcol){.src = m->src,
					       .vals = g->b.vals + g->nvcols * (size_t)g->pend_cap,
					       .kind = vkind(m),
					       .reads = m->src == m};
			g->nvcols++;
		}
		c->keyed |= q;
		m->vals = c->vals;
	}
}

int floe_agg_batch_init(struct floe_aggregator *g)
{
	struct agg_batch *b = &g->b;
	uint32_t n = g->pend_cap, slots = map_slots(n);
	size_t nm = g->cfg->nmetrics ? g->cfg->nmetrics : 1;
	/* One block, the 8-byte members first so that every array is aligned. */
	uint8_t *p = floe_calloc(g->a, 1, (size_t)floe_agg_batch_bytes(nm, n, g->key_cap));
	if (!p)
		return FLOE_ENOMEM;
	b->vals = (struct agg_mval *)(void *)p;
	vcols_make(g);
	p += nm * n * sizeof(struct agg_mval);
	b->khash = (uint64_t *)(void *)p;
	b->win = (struct agg_window **)(void *)(b->khash + n);
	b->grp = (uint8_t **)(void *)(b->win + n);
	b->ids = b->grp + n;
	b->map = b->ids + n;
	uint32_t *u = (uint32_t *)(void *)(b->map + slots);
	b->gid = u;
	b->order = u + n;
	b->slot_of = u + 2 * n;
	b->koff = u + 3 * n;
	b->klen = u + 4 * n;
	b->start = u + 5 * n; /* n + 1 of them */
	b->map_id = u + 6 * n + 1;
	b->keys = (uint8_t *)(b->map_id + slots);
	b->keys_cap = (uint32_t)keys_room(n, g->key_cap);
	b->keys_used = 0;
	b->map_cap = slots;
	return 0;
}

void floe_agg_batch_fini(struct floe_aggregator *g)
{
	floe_free(g->a, g->b.vals);
	memset(&g->b, 0, sizeof(g->b));
}

static void metrics_reset(struct floe_aggregator *g, struct agg_window *w, uint8_t *grp)
{
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		struct agg_metric *m = &g->metrics[i];
		uint8_t *st = grp + m->off;
		size_t hdr;
		switch (m->cfg->kind) {
		case FLOE_METRIC_DISTINCT:
			hdr = FLOE_AGG_ROUND8(sizeof(struct floe_hll));
			(void)floe_hll_init_pooled((struct floe_hll *)(void *)st, m->cfg->precision,
						   st + hdr, floe_hll_list_bytes(m->cfg->precision),
						   &w->pool);
			break;
		case FLOE_METRIC_QUANTILES:
			hdr = FLOE_AGG_ROUND8(sizeof(struct floe_dds));
			(void)floe_dds_init_pooled((struct floe_dds *)(void *)st, &m->dds, st + hdr,
						   floe_dds_sparse_bytes(), &w->pool);
			break;
		case FLOE_METRIC_TOP_K:
			hdr = FLOE_AGG_ROUND8(sizeof(struct floe_ss));
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

/* The group of key in w (hash: floe_hll_hash of it): found, taken, or the overflow
 * group. Sketches are laid over
 * their memory when a group is taken, so a window's reuse costs only the groups used. */
static uint8_t *group_for(struct floe_aggregator *g, struct agg_window *w, const uint8_t *key,
			  size_t len, uint64_t hash, bool fits)
{
	size_t over = g->cfg->max_groups;
	struct agg_group *h;
	if (fits) {
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

/* Group lookups started ahead of the one being made: the index slot's group header is
 * loaded that many rows before it is compared. */
#define FLOE_AGG_FIND_AHEAD 16u

/* Finds the group of each of the n rows, in event order: a window's first max_groups
 * keys take groups, the rest go to its overflow group, as adding events one by one
 * does. The keys are hashed in one loop, then looked up with the header a later row's
 * first index slot names loading meanwhile (with a thousand groups the headers are
 * kilobytes apart, and most lookups would otherwise wait for one). */
static void find_groups(struct floe_aggregator *g, uint32_t n)
{
	struct agg_batch *b = &g->b;
	for (uint32_t r = 0; r < n; r++)
		b->khash[r] =
		    b->klen[r] == UINT32_MAX ? 0 : floe_hll_hash(b->keys + b->koff[r], b->klen[r]);
	size_t mask = g->cap - 1;
	for (uint32_t r = 0; r < n; r++) {
		uint32_t l = r + FLOE_AGG_FIND_AHEAD;
		if (l < n && b->klen[l] != UINT32_MAX) {
			uint32_t id = b->win[l]->index[b->khash[l] & mask];
			if (id)
				__builtin_prefetch(agg_group_at(g, b->win[l], id - 1));
		}
		bool fits = b->klen[r] != UINT32_MAX;
		b->grp[r] = group_for(g, b->win[r], b->keys + b->koff[r], fits ? b->klen[r] : 0,
				      b->khash[r], fits);
	}
	b->keys_used = 0;
}

/* Gives each of the n rows its group's local id (in order of first appearance) and lays
 * the rows out by group in b->order, group j's from b->start[j] to b->start[j + 1].
 * Returns the number of groups. The map is left empty. */
static uint32_t partition(struct agg_batch *b, uint32_t n)
{
	uint32_t ngroups = 0, mask = b->map_cap - 1;
	for (uint32_t r = 0; r < n; r++) {
		uint8_t *grp = b->grp[r];
		/* Group records are at least 8-aligned: the pointer's low bits say nothing. */
		uint64_t h = ((uint64_t)(uintptr_t)grp >> 3) * 0x9E3779B97F4A7C15ull;
		uint32_t s = (uint32_t)(h >> 32) & mask;
		while (b->map[s] && b->map[s] != grp)
			s = (s + 1) & mask;
		if (!b->map[s]) {
			b->map[s] = grp;
			b->map_id[s] = ngroups;
			b->slot_of[ngroups] = s;
			b->ids[ngroups] = grp;
			b->start[++ngroups] = 0;
		}
		b->gid[r] = b->map_id[s];
		b->start[b->gid[r] + 1]++;
	}
	b->start[0] = 0;
	for (uint32_t j = 0; j < ngroups; j++) {
		b->start[j + 1] += b->start[j];
		b->map[b->slot_of[j]] = NULL;
	}
	/* Placed by slot_of as a cursor: start[j] would move, and it is read afterwards. */
	for (uint32_t j = 0; j < ngroups; j++)
		b->slot_of[j] = b->start[j];
	for (uint32_t r = 0; r < n; r++)
		b->order[b->slot_of[b->gid[r]]++] = r;
	return ngroups;
}

/* Groups whose memory is loaded ahead of the one being added. */
#ifndef FLOE_AGG_LOAD_AHEAD
#define FLOE_AGG_LOAD_AHEAD 8u
#endif

static void num_update(enum floe_agg_metric_kind k, struct agg_num *s, double d)
{
	if (s->n == 0 || k == FLOE_METRIC_SUM || k == FLOE_METRIC_AVG)
		s->v = s->n == 0 ? d : s->v + d;
	else if (k == FLOE_METRIC_MIN ? d < s->v : d > s->v)
		s->v = d;
	s->n++;
}

/* Starts loading what adding metric m's values of the n rows (of v, by row) to its state
 * st in one group will touch, a few groups before they are added: the state, the HLL's
 * registers or set slots, the DDSketch's buckets (whose keys are computed here, a
 * logarithm each, independent of each other). */
static void metric_load(const struct agg_metric *m, const uint8_t *st, struct agg_mval *v,
			const uint32_t *rows, uint32_t n)
{
	switch (m->cfg->kind) {
	case FLOE_METRIC_DISTINCT:
		for (uint32_t k = 0; k < n; k++)
			if (v[rows[k]].ok > 0)
				floe_hll_prefetch((const struct floe_hll *)(const void *)st,
						  v[rows[k]].hash);
		break;
	case FLOE_METRIC_QUANTILES:
		for (uint32_t k = 0; k < n; k++) {
			struct agg_mval *x = &v[rows[k]];
			const struct floe_dds *s = (const struct floe_dds *)(const void *)st;
			if (x->ok <= 0)
				continue;
			/* A small whole number's key from the table, the rest by its logarithm. */
			uint32_t u = x->d >= 1.0 && x->d < FLOE_AGG_INT_KEYS ? (uint32_t)x->d : 0;
			if (u && (double)u == x->d) {
				x->key = m->int_keys[u];
				floe_dds_prefetch_pos(s, x->key);
			} else {
				x->key = floe_dds_prepare(s, x->d);
			}
		}
		break;
	case FLOE_METRIC_TOP_K:
		break;
	default:
		__builtin_prefetch(st, 1);
	}
}

/* Adds metric m's values of the n rows (of v, by row; metric_load made them ready) to its
 * state st in one group. Returns the values that were not numbers, or that the sketch
 * refused. */
static uint64_t metric_apply(const struct agg_metric *m, uint8_t *st, struct agg_mval *v,
			     const uint32_t *rows, uint32_t n)
{
	uint64_t bad = 0;
	switch (m->cfg->kind) {
	case FLOE_METRIC_COUNT: {
		uint64_t c = v ? 0 : n; /* without a field: every row */
		for (uint32_t k = 0; v && k < n; k++) {
			c += v[rows[k]].ok > 0;
			bad += v[rows[k]].ok < 0;
		}
		*(uint64_t *)(void *)st += c;
		break;
	}
	case FLOE_METRIC_DISTINCT: {
		struct floe_hll *h = (struct floe_hll *)(void *)st;
		for (uint32_t k = 0; k < n; k++)
			if (v[rows[k]].ok > 0)
				floe_hll_add_hash(h, v[rows[k]].hash);
		break;
	}
	case FLOE_METRIC_TOP_K: /* a batch of one: the record's text is still there */
		if (n && v[rows[0]].ok > 0)
			floe_ss_add((struct floe_ss *)(void *)st, m->src->cur.s,
				    m->src->cur.len);
		break;
	case FLOE_METRIC_QUANTILES: {
		struct floe_dds *s = (struct floe_dds *)(void *)st;
		for (uint32_t k = 0; k < n; k++) {
			struct agg_mval *x = &v[rows[k]];
			bad += x->ok < 0 ||
			       (x->ok > 0 && floe_dds_add_prepared_inline(s, x->d, x->key));
		}
		break;
	}
	default:
		for (uint32_t k = 0; k < n; k++) {
			const struct agg_mval *x = &v[rows[k]];
			if (x->ok > 0)
				num_update(m->cfg->kind, (struct agg_num *)(void *)st, x->d);
			bad += x->ok < 0;
		}
	}
	return bad;
}

void floe_agg_settle(struct floe_aggregator *g)
{
	struct agg_batch *b = &g->b;
	uint32_t n = g->npend;
	if (n == 0)
		return;
	find_groups(g, n);
	uint32_t ngroups = partition(b, n);
	size_t nm = g->cfg->nmetrics;
	/* Group j is added while the memory of group j + FLOE_AGG_LOAD_AHEAD loads. */
	for (uint32_t l = 0; l < ngroups + FLOE_AGG_LOAD_AHEAD; l++) {
		uint32_t j = l - FLOE_AGG_LOAD_AHEAD;
		for (size_t i = 0; l < ngroups && i < nm; i++)
			metric_load(&g->metrics[i], b->ids[l] + g->metrics[i].off,
				    g->metrics[i].vals, b->order + b->start[l],
				    b->start[l + 1] - b->start[l]);
		for (size_t i = 0; l >= FLOE_AGG_LOAD_AHEAD && i < nm; i++)
			g->stats.unparsable +=
			    metric_apply(&g->metrics[i], b->ids[j] + g->metrics[i].off,
					 g->metrics[i].vals, b->order + b->start[j],
					 b->start[j + 1] - b->start[j]);
	}
	g->npend = 0;
}
