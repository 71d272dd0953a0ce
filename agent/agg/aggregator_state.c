/* The open windows' image (see aggregator.h): saved as pieces that point into the
 * aggregator's own memory, so that a checkpoint of thousands of groups costs no copy and
 * no allocation; restored by reading the groups back into their slots and moving the
 * sketches' pointers to where their memory now is. */
#include "agent/agg/aggregator_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

#define IMG_MAGIC "FAGW"
#define IMG_VERSION 1u

/* The image's header: the aggregator's scalars. Native byte order and padding: the image
 * is read only by the build that wrote it (the fingerprint holds the layout). */
struct img_head {
	char magic[4];
	uint32_t version;
	uint64_t fingerprint;
	uint64_t tag;
	int64_t max_ts, closed_until, last_received;
	uint64_t pending_late;
	struct floe_agg_stats stats;
	uint32_t seen;
	uint32_t nopen;
};

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

int floe_agg_state_init(struct floe_aggregator *g)
{
	g->img_cap = sizeof(struct img_head) + g->plan.windows * sizeof(struct img_win) + 8;
	g->img = floe_calloc(g->a, 1, g->img_cap);
	return g->img ? 0 : FLOE_ENOMEM;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	return (h ^ v) * 0x100000001b3ull + (h >> 29);
}

/* What an image depends on: the memory layout of this build and every setting that
 * places or sizes a group's state. */
static uint64_t fingerprint(const struct floe_aggregator *g)
{
	const struct floe_config_agg *c = g->cfg;
	uint64_t h = 0xcbf29ce484222325ull;
	uint64_t v[] = {sizeof(void *),
			sizeof(struct img_head),
			g->stride,
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
	for (size_t i = 0; i < c->ngroup_by; i++)
		h = mix(h, floe_hll_hash(c->group_by[i], strlen(c->group_by[i])));
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

size_t floe_agg_save_pieces(const struct floe_aggregator *g)
{
	return 2 + 3 * (size_t)g->plan.windows;
}

void floe_agg_save(struct floe_aggregator *g, uint64_t tag, struct floe_agg_piece *out, size_t cap,
		   size_t *n)
{
	struct img_head *h = (struct img_head *)(void *)g->img;
	struct img_win *iw = (struct img_win *)(void *)(h + 1);
	size_t k = 1;
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, IMG_MAGIC, 4);
	h->version = IMG_VERSION;
	h->fingerprint = fingerprint(g);
	h->tag = tag;
	h->max_ts = g->max_ts;
	h->closed_until = g->closed_until;
	h->last_received = g->last_received;
	h->pending_late = g->pending_late;
	h->stats = g->stats;
	h->seen = g->seen;
	for (uint32_t i = 0; i < g->plan.windows && k + 4 <= cap; i++) {
		const struct agg_window *w = &g->win[i];
		if (!w->open)
			continue;
		struct agg_group *over = agg_group_at(g, w, g->cfg->max_groups);
		*iw = (struct img_win){w->start, w->late, (uint64_t)(uintptr_t)w->groups,
				       w->ngroups, over->used ? 1u : 0u};
		out[k++] = (struct floe_agg_piece){iw++, sizeof(struct img_win)};
		out[k++] = (struct floe_agg_piece){w->groups, (size_t)w->ngroups * g->stride};
		if (over->used)
			out[k++] = (struct floe_agg_piece){over, g->stride};
		h->nopen++;
	}
	out[0] = (struct floe_agg_piece){h, sizeof(*h)};
	XXH64_state_t x;
	XXH64_reset(&x, 0);
	for (size_t i = 0; i < k; i++)
		XXH64_update(&x, out[i].p, out[i].n);
	uint64_t sum = XXH64_digest(&x);
	memcpy(iw, &sum, 8);
	out[k++] = (struct floe_agg_piece){iw, 8};
	*n = k;
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
		struct floe_hll *h = (struct floe_hll *)(void *)st;
		struct floe_dds *d = (struct floe_dds *)(void *)st;
		struct floe_ss *ss = (struct floe_ss *)(void *)st;
		switch (g->metrics[i].cfg->kind) {
		case FLOE_METRIC_DISTINCT:
			rc = reloc(&h->reg, old, grp, s);
			break;
		case FLOE_METRIC_QUANTILES:
			if (!(rc = reloc(&d->pos.bins, old, grp, s)))
				rc = reloc(&d->neg.bins, old, grp, s);
			break;
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

/* The groups of window w just read: each checked, its sketches moved, its key indexed. */
static int fix_groups(struct floe_aggregator *g, struct agg_window *w, uint64_t base)
{
	size_t mask = g->cap - 1;
	memset(w->index, 0, g->cap * sizeof(uint32_t));
	for (uint32_t i = 0; i < w->ngroups; i++) {
		struct agg_group *h = agg_group_at(g, w, i);
		if (h->used != 1 || h->keylen > g->key_cap)
			return FLOE_ECORRUPT;
		int rc = relocate(g, (uint8_t *)h, base + (uint64_t)i * g->stride);
		if (rc)
			return rc;
		size_t s = (size_t)h->hash & mask;
		while (w->index[s])
			s = (s + 1) & mask;
		w->index[s] = i + 1;
	}
	return 0;
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
	struct agg_group *over = agg_group_at(g, w, g->cfg->max_groups);
	over->used = 0;
	if ((rc = rd(l, w->groups, (size_t)iw.ngroups * g->stride)))
		return rc;
	if (iw.overflow) {
		if ((rc = rd(l, over, g->stride)))
			return rc;
		if (over->used != 1)
			return FLOE_ECORRUPT;
		uint64_t old = iw.base + (uint64_t)g->cfg->max_groups * g->stride;
		if ((rc = relocate(g, (uint8_t *)over, old)))
			return rc;
	}
	return fix_groups(g, w, iw.base);
}

/* Back to a new aggregator's state, as floe_agg_new leaves it. */
static void reset_new(struct floe_aggregator *g)
{
	for (uint32_t i = 0; i < g->plan.windows; i++)
		g->win[i].open = false;
	g->seen = false;
	g->max_ts = 0;
	g->closed_until = INT64_MIN;
	g->last_received = 0;
	g->pending_late = 0;
	memset(&g->stats, 0, sizeof(g->stats));
}

static int load(struct floe_aggregator *g, struct loader *l, uint64_t *tag, struct floe_err *err)
{
	struct img_head h;
	int rc = rd(l, &h, sizeof(h));
	if (rc)
		return floe_err_set(err, rc, "cannot read the image: %s", floe_strerror(rc));
	if (memcmp(h.magic, IMG_MAGIC, 4) != 0 || h.version != IMG_VERSION)
		return floe_err_set(err, FLOE_EFORMAT, "not an image of open windows (version 1)");
	*tag = h.tag;
	if (h.fingerprint != fingerprint(g))
		return floe_err_set(err, FLOE_EFORMAT,
				    "the image is of another configuration of the aggregation, or "
				    "of another build");
	if (h.nopen > g->plan.windows)
		return floe_err_set(err, FLOE_ECORRUPT, "the image has %u windows (at most %u)",
				    h.nopen, g->plan.windows);
	for (uint32_t i = 0; i < h.nopen; i++)
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
	g->pending_late = h.pending_late;
	g->stats = h.stats;
	*tag = h.tag;
	return 0;
}

int floe_agg_load(struct floe_aggregator *g, floe_agg_read_fn read, void *ctx, uint64_t *tag,
		  struct floe_err *err)
{
	struct loader l = {.read = read, .ctx = ctx};
	XXH64_reset(&l.x, 0);
	int rc = load(g, &l, tag, err);
	if (rc)
		reset_new(g);
	return rc;
}
