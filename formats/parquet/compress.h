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

/* level is used by ZSTD only (0 = 3). Returns NULL with *err set on failure. alloc is
 * borrowed and must outlive the compressor. */
struct floe_pq_compressor *floe_pq_compressor_new(struct floe_alloc *alloc,
						  enum floe_pq_codec codec, int level, int *err);
/* Compresses n bytes at src. *out and *out_len receive the result: for UNCOMPRESSED src itself,
 * otherwise the compressor's own buffer, valid until the next call. Returns 0,
 * FLOE_ENOMEM, FLOE_ELIMIT or FLOE_ECODEC. */
int floe_pq_compressor_run(struct floe_pq_compressor *c, const void *src, size_t n,
			   const uint8_t **out, size_t *out_len);
enum floe_pq_codec floe_pq_compressor_codec(const struct floe_pq_compressor *c);
/* The most bytes compressing n bytes can produce (n itself for UNCOMPRESSED). */
size_t floe_pq_compressor_bound(const struct floe_pq_compressor *c, size_t n);
/* Compresses n bytes at src into dst (cap bytes, at least the bound), *out_len receiving
 * the size: lets the caller compress straight into the block that keeps the page.
 * Returns 0, FLOE_ENOMEM, FLOE_ELIMIT or FLOE_ECODEC. */
int floe_pq_compressor_into(struct floe_pq_compressor *c, const void *src, size_t n, uint8_t *dst,
			    size_t cap, size_t *out_len);
/* Frees c; a job in flight is waited for and dropped (its done is not called). */
void floe_pq_compressor_free(struct floe_pq_compressor *c);

/* Asynchronous use, through an offload (see writer.h). done is called, on the caller's
 * thread, once a job has finished: rc is the compression's result, src/n the input
 * (a copy, valid during the call) and len the compressed size in dst. Its return value
 * becomes the result of the call that completed the job. */
typedef int (*floe_pq_done_fn)(void *ctx, int rc, const uint8_t *src, size_t n, size_t len);

/* Compresses through o from now on (borrowed; NULL = inline). */
void floe_pq_compressor_set_offload(struct floe_pq_compressor *c, const struct floe_pq_offload *o);
/* Starts compressing n bytes at src into dst (cap bytes, at least the bound). src is
 * copied, so the caller may reuse it at once; or, when own (may be NULL) is the buffer
 * src/n lie in and it can be given up, own's storage is taken instead and own gets an
 * empty buffer in return: no copy. dst must stay valid until done has been called,
 * which happens inside a later _submit, _sync or _drop on c (or in this call, without an
 * offload). One job at a time: this first completes the job in flight. Returns 0, an
 * error of that earlier job's done, or FLOE_ENOMEM. */
int floe_pq_compressor_submit(struct floe_pq_compressor *c, const void *src, size_t n,
			      struct floe_buf *own, uint8_t *dst, size_t cap, floe_pq_done_fn done,
			      void *done_ctx);
/* True while a job is in flight (submitted, its done not yet called). */
bool floe_pq_compressor_busy(const struct floe_pq_compressor *c);
/* Completes the job in flight, if any: waits for it and calls its done. */
int floe_pq_compressor_sync(struct floe_pq_compressor *c);
/* Waits for the job in flight, if any, and forgets it without calling done. */
void floe_pq_compressor_drop(struct floe_pq_compressor *c);

#endif
