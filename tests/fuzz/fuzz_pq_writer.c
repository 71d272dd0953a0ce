/* Fuzz target for the Parquet writer: the input is read as writer options (codec, sizes,
 * profile, page index, bloom filter columns, memory budget) followed by rows of a
 * log-like schema (random nulls, strings that may be invalid UTF-8, map sizes).
 * The writer must never crash, and a finished file must be framed by PAR1.
 *
 * With FLOE_FUZZ_PQ_OUT set to a directory (the integration suite's read-back test, run
 * through the replay driver), input k's file is also written there as k.parquet, beside
 * k.rows: the options, then every row the writer took, as given, one JSON object a line
 * with strings as the hex of their bytes, then the writer's result. The readers must
 * give those rows back. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

struct in {
	const uint8_t *p;
	size_t n, at;
};

static uint8_t byte(struct in *in)
{
	return in->at < in->n ? in->p[in->at++] : 0;
}

/* A string of up to 63 bytes taken from the input (whatever bytes they are). */
static void str(struct in *in, const char **s, size_t *len)
{
	size_t l = byte(in) & 63;
	if (l > in->n - in->at)
		l = in->n - in->at;
	*s = (const char *)in->p + in->at;
	*len = l;
	in->at += l;
}

struct tail {
	uint64_t total;
	uint8_t last[4];
	FILE *file; /* with FLOE_FUZZ_PQ_OUT */
};

static int sink(void *ctx, const void *data, size_t len)
{
	struct tail *t = ctx;
	const uint8_t *d = data;
	/* Keep the last four bytes only: the file itself is not needed. */
	for (size_t i = len > 4 ? len - 4 : 0; i < len; i++) {
		memmove(t->last, t->last + 1, 3);
		t->last[3] = d[i];
	}
	t->total += len;
	if (t->file && fwrite(data, 1, len, t->file) != len)
		abort(); /* the test's own disk, not the writer */
	return 0;
}

/* The read-back dump (FLOE_FUZZ_PQ_OUT): JSON strings as hex, so any bytes go through. */
static void hex(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", (unsigned char)s[i]);
	fputc('"', f);
}

static void dump_row(FILE *f, const struct floe_pq_value *v)
{
	fprintf(f, "{\"ts\":%lld,\"host\":", (long long)v[0].i);
	hex(f, v[1].s, v[1].len);
	if (v[2].is_null)
		fprintf(f, ",\"offset\":null");
	else
		fprintf(f, ",\"offset\":%lld", (long long)v[2].i);
	if (v[3].is_null)
		fprintf(f, ",\"severity\":null");
	else
		fprintf(f, ",\"severity\":%lld", (long long)v[3].i);
	fprintf(f, ",\"message\":");
	hex(f, v[4].s, v[4].len);
	fprintf(f, ",\"attrs\":");
	if (v[5].is_null) {
		fprintf(f, "null}\n");
		return;
	}
	fputc('[', f);
	for (size_t i = 0; i < v[5].n; i++) {
		fprintf(f, "%s[", i ? "," : "");
		hex(f, v[5].keys[i], v[5].key_lens[i]);
		fputc(',', f);
		if (v[5].vals[i])
			hex(f, v[5].vals[i], v[5].val_lens[i]);
		else
			fprintf(f, "null");
		fputc(']', f);
	}
	fprintf(f, "]}\n");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct floe_pq_column cols[] = {
	    {"ts", 1, FLOE_PQ_TIMESTAMPTZ, false, 0, 0},
	    {"host", 3, FLOE_PQ_STRING, false, 0, 0},
	    {"offset", 5, FLOE_PQ_INT64, true, 0, 0},
	    {"severity", 7, FLOE_PQ_INT32, true, 0, 0},
	    {"message", 11, FLOE_PQ_STRING, false, 0, 0},
	    {"attrs", 12, FLOE_PQ_MAP_STRING, true, 13, 14},
	};
	struct in in = {data, size, 0};
	uint8_t o0 = byte(&in), o1 = byte(&in), o2 = byte(&in);
	static const enum floe_pq_codec codecs[] = {FLOE_PQ_UNCOMPRESSED, FLOE_PQ_ZSTD,
						    FLOE_PQ_LZ4_RAW};
	struct floe_pq_options opt = {
	    .codec = codecs[o0 % 3],
	    .zstd_level = 1,
	    .page_size = (size_t)64 << (o1 & 7),
	    .row_group_size = (size_t)512 << ((o1 >> 3) & 7),
	    .dictionary_cap = (size_t)16 << ((o0 >> 2) & 15),
	    .profile = (o2 & 1) ? FLOE_PQ_PROFILE_COMPACT : FLOE_PQ_PROFILE_DEFAULT,
	    .no_page_index = (o2 & 2) != 0,
	    .memory_budget = (o2 & 32) ? (size_t)256 << ((o2 >> 6) & 3) : 0,
	    .bloom_max_bytes = (size_t)32 << (o1 >> 6),
	};
	/* Bloom filters on host, message and the map's keys, as the input says. */
	struct floe_pq_bloom_column bloom[3];
	size_t nb = 0;
	if (o2 & 4)
		bloom[nb++] = (struct floe_pq_bloom_column){3, 0};
	if (o2 & 8)
		bloom[nb++] = (struct floe_pq_bloom_column){11, (uint32_t)o0 * 100};
	if (o2 & 16)
		bloom[nb++] = (struct floe_pq_bloom_column){13, 1};
	opt.bloom = bloom;
	opt.bloom_count = nb;
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)64 << 20);
	struct tail t = {0};
	FILE *rows = NULL;
	const char *dir = getenv("FLOE_FUZZ_PQ_OUT");
	if (dir) {
		static unsigned seq;
		char path[4096];
		snprintf(path, sizeof(path), "%s/%06u.parquet", dir, seq);
		t.file = fopen(path, "wb");
		snprintf(path, sizeof(path), "%s/%06u.rows", dir, seq++);
		rows = fopen(path, "w");
		if (!t.file || !rows)
			abort();
		static const char *const names[] = {"uncompressed", "zstd", "lz4_raw"};
		fprintf(rows,
			"{\"codec\":\"%s\",\"profile\":\"%s\",\"page_index\":%s,\"page_size\":%zu,"
			"\"row_group_size\":%zu,\"memory_budget\":%zu,\"bloom\":%zu}\n",
			names[o0 % 3], (o2 & 1) ? "compact" : "default",
			opt.no_page_index ? "false" : "true", opt.page_size, opt.row_group_size,
			opt.memory_budget, nb);
	}
	struct floe_pq_writer *w = NULL;
	int err = floe_pq_writer_new(&a, cols, 6, &opt, sink, &t, &w);
	if (err) {
		if (rows) {
			fprintf(rows, "{\"result\":%d}\n", err);
			fclose(rows);
			fclose(t.file);
		}
		return 0;
	}
	int rc = 0;
	while (in.at < in.n && !rc) {
		struct floe_pq_value v[6];
		memset(v, 0, sizeof(v));
		uint8_t f = byte(&in);
		v[0].i =
		    (int64_t)((uint64_t)byte(&in) << 40 | (uint64_t)byte(&in) << 8 | byte(&in));
		str(&in, &v[1].s, &v[1].len);
		v[2].is_null = f & 1;
		v[2].i = (int64_t)byte(&in) - 128;
		v[3].is_null = f & 2;
		v[3].i = (int8_t)byte(&in);
		str(&in, &v[4].s, &v[4].len);
		const char *keys[8], *vals[8];
		size_t kl[8], vl[8];
		v[5].is_null = f & 4;
		v[5].n = (f >> 3) & 7;
		for (size_t i = 0; i < v[5].n; i++) {
			str(&in, &keys[i], &kl[i]);
			str(&in, &vals[i], &vl[i]);
			if (kl[i] & 1)
				vals[i] = NULL;
		}
		v[5].keys = keys;
		v[5].key_lens = kl;
		v[5].vals = vals;
		v[5].val_lens = vl;
		/* A null in a required column must be refused without harm. */
		if ((f & 0xC0) == 0xC0) {
			v[0].is_null = true;
			if (floe_pq_writer_add_row(w, v) != FLOE_EINVAL)
				abort();
			v[0].is_null = false;
		}
		rc = floe_pq_writer_add_row(w, v);
		if (!rc && rows)
			dump_row(rows, v);
	}
	if (!rc)
		rc = floe_pq_writer_finish(w);
	if (!rc && (t.total < 12 || memcmp(t.last, "PAR1", 4) != 0 ||
		    t.total != floe_pq_writer_file_size(w)))
		abort();
	if (rc && rc != FLOE_ENOMEM && rc != FLOE_ELIMIT)
		abort();
	floe_pq_writer_free(w);
	if (rows) {
		fprintf(rows, "{\"result\":%d}\n", rc);
		if (fclose(rows) != 0 || fclose(t.file) != 0)
			abort();
	}
	if (a.used != 0)
		abort();
	return 0;
}
