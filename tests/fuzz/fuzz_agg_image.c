/* Fuzz target: the open windows' image decoder (floe_agg_load). An image is only valid
 * for the build and configuration that wrote it (a fingerprint), so the target makes a
 * real one from the input and damages it with the rest: the first byte says how many
 * events (three bytes each: time step, key, value) go into an aggregator whose image is
 * saved; every following pair of bytes flips a byte of the image (offset modulo its
 * length, by the second byte). Loading the result into a new aggregator must succeed
 * for an undamaged image, and otherwise succeed or fail cleanly, leaving an aggregator
 * that takes events and flushes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

static const char yaml[] =
    "aggregations: [{name: a, window: 10s, slide: 5s, allowed_lateness: 5s, group_by: [k],\n"
    "  max_groups: 3, metrics: [count, {sum: v}, {max: v}, {distinct: v, precision: 4},\n"
    "  {distinct: k}, {quantiles: v, q: [0.5]}, {top_k: v, k: 2}]}]\n";

static struct floe_config *cfg;
static uint8_t image[1 << 20];
struct image {
	size_t len, off;
};

static int put(void *ctx, const void *p, size_t n)
{
	struct image *im = ctx;
	if (n > sizeof(image) - im->len)
		abort(); /* the image of 2 windows of 4 small groups is far smaller */
	memcpy(image + im->len, p, n);
	im->len += n;
	return 0;
}

static int get(void *ctx, void *p, size_t n)
{
	struct image *im = ctx;
	if (n > im->len - im->off)
		return FLOE_ECORRUPT;
	memcpy(p, image + im->off, n);
	im->off += n;
	return 0;
}

static int ignore(void *arg, const struct floe_pq_value *row, size_t ncols)
{
	(void)arg;
	(void)row;
	(void)ncols;
	return 0;
}

static void add(struct floe_aggregator *g, int64_t ts, uint8_t key, uint8_t val)
{
	char k[4], v[4];
	const char *keys[2] = {"k", "v"}, *vals[2] = {k, v};
	size_t klens[2] = {1, 1}, vlens[2];
	vlens[0] = (size_t)snprintf(k, sizeof(k), "%u", key % 7u);
	vlens[1] = (size_t)snprintf(v, sizeof(v), "%u", val);
	struct floe_record r = {.ts = ts,
				.received_at = ts,
				.host = {"h", 1},
				.message = {"m", 1},
				.nattrs = 2,
				.attr_keys = keys,
				.attr_key_lens = klens,
				.attr_vals = vals,
				.attr_val_lens = vlens};
	if (floe_agg_add(g, &r, ignore, NULL) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_err err = {0};
	if (!cfg && floe_config_parse(NULL, "f.yaml", yaml, strlen(yaml), "h", &cfg, &err) != 0)
		abort();
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_aggregator *g = NULL, *h = NULL;
	if (floe_agg_new(&a, &cfg->aggs[0], NULL, &g, &err) || floe_agg_new(&a, &cfg->aggs[0], NULL, &h, &err))
		abort();
	size_t nev = size ? data[0] : 0, i = 1;
	int64_t ts = 0;
	for (size_t e = 0; e < nev && i + 3 <= size; e++, i += 3) {
		ts += (int64_t)data[i] * 100000; /* up to 25.5 s a step */
		add(g, ts, data[i + 1], data[i + 2]);
	}
	struct image im = {0, 0};
	if (floe_agg_save(g, 7, put, &im) != 0)
		abort();
	bool damaged = false;
	for (; i + 2 <= size; i += 2) {
		image[(data[i] * 131u + i) % im.len] ^= data[i + 1];
		damaged |= data[i + 1] != 0;
	}
	uint64_t tag = 0;
	int rc = floe_agg_load(h, get, &im, &tag, &err);
	if (!damaged && (rc != 0 || tag != 7))
		abort();
	add(h, ts, 1, 2);
	add(h, ts + 20000000, 3, 4);
	if (floe_agg_flush(h, ignore, NULL) != 0)
		abort();
	floe_agg_free(g);
	floe_agg_free(h);
	if (a.used != 0)
		abort();
	return 0;
}
