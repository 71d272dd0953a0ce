/* What a Parquet writer needs in memory before it exists: the peak of its compression
 * contexts, found by compressing a probe once per codec and level, and the bytes a row
 * of given value sizes may take (floe_pq_writer_context_bytes, floe_pq_writer_row_need),
 * so that the agent's memory rule can budget writers it has not made. */
#include "writer.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/writer_impl.h"

#include <string.h>

/* What a writer holds besides its pages and compression contexts (leaves, statistics,
 * chunk records, buffers of the small columns' first pages): under 0.1 MB for floe's 13
 * leaves, with room here for long paths and host names. */
#define WRITER_FIXED ((uint64_t)128 << 10)
/* A first page that closes before its dictionary probe decided may fall back to PLAIN
 * (probe_at_close in chunk.c) and copy the dictionary's values while both
 * exist: measured at up to 162 KB with one large row in a fresh writer. */
#define FALLBACK_SLACK ((uint64_t)256 << 10)
/* Per-page slack: the page header, the levels and length prefixes of a row's values. */
#define PAGE_SLACK ((uint64_t)1 << 10)
/* The probe compresses more than 256 KiB: zstd, left to its own parameters for each
 * page's size, takes its largest tables for inputs above 256 KiB, and a one-shot
 * compression's context does not grow beyond that with the input (measured: level 3
 * 1.3 MB, level 6 3.7 MB from 300 KB to 8 MB). */
#define PROBE_BYTES ((size_t)512 << 10)

static uint64_t pow2_at_least(uint64_t n)
{
	uint64_t p = 64;
	while (p < n && p < ((uint64_t)1 << 62))
		p *= 2;
	return p;
}

/* The last probes' results, per thread: a start asks the same question for the memory
 * check, the partitions' budget and each table's batch (8 probes at a start with two
 * tables), and the answer depends on the codec, the level and the size alone. */
#define PROBE_MEMO 8
static _Thread_local struct probe_memo {
	enum floe_pq_codec codec;
	int level;
	size_t probe, peak;
} probe_memo[PROBE_MEMO];
static _Thread_local unsigned probe_memo_n;

/* The peak of one compressor of codec at level that compresses probe bytes. */
static int probe_context(enum floe_pq_codec codec, int level, size_t probe, size_t *out)
{
	for (unsigned i = 0; i < probe_memo_n && i < PROBE_MEMO; i++) {
		const struct probe_memo *m = &probe_memo[i];
		if (m->codec == codec && m->level == level && m->probe == probe) {
			*out = m->peak;
			return 0;
		}
	}
	/* The probe's buffers come from one counter, the context from another. */
	struct floe_alloc ctx, buf;
	floe_alloc_init(&ctx, 0);
	floe_alloc_init(&buf, 0);
	struct floe_pq_compressor *c = NULL;
	int rc = floe_pq_compressor_new(&ctx, codec, level, &c);
	if (rc)
		return rc;
	size_t cap = floe_pq_compressor_bound(c, probe);
	uint8_t *src = floe_malloc(&buf, probe), *dst = floe_malloc(&buf, cap);
	if (!src || !dst) {
		rc = FLOE_ENOMEM;
	} else {
		/* zstd sizes its whole workspace from the parameters and the input's size
		 * before it reads a byte, so the content does not change the peak (measured
		 * at every level from 1 to 22, at 64 KiB, 128 KiB and 512 KiB: the same bytes
		 * for incompressible, zero and repeating inputs). A repeating one compresses
		 * in a few microseconds; random bytes took 0.6 ms at level 1 and up to 0.2 s at
		 * level 19, at every start and reload. */
		for (size_t i = 0; i < probe && i < 256; i++)
			src[i] = (uint8_t)(i * 7);
		for (size_t k = 256; k < probe; k *= 2)
			memcpy(src + k, src, probe - k < k ? probe - k : k);
		size_t zn = 0;
		rc = floe_pq_compressor_into(c, src, probe, dst, cap, &zn);
	}
	floe_free(&buf, src);
	floe_free(&buf, dst);
	floe_pq_compressor_free(c);
	*out = ctx.peak;
	if (rc == 0)
		probe_memo[probe_memo_n++ % PROBE_MEMO] =
		    (struct probe_memo){codec, level, probe, ctx.peak};
	return rc;
}

int floe_pq_writer_context_bytes(const struct floe_pq_options *o, size_t *out)
{
	*out = 0;
	if (o->codec == FLOE_PQ_UNCOMPRESSED)
		return 0;
	bool compact = o->profile == FLOE_PQ_PROFILE_COMPACT;
	int level = o->zstd_level ? o->zstd_level
		    : compact	  ? COMPACT_ZSTD_LEVEL
				  : DEFAULT_ZSTD_LEVEL;
	size_t page = o->page_size ? o->page_size : compact ? COMPACT_PAGE_SIZE : DEFAULT_PAGE_SIZE;
	size_t big = 0, small = 0;
	int rc = probe_context(o->codec, level, PROBE_BYTES, &big);
	/* With an offload, the second context compresses only the pages under a quarter page
	 * (zstd sizes its buffers by the input), unless the calling thread also takes large
	 * pages (caller_runs: zstd level 5 and up). */
	bool both_large = o->codec == FLOE_PQ_ZSTD && level >= 5;
	if (rc == 0 && o->offload)
		rc = probe_context(o->codec, level, both_large ? PROBE_BYTES : page / 4, &small);
	*out = big + small;
	return rc;
}

uint64_t floe_pq_writer_row_need(const struct floe_pq_options *o, const size_t *v, size_t n,
				 bool fresh, size_t ctx_bytes)
{
	/* A writer that holds rows also closes its other open pages and dictionaries when the
	 * file is finished: measured at up to 1.6 MB with 512 KiB pages and full dictionaries. */
	size_t page = o->page_size ? o->page_size : DEFAULT_PAGE_SIZE;
	/* A writer with rows has its contexts, but they may not have reached their peak yet:
	 * zstd sizes its tables by the input, and a context that has compressed only small
	 * pages grows when the first large one comes. */
	uint64_t need =
	    fresh ? WRITER_FIXED + FALLBACK_SLACK + ctx_bytes : 4 * (uint64_t)page + ctx_bytes;
	for (size_t i = 0; i < n; i++) {
		uint64_t unit = (uint64_t)v[i] + PAGE_SLACK;
		/* The compression bound of zstd and LZ4 is below n + n/128 + 1 KiB. */
		uint64_t block =
		    o->codec == FLOE_PQ_UNCOMPRESSED ? unit : unit + unit / 128 + PAGE_SLACK;
		/* Pages up to twice the page size go to the offload (chunk_page.c), which leaves a
		 * value buffer of the same capacity behind; larger ones compress in place. A
		 * page holding a value of v bytes has more than v bytes. */
		bool handed = o->offload && v[i] < 2 * page;
		need += pow2_at_least(unit) * (handed ? 2 : 1) + 2 * block;
	}
	return need;
}
