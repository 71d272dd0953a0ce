/* CRC32C (Castagnoli), the checksum of floe's on-disk state (checkpoints, spool
 * journal). Pure and table driven; a hardware version can come later behind the same
 * function. */
#ifndef FLOE_INPUT_CRC32C_H
#define FLOE_INPUT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC32C over p[0..n): start with crc = 0 and feed the result of each call
 * into the next. floe_crc32c(0, "123456789", 9) == 0xe3069283. */
uint32_t floe_crc32c(uint32_t crc, const void *p, size_t n);

#endif
