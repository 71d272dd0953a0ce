/* HyperLogLog: an exact coupon list that goes dense (8-bit registers, Ertl's improved
 * estimator) when full, and DataSketches' compact LIST, SET and HLL_8 images. See hll.h
 * for the contract, agent/agg/README.md for the memory and the bytes. */
#include "agent/agg/hll.h"

#include <stdbool.h>
#include <string.h>
#include <xxhash.h>
#include <math.h>

#include "agent/agg/agg_math.h"
#include "formats/base/error.h"
#include "platform/libm.h"

/* Why one byte per register rather than six bits (12 KiB instead of 16 KiB at p = 14):
 * an update is then one load, compare and store with no shifting across byte
 * boundaries, which keeps the per-event cost at a few nanoseconds; the image is
 * DataSketches' HLL_8, which is the register array itself, so serialising is a copy.
 *
 * Why a coupon list first: most groups of a window see a handful of distinct values, and
 * 2^p registers for each of them cost memory, a memset per group and a 16 KiB image per
 * row, while the estimate of two items in 16,384 registers is 1 whenever both fall in one
 * register (1 group in 16,384). A coupon is what DataSketches keeps in its list and set
 * modes, so the list is serialised as their image and read back without loss. The list
 * is scanned, not hashed: it holds at most 256 coupons (1 KiB) in the order they came,
 * which its images keep; a 512-bit filter beside it answers most coupons it does not
 * hold without the scan. A pooled sketch that
 * receives more moves them to a hash set of the pool (as DataSketches' set mode, open
 * addressing on the coupon's low bits, at most 3/4 full), where that set is at most half
 * the registers' bytes: a group of 300 or 700 distinct values then takes 4 KiB of the
 * pool, not 16 KiB, and is still exact. Past the set it goes dense. */

/* The DataSketches preamble (HllUtil: PREAMBLE_INTS_BYTE .. AUX_COUNT_INT). */
enum {
	DS_PREINTS = 10, /* 40-byte preamble, in 4-byte ints */
	DS_SER_VER = 1,
	DS_FAMILY_HLL = 7,
	DS_FLAG_COMPACT = 8,
	DS_FLAG_OUT_OF_ORDER = 16,
	DS_PREINTS_LIST = 2,
	DS_PREINTS_SET = 3,
	DS_FLAG_EMPTY = 4,
	DS_MODE_LIST = 0,  /* low 2 bits of the mode byte */
	DS_MODE_SET = 1,
	DS_MODE_HLL = 2,
	DS_TYPE_HLL_8 = 2, /* next 2 bits */
	DS_OFF_HIP = 8,
	DS_OFF_KXQ0 = 16,
	DS_OFF_KXQ1 = 24,
	DS_OFF_NUM_AT_CUR_MIN = 32,
	DS_OFF_AUX_COUNT = 36,
	DS_LIST_START = 8, /* LIST: the coupons; the count is byte 6 */
	DS_SET_COUNT = 8,  /* SET: the count, then the coupons */
	DS_SET_START = 12,
	DS_LIST_MAX = 7,   /* DataSketches' list holds fewer than 8 coupons */
	DS_LG_INIT_SET = 5,
};

/* The coupons DataSketches' list and set modes hold at precision p before its sketch
 * goes dense (a set fills to 3/4 of 2^(p-3) slots; below p = 8 there is no set), and
 * floe's cap on them. */
static uint32_t list_cap(unsigned p)
{
	if (p < 8)
		return DS_LIST_MAX;
	uint32_t set = 3u << (p - 3) >> 2;
	return set < FLOE_HLL_LIST_MAX ? set : FLOE_HLL_LIST_MAX;
}

static uint32_t coupon_at(const struct floe_hll *h, uint32_t i)
{
	uint32_t c;
	memcpy(&c, h->list + 4 * (size_t)i, 4);
	return c;
}

/* log2 of the slots of the set step at precision p: at most half the registers' bytes and
 * FLOE_HLL_SET_LG_MAX, holding more than the list; 0 when there is none. */
static unsigned set_lg(unsigned p)
{
	if (p < 8)
		return 0;
	unsigned lg = p - 3 < FLOE_HLL_SET_LG_MAX ? p - 3 : FLOE_HLL_SET_LG_MAX;
	return (3u << lg >> 2) > list_cap(p) ? lg : 0;
}

uint32_t floe_hll_exact_max(unsigned p)
{
	if (p < FLOE_HLL_PMIN || p > FLOE_HLL_PMAX)
		return 0;
	unsigned lg = set_lg(p);
	return lg ? 3u << lg >> 2 : list_cap(p);
}

uint32_t floe_hll_coupon_next(const struct floe_hll *h, uint32_t *cursor)
{
	if (h->reg)
		return 0;
	if (!h->set)
		return *cursor < h->n ? coupon_at(h, (*cursor)++) : 0;
	while (*cursor < (1u << h->setlg)) {
		uint32_t c = h->set[(*cursor)++];
		if (c)
			return c;
	}
	return 0;
}

/* The slot of coupon c in the set, or of the empty slot where it would go. */
static uint32_t set_slot(const struct floe_hll *h, uint32_t c)
{
	uint32_t mask = (1u << h->setlg) - 1, i = c & mask;
	while (h->set[i] && h->set[i] != c)
		i = (i + 1) & mask;
	return i;
}

size_t floe_hll_bytes(unsigned p)
{
	if (p < FLOE_HLL_PMIN || p > FLOE_HLL_PMAX)
		return 0;
	return (size_t)1 << p;
}

size_t floe_hll_list_bytes(unsigned p)
{
	if (p < FLOE_HLL_PMIN || p > FLOE_HLL_PMAX)
		return 0;
	size_t list = ((size_t)list_cap(p) * 4 + 7) & ~(size_t)7;
	return list > ((size_t)1 << p) ? list : (size_t)1 << p > list * 2 ? list : (size_t)1 << p;
}

static int init_over(struct floe_hll *h, unsigned p, void *mem, size_t len, size_t need,
		     struct floe_agg_pool *pool)
{
	if (!need || !mem)
		return FLOE_EINVAL;
	if (len < need)
		return FLOE_ELIMIT;
	/* Every sketch is set up here or by floe_hll_decode, so the estimator's square
	 * root is there when it is asked. */
	int rc = floe_libm_load(NULL, 0);
	if (rc)
		return rc;
	h->list = mem;
	h->pool = pool;
	h->own = len > UINT32_MAX ? UINT32_MAX : (uint32_t)len;
	h->pcfg = (uint8_t)p;
	/* A sketch in its own memory goes dense there: its list is no longer than the
	 * registers' bytes, so that the list is never the larger form. */
	uint32_t cap = list_cap(p);
	h->listcap = cap < h->own / 4 ? cap : h->own / 4;
	if (!pool && h->listcap > ((uint32_t)1 << p) / 4)
		h->listcap = ((uint32_t)1 << p) / 4;
	h->setlg = pool && h->listcap == cap ? (uint8_t)set_lg(p) : 0;
	floe_hll_reset(h);
	return 0;
}

int floe_hll_init(struct floe_hll *h, unsigned p, void *mem, size_t len)
{
	return init_over(h, p, mem, len, floe_hll_bytes(p), NULL);
}

int floe_hll_init_pooled(struct floe_hll *h, unsigned p, void *mem, size_t len,
			 struct floe_agg_pool *pool)
{
	if ((uintptr_t)mem & 3)
		return FLOE_EINVAL;
	/* At low precisions the registers are no larger than the list: no pool then. */
	if (!floe_hll_pool_block(p))
		return init_over(h, p, mem, len, floe_hll_bytes(p), NULL);
	if (!pool)
		return FLOE_EINVAL;
	return init_over(h, p, mem, len, floe_hll_list_bytes(p), pool);
}

size_t floe_hll_pool_block(unsigned p)
{
	size_t dense = floe_hll_bytes(p);
	return dense > floe_hll_list_bytes(p) ? dense : 0;
}

void floe_hll_reset(struct floe_hll *h)
{
	h->reg = NULL;
	h->set = NULL;
	h->cap = h->listcap;
	h->n = 0;
	h->p = h->pcfg;
	h->m = (uint32_t)1 << h->pcfg;
	memset(h->seen, 0, sizeof(h->seen));
}

/* The list's filter (struct floe_hll's seen): coupon c's bit is its low hash bits. */
static inline bool seen_has(const struct floe_hll *h, uint32_t c)
{
	return h->seen[(c % FLOE_HLL_SEEN_BITS) / 64] >> (c % 64) & 1;
}

static inline void seen_add(struct floe_hll *h, uint32_t c)
{
	h->seen[(c % FLOE_HLL_SEEN_BITS) / 64] |= 1ull << (c % 64);
}

static inline void set_coupon(struct floe_hll *h, uint32_t c)
{
	uint32_t slot = c & (h->m - 1);
	uint8_t r = (uint8_t)(c >> 26);
	if (r > h->reg[slot])
		h->reg[slot] = r;
}

static unsigned own_precision(const struct floe_hll *h);

/* The list into registers: a block of the pool, the own memory when the sketch has no
 * pool, or, when the pool is empty, the own memory at the precision it holds (coupons
 * address registers at every precision up to 26, so the coarser registers are exactly
 * what adding the items there would have made). */
static void go_dense(struct floe_hll *h)
{
	/* A list is copied out of the own memory the registers may take; a set is in the
	 * pool, apart from both. */
	uint32_t tmp[FLOE_HLL_LIST_MAX];
	uint32_t n = h->set ? 0 : h->n, *set = h->set;
	memcpy(tmp, h->list, (size_t)n * 4);
	uint8_t *reg = h->pool ? floe_agg_pool_take(h->pool, h->m) : h->list;
	if (!reg) {
		h->p = (uint8_t)own_precision(h);
		h->m = (uint32_t)1 << h->p;
		reg = h->list;
	}
	memset(reg, 0, h->m);
	h->reg = reg;
	for (uint32_t i = 0; i < n; i++)
		set_coupon(h, tmp[i]);
	for (uint32_t i = 0; set && i < (1u << h->setlg); i++)
		if (set[i])
			set_coupon(h, set[i]);
	h->set = NULL;
	h->n = 0;
}

/* The full list into a set of the pool; false when the sketch has no set step or the
 * pool cannot give one (not counted: the registers are asked for next). */
static bool go_set(struct floe_hll *h)
{
	if (!h->setlg || h->set)
		return false;
	uint32_t *set = floe_agg_pool_try(h->pool, (size_t)4 << h->setlg);
	if (!set)
		return false;
	memset(set, 0, (size_t)4 << h->setlg);
	h->set = set;
	h->cap = 3u << h->setlg >> 2;
	for (uint32_t i = 0; i < h->n; i++) {
		uint32_t c = coupon_at(h, i);
		set[set_slot(h, c)] = c;
	}
	return true;
}

/* The precision the own memory holds as registers, at most the configured one. */
static unsigned own_precision(const struct floe_hll *h)
{
	unsigned q = 63u - (unsigned)__builtin_clzll(h->own);
	return q < h->pcfg ? q : h->pcfg;
}

uint8_t *floe_hll_restore_dense(struct floe_hll *h, unsigned p)
{
	uint8_t *reg = NULL;
	if (h->reg || h->n || h->set)
		return NULL;
	if (p == h->pcfg)
		reg = h->pool ? floe_agg_pool_take(h->pool, (size_t)1 << p) : h->list;
	else if (h->pool && p == own_precision(h) && p >= FLOE_HLL_PMIN)
		reg = h->list;
	if (!reg)
		return NULL;
	h->p = (uint8_t)p;
	h->m = (uint32_t)1 << p;
	memset(reg, 0, h->m);
	h->reg = reg;
	return reg;
}

/* Four coupons, compared at once where the target has vectors (GCC's and clang's
 * vector extension: plain loops elsewhere), and the mask a compare gives. */
typedef uint32_t hll_v4 __attribute__((vector_size(16)));
typedef int32_t hll_m4 __attribute__((vector_size(16)));

/* Whether the list holds coupon c. The filter answers most coupons the list does not
 * hold (a list of 128 sets at most a quarter of its 512 bits), without touching the list;
 * the rest are compared 16 at a time with no exit inside a block: the list holds up to
 * 256 coupons, and a loop that may stop at each one costs a compare and a branch per
 * coupon (a tenth of the aggregator's time at 1,000 busy groups, where a fifth of the
 * events meet a list of about 128). */
static bool list_has(const struct floe_hll *h, uint32_t c)
{
	if (!seen_has(h, c))
		return false;
	uint32_t i = 0;
	hll_v4 want = {c, c, c, c};
	for (; i + 16 <= h->n; i += 16) {
		hll_v4 x[4];
		memcpy(x, h->list + 4 * (size_t)i, sizeof(x));
		hll_m4 hit = (x[0] == want) | (x[1] == want) | (x[2] == want) | (x[3] == want);
		if (hit[0] | hit[1] | hit[2] | hit[3])
			return true;
	}
	for (; i < h->n; i++)
		if (coupon_at(h, i) == c)
			return true;
	return false;
}

void floe_hll_add_coupon(struct floe_hll *h, uint32_t c)
{
	if (!h->reg && !h->set) {
		if (list_has(h, c))
			return;
		if (h->n < h->cap) {
			memcpy(h->list + 4 * (size_t)h->n++, &c, 4);
			seen_add(h, c);
			return;
		}
		if (!go_set(h))
			go_dense(h);
	}
	if (h->set) {
		uint32_t i = set_slot(h, c);
		if (h->set[i])
			return;
		if (h->n < h->cap) {
			h->set[i] = c;
			h->n++;
			return;
		}
		go_dense(h);
	}
	set_coupon(h, c);
}

uint64_t floe_hll_hash(const void *p, size_t n)
{
	return (uint64_t)XXH3_64bits(p, n);
}

void floe_hll_add(struct floe_hll *h, const void *p, size_t n)
{
	floe_hll_add_hash(h, floe_hll_hash(p, n));
}

/* The rank a register of a finer sketch (precision sp, register slot, rank r) has at
 * precision dp: the same unless the finer sketch saw only zeros above its index bits,
 * in which case the index bits that the coarser sketch does not use continue the run. */
static uint8_t fold_rank(unsigned sp, unsigned dp, uint32_t slot, uint8_t r)
{
	if (r < 65 - sp)
		return r;
	uint64_t extra = slot >> dp; /* hash bits dp .. sp-1 */
	unsigned width = sp - dp;
	if (extra == 0)
		return (uint8_t)(65 - dp);
	unsigned bitlen = 64 - (unsigned)__builtin_clzll(extra);
	return (uint8_t)(64 - sp + (width - bitlen) + 1);
}

int floe_hll_merge(struct floe_hll *dst, const struct floe_hll *src)
{
	if (!src->reg) {
		uint32_t at = 0, c;
		while ((c = floe_hll_coupon_next(src, &at)))
			floe_hll_add_coupon(dst, c);
		return 0;
	}
	if (src->p < dst->p)
		return FLOE_EINVAL;
	if (!dst->reg)
		go_dense(dst); /* at dst->p or coarser: still at most src's */
	if (src->p == dst->p) {
		for (uint32_t i = 0; i < dst->m; i++)
			if (src->reg[i] > dst->reg[i])
				dst->reg[i] = src->reg[i];
		return 0;
	}
	for (uint32_t i = 0; i < src->m; i++) {
		if (!src->reg[i])
			continue;
		uint8_t r = fold_rank(src->p, dst->p, i, src->reg[i]);
		uint32_t d = i & (dst->m - 1);
		if (r > dst->reg[d])
			dst->reg[d] = r;
	}
	return 0;
}

/* Ertl's sigma(x) = x + sum_{k>=1} x^(2^k) 2^(k-1), for the registers still at zero. */
static double ertl_sigma(double x)
{
	if (x == 1.0)
		return __builtin_inf();
	double y = 1.0, z = x, prev;
	do {
		x *= x;
		prev = z;
		z += x * y;
		y += y;
	} while (z != prev);
	return z;
}

/* Ertl's tau(x) = (1 - x - sum_{k>=1} (1 - x^(2^-k))^2 2^-k) / 3, for the saturated
 * registers. */
static double ertl_tau(double x)
{
	if (x == 0.0 || x == 1.0)
		return 0.0;
	double y = 1.0, z = 1.0 - x, prev;
	do {
		x = floe_libm_sqrt(x);
		prev = z;
		y *= 0.5;
		z -= (1.0 - x) * (1.0 - x) * y;
	} while (z != prev);
	return z / 3.0;
}

/* The registers' histogram: c[r] registers hold rank r (r <= 65 - p). Emitting a window
 * takes one per distinct column, for groups whose registers are mostly still zero, so
 * registers are read eight at a time and only the set ones counted one by one (the
 * zeros are what is left), and four histograms
 * taken in turn keep neighbouring registers of one rank from waiting on each other's
 * increment; they are summed at the end. */
static void histogram(const struct floe_hll *h, uint32_t c[66])
{
	uint32_t part[4][66];
	memset(part, 0, sizeof(part));
	uint32_t zeros = 0;
	for (uint32_t i = 0; i < h->m; i += 8) { /* m = 2^p, p >= 4: whole words */
		uint64_t w;
		memcpy(&w, h->reg + i, sizeof(w));
		/* A set register's byte gets its high bit in nz; only those are read: a
		 * sketch of a few thousand values has one or two in most words. */
		uint64_t nz = ((w & 0x7F7F7F7F7F7F7F7Full) + 0x7F7F7F7F7F7F7F7Full) | w;
		nz &= 0x8080808080808080ull;
		uint32_t k = 0;
		for (; nz; nz &= nz - 1, k++) {
			/* The byte of w whose high bit nz's lowest is: any byte order. */
			uint8_t r = (uint8_t)(w >> (__builtin_ctzll(nz) & 56));
			/* above 65 only in a damaged sketch */
			part[k & 3][r < 65 ? r : 65]++;
		}
		zeros += 8 - k;
	}
	for (unsigned r = 0; r < 66; r++)
		c[r] = part[0][r] + part[1][r] + part[2][r] + part[3][r];
	c[0] += zeros;
}

/* Ertl 2017, algorithm 6: the registers' histogram, with the empty and the saturated
 * registers corrected by sigma and tau, replaces the harmonic mean and its empirical
 * small- and large-range corrections. */
static double estimate_of(const struct floe_hll *h, const uint32_t hist[66])
{
	unsigned q = 64u - h->p;
	double m = (double)h->m;
	if (hist[0] == h->m)
		return 0.0;
	uint32_t top = 0; /* registers at rank q + 1 or above */
	for (unsigned r = q + 1; r < 66; r++)
		top += hist[r];
	double z = m * ertl_tau(1.0 - (double)top / m);
	for (unsigned k = q; k >= 1; k--)
		z = 0.5 * (z + (double)hist[k]);
	z += m * ertl_sigma((double)hist[0] / m);
	return (0.5 / M_LN2) * m * m / z;
}

double floe_hll_estimate(const struct floe_hll *h)
{
	if (!h->reg)
		return (double)h->n;
	uint32_t c[66];
	histogram(h, c);
	return estimate_of(h, c);
}

size_t floe_hll_serialized_size(const struct floe_hll *h)
{
	if (!h->reg)
		return (h->n <= DS_LIST_MAX ? DS_LIST_START : DS_SET_START) + (size_t)h->n * 4;
	return FLOE_HLL_HEADER_BYTES + (size_t)h->m;
}

static void put_le32(uint8_t *o, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		o[i] = (uint8_t)(v >> (8 * i));
}

static void put_le_double(uint8_t *o, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	for (int i = 0; i < 8; i++)
		o[i] = (uint8_t)(v >> (8 * i));
}

/* A list as DataSketches' compact LIST image (fewer than 8 coupons) or SET image: the
 * coupons as they are, the set's slot count as DataSketches would size it for them. */
static void serialize_list(const struct floe_hll *h, uint8_t *o)
{
	bool set = h->n > DS_LIST_MAX;
	unsigned lg = 3; /* the list's array: 8 slots */
	if (set)
		for (lg = DS_LG_INIT_SET; 4 * (uint64_t)h->n > 3ull << lg; lg++)
			;
	o[0] = set ? DS_PREINTS_SET : DS_PREINTS_LIST;
	o[1] = DS_SER_VER;
	o[2] = DS_FAMILY_HLL;
	o[3] = h->pcfg;
	o[4] = (uint8_t)lg;
	o[5] = DS_FLAG_COMPACT | (h->n ? 0 : DS_FLAG_EMPTY);
	o[6] = set ? 0 : (uint8_t)h->n;
	o[7] = (set ? DS_MODE_SET : DS_MODE_LIST) | (DS_TYPE_HLL_8 << 2);
	size_t at = DS_LIST_START;
	if (set) {
		put_le32(o + DS_SET_COUNT, h->n);
		at = DS_SET_START;
	}
	uint32_t cur = 0, c;
	for (size_t i = 0; (c = floe_hll_coupon_next(h, &cur)); i++)
		put_le32(o + at + 4 * i, c);
}

int floe_hll_serialize(const struct floe_hll *h, void *out, size_t cap)
{
	double e;
	return floe_hll_serialize_estimate(h, out, cap, &e);
}

int floe_hll_serialize_estimate(const struct floe_hll *h, void *out, size_t cap, double *estimate)
{
	if (cap < floe_hll_serialized_size(h))
		return FLOE_ELIMIT;
	uint8_t *o = out;
	if (!h->reg) {
		serialize_list(h, o);
		*estimate = (double)h->n;
		return 0;
	}
	/* kxq0/kxq1 and the count of registers at the current minimum (always 0 for
	 * HLL_8) are what DataSketches' composite estimator reads; the out-of-order flag
	 * makes every reader use that estimator rather than a HIP accumulator, which a
	 * merged or folded sketch does not have. */
	uint32_t c[66];
	histogram(h, c);
	double kxq0 = 0.0, kxq1 = 0.0;
	for (int r = 0; r < 66; r++) {
		if (r < 32)
			kxq0 += c[r] * floe_agg_pow2(-r);
		else
			kxq1 += c[r] * floe_agg_pow2(-r);
	}
	memset(o, 0, FLOE_HLL_HEADER_BYTES);
	o[0] = DS_PREINTS;
	o[1] = DS_SER_VER;
	o[2] = DS_FAMILY_HLL;
	o[3] = h->p;
	o[4] = 0; /* lgArr: only HLL_4's exception table uses it */
	o[5] = DS_FLAG_COMPACT | DS_FLAG_OUT_OF_ORDER;
	o[6] = 0; /* curMin */
	o[7] = DS_MODE_HLL | (DS_TYPE_HLL_8 << 2);
	*estimate = estimate_of(h, c);
	put_le_double(o + DS_OFF_HIP, *estimate);
	put_le_double(o + DS_OFF_KXQ0, kxq0);
	put_le_double(o + DS_OFF_KXQ1, kxq1);
	put_le32(o + DS_OFF_NUM_AT_CUR_MIN, c[0]);
	put_le32(o + DS_OFF_AUX_COUNT, 0);
	memcpy(o + FLOE_HLL_HEADER_BYTES, h->reg, h->m);
	return 0;
}

static int fail_at(struct floe_err *err, size_t off, int code)
{
	return floe_err_at(err, code, off, "HLL image: %s at byte %zu", floe_strerror(code), off);
}

int floe_hll_decode_precision(const void *p, size_t len, unsigned *precision, struct floe_err *err)
{
	const uint8_t *b = p;
	if (len < 8)
		return fail_at(err, len, FLOE_EPARSE);
	if (b[2] != DS_FAMILY_HLL)
		return fail_at(err, 2, FLOE_EFORMAT);
	if (b[1] != DS_SER_VER)
		return fail_at(err, 1, FLOE_EUNSUPPORTED);
	unsigned mode = b[7] & 3;
	if (mode > DS_MODE_HLL)
		return fail_at(err, 7, FLOE_EFORMAT);
	if (((b[7] >> 2) & 3) != DS_TYPE_HLL_8)
		return fail_at(err, 7, FLOE_EUNSUPPORTED);
	static const uint8_t preints[] = {DS_PREINTS_LIST, DS_PREINTS_SET, DS_PREINTS};
	if (b[0] != preints[mode])
		return fail_at(err, 0, FLOE_EFORMAT);
	/* DataSketches allows lgK 4..21; floe reads up to 18 (256 KiB of registers). */
	if (b[3] < FLOE_HLL_PMIN || b[3] > 21)
		return fail_at(err, 3, FLOE_EFORMAT);
	if (b[3] > FLOE_HLL_PMAX)
		return fail_at(err, 3, FLOE_EUNSUPPORTED);
	*precision = b[3];
	return 0;
}

static uint32_t get_le32(const uint8_t *b)
{
	return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A LIST or SET image's coupons: where they start and how many, checked against len, and
 * each one's rank (floe's hash gives 1..39; DataSketches' own hash up to 63, which floe's
 * registers do not hold). */
static int list_extent(const uint8_t *b, size_t len, size_t *at, uint32_t *n, struct floe_err *err)
{
	if ((b[7] & 3) == DS_MODE_LIST) {
		*at = DS_LIST_START;
		*n = b[6];
	} else {
		if (len < DS_SET_START)
			return fail_at(err, len, FLOE_EPARSE);
		*at = DS_SET_START;
		*n = get_le32(b + DS_SET_COUNT);
	}
	if ((len - *at) / 4 < *n)
		return fail_at(err, len, FLOE_EPARSE);
	if (len - *at > (size_t)*n * 4)
		return fail_at(err, *at + (size_t)*n * 4, FLOE_EFORMAT);
	for (uint32_t i = 0; i < *n; i++) {
		uint32_t r = get_le32(b + *at + 4 * (size_t)i) >> 26;
		if (r == 0 || r > 39)
			return fail_at(err, *at + 4 * (size_t)i + 3,
				       r ? FLOE_EUNSUPPORTED : FLOE_EFORMAT);
	}
	return 0;
}

static int check_dense(const uint8_t *b, size_t len, unsigned prec, struct floe_err *err)
{
	if (len < FLOE_HLL_HEADER_BYTES)
		return fail_at(err, len, FLOE_EPARSE);
	/* HLL_8 keeps its minimum at zero; a non-zero curMin or an exception table
	 * belongs to HLL_4 and is not a valid HLL_8 image. */
	if (b[6] != 0)
		return fail_at(err, 6, FLOE_EFORMAT);
	if (get_le32(b + DS_OFF_AUX_COUNT) != 0)
		return fail_at(err, DS_OFF_AUX_COUNT, FLOE_EFORMAT);
	size_t m = (size_t)1 << prec;
	if (len - FLOE_HLL_HEADER_BYTES < m)
		return fail_at(err, len, FLOE_EPARSE);
	if (len - FLOE_HLL_HEADER_BYTES > m)
		return fail_at(err, FLOE_HLL_HEADER_BYTES + m, FLOE_EFORMAT);
	/* A register can hold at most 65 - p (a hash whose top 64 - p bits are zero). */
	const uint8_t *r = b + FLOE_HLL_HEADER_BYTES;
	for (size_t i = 0; i < m; i++)
		if (r[i] > 65 - prec)
			return fail_at(err, FLOE_HLL_HEADER_BYTES + i, FLOE_EFORMAT);
	return 0;
}

int floe_hll_decode(struct floe_hll *h, void *mem, size_t memlen, const void *p, size_t len,
		    struct floe_err *err)
{
	const uint8_t *b = p;
	unsigned prec = 0; /* set when the call succeeds; compilers cannot always see it */
	int rc = floe_hll_decode_precision(p, len, &prec, err);
	if (rc)
		return rc;
	bool dense = (b[7] & 3) == DS_MODE_HLL;
	size_t at = 0;
	uint32_t n = 0;
	rc = dense ? check_dense(b, len, prec, err) : list_extent(b, len, &at, &n, err);
	if (rc)
		return rc;
	size_t m = (size_t)1 << prec;
	if (!mem)
		return floe_err_set(err, FLOE_EINVAL,
				    "HLL image: no memory given for the registers");
	if (memlen < m)
		return floe_err_set(err, FLOE_ELIMIT, "HLL image: %zu registers, memory for %zu", m,
				    memlen);
	char why[256];
	rc = floe_libm_load(why, sizeof(why));
	if (rc)
		return floe_err_set(err, rc, "HLL image: %s", why);
	(void)init_over(h, prec, mem, memlen, m, NULL); /* cannot fail: checked above */
	/* The estimator fields (HIP, kxq, numAtCurMin) are derived from the registers and
	 * are recomputed rather than trusted. */
	if (dense) {
		h->reg = mem;
		memcpy(h->reg, b + FLOE_HLL_HEADER_BYTES, m);
		return 0;
	}
	for (uint32_t i = 0; i < n; i++)
		floe_hll_add_coupon(h, get_le32(b + at + 4 * (size_t)i));
	return 0;
}
