/* Blob files: frames a blob with magic, version, length and CRC32C and keeps it in
 * one file replaced atomically through platform/fs. */
#include "agent/state/blobfile.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/crc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/fs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
	uint32_t v = 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)p[i] << (8 * i);
	return v;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void header(uint8_t hdr[FLOE_BLOBFILE_HEADER], const uint8_t *blob, size_t len)
{
	memcpy(hdr, "FLCK", 4);
	put_le32(hdr + 4, FLOE_BLOBFILE_VERSION);
	put_le64(hdr + 8, (uint64_t)len);
	put_le32(hdr + 16, floe_crc32c(0, blob, len));
}

int floe_blobfile_save(const char *path, const uint8_t *blob, size_t len)
{
	if (len > FLOE_BLOBFILE_MAX)
		return FLOE_ELIMIT;
	uint8_t hdr[FLOE_BLOBFILE_HEADER];
	header(hdr, blob, len);
	struct floe_fs_piece pieces[2] = {{hdr, sizeof(hdr)}, {blob, len}};
	return floe_fs_write_atomicv(path, pieces, 2);
}

int floe_blobfile_create(const char *path, const uint8_t *blob, size_t len)
{
	/* Small files only (the installation id): one buffer holds header and payload. */
	uint8_t buf[FLOE_BLOBFILE_HEADER + 4096];
	if (len > sizeof(buf) - FLOE_BLOBFILE_HEADER)
		return FLOE_ELIMIT;
	header(buf, blob, len);
	if (len)
		memcpy(buf + FLOE_BLOBFILE_HEADER, blob, len);
	return floe_fs_create_excl(path, buf, FLOE_BLOBFILE_HEADER + len);
}

int floe_blobfile_load(struct floe_alloc *a, const char *path, uint8_t **blob, size_t *len)
{
	void *data = NULL;
	size_t n = 0;
	int rc = floe_fs_read_file(a, path, FLOE_BLOBFILE_HEADER + FLOE_BLOBFILE_MAX, &data, &n);
	if (rc == -EFBIG)
		return FLOE_ECORRUPT; /* no blob file we write is that large */
	if (rc)
		return rc;
	const uint8_t *p = data;
	if (n < FLOE_BLOBFILE_HEADER || memcmp(p, "FLCK", 4) != 0 ||
	    get_le32(p + 4) != FLOE_BLOBFILE_VERSION ||
	    get_le64(p + 8) != (uint64_t)(n - FLOE_BLOBFILE_HEADER)) {
		rc = FLOE_ECORRUPT;
		goto out;
	}
	size_t plen = n - FLOE_BLOBFILE_HEADER;
	if (floe_crc32c(0, p + FLOE_BLOBFILE_HEADER, plen) != get_le32(p + 16)) {
		rc = FLOE_ECORRUPT;
		goto out;
	}
	uint8_t *out = floe_malloc(a, plen ? plen : 1);
	if (!out) {
		rc = FLOE_ENOMEM;
		goto out;
	}
	if (plen)
		memcpy(out, p + FLOE_BLOBFILE_HEADER, plen);
	*blob = out;
	*len = plen;
out:
	floe_free(a, data);
	return rc;
}

int floe_blobfile_quarantine(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	int dlen = slash ? (int)(slash - path) : 1;
	const char *dir = slash ? path : ".", *name = slash ? slash + 1 : path;
	char q[FLOE_PATH_MAX];
	int rc = floe_fmt(q, sizeof(q), "%.*s/quarantine", dlen, dir);
	if (rc == 0)
		rc = floe_fs_mkdirs(q);
	/* A name not taken yet: an earlier damaged copy stays for the operator. */
	for (unsigned k = 0; rc == 0 && k < 1000; k++) {
		rc = k ? floe_fmt(out, cap, "%s/%s.%u", q, name, k) : floe_fmt(out, cap, "%s/%s", q, name);
		int ex = rc ? 0 : floe_fs_exists(out);
		if (rc == 0 && ex == 0)
			return floe_fs_rename(path, out);
		if (ex < 0)
			return ex;
	}
	return rc ? rc : FLOE_ELIMIT;
}
