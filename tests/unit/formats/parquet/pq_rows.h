/* Rows for the Parquet reader's tests: a log-like schema with every kind and repetition
 * the writer has (required and optional scalars, a required and an optional map), and a
 * generator that makes row i of a seed again whenever asked, so that 1,000,000 rows are
 * checked without being kept. Values include nulls, empty strings, long strings,
 * invalid UTF-8, maps that are null, empty, or hold null and empty values. "Sorted"
 * rows come in the order a sort by (host, ts) gives, with messages sharing prefixes, as
 * floe's sort_by makes them: long runs for the dictionary indices, DELTA_BYTE_ARRAY in
 * the compact profile. Also an in-memory source for the reader. */
#ifndef FLOE_TEST_PQ_ROWS_H
#define FLOE_TEST_PQ_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"

#define PQ_NCOLS 19
#define PQ_MAXKV 6

static const struct floe_pq_column pq_cols[PQ_NCOLS] = {
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
    {"code", 15, FLOE_PQ_INT32, false, 0, 0},
    {"labels", 16, FLOE_PQ_MAP_STRING, false, 17, 18},
    /* The typed columns' kinds. */
    {"ratio", 19, FLOE_PQ_FLOAT, true, 0, 0},
    {"score", 20, FLOE_PQ_DOUBLE, true, 0, 0},
    {"ok", 21, FLOE_PQ_BOOLEAN, true, 0, 0},
    {"day", 22, FLOE_PQ_DATE, true, 0, 0},
    {"blob", 23, FLOE_PQ_BINARY, true, 0, 0},
};

/* One generated row and the bytes its values point to. */
struct pq_row {
	struct floe_pq_value v[PQ_NCOLS];
	char host[32], source[48], app[16], proc[16], msgid[16], msg[4200];
	const char *keys[2][PQ_MAXKV], *vals[2][PQ_MAXKV];
	size_t klen[2][PQ_MAXKV], vlen[2][PQ_MAXKV];
	char kv[2][PQ_MAXKV][2][24];
	char blob[16];
};

static inline uint64_t pq_mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static const char *const pq_hosts[] = {"edge-01", "edge-02", "edge-03", "gateway", ""};
static const char *const pq_apps[] = {"sshd", "kernel", "nginx", "cron", ""};

/* Appends s, or v in base 10 or 16 (at least width digits), at d + at; returns the new
 * length. snprintf took a third of the time of the 1,000,000-row test. */
static inline size_t pq_put(char *d, size_t at, const char *s)
{
	size_t n = strlen(s);
	memcpy(d + at, s, n);
	return at + n;
}

static inline size_t pq_num(char *d, size_t at, uint64_t v, unsigned base, int width)
{
	char tmp[24];
	int n = 0;
	do {
		tmp[n++] = "0123456789abcdef"[v % base];
		v /= base;
	} while (v || n < width);
	while (n)
		d[at++] = tmp[--n];
	return at;
}

/* A map of up to PQ_MAXKV entries (m = 0 attrs, 1 labels). */
static inline void pq_gen_map(struct pq_row *r, int m, uint64_t h, bool optional)
{
	struct floe_pq_value *v = &r->v[m == 0 ? 11 : 13];
	*v = (struct floe_pq_value){0};
	if (optional && h % 7 == 0) {
		v->is_null = true;
		return;
	}
	size_t n = (h >> 8) % (PQ_MAXKV + 1);
	bool any_null = false;
	for (size_t j = 0; j < n; j++) {
		uint64_t e = pq_mix(h + j);
		char *k = r->kv[m][j][0], *val = r->kv[m][j][1];
		r->klen[m][j] = pq_num(k, pq_put(k, 0, e % 5 ? "key" : ""), e % 9, 10, 1);
		if (e % 11 == 0)
			r->klen[m][j] = 0; /* an empty key */
		r->keys[m][j] = k;
		if (e % 6 == 0) {
			r->vals[m][j] = NULL; /* a null value */
			r->vlen[m][j] = 0;
			any_null = true;
		} else {
			r->vlen[m][j] =
			    e % 13 == 0 ? 0 : pq_num(val, pq_put(val, 0, "v"), e % 1000, 10, 1);
			r->vals[m][j] = val;
		}
	}
	v->n = n;
	v->keys = r->keys[m];
	v->key_lens = r->klen[m];
	v->vals = r->vals[m];
	v->val_lens = r->vlen[m];
	(void)any_null;
}

/* Row i of seed (total rows in the file: for the sorted order). */
static inline void pq_gen(struct pq_row *r, uint64_t seed, uint64_t i, uint64_t total, bool sorted)
{
	uint64_t h = pq_mix(seed * 1000003u + i);
	memset(r->v, 0, sizeof(r->v));
	struct floe_pq_value *v = r->v;
	uint64_t hi = sorted ? i * 4 / (total ? total : 1) : h % 5;
	v[0].i = 1764633600000000LL + (int64_t)(sorted ? i * 1000 : h % 100000000);
	v[1].i = v[0].i + (int64_t)(h % 5000) - 100;
	v[2].s = r->host;
	v[2].len = pq_put(r->host, 0, pq_hosts[hi % 5]);
	v[3].len = pq_put(
	    r->source, pq_num(r->source, pq_put(r->source, 0, "/var/log/app"), (h >> 3) % 3, 10, 1),
	    ".log");
	v[3].s = r->source;
	v[4].is_null = h % 9 == 0;
	v[4].i = (int64_t)(i * 117) - (int64_t)(h % 3 == 0 ? 1000000000000LL : 0);
	v[5].is_null = h % 4 == 0;
	v[5].i = (int64_t)((h >> 5) % 24);
	v[6].is_null = h % 5 == 1;
	v[6].i = (int64_t)((h >> 9) % 8) - (h % 17 == 0 ? 2147483648LL : 0);
	v[7].is_null = h % 6 == 0;
	v[7].s = r->app;
	v[7].len = pq_put(r->app, 0, pq_apps[(h >> 12) % 5]);
	v[8].is_null = h % 3 == 0;
	v[8].len = pq_num(r->proc, 0, (h >> 20) % 70000, 10, 1);
	v[8].s = r->proc;
	v[9].is_null = h % 10 != 0;
	v[9].len = pq_num(r->msgid, pq_put(r->msgid, 0, "ID"), h % 47, 10, 1);
	v[9].s = r->msgid;
	/* Messages: mostly text with numbers, sometimes long, empty, or invalid UTF-8. */
	size_t n;
	char *m = r->msg;
	if (sorted) { /* GET /api/v1/items/%08llu?page=%u HTTP/1.1 200 */
		n = pq_num(m, pq_put(m, 0, "GET /api/v1/items/"), i, 10, 8);
		n = pq_put(m, pq_num(m, pq_put(m, n, "?page="), h % 100, 10, 1), " HTTP/1.1 200");
	} else { /* session %llx opened for user u%u from 10.0.%u.%u port %u */
		n = pq_num(m, pq_put(m, 0, "session "), h, 16, 1);
		n = pq_num(m, pq_put(m, n, " opened for user u"), h % 97, 10, 1);
		n = pq_num(m, pq_put(m, n, " from 10.0."), (h >> 7) % 256, 10, 1);
		n = pq_num(m, pq_put(m, n, "."), (h >> 15) % 256, 10, 1);
		n = pq_num(m, pq_put(m, n, " port "), (h >> 23) % 65536, 10, 1);
	}
	if (h % 101 == 0) {
		n = 0;
	} else if (h % 103 == 0) {
		size_t len = 1000 + (size_t)(h % 3000);
		for (size_t k = n; k < len; k++)
			r->msg[k] = (char)('a' + (k * 7 + h) % 26);
		n = len;
	} else if (h % 107 == 0) {
		/* Invalid UTF-8: a lone continuation byte, a truncated sequence, an overlong
		 * form. The writer stores them replaced. */
		memcpy(r->msg + n, "\x80 \xe2\x82 \xc0\xaf", 8);
		n += 8;
	}
	v[10].s = r->msg;
	v[10].len = n;
	pq_gen_map(r, 0, pq_mix(h ^ 0x1234), true);
	v[12].i = (int64_t)(sorted ? i / 100 : (h >> 33) % 1000) - 500;
	pq_gen_map(r, 1, pq_mix(h ^ 0x5678), false);
	/* Typed values: negative and positive, both zeros, extremes, few distinct (for
	 * dictionaries) in sorted files and many otherwise; bytes that are not UTF-8. */
	uint64_t g = pq_mix(h ^ 0x9abc);
	v[14].is_null = g % 7 == 0;
	v[14].d = (double)(float)((double)(int64_t)(g % 2001 - 1000) / 8.0);
	if (g % 97 == 0)
		v[14].d = g % 2 ? -0.0 : 3.4028234663852886e38;
	v[15].is_null = g % 11 == 0;
	v[15].d = sorted ? (double)(i % 50) * 0.5 : (double)(int64_t)(g >> 11) / 3.0 - 1e15;
	if (g % 89 == 0)
		v[15].d = g % 2 ? 0.0 : -1e308;
	v[16].is_null = g % 5 == 0;
	v[16].i = (g >> 3) % 3 == 0;
	v[17].is_null = g % 13 == 0;
	v[17].i = (int64_t)((g >> 7) % 40000) - 10000;
	v[18].is_null = g % 4 == 0;
	v[18].len = (size_t)((g >> 9) % sizeof(r->blob));
	for (size_t k = 0; k < v[18].len; k++)
		r->blob[k] = (char)(g >> (k % 8 * 8) ^ 0x80);
	v[18].s = r->blob;
}

/* The reader's source over a block of memory; fail_at fails that call (1-based). */
struct pq_memsrc {
	const uint8_t *p;
	size_t n;
	int calls, fail_at;
};

static inline int pq_memsrc_read(void *ctx, uint64_t off, void *buf, size_t len)
{
	struct pq_memsrc *m = ctx;
	if (m->fail_at && ++m->calls == m->fail_at)
		return -5;
	if (off > m->n || len > m->n - off)
		return -22;
	memcpy(buf, m->p + off, len);
	return 0;
}

static inline struct floe_pq_source pq_source(struct pq_memsrc *m, const uint8_t *p, size_t n)
{
	m->p = p;
	m->n = n;
	m->calls = 0;
	m->fail_at = 0;
	return (struct floe_pq_source){m, n, pq_memsrc_read};
}

#endif
