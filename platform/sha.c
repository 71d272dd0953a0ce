/* SHA-256 and HMAC-SHA256 on top of mbedtls_md (see sha.h). */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64 /* pread beyond 2 GiB on armhf */
#endif
#include "platform/sha.h"

#include "formats/base/hex.h"

#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

#include <mbedtls/md.h>

static const mbedtls_md_info_t *sha256_info(void)
{
	return mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
}

int floe_sha256(const void *p, size_t n, uint8_t out[FLOE_SHA256_LEN])
{
	const mbedtls_md_info_t *md = sha256_info();
	if (!md || mbedtls_md(md, n ? p : (const void *)"", n, out) != 0)
		return -EIO;
	return 0;
}

int floe_hmac_sha256(const void *key, size_t klen, const void *p, size_t n,
		     uint8_t out[FLOE_SHA256_LEN])
{
	const mbedtls_md_info_t *md = sha256_info();
	if (!md || mbedtls_md_hmac(md, klen ? key : (const void *)"", klen,
				   n ? p : (const void *)"", n, out) != 0)
		return -EIO;
	return 0;
}

int floe_sha256_hex(const void *p, size_t n, char out[FLOE_SHA256_HEX_LEN + 1])
{
	uint8_t h[FLOE_SHA256_LEN];
	int rc = floe_sha256(p, n, h);
	if (rc == 0)
		floe_hex_encode(h, sizeof(h), out);
	return rc;
}

int floe_sha256_hex_fd(int fd, int64_t off, int64_t len, char out[FLOE_SHA256_HEX_LEN + 1])
{
	if (off < 0 || len < 0)
		return -EINVAL;
	const mbedtls_md_info_t *md = sha256_info();
	if (!md)
		return -EIO;
	enum { CHUNK = 64 * 1024 };
	uint8_t *buf = malloc(CHUNK);
	if (!buf)
		return -ENOMEM;
	mbedtls_md_context_t ctx;
	mbedtls_md_init(&ctx);
	int rc = -EIO;
	if (mbedtls_md_setup(&ctx, md, 0) != 0 || mbedtls_md_starts(&ctx) != 0)
		goto out;
	while (len > 0) {
		size_t want = len < CHUNK ? (size_t)len : CHUNK;
		ssize_t got = pread(fd, buf, want, (off_t)off);
		if (got < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (got == 0)
			goto out; /* the file is shorter than promised */
		if (mbedtls_md_update(&ctx, buf, (size_t)got) != 0)
			goto out;
		off += got;
		len -= got;
	}
	uint8_t h[FLOE_SHA256_LEN];
	if (mbedtls_md_finish(&ctx, h) != 0)
		goto out;
	floe_hex_encode(h, sizeof(h), out);
	rc = 0;
out:
	mbedtls_md_free(&ctx);
	free(buf);
	return rc;
}
