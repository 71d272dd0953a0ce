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

/* ---- a tiny Thrift compact reader: parses everything into a node tree ---- */

struct tn {
	int type;
	int id;
	int64_t i;
	const uint8_t *p;
	size_t n;
	int child, next, nchild;
};

#define MAXN 20000
static struct tn nodes[MAXN];
static int nnodes;

struct rd {
	const uint8_t *p;
	size_t n, at;
	int bad;
};

static uint8_t rbyte(struct rd *r)
{
	if (r->at >= r->n) {
		r->bad = 1;
		return 0;
	}
	return r->p[r->at++];
}

static uint64_t ruvar(struct rd *r)
{
	uint64_t v = 0;
	for (int s = 0; s < 64 && !r->bad; s += 7) {
		uint8_t b = rbyte(r);
		v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			break;
	}
	return v;
}

static int64_t rsvar(struct rd *r)
{
	uint64_t u = ruvar(r);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static int new_node(int type, int id)
{
	assert_true(nnodes < MAXN);
	struct tn *t = &nodes[nnodes];
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->id = id;
	t->child = t->next = -1;
	return nnodes++;
}

static void add_child(int parent, int c, int *last)
{
	if (*last < 0)
		nodes[parent].child = c;
	else
		nodes[*last].next = c;
	*last = c;
	nodes[parent].nchild++;
}

static void rvalue(struct rd *r, int node, int type, int in_list);

static void rstruct(struct rd *r, int node)
{
	int last_id = 0, last = -1;
	for (int guard = 0; guard < 1000 && !r->bad; guard++) {
		uint8_t b = rbyte(r);
		if (b == 0)
			return;
		int type = b & 0x0f, delta = b >> 4;
		int id = delta ? last_id + delta : (int)rsvar(r);
		last_id = id;
		int c = new_node(type, id);
		add_child(node, c, &last);
		if (type == 1 || type == 2)
			nodes[c].i = type == 1;
		else
			rvalue(r, c, type, 0);
	}
}

static void rvalue(struct rd *r, int node, int type, int in_list)
{
	struct tn *t = &nodes[node];
	switch (type) {
	case 1:
	case 2:
		if (in_list)
			t->i = rbyte(r);
		break;
	case 3:
		t->i = (int8_t)rbyte(r);
		break;
	case 4:
	case 5:
	case 6:
		t->i = rsvar(r);
		break;
	case 7:
		for (int k = 0; k < 8; k++)
			rbyte(r);
		break;
	case 8:
		t->n = (size_t)ruvar(r);
		if (t->n > r->n - r->at) {
			r->bad = 1;
			return;
		}
		t->p = r->p + r->at;
		r->at += t->n;
		break;
	case 9:
	case 10: {
		uint8_t h = rbyte(r);
		size_t n = h >> 4;
		int et = h & 0x0f;
		if (n == 15)
			n = (size_t)ruvar(r);
		int last = -1;
		for (size_t k = 0; k < n && !r->bad; k++) {
			int c = new_node(et, (int)k);
			add_child(node, c, &last);
			rvalue(r, c, et, 1);
		}
		break;
	}
	case 12:
		rstruct(r, node);
		break;
	default:
		r->bad = 1;
	}
}

static int parse(const uint8_t *p, size_t n, size_t *used)
{
	nnodes = 0;
	struct rd r = {p, n, 0, 0};
	int root = new_node(12, 0);
	rstruct(&r, root);
	assert_false(r.bad);
	if (used)
		*used = r.at;
	return root;
}

static int fld(int node, int id)
{
	for (int c = nodes[node].child; c >= 0; c = nodes[c].next)
		if (nodes[c].id == id)
			return c;
	return -1;
}

static int64_t ival(int node, int id)
{
	int c = fld(node, id);
	assert_true(c >= 0);
	return nodes[c].i;
}

static int elem(int list, int k)
{
	int c = nodes[list].child;
	while (k-- > 0 && c >= 0)
		c = nodes[c].next;
	assert_true(c >= 0);
	return c;
}

static int str_is(int node, const char *s)
{
	return node >= 0 && nodes[node].n == strlen(s) &&
	       memcmp(nodes[node].p, s, nodes[node].n) == 0;
}

/* ---- writing into memory ---- */

static const struct floe_pq_column log_cols[] = {
    {"ts", 1, FLOE_PQ_TIMESTAMPTZ, false, 0, 0},
    {"received_at", 2, FLOE_PQ_TIMESTAMPTZ, false, 0, 0},
    {"host", 3, FLOE_PQ_STRING, false, 0, 0},
    {"source", 4, FLOE_PQ_STRING, false, 0, 0},
    {"offset", 5, FLOE_PQ_INT64, true, 0, 0},
    {"facility", 6, FLOE_PQ_INT32, true, 0, 0},
    {"severity", 7, FLOE_PQ_INT32, true, 0, 0},
    {"app", 8, FLOE_PQ_STRING, true, 0, 0},
    {"proc_id", 9, FLOE_PQ_STRING, true, 0, 0},
    {"msg_id", 10, FLOE_PQ_STRING, true, 0, 0},
    {"message", 11, FLOE_PQ_STRING, false, 0, 0},
    {"attrs", 12, FLOE_PQ_MAP_STRING, true, 13, 14},
};
#define NLOG 12

static const char *keys3[] = {"a", "b", "c"};
static const size_t klen3[] = {1, 1, 1};
static const char *vals3[] = {"x", NULL, "zz"};
static const size_t vlen3[] = {1, 0, 2};

/* Row r of a deterministic log table. */
static void log_row(int r, struct floe_pq_value *v, char *buf)
{
	memset(v, 0, sizeof(*v) * NLOG);
	v[0].i = 1684161045000000LL + r;
	v[1].i = 1684161045000000LL - r;
	v[2].s = r % 2 ? "alpha" : "beta";
	v[2].len = strlen(v[2].s);
	v[3].s = "/var/log/x";
	v[3].len = 10;
	v[4].is_null = r % 3 == 0;
	v[4].i = r * 10;
	v[5].is_null = true;
	v[6].i = r % 8;
	v[7].is_null = r % 2 == 0;
	v[7].s = "app";
	v[7].len = 3;
	v[8].is_null = true;
	v[9].is_null = true;
	int n = snprintf(buf, 64, "line %d", r);
	v[10].s = buf;
	v[10].len = (size_t)n;
	v[11].is_null = r % 4 == 0;
	v[11].n = (size_t)(r % 4);
	v[11].keys = keys3;
	v[11].key_lens = klen3;
	v[11].vals = vals3;
	v[11].val_lens = vlen3;
}

static int write_log(struct floe_alloc *a, const struct floe_pq_options *o, int rows, struct mem *m,
		     struct floe_pq_writer **out)
{
	struct floe_pq_writer *w = NULL;
	int rc = floe_pq_writer_new(a, log_cols, NLOG, o, mem_sink, m, &w);
	if (rc)
		return rc;
	for (int r = 0; r < rows && !rc; r++) {
		struct floe_pq_value v[NLOG];
		char buf[64];
		log_row(r, v, buf);
		rc = floe_pq_writer_add_row(w, v);
	}
	if (!rc)
		rc = floe_pq_writer_finish(w);
	if (rc || !out)
		floe_pq_writer_free(w);
	else
		*out = w;
	return rc;
}

/* Checks the frame and returns the root of the parsed FileMetaData. */
static int footer(const struct mem *m)
{
	assert_true(m->n >= 12);
	assert_memory_equal(m->p, "PAR1", 4);
	assert_memory_equal(m->p + m->n - 4, "PAR1", 4);
	const uint8_t *l = m->p + m->n - 8;
	size_t flen = (size_t)l[0] | (size_t)l[1] << 8 | (size_t)l[2] << 16 | (size_t)l[3] << 24;
	assert_true(flen + 12 <= m->n);
	size_t used;
	int root = parse(m->p + m->n - 8 - flen, flen, &used);
	assert_int_equal(used, flen);
	return root;
}

/* Decodes the page at off: checks its CRC, decompresses, returns the page header node
 * and the body in *body (malloc'd) of *blen bytes; *next gets the next page's offset. */
static int read_page(const struct mem *m, size_t off, int codec, uint8_t **body, size_t *blen,
		     size_t *next)
{
	size_t hlen;
	/* The header parse resets the node pool; callers use the result before reparsing. */
	int h = parse(m->p + off, m->n - off, &hlen);
	size_t unc = (size_t)ival(h, 2), comp = (size_t)ival(h, 3);
	const uint8_t *z = m->p + off + hlen;
	assert_true(off + hlen + comp <= m->n);
	assert_int_equal((uint32_t)ival(h, 4), floe_crc32(0, z, comp));
	*body = malloc(unc + 1);
	if (codec == 0) {
		assert_int_equal(unc, comp);
		memcpy(*body, z, comp);
	} else if (codec == 6) {
		assert_int_equal(ZSTD_decompress(*body, unc, z, comp), unc);
	} else {
		assert_int_equal(
		    LZ4_decompress_safe((const char *)z, (char *)*body, (int)comp, (int)unc),
		    (int)unc);
	}
	*blen = unc;
	*next = off + hlen + comp;
	return h;
}

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

/* ---- levels ---- */

/* Decodes n RLE-hybrid values of width bw from p. */
static void rle_decode(const uint8_t *p, size_t len, int bw, uint32_t *out, size_t n)
{
	size_t at = 0, k = 0;
	while (k < n) {
		assert_true(at < len);
		uint64_t h = 0;
		int s = 0;
		uint8_t b;
		do {
			b = p[at++];
			h |= (uint64_t)(b & 0x7f) << s;
			s += 7;
		} while (b & 0x80);
		if (h & 1) {
			size_t cnt = (size_t)(h >> 1) * 8;
			uint64_t acc = 0;
			int bits = 0;
			for (size_t i = 0; i < cnt; i++) {
				while (bits < bw) {
					acc |= (uint64_t)p[at++] << bits;
					bits += 8;
				}
				uint32_t v = (uint32_t)(acc & ((1u << bw) - 1));
				acc >>= bw;
				bits -= bw;
				if (k < n)
					out[k++] = v;
			}
		} else {
			size_t cnt = (size_t)(h >> 1);
			uint32_t v = 0;
			for (int i = 0; i < (bw + 7) / 8; i++)
				v |= (uint32_t)p[at++] << (8 * i);
			for (size_t i = 0; i < cnt && k < n; i++)
				out[k++] = v;
		}
	}
}

/* Reads the (single) data page of column chunk j of a 1-row-group uncompressed file:
 * levels into rep/def, the PLAIN values section into *vals. */
static void page_levels(const struct mem *m, int j, int max_rep, int max_def, uint32_t *rep,
			uint32_t *def, size_t n, size_t *encoding, const uint8_t **vals)
{
	int root = footer(m);
	int md = fld(elem(fld(elem(fld(root, 4), 0), 1), j), 3);
	assert_int_equal(ival(md, 5), (int64_t)n);
	size_t off = (size_t)ival(md, 9);
	uint8_t *body;
	size_t blen, next;
	int h = read_page(m, off, 0, &body, &blen, &next);
	int dph = fld(h, 5);
	assert_int_equal(ival(dph, 1), (int64_t)n);
	*encoding = (size_t)ival(dph, 2);
	size_t at = 0;
	if (max_rep) {
		size_t l = body[0] | (size_t)body[1] << 8;
		rle_decode(body + 4, l, 1, rep, n);
		at += 4 + l;
	}
	size_t l = body[at] | (size_t)body[at + 1] << 8;
	rle_decode(body + at + 4, l, max_def > 1 ? 2 : 1, def, n);
	at += 4 + l;
	static uint8_t copy[4096];
	memcpy(copy, body + at, blen - at);
	*vals = copy;
	free(body);
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
			assert_int_equal(fld(md, 11), -1); /* no dictionary page */
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
	    {"\xc3\xa9" "0123456789", 12, "\xc3\xa9" "0123456789", 0},
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
	assert_int_equal(floe_pq_writer_finish(w), 0);
	size_t ns;
	const struct floe_pq_leaf_stats *st = floe_pq_writer_stats(w, &ns);
	assert_int_equal(st[0].min_len, 6);
	assert_memory_equal(st[0].min, "\xef\xbf\xbd\xef\xbf\xbd", 6);
	floe_pq_writer_free(w);
	free(m.p);
}

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
				assert_true(floe_pq_bloom_check(&bf, floe_pq_bloom_hash(x->s, x->len)));
			}
			for (int r = 0; r < 10000; r++) {
				char buf[32];
				int n = snprintf(buf, sizeof(buf), "absent %d", r);
				fp += floe_pq_bloom_check(&bf, floe_pq_bloom_hash(buf, (size_t)n));
			}
			if (fp > 250)
				fail_msg("%d rows: filter %d: %d false positives in 10000", rows, f, fp);
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
	    cmocka_unit_test(test_codecs),
	    cmocka_unit_test(test_map_levels),
	    cmocka_unit_test(test_dictionary_fallback),
	    cmocka_unit_test(test_dictionary_full_skips_next_chunks),
	    cmocka_unit_test(test_dictionary_small_chunks),
	    cmocka_unit_test(test_utf8),
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
