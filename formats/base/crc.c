/* Table-driven CRC-32 (slicing by 8; by carry-less multiply on x86-64 CPUs that have it)
 * and CRC32C (a byte at a time).
 *
 * Both CRCs are linear over GF(2): a byte's table entry is the XOR of the entries of its
 * set bits. So each 256-entry table is written here as its eight single-bit entries and
 * expanded by the preprocessor into constant data, the same bytes a generated table
 * would hold, with nothing computed at run time. Table k of CRC-32 maps a byte to its
 * contribution k bytes further on (the byte followed by k zero bytes); its single-bit
 * entries are the CRC register after 8(k+1) - b zero-bit steps from 1 (b the bit), and
 * table 0 of each CRC is the classic byte-at-a-time table of its reflected polynomial
 * (0xedb88320, 0x82f63b78: the last single-bit entry). tests/unit/formats/base/test_crc.c
 * checks every entry against the bit-by-bit definition. */
#include "crc.h"

/* Entry i of a table given by its single-bit entries b0..b7. */
#define CRC_ENTRY(i, b0, b1, b2, b3, b4, b5, b6, b7)                                         \
	(((i) & 1 ? (b0) : 0u) ^ ((i) & 2 ? (b1) : 0u) ^ ((i) & 4 ? (b2) : 0u) ^              \
	 ((i) & 8 ? (b3) : 0u) ^ ((i) & 16 ? (b4) : 0u) ^ ((i) & 32 ? (b5) : 0u) ^           \
	 ((i) & 64 ? (b6) : 0u) ^ ((i) & 128 ? (b7) : 0u))
#define CRC_ROW4(i, ...)                                                                       \
	CRC_ENTRY((i), __VA_ARGS__), CRC_ENTRY((i) + 1, __VA_ARGS__),                          \
	    CRC_ENTRY((i) + 2, __VA_ARGS__), CRC_ENTRY((i) + 3, __VA_ARGS__)
#define CRC_ROW16(i, ...)                                                                      \
	CRC_ROW4((i), __VA_ARGS__), CRC_ROW4((i) + 4, __VA_ARGS__),                            \
	    CRC_ROW4((i) + 8, __VA_ARGS__), CRC_ROW4((i) + 12, __VA_ARGS__)
#define CRC_ROW64(i, ...)                                                                      \
	CRC_ROW16((i), __VA_ARGS__), CRC_ROW16((i) + 16, __VA_ARGS__),                         \
	    CRC_ROW16((i) + 32, __VA_ARGS__), CRC_ROW16((i) + 48, __VA_ARGS__)
#define CRC_TABLE(...)                                                                         \
	{                                                                                      \
		CRC_ROW64(0, __VA_ARGS__), CRC_ROW64(64, __VA_ARGS__),                         \
		    CRC_ROW64(128, __VA_ARGS__), CRC_ROW64(192, __VA_ARGS__)                   \
	}

static const uint32_t crc32_tables[8][256] = {
    CRC_TABLE(0x77073096, 0xee0e612c, 0x076dc419, 0x0edb8832, 0x1db71064, 0x3b6e20c8,
	      0x76dc4190, 0xedb88320),
    CRC_TABLE(0x191b3141, 0x32366282, 0x646cc504, 0xc8d98a08, 0x4ac21251, 0x958424a2,
	      0xf0794f05, 0x3b83984b),
    CRC_TABLE(0x01c26a37, 0x0384d46e, 0x0709a8dc, 0x0e1351b8, 0x1c26a370, 0x384d46e0,
	      0x709a8dc0, 0xe1351b80),
    CRC_TABLE(0xb8bc6765, 0xaa09c88b, 0x8f629757, 0xc5b428ef, 0x5019579f, 0xa032af3e,
	      0x9b14583d, 0xed59b63b),
    CRC_TABLE(0x3d6029b0, 0x7ac05360, 0xf580a6c0, 0x30704bc1, 0x60e09782, 0xc1c12f04,
	      0x58f35849, 0xb1e6b092),
    CRC_TABLE(0xcb5cd3a5, 0x4dc8a10b, 0x9b914216, 0xec53826d, 0x03d6029b, 0x07ac0536,
	      0x0f580a6c, 0x1eb014d8),
    CRC_TABLE(0xa6770bb4, 0x979f1129, 0xf44f2413, 0x33ef4e67, 0x67de9cce, 0xcfbd399c,
	      0x440b7579, 0x8816eaf2),
    CRC_TABLE(0xccaa009e, 0x4225077d, 0x844a0efa, 0xd3e51bb5, 0x7cbb312b, 0xf9766256,
	      0x299dc2ed, 0x533b85da),
};

static const uint32_t crc32c_table[256] = CRC_TABLE(
    0xf26b8303, 0xe13b70f7, 0xc79a971f, 0x8ad958cf, 0x105ec76f, 0x20bd8ede, 0x417b1dbc, 0x82f63b78);

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define FLOE_CRC32_CLMUL 1

/* The folding constants of CRC-32's reflected polynomial P (Intel, "Fast CRC Computation
 * for Generic Polynomials Using PCLMULQDQ", 2009), each x^k mod P bit-reflected and
 * shifted left by one (a carry-less product of reflected operands comes out one bit
 * short): k1, k2 fold 512 bits ahead (x^(4*128+32), x^(4*128-32)), k3, k4 fold 128 bits
 * (x^(128+32), x^(128-32)), k5 takes 64 bits to 32 (x^64); then Barrett's reduction with
 * P itself (33 bits) and mu = floor(x^64 / P). tests/unit/formats/base/test_crc.c checks
 * the results against the bitwise definition at every length up to past 1 KiB. */
#define CLMUL_K1 0x154442bd4ull
#define CLMUL_K2 0x1c6e41596ull
#define CLMUL_K3 0x1751997d0ull
#define CLMUL_K4 0x0ccaa009eull
#define CLMUL_K5 0x163cd6124ull
#define CLMUL_P 0x1db710641ull
#define CLMUL_MU 0x1f7011641ull

/* x's two halves each multiplied by its constant (the low half by k's low, the high by
 * k's high), summed with next: 128 bits of remainder carried 128 (or 512) bits on. */
__attribute__((target("pclmul,sse4.1"))) static inline __m128i fold(__m128i x, __m128i k,
								    __m128i next)
{
	__m128i lo = _mm_clmulepi64_si128(x, k, 0x00);
	__m128i hi = _mm_clmulepi64_si128(x, k, 0x11);
	return _mm_xor_si128(_mm_xor_si128(lo, hi), next);
}

/* Continues the CRC register crc (not inverted) over p[0..n), n >= 64 and a multiple of
 * 16: four lanes of 128 bits folded 512 bits at a time, then into one, then reduced. */
__attribute__((target("pclmul,sse4.1"))) static uint32_t crc32_clmul(uint32_t crc,
								    const uint8_t *p, size_t n)
{
	const __m128i k12 = _mm_set_epi64x((long long)CLMUL_K2, (long long)CLMUL_K1);
	const __m128i k34 = _mm_set_epi64x((long long)CLMUL_K4, (long long)CLMUL_K3);
	const __m128i k5 = _mm_set_epi64x(0, (long long)CLMUL_K5);
	const __m128i pmu = _mm_set_epi64x((long long)CLMUL_MU, (long long)CLMUL_P);
	const __m128i mask32 = _mm_set_epi32(0, 0, 0, -1);
	__m128i x0 = _mm_loadu_si128((const __m128i *)p);
	__m128i x1 = _mm_loadu_si128((const __m128i *)(p + 16));
	__m128i x2 = _mm_loadu_si128((const __m128i *)(p + 32));
	__m128i x3 = _mm_loadu_si128((const __m128i *)(p + 48));
	x0 = _mm_xor_si128(x0, _mm_cvtsi32_si128((int)crc));
	p += 64;
	n -= 64;
	for (; n >= 64; p += 64, n -= 64) {
		x0 = fold(x0, k12, _mm_loadu_si128((const __m128i *)p));
		x1 = fold(x1, k12, _mm_loadu_si128((const __m128i *)(p + 16)));
		x2 = fold(x2, k12, _mm_loadu_si128((const __m128i *)(p + 32)));
		x3 = fold(x3, k12, _mm_loadu_si128((const __m128i *)(p + 48)));
	}
	x0 = fold(x0, k34, x1);
	x0 = fold(x0, k34, x2);
	x0 = fold(x0, k34, x3);
	for (; n >= 16; p += 16, n -= 16)
		x0 = fold(x0, k34, _mm_loadu_si128((const __m128i *)p));
	/* 128 bits to 64: the low half times k4, plus the high half. */
	x0 = _mm_xor_si128(_mm_clmulepi64_si128(x0, k34, 0x10), _mm_srli_si128(x0, 8));
	/* 64 to 32: the low 32 bits times k5, plus the rest. */
	x0 = _mm_xor_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, mask32), k5, 0x00),
			   _mm_srli_si128(x0, 4));
	/* Barrett: q = (low 32 bits * mu) mod x^32, remainder = x0 + q * P, in bits 32..63. */
	__m128i q = _mm_and_si128(_mm_clmulepi64_si128(_mm_and_si128(x0, mask32), pmu, 0x10), mask32);
	x0 = _mm_xor_si128(x0, _mm_clmulepi64_si128(q, pmu, 0x00));
	return (uint32_t)_mm_extract_epi32(x0, 1);
}
#endif

/* CRC-32 of p[0..n) continuing register crc (not inverted), eight bytes per step. */
static uint32_t crc32_table(uint32_t crc, const uint8_t *s, size_t n)
{
	while (n >= 8) {
		/* Little-endian assembly by hand: no alignment or byte-order assumption. */
		uint32_t lo = crc ^ ((uint32_t)s[0] | (uint32_t)s[1] << 8 | (uint32_t)s[2] << 16 |
				     (uint32_t)s[3] << 24);
		crc = crc32_tables[7][lo & 0xff] ^ crc32_tables[6][(lo >> 8) & 0xff] ^
		      crc32_tables[5][(lo >> 16) & 0xff] ^ crc32_tables[4][lo >> 24] ^
		      crc32_tables[3][s[4]] ^ crc32_tables[2][s[5]] ^ crc32_tables[1][s[6]] ^
		      crc32_tables[0][s[7]];
		s += 8;
		n -= 8;
	}
	while (n--)
		crc = crc32_tables[0][(crc ^ *s++) & 0xff] ^ (crc >> 8);
	return crc;
}

uint32_t floe_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *s = p;
	crc = ~crc;
#ifdef FLOE_CRC32_CLMUL
	/* Pages are kilobytes: the carry-less multiply takes their 16-byte blocks about ten
	 * times faster than the tables, where the CPU has it; the tail goes by table. */
	if (n >= 64 && __builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1")) {
		size_t blocks = n & ~(size_t)15;
		crc = crc32_clmul(crc, s, blocks);
		s += blocks;
		n -= blocks;
	}
#endif
	return ~crc32_table(crc, s, n);
}

uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = crc32c_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}
