/* Fuzz target for the Parquet reader: the input is a whole file. The reader must never
 * crash, read out of bounds or take memory beyond its budget; every row it gives back
 * must be one floe's writer takes as it is (the writer is fed each row, into a sink that
 * keeps nothing). At most MAX_ROWS rows are read: a few bytes of run-length levels can
 * stand for billions of null rows, a long input rather than a fault.
 *
 * The seed corpus (tests/fuzz/corpus/fuzz_pq_reader) holds files floe's writer made in
 * every codec x profile (written by test_pq_reader_faults with FLOE_PQ_CORPUS=DIR) and a
 * few damaged ones. With FLOE_FUZZ_PQR_OUT set to a file, the rows read are written
 * there, one JSON array a line (integers as strings, strings as upper-case hex, maps as
 * [key, value] pairs), then {"result":N,"error":"..."}: the DuckDB integration test
 * compares them with DuckDB's reading of the same file. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"

#define MAX_ROWS 200000

struct src {
	const uint8_t *p;
	size_t n;
};

static int read_at(void *ctx, uint64_t off, void *buf, size_t len)
{
	const struct src *s = ctx;
	if (off > s->n || len > s->n - off)
		abort(); /* the reader checks ranges against the size it was given */
	memcpy(buf, s->p + off, len);
	return 0;
}

static int null_sink(void *ctx, const void *data, size_t len)
{
	(void)ctx;
	(void)data;
	(void)len;
	return 0;
}

static void hex(FILE *f, const char *s, size_t n)
{
	fputc('"', f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02X", (unsigned char)s[i]);
	fputc('"', f);
}

static void dump_row(FILE *f, const struct floe_pq_column *cols, size_t n,
		     const struct floe_pq_value *v)
{
	fputc('[', f);
	for (size_t c = 0; c < n; c++) {
		if (c)
			fputc(',', f);
		if (v[c].is_null) {
			fputs("null", f);
		} else if (cols[c].kind == FLOE_PQ_STRING || cols[c].kind == FLOE_PQ_BINARY) {
			hex(f, v[c].s, v[c].len);
		} else if (cols[c].kind == FLOE_PQ_FLOAT || cols[c].kind == FLOE_PQ_DOUBLE) {
			fprintf(f, "\"%.17g\"", v[c].d);
		} else if (cols[c].kind == FLOE_PQ_BOOLEAN) {
			fputs(v[c].i ? "\"true\"" : "\"false\"", f);
		} else if (cols[c].kind == FLOE_PQ_MAP_STRING) {
			fputc('[', f);
			for (size_t i = 0; i < v[c].n; i++) {
				fputs(i ? ",[" : "[", f);
				hex(f, v[c].keys[i], v[c].key_lens[i]);
				fputc(',', f);
				if (v[c].vals[i])
					hex(f, v[c].vals[i], v[c].val_lens[i]);
				else
					fputs("null", f);
				fputc(']', f);
			}
			fputc(']', f);
		} else {
			fprintf(f, "\"%lld\"", (long long)v[c].i);
		}
	}
	fputs("]\n", f);
}

static void json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
	fputc('"', f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct src s = {data, size};
	struct floe_pq_source source = {&s, size, read_at};
	struct floe_pq_reader_options opt = {
	    .max_page = (size_t)4 << 20, .max_footer = (size_t)1 << 20, .max_map_entries = 4096};
	struct floe_alloc a;
	floe_alloc_init(&a, (size_t)96 << 20);
	const char *out = getenv("FLOE_FUZZ_PQR_OUT");
	FILE *f = out ? fopen(out, "w") : NULL;
	if (out && !f)
		abort(); /* the test's own disk, not the reader */
	struct floe_pq_reader *r = NULL;
	struct floe_pq_writer *w = NULL;
	char why[FLOE_ERR_MSG_MAX];
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_pq_reader_open(&a, &source, &opt, &r, &e);
	snprintf(why, sizeof(why), "%s", e.msg);
	if (!rc) {
		size_t ncols;
		const struct floe_pq_column *cols = floe_pq_reader_columns(r, &ncols);
		struct floe_pq_options wo = {.codec = FLOE_PQ_UNCOMPRESSED, .page_size = 4096};
		int err = floe_pq_writer_new(&a, cols, ncols, &wo, null_sink, NULL, &w);
		/* The writer takes at most 4096 columns, as does the reader. */
		if (err && err != FLOE_ENOMEM)
			abort();
		const struct floe_pq_value *row;
		for (size_t i = 0; i < MAX_ROWS && (rc = floe_pq_reader_next(r, &row)) == 1; i++) {
			/* Every row read is one the writer takes: a refusal is a reader bug. */
			int wrc = w ? floe_pq_writer_add_row(w, row) : 0;
			if (wrc && wrc != FLOE_ENOMEM && wrc != FLOE_ELIMIT)
				abort();
			if (f)
				dump_row(f, cols, ncols, row);
		}
		if (rc < 0)
			snprintf(why, sizeof(why), "%s", floe_pq_reader_error(r)->msg);
		else
			why[0] = '\0';
	}
	if (f) {
		fprintf(f, "{\"result\":%d,\"error\":", rc < 0 ? rc : 0);
		json_str(f, rc < 0 ? why : "");
		fputs("}\n", f);
		fclose(f);
	}
	floe_pq_writer_free(w);
	floe_pq_reader_free(r);
	if (a.used != 0)
		abort(); /* everything given back */
	return 0;
}
