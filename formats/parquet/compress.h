/* Page compression for the Parquet writer: ZSTD (libzstd, its memory taken from our
 * allocator), LZ4_RAW (a bare LZ4 block) or none. One compressor per writer, reused for
 * every page, so compressing allocates nothing once the output buffer has grown. */
#ifndef FLOE_PQ_COMPRESS_H
#define FLOE_PQ_COMPRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/parquet/writer.h"

struct floe_alloc;
struct floe_buf;
struct floe_pq_compressor;

/* A new compressor in *out (owned by the caller; free with floe_pq_compressor_free).
 * level is used by ZSTD only (0 = 3). Returns 0, FLOE_ENOMEM, FLOE_EINVAL (a level zstd
 * refuses) or FLOE_EUNSUPPORTED (codec). alloc is borrowed and must outlive the
 * compressor. */
int floe_pq_compressor_new(struct floe_alloc *alloc, enum floe_pq_codec codec, int level,
			   struct floe_pq_compressor **out);
/* Compresses n bytes at src. *out and *out_len receive the result: for UNCOMPRESSED src itself,
 * otherwise the compressor's own buffer, valid until the next call. Returns 0,
 * FLOE_ENOMEM, FLOE_ELIMIT or FLOE_ECODEC. */
int floe_pq_compressor_run(struct floe_pq_compressor *c, const void *src, size_t n,
			   const uint8_t **out, size_t *out_len);
enum floe_pq_codec floe_pq_compressor_codec(const struct floe_pq_compressor *c);
/* The most bytes compressing n bytes can produce (n itself for UNCOMPRESSED). */
size_t floe_pq_compressor_bound(const struct floe_pq_compressor *c, size_t n);
/* Compresses n bytes at src into dst (cap bytes), *out_len receiving the size: lets the
 * caller compress straight into the block that keeps the page. With cap below the bound,
 * output that does not fit is FLOE_ELIMIT (compress again with the bound). Returns 0,
 * FLOE_ENOMEM, FLOE_ELIMIT or FLOE_ECODEC. */
int floe_pq_compressor_into(struct floe_pq_compressor *c, const void *src, size_t n, uint8_t *dst,
			    size_t cap, size_t *out_len);
/* Frees c; a job in flight is waited for and dropped (its done is not called). NULL is
 * a no-op. */
void floe_pq_compressor_free(struct floe_pq_compressor *c);

/* Asynchronous use, through an offload (see writer.h). done is called, on the caller's
 * thread, once a job has finished: rc is the compression's result, src/n the input
 * (a copy, valid during the call), len the compressed size in dst and crc, when rc is 0,
 * the CRC-32 of the job's lead bytes before dst and the len bytes at dst (a page's
 * checksum, computed where the page was compressed). Its return value becomes the
 * result of the call that completed the job. Jobs complete in the order they were
 * submitted. */
typedef int (*floe_pq_done_fn)(void *ctx, int rc, const uint8_t *src, size_t n, size_t len,
			       uint32_t crc);

/* Jobs queued at most: pages closed on the same row go to the offload together. */
#define FLOE_PQ_QUEUE 8

/* Compresses through o from now on (borrowed; NULL = inline). queue_bytes bounds the
 * input held by queued jobs (0: only FLOE_PQ_QUEUE does): a job that would pass it
 * waits for the ones before it. */
void floe_pq_compressor_set_offload(struct floe_pq_compressor *c, const struct floe_pq_offload *o,
				   size_t queue_bytes);
/* Queues the compression of n bytes at src into dst (cap bytes; below the bound, output
 * that does not fit fails with FLOE_ELIMIT), to be checksummed with the lead bytes that
 * precede dst.
 * src is copied, so the caller may reuse it at once; or, when own (may be NULL) is the
 * buffer src/n lie in and it can be given up, own's storage is taken instead and own
 * gets a new, empty one of the same capacity: no copy. dst must stay valid until done has been
 * called, which happens inside a later _submit, _pump, _sync or _drop on c (or in this
 * call, without an offload). Queued jobs go to the offload as one task whenever none is
 * running. *taken tells whether the job was queued (or done): when false, its done will
 * never be called. Returns 0, an error of an earlier job's done, or FLOE_ENOMEM. */
int floe_pq_compressor_submit(struct floe_pq_compressor *c, const void *src, size_t n,
			      struct floe_buf *own, uint8_t *dst, size_t cap, size_t lead,
			      floe_pq_done_fn done, void *done_ctx, bool *taken);
/* True when a job of n bytes submitted now would first wait for a job before it that
 * is still being compressed. */
bool floe_pq_compressor_would_wait(const struct floe_pq_compressor *c, size_t n);
/* True while a job is queued or in flight (its done not yet called). */
bool floe_pq_compressor_busy(const struct floe_pq_compressor *c);
/* Jobs completed so far (their done called): tells a caller whether any completed. */
unsigned long floe_pq_compressor_completed(const struct floe_pq_compressor *c);
/* Without waiting: completes the jobs of a task that has finished and hands the queued
 * ones to the offload. Returns the first error of the dones it called. */
int floe_pq_compressor_pump(struct floe_pq_compressor *c);
/* Completes every job: waits for them and calls their dones. */
int floe_pq_compressor_sync(struct floe_pq_compressor *c);
/* Waits for the jobs in flight and disposes of every job: its done is called with
 * FLOE_EINVAL as rc, so that the caller can free what it holds for it; its result is
 * ignored. */
void floe_pq_compressor_drop(struct floe_pq_compressor *c);

#endif
