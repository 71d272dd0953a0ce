/* CRC-32 (IEEE 802.3 polynomial, reflected, as in zlib and gzip), which Parquet uses for
 * the optional page checksum. Our own table-driven version so formats/parquet does not
 * depend on zlib. */
#ifndef FLOE_PQ_CRC32_H
#define FLOE_PQ_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* Continues crc (0 to start) over n bytes at p; same results as zlib's crc32(). */
uint32_t floe_pq_crc32(uint32_t crc, const void *p, size_t n);

#endif
