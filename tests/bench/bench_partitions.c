/* Partition fan-out: ROWS log lines round-robin over 1, 8, 64 and 1,000 active partitions,
 * under bucket(N, host) (N buckets over 100,000 hosts) and hour(ts) (N interleaved hours),
 * through the batch as the runner drives it (32 MiB budget, 9 open writers and a 4 MiB
 * stage as floe check states them for the defaults, zstd, 64 MiB target files; sealed
 * when the batch asks), each configuration in a process of its own. Prints, per run, the
 * seals, data files, their bytes, lines/s and the peak RSS, and each figure's ratio to the
 * 1-partition run of the same transform. Prints figures only.
 *
 * usage: bench_partitions DIR [ROWS] (default 1,000,000); DIR is left with the spools. */
#include "agent/lake/spool.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct result {
	uint64_t seals, files, bytes;
	double secs;
	long rss_kb;
	int rc;
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Line i: an sshd line with varied digits (compresses about 4-6x, as real ones do). */
static size_t log_line(uint64_t i, char *out, size_t cap)
{
	uint64_t r = (i + 1) * 6364136223846793005ULL + 1442695040888963407ULL;
	r ^= r >> 29;
	return (size_t)snprintf(out, cap,
				"Failed password for invalid user u%05u from 10.%u.%u.%u port %u ssh2 seq=%llu",
				(unsigned)(r % 100000), (unsigned)(r >> 20) % 256, (unsigned)(r >> 28) % 256,
				(unsigned)(r >> 36) % 256, (unsigned)(r >> 44) % 65536, (unsigned long long)i);
}

static int seal(struct floe_batch *b, struct floe_spool *sp, struct floe_alloc *a, uint64_t seq,
		struct result *out)
{
	const uint8_t pos[] = {1};
	int rc = floe_batch_seal(b, 1, pos, sizeof(pos));
	struct floe_spool_entry *e = NULL;
	if (rc || (rc = floe_spool_load(sp, seq, &e)))
		return rc;
	out->seals++;
	out->files += e->nfiles;
	for (size_t i = 0; i < e->nfiles; i++)
		out->bytes += (uint64_t)e->files[i].size;
	floe_spool_entry_free(a, e);
	return 0;
}

static struct result run(const char *dir, bool hour, unsigned parts, uint64_t rows)
{
	struct result res = {0};
	struct floe_alloc a;
	struct floe_part_spec spec;
	struct floe_spool *sp = NULL;
	struct floe_batch *b = NULL;
	char text[64], path[512];
	snprintf(text, sizeof(text), hour ? "hour(ts)" : "bucket(%u, host)", parts);
	char *entries[] = {text};
	floe_alloc_init(&a, 32u << 20);
	snprintf(path, sizeof(path), "%s/%s-%u", dir, hour ? "hour" : "bucket", parts);
	mkdir(path, 0755);
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.pq.zstd_level = 3;
	bo.pq.row_group_size = 64u << 20;
	bo.pq.dictionary_cap = FLOE_BATCH_DICTIONARY_CAP;
	bo.pq.memory_budget = FLOE_BATCH_PAGE_BUDGET;
	bo.target_file_size = 64u << 20;
	bo.max_writers = 9;
	bo.stage_buffer = 4u << 20;
	if ((res.rc = floe_part_spec_from_config(&spec, entries, 1, NULL)) ||
	    (res.rc = floe_spool_open(&a, path, &spec, &sp)) ||
	    (res.rc = floe_batch_new(&a, &spec, &bo, sp, &b)))
		return res;
	uint64_t seq = 1;
	double t0 = now();
	for (uint64_t i = 0; i < rows && res.rc == 0; i++) {
		char msg[160], host[32];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		size_t len = log_line(i, msg, sizeof(msg));
		unsigned k = (unsigned)(i % parts);
		snprintf(host, sizeof(host), "edge-%05u", hour ? 1 : (unsigned)(i % 100000));
		r.ts = r.received_at = 1772323200LL * 1000000 + (hour ? (int64_t)k * 3600 * 1000000 : 0) +
				      (int64_t)(i / parts) * 1000;
		r.host = (struct floe_str){host, strlen(host)};
		r.source = (struct floe_str){"/var/log/auth.log", 17};
		r.app = (struct floe_str){"sshd", 4};
		r.has_offset = true;
		r.offset = (int64_t)i * 100;
		r.message = (struct floe_str){msg, len};
		int rc = floe_batch_add(b, seq, &r);
		if (rc == 2 && (res.rc = seal(b, sp, &a, seq++, &res)) == 0)
			rc = floe_batch_add(b, seq, &r);
		if (rc == 1)
			res.rc = seal(b, sp, &a, seq++, &res);
		else if (rc < 0 || rc > 1)
			res.rc = rc < 0 ? rc : FLOE_ELIMIT;
	}
	if (res.rc == 0 && floe_batch_rows(b))
		res.rc = seal(b, sp, &a, seq, &res);
	res.secs = now() - t0;
	floe_batch_free(b);
	floe_spool_free(sp);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	res.rss_kb = ru.ru_maxrss;
	return res;
}

/* run() in a child process, for a peak RSS of its own. */
static struct result run_apart(const char *dir, bool hour, unsigned parts, uint64_t rows)
{
	struct result res = {.rc = FLOE_EINVAL};
	int fd[2];
	if (pipe(fd))
		return res;
	pid_t pid = fork();
	if (pid == 0) {
		close(fd[0]);
		res = run(dir, hour, parts, rows);
		ssize_t w = write(fd[1], &res, sizeof(res));
		_exit(w == (ssize_t)sizeof(res) ? 0 : 1);
	}
	close(fd[1]);
	if (pid < 0 || read(fd[0], &res, sizeof(res)) != (ssize_t)sizeof(res))
		res.rc = FLOE_EINVAL;
	close(fd[0]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return res;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_partitions DIR [ROWS]\n");
		return 2;
	}
	uint64_t rows = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000000;
	static const unsigned counts[] = {1, 8, 64, 1000};
	floe_log_set_level(FLOE_LOG_WARN);
	printf("%-9s %5s %6s %7s %12s %10s %8s  %s\n", "transform", "parts", "seals", "files", "bytes",
	       "lines/s", "RSS MiB", "ratio to 1 partition: files bytes lines/s RSS");
	for (int hour = 0; hour < 2; hour++) {
		struct result ref = {0};
		for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
			struct result r = run_apart(argv[1], hour, counts[c], rows);
			if (r.rc) {
				printf("%-9s %5u failed: %s\n", hour ? "hour" : "bucket", counts[c], floe_strerror(r.rc));
				continue;
			}
			if (c == 0)
				ref = r;
			double lps = (double)rows / r.secs, ref_lps = (double)rows / ref.secs;
			printf("%-9s %5u %6" PRIu64 " %7" PRIu64 " %12" PRIu64 " %10.0f %8.1f  %.0fx %.2fx %.2fx %.2fx\n",
			       hour ? "hour" : "bucket", counts[c], r.seals, r.files, r.bytes, lps, r.rss_kb / 1024.0,
			       (double)r.files / (double)ref.files, (double)r.bytes / (double)ref.bytes,
			       lps / ref_lps, (double)r.rss_kb / (double)ref.rss_kb);
			fflush(stdout);
		}
	}
	return 0;
}
