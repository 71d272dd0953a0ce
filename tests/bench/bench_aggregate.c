/* Benchmark of the aggregator: events per CPU second through three group keys
 * with count, sum, quantiles and distinct, one-minute windows, max_groups 1000, for a
 * given number of distinct key combinations, and the process's peak RSS. Run once per
 * key count (the peak is the process's): `bench_aggregate 1000` and
 * `bench_aggregate 10000000` side by side show the memory staying flat while keys beyond
 * max_groups go to the __overflow__ group. Prints figures; asserts nothing about speed.
 * With CSV (not "-"), the same events are also written there (outside the clock) for
 * DuckDB's side of the comparison (tests/bench/aggregate.sh). PRECISION sets the distinct
 * metric's HyperLogLog precision (default floe's, 14).
 *
 * The windows' pools grow as the agent's do, within the aggregation's share of its
 * memory_limit (512 MiB).
 *
 * With TYPED set to "typed", the events are records whose fields are typed columns'
 * values, as a parser with typed columns makes them (agent/schema/columns.h): keys a and
 * b ints, c a string, v and u longs, with no attribute text; the CSV then holds a and b
 * as integers and u as a number, for DuckDB's typed table. "typed-skew" draws the keys
 * skewed (key = KEYS * x^3 for x uniform in [0, 1): a tenth of the keys take 46 % of the
 * events), to check that the figures hold beyond uniform keys.
 *
 * With RESULTS (typed events only), floe's rows are written there as CSV (minute, a, b, c,
 * count, sum, the three quantiles, distinct) for duck_aggregate.js to measure floe's
 * sketches' errors against DuckDB's exact answer on the same events.
 *
 * With FLOE_BENCH_DIGEST set in the environment, a digest of every cell of every row (the
 * sketches' images too) is printed last: the same digest before and after a change of the
 * aggregator says it wrote the same rows byte for byte (agent/agg/README.md lists the
 * shapes compared).
 *
 * usage: bench_aggregate [KEYS [EVENTS [CSV [PRECISION [TYPED [RESULTS]]]]]]
 * (defaults 1000, 5,000,000, -, 14, text, none) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/agg/aggregator.h"
#include "agent/config/config.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

static uint64_t rng_state = 42;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double cpu_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static uint64_t rows;
/* Where floe's rows go for the accuracy comparison (RESULTS), and their columns. */
static FILE *results;
static size_t first_key, first_value;

/* With FLOE_BENCH_DIGEST set, an FNV-1a digest of every cell of every row (the
 * sketches' images included) is printed, so that a change of the aggregator can be
 * shown to write the same rows byte for byte. Off by default: it hashes inside the
 * clock. */
static bool want_digest;
static uint64_t digest = 0xcbf29ce484222325ull;
static void digest_bytes(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		digest = (digest ^ b[i]) * 0x100000001b3ull;
}
static void digest_row(const struct floe_pq_value *row, size_t ncols)
{
	for (size_t c = 0; c < ncols; c++) {
		const struct floe_pq_value *v = &row[c];
		digest_bytes(&v->is_null, sizeof(v->is_null));
		digest_bytes(&v->i, sizeof(v->i));
		digest_bytes(&v->d, sizeof(v->d));
		digest_bytes(&v->len, sizeof(v->len));
		if (v->s)
			digest_bytes(v->s, v->len);
		digest_bytes(&v->n, sizeof(v->n));
		for (size_t k = 0; k < v->n; k++) {
			if (v->keys)
				digest_bytes(v->keys[k], v->key_lens[k]);
			if (v->vals)
				digest_bytes(v->vals[k], v->val_lens[k]);
			if (v->ivals)
				digest_bytes(&v->ivals[k], sizeof(v->ivals[k]));
		}
	}
}

static int count_row(void *arg, const struct floe_pq_value *row, size_t ncols)
{
	(void)arg;
	rows++;
	if (want_digest)
		digest_row(row, ncols);
	/* The rows of the typed run, less the overflow group (its keys are null): the minute,
	 * the three keys, count, sum, the three quantiles and distinct. 2,000 rows are written
	 * inside the clock, a millisecond or less against the run's half second. */
	const struct floe_pq_value *k = row + first_key, *v = row + first_value;
	if (!results || k[0].is_null)
		return 0;
	fprintf(results, "%" PRId64 ",%" PRId64 ",%" PRId64 ",%.*s,%" PRId64 ",%.17g", row[0].i / 60000000,
		k[0].i, k[1].i, (int)k[2].len, k[2].s, v[0].i, v[1].d);
	for (size_t q = 2; q < 5; q++) {
		if (v[q].is_null)
			fputc(',', results);
		else
			fprintf(results, ",%.17g", v[q].d);
	}
	fprintf(results, ",%" PRId64 "\n", v[5].i);
	return 0;
}

/* Events are made in batches ahead of the timed loop, so that the figure is the
 * aggregator's: their text is formatted outside the clock. */
#define BATCH 65536
struct ev {
	char a[12], b[12], c[12], v[16], u[16];
	size_t la, lb, lc, lv, lu;
	struct floe_pq_value t[5]; /* typed: a, b, c, v, u */
};

static void make(struct ev *e, uint64_t keys, bool typed, bool skew)
{
	double x = (double)(rng() >> 11) / 9007199254740992.0;
	uint64_t k = skew ? (uint64_t)((double)keys * x * x * x) : rng() % keys;
	uint64_t v = 1 + rng() % 5000, u = rng() % 100000;
	const char *pa = typed ? "" : "h", *pb = typed ? "" : "s", *pu = typed ? "" : "u";
	e->la = (size_t)snprintf(e->a, sizeof(e->a), "%s%" PRIu64, pa, k % 1000);
	e->lb = (size_t)snprintf(e->b, sizeof(e->b), "%s%" PRIu64, pb, (k / 1000) % 1000);
	e->lc = (size_t)snprintf(e->c, sizeof(e->c), "c%" PRIu64, k / 1000000);
	e->lv = (size_t)snprintf(e->v, sizeof(e->v), "%" PRIu64, v);
	e->lu = (size_t)snprintf(e->u, sizeof(e->u), "%s%" PRIu64, pu, u);
	e->t[0] = (struct floe_pq_value){.i = (int64_t)(k % 1000)};
	e->t[1] = (struct floe_pq_value){.i = (int64_t)((k / 1000) % 1000)};
	e->t[2] = (struct floe_pq_value){.s = e->c, .len = e->lc};
	e->t[3] = (struct floe_pq_value){.i = (int64_t)v};
	e->t[4] = (struct floe_pq_value){.i = (int64_t)u};
}

/* The typed columns of the typed events, as a parser's plan gives them. */
static void typed_plan(struct floe_colplan *p)
{
	memset(p, 0, sizeof(*p));
	(void)floe_colplan_add(p, "a", FLOE_COL_INT, NULL, NULL);
	(void)floe_colplan_add(p, "b", FLOE_COL_INT, NULL, NULL);
	(void)floe_colplan_add(p, "c", FLOE_COL_STRING, NULL, NULL);
	(void)floe_colplan_add(p, "v", FLOE_COL_LONG, NULL, NULL);
	(void)floe_colplan_add(p, "u", FLOE_COL_LONG, NULL, NULL);
	p->planned = true;
}

int main(int argc, char **argv)
{
	uint64_t keys = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000;
	uint64_t events = argc > 2 ? strtoull(argv[2], NULL, 10) : 5000000;
	bool want_csv = argc > 3 && strcmp(argv[3], "-") != 0;
	FILE *csv = want_csv ? fopen(argv[3], "w") : NULL;
	unsigned long precision = argc > 4 ? strtoul(argv[4], NULL, 10) : 14;
	bool typed = argc > 5 && strncmp(argv[5], "typed", 5) == 0;
	bool skew = argc > 5 && strcmp(argv[5], "typed-skew") == 0;
	static struct floe_colplan plan;
	typed_plan(&plan);
	want_digest = getenv("FLOE_BENCH_DIGEST") != NULL;
	if (typed && argc > 6 && !(results = fopen(argv[6], "w")))
		return 2;
	if (keys == 0 || events == 0 || (want_csv && !csv))
		return 2;
	if (csv)
		fputs("ts,a,b,c,v,u\n", csv);
	char y[512];
	snprintf(y, sizeof(y),
		 "agent: {memory_limit: 512MiB}\n"
		 "aggregations: [{name: b, window: 1m, group_by: [a, b, c], max_groups: 1000,\n"
		 "  metrics: [count, {sum: v}, {quantiles: v}, {distinct: u, precision: %lu}]}]\n",
		 precision);
	struct floe_config *cfg = NULL;
	struct floe_err err = {0};
	struct floe_alloc a;
	struct floe_aggregator *g = NULL;
	floe_alloc_init(&a, 0);
	if (floe_config_parse(NULL, "bench.yaml", y, strlen(y), "h", &cfg, &err) ||
	    floe_agg_new(&a, &cfg->aggs[0], typed ? &plan : NULL, &g, &err)) {
		fprintf(stderr, "bench_aggregate: %s\n", err.msg);
		return 1;
	}
	/* The pools grow as the agent's would: into what the aggregation's share of the
	 * 512 MiB memory_limit leaves (no inputs here, so the whole quarter). */
	floe_agg_set_growth(g, floe_agg_growth(cfg, 0, 0));
	first_key = floe_aggtable_first_key(floe_agg_table(g));
	first_value = floe_aggtable_first_value(floe_agg_table(g));
	long rss_start = peak_rss_kib();
	struct ev *batch = calloc(BATCH, sizeof(*batch));
	if (!batch)
		return 1;
	const char *akeys[5] = {"a", "b", "c", "v", "u"};
	size_t aklens[5] = {1, 1, 1, 1, 1};
	const char *avals[5];
	size_t avlens[5];
	struct floe_record r = {.host = {"h", 1},
				.message = {"m", 1},
				.nattrs = 5,
				.attr_keys = akeys,
				.attr_key_lens = aklens,
				.attr_vals = avals,
				.attr_val_lens = avlens};
	if (typed) {
		r.nattrs = 0;
		r.ntyped = 5;
		r.typed_plan = &plan;
	}
	/* Called through a pointer, as the runner calls it from another unit: not inlined
	 * into this loop, so that a profile (callgrind) gives its cost as one function's. */
	int (*volatile add)(struct floe_aggregator *, const struct floe_record *,
			    floe_agg_emit_fn, void *) = floe_agg_add;
	double spent = 0;
	/* 20,000 events per second of event time: a window every 1.2 M events. */
	for (uint64_t done = 0; done < events;) {
		size_t n = events - done < BATCH ? (size_t)(events - done) : BATCH;
		for (size_t i = 0; i < n; i++) {
			make(&batch[i], keys, typed, skew);
			if (csv)
				fprintf(csv, "%" PRIu64 ",%s,%s,%s,%s,%s\n", (done + i) * 50,
					batch[i].a, batch[i].b, batch[i].c, batch[i].v, batch[i].u);
		}
		double t0 = cpu_now();
		for (size_t i = 0; i < n; i++, done++) {
			struct ev *e = &batch[i];
			avals[0] = e->a, avlens[0] = e->la;
			avals[1] = e->b, avlens[1] = e->lb;
			avals[2] = e->c, avlens[2] = e->lc;
			avals[3] = e->v, avlens[3] = e->lv;
			avals[4] = e->u, avlens[4] = e->lu;
			r.typed = e->t;
			r.ts = r.received_at = (int64_t)(done * 50);
			add(g, &r, count_row, NULL);
		}
		spent += cpu_now() - t0;
	}
	double t0 = cpu_now();
	floe_agg_flush(g, count_row, NULL);
	spent += cpu_now() - t0;
	const struct floe_agg_stats *st = floe_agg_stats(g);
	struct floe_agg_plan p;
	floe_agg_plan(&cfg->aggs[0], &p, NULL);
	printf("keys %" PRIu64 " %s: %" PRIu64 " events in %.2f CPU s: %.2f M events/s; %" PRIu64
	       " windows, %" PRIu64 " rows, %" PRIu64 " events in __overflow__, %" PRIu64
	       " sketches coarse\n",
	       keys, skew ? "typed-skew" : typed ? "typed" : "text", events, spent, (double)events / spent / 1e6,
	       st->windows, rows, st->overflowed, st->coarse);
	printf("keys %" PRIu64 ": reserved %.1f MiB (%u window(s) x %" PRIu64 " groups x %" PRIu64
	       " bytes), at most %.1f MiB allocated (the pools grown within %.1f MiB); peak RSS "
	       "%.1f MiB (%.1f MiB before the first event)\n",
	       keys, p.total / 1048576.0, p.windows, p.groups, p.group_bytes,
	       floe_alloc_peak(&a) / 1048576.0, floe_agg_growth(cfg, 0, 0) / 1048576.0,
	       peak_rss_kib() / 1024.0, rss_start / 1024.0);
	if (want_digest)
		printf("rows digest %016" PRIx64 "\n", digest);
	if ((csv && fclose(csv) != 0) || (results && fclose(results) != 0))
		return 1;
	free(batch);
	floe_agg_free(g);
	floe_config_free(cfg);
	return 0;
}
