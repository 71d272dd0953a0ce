/* Spans of a tail: the byte ranges of files that one seal covers, from the tail's blobs
 * at its start and end (the layout tail.h documents, versions 2 and 3). */
#include "agent/input/tail_span.h"
#include "agent/input/input_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

#define TAIL_MAGIC "FLTP"
#define PATH_MAX_BYTES 4096
/* The fixed part of a tail blob's entry after its path (tail.h): dev, inode, offset,
 * fingerprint length and hash, flags; version 3 adds the pre-hash length and hash and
 * the time the file went away. */
#define ENTRY_V2 (8 + 8 + 8 + 4 + 8 + 4)
#define ENTRY_V3 (ENTRY_V2 + 4 + 8 + 8)

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p)
{
	return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

bool floe_input_tail_recognise(const uint8_t *blob, size_t len)
{
	return len >= 4 && memcmp(blob, TAIL_MAGIC, 4) == 0;
}

/* One entry of a tail blob. */
struct pos {
	const uint8_t *path;
	size_t plen;
	uint64_t dev, ino, offset;
};

/* Walks a tail blob: calls fn for each entry. */
static int walk(const uint8_t *p, size_t len, int (*fn)(void *ctx, const struct pos *e), void *ctx)
{
	if (len < 12 || memcmp(p, TAIL_MAGIC, 4) != 0)
		return FLOE_ECORRUPT;
	uint32_t version = le32(p + 4), count = le32(p + 8);
	if (version != 2 && version != 3)
		return FLOE_ECORRUPT;
	size_t fixed = version == 2 ? ENTRY_V2 : ENTRY_V3, off = 12;
	for (uint32_t k = 0; k < count; k++) {
		if (len - off < 4)
			return FLOE_ECORRUPT;
		struct pos e;
		e.plen = le32(p + off);
		off += 4;
		if (e.plen == 0 || e.plen > PATH_MAX_BYTES || len - off < e.plen + fixed ||
		    memchr(p + off, 0, e.plen))
			return FLOE_ECORRUPT;
		e.path = p + off;
		off += e.plen;
		e.dev = le64(p + off);
		e.ino = le64(p + off + 8);
		e.offset = le64(p + off + 16);
		off += fixed;
		int rc = fn(ctx, &e);
		if (rc)
			return rc;
	}
	return 0;
}

struct collect {
	struct floe_alloc *a;
	const uint8_t *from;
	size_t from_len;
	struct floe_span_file *files;
	size_t n, cap;
	/* The from-blob lookup of the entry being collected. */
	uint64_t dev, ino, found;
	bool seen;
};

static int find_from(void *ctx, const struct pos *e)
{
	struct collect *c = ctx;
	if (!c->seen && e->dev == c->dev && e->ino == c->ino) {
		c->found = e->offset;
		c->seen = true;
	}
	return 0;
}

static int add_to(void *ctx, const struct pos *e)
{
	struct collect *c = ctx;
	c->dev = e->dev;
	c->ino = e->ino;
	c->found = 0;
	c->seen = false;
	/* Quadratic in the files of one input; a seal's positions hold a few hundred at most
	 * (max_open_files and the stale entries), and this runs only for a damaged file. */
	int rc = c->from_len ? walk(c->from, c->from_len, find_from, c) : 0;
	if (rc)
		return rc;
	if (e->offset == c->found)
		return 0; /* no bytes of this file in the seal */
	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 8;
		struct floe_span_file *p = floe_realloc(c->a, c->files, cap * sizeof(*p));
		if (!p)
			return FLOE_ENOMEM;
		c->files = p;
		c->cap = cap;
	}
	struct floe_span_file *f = &c->files[c->n];
	if (!(f->path = floe_strndup(c->a, (const char *)e->path, e->plen)))
		return FLOE_ENOMEM;
	c->n++;
	f->dev = e->dev;
	f->ino = e->ino;
	f->from = c->found;
	f->to = e->offset;
	f->readable = e->offset > c->found;
	return 0;
}

int floe_span_files(struct floe_alloc *a, const uint8_t *from, size_t from_len, const uint8_t *to, size_t to_len,
		    struct floe_span_file **out, size_t *n)
{
	struct collect c;
	memset(&c, 0, sizeof(c));
	c.a = a;
	c.from = from;
	c.from_len = from_len;
	int rc = from_len ? walk(from, from_len, find_from, &c) : 0;
	if (rc == 0)
		rc = walk(to, to_len, add_to, &c);
	if (rc) {
		floe_span_free(a, c.files, c.n);
		return rc;
	}
	*out = c.files;
	*n = c.n;
	return 0;
}

void floe_span_free(struct floe_alloc *a, struct floe_span_file *f, size_t n)
{
	for (size_t i = 0; f && i < n; i++)
		floe_free(a, f[i].path);
	floe_free(a, f);
}
