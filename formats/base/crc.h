/* The two CRCs floe computes: CRC-32 (IEEE 802.3, reflected, as zlib and gzip compute
 * it), which Parquet uses for its optional page checksums, and CRC32C (Castagnoli),
 * which guards floe's own on-disk state (checkpoints, the spool journal). Pure and
 * table driven, so that formats/ needs no zlib; CRC-32 uses the CPU's carry-less
 * multiply for long inputs where x86-64 has one. */
#ifndef FLOE_BASE_CRC_H
#define FLOE_BASE_CRC_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC-32 over p[0..n): start with crc = 0 and feed each result into the
 * next call. The same values as zlib's crc32(): floe_crc32(0, "123456789", 9) ==
 * 0xcbf43926. Eight bytes per step, or 16-byte blocks by carry-less multiply (the
 * Parquet writer's pages pass through it). */
uint32_t floe_crc32(uint32_t crc, const void *p, size_t n);

/* Continues a CRC32C over p[0..n) in the same way: floe_crc32c(0, "123456789", 9) ==
 * 0xe3069283. One byte per step (state files are small). */
uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n);

#endif
