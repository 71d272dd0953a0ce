/* Helpers of the Parquet writer's tests (include after cmocka.h): a tiny Thrift compact
 * reader that parses a footer into a node tree, a log-shaped table written into memory,
 * its pages read back, and an RLE-hybrid level decoder. */
#ifndef FLOE_TEST_PQ_WALK_H
#define FLOE_TEST_PQ_WALK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <zstd.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
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

static inline uint8_t rbyte(struct rd *r)
{
	if (r->at >= r->n) {
		r->bad = 1;
		return 0;
	}
	return r->p[r->at++];
}

static inline uint64_t ruvar(struct rd *r)
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

static inline int64_t rsvar(struct rd *r)
{
	uint64_t u = ruvar(r);
	return (int64_t)(u >> 1) ^ -(int64_t)(u & 1);
}

static inline int new_node(int type, int id)
{
	assert_true(nnodes < MAXN);
	struct tn *t = &nodes[nnodes];
	memset(t, 0, sizeof(*t));
	t->type = type;
	t->id = id;
	t->child = t->next = -1;
	return nnodes++;
}

static inline void add_child(int parent, int c, int *last)
{
	if (*last < 0)
		nodes[parent].child = c;
	else
		nodes[*last].next = c;
	*last = c;
	nodes[parent].nchild++;
}

static inline void rvalue(struct rd *r, int node, int type, int in_list);

static inline void rstruct(struct rd *r, int node)
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

static inline void rvalue(struct rd *r, int node, int type, int in_list)
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

static inline int parse(const uint8_t *p, size_t n, size_t *used)
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

static inline int fld(int node, int id)
{
	for (int c = nodes[node].child; c >= 0; c = nodes[c].next)
		if (nodes[c].id == id)
			return c;
	return -1;
}

static inline int64_t ival(int node, int id)
{
	int c = fld(node, id);
	assert_true(c >= 0);
	return nodes[c].i;
}

static inline int elem(int list, int k)
{
	int c = nodes[list].child;
	while (k-- > 0 && c >= 0)
		c = nodes[c].next;
	assert_true(c >= 0);
	return c;
}

static inline int str_is(int node, const char *s)
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
static inline void log_row(int r, struct floe_pq_value *v, char *buf)
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

static inline int write_log(struct floe_alloc *a, const struct floe_pq_options *o, int rows,
			    struct mem *m, struct floe_pq_writer **out)
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
static inline int footer(const struct mem *m)
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
static inline int read_page(const struct mem *m, size_t off, int codec, uint8_t **body,
			    size_t *blen, size_t *next)
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

/* ---- levels ---- */

/* Decodes n RLE-hybrid values of width bw from p. */
static inline void rle_decode(const uint8_t *p, size_t len, int bw, uint32_t *out, size_t n)
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
static inline void page_levels(const struct mem *m, int j, int max_rep, int max_def, uint32_t *rep,
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

#endif
