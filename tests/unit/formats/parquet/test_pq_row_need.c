/* floe_pq_writer_row_need must be an upper bound of what the writer allocates for one
 * large row (a 550 KB line at memory_limit 4 MiB ran the writer out of
 * memory in the middle of the row, and every restart failed the same way), and a tight
 * one: the configuration check refuses budgets by it. Every codec, both profiles, with
 * and without an offload, several levels and sizes, a fresh writer and one that holds
 * rows and a full dictionary. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/parquet/writer.h"

static int sink(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

/* An offload whose task runs when it is waited for: its page stays queued meanwhile. */
struct deferred {
	void (*run)(void *);
	void *arg;
	bool busy;
};

static int def_submit(void *ctx, void (*run)(void *), void *arg, void **handle)
{
	struct deferred *d = ctx;
	if (d->busy)
		return -1;
	d->run = run;
	d->arg = arg;
	d->busy = true;
	*handle = d;
	return 0;
}

static void def_wait(void *ctx, void *handle)
{
	struct deferred *d = ctx;
	(void)handle;
	d->busy = false;
	d->run(d->arg);
}

static const struct floe_pq_column cols[] = {
	{"ts", 1, FLOE_PQ_TIMESTAMPTZ, false, 0, 0},
	{"host", 2, FLOE_PQ_STRING, false, 0, 0},
	{"offset", 3, FLOE_PQ_INT64, true, 0, 0},
	{"message", 4, FLOE_PQ_STRING, false, 0, 0},
	{"attrs", 5, FLOE_PQ_MAP_STRING, true, 6, 7},
};
#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static void fill(char *p, size_t n, uint64_t seed)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = b64[x & 63];
	}
}

static int add(struct floe_pq_writer *w, int64_t i, const char *msg, size_t len, const char *attr, size_t alen)
{
	struct floe_pq_value v[NCOLS];
	memset(v, 0, sizeof(v));
	const char *k[1] = {"k"};
	size_t kl[1] = {1};
	const char *vals[1] = {attr};
	size_t vl[1] = {alen};
	v[0].i = 1700000000000000 + i;
	v[1].s = "edge-1";
	v[1].len = 6;
	v[2].i = i * 100;
	v[3].s = msg;
	v[3].len = len;
	v[4].n = attr ? 1 : 0;
	v[4].keys = k;
	v[4].key_lens = kl;
	v[4].vals = vals;
	v[4].val_lens = vl;
	return floe_pq_writer_add_row(w, v);
}

struct cfg {
	enum floe_pq_codec codec;
	int level;
	enum floe_pq_profile profile;
	bool offload;
	size_t prefill; /* rows before the large one: 0 (fresh), or rows filling the dictionary */
	bool in_attrs;	/* the large row also has a value of the same size in attrs */
};

/* Runs the large row through a writer and checks the bound; returns actual / bound. */
static double run(const struct cfg *c, size_t big, char *buf, char *abuf)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct deferred d = {0};
	struct floe_pq_offload off = {&d, def_submit, def_wait};
	struct floe_pq_options o;
	memset(&o, 0, sizeof(o));
	o.codec = c->codec;
	o.zstd_level = c->level;
	o.profile = c->profile;
	o.dictionary_cap = 256u << 10;
	o.memory_budget = 1u << 20;
	struct floe_pq_bloom_column bl[1] = {{2, 0}};
	o.bloom = bl;
	o.bloom_count = 1;
	if (c->offload)
		o.offload = &off;
	size_t ctx = 0;
	assert_int_equal(floe_pq_writer_context_bytes(&o, &ctx), 0);
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(&a, cols, NCOLS, &o, sink, NULL, &w), 0);
	char small[200];
	for (size_t i = 0; i < c->prefill; i++) {
		/* Repeated values, up to the dictionary's cap. */
		fill(small, 150, i % 1500);
		assert_int_equal(add(w, (int64_t)i, small, 150, small, 20), 0);
	}
	size_t v[2] = {big, c->in_attrs ? big : 0};
	bool fresh = c->prefill == 0;
	uint64_t need = floe_pq_writer_row_need(&o, v, c->in_attrs ? 2 : 1, fresh, ctx);
	size_t before = fresh ? 0 : a.used;
	a.peak = a.used;
	fill(buf, big, big);
	if (c->in_attrs)
		fill(abuf, big, big + 1);
	assert_int_equal(add(w, (int64_t)c->prefill, buf, big, c->in_attrs ? abuf : NULL, c->in_attrs ? big : 0), 0);
	assert_int_equal(floe_pq_writer_finish(w), 0);
	uint64_t got = a.peak - before;
	uint64_t allowed = need;
	if (got > allowed)
		fail_msg("codec %d level %d profile %d offload %d prefill %zu attrs %d, %zu bytes: "
			 "%llu allocated, bound %llu",
			 c->codec, c->level, c->profile, c->offload, c->prefill, c->in_attrs, big,
			 (unsigned long long)got, (unsigned long long)allowed);
	floe_pq_writer_free(w);
	assert_int_equal(a.used, 0);
	return (double)got / (double)need;
}

static void test_bound_holds(void **state)
{
	(void)state;
	static char buf[3u << 20], abuf[3u << 20];
	const size_t sizes[] = {64u << 10, 300000, 550000, 1u << 20, (1u << 20) + 1, 3000000};
	const struct cfg cfgs[] = {
		{FLOE_PQ_ZSTD, 3, FLOE_PQ_PROFILE_DEFAULT, false, 0, false},
		{FLOE_PQ_ZSTD, 3, FLOE_PQ_PROFILE_DEFAULT, true, 0, false},
		{FLOE_PQ_ZSTD, 1, FLOE_PQ_PROFILE_DEFAULT, true, 0, false},
		{FLOE_PQ_ZSTD, 9, FLOE_PQ_PROFILE_DEFAULT, true, 0, false},
		{FLOE_PQ_ZSTD, 19, FLOE_PQ_PROFILE_DEFAULT, true, 0, false},
		{FLOE_PQ_ZSTD, 0, FLOE_PQ_PROFILE_COMPACT, true, 0, false},
		{FLOE_PQ_ZSTD, 0, FLOE_PQ_PROFILE_COMPACT, false, 0, false},
		{FLOE_PQ_LZ4_RAW, 0, FLOE_PQ_PROFILE_DEFAULT, true, 0, false},
		{FLOE_PQ_UNCOMPRESSED, 0, FLOE_PQ_PROFILE_DEFAULT, false, 0, false},
		{FLOE_PQ_ZSTD, 3, FLOE_PQ_PROFILE_DEFAULT, true, 3000, false},
		{FLOE_PQ_ZSTD, 3, FLOE_PQ_PROFILE_DEFAULT, false, 3000, false},
		{FLOE_PQ_ZSTD, 0, FLOE_PQ_PROFILE_COMPACT, true, 3000, false},
		{FLOE_PQ_ZSTD, 3, FLOE_PQ_PROFILE_DEFAULT, true, 0, true},
		{FLOE_PQ_ZSTD, 3, FLOE_PQ_PROFILE_DEFAULT, false, 3000, true},
	};
	double worst = 1e9;
	for (size_t c = 0; c < sizeof(cfgs) / sizeof(cfgs[0]); c++) {
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			double r = run(&cfgs[c], sizes[s], buf, abuf);
			/* Tight where it matters: for a fresh writer and a line of 512 KiB and more,
			 * the bound is within 1.65x of what the writer takes, at the levels the
			 * profiles use (up to 6). Above, the bound counts two large contexts with an
			 * offload that this test's deferred offload never grows. */
			if (cfgs[c].prefill == 0 && sizes[s] >= (512u << 10) && cfgs[c].level <= 6 &&
			    r < worst)
				worst = r;
		}
	}
	printf("loosest fresh-writer ratio (allocated / bound) for lines of 512 KiB and more: %.2f\n", worst);
	assert_true(worst >= 1 / 1.65);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bound_holds),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
