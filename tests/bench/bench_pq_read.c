/* Parquet reader benchmark: reads a file with floe's streaming reader (through pread,
 * as a local-file source would) and prints rows/s, MB/s of the file, the reader's peak
 * memory and the process's peak RSS. With --rewrite OUT, every row read is also written
 * with floe's writer (the round trip compaction makes), and the figures are those of the
 * whole. tests/bench/pq_read.sh runs it on the Parquet benchmark's 1,000,000-row files,
 * side by side with DuckDB's single-threaded rewrite of the same files.
 *
 * usage: bench_pq_read FILE [--rewrite OUT] [--codec zstd|lz4_raw|uncompressed]
 *        [--profile default|compact] [--budget BYTES] [--level N] [--columns N]
 *        [--threads N]
 * --columns N reads only the first N columns (projection). --threads N lets the writer
 * compress large pages on N worker threads (agent.compress_threads; 0, the default:
 * inline). The writer's options default
 * to the agent's: ZSTD, default profile, a 1 MiB budget, bloom filters on host and app.
 * Prints one key=value line. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/reader.h"
#include "formats/parquet/writer.h"
#include "platform/heap.h"
#include "platform/worker.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

static int pread_at(void *ctx, uint64_t off, void *buf, size_t len)
{
	int fd = *(int *)ctx;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd, (char *)buf + done, len - done, (off_t)(off + done));
		if (n <= 0)
			return -5;
		done += (size_t)n;
	}
	return 0;
}

static int file_sink(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) == len ? 0 : -5;
}

struct args {
	const char *in, *out;
	struct floe_pq_options wo;
	size_t ncols_sel;
	unsigned threads;
};

static void parse_args(int argc, char **argv, struct args *a)
{
	const char *codec = "zstd";
	a->in = argv[1];
	a->out = NULL;
	a->ncols_sel = 0;
	a->threads = 0;
	a->wo = (struct floe_pq_options){.memory_budget = 1 << 20, .created_by = "floe bench"};
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--rewrite") && i + 1 < argc)
			a->out = argv[++i];
		else if (!strcmp(argv[i], "--codec") && i + 1 < argc)
			codec = argv[++i];
		else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
			a->wo.profile = !strcmp(argv[++i], "compact") ? FLOE_PQ_PROFILE_COMPACT
								      : FLOE_PQ_PROFILE_DEFAULT;
		else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
			a->wo.memory_budget = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			a->wo.zstd_level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--columns") && i + 1 < argc)
			a->ncols_sel = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			a->threads = (unsigned)atoi(argv[++i]);
	}
	a->wo.codec = !strcmp(codec, "lz4_raw")	       ? FLOE_PQ_LZ4_RAW
		      : !strcmp(codec, "uncompressed") ? FLOE_PQ_UNCOMPRESSED
						       : FLOE_PQ_ZSTD;
	/* Bloom filters on host (3) and app (8), as the Parquet benchmark writes them. */
	static const struct floe_pq_bloom_column bloom[] = {{3, 0}, {8, 0}};
	a->wo.bloom = bloom;
	a->wo.bloom_count = 2;
}

/* Reads every row, writing each with w when it is not NULL. */
static int copy_rows(struct floe_pq_reader *r, struct floe_pq_writer *w, size_t ncols,
		     uint64_t *rows, uint64_t *bytes)
{
	const struct floe_pq_value *row;
	int rc;
	while ((rc = floe_pq_reader_next(r, &row)) == 1) {
		(*rows)++;
		if (w && (rc = floe_pq_writer_add_row(w, row))) {
			fprintf(stderr, "add_row: %d\n", rc);
			return rc;
		}
		/* Touch what was read, so that nothing is left undone. */
		for (size_t c = 0; c < ncols; c++)
			*bytes += row[c].len + row[c].n + (uint64_t)row[c].i;
	}
	if (rc < 0) {
		fprintf(stderr, "next: %d %s at %zu\n", rc, floe_pq_reader_error(r)->msg,
			floe_pq_reader_error(r)->offset);
		return rc;
	}
	if (w && (rc = floe_pq_writer_finish(w))) {
		fprintf(stderr, "finish: %d\n", rc);
		return rc;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr,
			"usage: %s FILE [--rewrite OUT] [--codec C] [--profile P] "
			"[--budget BYTES] [--level N] [--columns N] [--threads N]\n",
			argv[0]);
		return 2;
	}
	struct args args;
	parse_args(argc, argv, &args);
	const char *in = args.in, *out = args.out;
	struct floe_pq_options wo = args.wo;
	size_t ncols_sel = args.ncols_sel;
	/* As the agent does (floe run): the page buffers stay in the heap. */
	if (!getenv("FLOE_BENCH_NO_HEAP_TUNE"))
		floe_heap_tune();
	int fd = open(in, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		perror(in);
		return 1;
	}
	FILE *of = out ? fopen(out, "wb") : NULL;
	if (out && !of) {
		perror(out);
		return 1;
	}
	struct floe_alloc ra, wa;
	floe_alloc_init(&ra, 0);
	floe_alloc_init(&wa, 0);
	double cpu0 = cpu_s(), t0 = now_s();
	struct floe_pq_source src = {&fd, (uint64_t)st.st_size, pread_at};
	struct floe_pq_reader *r = NULL;
	struct floe_err why;
	int rc = floe_pq_reader_open(&ra, &src, NULL, &r, &why);
	if (rc) {
		fprintf(stderr, "open: %d %s\n", rc, why.msg);
		return 1;
	}
	size_t ncols;
	const struct floe_pq_column *cols = floe_pq_reader_columns(r, &ncols);
	if (ncols_sel && ncols_sel < ncols) {
		size_t sel[4096];
		for (size_t i = 0; i < ncols_sel; i++)
			sel[i] = i;
		if (floe_pq_reader_select(r, sel, ncols_sel))
			return 1;
		ncols = ncols_sel;
	}
	struct floe_worker *pool = NULL;
	struct floe_pq_offload off = {NULL, floe_worker_submit_cb, floe_worker_wait_cb};
	if (of && args.threads) {
		if ((rc = floe_worker_new(args.threads, &pool))) {
			fprintf(stderr, "worker: %d\n", rc);
			return 1;
		}
		off.ctx = pool;
		wo.offload = &off;
	}
	struct floe_pq_writer *w = NULL;
	if (of && (rc = floe_pq_writer_new(&wa, cols, ncols, &wo, file_sink, of, &w))) {
		fprintf(stderr, "writer: %d\n", rc);
		return 1;
	}
	uint64_t rows = 0, bytes = 0;
	if (copy_rows(r, w, ncols, &rows, &bytes))
		return 1;
	double secs = now_s() - t0, cpu = cpu_s() - cpu0;
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("rows=%" PRIu64 " seconds=%.3f cpu=%.3f file_bytes=%lld mb_s=%.1f rows_s=%.0f "
	       "reader_peak=%zu writer_peak=%zu rss_kib=%ld out_bytes=%" PRIu64 " check=%" PRIu64
	       "\n",
	       rows, secs, cpu, (long long)st.st_size, (double)st.st_size / 1e6 / secs,
	       (double)rows / secs, ra.peak, wa.peak, ru.ru_maxrss,
	       w ? floe_pq_writer_file_size(w) : 0, bytes);
	floe_pq_writer_free(w);
	floe_worker_free(pool);
	floe_pq_reader_free(r);
	if (of)
		fclose(of);
	close(fd);
	return 0;
}
