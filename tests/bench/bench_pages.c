/* Page compression against zstd's own parameters: cuts a file's lines into the string
 * pages the Parquet writer makes (PLAIN: each value after its 4-byte length; or, with
 * --delta, the lengths first and the bytes after, as DELTA_LENGTH_BYTE_ARRAY lays them
 * out), compresses each page with floe's compressor and with zstd at the same level and
 * nothing else set (zstd's own parameters for the page's size), and prints both totals,
 * how many pages floe's made larger and the worst page's ratio. A change to the page
 * compression must leave "larger" at 0 on every corpus of corpora.sh.
 *
 * usage: bench_pages LINES.txt [--page-size BYTES] [--level N] [--delta]
 * Prints pages=P floe=B zstd=B ratio=R larger=N worst=W floe_s=S zstd_s=S. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "formats/base/alloc.h"
#include "formats/parquet/compress.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct totals {
	size_t pages, floe, zstd, larger;
	double worst, floe_s, zstd_s;
};

/* Compresses one page both ways and adds it to t. */
static int one_page(struct floe_pq_compressor *c, ZSTD_CCtx *z, const uint8_t *page, size_t n,
		    uint8_t *out, size_t cap, struct totals *t)
{
	const uint8_t *fo;
	size_t fl;
	double t0 = now_s();
	int rc = floe_pq_compressor_run(c, page, n, &fo, &fl);
	double t1 = now_s();
	size_t zl = ZSTD_compress2(z, out, cap, page, n);
	double t2 = now_s();
	if (rc || ZSTD_isError(zl)) {
		fprintf(stderr, "compress: %d %s\n", rc, ZSTD_isError(zl) ? ZSTD_getErrorName(zl) : "");
		return 1;
	}
	t->pages++;
	t->floe += fl;
	t->zstd += zl;
	t->larger += fl > zl;
	if ((double)fl / (double)zl > t->worst)
		t->worst = (double)fl / (double)zl;
	t->floe_s += t1 - t0;
	t->zstd_s += t2 - t1;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s LINES.txt [--page-size BYTES] [--level N] [--delta]\n", argv[0]);
		return 2;
	}
	size_t psize = 512u << 10;
	int level = 3, delta = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--page-size") && i + 1 < argc)
			psize = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--delta"))
			delta = 1;
	}
	FILE *f = fopen(argv[1], "rb");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	struct floe_alloc alloc;
	floe_alloc_init(&alloc, 0);
	struct floe_pq_compressor *c = NULL;
	int err = floe_pq_compressor_new(&alloc, FLOE_PQ_ZSTD, level, &c);
	ZSTD_CCtx *z = ZSTD_createCCtx();
	size_t cap = ZSTD_compressBound(psize + 70000);
	uint8_t *page = malloc(psize + 70000), *lens = malloc(psize + 70000), *out = malloc(cap);
	char *line = malloc(65536);
	if (!c || !z || !page || !lens || !out || !line ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, level))) {
		fprintf(stderr, "setup failed (%d)\n", err);
		return 1;
	}
	struct totals t = {0};
	size_t used = 0, lused = 0;
	for (;;) {
		int more = fgets(line, 65536, f) != NULL;
		if (more) {
			uint32_t len = (uint32_t)strcspn(line, "\n");
			uint8_t *lp = delta ? lens + lused : page + used;
			memcpy(lp, &len, 4); /* little-endian hosts, as the benchmarks run on */
			if (delta)
				lused += 4;
			else
				used += 4;
			memcpy(page + used, line, len);
			used += len;
		}
		if (used + lused >= psize || (!more && used + lused > 0)) {
			if (delta) {
				memmove(page + lused, page, used);
				memcpy(page, lens, lused);
			}
			if (one_page(c, z, page, used + lused, out, cap, &t))
				return 1;
			used = lused = 0;
		}
		if (!more)
			break;
	}
	printf("pages=%zu floe=%zu zstd=%zu ratio=%.4f larger=%zu worst=%.4f floe_s=%.3f zstd_s=%.3f\n",
	       t.pages, t.floe, t.zstd, t.zstd ? (double)t.floe / (double)t.zstd : 0.0, t.larger, t.worst,
	       t.floe_s, t.zstd_s);
	fclose(f);
	floe_pq_compressor_free(c);
	ZSTD_freeCCtx(z);
	free(page);
	free(lens);
	free(out);
	free(line);
	return 0;
}
