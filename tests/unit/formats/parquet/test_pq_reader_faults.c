/* Parquet reader under faults: every allocation failing in turn, every read of the
 * source failing in turn, page CRC mismatches (reported with the page's offset), files
 * cut at every length and with every byte flipped, codecs floe does not read (named),
 * the configured limits, a broken frame. With FLOE_PQ_CORPUS=DIR it also writes the
 * fuzz target's seed corpus there (files of every codec x profile, and damaged ones). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/thrift.h"
#include "formats/parquet/writer.h"

#include "mem_sink.h"
#include "pq_rows.h"

static void write_file(enum floe_pq_codec codec, enum floe_pq_profile prof, bool sorted, uint64_t n,
		       size_t page, struct mem *m)
{
	struct floe_pq_bloom_column bl[] = {{3, 0}, {13, 0}};
	struct floe_pq_options o = {.codec = codec,
				    .profile = prof,
				    .page_size = page,
				    .dictionary_cap = 1024,
				    .bloom = bl,
				    .bloom_count = 2,
				    .memory_budget = 16 << 10};
	memset(m, 0, sizeof(*m));
	struct floe_pq_writer *w = NULL;
	assert_int_equal(floe_pq_writer_new(NULL, pq_cols, PQ_NCOLS, &o, mem_sink, m, &w), 0);
	static struct pq_row row;
	for (uint64_t i = 0; i < n; i++) {
		pq_gen(&row, 11, i, n, sorted);
		assert_int_equal(floe_pq_writer_add_row(w, row.v), 0);
	}
	assert_int_equal(floe_pq_writer_finish(w), 0);
	floe_pq_writer_free(w);
}

/* Opens and reads the whole file: 0 and *rows, or the error (why gets its message). */
static int read_all(struct floe_alloc *a, const uint8_t *p, size_t n,
		    const struct floe_pq_reader_options *opt, int fail_read, uint64_t *rows,
		    char *why, size_t cap, uint64_t *err_off)
{
	struct pq_memsrc ms;
	struct floe_pq_source src = pq_source(&ms, p, n);
	ms.fail_at = fail_read;
	struct floe_pq_reader *r = NULL;
	*rows = 0;
	*err_off = 0;
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_pq_reader_open(a, &src, opt, &r, &e);
	if (rc) {
		snprintf(why, cap, "%.200s", e.msg);
		*err_off = e.offset == FLOE_ERR_NO_OFFSET ? 0 : e.offset;
		return rc;
	}
	const struct floe_pq_value *row;
	while ((rc = floe_pq_reader_next(r, &row)) == 1)
		(*rows)++;
	if (rc) {
		snprintf(why, cap, "%.200s", floe_pq_reader_error(r)->msg);
		*err_off = floe_pq_reader_error(r)->offset;
		assert_int_equal(floe_pq_reader_next(r, &row), rc); /* sticky */
	}
	floe_pq_reader_free(r);
	return rc;
}

static const enum floe_pq_codec codecs[] = {FLOE_PQ_UNCOMPRESSED, FLOE_PQ_ZSTD, FLOE_PQ_LZ4_RAW};

static void test_alloc_failures(void **state)
{
	(void)state;
	for (int k = 0; k < 3; k++) {
		struct mem m;
		write_file(codecs[k], (enum floe_pq_profile)(k != 2), k == 0, 300, 1024, &m);
		int injected = 0;
		for (long fail = 0;; fail++) {
			struct floe_alloc a;
			floe_alloc_init(&a, 0);
			a.fail_after = fail;
			uint64_t rows, off;
			char why[256];
			int rc = read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off);
			assert_int_equal(a.used, 0); /* nothing leaked */
			if (rc == 0) {
				assert_int_equal(rows, 300);
				if (a.fail_after > 0)
					break; /* no allocation failed: all were tried */
				continue;
			}
			/* Running out is reported as such, never as a damaged file. */
			assert_int_equal(rc, FLOE_ENOMEM);
			injected++;
		}
		assert_true(injected > 20);
		free(m.p);
	}
}

static void test_source_failures(void **state)
{
	(void)state;
	struct mem m;
	write_file(FLOE_PQ_ZSTD, FLOE_PQ_PROFILE_COMPACT, false, 200, 1024, &m);
	int n = 0;
	for (int fail = 1;; fail++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		uint64_t rows, off;
		char why[256];
		int rc = read_all(&a, m.p, m.n, NULL, fail, &rows, why, sizeof(why), &off);
		assert_int_equal(a.used, 0);
		if (rc == 0)
			break;
		assert_int_equal(rc, -5); /* the source's own error */
		assert_non_null(strstr(why, "reading"));
		n++;
	}
	assert_true(n > 10);
	free(m.p);
}

/* The length of the page header at p (Thrift), to find where the body starts. */
static size_t header_len(const uint8_t *p, size_t n)
{
	struct floe_thrift_rd t;
	floe_thrift_rd_init(&t, p, n);
	int16_t id;
	int ft;
	while (floe_thrift_rd_field(&t, &id, &ft))
		floe_thrift_rd_skip(&t, ft, false);
	assert_int_equal(t.err, 0);
	return t.pos;
}

/* A byte changed in the body of the file's first page (at offset 4): a CRC mismatch,
 * reported at that page's offset, in every codec and profile. */
static void test_crc_mismatch(void **state)
{
	(void)state;
	for (int k = 0; k < 6; k++) {
		struct mem m;
		write_file(codecs[k % 3], (enum floe_pq_profile)(k / 3), false, 2000, 4096, &m);
		size_t body = 4 + header_len(m.p + 4, m.n - 4);
		m.p[body + 3] ^= 0x10;
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		uint64_t rows, off;
		char why[256];
		int rc = read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off);
		assert_int_equal(rc, FLOE_ECORRUPT);
		assert_non_null(strstr(why, "CRC mismatch"));
		assert_non_null(strstr(why, "at offset 4"));
		assert_int_equal(off, 4);
		free(m.p);
	}
}

/* Cut at every length and with every byte flipped: an error with a message, or rows
 * (a flip in a statistic or an unread field changes nothing); never a crash. */
static void test_damage_everywhere(void **state)
{
	(void)state;
	for (int k = 0; k < 2; k++) {
		struct mem m;
		write_file(codecs[1 + k], (enum floe_pq_profile)k, k == 1, 40, 512, &m);
		uint8_t *copy = malloc(m.n);
		assert_non_null(copy);
		size_t failed = 0;
		for (size_t cut = 0; cut < m.n; cut++) {
			struct floe_alloc a;
			floe_alloc_init(&a, 0);
			uint64_t rows, off;
			char why[256];
			int rc = read_all(&a, m.p, cut, NULL, 0, &rows, why, sizeof(why), &off);
			assert_true(rc < 0);
			assert_true(why[0] != '\0');
			assert_int_equal(a.used, 0);
		}
		for (size_t i = 0; i < m.n; i++) {
			memcpy(copy, m.p, m.n);
			copy[i] ^= (uint8_t)(1u << (i % 8));
			struct floe_alloc a;
			floe_alloc_init(&a, 64 << 20);
			uint64_t rows, off;
			char why[256];
			int rc = read_all(&a, copy, m.n, NULL, 0, &rows, why, sizeof(why), &off);
			assert_int_equal(a.used, 0);
			if (rc) {
				assert_true(why[0] != '\0');
				assert_true(off < m.n);
				failed++;
			}
		}
		/* The page CRCs see most flips in the data. */
		assert_true(failed > m.n / 2);
		free(copy);
		free(m.p);
	}
}

/* Finds needle in m's bytes (the last occurrence, so that a footer's is found). */
static size_t find_last(const struct mem *m, const void *needle, size_t n)
{
	for (size_t i = m->n - n + 1; i-- > 0;) {
		if (memcmp(m->p + i, needle, n) == 0)
			return i;
	}
	fail_msg("pattern not found");
	return 0;
}

static void test_unsupported_codec(void **state)
{
	(void)state;
	static const struct {
		uint8_t zz; /* zigzag of the codec id */
		const char *name;
	} bad[] = {{2, "SNAPPY"}, {4, "GZIP"}, {8, "BROTLI"}, {10, "LZ4 "}, {40, "unknown"}};
	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		struct mem m;
		write_file(FLOE_PQ_UNCOMPRESSED, FLOE_PQ_PROFILE_DEFAULT, false, 10, 4096, &m);
		/* ColumnMetaData of "ts": path_in_schema ["ts"], then codec 0. */
		static const uint8_t pat[] = {0x18, 0x02, 't', 's', 0x15, 0x00};
		size_t at = find_last(&m, pat, sizeof(pat));
		m.p[at + 5] = bad[k].zz;
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		uint64_t rows, off;
		char why[256];
		int rc = read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off);
		assert_int_equal(rc, FLOE_EUNSUPPORTED);
		assert_non_null(strstr(why, bad[k].name));
		assert_non_null(strstr(why, "'ts'"));
		assert_int_equal(a.used, 0);
		free(m.p);
	}
}

static void test_limits(void **state)
{
	(void)state;
	struct mem m;
	write_file(FLOE_PQ_ZSTD, FLOE_PQ_PROFILE_DEFAULT, false, 3000, 8192, &m);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	uint64_t rows, off;
	char why[256];
	struct floe_pq_reader_options o = {.max_page = 2048};
	assert_int_equal(read_all(&a, m.p, m.n, &o, 0, &rows, why, sizeof(why), &off), FLOE_ELIMIT);
	assert_non_null(strstr(why, "exceeds the limit of 2048"));
	o = (struct floe_pq_reader_options){.max_footer = 100};
	assert_int_equal(read_all(&a, m.p, m.n, &o, 0, &rows, why, sizeof(why), &off), FLOE_ELIMIT);
	assert_non_null(strstr(why, "footer"));
	o = (struct floe_pq_reader_options){.max_map_entries = 3};
	assert_int_equal(read_all(&a, m.p, m.n, &o, 0, &rows, why, sizeof(why), &off), FLOE_ELIMIT);
	assert_non_null(strstr(why, "more than 3 entries"));
	/* A budget too small for the pages: out of memory, cleanly. */
	floe_alloc_init(&a, 20000);
	assert_int_equal(read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off),
			 FLOE_ENOMEM);
	assert_int_equal(a.used, 0);
	free(m.p);
}

static void test_frame(void **state)
{
	(void)state;
	struct mem m;
	write_file(FLOE_PQ_LZ4_RAW, FLOE_PQ_PROFILE_DEFAULT, false, 10, 4096, &m);
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	uint64_t rows, off;
	char why[256];
	assert_int_equal(read_all(&a, m.p, 11, NULL, 0, &rows, why, sizeof(why), &off),
			 FLOE_EFORMAT);
	m.p[0] = 'X';
	assert_int_equal(read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off),
			 FLOE_EFORMAT);
	assert_non_null(strstr(why, "start"));
	m.p[0] = 'P';
	m.p[m.n - 5] = 0x7f; /* the footer's length, now beyond the file */
	assert_int_equal(read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off),
			 FLOE_ECORRUPT);
	assert_int_equal(off, m.n - 8);
	memcpy(m.p + m.n - 4, "PARE", 4);
	assert_int_equal(read_all(&a, m.p, m.n, NULL, 0, &rows, why, sizeof(why), &off),
			 FLOE_EUNSUPPORTED);
	assert_non_null(strstr(why, "encrypted"));
	assert_int_equal(a.used, 0);
	free(m.p);
}

static void save(const char *dir, const char *name, const uint8_t *p, size_t n)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	fclose(f);
}

/* FLOE_PQ_CORPUS=DIR: the fuzz target's seed corpus. */
static void test_write_corpus(void **state)
{
	(void)state;
	const char *dir = getenv("FLOE_PQ_CORPUS");
	if (!dir)
		return;
	static const char *const cn[] = {"uncompressed", "zstd", "lz4_raw"};
	for (int k = 0; k < 6; k++) {
		struct mem m;
		write_file(codecs[k % 3], (enum floe_pq_profile)(k / 3), k == 3, 60, 512, &m);
		char name[64];
		snprintf(name, sizeof(name), "%s_%s", cn[k % 3], k / 3 ? "compact" : "default");
		save(dir, name, m.p, m.n);
		if (k == 1) {
			save(dir, "damaged_truncated", m.p, m.n / 2);
			size_t body = 4 + header_len(m.p + 4, m.n - 4);
			m.p[body + 1] ^= 1;
			save(dir, "damaged_crc", m.p, m.n);
		}
		if (k == 5) {
			m.p[m.n - 8 - 20] ^= 0x40; /* in the footer */
			save(dir, "damaged_footer", m.p, m.n);
		}
		free(m.p);
	}
	struct mem m;
	write_file(FLOE_PQ_ZSTD, FLOE_PQ_PROFILE_DEFAULT, false, 0, 512, &m);
	save(dir, "empty", m.p, m.n);
	free(m.p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_alloc_failures),
	    cmocka_unit_test(test_source_failures),
	    cmocka_unit_test(test_crc_mismatch),
	    cmocka_unit_test(test_damage_everywhere),
	    cmocka_unit_test(test_unsupported_codec),
	    cmocka_unit_test(test_limits),
	    cmocka_unit_test(test_frame),
	    cmocka_unit_test(test_write_corpus),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
