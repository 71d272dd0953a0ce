/* Parquet writer benchmark: generates log rows from the loghub samples, with every
 * number in a message replaced by a random one and a unique request id appended (so a
 * message dictionary cannot cheat), and writes them with floe's writer. Prints rows/s,
 * bytes/row and the writer's peak memory. Also writes the raw lines (for the zstd/gzip
 * reference) and, with --dump, an uncompressed Parquet copy that the DuckDB side loads.
 *
 * usage: bench_parquet ROWS CODEC(zstd|lz4_raw|uncompressed) OUT.parquet [--level N]
 *        [--raw LINES.txt] [--samples DIR] [--gen-only] [--profile default|compact]
 *        [--page-size BYTES] [--row-group BYTES] [--budget BYTES] [--bloom host,app]
 *        [--no-page-index] [--threads N] [--pregen] [--verbatim] [--lines FILE]
 * --threads N compresses large pages on N worker threads (0, the default: inline).
 * --verbatim writes the samples' lines as they are, each once (at most ROWS of them).
 * --lines FILE takes the messages from FILE's lines as they are (at most ROWS; 0 = all),
 * the other columns as the agent fills them for a tailed file: one host and source,
 * the line's byte offset, a read time that advances every 64 KiB, nothing else.
 * --pregen generates every row in memory before the clock starts, so the time is the
 * writer's alone even when it runs on several threads (RSS then includes the rows).
 * The heap is tuned as the agent tunes it (platform/heap.h) unless FLOE_BENCH_NO_HEAP_TUNE
 * is set. */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/parquet/writer.h"
#include "platform/heap.h"
#include "platform/worker.h"

#include "samples.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --verbatim: the samples' lines as they are, each once. */
static int verbatim;

/* --lines: the file's text, its lines' starts (nlines + 1 of them, the last one past the
 * end) and how many there are. */
static char *lines_text;
static size_t *line_at;
static size_t nlines;

static void load_lines(const char *path)
{
	FILE *f = fopen(path, "rb");
	long size = -1;
	if (!f || fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
		perror(path);
		exit(2);
	}
	lines_text = malloc((size_t)size + 1);
	size_t cap = 1024;
	line_at = malloc(cap * sizeof(*line_at));
	if (!lines_text || !line_at || fread(lines_text, 1, (size_t)size, f) != (size_t)size) {
		perror(path);
		exit(2);
	}
	fclose(f);
	if (size > 0 && lines_text[size - 1] != '\n')
		lines_text[size++] = '\n';
	line_at[0] = 0;
	for (size_t o = 0; o < (size_t)size; o++) {
		if (lines_text[o] != '\n')
			continue;
		if (nlines + 2 > cap && !(line_at = realloc(line_at, (cap *= 2) * sizeof(*line_at)))) {
			perror("realloc");
			exit(2);
		}
		line_at[++nlines] = o + 1;
	}
}

/* Row i of --lines, as floe run makes it from a tailed file. */
static size_t make_line_row(uint64_t i, struct floe_record *r, char *msg, size_t cap)
{
	static const char host[] = "edge-01", source[] = "/var/log/corpus.log";
	memset(r, 0, sizeof(*r));
	size_t off = line_at[i], len = line_at[i + 1] - off - 1;
	r->ts = 1764633600000000LL + (int64_t)(off >> 16) * 2000;
	r->received_at = r->ts;
	r->host = (struct floe_str){host, sizeof(host) - 1};
	r->source = (struct floe_str){source, sizeof(source) - 1};
	r->has_offset = true;
	r->offset = (int64_t)off;
	if (len > cap)
		len = cap;
	memcpy(msg, lines_text + off, len);
	r->message = (struct floe_str){msg, len};
	return len;
}

/* Message i: template with digit runs randomised, plus a unique request id. */
static size_t make_message(uint64_t i, char *out, size_t cap)
{
	const char *t = templates[i % ntemplates];
	if (verbatim) {
		size_t n = strlen(t) < cap ? strlen(t) : cap - 1;
		memcpy(out, t, n);
		return n;
	}
	size_t o = 0;
	for (; *t && o + 40 < cap; t++) {
		if (*t >= '0' && *t <= '9')
			out[o++] = (char)('0' + rnd() % 10);
		else
			out[o++] = *t;
	}
	o += (size_t)snprintf(out + o, cap - o, " request_id=%016" PRIx64, rnd() ^ i);
	return o;
}

static const char *const hosts[] = {"edge-01", "edge-02", "edge-03", "edge-04",
				    "edge-05", "edge-06", "edge-07", "edge-08"};
static const char *const sources[] = {"/var/log/syslog", "/var/log/auth.log", "/var/log/app/app.log",
				      "/var/log/nginx/access.log", "/var/log/kern.log"};
static const char *const apps[] = {"sshd", "kernel", "nginx", "app", "cron"};

/* Row i's fields; the message goes to msg. Returns the message length. */
static size_t make_row(uint64_t i, struct floe_record *r, char *msg, size_t cap, int64_t *offsets)
{
	if (lines_text)
		return make_line_row(i, r, msg, cap);
	memset(r, 0, sizeof(*r));
	r->ts = 1764633600000000LL + (int64_t)i * 1000 + (int64_t)(rnd() % 1000);
	r->received_at = r->ts + 2000 + (int64_t)(rnd() % 5000);
	const char *h = hosts[i % 8], *s = sources[(i / 3) % 5];
	r->host = (struct floe_str){h, strlen(h)};
	r->source = (struct floe_str){s, strlen(s)};
	r->has_offset = true;
	r->offset = offsets[(i / 3) % 5];
	r->has_severity = (i % 4) != 0;
	r->severity = (int32_t)(rnd() % 8);
	const char *app = apps[(i / 3) % 5];
	r->app = (struct floe_str){app, strlen(app)};
	size_t len = make_message(i, msg, cap);
	r->message = (struct floe_str){msg, len};
	offsets[(i / 3) % 5] += (int64_t)len + 1;
	return len;
}

/* The offload's wait, timed: how long the calling thread stood waiting for pages (or
 * ran them itself, when no thread had taken them yet). */
static double wait_s;
static void timed_wait(void *pool, void *handle)
{
	double t = now_s();
	floe_worker_wait_cb(pool, handle);
	wait_s += now_s() - t;
}

static int file_sink(void *ctx, const void *data, size_t len)
{
	return fwrite(data, 1, len, ctx) == len ? 0 : -5;
}

int main(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: %s ROWS CODEC OUT [--level N] [--raw FILE] [--samples DIR] "
				"[--gen-only]\n", argv[0]);
		return 2;
	}
	uint64_t rows = strtoull(argv[1], NULL, 10);
	const char *codec = argv[2], *out = argv[3], *raw = NULL, *samples = "tests/data/loghub";
	const char *lines = NULL;
	int level = 0, gen_only = 0, pregen = 0;
	unsigned threads = 0;
	struct floe_pq_options opt;
	memset(&opt, 0, sizeof(opt));
	opt.row_group_size = 64u << 20;
	/* Bloom filter columns by name: host (3), app (8), message (11). */
	struct floe_pq_bloom_column bloom[3];
	size_t nbloom = 0;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--level") && i + 1 < argc)
			level = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--raw") && i + 1 < argc)
			raw = argv[++i];
		else if (!strcmp(argv[i], "--samples") && i + 1 < argc)
			samples = argv[++i];
		else if (!strcmp(argv[i], "--gen-only"))
			gen_only = 1;
		else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
			opt.profile = !strcmp(argv[++i], "compact") ? FLOE_PQ_PROFILE_COMPACT
								    : FLOE_PQ_PROFILE_DEFAULT;
		else if (!strcmp(argv[i], "--page-size") && i + 1 < argc)
			opt.page_size = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--row-group") && i + 1 < argc)
			opt.row_group_size = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
			opt.memory_budget = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			threads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--pregen"))
			pregen = 1;
		else if (!strcmp(argv[i], "--verbatim"))
			verbatim = 1;
		else if (!strcmp(argv[i], "--lines") && i + 1 < argc)
			lines = argv[++i];
		else if (!strcmp(argv[i], "--no-page-index"))
			opt.no_page_index = true;
		else if (!strcmp(argv[i], "--bloom") && i + 1 < argc) {
			const char *b = argv[++i];
			if (strstr(b, "host"))
				bloom[nbloom++] = (struct floe_pq_bloom_column){3, 0};
			if (strstr(b, "app"))
				bloom[nbloom++] = (struct floe_pq_bloom_column){8, 0};
			if (strstr(b, "message"))
				bloom[nbloom++] = (struct floe_pq_bloom_column){11, 0};
		}
	}
	if (lines) {
		load_lines(lines);
		if (rows == 0 || rows > nlines)
			rows = nlines;
	} else {
		load_samples(samples);
	}
	if (verbatim && rows > ntemplates)
		rows = ntemplates;
	/* As the agent does (floe run): the writer's page buffers stay in the heap. */
	if (!getenv("FLOE_BENCH_NO_HEAP_TUNE"))
		floe_heap_tune();
	opt.bloom = bloom;
	opt.bloom_count = nbloom;
	opt.codec = !strcmp(codec, "lz4_raw") ? FLOE_PQ_LZ4_RAW
		    : !strcmp(codec, "uncompressed") ? FLOE_PQ_UNCOMPRESSED : FLOE_PQ_ZSTD;
	opt.zstd_level = level; /* 0 = the profile's default */
	opt.created_by = "floe bench";
	struct floe_alloc alloc;
	floe_alloc_init(&alloc, 0);
	FILE *f = fopen(out, "wb");
	FILE *rawf = raw ? fopen(raw, "wb") : NULL;
	if (!f || (raw && !rawf)) {
		perror("open");
		return 1;
	}
	int err = 0;
	struct floe_worker *pool = NULL;
	struct floe_pq_offload off = {NULL, floe_worker_submit_cb, timed_wait};
	if (threads) {
		if ((err = floe_worker_new(threads, &pool))) {
			fprintf(stderr, "worker: %d\n", err);
			return 1;
		}
		off.ctx = pool;
		opt.offload = &off;
	}
	struct floe_pq_writer *w = NULL;
	if (!gen_only) {
		err = floe_pq_writer_new(&alloc, floe_log_columns(), FLOE_LOG_NCOLS, &opt, file_sink, f, &w);
		if (err) {
			fprintf(stderr, "writer: %d\n", err);
			return 1;
		}
	}
	char msg[70000];
	int64_t offsets[5] = {0};
	/* --pregen: every row made before the clock starts (records borrow from text). */
	struct floe_record *recs = NULL;
	char *text = NULL;
	if (pregen) {
		size_t cap = (lines ? line_at[nlines] : (size_t)rows * 160) + sizeof(msg), used = 0;
		recs = malloc((size_t)rows * sizeof(*recs));
		text = malloc(cap);
		if (!recs || !text) {
			perror("malloc");
			return 1;
		}
		for (uint64_t i = 0; i < rows; i++) {
			size_t len = make_row(i, &recs[i], msg, sizeof(msg), offsets);
			if (used + len > cap) {
				fprintf(stderr, "pregen: messages longer than expected\n");
				return 1;
			}
			memcpy(text + used, msg, len);
			recs[i].message.p = text + used;
			used += len;
			if (rawf) {
				fwrite(msg, 1, len, rawf);
				fputc('\n', rawf);
			}
		}
	}
	struct rusage ru0, rt0;
	getrusage(RUSAGE_SELF, &ru0);
	getrusage(RUSAGE_THREAD, &rt0);
	double cpu0 = (double)ru0.ru_utime.tv_sec + (double)ru0.ru_utime.tv_usec / 1e6 +
		      (double)ru0.ru_stime.tv_sec + (double)ru0.ru_stime.tv_usec / 1e6;
	double t0 = now_s();
	for (uint64_t i = 0; i < rows; i++) {
		struct floe_record gen, *r = &gen;
		if (pregen) {
			r = &recs[i];
		} else {
			size_t len = make_row(i, &gen, msg, sizeof(msg), offsets);
			if (rawf) {
				fwrite(msg, 1, len, rawf);
				fputc('\n', rawf);
			}
		}
		if (w) {
			struct floe_pq_value v[FLOE_LOG_NCOLS];
			floe_record_to_row(r, v, FLOE_LOG_NCOLS);
			if ((err = floe_pq_writer_add_row(w, v))) {
				fprintf(stderr, "add_row: %d\n", err);
				return 1;
			}
		}
	}
	if (w && (err = floe_pq_writer_finish(w))) {
		fprintf(stderr, "finish: %d\n", err);
		return 1;
	}
	double secs = now_s() - t0;
	uint64_t size = w ? floe_pq_writer_file_size(w) : 0;
	struct rusage ru, rt;
	getrusage(RUSAGE_SELF, &ru);
	getrusage(RUSAGE_THREAD, &rt);
	/* One line, key=value, for the driver script. */
	/* CPU time as well: on a loaded machine it is steadier than the wall clock. */
	double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		     (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6 - cpu0;
	/* The calling thread's share: with compression threads, the part they cannot take. */
	double main_cpu = (double)(rt.ru_utime.tv_sec - rt0.ru_utime.tv_sec) +
			  (double)(rt.ru_utime.tv_usec - rt0.ru_utime.tv_usec) / 1e6 +
			  (double)(rt.ru_stime.tv_sec - rt0.ru_stime.tv_sec) +
			  (double)(rt.ru_stime.tv_usec - rt0.ru_stime.tv_usec) / 1e6;
	printf("rows=%" PRIu64 " seconds=%.3f bytes=%" PRIu64 " writer_peak=%zu rss_kib=%ld cpu=%.3f "
	       "main_cpu=%.3f main_sys=%.3f",
	       rows, secs, size, alloc.peak, ru.ru_maxrss, cpu, main_cpu,
	       (double)(rt.ru_stime.tv_sec - rt0.ru_stime.tv_sec) + (double)(rt.ru_stime.tv_usec - rt0.ru_stime.tv_usec) / 1e6);
	if (pool) {
		unsigned long by_waiters = 0, ran = floe_worker_ran(pool, &by_waiters);
		printf(" wait_s=%.3f tasks=%lu run_by_waiter=%lu", wait_s, ran, by_waiters);
	}
	printf("\n");
	floe_pq_writer_free(w);
	floe_worker_free(pool);
	free(recs);
	free(text);
	fclose(f);
	if (rawf)
		fclose(rawf);
	return 0;
}
