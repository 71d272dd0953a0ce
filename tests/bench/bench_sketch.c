/* Micro-benchmark of the aggregation sketches: updates per second and bytes per sketch,
 * for one sketch in cache and for a slab of 1,000 sketches updated in random order (as a
 * group table would), plus merge, estimate/quantile and serialisation costs. Prints
 * figures; asserts nothing about speed.
 *
 * usage: bench_sketch [--quick]
 *        bench_sketch dds-interop DIR   writes DDSketch windows for the interop test:
 *          DIR/wN.pb (protobuf), DIR/wN.txt (the raw values), DIR/c.json (floe's
 *          quantiles per window, of the merged sketch, and of a mixed-sign sketch
 *          DIR/signed.pb). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "agent/agg/agg_math.h"
#include "agent/agg/ddsketch.h"
#include "agent/agg/hll.h"
#include "agent/agg/pool.h"
#include "agent/agg/spacesaving.h"

#define BATCH 4096
static uint64_t rng_state = 42;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static double unif(void)
{
	return (double)((rng() >> 11) + 1) * (1.0 / 9007199254740992.0);
}

/* CPU time of this thread: the figures are per CPU second, and stay meaningful on a
 * machine shared with other work. */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A latency-like value: log-normal around 20 ms (Box-Muller without cos: the product
 * of two uniforms' logs is skewed enough for a benchmark). */
static double latency(void)
{
	return 20.0 * exp(0.8 * (log(unif()) - log(unif())));
}

static void report(const char *what, uint64_t n, double secs, size_t bytes)
{
	printf("%-44s %8.1f M updates/s %7.1f ns/update", what, n / secs / 1e6, secs / n * 1e9);
	if (bytes)
		printf("  %7zu bytes/sketch", bytes);
	printf("\n");
}

static uint8_t *slab;
static uint32_t groups[BATCH];
static double values[BATCH];
static uint64_t hashes[BATCH];
static char keys[BATCH][24];
static size_t keylens[BATCH];

static void bench_hll(uint64_t n, unsigned ngroups)
{
	unsigned ps[] = {12, 14, 16};
	for (int pi = 0; pi < 3; pi++) {
		size_t bytes = floe_hll_bytes(ps[pi]);
		struct floe_hll *h = calloc(ngroups, sizeof(*h));
		for (unsigned g = 0; g < ngroups; g++)
			floe_hll_init(&h[g], ps[pi], slab + (size_t)g * bytes, bytes);
		for (int one = 1; one >= 0; one--) {
			double spent = 0;
			for (uint64_t done = 0; done < n; done += BATCH) {
				for (int i = 0; i < BATCH; i++) {
					uint64_t v = rng() & 0xffffff;
					hashes[i] = floe_hll_hash(&v, sizeof(v));
					groups[i] = one ? 0 : (uint32_t)(rng() % ngroups);
				}
				double t1 = now();
				for (int i = 0; i < BATCH; i++)
					floe_hll_add_hash(&h[groups[i]], hashes[i]);
				spent += now() - t1;
			}
			char what[80];
			snprintf(what, sizeof(what), "hll p=%u add_hash, %s", ps[pi],
				 one ? "1 sketch" : "1000 sketches");
			report(what, n, spent, bytes);
		}
		/* Hashing included: 16-byte keys through XXH3 then the register. */
		double t1 = now();
		for (uint64_t i = 0; i < n; i++) {
			uint64_t k[2] = {i, i * 31};
			floe_hll_add(&h[0], k, sizeof(k));
		}
		char what[80];
		snprintf(what, sizeof(what), "hll p=%u add (XXH3 of 16 bytes), 1 sketch", ps[pi]);
		report(what, n, now() - t1, 0);
		t1 = now();
		double e = 0;
		for (int i = 0; i < 100; i++)
			e += floe_hll_estimate(&h[i % ngroups]);
		double te = (now() - t1) / 100;
		t1 = now();
		for (int i = 1; i < 101; i++)
			floe_hll_merge(&h[0], &h[i % ngroups]);
		double tm = (now() - t1) / 100;
		printf("hll p=%-2u estimate %.1f us, merge %.1f us, image %zu bytes (est %.0f)\n",
		       ps[pi], te * 1e6, tm * 1e6, floe_hll_serialized_size(&h[0]), e / 100);
		free(h);
	}
}

/* The HyperLogLog's life in a busy window, as bench_aggregate's typed run makes it: 1,000
 * pooled sketches in one window's pool, the items drawn at random over 10^5 values and
 * the sketches at random, 1,200 items a sketch, so that each goes through its coupon
 * list, its coupon set and its registers. The pool is one block of 20 MiB, not grown. */
static void bench_hll_window(unsigned ngroups)
{
	unsigned ps[] = {12, 14};
	size_t per = 20u << 10, own = floe_hll_list_bytes(14);
	uint8_t *mem = aligned_alloc(64, (size_t)ngroups * per);
	uint8_t *lists = aligned_alloc(64, (size_t)ngroups * own);
	struct floe_hll *h = calloc(ngroups, sizeof(*h));
	if (!mem || !lists || !h)
		goto out;
	for (int pi = 0; pi < 2; pi++) {
		double spent = 0;
		uint64_t n = 0;
		for (int round = 0; round < 4; round++) {
			struct floe_agg_pool pool = {.mem = mem, .size = (size_t)ngroups * per};
			for (unsigned g = 0; g < ngroups; g++)
				floe_hll_init_pooled(&h[g], ps[pi], lists + (size_t)g * own, own,
						     &pool);
			for (uint64_t done = 0; done < 1200ull * ngroups; done += BATCH) {
				for (int i = 0; i < BATCH; i++) {
					uint64_t v = rng() % 100000;
					hashes[i] = floe_hll_hash(&v, sizeof(v));
					groups[i] = (uint32_t)(rng() % ngroups);
				}
				double t1 = now();
				for (int i = 0; i < BATCH; i++)
					floe_hll_add_hash(&h[groups[i]], hashes[i]);
				spent += now() - t1;
				n += BATCH;
			}
		}
		char what[80];
		snprintf(what, sizeof(what), "hll p=%u pooled, 1200 items x 1000 sketches", ps[pi]);
		report(what, n, spent, 0);
	}
out:
	free(h);
	free(lists);
	free(mem);
}

static void bench_dds(uint64_t n, unsigned ngroups)
{
	struct floe_dds_config c;
	floe_dds_config_default(&c);
	size_t bytes = floe_dds_bytes(&c);
	struct floe_dds *s = calloc(ngroups, sizeof(*s));
	for (unsigned g = 0; g < ngroups; g++)
		floe_dds_init(&s[g], &c, slab + (size_t)g * bytes, bytes);
	for (int one = 1; one >= 0; one--) {
		double spent = 0;
		for (uint64_t done = 0; done < n; done += BATCH) {
			for (int i = 0; i < BATCH; i++) {
				values[i] = latency();
				groups[i] = one ? 0 : (uint32_t)(rng() % ngroups);
			}
			double t1 = now();
			for (int i = 0; i < BATCH; i++)
				floe_dds_add(&s[groups[i]], values[i]);
			spent += now() - t1;
		}
		report(one ? "ddsketch a=1% add, 1 sketch" : "ddsketch a=1% add, 1000 sketches", n,
		       spent, bytes + sizeof(struct floe_dds));
	}
	static uint8_t img[1 << 16];
	double t1 = now(), q = 0;
	for (int i = 0; i < 1000; i++)
		q += floe_dds_quantile(&s[i % ngroups], 0.99);
	double tq = (now() - t1) / 1000;
	t1 = now();
	for (int i = 1; i < 101; i++)
		floe_dds_merge(&s[0], &s[i % ngroups]);
	double tm = (now() - t1) / 100;
	t1 = now();
	for (int i = 0; i < 100; i++)
		floe_dds_encode_proto(&s[i % ngroups], img, sizeof(img));
	double tenc = (now() - t1) / 100;
	printf("ddsketch quantile %.2f us, merge %.1f us, protobuf %.1f us and %zu bytes "
	       "(p99 %.1f)\n",
	       tq * 1e6, tm * 1e6, tenc * 1e6, floe_dds_proto_size(&s[1]), q / 1000);
	free(s);
}

static void bench_ss(uint64_t n, unsigned ngroups)
{
	unsigned ks[] = {10, 100};
	for (int ki = 0; ki < 2; ki++) {
		size_t bytes = (floe_ss_bytes(ks[ki], 64) + 7) & ~(size_t)7;
		struct floe_ss *s = calloc(ngroups, sizeof(*s));
		for (unsigned g = 0; g < ngroups; g++)
			floe_ss_init(&s[g], ks[ki], 64, slab + (size_t)g * bytes, bytes);
		for (int one = 1; one >= 0; one--) {
			double spent = 0;
			for (uint64_t done = 0; done < n; done += BATCH) {
				for (int i = 0; i < BATCH; i++) {
					/* Skewed: half the events among 8 keys, the rest among
					 * 10^5. */
					uint64_t r = rng();
					unsigned key = (r & 1) ? (unsigned)(r >> 1) % 8
							       : (unsigned)(r >> 1) % 100000;
					keylens[i] = (size_t)snprintf(keys[i], sizeof(keys[i]),
								      "/api/v1/item/%u", key);
					groups[i] = one ? 0 : (uint32_t)(rng() % ngroups);
				}
				double t1 = now();
				for (int i = 0; i < BATCH; i++)
					floe_ss_add(&s[groups[i]], keys[i], keylens[i]);
				spent += now() - t1;
			}
			char what[80];
			snprintf(what, sizeof(what), "spacesaving k=%u add, %s", ks[ki],
				 one ? "1 sketch" : "1000 sketches");
			report(what, n, spent, bytes + sizeof(struct floe_ss));
		}
		double t1 = now();
		for (int i = 1; i < 101; i++)
			floe_ss_merge(&s[0], &s[i % ngroups]);
		printf("spacesaving k=%u merge %.1f us, checkpoint image %zu bytes\n", ks[ki],
		       (now() - t1) / 100 * 1e6, floe_ss_serialized_size(&s[0]));
		free(s);
	}
}

/* The interop mode: six windows of non-negative values of different shapes (sketches-js
 * merges only the positive store and the zero count, so the merged windows stay
 * non-negative), and one mixed-sign sketch that is decoded but not merged. */
static const double interop_qs[] = {0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1};
#define NQ (sizeof(interop_qs) / sizeof(interop_qs[0]))

static double interop_value(int w)
{
	switch (w % 4) {
	case 0:
		return latency();
	case 1: /* Pareto(1.2) from 0.5: heavy tail */
		return 0.5 * exp(-log(unif()) / 1.2);
	case 2:
		return rng() % 20 == 0 ? 0.0 : -3.0 * log(unif());
	default:
		return 1000.0 * unif();
	}
}

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(p, 1, n, f) != n) {
		perror(path);
		if (f)
			fclose(f);
		return 1;
	}
	return fclose(f) != 0;
}

static void print_qs(FILE *j, const struct floe_dds *s)
{
	fprintf(j, "[");
	for (size_t i = 0; i < NQ; i++)
		fprintf(j, "%s%.17g", i ? ", " : "", floe_dds_quantile(s, interop_qs[i]));
	fprintf(j, "]");
}

static int dds_interop(const char *dir)
{
	static uint32_t mem[2][2048 + 512], mem_s[2048 + 512];
	static uint8_t img[1 << 16];
	static char path[4096];
	struct floe_dds w, all, sig;
	struct floe_dds_config c;
	floe_dds_config_default(&c);
	floe_dds_init(&all, &c, mem[1], sizeof(mem[1]));
	snprintf(path, sizeof(path), "%s/c.json", dir);
	FILE *j = fopen(path, "w");
	if (!j)
		return 1;
	fprintf(j, "{\"qs\": [");
	for (size_t i = 0; i < NQ; i++)
		fprintf(j, "%s%g", i ? ", " : "", interop_qs[i]);
	fprintf(j, "],\n \"windows\": [");
	int rc = 0;
	for (int wi = 0; wi < 6 && !rc; wi++) {
		floe_dds_init(&w, &c, mem[0], sizeof(mem[0]));
		char name[32];
		snprintf(name, sizeof(name), "%s/w%d.txt", dir, wi);
		FILE *t = fopen(name, "w");
		if (!t)
			return 1;
		int n = 3000 + 3000 * wi;
		for (int i = 0; i < n; i++) {
			double v = interop_value(wi);
			floe_dds_add(&w, v);
			fprintf(t, "%.17g\n", v);
		}
		rc |= fclose(t) != 0;
		rc |= floe_dds_merge(&all, &w);
		size_t len = floe_dds_proto_size(&w);
		rc |= floe_dds_encode_proto(&w, img, sizeof(img));
		snprintf(name, sizeof(name), "w%d.pb", wi);
		rc |= write_file(dir, name, img, len);
		fprintf(j, "%s\n  ", wi ? "," : "");
		print_qs(j, &w);
	}
	fprintf(j, "],\n \"merged\": ");
	print_qs(j, &all);
	floe_dds_init(&sig, &c, mem_s, sizeof(mem_s));
	for (int i = 0; i < 5000; i++) {
		double v = latency();
		floe_dds_add(&sig, i % 10 == 0 ? 0.0 : i % 3 == 0 ? -v : v);
	}
	rc |= floe_dds_encode_proto(&sig, img, sizeof(img));
	rc |= write_file(dir, "signed.pb", img, floe_dds_proto_size(&sig));
	fprintf(j, ",\n \"signed\": ");
	print_qs(j, &sig);
	fprintf(j, "\n}\n");
	rc |= fclose(j) != 0;
	return rc ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "dds-interop"))
		return dds_interop(argv[2]);
	uint64_t n = argc > 1 && !strcmp(argv[1], "--quick") ? 1u << 20 : 1u << 24;
	const unsigned ngroups = 1000;
	slab = aligned_alloc(64, (size_t)ngroups * (1u << 16)); /* 64 KiB a group at most */
	if (!slab)
		return 1;
	printf("%" PRIu64 " updates per line, per CPU second of this thread; '1000 sketches' "
	       "picks a random sketch of a preallocated slab per update (a group table's "
	       "access pattern)\n",
	       n);
	bench_hll(n, ngroups);
	bench_hll_window(ngroups);
	bench_dds(n, ngroups);
	bench_ss(n, ngroups);
	free(slab);
	return 0;
}
