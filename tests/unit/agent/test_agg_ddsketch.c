/* Unit tests for agent/agg/ddsketch: relative error within the configured accuracy on
 * uniform, exponential, heavy-tailed and mixed-sign inputs at several accuracies, the
 * collapsing stores, merge against the sketch of the union, the protobuf image byte by
 * byte and round trip, the decoder's other encodings and hostile images, and no
 * allocation on the add/merge/quantile/encode/decode paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include "agent/agg/agg_math.h"
#include "agent/agg/ddsketch_impl.h"
#include "agent/agg/ddsketch.h"
#include "formats/base/error.h"
#include "agg_nomalloc.h"

/* floe_dds_decode_proto with the old offset out-parameter these tests check (written only on
 * failure), and the error detail checked to agree with the code. */
static int dds_decode_proto(struct floe_dds *s, const void *p, size_t len, size_t *off)
{
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_dds_decode_proto(s, p, len, &e);
	if (rc) {
		assert_int_equal(e.code, rc);
		assert_true(e.msg[0] != '\0');
		if (off)
			*off = e.offset;
	}
	return rc;
}

#define N 20000
static uint32_t mem_a[16384], mem_b[16384], mem_c[16384];
static double vals[N], sorted[N];
static uint8_t img[65536], img2[65536];
static const double qs[] = {0, 0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 1};

static uint64_t rng_state;
static uint64_t rng(void)
{
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

/* Uniform in (0, 1]. */
static double unif(void)
{
	return (double)((rng() >> 11) + 1) * (1.0 / 9007199254740992.0);
}

enum dist { UNIFORM, EXPONENTIAL, PARETO, LOGUNIFORM, MIXED };
static const char *const dist_name[] = {"uniform", "exponential", "pareto(1.1)", "log-uniform",
					"mixed-sign"};

static double draw(enum dist d)
{
	switch (d) {
	case UNIFORM:
		return 1000.0 * unif();
	case EXPONENTIAL:
		return -50.0 * log(unif());
	case PARETO: /* heavy tail: x_m / U^(1/1.1) */
		return 2.0 * exp(-log(unif()) / 1.1);
	case LOGUNIFORM: /* 12 decades, 1e-6 .. 1e6 */
		return exp((unif() * 24.0 - 12.0) * 1.151292546497023);
	default: { /* both signs and exact zeros */
		uint64_t r = rng() % 10;
		if (r == 0)
			return 0.0;
		double v = -30.0 * log(unif());
		return r < 4 ? -v : v;
	}
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void init(struct floe_dds *s, double a, uint32_t pos, uint32_t neg, uint32_t *mem)
{
	struct floe_dds_config c = {a, pos, neg};
	assert_int_equal(floe_dds_init(s, &c, mem, sizeof(mem_a)), 0);
}

/* Fills vals with n draws and the sketch with them; sorted receives them in order. */
static void fill(struct floe_dds *s, enum dist d, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		vals[i] = draw(d);
		assert_int_equal(floe_dds_add(s, vals[i]), 0);
	}
	memcpy(sorted, vals, n * sizeof(double));
	qsort(sorted, n, sizeof(double), cmp_double);
}

/* The worst relative error over qs against the element at rank floor(q (n - 1)). */
static double worst_error(const struct floe_dds *s, size_t n)
{
	double worst = 0.0;
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double exact = sorted[(size_t)(qs[i] * (double)(n - 1))];
		double est = floe_dds_quantile(s, qs[i]);
		double err = exact == 0.0 ? __builtin_fabs(est) : __builtin_fabs(est / exact - 1.0);
		if (err > worst)
			worst = err;
	}
	return worst;
}

static void test_config(void **state)
{
	struct floe_dds_config c;
	struct floe_dds s;
	floe_dds_config_default(&c);
	assert_true(c.rel_acc == 0.01 && c.pos_bins == 2048 && c.neg_bins == 512);
	assert_int_equal(floe_dds_bytes(&c), (2048 + 512) * 4);
	struct floe_dds_config bad[] = {{0, 8, 8},
					{0.6, 8, 8},
					{0.01, 0, 8},
					{0.01, 8, 0},
					{0.01, (1u << 20) + 1, 8},
					{__builtin_nan(""), 8, 8}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(floe_dds_bytes(&bad[i]), 0);
		assert_int_equal(floe_dds_init(&s, &bad[i], mem_a, sizeof(mem_a)), FLOE_EINVAL);
	}
	assert_int_equal(floe_dds_init(&s, &c, mem_a, (2048 + 512) * 4 - 1), FLOE_ELIMIT);
	assert_int_equal(floe_dds_init(&s, &c, (char *)mem_a + 2, sizeof(mem_a) - 4), FLOE_EINVAL);
	assert_int_equal(floe_dds_init(&s, &c, mem_a, sizeof(mem_a)), 0);
	assert_true(floe_dds_quantile(&s, 0.5) != floe_dds_quantile(&s, 0.5)); /* NaN */
	assert_int_equal(floe_dds_add(&s, __builtin_nan("")), FLOE_EINVAL);
	assert_int_equal(floe_dds_add(&s, __builtin_inf()), FLOE_EINVAL);
	assert_int_equal(floe_dds_add(&s, -__builtin_inf()), FLOE_EINVAL);
	assert_int_equal(s.count, 0);
	assert_int_equal(floe_dds_add(&s, 3.0), 0);
	assert_true(floe_dds_quantile(&s, -0.1) != floe_dds_quantile(&s, -0.1));
	assert_true(floe_dds_quantile(&s, 1.1) != floe_dds_quantile(&s, 1.1));
	/* The buckets count in 32 bits: a full sketch refuses more, unchanged. */
	s.count = UINT32_MAX;
	assert_int_equal(floe_dds_add(&s, 3.0), FLOE_ELIMIT);
	assert_int_equal(s.pos.count, 1);
}

static void test_accuracy(void **state)
{
	const double accs[] = {0.01, 0.05, 0.002};
	for (size_t ai = 0; ai < 3; ai++) {
		for (int d = UNIFORM; d <= MIXED; d++) {
			if (d == LOGUNIFORM && accs[ai] < 0.01)
				continue; /* 12 decades need 6900 buckets at 0.2 % */
			double worst = 0.0;
			for (uint64_t seed = 1; seed <= 20; seed++) {
				struct floe_dds s;
				/* 0.2 % needs up to 4500 buckets for these ranges. */
				init(&s, accs[ai], 8192, 8192, mem_a);
				rng_state = seed * 1000003 + (uint64_t)d;
				fill(&s, (enum dist)d, N);
				assert_false(floe_dds_collapsed(&s));
				double w = worst_error(&s, N);
				if (w > accs[ai] * (1 + 1e-9))
					fail_msg("%s a=%g seed %llu: error %g", dist_name[d],
						 accs[ai], (unsigned long long)seed, w);
				worst = w > worst ? w : worst;
				assert_int_equal(s.count, N);
				assert_true(s.min == sorted[0] && s.max == sorted[N - 1]);
			}
			printf("ddsketch a=%-5g %-12s 20 seeds x %d values: worst quantile error "
			       "%.4f %%\n",
			       accs[ai], dist_name[d], N, 100 * worst);
		}
	}
}

static void test_collapse_lowest(void **state)
{
	/* 12 decades into 1024 buckets (8.9 decades at 1 %): the lowest buckets fold. The
	 * quantiles above the folded range keep the accuracy; below it the answer is the
	 * lowest kept bucket, never below the true value by more than the accuracy. */
	struct floe_dds s;
	init(&s, 0.01, 1024, 16, mem_a);
	rng_state = 77;
	fill(&s, LOGUNIFORM, N);
	assert_true(floe_dds_collapsed(&s));
	int accurate = 0;
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double exact = sorted[(size_t)(qs[i] * (N - 1))];
		double est = floe_dds_quantile(&s, qs[i]);
		assert_true(est >= exact * (1 - 0.01 - 1e-12));
		if (exact >= 1e-2) {
			assert_true(__builtin_fabs(est / exact - 1) <= 0.01 + 1e-12);
			accurate++;
		}
	}
	assert_true(accurate >= 7); /* q >= 0.5 */
	/* Negative values collapse the same way, by magnitude (those nearest zero). */
	init(&s, 0.01, 16, 64, mem_a);
	for (int i = 0; i < 200; i++)
		assert_int_equal(floe_dds_add(&s, -exp(i * 0.05)), 0);
	assert_true(floe_dds_collapsed(&s));
	double q0 = floe_dds_quantile(&s, 0.0), want = -exp(199 * 0.05);
	assert_true(__builtin_fabs(q0 / want - 1) <= 0.01 + 1e-12);
}

static void test_merge_is_union(void **state)
{
	for (int d = UNIFORM; d <= MIXED; d++) {
		struct floe_dds a, b, u;
		init(&a, 0.01, 2048, 512, mem_a);
		init(&b, 0.01, 2048, 512, mem_b);
		init(&u, 0.01, 2048, 512, mem_c);
		rng_state = 99 + (uint64_t)d;
		for (int i = 0; i < N; i++) {
			double v = draw((enum dist)d);
			assert_int_equal(floe_dds_add(i % 3 ? &a : &b, v), 0);
			assert_int_equal(floe_dds_add(&u, v), 0);
		}
		assert_int_equal(floe_dds_merge(&a, &b), 0);
		size_t n = floe_dds_proto_size(&a);
		assert_int_equal(n, floe_dds_proto_size(&u));
		assert_int_equal(floe_dds_encode_proto(&a, img, sizeof(img)), 0);
		assert_int_equal(floe_dds_encode_proto(&u, img2, sizeof(img2)), 0);
		assert_memory_equal(img, img2, n); /* every bucket count, exactly */
		assert_int_equal(a.count, u.count);
		assert_int_equal(a.zero_count, u.zero_count);
		assert_true(a.min == u.min && a.max == u.max);
		assert_true(__builtin_fabs(a.sum - u.sum) <= 1e-9 * __builtin_fabs(u.sum) + 1e-9);
	}
	/* A smaller budget folds the union's low end; another accuracy is refused. */
	struct floe_dds a, b;
	init(&a, 0.01, 64, 8, mem_a);
	init(&b, 0.01, 2048, 512, mem_b);
	rng_state = 5;
	fill(&b, LOGUNIFORM, 5000);
	assert_int_equal(floe_dds_merge(&a, &b), 0);
	assert_true(floe_dds_collapsed(&a));
	assert_int_equal(a.count, 5000);
	assert_true(__builtin_fabs(floe_dds_quantile(&a, 1.0) / sorted[4999] - 1) <= 0.01 + 1e-12);
	init(&a, 0.02, 64, 8, mem_a);
	assert_int_equal(floe_dds_merge(&a, &b), FLOE_EINVAL);
	init(&a, 0.01, 64, 8, mem_a);
	a.count = UINT32_MAX - 4999;
	assert_int_equal(floe_dds_merge(&a, &b), FLOE_ELIMIT);
	assert_int_equal(a.pos.count, 0);
}

static double le_double(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)b[i] << (8 * i);
	return floe_agg_from_bits(v);
}

static void test_proto_bytes(void **state)
{
	struct floe_dds s;
	init(&s, 0.01, 2048, 512, mem_a);
	/* Empty: the mapping, two empty stores, zeroCount 0. */
	uint8_t want[64] = {0x0a, 20, 0x09};
	double gamma = 1.0 + 0.02 / 0.99;
	assert_int_equal(floe_dds_proto_size(&s), 2 + 20 + 2 + 2 + 9);
	assert_int_equal(floe_dds_encode_proto(&s, img, 34), FLOE_ELIMIT);
	assert_int_equal(floe_dds_encode_proto(&s, img, 35), 0);
	assert_memory_equal(img, want, 3);
	assert_true(le_double(img + 3) == gamma);
	const uint8_t rest[] = {0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0x18, 0, 0x12, 0, 0x1a, 0, 0x21};
	assert_memory_equal(img + 11, rest, sizeof(rest));
	assert_true(le_double(img + 27) == 0.0);
	/* 5.0 lies in bucket ceil(ln 5 / ln gamma) = 81: a packed count of 1.0 at
	 * contiguousBinIndexOffset 81 (zigzag 162 = a2 01); -5.0 the same in the negative
	 * store; one zero. */
	assert_int_equal(floe_dds_add(&s, 5.0), 0);
	assert_int_equal(floe_dds_add(&s, -5.0), 0);
	assert_int_equal(floe_dds_add(&s, 0.0), 0);
	const uint8_t store[] = {0x0d, 0x12, 0x08, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0x18, 0xa2, 0x01};
	assert_int_equal(floe_dds_encode_proto(&s, img, sizeof(img)), 0);
	assert_int_equal(img[22], 0x12);
	assert_memory_equal(img + 23, store, sizeof(store));
	assert_int_equal(img[37], 0x1a);
	assert_memory_equal(img + 38, store, sizeof(store));
	assert_int_equal(img[52], 0x21);
	assert_true(le_double(img + 53) == 1.0);
	assert_int_equal(floe_dds_proto_size(&s), 61);
	double v = floe_dds_quantile(&s, 1.0);
	assert_true(__builtin_fabs(v / 5.0 - 1) <= 0.01);
	assert_true(floe_dds_quantile(&s, 0.5) == 0.0);
	assert_true(floe_dds_quantile(&s, 0.0) == -v);
}

static void test_proto_round_trip(void **state)
{
	for (int d = UNIFORM; d <= MIXED; d++) {
		struct floe_dds s, r;
		init(&s, 0.01, 2048, 512, mem_a);
		init(&r, 0.01, 2048, 512, mem_b);
		rng_state = 1234 + (uint64_t)d;
		fill(&s, (enum dist)d, 5000);
		size_t n = floe_dds_proto_size(&s), off = 0;
		assert_int_equal(floe_dds_encode_proto(&s, img, n), 0);
		assert_int_equal(dds_decode_proto(&r, img, n, &off), 0);
		assert_int_equal(r.count, s.count);
		assert_int_equal(r.zero_count, s.zero_count);
		assert_true(r.sum != r.sum); /* not in the format: left for the caller */
		for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++)
			assert_true(floe_dds_quantile(&r, qs[i]) == floe_dds_quantile(&s, qs[i]));
		assert_int_equal(floe_dds_proto_size(&r), n);
		assert_int_equal(floe_dds_encode_proto(&r, img2, n), 0);
		assert_memory_equal(img, img2, n);
	}
}

/* A little protobuf writer for hand-made messages. */
struct msg {
	uint8_t b[512];
	size_t n;
};

static void m_varint(struct msg *m, uint64_t v)
{
	while (v >= 0x80) {
		m->b[m->n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	m->b[m->n++] = (uint8_t)v;
}

static void m_tag(struct msg *m, unsigned field, unsigned wt)
{
	m_varint(m, (uint64_t)field << 3 | wt);
}

static void m_double(struct msg *m, double d)
{
	uint64_t v = floe_agg_bits(d);
	for (int i = 0; i < 8; i++)
		m->b[m->n++] = (uint8_t)(v >> (8 * i));
}

static void m_sint32(struct msg *m, int32_t v)
{
	m_varint(m, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

static void m_sub(struct msg *m, unsigned field, const struct msg *sub)
{
	m_tag(m, field, 2);
	m_varint(m, sub->n);
	memcpy(m->b + m->n, sub->b, sub->n);
	m->n += sub->n;
}

/* A mapping message: gamma as sketches-go writes it, (1 + a) / (1 - a). */
static void m_mapping(struct msg *m, double a, double index_offset, unsigned interp)
{
	struct msg mp = {.n = 0};
	m_tag(&mp, 1, 1);
	m_double(&mp, (1 + a) / (1 - a));
	m_tag(&mp, 2, 1);
	m_double(&mp, index_offset);
	m_tag(&mp, 3, 0);
	m_varint(&mp, interp);
	m_sub(m, 1, &mp);
}

static void m_entry(struct msg *st, int32_t key, double count)
{
	struct msg e = {.n = 0};
	m_tag(&e, 2, 1); /* value before key: any order is valid */
	m_double(&e, count);
	m_tag(&e, 1, 0);
	m_sint32(&e, key);
	m_sub(st, 1, &e);
}

static double bucket_value(double a, int64_t k)
{
	double gamma = (1 + a) / (1 - a);
	return exp((double)k * log(gamma)) * 2 / (1 + gamma);
}

static int decode(struct floe_dds *r, const struct msg *m, size_t *off)
{
	return dds_decode_proto(r, m->b, m->n, off);
}

static void near(double got, double want)
{
	if (!(__builtin_fabs(got / want - 1) <= 1e-9))
		fail_msg("got %.17g, want %.17g", got, want);
}

static void test_decode_other_encodings(void **state)
{
	struct floe_dds r;
	init(&r, 0.01, 2048, 512, mem_a);
	struct msg m = {.n = 0}, st = {.n = 0}, unk = {.n = 0};
	/* Fields out of order, unknown fields, the map form, unpacked contiguous counts
	 * placed before the last of two contiguousBinIndexOffsets (which wins), and two
	 * zeroCounts (the last wins). */
	m_tag(&m, 4, 1);
	m_double(&m, 5.0);
	m_entry(&st, 81, 2.0);
	m_tag(&st, 7, 0);
	m_varint(&st, 12345);
	m_tag(&st, 3, 0);
	m_sint32(&st, 10);
	m_tag(&st, 2, 1);
	m_double(&st, 1.0);
	m_tag(&st, 2, 1);
	m_double(&st, 4.0);
	m_entry(&st, -3, 1.0);
	m_tag(&st, 3, 0);
	m_sint32(&st, 12);
	m_sub(&m, 2, &st);
	m_tag(&unk, 1, 5);
	memset(unk.b + unk.n, 0, 4);
	unk.n += 4;
	m_sub(&m, 9, &unk);
	m_mapping(&m, 0.01, 0.0, 0);
	m_tag(&m, 4, 1);
	m_double(&m, 2.0);
	size_t off = 0;
	assert_int_equal(decode(&r, &m, &off), 0);
	assert_int_equal(r.count, 10);
	assert_int_equal(r.zero_count, 2);
	/* Ranks 0-1 zero, 2 bucket -3, 3 bucket 12, 4-7 bucket 13, 8-9 bucket 81. */
	assert_true(floe_dds_quantile(&r, 0.0) == 0.0);
	near(floe_dds_quantile(&r, 2.0 / 9), bucket_value(0.01, -3));
	near(floe_dds_quantile(&r, 3.0 / 9), bucket_value(0.01, 12));
	near(floe_dds_quantile(&r, 5.0 / 9), bucket_value(0.01, 13));
	near(floe_dds_quantile(&r, 1.0), bucket_value(0.01, 81));

	/* A non-zero indexOffset shifts every index: 86 at offset 5 is bucket 81. */
	struct msg m2 = {.n = 0}, st2 = {.n = 0};
	m_mapping(&m2, 0.01, 5.0, 0);
	m_tag(&st2, 2, 2);
	m_varint(&st2, 8);
	m_double(&st2, 3.0);
	m_tag(&st2, 3, 0);
	m_sint32(&st2, 86);
	m_sub(&m2, 3, &st2);
	assert_int_equal(decode(&r, &m2, &off), 0);
	assert_int_equal(r.count, 3);
	near(floe_dds_quantile(&r, 0.5), -bucket_value(0.01, 81));

	/* Other mappings. */
	struct msg m3 = {.n = 0};
	m_mapping(&m3, 0.01, 0.0, 3);
	assert_int_equal(decode(&r, &m3, &off), FLOE_EUNSUPPORTED);
	m3.n = 0;
	m_mapping(&m3, 0.02, 0.0, 0);
	assert_int_equal(decode(&r, &m3, &off), FLOE_EFORMAT);
	m3.n = 0;
	m_mapping(&m3, 0.01, 0.5, 0);
	assert_int_equal(decode(&r, &m3, &off), FLOE_EUNSUPPORTED);
	m3.n = 0;
	m_tag(&m3, 4, 1);
	m_double(&m3, 1.0);
	assert_int_equal(decode(&r, &m3, &off), FLOE_EFORMAT); /* no mapping */
	/* Failures left the last good decode in place. */
	assert_int_equal(r.count, 3);
}

/* A valid message with one positive store; returns the offset of its first count. */
static size_t one_store(struct msg *m, int32_t offset, double count)
{
	struct msg st = {.n = 0};
	m->n = 0;
	m_mapping(m, 0.01, 0.0, 0);
	m_tag(&st, 3, 0);
	m_sint32(&st, offset);
	m_tag(&st, 2, 2);
	m_varint(&st, 16);
	size_t at = st.n;
	m_double(&st, 1.0);
	m_double(&st, count);
	m_sub(m, 2, &st);
	return m->n - st.n + at + 8;
}

static void expect(const struct msg *m, int code, size_t at)
{
	struct floe_dds r;
	init(&r, 0.01, 2048, 512, mem_b);
	size_t off = (size_t)-1;
	int rc = dds_decode_proto(&r, m->b, m->n, &off);
	if (rc != code || off != at)
		fail_msg("got %d at %zu, want %d at %zu", rc, off, code, at);
}

static void test_decode_hostile(void **state)
{
	struct floe_dds s, r;
	init(&s, 0.01, 2048, 512, mem_a);
	init(&r, 0.01, 2048, 512, mem_b);
	rng_state = 3;
	fill(&s, MIXED, 2000);
	size_t n = floe_dds_proto_size(&s), off;
	assert_int_equal(floe_dds_encode_proto(&s, img, n), 0);
	/* Any prefix decodes (a message may end at a field boundary) or fails within it. */
	for (size_t len = 0; len < n; len++) {
		off = (size_t)-1;
		int rc = dds_decode_proto(&r, img, len, &off);
		assert_true(rc == 0 || (rc < 0 && off <= len));
	}
	struct msg m;
	size_t at = one_store(&m, 7, 2.0);
	expect(&m, 0, (size_t)-1);
	at = one_store(&m, 7, 2.5);
	expect(&m, FLOE_EUNSUPPORTED, at);
	at = one_store(&m, 7, -1.0);
	expect(&m, FLOE_EFORMAT, at);
	at = one_store(&m, 7, __builtin_nan(""));
	expect(&m, FLOE_EFORMAT, at);
	at = one_store(&m, 7, __builtin_inf());
	expect(&m, FLOE_EFORMAT, at);
	at = one_store(&m, 7, 4294967295.0); /* with the other 1.0, one too many */
	expect(&m, FLOE_ELIMIT, at);
	at = one_store(&m, 7, 1e300);
	expect(&m, FLOE_ELIMIT, at);
	/* An index no double can have. */
	at = one_store(&m, 2000000000, 1.0);
	expect(&m, FLOE_EFORMAT, at - 8);
	/* Wire-level damage. */
	struct msg w = {.n = 0};
	m_tag(&w, 9, 0);
	for (int i = 0; i < 10; i++)
		w.b[w.n++] = 0xff;
	w.b[w.n++] = 0x01;
	expect(&w, FLOE_EPARSE, 1); /* an 11-byte varint */
	w.n = 0;
	m_tag(&w, 2, 2);
	m_varint(&w, 100); /* longer than the message */
	expect(&w, FLOE_EPARSE, 1);
	w.n = 0;
	m_tag(&w, 5, 3); /* a group */
	expect(&w, FLOE_EUNSUPPORTED, 1);
	w.n = 0;
	m_tag(&w, 5, 6); /* no such wire type */
	expect(&w, FLOE_EPARSE, 1);
	w.n = 0;
	m_varint(&w, 2); /* field 0 */
	expect(&w, FLOE_EPARSE, 0);
	w.n = 0;
	m_tag(&w, 1, 0); /* the mapping as a varint */
	m_varint(&w, 1);
	expect(&w, FLOE_EFORMAT, 1);
	w.n = 0;
	m_mapping(&w, 0.01, 0, 0);
	struct msg st = {.n = 0};
	m_tag(&st, 2, 2);
	m_varint(&st, 7); /* packed doubles of 7 bytes */
	memset(st.b + st.n, 0, 7);
	st.n += 7;
	m_sub(&w, 2, &st);
	expect(&w, FLOE_EPARSE, w.n - 7);
	w.n = 0;
	m_mapping(&w, 0.01, 0, 0);
	st.n = 0;
	m_tag(&st, 3, 0);
	m_varint(&st, (uint64_t)1 << 33); /* a sint32 of 34 bits */
	m_sub(&w, 2, &st);
	expect(&w, FLOE_EFORMAT, w.n - st.n + 1);
	/* The sketch a failing decode was given is as it was. */
	double before = floe_dds_quantile(&s, 0.9);
	at = one_store(&m, 7, 2.5);
	assert_int_equal(dds_decode_proto(&s, m.b, m.n, &off), FLOE_EUNSUPPORTED);
	assert_true(floe_dds_quantile(&s, 0.9) == before);
	assert_int_equal(s.count, 2000);
}

/* Both images of two sketches, and every quantile, are the same. */
static void assert_same(const struct floe_dds *a, const struct floe_dds *b)
{
	assert_int_equal(floe_dds_proto_size(a), floe_dds_proto_size(b));
	assert_int_equal(floe_dds_encode_proto(a, img, sizeof(img)), 0);
	assert_int_equal(floe_dds_encode_proto(b, img2, sizeof(img2)), 0);
	assert_memory_equal(img, img2, floe_dds_proto_size(b));
	for (size_t q = 0; q < sizeof(qs) / sizeof(qs[0]); q++)
		assert_true(floe_dds_quantile(a, qs[q]) == floe_dds_quantile(b, qs[q]));
}

/* A pooled sketch keeps its occupied buckets as pairs in 128 bytes while they fit; then
 * the store that overflows takes a window of the pool sized to twice its occupied range
 * (a power of two, at least 64 buckets), and a larger one when the range widens, up to
 * its budget. With too little left in the pool it folds its lowest pairs, counted once.
 * At every step it answers, merges and serialises as the dense sketch of the same
 * values. */
static void test_sparse_pooled(void **state)
{
	(void)state;
	static uint32_t own[3][32];
	static uint64_t block[(1024 + 2048) / 2];
	uint64_t refused = 0;
	struct floe_agg_growth grow = {.refused = &refused};
	struct floe_agg_pool pool = {.mem = (uint8_t *)block, .size = sizeof(block), .grow = &grow};
	struct floe_dds_config c;
	floe_dds_config_default(&c);
	assert_int_equal(floe_dds_sparse_bytes(), 128);
	struct floe_dds sp[3], d;
	assert_int_equal(floe_dds_init_pooled(&sp[0], &c, own[0], 127, &pool), FLOE_ELIMIT);
	assert_int_equal(floe_dds_init_pooled(&sp[0], &c, own[0], 128, NULL), FLOE_EINVAL);
	for (int k = 0; k < 3; k++)
		assert_int_equal(floe_dds_init_pooled(&sp[k], &c, own[k], 128, &pool), 0);
	init(&d, 0.01, 2048, 512, mem_a);
	rng_state = 99;
	/* 12 positive and 4 negative buckets stay sparse. */
	for (int i = 0; i < 200; i++) {
		double v = i % 5 == 0 ? -(1 + i % 4) : 1000 * pow(1.0202, i % 12) * (1 + 0.001 * unif());
		assert_int_equal(floe_dds_add(&sp[0], v), 0);
		assert_int_equal(floe_dds_add(&d, v), 0);
	}
	assert_true(!sp[0].pos.bins && !sp[0].neg.bins && pool.used == 0);
	assert_same(&sp[0], &d);
	/* The 13th positive bucket, 265 buckets below the others: a window of 1024 (twice
	 * 266, to a power of two) for the positive store alone. */
	assert_int_equal(floe_dds_add(&sp[0], 5.0), 0);
	assert_int_equal(floe_dds_add(&d, 5.0), 0);
	assert_true(sp[0].pos.bins == (uint32_t *)block && sp[0].pos.cap == 1024);
	assert_true(!sp[0].neg.bins && pool.used == 4096 && refused == 0);
	assert_same(&sp[0], &d);
	/* Nine decades (1e-3 .. 1.2e6, 1,050 buckets): the whole budget, no folding. */
	assert_int_equal(floe_dds_add(&sp[0], 1e-3), 0);
	assert_int_equal(floe_dds_add(&d, 1e-3), 0);
	assert_int_equal(floe_dds_add(&sp[0], 1.2e6), 0);
	assert_int_equal(floe_dds_add(&d, 1.2e6), 0);
	assert_true(sp[0].pos.cap == 2048 && pool.used == 4096 + 8192 && refused == 0);
	assert_false(floe_dds_collapsed(&sp[0]));
	assert_same(&sp[0], &d);
	/* The pool is empty: the second sketch folds its lowest buckets, counted once, and
	 * its high quantiles stay within the accuracy. */
	fill(&sp[1], LOGUNIFORM, 5000);
	assert_int_equal(refused, 1);
	assert_null(sp[1].pos.bins);
	assert_true(floe_dds_collapsed(&sp[1]));
	assert_int_equal(sp[1].count, 5000);
	double want = sorted[(size_t)(0.999 * 4999)];
	assert_true(fabs(floe_dds_quantile(&sp[1], 0.999) / want - 1) <= 0.0101);
	/* A sparse sketch decodes a proto (the pairs that fit, then the pool: empty, so
	 * folded) and merges into any sketch. */
	assert_int_equal(floe_dds_encode_proto(&d, img2, sizeof(img2)), 0);
	assert_int_equal(floe_dds_decode_proto(&sp[2], img2, floe_dds_proto_size(&d), NULL), 0);
	assert_int_equal(sp[2].count, d.count);
	assert_int_equal(floe_dds_merge(&d, &sp[1]), 0);
	assert_int_equal(d.count, 5203);
	floe_dds_reset(&sp[0]);
	floe_agg_pool_reset(&pool);
	assert_null(sp[0].pos.bins);
	assert_true(isnan(floe_dds_quantile(&sp[0], 0.5)));
}

/* Groups of 1, 2, 100 and 10,000 values spread over 9 decades: pooled sketches answer and
 * serialise exactly as dense ones, and take from the pool about twice the bytes of their
 * occupied range (at most twice that again for the windows they outgrew), not the 10 KiB
 * of the budget. */
static void test_pooled_sizes(void **state)
{
	(void)state;
	static uint32_t own[32];
	static uint64_t block[1 << 13];
	struct floe_agg_pool pool = {.mem = (uint8_t *)block, .size = sizeof(block)};
	struct floe_dds_config c;
	floe_dds_config_default(&c);
	static const size_t ns[] = {1, 2, 100, 10000};
	/* In random order, then ascending: each new value widens the range, and the window
	 * grows under the value being added. */
	for (size_t k = 0; k < 2 * sizeof(ns) / sizeof(ns[0]); k++) {
		size_t n = ns[k % 4];
		bool up = k >= 4;
		struct floe_dds sp, d;
		floe_agg_pool_reset(&pool);
		assert_int_equal(floe_dds_init_pooled(&sp, &c, own, sizeof(own), &pool), 0);
		init(&d, 0.01, 2048, 512, mem_a);
		rng_state = 7 + k;
		for (size_t i = 0; i < n; i++) {
			/* 1e-3 .. 1e6; negative ones over 3 decades (their budget holds
			 * 4.4) */
			double u = up ? (double)i / (double)n : unif();
			double v = exp((u * 9.0 - 3.0) * 2.302585092994046);
			v = i % 7 == 3 ? -exp(unif() * 3.0 * 2.302585092994046) : v;
			assert_int_equal(floe_dds_add(&sp, v), 0);
			assert_int_equal(floe_dds_add(&d, v), 0);
		}
		assert_same(&sp, &d);
		assert_false(floe_dds_collapsed(&sp));
		int64_t lo;
		uint32_t pn, nn;
		floe_dds_store_span(&sp.pos, &lo, &pn);
		floe_dds_store_span(&sp.neg, &lo, &nn);
		size_t need = sp.pos.bins ? 4 * (size_t)(pn > 32 ? pn : 32) * 2 : 0;
		need += sp.neg.bins ? 4 * (size_t)(nn > 32 ? nn : 32) * 2 : 0;
		if (n <= 2)
			assert_int_equal(pool.used, 0);
		assert_true(pool.used <= 2 * 2 * need);
		printf("# %zu values over 9 decades%s: %zu pool bytes (occupied ranges %u + %u "
		       "buckets)\n",
		       n, up ? ", ascending" : "", pool.used, pn, nn);
	}
}

static void test_no_allocation(void **state)
{
	struct floe_dds a, b;
	init(&a, 0.01, 2048, 512, mem_a);
	init(&b, 0.01, 256, 64, mem_b);
	rng_state = 8;
	agg_nomalloc_arm();
	int rc = 0;
	for (int i = 0; i < 100000; i++)
		rc |= floe_dds_add(i & 1 ? &a : &b, draw(i & 2 ? MIXED : LOGUNIFORM));
	rc |= floe_dds_merge(&b, &a);
	double q = floe_dds_quantile(&b, 0.99);
	rc |= floe_dds_encode_proto(&b, img, sizeof(img));
	size_t off;
	rc |= dds_decode_proto(&a, img, floe_dds_proto_size(&b), &off);
	floe_dds_reset(&b);
	assert_int_equal(agg_nomalloc_disarm(), 0);
	assert_int_equal(rc, 0);
	assert_true(q > 0);
}

/* The table of small whole numbers' keys (floe_dds_int_keys, the aggregator's lookup in
 * place of a logarithm) holds, for every number and accuracy, the key floe_dds_prepare
 * computes for it, and a sketch given those keys holds what floe_dds_add gives it. */
static void test_int_keys_as_prepare(void **state)
{
	(void)state;
	static int32_t keys[4096];
	const double accs[] = {0.01, 0.001, 0.05, 0.2};
	for (size_t a = 0; a < sizeof(accs) / sizeof(accs[0]); a++) {
		struct floe_dds s, t;
		init(&s, accs[a], 2048, 512, mem_a);
		init(&t, accs[a], 2048, 512, mem_b);
		floe_dds_int_keys(&(struct floe_dds_config){accs[a], 2048, 512}, keys, 4096);
		assert_int_equal(keys[0], 0);
		for (uint32_t i = 1; i < 4096; i++) {
			assert_int_equal(keys[i], floe_dds_prepare(&s, (double)i));
			floe_dds_prefetch_pos(&s, keys[i]);
			assert_int_equal(floe_dds_add_prepared(&s, (double)i, keys[i]), 0);
			assert_int_equal(floe_dds_add(&t, (double)i), 0);
		}
		for (double q = 0; q <= 1.0; q += 0.125)
			assert_true(floe_dds_quantile(&s, q) == floe_dds_quantile(&t, q));
	}
}

/* floe_dds_add_prepared_inline (the aggregator's per-value add) gives what floe_dds_add
 * gives: results, counts and image, over values of both signs, zero, not finite, and a
 * small window that moves and folds. */
static void test_add_inline_as_add(void **state)
{
	(void)state;
	static uint8_t ia[1 << 16], ib[1 << 16];
	struct floe_dds s, t;
	init(&s, 0.01, 64, 16, mem_a);
	init(&t, 0.01, 64, 16, mem_b);
	uint64_t x = 3;
	for (int i = 0; i < 20000; i++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		double v = (double)(x >> 40) / (double)(1 << (x >> 60)) - (i % 9 == 0 ? 300 : 0);
		v = i % 101 == 0 ? NAN : i % 103 == 0 ? INFINITY : i % 7 == 0 ? 0.0 : v;
		assert_int_equal(floe_dds_add_prepared_inline(&s, v, floe_dds_prepare(&s, v)),
				 floe_dds_add(&t, v));
	}
	assert_true(s.count == t.count && s.sum == t.sum && s.min == t.min && s.max == t.max);
	assert_true(floe_dds_collapsed(&s) && floe_dds_collapsed(&t));
	assert_int_equal(floe_dds_proto_size(&s), floe_dds_proto_size(&t));
	assert_int_equal(floe_dds_encode_proto(&s, ia, sizeof(ia)), 0);
	assert_int_equal(floe_dds_encode_proto(&t, ib, sizeof(ib)), 0);
	assert_memory_equal(ia, ib, floe_dds_proto_size(&s));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_config),
	    cmocka_unit_test(test_accuracy),
	    cmocka_unit_test(test_collapse_lowest),
	    cmocka_unit_test(test_merge_is_union),
	    cmocka_unit_test(test_proto_bytes),
	    cmocka_unit_test(test_proto_round_trip),
	    cmocka_unit_test(test_decode_other_encodings),
	    cmocka_unit_test(test_decode_hostile),
	    cmocka_unit_test(test_sparse_pooled),
	    cmocka_unit_test(test_pooled_sizes),
	    cmocka_unit_test(test_no_allocation),
	    cmocka_unit_test(test_int_keys_as_prepare),
	    cmocka_unit_test(test_add_inline_as_add),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
