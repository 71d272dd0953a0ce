/* Parquet writer: statistics bounds, row groups, bloom filters, errors, allocation faults,
 * streaming and a golden footer, checked with the Thrift reader of pq_walk.h. */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lz4.h>
#include <zstd.h>

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/crc.h"
#include "formats/base/error.h"
#include "formats/base/utf8.h"
#include "formats/parquet/bloom.h"
#include "formats/parquet/bound.h"
#include "formats/parquet/writer.h"

#include "mem_sink.h"
#include "pq_walk.h"
/* ---- bounds ---- */

static void test_bounds(void **state)
{
	(void)state;
	struct floe_pq_bound lo, hi;
	memset(&lo, 0, sizeof(lo));
	memset(&hi, 0, sizeof(hi));
	uint8_t big[100];
	memset(big, 'b', sizeof(big));
	floe_pq_bound_lower(&lo, big, 100);
	floe_pq_bound_upper(&hi, big, 100);
	assert_int_equal(lo.len, 64);
	assert_false(lo.exact);
	assert_int_equal(hi.len, 64);
	assert_false(hi.exact);
	assert_int_equal(hi.v[63], 'c'); /* prefix with its last character incremented */
	assert_memory_equal(hi.v, big, 63);
	floe_pq_bound_lower(&lo, (const uint8_t *)"a", 1);
	floe_pq_bound_upper(&hi, (const uint8_t *)"bc", 2);
	assert_int_equal(lo.len, 1);
	assert_true(lo.exact);
	assert_int_equal(hi.len, 2); /* "bc" > "bbb...c" */
	assert_true(hi.exact);
	floe_pq_bound_upper(&hi, big, 100); /* below "bc": no change */
	assert_int_equal(hi.len, 2);
	floe_pq_bound_upper(&hi, (const uint8_t *)"c", 1);
	assert_int_equal(hi.len, 1);
	assert_true(hi.exact);

	/* A cut never splits a character: 3-byte characters, 21 fit in 64 bytes. */
	uint8_t euro[99];
	for (int i = 0; i < 33; i++)
		memcpy(euro + 3 * i, "\xe2\x82\xac", 3);
	memset(&lo, 0, sizeof(lo));
	memset(&hi, 0, sizeof(hi));
	floe_pq_bound_lower(&lo, euro, 99);
	floe_pq_bound_upper(&hi, euro, 99);
	assert_int_equal(lo.len, 63);
	assert_int_equal(hi.len, 63);
	assert_memory_equal(hi.v + 60, "\xe2\x82\xad", 3); /* U+20AC + 1 */

	/* U+10FFFF cannot be incremented: without any other character, no upper bound. */
	uint8_t top[80];
	for (int i = 0; i < 20; i++)
		memcpy(top + 4 * i, "\xf4\x8f\xbf\xbf", 4);
	memset(&hi, 0, sizeof(hi));
	floe_pq_bound_upper(&hi, top, 80);
	assert_true(hi.unbounded);
	/* Surrogates are skipped: U+D7FF + 1 = U+E000. */
	uint8_t sur[66];
	memset(sur, 'a', sizeof(sur));
	memcpy(sur + 61, "\xed\x9f\xbf", 3);
	memset(&hi, 0, sizeof(hi));
	floe_pq_bound_upper(&hi, sur, 66);
	assert_int_equal(hi.len, 64);
	assert_memory_equal(hi.v + 61, "\xee\x80\x80", 3);

	/* Chunk statistics of a long value: inexact flags in the footer. */
	struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, false, 0, 0}};
	struct floe_pq_options o = {0};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
	struct floe_pq_value v = {.s = (const char *)big, .len = 100};
	assert_int_equal(floe_pq_writer_add_row(w, &v), 0);
	assert_int_equal(floe_pq_writer_finish(w), 0);
	int root = footer(&m);
	int stats = fld(fld(elem(fld(elem(fld(root, 4), 0), 1), 0), 3), 12);
	assert_int_equal(nodes[fld(stats, 6)].n, 64);
	assert_int_equal(nodes[fld(stats, 5)].n, 64);
	assert_int_equal(ival(stats, 7), 0);
	assert_int_equal(ival(stats, 8), 0);
	size_t ns;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
	assert_int_equal(st[0].min_len, 64);
	assert_int_equal(st[0].max_len, 64);
	assert_int_equal(st[0].max[63], 'c');
	floe_pq_writer_free(w);
	free(m.p);
}

/* ---- row groups, errors, faults ---- */

static void test_two_row_groups(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct mem m = {0};
	static const struct floe_pq_bloom_column bloom[] = {{3, 0}};
	struct floe_pq_options o = {
	    .codec = FLOE_PQ_ZSTD, .row_group_size = 2000, .bloom = bloom, .bloom_count = 1};
	struct floe_pq_writer *w = NULL;
	/* Find a row count that makes exactly two row groups. */
	int rows = 0;
	size_t nrg = 0;
	const int64_t *offs = NULL;
	for (rows = 10; rows < 400; rows += 5) {
		m.n = 0;
		assert_int_equal(write_log(&a, &o, rows, &m, &w), 0);
		offs = floe_pq_writer_row_group_offsets(w, &nrg);
		if (nrg == 2)
			break;
		floe_pq_writer_free(w);
	}
	assert_int_equal(nrg, 2);
	assert_int_equal(offs[0], 4);
	int root = footer(&m);
	int rgs = fld(root, 4);
	assert_int_equal(nodes[rgs].nchild, 2);
	assert_int_equal(ival(elem(rgs, 1), 5), offs[1]);
	/* Row group 0's bloom filters and page index lie between its chunks and row group
	 * 1: bloom filters, column indexes, offset indexes, back to back. */
	int c0 = fld(elem(rgs, 0), 1);
	int64_t at = ival(elem(rgs, 0), 5) + ival(elem(rgs, 0), 6);
	int blooms = 0;
	for (int c = nodes[c0].child; c >= 0; c = nodes[c].next) {
		int md = fld(c, 3);
		if (fld(md, 14) < 0)
			continue; /* no bloom filter for this column */
		assert_int_equal(ival(md, 14), at);
		blooms++;
		at += ival(md, 15);
	}
	for (int k = 6; k >= 4; k -= 2) { /* column_index_offset, offset_index_offset */
		for (int c = nodes[c0].child; c >= 0; c = nodes[c].next) {
			if (fld(c, k) < 0)
				continue; /* no column index for this chunk */
			assert_int_equal(ival(c, k), at);
			at += ival(c, k + 1);
		}
	}
	assert_int_equal(at, offs[1]);
	assert_int_equal(blooms, 1);
	assert_int_equal(ival(elem(rgs, 1), 7), 1);
	assert_int_equal(ival(elem(rgs, 0), 3) + ival(elem(rgs, 1), 3), rows);
	assert_int_equal(ival(root, 3), rows);
	size_t ns;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
	assert_int_equal(st[0].value_count, (uint64_t)rows);
	floe_pq_writer_free(w);
	assert_int_equal(a.used, 0);
	free(m.p);
}

/* Bloom filters follow the chunk's distinct values, not the configured estimate: host
 * (two values, the dictionary counts them) and message (one value per row: the chunk
 * goes PLAIN, the filter is made before its count is known) at 1 to 20,000 rows. Each
 * filter is at most twice the size floe_pq_bloom_size gives for the real count, holds
 * every value, and keeps about 1 % false positives. A one-row file stays under 4 KiB. */
static void test_bloom_follows_distinct_count(void **state)
{
	(void)state;
	static const struct floe_pq_bloom_column bloom[] = {{3, 0}, {11, 0}};
	static const int counts[] = {1, 10, 100, 1000, 20000};
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		int rows = counts[k];
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct mem m = {0};
		struct floe_pq_options o = {
		    .codec = FLOE_PQ_ZSTD, .bloom = bloom, .bloom_count = 2};
		assert_int_equal(write_log(&a, &o, rows, &m, NULL), 0);
		if (rows == 1)
			assert_true(m.n < 4096);
		int root = footer(&m);
		int c0 = fld(elem(fld(root, 4), 0), 1);
		int64_t off[2] = {-1, -1};
		for (int c = nodes[c0].child; c >= 0; c = nodes[c].next) {
			int md = fld(c, 3);
			if (fld(md, 14) >= 0)
				off[off[0] < 0 ? 0 : 1] = ival(md, 14);
		}
		assert_true(off[0] > 0 && off[1] > 0);
		for (int f = 0; f < 2; f++) {
			size_t used;
			int h = parse(m.p + off[f], m.n - (size_t)off[f], &used);
			struct floe_pq_bloom bf = {.bits = m.p + off[f] + used,
						   .nbytes = (size_t)ival(h, 1)};
			uint64_t ndv = f == 0 ? (rows < 2 ? 1 : 2) : (uint64_t)rows;
			size_t want = floe_pq_bloom_size(ndv, (size_t)1 << 20);
			if (bf.nbytes > 2 * want)
				fail_msg("%d rows: filter %d is %zu bytes for %" PRIu64
					 " values (%zu expected)",
					 rows, f, bf.nbytes, ndv, want);
			int fp = 0;
			for (int r = 0; r < rows; r++) {
				char buf[64];
				struct floe_pq_value v[NLOG];
				log_row(r, v, buf);
				const struct floe_pq_value *x = &v[f == 0 ? 2 : 10];
				assert_true(
				    floe_pq_bloom_check(&bf, floe_pq_bloom_hash(x->s, x->len)));
			}
			for (int r = 0; r < 10000; r++) {
				char buf[32];
				int n = snprintf(buf, sizeof(buf), "absent %d", r);
				fp += floe_pq_bloom_check(&bf, floe_pq_bloom_hash(buf, (size_t)n));
			}
			if (fp > 250)
				fail_msg("%d rows: filter %d: %d false positives in 10000", rows, f,
					 fp);
		}
		assert_int_equal(a.used, 0);
		free(m.p);
	}
}

static void test_errors(void **state)
{
	(void)state;
	struct floe_pq_options o = {0};
	struct mem m = {0};
	/* A refused writer leaves *out untouched. */
	struct floe_pq_writer *w = (struct floe_pq_writer *)&m;
	assert_int_equal(floe_pq_writer_new(NULL, log_cols, 0, &o, mem_sink, &m, &w), FLOE_EINVAL);
	struct floe_pq_options bad = {.codec = (enum floe_pq_codec)1};
	assert_int_equal(floe_pq_writer_new(NULL, log_cols, NLOG, &bad, mem_sink, &m, &w),
			 FLOE_EUNSUPPORTED);
	assert_ptr_equal(w, &m);
	floe_pq_writer_free(NULL);

	/* A null in a required column is refused and leaves the writer usable. */
	assert_int_equal(floe_pq_writer_new(NULL, log_cols, NLOG, &o, mem_sink, &m, &w), 0);
	struct floe_pq_value v[NLOG];
	char buf[64];
	log_row(1, v, buf);
	v[0].is_null = true;
	assert_int_equal(floe_pq_writer_add_row(w, v), FLOE_EINVAL);
	log_row(1, v, buf);
	v[6].i = (int64_t)1 << 40; /* out of INT32 range */
	assert_int_equal(floe_pq_writer_add_row(w, v), FLOE_EINVAL);
	log_row(1, v, buf);
	assert_int_equal(floe_pq_writer_add_row(w, v), 0);
	assert_int_equal(floe_pq_writer_finish(w), 0);
	assert_int_equal(floe_pq_writer_add_row(w, v), FLOE_EINVAL);
	int root = footer(&m);
	assert_int_equal(ival(root, 3), 1);
	floe_pq_writer_free(w);
	free(m.p);

	/* An empty file is valid: magic, footer, no row groups. */
	m = (struct mem){0};
	assert_int_equal(floe_pq_writer_new(NULL, log_cols, NLOG, &o, mem_sink, &m, &w), 0);
	assert_int_equal(floe_pq_writer_finish(w), 0);
	root = footer(&m);
	assert_int_equal(ival(root, 3), 0);
	assert_int_equal(nodes[fld(root, 4)].nchild, 0);
	floe_pq_writer_free(w);
	free(m.p);

	/* A sink error aborts and sticks. */
	for (int call = 1; call <= 3; call++) {
		m = (struct mem){.fail_at_call = call};
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		assert_int_equal(write_log(&a, &o, 30, &m, NULL), -5);
		assert_int_equal(a.used, 0);
		free(m.p);
	}
}

static void test_alloc_faults(void **state)
{
	(void)state;
	int codecs[] = {FLOE_PQ_UNCOMPRESSED, FLOE_PQ_ZSTD, FLOE_PQ_LZ4_RAW};
	/* host's filter is sized from its dictionary, message's goes live at the fallback. */
	static const struct floe_pq_bloom_column bloom[] = {{3, 0}, {11, 50}};
	for (int ci = 0; ci < 6; ci++) {
		struct floe_pq_options o = {.codec = (enum floe_pq_codec)codecs[ci % 3],
					    .row_group_size = 3000,
					    .page_size = 300,
					    .dictionary_cap = 100};
		if (ci >= 3) {
			o.profile = FLOE_PQ_PROFILE_COMPACT;
			o.bloom = bloom;
			o.bloom_count = 2;
			o.memory_budget = 1000;
		}
		int k;
		for (k = 0; k < 5000; k++) {
			struct floe_alloc a;
			floe_alloc_init(&a, 0);
			a.fail_after = k;
			struct mem m = {0};
			int rc = write_log(&a, &o, 60, &m, NULL);
			free(m.p);
			assert_int_equal(a.used, 0);
			if (rc == 0)
				break;
			assert_int_equal(rc, FLOE_ENOMEM);
		}
		assert_true(k > 10 && k < 5000);
	}
}

/* The leaf that holds the most (message) streams its pages: its chunk comes first in
 * each row group, the other chunks follow it, and together they tile the row group; the
 * memory budget closes row groups; every page still has a good CRC and decompresses. */
static void test_streaming(void **state)
{
	(void)state;
	for (int prof = 0; prof < 2; prof++) {
		struct floe_pq_options o = {.codec = prof ? FLOE_PQ_UNCOMPRESSED : FLOE_PQ_ZSTD,
					    .page_size = 1024,
					    .memory_budget = 2048,
					    .profile = (enum floe_pq_profile)prof};
		struct mem m = {0};
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_pq_writer *w = NULL;
		assert_int_equal(floe_pq_writer_new(&a, log_cols, NLOG, &o, mem_sink, &m, &w), 0);
		char text[300];
		uint64_t x = 88172645463325252ull;
		for (int r = 0; r < 1500; r++) {
			struct floe_pq_value v[NLOG];
			char buf[64];
			log_row(r, v, buf);
			/* Long, distinct messages: the dictionary gives up, pages fill quickly. */
			for (int k = 0; k < 290; k++) {
				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				text[k] = (char)('a' + x % 26);
			}
			v[10].s = text;
			v[10].len = 290;
			assert_int_equal(floe_pq_writer_add_row(w, v), 0);
		}
		assert_int_equal(floe_pq_writer_finish(w), 0);
		size_t nrg;
		const int64_t *rgo = floe_pq_writer_row_group_offsets(w, &nrg);
		assert_true(nrg > 1);
		int64_t rg0 = rgo[0];
		floe_pq_writer_free(w);
		assert_int_equal(a.used, 0);
		int root = footer(&m);
		int rgs = fld(root, 4);
		assert_int_equal(nodes[rgs].nchild, (int)nrg);
		assert_int_equal(rg0, 4);
		/* Collect every chunk's range first: reading pages reuses the node pool. */
		static struct {
			int64_t start, len;
		} ch[64][13];
		int64_t rgstart[64], rgcomp[64];
		assert_true(nrg <= 64);
		for (size_t g = 0; g < nrg; g++) {
			int rg = elem(rgs, (int)g);
			rgstart[g] = ival(rg, 5);
			rgcomp[g] = ival(rg, 6);
			int cols = fld(rg, 1);
			for (int j = 0; j < 13; j++) {
				int md = fld(elem(cols, j), 3);
				ch[g][j].start = fld(md, 11) >= 0 ? ival(md, 11) : ival(md, 9);
				ch[g][j].len = ival(md, 7);
			}
		}
		/* A row group either streamed message (leaf 10, first, the others after it in
		 * schema order) or, when closed before any leaf held STREAM_MIN, is in schema
		 * order; both tile the row group. */
		int streamed = 0;
		for (size_t g = 0; g < nrg; g++) {
			bool first = ch[g][10].start == rgstart[g];
			streamed += first;
			int64_t at = rgstart[g] + (first ? ch[g][10].len : 0);
			for (int j = 0; j < 13; j++) {
				if (j == 10 && first)
					continue;
				assert_int_equal(ch[g][j].start, at);
				at += ch[g][j].len;
			}
			assert_int_equal(at - rgstart[g], rgcomp[g]);
			for (int j = 0; j < 13; j++) {
				size_t off = (size_t)ch[g][j].start;
				while ((int64_t)off < ch[g][j].start + ch[g][j].len) {
					uint8_t *body;
					size_t blen, next;
					if (prof == 0) {
						read_page(&m, off, FLOE_PQ_ZSTD, &body, &blen,
							  &next);
						free(body);
					} else {
						/* v2 pages: levels stored plainly; check framing
						 * only. */
						size_t hlen;
						int h = parse(m.p + off, m.n - off, &hlen);
						next = off + hlen + (size_t)ival(h, 3);
						assert_int_equal((uint32_t)ival(h, 4),
								 floe_crc32(0, m.p + off + hlen,
									    (size_t)ival(h, 3)));
					}
					off = next;
				}
				assert_int_equal((int64_t)off, ch[g][j].start + ch[g][j].len);
			}
		}
		assert_true(streamed > 0);
		free(m.p);
	}
}

/* Golden footers: the FileMetaData floe writes for 5 rows of the log table, in the
 * default profile and in the compact profile (a 16-byte dictionary cap, so that most
 * columns fall back to delta encodings) with a bloom filter on host, both uncompressed.
 * The bytes were checked by reading the files with DuckDB (parquet_metadata,
 * parquet_bloom_probe and the rows) before being pasted here; run with
 * FLOE_GOLDEN_DUMP=dir to write the files and print the bytes again. */
#include "golden_footer.inc"

static void test_golden_footer(void **state)
{
	(void)state;
	static const struct floe_pq_bloom_column bloom[] = {{3, 10}};
	for (int g = 0; g < 2; g++) {
		struct floe_pq_options o = {.codec = FLOE_PQ_UNCOMPRESSED,
					    .created_by = "floe golden"};
		if (g) {
			o.profile = FLOE_PQ_PROFILE_COMPACT;
			o.bloom = bloom;
			o.bloom_count = 1;
			o.dictionary_cap = 16; /* most columns fall back to the delta encodings */
		}
		struct mem m = {0};
		assert_int_equal(write_log(NULL, &o, 5, &m, NULL), 0);
		const uint8_t *l = m.p + m.n - 8;
		size_t flen =
		    (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
		const uint8_t *f = m.p + m.n - 8 - flen;
		const char *dump = getenv("FLOE_GOLDEN_DUMP");
		if (dump) {
			char path[512];
			snprintf(path, sizeof(path), "%s/golden%d.parquet", dump, g);
			FILE *fp = fopen(path, "wb");
			assert_non_null(fp);
			fwrite(m.p, 1, m.n, fp);
			fclose(fp);
			printf("static const uint8_t golden%d[] = {", g);
			for (size_t i = 0; i < flen; i++)
				printf("%s0x%02x,", i % 12 ? " " : "\n    ", f[i]);
			printf("\n};\n");
		}
		const uint8_t *want = g ? golden1 : golden0;
		size_t wlen = g ? sizeof(golden1) : sizeof(golden0);
		assert_int_equal(flen, wlen);
		assert_memory_equal(f, want, wlen);
		free(m.p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_bounds),
	    cmocka_unit_test(test_two_row_groups),
	    cmocka_unit_test(test_bloom_follows_distinct_count),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_alloc_faults),
	    cmocka_unit_test(test_golden_footer),
	    cmocka_unit_test(test_streaming),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
