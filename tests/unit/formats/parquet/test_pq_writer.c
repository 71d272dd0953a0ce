/* Parquet writer: files written into memory are checked by a minimal Thrift compact
 * reader (test-only, skips what it does not know) and a minimal page decoder. */
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
static void test_codecs(void **state)
{
	(void)state;
	int codecs[] = {FLOE_PQ_UNCOMPRESSED, FLOE_PQ_ZSTD, FLOE_PQ_LZ4_RAW};
	for (int ci = 0; ci < 3; ci++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct mem m = {0};
		struct floe_pq_kv kv[] = {{"iceberg.schema", "{\"x\":1}"}};
		struct floe_pq_options o = {.codec = (enum floe_pq_codec)codecs[ci],
					    .created_by = "floe test",
					    .kv = kv,
					    .kv_count = 1};
		struct floe_pq_writer *w = NULL;
		assert_int_equal(write_log(&a, &o, 40, &m, &w), 0);
		assert_int_equal(floe_pq_writer_file_size(w), m.n);
		assert_int_equal(floe_pq_writer_rows(w), 40);

		/* Stats for Iceberg. */
		size_t ns;
		const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
		assert_int_equal(ns, 13);
		assert_int_equal(st[0].field_id, 1);
		assert_true(st[0].has_min_max);
		assert_int_equal(st[0].min_len, 8);
		/* 1684161045000000 as 8 bytes little-endian (Iceberg's single-value form) */
		assert_memory_equal(st[0].min, "\x40\xef\xd4\x4c\xbc\xfb\x05\x00", 8);
		assert_int_equal(st[0].max[0], 0x40 + 39);
		assert_int_equal(st[4].null_count, 14); /* r % 3 == 0 for r < 40 */
		assert_int_equal(st[5].null_count, 40);
		assert_false(st[5].has_min_max);
		assert_int_equal(st[6].min_len, 4);
		assert_int_equal(st[6].min[0], 0);
		assert_int_equal(st[6].max[0], 7);
		assert_int_equal(st[2].min_len, 5);
		assert_memory_equal(st[2].min, "alpha", 5);
		assert_memory_equal(st[2].max, "beta", 4);
		/* attrs: 10 null maps (def 0), then 10 maps each of 1, 2 and 3 pairs: 70 entries */
		assert_int_equal(st[11].field_id, 13);
		assert_int_equal(st[11].value_count, 70);
		assert_int_equal(st[11].null_count, 10);
		assert_int_equal(st[12].field_id, 14);
		assert_int_equal(st[12].value_count, 70);
		assert_int_equal(st[12].null_count, 10 + 20); /* + the "b" pairs */
		assert_memory_equal(st[12].max, "zz", 2);
		size_t nrg;
		const int64_t *offs = floe_pq_writer_row_group_offsets(w, &nrg);
		assert_int_equal(nrg, 1);
		assert_int_equal(offs[0], 4);
		uint64_t comp_sum = 0;
		for (size_t i = 0; i < ns; i++)
			comp_sum += st[i].compressed_size;

		int root = footer(&m);
		assert_int_equal(ival(root, 1), 1);
		assert_int_equal(ival(root, 3), 40);
		int schema = fld(root, 2);
		assert_int_equal(nodes[schema].nchild, 1 + 11 + 4);
		int s0 = elem(schema, 0);
		assert_true(str_is(fld(s0, 4), "table"));
		assert_int_equal(ival(s0, 5), 12);
		int s1 = elem(schema, 1);
		assert_true(str_is(fld(s1, 4), "ts"));
		assert_int_equal(ival(s1, 1), 2);  /* INT64 */
		assert_int_equal(ival(s1, 3), 0);  /* REQUIRED */
		assert_int_equal(ival(s1, 6), 10); /* TIMESTAMP_MICROS */
		assert_int_equal(ival(s1, 9), 1);
		int lt = fld(fld(s1, 10), 8);
		assert_true(lt >= 0);
		assert_int_equal(ival(lt, 1), 1);     /* isAdjustedToUTC */
		assert_true(fld(fld(lt, 2), 2) >= 0); /* MICROS */
		int s12 = elem(schema, 12);
		assert_true(str_is(fld(s12, 4), "attrs"));
		assert_int_equal(ival(s12, 6), 1);
		assert_int_equal(ival(s12, 5), 1);
		assert_int_equal(ival(s12, 9), 12);
		assert_true(fld(fld(s12, 10), 2) >= 0);
		int kvg = elem(schema, 13);
		assert_int_equal(ival(kvg, 3), 2);
		assert_int_equal(ival(kvg, 5), 2);
		assert_int_equal(ival(elem(schema, 14), 9), 13);
		assert_int_equal(ival(elem(schema, 14), 3), 0);
		assert_int_equal(ival(elem(schema, 15), 9), 14);
		assert_int_equal(ival(elem(schema, 15), 3), 1);
		assert_true(str_is(fld(root, 6), "floe test"));
		int kvl = fld(root, 5);
		assert_true(str_is(fld(elem(kvl, 0), 1), "iceberg.schema"));
		int co = fld(root, 7);
		assert_int_equal(nodes[co].nchild, 13);
		assert_true(fld(elem(co, 12), 1) >= 0);

		int rgs = fld(root, 4);
		assert_int_equal(nodes[rgs].nchild, 1);
		int rg = elem(rgs, 0);
		assert_int_equal(ival(rg, 3), 40);
		assert_int_equal(ival(rg, 5), 4);
		assert_int_equal(nodes[fld(rg, 7)].type, 4); /* ordinal is an i16 */
		assert_int_equal(ival(rg, 6), (int64_t)comp_sum);
		int cols = fld(rg, 1);
		assert_int_equal(nodes[cols].nchild, 13);
		/* Chunks are contiguous from offset 4 and the footer follows the last. */
		int64_t at = 4, unc = 0;
		struct {
			int64_t start, data, comp;
		} ch[13];
		for (int j = 0; j < 13; j++) {
			int cc = elem(cols, j);
			assert_int_equal(ival(cc, 2), 0);
			int md = fld(cc, 3);
			assert_int_equal(ival(md, 4), codecs[ci]);
			int64_t d = fld(md, 11) >= 0 ? ival(md, 11) : ival(md, 9);
			assert_int_equal(d, at);
			ch[j].start = d;
			ch[j].data = ival(md, 9);
			ch[j].comp = ival(md, 7);
			at += ival(md, 7);
			unc += ival(md, 6);
			int stats = fld(md, 12);
			assert_true(stats >= 0);
			assert_true(fld(stats, 3) >= 0); /* null_count always */
			if (ival(md, 1) == 6) {
				assert_true(fld(stats, 1) <
					    0); /* no deprecated min/max for strings */
				assert_true(fld(stats, 2) < 0);
			}
		}
		assert_int_equal(ival(rg, 2), unc);
		const uint8_t *l = m.p + m.n - 8;
		size_t flen =
		    (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
		/* The page indexes follow the chunks, ColumnIndexes first, and then the footer. */
		int64_t end = at;
		for (int j = 0; j < 13; j++) {
			int cc = elem(cols, j);
			assert_true(fld(cc, 4) >= 0 && fld(cc, 6) >= 0);
			if (j == 0)
				assert_int_equal(ival(cc, 6), at);
			int64_t e1 = ival(cc, 4) + ival(cc, 5), e2 = ival(cc, 6) + ival(cc, 7);
			end = e1 > end ? e1 : end;
			end = e2 > end ? e2 : end;
		}
		assert_int_equal(end, (int64_t)(m.n - 8 - flen));
		/* Every page of every chunk has a good CRC and decompresses. */
		for (int j = 0; j < 13; j++) {
			size_t off = (size_t)ch[j].start;
			while ((int64_t)off < ch[j].start + ch[j].comp) {
				uint8_t *body;
				size_t blen, next;
				read_page(&m, off, codecs[ci], &body, &blen, &next);
				free(body);
				off = next;
			}
			assert_int_equal((int64_t)off, ch[j].start + ch[j].comp);
		}
		floe_pq_writer_free(w);
		assert_int_equal(a.used, 0);
		free(m.p);
	}
}

static void test_map_levels(void **state)
{
	(void)state;
	for (int optional = 1; optional >= 0; optional--) {
		struct floe_pq_column cols[] = {
		    {"attrs", 12, FLOE_PQ_MAP_STRING, optional, 13, 14}};
		struct floe_pq_options o = {.dictionary_cap =
						1}; /* too small: PLAIN from the start */
		struct mem m = {0};
		struct floe_pq_writer *w = NULL;
		assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
		const char *k[] = {"a", "b", "c"};
		size_t kl[] = {1, 1, 1};
		const char *v[] = {"x", NULL, "w"};
		size_t vl[] = {1, 0, 1};
		struct floe_pq_value rows[4] = {
		    {.is_null = true},
		    {.n = 0},
		    {.n = 3, .keys = k, .key_lens = kl, .vals = v, .val_lens = vl},
		    {.n = 1, .keys = k + 2, .key_lens = kl, .vals = NULL},
		};
		for (int r = optional ? 0 : 1; r < 4; r++)
			assert_int_equal(floe_pq_writer_add_row(w, &rows[r]), 0);
		if (!optional)
			assert_int_equal(floe_pq_writer_add_row(w, &rows[0]), FLOE_EINVAL);
		assert_int_equal(floe_pq_writer_finish(w), 0);
		uint32_t rep[8], def[8];
		size_t enc;
		const uint8_t *vals;
		if (optional) {
			page_levels(&m, 0, 1, 2, rep, def, 6, &enc, &vals);
			uint32_t wr[] = {0, 0, 0, 1, 1, 0}, wd[] = {0, 1, 2, 2, 2, 2};
			assert_memory_equal(rep, wr, sizeof(wr));
			assert_memory_equal(def, wd, sizeof(wd));
			assert_int_equal(enc, 0);
			assert_memory_equal(vals, "\1\0\0\0a\1\0\0\0b\1\0\0\0c\1\0\0\0c", 20);
			page_levels(&m, 1, 1, 3, rep, def, 6, &enc, &vals);
			uint32_t vd[] = {0, 1, 3, 2, 3, 2};
			assert_memory_equal(rep, wr, sizeof(wr));
			assert_memory_equal(def, vd, sizeof(vd));
			assert_memory_equal(vals, "\1\0\0\0x\1\0\0\0w", 10);
		} else {
			page_levels(&m, 0, 1, 1, rep, def, 5, &enc, &vals);
			uint32_t wr[] = {0, 0, 1, 1, 0}, wd[] = {0, 1, 1, 1, 1};
			assert_memory_equal(rep, wr, sizeof(wr));
			assert_memory_equal(def, wd, sizeof(wd));
			page_levels(&m, 1, 1, 2, rep, def, 5, &enc, &vals);
			uint32_t vd[] = {0, 2, 1, 2, 1};
			assert_memory_equal(def, vd, sizeof(vd));
			/* repetition type of the map group */
			int root = footer(&m);
			assert_int_equal(ival(elem(fld(root, 2), 1), 3), 0);
		}
		size_t ns;
		const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
		assert_int_equal(ns, 2);
		assert_int_equal(st[0].null_count, optional ? 2 : 1);
		floe_pq_writer_free(w);
		free(m.p);
	}
}

/* ---- dictionary fallback ---- */

/* A chunk of a small file (fewer values than the dictionary's probe takes) whose values
 * are mostly distinct is written PLAIN, with no dictionary page; one whose values repeat
 * keeps its dictionary. */
static void test_dictionary_small_chunks(void **state)
{
	(void)state;
	for (int distinct = 0; distinct < 2; distinct++) {
		struct floe_pq_column cols[] = {{"i", 1, FLOE_PQ_INT64, false, 0, 0}};
		struct floe_pq_options o = {0};
		struct mem m = {0};
		struct floe_pq_writer *w = NULL;
		assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
		for (int r = 0; r < 2000; r++) {
			struct floe_pq_value v = {.i = distinct ? 1000 + 137 * r : r % 10};
			assert_int_equal(floe_pq_writer_add_row(w, &v), 0);
		}
		assert_int_equal(floe_pq_writer_finish(w), 0);
		floe_pq_writer_free(w);
		int md = fld(elem(fld(elem(fld(footer(&m), 4), 0), 1), 0), 3);
		int es = fld(md, 13);
		assert_int_equal(nodes[es].nchild, distinct ? 1 : 2);
		if (distinct) {
			assert_int_equal(fld(md, 11), -1);	   /* no dictionary page */
			assert_int_equal(ival(elem(es, 0), 1), 0); /* PLAIN data pages */
			assert_int_equal(ival(elem(es, 0), 2), 0);
		} else {
			assert_int_equal(ival(elem(es, 0), 1), 2); /* DICTIONARY_PAGE */
			assert_int_equal(ival(elem(es, 1), 2), 8); /* RLE_DICTIONARY data pages */
		}
		free(m.p);
	}
}

/* A chunk whose dictionary filled up had many distinct values: the next chunks start
 * PLAIN rather than filling a dictionary again (hashing and copying their first values
 * for nothing), until the fifteen skipped ones are past and a chunk tries again. */
static void test_dictionary_full_skips_next_chunks(void **state)
{
	(void)state;
	struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, false, 0, 0}};
	struct floe_pq_options o = {.dictionary_cap = 200, .row_group_size = 1500, .page_size = 8};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
	char buf[32];
	/* Every other value repeats, so the probe (mostly distinct values) never decides:
	 * the dictionary takes the first pages, then fills up. */
	for (int r = 0; r < 3000; r++) {
		int n = snprintf(buf, sizeof(buf), "value-%d", r % 2 ? 100000 + r : 7);
		struct floe_pq_value v = {.s = buf, .len = (size_t)n};
		assert_int_equal(floe_pq_writer_add_row(w, &v), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);
	int rgs = fld(footer(&m), 4);
	assert_true(nodes[rgs].nchild >= 18);
	for (int g = 0; g < 17; g++) {
		int md = fld(elem(fld(elem(rgs, g), 1), 0), 3);
		bool dict = fld(md, 11) != -1;
		if (dict != (g == 0 || g == 16))
			fail_msg("row group %d: %s dictionary page", g, dict ? "a" : "no");
	}
	free(m.p);
}

static void test_dictionary_fallback(void **state)
{
	(void)state;
	struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, false, 0, 0}};
	struct floe_pq_options o = {.dictionary_cap = 200, .page_size = 64};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 1, &o, mem_sink, &m, &w), 0);
	char buf[32];
	/* 100 rows over 4 distinct values (dictionary pages), then 100 distinct values. */
	for (int r = 0; r < 200; r++) {
		int n = snprintf(buf, sizeof(buf), "value-%d", r < 100 ? r % 4 : r);
		struct floe_pq_value v = {.s = buf, .len = (size_t)n};
		assert_int_equal(floe_pq_writer_add_row(w, &v), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	int root = footer(&m);
	int md = fld(elem(fld(elem(fld(root, 4), 0), 1), 0), 3);
	int encs = fld(md, 2);
	assert_int_equal(nodes[encs].nchild, 3);
	assert_int_equal(nodes[elem(encs, 0)].i, 0);
	assert_int_equal(nodes[elem(encs, 1)].i, 3);
	assert_int_equal(nodes[elem(encs, 2)].i, 8);
	assert_int_equal(ival(md, 11), 4); /* dictionary page first */
	assert_true(ival(md, 9) > 4);
	int es = fld(md, 13);
	assert_int_equal(nodes[es].nchild, 3);
	assert_int_equal(ival(elem(es, 0), 1), 2); /* DICTIONARY_PAGE */
	assert_int_equal(ival(elem(es, 0), 3), 1);
	assert_int_equal(ival(elem(es, 1), 2), 8); /* RLE_DICTIONARY data pages */
	assert_true(ival(elem(es, 1), 3) >= 1);
	assert_int_equal(ival(elem(es, 2), 2), 0); /* then PLAIN data pages */
	assert_true(ival(elem(es, 2), 3) >= 1);
	/* Walk the pages: dictionary, RLE_DICTIONARY..., then only PLAIN. */
	size_t off = 4, end = 4 + (size_t)ival(md, 7);
	int n_dict = 0, n_plain = 0, values = 0;
	bool seen_plain = false;
	while (off < end) {
		uint8_t *body;
		size_t blen, next;
		int h = read_page(&m, off, 0, &body, &blen, &next);
		if (ival(h, 1) == 2) {
			assert_int_equal(off, 4);
			/* The 4 repeated values, then those of the page that overflowed it. */
			assert_true(ival(fld(h, 7), 1) >= 4);
			assert_memory_equal(body, "\7\0\0\0value-0", 11);
		} else {
			int e = (int)ival(fld(h, 5), 2);
			values += (int)ival(fld(h, 5), 1);
			if (e == 8) {
				assert_false(seen_plain);
				n_dict++;
			} else {
				seen_plain = true;
				n_plain++;
			}
		}
		free(body);
		off = next;
	}
	assert_int_equal(values, 200);
	assert_true(n_dict >= 1 && n_plain >= 1);
	floe_pq_writer_free(w);
	free(m.p);
}

/* ---- UTF-8 ---- */

static void test_utf8(void **state)
{
	(void)state;
	struct {
		const char *in;
		size_t n;
		const char *out;
		int count;
	} cases[] = {
	    {"plain ascii text", 16, "plain ascii text", 0},
	    {"caf\xc3\xa9", 5, "caf\xc3\xa9", 0},
	    {"a\xff"
	     "b",
	     3,
	     "a\xef\xbf\xbd"
	     "b",
	     1},
	    {"\xc0\xaf", 2, "\xef\xbf\xbd\xef\xbf\xbd", 2},		    /* overlong '/' */
	    {"\xe0\x80\xaf", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3}, /* overlong, 3 bytes */
	    {"\xed\xa0\x80", 3, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd", 3}, /* surrogate */
	    {"\xf4\x90\x80\x80", 4, "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd",
	     4},				/* > U+10FFFF */
	    {"\xe2\x82", 2, "\xef\xbf\xbd", 1}, /* truncated */
	    {"x\xe2\x82y", 4, "x\xef\xbf\xbdy", 1},
	    {"\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80", 0}, /* U+1F600 */
	    {"\xf4\x8f\xbf\xbf", 4, "\xf4\x8f\xbf\xbf", 0}, /* U+10FFFF */
	    {"0123456789abcdef\x80", 17, "0123456789abcdef\xef\xbf\xbd", 1},
	    /* Around the 32- and 8-byte ASCII strides. */
	    {"0123456789abcdef0123456789abcde\x80", 32,
	     "0123456789abcdef0123456789abcde\xef\xbf\xbd", 1},
	    {"0123456789abcdef0123456789abcdef\x80", 33,
	     "0123456789abcdef0123456789abcdef\xef\xbf\xbd", 1},
	    {"0123456789abcdef0123456789abcdef0123456\xff", 40,
	     "0123456789abcdef0123456789abcdef0123456\xef\xbf\xbd", 1},
	    /* The last 8 bytes checked at once, overlapping checked ones. */
	    {"0123456789", 10, "0123456789", 0},
	    {"0123456789\xff", 11, "0123456789\xef\xbf\xbd", 1},
	    {"0123456789ab\xc3\xa9", 14, "0123456789ab\xc3\xa9", 0},
	    {"01234567\xc3", 9, "01234567\xef\xbf\xbd", 1},
	    {"\xc3\xa9"
	     "0123456789",
	     12,
	     "\xc3\xa9"
	     "0123456789",
	     0},
	    {"0123456789abcdef0123456789abcdef\xc3\xa9"
	     "0123456789abcdef0123456789abcde\xc3",
	     66,
	     "0123456789abcdef0123456789abcdef\xc3\xa9"
	     "0123456789abcdef0123456789abcde\xef\xbf\xbd",
	     1},
	};
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1024);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const uint8_t *out;
		size_t n;
		uint64_t count = 0;
		assert_int_equal(floe_utf8_repair((const uint8_t *)cases[i].in, cases[i].n, &b,
						  &out, &n, &count),
				 0);
		assert_int_equal(count, cases[i].count);
		assert_int_equal(n, strlen(cases[i].out));
		assert_memory_equal(out, cases[i].out, n);
		if (!cases[i].count)
			assert_ptr_equal(out, cases[i].in); /* no copy when valid */
	}
	floe_buf_fini(&b);

	/* Through the writer: strings and map keys and values are all repaired. */
	struct floe_pq_column cols[] = {{"s", 1, FLOE_PQ_STRING, false, 0, 0},
					{"m", 2, FLOE_PQ_MAP_STRING, false, 3, 4}};
	struct floe_pq_options o = {0};
	struct mem m = {0};
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, cols, 2, &o, mem_sink, &m, &w), 0);
	const char *k[] = {"k\xff", "ok"};
	size_t kl[] = {2, 2};
	const char *v[] = {"\xc0", "\xed\xa0\x80"};
	size_t vl[] = {1, 3};
	struct floe_pq_value row[2] = {
	    {.s = "\xfe\xfe", .len = 2},
	    {.n = 2, .keys = k, .key_lens = kl, .vals = v, .val_lens = vl}};
	assert_int_equal(floe_pq_writer_add_row(w, row), 0);
	assert_int_equal(floe_pq_writer_replaced(w), 2 + 1 + 1 + 3);
	/* Again: the repairs are in the dictionaries now, but an ill-formed value never
	 * equals an entry, so it is checked and repaired again (and the repair found). */
	assert_int_equal(floe_pq_writer_add_row(w, row), 0);
	assert_int_equal(floe_pq_writer_replaced(w), 2 * (2 + 1 + 1 + 3));
	assert_int_equal(floe_pq_writer_finish(w), 0);
	size_t ns;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
	assert_int_equal(st[0].min_len, 6);
	assert_memory_equal(st[0].min, "\xef\xbf\xbd\xef\xbf\xbd", 6);
	floe_pq_writer_free(w);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_codecs),
	    cmocka_unit_test(test_map_levels),
	    cmocka_unit_test(test_dictionary_fallback),
	    cmocka_unit_test(test_dictionary_full_skips_next_chunks),
	    cmocka_unit_test(test_dictionary_small_chunks),
	    cmocka_unit_test(test_utf8),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
