/* The open windows' image (see aggregator.h): saved group by group through a small
 * staging buffer, with only the counted part of each sketch, so that a checkpoint of
 * thousands of groups costs no allocation and little more than what the groups hold;
 * restored by reading the groups back into their slots and moving the sketches'
 * pointers to where their memory now is. Only the build that wrote an image restores it;
 * any later one reads from its preamble what it held (see IMG_PRE). */
#include "agent/agg/aggregator_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stddef.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

#define IMG_MAGIC "FAGW"
/* 2: a distinct sketch is its mode, precision and coupons or registers (a list of
 * coupons or dense registers from the window's pool), no longer its header.
 * 3: each DDSketch store is sparse or dense on its own, a dense one as wide as its
 * window of the pool was (pairs and windows are sized differently).
 * 4: the newest dated record's time and when it was read (timed_ts, timed_at).
 * 5: the preamble below; the build's layout and the configuration fingerprinted apart. */
#define IMG_VERSION 5u

/* The preamble: the first IMG_PRE bytes of every image from version 5 on, little-endian,
 * never to change: the magic, the version, how many open windows the image holds and its
 * tag. Any later build, whatever its own layout, reads from it what an image it cannot
 * restore held (the windows lost, counted exactly: none after a clean stop, which wrote
 * them as partial rows) and the tag that tells its caller which spool entries the image
 * covers (entries sealed after it are removed as of a seal that never became durable:
 * without the tag the partial rows of a stop whose commit did not go through were). */
#define IMG_PRE 24u
#define PRE_VERSION 4u
#define PRE_NOPEN 8u
#define PRE_TAG 16u

/* Version 4, the last one without the preamble, was native and read its count and tag
 * from these offsets (x86-64, arm64 and armhf alike: nothing in it was wider than its
 * alignment allowed): a build upgraded from it counts exactly what it cannot restore. */
#define V4_TAG 16u
#define V4_NOPEN 172u

/* The image's header: the preamble, then the aggregator's scalars in native byte order
 * and padding, read only by a build of the same layout (the build fingerprint says so). */
struct img_head {
	uint8_t pre[IMG_PRE];
	uint64_t build;	      /* layout_fingerprint */
	uint64_t fingerprint; /* config_fingerprint */
	int64_t max_ts, closed_until, last_received;
	int64_t timed_ts, timed_at;
	uint64_t pending_late;
	struct floe_agg_stats stats;
	uint32_t seen;
	uint32_t pad;
};
_Static_assert(offsetof(struct img_head, build) == IMG_PRE, "the preamble comes first");

/* Before each open window's groups (ngroups strides, then the overflow group's stride
 * when it took events). base is where the groups were when saved: the sketches in them
 * point into that memory and are moved by the difference. */
struct img_win {
	int64_t start;
	uint64_t late;
	uint64_t base;
	uint32_t ngroups;
	uint32_t overflow;
};

/* Bytes staged before they go to the caller's write function. */
#define STAGE_BYTES (16u << 10)
#define ROUND8(n) (((n) + 7u) & ~(size_t)7u)

int floe_agg_state_init(struct floe_aggregator *g)
{
	g->img_cap = STAGE_BYTES;
	g->img = floe_malloc(g->a, g->img_cap);
	return g->img ? 0 : FLOE_ENOMEM;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull + (h >> 29);
}

static void le_put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t le_get(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* What the image's native part depends on in this build: the byte order and the sizes of
 * everything saved as it is in memory. A change of them is a change of build, said as
 * such (the version is bumped too when a saved struct's fields change and not its size). */
static uint64_t layout_fingerprint(void)
{
	const uint32_t order = 0x01020304u;
	uint8_t first;
	memcpy(&first, &order, 1);
	uint64_t h = 0x84222325cbf29ce4ull;
	uint64_t v[] = {first,
			sizeof(void *),
			sizeof(struct img_head),
			sizeof(struct img_win),
			sizeof(struct agg_group),
			sizeof(struct agg_num),
			sizeof(struct floe_hll),
			sizeof(struct floe_dds),
			sizeof(struct floe_dds_store),
			sizeof(struct floe_ss),
			sizeof(struct floe_agg_stats)};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = mix(h, v[i]);
	return h;
}

/* What an image depends on in the configuration: every setting that places or sizes a
 * group's state (with this build's sizes, which a layout change has changed first). */
static uint64_t config_fingerprint(const struct floe_aggregator *g)
{
	const struct floe_config_agg *c = g->cfg;
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t v[] = {g->stride,
			g->key_cap,
			g->cap,
			g->plan.windows,
			g->plan.groups,
			(uint64_t)g->window_us,
			(uint64_t)g->slide_us,
			(uint64_t)g->lateness_us,
			c->ngroup_by,
			c->nmetrics};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		h = mix(h, v[i]);
	for (size_t i = 0; i < c->ngroup_by; i++) {
		h = mix(h, floe_hll_hash(c->group_by[i], strlen(c->group_by[i])));
		/* A key a typed column made an integer is encoded as one: an image whose groups
		 * hold it as text (written before the column was typed) is another layout. */
		if (g->keys[i].typed && g->key_type[i] != FLOE_AGGCOL_STRING)
			h = mix(h, 0x7479706564ull + (uint64_t)g->key_type[i]);
	}
	for (size_t i = 0; i < c->nmetrics; i++) {
		const struct agg_metric *m = &g->metrics[i];
		uint64_t acc;
		memcpy(&acc, &m->dds.rel_acc, 8);
		h = mix(mix(mix(h, m->cfg->kind), m->off), acc);
		h = mix(mix(mix(h, m->cfg->precision), m->cfg->k), m->cfg->key_bytes);
		h = mix(mix(h, m->dds.pos_bins), m->dds.neg_bins);
		if (m->cfg->field)
			h = mix(h, floe_hll_hash(m->cfg->field, strlen(m->cfg->field)));
	}
	return h;
}

/* ---- saving ---------------------------------------------------------------------------- */

/* The image goes out through g->img, STAGE_BYTES at a time, hashed on the way. */
struct saver {
	struct floe_aggregator *g;
	floe_agg_write_fn write;
	void *ctx;
	size_t len;
	int rc;
	XXH64_state_t x;
};

static void flush(struct saver *sv)
{
	if (sv->len && !sv->rc)
		sv->rc = sv->write(sv->ctx, sv->g->img, sv->len);
	sv->len = 0;
}

static void put(struct saver *sv, const void *p, size_t n)
{
	XXH64_update(&sv->x, p, n);
	if (n > sv->g->img_cap - sv->len)
		flush(sv);
	if (n >= sv->g->img_cap) {
		if (!sv->rc)
			sv->rc = sv->write(sv->ctx, p, n);
		return;
	}
	memcpy(sv->g->img + sv->len, p, n);
	sv->len += n;
}

static void put_u32(struct saver *sv, uint32_t v)
{
	put(sv, &v, 4);
}

/* An HLL: whether it is dense, its precision and its coupon count, then its coupons, or
 * its registers as (index, value) pairs while fewer than a fifth of them are set, else all
 * of them. Its pointers are not saved: the load lays the sketch out again. */
static void put_hll(struct saver *sv, const struct floe_hll *h)
{
	put_u32(sv, h->reg != NULL);
	put_u32(sv, h->p);
	put_u32(sv, h->n);
	if (!h->reg) {
		uint32_t at = 0, c;
		while ((c = floe_hll_coupon_next(h, &at)))
			put_u32(sv, c);
		return;
	}
	uint32_t nnz = 0;
	for (uint32_t i = 0; i < h->m; i++)
		nnz += h->reg[i] != 0;
	put_u32(sv, nnz);
	if ((uint64_t)nnz * 5 >= h->m) {
		put(sv, h->reg, h->m);
		return;
	}
	for (uint32_t i = 0; i < h->m; i++) {
		if (h->reg[i]) {
			put_u32(sv, i);
			put(sv, &h->reg[i], 1);
		}
	}
}

/* A DDSketch store: its pairs while sparse, else its buckets from the first to the last
 * one counted. */
static void put_store(struct saver *sv, const struct floe_dds_store *st)
{
	if (!st->bins) {
		put_u32(sv, st->npairs);
		put(sv, st->pairs, (size_t)st->npairs * sizeof(st->pairs[0]));
		return;
	}
	uint32_t lo = 0, hi = st->cap;
	while (lo < hi && st->bins[lo] == 0)
		lo++;
	while (hi > lo && st->bins[hi - 1] == 0)
		hi--;
	put_u32(sv, lo);
	put_u32(sv, hi - lo);
	put(sv, st->bins + lo, (size_t)(hi - lo) * 4);
}

/* One group: its header and key, then per metric its state, a sketch as its header
 * (pointers and all: moved on restore) and its counted part. */
static void put_group(struct saver *sv, const struct agg_group *h)
{
	struct floe_aggregator *g = sv->g;
	put(sv, h, sizeof(*h) + h->keylen);
	for (size_t i = 0; i < g->cfg->nmetrics; i++) {
		const struct agg_metric *m = &g->metrics[i];
		const uint8_t *st = (const uint8_t *)h + m->off;
		const struct floe_hll *hll = (const void *)st;
		const struct floe_dds *d = (const void *)st;
		switch (m->cfg->kind) {
		case FLOE_METRIC_COUNT:
			put(sv, st, 8);
			break;
		case FLOE_METRIC_DISTINCT:
			put_hll(sv, hll);
			break;
		case FLOE_METRIC_QUANTILES:
			put(sv, st, sizeof(struct floe_dds));
			put_store(sv, &d->pos);
			put_store(sv, &d->neg);
			break;
		case FLOE_METRIC_TOP_K:
			put(sv, st,
			    ROUND8(sizeof(struct floe_ss)) +
				floe_ss_bytes(m->cfg->k, m->cfg->key_bytes));
			break;
		default:
			put(sv, st, sizeof(struct agg_num));
		}
	}
}

int floe_agg_save(struct floe_aggregator *g, uint64_t tag, floe_agg_write_fn write, void *ctx)
{
	struct saver sv = {.g = g, .write = write, .ctx = ctx};
	floe_agg_settle(g); /* the image holds every event added */
	struct img_head h = {.build = layout_fingerprint(),
			     .fingerprint = config_fingerprint(g),
			     .max_ts = g->max_ts,
			     .closed_until = g->closed_until,
			     .last_received = g->last_received,
			     .timed_ts = g->timed_ts,
			     .timed_at = g->timed_at,
			     .pending_late = g->pending_late,
			     .stats = g->stats,
			     .seen = g->seen};
	uint32_t nopen = 0;
	for (uint32_t i = 0; i < g->plan.windows; i++)
		nopen += g->win[i].open;
	memcpy(h.pre, IMG_MAGIC, 4);
	le_put(h.pre + PRE_VERSION, IMG_VERSION, 4);
	le_put(h.pre + PRE_NOPEN, nopen, 4);
	le_put(h.pre + PRE_TAG, tag, 8);
	XXH64_reset(&sv.x, 0);
	put(&sv, &h, sizeof(h));
	for (uint32_t i = 0; i < g->plan.windows; i++) {
		const struct agg_window *w = &g->win[i];
		if (!w->open)
			continue;
		const struct agg_group *over = agg_group_at(g, w, g->cfg->max_groups);
		struct img_win iw = {w->start, w->late, (uint64_t)(uintptr_t)w->groups, w->ngroups,
				     over->used ? 1u : 0u};
		put(&sv, &iw, sizeof(iw));
		for (uint32_t k = 0; k < w->ngroups; k++)
			put_group(&sv, agg_group_at(g, w, k));
		if (over->used)
			put_group(&sv, over);
	}
	uint64_t sum = XXH64_digest(&sv.x);
	put(&sv, &sum, 8);
	flush(&sv);
	return sv.rc;
}

/* ---- restoring ------------------------------------------------------------------------- */

struct loader {
	floe_agg_read_fn read;
	void *ctx;
	XXH64_state_t x;
};

static int rd(struct loader *l, void *p, size_t n)
{
	int rc = l->read(l->ctx, p, n);
	if (rc == 0)
		XXH64_update(&l->x, p, n);
	return rc;
}

/* Moves the pointer at field (a sketch's, into its group's memory saved at old) into the
 * same place of the group now at grp. */
static int reloc(void *field, uint64_t old, uint8_t *grp, size_t stride)
{
	void *p;
	memcpy(&p, field, sizeof(p));
	uint64_t off = (uint64_t)(uintptr_t)p - old;
	if (off >= stride)
		return FLOE_ECORRUPT;
	p = grp + off;
	memcpy(field, &p, sizeof(p));
	return 0;
}

static int relocate(struct floe_aggregator *g, uint8_t *grp, uint64_t old)
{
	int rc = 0;
	size_t s = g->stride;
	for (size_t i = 0; i < g->cfg->nmetrics && rc == 0; i++) {
		uint8_t *st = grp + g->metrics[i].off;
		struct floe_ss *ss = (struct floe_ss *)(void *)st;
		switch (g->metrics[i].cfg->kind) {
		case FLOE_METRIC_TOP_K:
			if (!(rc = reloc(&ss->ctr, old, grp, s)) &&
			    !(rc = reloc(&ss->heap, old, grp, s)) &&
			    !(rc = reloc(&ss->index, old, grp, s)) &&
			    !(rc = reloc(&ss->mark, old, grp, s)))
				rc = reloc(&ss->keys, old, grp, s);
			break;
		default:
			break;
		}
	}
	return rc;
}

static int get_u32(struct loader *l, uint32_t *v)
{
	return rd(l, v, 4);
}

/* A sketch's memory, as the group's layout places it (after its header). */
#define SKETCH_MEM(st, type) ((st) + ROUND8(sizeof(struct type)))

/* Dense registers saved by put_hll, each at most top. */
static int get_registers(struct loader *l, uint8_t *reg, uint32_t m, uint32_t top)
{
	uint32_t nnz, idx;
	int rc = get_u32(l, &nnz);
	if (rc || nnz > m)
		return rc ? rc : FLOE_ECORRUPT;
	if ((uint64_t)nnz * 5 >= m)
		rc = rd(l, reg, m);
	else
		memset(reg, 0, m);
	for (uint32_t i = 0; (uint64_t)nnz * 5 < m && i < nnz && rc == 0; i++) {
		if ((rc = get_u32(l, &idx)) == 0 && idx >= m)
			rc = FLOE_ECORRUPT;
		if (rc == 0)
			rc = rd(l, &reg[idx], 1);
	}
	for (uint32_t i = 0; i < m && rc == 0; i++)
		if (reg[i] > top)
			rc = FLOE_ECORRUPT;
	return rc;
}

/* An HLL saved by put_hll, into the sketch laid out anew over st's memory and its
 * window's pool. */
static int get_hll(struct loader *l, const struct agg_metric *m, uint8_t *st,
		   struct floe_agg_pool *pool)
{
	struct floe_hll *h = (struct floe_hll *)(void *)st;
	uint32_t dense, p, n, c;
	int rc = floe_hll_init_pooled(h, m->cfg->precision, SKETCH_MEM(st, floe_hll),
				      floe_hll_list_bytes(m->cfg->precision), pool);
	if (rc || (rc = get_u32(l, &dense)) || (rc = get_u32(l, &p)) || (rc = get_u32(l, &n)))
		return rc ? rc : FLOE_ECORRUPT;
	if (dense > 1 || (!dense && (p != m->cfg->precision || n > floe_hll_exact_max(p))))
		return FLOE_ECORRUPT;
	for (uint32_t i = 0; !dense && i < n; i++) {
		if ((rc = get_u32(l, &c)))
			return rc;
		if (c >> 26 == 0 || c >> 26 > 39)
			return FLOE_ECORRUPT;
		floe_hll_add_coupon(h, c);
	}
	if (!dense)
		return h->n == n ? 0 : FLOE_ECORRUPT; /* no repeated coupon */
	uint8_t *reg = n == 0 ? floe_hll_restore_dense(h, p) : NULL;
	return reg ? get_registers(l, reg, h->m, 65 - p) : FLOE_ECORRUPT;
}


static int get_store(struct loader *l, uint32_t *bins, uint32_t cap)
{
	uint32_t lo, n;
	int rc = get_u32(l, &lo);
	if (rc == 0)
		rc = get_u32(l, &n);
	if (rc == 0 && (lo > cap || n > cap - lo))
		rc = FLOE_ECORRUPT;
	if (rc == 0) {
		memset(bins, 0, (size_t)cap * 4);
		rc = rd(l, bins + lo, (size_t)n * 4);
	}
	return rc;
}

/* A sparse store's pairs: at most its own, by ascending index, adding up to its count. */
static int get_pairs(struct loader *l, struct floe_dds_store *st)
{
	uint32_t n;
	int rc = get_u32(l, &n);
	if (rc || n > st->maxpairs)
		return rc ? rc : FLOE_ECORRUPT;
	if ((rc = rd(l, st->pairs, (size_t)n * sizeof(st->pairs[0]))))
		return rc;
	uint64_t sum = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (!st->pairs[i].n || (i && st->pairs[i].key <= st->pairs[i - 1].key))
			return FLOE_ECORRUPT;
		sum += st->pairs[i].n;
	}
	st->npairs = n;
	return sum == st->count ? 0 : FLOE_ECORRUPT;
}

/* A store saved by put_store into st, whose saved header is sv: its pairs, or its
 * buckets in a window of the pool as wide as the saved one. */
static int get_dstore(struct loader *l, struct floe_dds_store *st,
		      const struct floe_dds_store *sv, struct floe_agg_pool *pool)
{
	struct floe_dds_store fresh = *st;
	*st = *sv;
	st->pairs = fresh.pairs;
	st->maxpairs = fresh.maxpairs;
	st->budget = fresh.budget;
	st->bins = NULL;
	if (!sv->bins) {
		st->cap = 0;
		return get_pairs(l, st);
	}
	if (sv->cap == 0 || sv->cap > st->budget)
		return FLOE_ECORRUPT;
	st->bins = floe_agg_pool_take(pool, (size_t)sv->cap * 4);
	return st->bins ? get_store(l, st->bins, sv->cap) : FLOE_ECORRUPT;
}

/* A DDSketch: its header as saved, its pointers laid out anew (the pairs in the group,
 * the windows in the pool), then each store's pairs or buckets. */
static int get_dds(struct loader *l, const struct agg_metric *m, uint8_t *st,
		   struct floe_agg_pool *pool)
{
	struct floe_dds *d = (struct floe_dds *)(void *)st, saved;
	int rc = rd(l, &saved, sizeof(saved));
	if (rc || (rc = floe_dds_init_pooled(d, &m->dds, SKETCH_MEM(st, floe_dds),
					     floe_dds_sparse_bytes(), pool)))
		return rc;
	if (saved.rel_acc != d->rel_acc ||
	    saved.pos.count + saved.neg.count + saved.zero_count != saved.count ||
	    saved.count > UINT32_MAX)
		return FLOE_ECORRUPT;
	/* The saved counters and flags, with this sketch's pairs, pool and windows. */
	struct floe_dds_store pos = d->pos, neg = d->neg;
	*d = saved;
	d->pool = pool;
	d->pos = pos;
	d->neg = neg;
	if ((rc = get_dstore(l, &d->pos, &saved.pos, pool)) == 0)
		rc = get_dstore(l, &d->neg, &saved.neg, pool);
	return rc;
}

static int get_metric(struct loader *l, const struct agg_metric *m, uint8_t *st,
		      struct floe_agg_pool *pool)
{
	switch (m->cfg->kind) {
	case FLOE_METRIC_COUNT:
		return rd(l, st, 8);
	case FLOE_METRIC_DISTINCT:
		return get_hll(l, m, st, pool);
	case FLOE_METRIC_QUANTILES:
		return get_dds(l, m, st, pool);
	case FLOE_METRIC_TOP_K:
		return rd(l, st,
			  ROUND8(sizeof(struct floe_ss)) +
			      floe_ss_bytes(m->cfg->k, m->cfg->key_bytes));
	default:
		return rd(l, st, sizeof(struct agg_num));
	}
}

/* One group into grp, whose image was at old when saved. */
static int get_group(struct floe_aggregator *g, struct agg_window *w, struct loader *l,
		     uint8_t *grp, uint64_t old)
{
	struct agg_group *h = (struct agg_group *)(void *)grp;
	int rc = rd(l, h, sizeof(*h));
	if (rc == 0 && (h->used != 1 || h->keylen > g->key_cap))
		rc = FLOE_ECORRUPT;
	if (rc == 0)
		rc = rd(l, h + 1, h->keylen);
	for (size_t i = 0; i < g->cfg->nmetrics && rc == 0; i++)
		rc = get_metric(l, &g->metrics[i], grp + g->metrics[i].off, &w->pool);
	if (rc == 0)
		rc = relocate(g, grp, old);
	return rc;
}

static int load_window(struct floe_aggregator *g, struct loader *l)
{
	struct img_win iw;
	int rc = rd(l, &iw, sizeof(iw));
	if (rc)
		return rc;
	if (iw.ngroups > g->cfg->max_groups || iw.overflow > 1 ||
	    agg_floor_div(iw.start, g->slide_us) * g->slide_us != iw.start)
		return FLOE_ECORRUPT;
	struct agg_window *w = agg_slot_of(g, iw.start);
	if (w->open)
		return FLOE_ECORRUPT; /* two windows in one slot */
	w->open = true;
	w->start = iw.start;
	w->late = iw.late;
	w->ngroups = iw.ngroups;
	memset(w->index, 0, g->cap * sizeof(uint32_t));
	floe_agg_pool_reset(&w->pool);
	size_t mask = g->cap - 1;
	for (uint32_t i = 0; i < w->ngroups; i++) {
		struct agg_group *h = agg_group_at(g, w, i);
		if ((rc = get_group(g, w, l, (uint8_t *)h, iw.base + (uint64_t)i * g->stride)))
			return rc;
		size_t s = (size_t)h->hash & mask;
		while (w->index[s])
			s = (s + 1) & mask;
		w->index[s] = i + 1;
	}
	struct agg_group *over = agg_group_at(g, w, g->cfg->max_groups);
	over->used = 0;
	if (iw.overflow)
		rc = get_group(g, w, l, (uint8_t *)over,
			       iw.base + (uint64_t)g->cfg->max_groups * g->stride);
	return rc;
}

/* Back to a new aggregator's state, as floe_agg_new leaves it. */
static void reset_new(struct floe_aggregator *g)
{
	for (uint32_t i = 0; i < g->plan.windows; i++) {
		g->win[i].open = false;
		floe_agg_pool_reset(&g->win[i].pool);
	}
	g->seen = false;
	g->max_ts = 0;
	g->closed_until = INT64_MIN;
	g->last_received = 0;
	g->timed_at = INT64_MIN;
	g->now = INT64_MIN;
	g->pending_late = 0;
	memset(&g->stats, 0, sizeof(g->stats));
}

/* The windows an image of another version held, at most the plan's (a damaged count
 * cannot inflate the loss counted). */
static void set_lost(struct floe_aggregator *g, uint32_t nopen)
{
	g->load_lost = nopen < g->plan.windows ? nopen : g->plan.windows;
}

/* An image of version 4, whose preamble (already read) is its magic, version,
 * fingerprint and tag: its count of windows is read from where that version held it. */
static int load_v4(struct floe_aggregator *g, struct loader *l, const uint8_t *pre, uint64_t *tag,
		   struct floe_err *err)
{
	uint32_t nopen;
	g->load_lost = 1;
	int rc = rd(l, g->img, V4_NOPEN + 4 - IMG_PRE);
	if (rc)
		return floe_err_set(err, rc, "cannot read the image: %s", floe_strerror(rc));
	memcpy(&nopen, g->img + (V4_NOPEN - IMG_PRE), 4);
	memcpy(tag, pre + V4_TAG, 8);
	set_lost(g, nopen);
	return floe_err_set(err, FLOE_EFORMAT,
			    "the image was written by an earlier build of floe (image version 4; "
			    "this build reads %u)",
			    IMG_VERSION);
}

static int load(struct floe_aggregator *g, struct loader *l, uint64_t *tag, struct floe_err *err)
{
	struct img_head h;
	int rc = rd(l, h.pre, IMG_PRE);
	if (rc)
		return floe_err_set(err, rc, "cannot read the image: %s", floe_strerror(rc));
	g->load_lost = 0;
	uint32_t version = (uint32_t)le_get(h.pre + PRE_VERSION, 4);
	if (memcmp(h.pre, IMG_MAGIC, 4) != 0 || version < 4) {
		g->load_lost = 1; /* how many is not known: at least the image */
		return floe_err_set(err, FLOE_EFORMAT,
				    "not an image of open windows this build can read (version %u; "
				    "this build reads %u)",
				    version, IMG_VERSION);
	}
	if (version == 4)
		return load_v4(g, l, h.pre, tag, err);
	/* From here the preamble says what a refusal loses and which entries it covers. */
	uint32_t nopen = (uint32_t)le_get(h.pre + PRE_NOPEN, 4);
	*tag = le_get(h.pre + PRE_TAG, 8);
	set_lost(g, nopen);
	if (version != IMG_VERSION)
		return floe_err_set(err, FLOE_EFORMAT,
				    "the image was written by another build of floe (image version "
				    "%u; this build reads %u)",
				    version, IMG_VERSION);
	if ((rc = rd(l, h.pre + IMG_PRE, sizeof(h) - IMG_PRE)))
		return floe_err_set(err, rc, "cannot read the image: %s", floe_strerror(rc));
	if (h.build != layout_fingerprint())
		return floe_err_set(err, FLOE_EFORMAT,
				    "the image was written by another build of floe (image version "
				    "%u, another memory layout)",
				    version);
	if (h.fingerprint != config_fingerprint(g))
		return floe_err_set(err, FLOE_EFORMAT,
				    "the image is of another configuration of the aggregation");
	if (nopen > g->plan.windows)
		return floe_err_set(err, FLOE_ECORRUPT, "the image has %u windows (at most %u)",
				    nopen, g->plan.windows);
	for (uint32_t i = 0; i < nopen; i++)
		if ((rc = load_window(g, l)))
			return floe_err_set(err, rc, "window %u of the image: %s", i,
					    floe_strerror(rc));
	uint64_t sum;
	if ((rc = l->read(l->ctx, &sum, 8)))
		return floe_err_set(err, rc, "cannot read the image: %s", floe_strerror(rc));
	if (sum != XXH64_digest(&l->x))
		return floe_err_set(err, FLOE_ECORRUPT, "the image fails its checksum");
	g->seen = h.seen != 0;
	g->max_ts = h.max_ts;
	g->closed_until = h.closed_until;
	g->last_received = h.last_received;
	g->timed_ts = h.timed_ts;
	g->timed_at = h.timed_at;
	/* The clock read that newest record: one reading behind it now is a step back
	 * while the agent was down (a device that booted with its clock behind). */
	g->now = g->seen ? g->last_received : INT64_MIN;
	g->pending_late = h.pending_late;
	/* The counters go on from the image's, but the pools' gauges are this aggregator's
	 * (its windows were laid out again here, in its own chunks), and sketches that found
	 * its pools short now are counted on top. */
	struct floe_agg_stats here = g->stats;
	g->stats = h.stats;
	g->stats.coarse += here.coarse;
	g->stats.pool_bytes = here.pool_bytes;
	g->stats.pool_grown = here.pool_grown;
	return 0;
}

int floe_agg_load(struct floe_aggregator *g, floe_agg_read_fn read, void *ctx, uint64_t *tag,
		  struct floe_err *err)
{
	struct loader l = {.read = read, .ctx = ctx};
	XXH64_reset(&l.x, 0);
	int rc = load(g, &l, tag, err);
	g->next_close = INT64_MIN; /* windows opened (or closed): found again */
	if (rc)
		reset_new(g);
	else
		g->load_lost = 0;
	return rc;
}

uint32_t floe_agg_load_lost(const struct floe_aggregator *g)
{
	return g->load_lost;
}
