/* Page compression. LZ4 gets its state from us (LZ4_compress_fast_extState) instead of
 * 16 KiB of stack; zstd gets our allocator through its custom-memory API. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced, for the budgeted allocator */
#include "compress.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <limits.h>
#include <lz4.h>
#include <zstd.h>
#include <zstd_errors.h>

struct floe_pq_compressor {
	struct floe_alloc *alloc;
	enum floe_pq_codec codec;
	int level;
	ZSTD_CCtx *zctx;
	void *lz4_state;
	struct floe_buf out;
};

static void *zalloc(void *opaque, size_t n)
{
	return floe_malloc(opaque, n);
}

static void zfree(void *opaque, void *p)
{
	floe_free(opaque, p);
}

struct floe_pq_compressor *floe_pq_compressor_new(struct floe_alloc *alloc,
						  enum floe_pq_codec codec, int level, int *err)
{
	struct floe_pq_compressor *c = floe_calloc(alloc, 1, sizeof(*c));
	if (!c) {
		*err = FLOE_ENOMEM;
		return NULL;
	}
	c->alloc = alloc;
	c->codec = codec;
	c->level = level ? level : 3;
	floe_buf_init(&c->out, alloc, (size_t)INT32_MAX);
	switch (codec) {
	case FLOE_PQ_UNCOMPRESSED:
		break;
	case FLOE_PQ_ZSTD: {
		ZSTD_customMem mem = {zalloc, zfree, alloc};
		c->zctx = ZSTD_createCCtx_advanced(mem);
		if (!c->zctx)
			goto nomem;
		if (ZSTD_isError(
			ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_compressionLevel, c->level))) {
			*err = FLOE_EINVAL;
			goto fail;
		}
		break;
	}
	case FLOE_PQ_LZ4_RAW:
		c->lz4_state = floe_malloc(alloc, (size_t)LZ4_sizeofState());
		if (!c->lz4_state)
			goto nomem;
		break;
	default:
		*err = FLOE_EUNSUPPORTED;
		goto fail;
	}
	return c;
nomem:
	*err = FLOE_ENOMEM;
fail:
	floe_pq_compressor_free(c);
	return NULL;
}

int floe_pq_compressor_run(struct floe_pq_compressor *c, const void *src, size_t n,
			   const uint8_t **out, size_t *out_len)
{
	int rc;
	if (c->codec == FLOE_PQ_UNCOMPRESSED) {
		*out = src;
		*out_len = n;
		return 0;
	}
	if (n > (size_t)LZ4_MAX_INPUT_SIZE)
		return FLOE_ELIMIT;
	size_t bound =
	    c->codec == FLOE_PQ_ZSTD ? ZSTD_compressBound(n) : (size_t)LZ4_compressBound((int)n);
	floe_buf_reset(&c->out);
	if ((rc = floe_buf_reserve(&c->out, bound)))
		return rc;
	size_t got;
	if (c->codec == FLOE_PQ_ZSTD) {
		got = ZSTD_compress2(c->zctx, c->out.data, bound, src, n);
		if (ZSTD_isError(got))
			return ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation ? FLOE_ENOMEM
										      : FLOE_ECODEC;
	} else {
		int r = LZ4_compress_fast_extState(c->lz4_state, src, (char *)c->out.data, (int)n,
						   (int)bound, 1);
		if (r <= 0 && n > 0)
			return FLOE_ECODEC;
		got = r > 0 ? (size_t)r : 0;
	}
	c->out.len = got;
	*out = c->out.data;
	*out_len = got;
	return 0;
}

void floe_pq_compressor_free(struct floe_pq_compressor *c)
{
	if (!c)
		return;
	ZSTD_freeCCtx(c->zctx);
	floe_free(c->alloc, c->lz4_state);
	floe_buf_fini(&c->out);
	floe_free(c->alloc, c);
}
