/* Page compression. LZ4 gets its state from us (LZ4_compress_fast_extState) instead of
 * 16 KiB of stack; zstd gets our allocator through its custom-memory API. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createCCtx_advanced, for the budgeted allocator */
#include "compress.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/crc.h"
#include "formats/base/error.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <lz4.h>
#include <zstd.h>
#include <zstd_errors.h>

struct floe_pq_compressor {
	struct floe_alloc *alloc;
	enum floe_pq_codec codec;
	int level;
	ZSTD_CCtx *zctx;
	bool capped; /* zctx holds the parameters of a CAP_BYTES input (see zstd_prepare) */
	void *lz4_state;
	struct floe_buf out;
	/* Asynchronous jobs, in a ring, completed in the order they came: q[head..head+n)
	 * are not yet done, and the first batch of them were handed to the offload as one
	 * task, which compresses them one after the other with zctx and counts them in ran.
	 * Each job owns a copy of its input, or the caller's buffer, which it frees when
	 * done. qbytes is their input's size, which qlimit bounds. */
	const struct floe_pq_offload *off;
	struct floe_pq_job {
		struct floe_buf src;
		uint8_t *dst;
		size_t cap, len, lead;
		uint32_t crc;
		int rc;
		floe_pq_done_fn done;
		void *done_ctx;
	} q[FLOE_PQ_QUEUE];
	unsigned head, n, batch;
	unsigned long completed; /* jobs whose done has been called */
	size_t qbytes, qlimit;
	atomic_uint ran;
	bool task; /* the batch's task is submitted and not yet waited for */
	void *handle;
};

static void *zalloc(void *opaque, size_t n)
{
	return floe_malloc(opaque, n);
}

static void zfree(void *opaque, void *p)
{
	floe_free(opaque, p);
}

int floe_pq_compressor_new(struct floe_alloc *alloc, enum floe_pq_codec codec, int level,
			   struct floe_pq_compressor **out)
{
	struct floe_pq_compressor *c = floe_calloc(alloc, 1, sizeof(*c));
	int rc = 0;
	if (!c)
		return FLOE_ENOMEM;
	c->alloc = alloc;
	c->codec = codec;
	c->level = level ? level : 3;
	floe_buf_init(&c->out, alloc, (size_t)INT32_MAX);
	for (size_t i = 0; i < FLOE_PQ_QUEUE; i++)
		floe_buf_init(&c->q[i].src, alloc, (size_t)INT32_MAX);
	switch (codec) {
	case FLOE_PQ_UNCOMPRESSED:
		break;
	case FLOE_PQ_ZSTD: {
		ZSTD_customMem mem = {zalloc, zfree, alloc};
		c->zctx = ZSTD_createCCtx_advanced(mem);
		if (!c->zctx) {
			rc = FLOE_ENOMEM;
			goto out;
		}
		if (ZSTD_isError(
			ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_compressionLevel, c->level))) {
			rc = FLOE_EINVAL;
			goto out;
		}
		/* Nothing else is set: each page is compressed in one call that tells zstd
		 * its size, so zstd picks its own parameters for that size at this level
		 * (ZSTD_getCParams(level, size, 0)). Match tables tuned for pages (2^14/2^13
		 * entries, 6-byte matches) had been chosen on the benchmark's generator and
		 * five samples, and lost to these elsewhere: measured with tests/bench on
		 * 512 KiB pages, 2.0 % on log families the samples lack (every page), 2.7 %
		 * at level 6, and on JSON lines and an Android log. No fixed choice held on
		 * every page of every corpus: 6-byte matches with zstd's own tables, the
		 * best of them, still lost 0.6 % on the Android sample as it is. */
		break;
	}
	case FLOE_PQ_LZ4_RAW:
		c->lz4_state = floe_malloc(alloc, (size_t)LZ4_sizeofState());
		if (!c->lz4_state) {
			rc = FLOE_ENOMEM;
			goto out;
		}
		break;
	default:
		rc = FLOE_EUNSUPPORTED;
		goto out;
	}
	*out = c;
	c = NULL;
out:
	floe_pq_compressor_free(c);
	return rc;
}

/* Inputs larger than a page (one huge value) are compressed with the parameters zstd
 * gives a CAP_BYTES input, not their own: zstd's tables and window grow with the input up
 * to the level's (at level 19 a 3 MB value took a 40 MB context), and the writer's memory
 * must not grow with a line. Pages up to CAP_BYTES keep zstd's own parameters for their
 * size, so their output is unchanged. */
#define CAP_BYTES ((size_t)512 << 10)

static int zstd_prepare(struct floe_pq_compressor *c, size_t n)
{
	bool cap = n > CAP_BYTES;
	if (cap == c->capped)
		return 0;
	ZSTD_compressionParameters p = ZSTD_getCParams(c->level, CAP_BYTES, 0);
	/* 0 gives each parameter back to zstd's choice for the input. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_windowLog, cap ? (int)p.windowLog : 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_hashLog, cap ? (int)p.hashLog : 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_chainLog, cap ? (int)p.chainLog : 0)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(c->zctx, ZSTD_c_searchLog, cap ? (int)p.searchLog : 0)))
		return FLOE_ECODEC;
	c->capped = cap;
	return 0;
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
	/* Try first within the input's size (or the buffer as it is, if larger), so that the
	 * buffer stays as big as a page rather than growing to the next power of two past
	 * the bound; only output that does not fit takes the full bound. */
	floe_buf_reset(&c->out);
	size_t room = n > c->out.cap ? n : c->out.cap;
	if (room > bound)
		room = bound;
	size_t got = 0;
	for (int pass = 0; pass < 2; pass++) {
		if ((rc = floe_buf_reserve(&c->out, room)))
			return rc;
		if (c->codec == FLOE_PQ_ZSTD) {
			if ((rc = zstd_prepare(c, n)))
				return rc;
			got = ZSTD_compress2(c->zctx, c->out.data, room, src, n);
			if (!ZSTD_isError(got))
				break;
			if (ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
				return FLOE_ENOMEM;
			if (ZSTD_getErrorCode(got) != ZSTD_error_dstSize_tooSmall || room == bound)
				return FLOE_ECODEC;
		} else {
			int r = LZ4_compress_fast_extState(c->lz4_state, src, (char *)c->out.data,
							   (int)n, (int)room, 1);
			got = r > 0 ? (size_t)r : 0;
			if (r > 0 || n == 0)
				break;
			if (room == bound)
				return FLOE_ECODEC;
		}
		room = bound;
	}
	c->out.len = got;
	*out = c->out.data;
	*out_len = got;
	return 0;
}

enum floe_pq_codec floe_pq_compressor_codec(const struct floe_pq_compressor *c)
{
	return c->codec;
}

size_t floe_pq_compressor_bound(const struct floe_pq_compressor *c, size_t n)
{
	if (c->codec == FLOE_PQ_UNCOMPRESSED || n > (size_t)LZ4_MAX_INPUT_SIZE)
		return n;
	return c->codec == FLOE_PQ_ZSTD ? ZSTD_compressBound(n) : (size_t)LZ4_compressBound((int)n);
}

int floe_pq_compressor_into(struct floe_pq_compressor *c, const void *src, size_t n, uint8_t *dst,
			    size_t cap, size_t *out_len)
{
	if (c->codec == FLOE_PQ_UNCOMPRESSED) {
		if (cap < n)
			return FLOE_ELIMIT;
		if (n)
			memcpy(dst, src, n);
		*out_len = n;
		return 0;
	}
	if (n > (size_t)LZ4_MAX_INPUT_SIZE || cap > (size_t)INT32_MAX)
		return FLOE_ELIMIT;
	if (c->codec == FLOE_PQ_ZSTD) {
		int rc = zstd_prepare(c, n);
		if (rc)
			return rc;
		size_t got = ZSTD_compress2(c->zctx, dst, cap, src, n);
		if (ZSTD_isError(got)) {
			ZSTD_ErrorCode e = ZSTD_getErrorCode(got);
			if (e == ZSTD_error_memory_allocation)
				return FLOE_ENOMEM;
			if (e == ZSTD_error_dstSize_tooSmall && cap < ZSTD_compressBound(n))
				return FLOE_ELIMIT;
			return FLOE_ECODEC;
		}
		*out_len = got;
		return 0;
	}
	int r = LZ4_compress_fast_extState(c->lz4_state, src, (char *)dst, (int)n, (int)cap, 1);
	if (r <= 0 && n > 0)
		return cap < (size_t)LZ4_compressBound((int)n) ? FLOE_ELIMIT : FLOE_ECODEC;
	*out_len = r > 0 ? (size_t)r : 0;
	return 0;
}

void floe_pq_compressor_set_offload(struct floe_pq_compressor *c, const struct floe_pq_offload *o,
				   size_t queue_bytes)
{
	c->off = o;
	c->qlimit = queue_bytes;
}

static struct floe_pq_job *job_at(struct floe_pq_compressor *c, unsigned i)
{
	return &c->q[(c->head + i) % FLOE_PQ_QUEUE];
}

/* The batch, on whatever thread the offload runs it: touches only the compression
 * context and the batch's jobs, which the caller leaves alone until it is done. */
static void run_batch(void *arg)
{
	struct floe_pq_compressor *c = arg;
	for (unsigned i = 0; i < c->batch; i++) {
		struct floe_pq_job *j = job_at(c, i);
		j->rc = floe_pq_compressor_into(c, j->src.data, j->src.len, j->dst, j->cap, &j->len);
		if (!j->rc)
			j->crc = floe_crc32(0, j->dst - j->lead, j->lead + j->len);
		atomic_store_explicit(&c->ran, i + 1, memory_order_release);
	}
}

/* Hands every queued job to the offload as one batch (run here if it refuses). */
static void start_batch(struct floe_pq_compressor *c)
{
	c->batch = c->n;
	atomic_store_explicit(&c->ran, 0, memory_order_relaxed);
	c->handle = NULL;
	c->task = true;
	if (c->off->submit(c->off->ctx, run_batch, c, &c->handle)) {
		c->handle = NULL;
		run_batch(c);
	}
}

/* Keeps the first error of several. */
static void keep_first(int *first, int rc)
{
	if (rc && !*first)
		*first = rc;
}

/* Waits for the batch's task, then completes its jobs in order: each job's done is
 * called (with rc forced to cancel, when not 0: the job is only being disposed of) and
 * its input buffer freed. Returns the first done's error. */
static int finish_batch(struct floe_pq_compressor *c, int cancel)
{
	if (c->handle)
		c->off->wait(c->off->ctx, c->handle);
	c->handle = NULL;
	c->task = false;
	int first = 0;
	for (unsigned i = 0; i < c->batch; i++) {
		struct floe_pq_job *j = job_at(c, 0);
		int rc = j->done(j->done_ctx, cancel ? cancel : j->rc, j->src.data, j->src.len,
				 j->len, j->crc);
		keep_first(&first, rc);
		c->qbytes -= j->src.len;
		floe_buf_fini(&j->src);
		floe_buf_init(&j->src, c->alloc, (size_t)INT32_MAX);
		c->head = (c->head + 1) % FLOE_PQ_QUEUE;
		c->n--;
		c->completed++;
	}
	c->batch = 0;
	return first;
}

/* Completes the oldest batch, handing the queue over first if no task is running. */
static int complete_oldest(struct floe_pq_compressor *c)
{
	if (!c->task)
		start_batch(c);
	return finish_batch(c, 0);
}

static bool must_wait(const struct floe_pq_compressor *c, size_t n)
{
	return c->n == FLOE_PQ_QUEUE || (c->n && c->qlimit && c->qbytes + n > c->qlimit);
}

bool floe_pq_compressor_would_wait(const struct floe_pq_compressor *c, size_t n)
{
	/* A batch that has run only needs completing: no wait. */
	return c->off && must_wait(c, n) &&
	       !(c->task && atomic_load_explicit(&c->ran, memory_order_acquire) == c->batch);
}

bool floe_pq_compressor_busy(const struct floe_pq_compressor *c)
{
	return c->n > 0;
}

unsigned long floe_pq_compressor_completed(const struct floe_pq_compressor *c)
{
	return c->completed;
}

int floe_pq_compressor_pump(struct floe_pq_compressor *c)
{
	int rc = 0;
	if (c->task && atomic_load_explicit(&c->ran, memory_order_acquire) == c->batch)
		rc = finish_batch(c, 0);
	if (!c->task && c->n)
		start_batch(c);
	return rc;
}

int floe_pq_compressor_sync(struct floe_pq_compressor *c)
{
	int first = 0;
	while (c->n)
		keep_first(&first, complete_oldest(c));
	return first;
}

void floe_pq_compressor_drop(struct floe_pq_compressor *c)
{
	while (c->n) {
		if (!c->task) {
			/* Never started: nothing to wait for. */
			c->batch = c->n;
			c->task = true;
			c->handle = NULL;
		}
		(void)finish_batch(c, FLOE_EINVAL);
	}
}

int floe_pq_compressor_submit(struct floe_pq_compressor *c, const void *src, size_t n,
			      struct floe_buf *own, uint8_t *dst, size_t cap, size_t lead,
			      floe_pq_done_fn done, void *done_ctx, bool *taken)
{
	*taken = false;
	if (!c->off) {
		*taken = true;
		size_t len = 0;
		int rc = floe_pq_compressor_into(c, src, n, dst, cap, &len);
		uint32_t crc = rc ? 0 : floe_crc32(0, dst - lead, lead + len);
		return done(done_ctx, rc, src, n, len, crc);
	}
	int first = 0;
	/* Room in the ring and within the byte limit: else wait for the oldest batch. */
	while (must_wait(c, n))
		keep_first(&first, complete_oldest(c));
	struct floe_pq_job *j = job_at(c, c->n);
	if (own && own->data == src && own->len == n && own->alloc == c->alloc &&
	    own->max == (size_t)INT32_MAX && own->cap / 2 <= n) {
		/* The job takes the page's buffer (when the page fills most of it); the caller
		 * gets a new one for as much, in one allocation (if that fails, it grows as it
		 * fills). Keeping the finished jobs' buffers for this instead would hold one
		 * more page for good. */
		j->src = *own;
		floe_buf_init(own, c->alloc, (size_t)INT32_MAX);
		(void)floe_buf_reserve(own, n);
	} else {
		int rc = floe_buf_append(&j->src, src, n);
		if (rc) {
			floe_buf_fini(&j->src);
			floe_buf_init(&j->src, c->alloc, (size_t)INT32_MAX);
			return first ? first : rc;
		}
	}
	j->dst = dst;
	j->cap = cap;
	j->lead = lead;
	j->crc = 0;
	j->len = 0;
	j->rc = 0;
	j->done = done;
	j->done_ctx = done_ctx;
	*taken = true;
	c->n++;
	c->qbytes += n;
	int rc = floe_pq_compressor_pump(c);
	return first ? first : rc;
}

void floe_pq_compressor_free(struct floe_pq_compressor *c)
{
	if (!c)
		return;
	floe_pq_compressor_drop(c);
	for (size_t i = 0; i < FLOE_PQ_QUEUE; i++)
		floe_buf_fini(&c->q[i].src);
	ZSTD_freeCCtx(c->zctx);
	floe_free(c->alloc, c->lz4_state);
	floe_buf_fini(&c->out);
	floe_free(c->alloc, c);
}
