/* Avro binary encoding helpers and the object container writer: header (magic, metadata
 * map, sync marker), then blocks of (count, size, data, sync), optionally deflated. */
#include "avro.h"
#include "avro_internal.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

int floe_avro_put_long(struct floe_buf *b, int64_t v) { return floe_buf_put_svarint(b, v); }

int floe_avro_put_int(struct floe_buf *b, int32_t v) { return floe_buf_put_svarint(b, v); }

int floe_avro_put_bool(struct floe_buf *b, bool v) { return floe_buf_putc(b, v ? 1 : 0); }

int floe_avro_put_float(struct floe_buf *b, float v)
{
	uint32_t u;
	memcpy(&u, &v, sizeof(u));
	return floe_buf_put_le32(b, u);
}

int floe_avro_put_double(struct floe_buf *b, double v)
{
	uint64_t u;
	memcpy(&u, &v, sizeof(u));
	return floe_buf_put_le64(b, u);
}

int floe_avro_put_bytes(struct floe_buf *b, const void *p, size_t len)
{
	size_t old = b->len;
#if SIZE_MAX > INT64_MAX
	/* Only a size_t wider than 63 bits can hold a length that Avro's long cannot. */
	if ((uint64_t)len > (uint64_t)INT64_MAX)
		return FLOE_ELIMIT;
#endif
	int rc = floe_buf_put_svarint(b, (int64_t)len);
	if (!rc)
		rc = floe_buf_append(b, p, len);
	if (rc)
		b->len = old;
	return rc;
}

int floe_avro_put_str(struct floe_buf *b, const char *s) { return floe_avro_put_bytes(b, s, strlen(s)); }

int floe_avro_put_union(struct floe_buf *b, int64_t branch) { return floe_buf_put_svarint(b, branch); }

int floe_avro_get_long(struct floe_avro_cursor *c, int64_t *out)
{
	uint64_t v = 0;
	size_t pos = c->pos;
	for (int shift = 0; shift < 70; shift += 7) {
		if (pos >= c->len)
			return FLOE_EPARSE;
		uint8_t byte = c->p[pos++];
		/* The tenth byte may only carry the top bit of a 64-bit value. */
		if (shift == 63 && (byte & 0xfe))
			return FLOE_EPARSE;
		v |= (uint64_t)(byte & 0x7f) << shift;
		if (!(byte & 0x80)) {
			c->pos = pos;
			*out = (int64_t)((v >> 1) ^ (~(v & 1) + 1));
			return 0;
		}
	}
	return FLOE_EPARSE;
}

int floe_avro_get_bytes(struct floe_avro_cursor *c, const uint8_t **p, size_t *len)
{
	size_t start = c->pos;
	int64_t n;
	int rc = floe_avro_get_long(c, &n);
	if (rc)
		return rc;
	if (n < 0 || (uint64_t)n > c->len - c->pos) {
		c->pos = start;
		return FLOE_EPARSE;
	}
	*p = c->p + c->pos;
	*len = (size_t)n;
	c->pos += (size_t)n;
	return 0;
}

/* zlib allocates through the budgeted allocator, so fault tests reach it too. */
void *floe_avro_zalloc(void *opaque, unsigned items, unsigned size)
{
	size_t n;
	if (__builtin_mul_overflow((size_t)items, (size_t)size, &n))
		return NULL;
	return floe_malloc(opaque, n);
}

void floe_avro_zfree(void *opaque, void *p) { floe_free(opaque, p); }

struct floe_avro_writer {
	struct floe_alloc *a;
	struct floe_buf *out;
	enum floe_avro_codec codec;
	uint8_t sync[16];
	size_t block_bytes;
	struct floe_buf rec;  /* the record being encoded */
	struct floe_buf blk;  /* the block being filled */
	struct floe_buf zbuf; /* deflated block */
	int64_t count;
};

static int put_meta(struct floe_buf *b, const char *key, const void *v, size_t len)
{
	int rc = floe_avro_put_str(b, key);
	return rc ? rc : floe_avro_put_bytes(b, v, len);
}

int floe_avro_writer_new(struct floe_alloc *a, const struct floe_avro_writer_opts *o,
			 struct floe_buf *out, struct floe_avro_writer **w)
{
	if (!o || !o->schema_json || !o->sync || !out || !w ||
	    (o->codec != FLOE_AVRO_CODEC_NULL && o->codec != FLOE_AVRO_CODEC_DEFLATE))
		return FLOE_EINVAL;
	size_t max = o->max_block_bytes ? o->max_block_bytes : (size_t)64 << 20;
	struct floe_avro_writer *wr = floe_calloc(a, 1, sizeof(*wr));
	if (!wr)
		return FLOE_ENOMEM;
	wr->a = a;
	wr->out = out;
	wr->codec = o->codec;
	memcpy(wr->sync, o->sync, 16);
	wr->block_bytes = o->block_bytes ? o->block_bytes : (size_t)1 << 20;
	floe_buf_init(&wr->rec, a, max);
	floe_buf_init(&wr->blk, a, max);
	floe_buf_init(&wr->zbuf, a, max);

	size_t old = out->len;
	const char *codec = o->codec == FLOE_AVRO_CODEC_DEFLATE ? "deflate" : "null";
	int rc = floe_buf_append(out, "Obj\x01", 4);
	if (!rc && (uint64_t)o->nmeta + 2 > (uint64_t)INT64_MAX)
		rc = FLOE_ELIMIT;
	if (!rc)
		rc = floe_avro_put_long(out, (int64_t)(o->nmeta + 2));
	if (!rc)
		rc = put_meta(out, "avro.schema", o->schema_json, o->schema_len);
	if (!rc)
		rc = put_meta(out, "avro.codec", codec, strlen(codec));
	for (size_t i = 0; !rc && i < o->nmeta; i++)
		rc = put_meta(out, o->meta[i].key, o->meta[i].value, o->meta[i].len);
	if (!rc)
		rc = floe_avro_put_long(out, 0);
	if (!rc)
		rc = floe_buf_append(out, wr->sync, 16);
	if (rc) {
		out->len = old;
		floe_avro_writer_free(wr);
		return rc;
	}
	*w = wr;
	return 0;
}

struct floe_buf *floe_avro_writer_record(struct floe_avro_writer *w) { return &w->rec; }

void floe_avro_writer_abort_record(struct floe_avro_writer *w) { floe_buf_reset(&w->rec); }

int floe_avro_writer_end_record(struct floe_avro_writer *w)
{
	int rc = floe_buf_append(&w->blk, w->rec.data, w->rec.len);
	floe_buf_reset(&w->rec);
	if (rc)
		return rc;
	w->count++;
	if (w->blk.len >= w->block_bytes)
		return floe_avro_writer_flush(w);
	return 0;
}

static int deflate_block(struct floe_avro_writer *w)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	zs.zalloc = floe_avro_zalloc;
	zs.zfree = floe_avro_zfree;
	zs.opaque = w->a;
	if (w->blk.len > UINT32_MAX / 2)
		return FLOE_ELIMIT;
	int zrc = deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY);
	if (zrc == Z_MEM_ERROR)
		return FLOE_ENOMEM;
	if (zrc != Z_OK)
		return FLOE_ECODEC;
	int rc = 0;
	uLong bound = deflateBound(&zs, (uLong)w->blk.len);
	floe_buf_reset(&w->zbuf);
	rc = floe_buf_reserve(&w->zbuf, bound);
	if (!rc) {
		zs.next_in = w->blk.data;
		zs.avail_in = (uInt)w->blk.len;
		zs.next_out = w->zbuf.data;
		zs.avail_out = (uInt)bound;
		zrc = deflate(&zs, Z_FINISH);
		if (zrc == Z_STREAM_END)
			w->zbuf.len = zs.total_out;
		else
			rc = zrc == Z_MEM_ERROR || zrc == Z_BUF_ERROR ? FLOE_ENOMEM : FLOE_ECODEC;
	}
	deflateEnd(&zs);
	return rc;
}

int floe_avro_writer_flush(struct floe_avro_writer *w)
{
	if (w->count == 0)
		return 0;
	const struct floe_buf *data = &w->blk;
	int rc = 0;
	if (w->codec == FLOE_AVRO_CODEC_DEFLATE) {
		rc = deflate_block(w);
		if (rc)
			return rc;
		data = &w->zbuf;
	}
	size_t old = w->out->len;
	rc = floe_avro_put_long(w->out, w->count);
	if (!rc)
		rc = floe_avro_put_long(w->out, (int64_t)data->len);
	if (!rc)
		rc = floe_buf_append(w->out, data->data, data->len);
	if (!rc)
		rc = floe_buf_append(w->out, w->sync, 16);
	if (rc) {
		w->out->len = old;
		return rc;
	}
	w->count = 0;
	floe_buf_reset(&w->blk);
	return 0;
}

void floe_avro_writer_free(struct floe_avro_writer *w)
{
	if (!w)
		return;
	floe_buf_fini(&w->rec);
	floe_buf_fini(&w->blk);
	floe_buf_fini(&w->zbuf);
	floe_free(w->a, w);
}
