/* Table-driven CRC-32 (slicing by 8) and CRC32C (a byte at a time).
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

uint32_t floe_crc32(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *s = p;
	crc = ~crc;
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
	return ~crc;
}

uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n)
{
	const uint8_t *b = p;
	crc = ~crc;
	for (size_t i = 0; i < n; i++)
		crc = crc32c_table[(crc ^ b[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}
