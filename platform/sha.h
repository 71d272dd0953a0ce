/* SHA-256 and HMAC-SHA256 (through mbedtls' md layer, which has the same interface in
 * mbedtls 2.28 and 3.x), for SigV4 signing and payload hashes. */
#ifndef FLOE_PLATFORM_SHA_H
#define FLOE_PLATFORM_SHA_H

#include <stddef.h>
#include <stdint.h>

#define FLOE_SHA256_LEN 32
#define FLOE_SHA256_HEX_LEN 64

/* out = SHA-256(p[0..n)). Returns 0 or -EIO if mbedtls fails (it does not on valid input). */
int floe_sha256(const void *p, size_t n, uint8_t out[FLOE_SHA256_LEN]);
/* out = HMAC-SHA256(key, p[0..n)). */
int floe_hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
		     uint8_t out[FLOE_SHA256_LEN]);
/* hex(SHA-256(p[0..n))) into out[65]. */
int floe_sha256_hex(const void *p, size_t n, char out[FLOE_SHA256_HEX_LEN + 1]);
/* Hex SHA-256 of len bytes of the open file fd starting at off (pread, so the file offset is
 * not moved). -EIO if the file ends before off+len, -errno on read errors. */
int floe_sha256_hex_fd(int fd, int64_t off, int64_t len, char out[FLOE_SHA256_HEX_LEN + 1]);

#endif
