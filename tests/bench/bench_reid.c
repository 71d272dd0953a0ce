/* The cost of giving spooled files the table's field ids (floe_spool_reid, what the
 * committer does before it commits an entry sealed under provisional ids): ENTRIES
 * entries of ROWS log lines each are sealed into a spool in DIR as the agent seals them
 * (zstd, the built-in columns), then each entry is re-id'd (two columns' ids replaced),
 * timed alone. Prints the spooled bytes, the wall and CPU time per entry and per MB.
 * The rewrite reads each file once, writes it again, fsyncs it and renames it, and
 * replaces the entry file (fsync, rename, fsync of the directory): the fsyncs cost the
 * most for small entries, the copy for large ones.
 *
 * usage: bench_reid DIR ENTRIES ROWS. Prints figures only. */
#include "agent/lake/spool.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/footer_ids.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int seal(struct floe_batch *b, uint64_t seq, int rows)
{
	static const char *apps[] = {"sshd", "nginx", "cron", "kernel"};
	for (int i = 0; i < rows; i++) {
		char msg[160];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = 1700000000000000LL + (int64_t)seq * 60000000 + i * 1000;
		r.host = (struct floe_str){"edge-017", 8};
		r.source = (struct floe_str){"/var/log/app.log", 16};
		r.has_offset = true;
		r.offset = (int64_t)seq * rows * 120 + i * 120;
		r.has_severity = true;
		r.severity = i % 8;
		r.app = (struct floe_str){apps[i % 4], strlen(apps[i % 4])};
		snprintf(msg, sizeof(msg),
			 "request %d of batch %" PRIu64 " from 10.0.%d.%d took %d ms status %d", i,
			 seq, i % 256, (i * 7) % 256, (i * 13) % 997, 200 + (i % 5) * 100);
		r.message = (struct floe_str){msg, strlen(msg)};
		if (floe_batch_add(b, seq, &r) < 0)
			return -1;
	}
	const uint8_t pos[] = {1, (uint8_t)seq};
	return floe_batch_seal(b, 0, pos, sizeof(pos));
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: bench_reid DIR ENTRIES ROWS\n");
		return 2;
	}
	floe_log_set_level(FLOE_LOG_WARN);
	int entries = atoi(argv[2]), rows = atoi(argv[3]);
	char spooldir[512];
	snprintf(spooldir, sizeof(spooldir), "%s/spool", argv[1]);
	static struct floe_alloc alloc;
	floe_alloc_init(&alloc, (size_t)1 << 30);
	struct floe_part_spec spec;
	char *parts[] = {"day(ts)"};
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.target_file_size = 64u << 20;
	struct floe_spool *spool = NULL;
	struct floe_batch *batch = NULL;
	if (floe_part_spec_from_config(&spec, parts, 1, NULL) ||
	    floe_spool_open(&alloc, spooldir, &spec, &spool) ||
	    floe_batch_new(&alloc, &spec, &bo, spool, &batch)) {
		fprintf(stderr, "bench_reid: setup failed\n");
		return 1;
	}
	for (int i = 1; i <= entries; i++)
		if (seal(batch, (uint64_t)i, rows)) {
			fprintf(stderr, "bench_reid: seal %d failed\n", i);
			return 1;
		}
	uint64_t bytes = floe_spool_bytes(spool);
	/* Severity and app stand for two typed columns: the work does not depend on which. */
	const struct floe_pq_reid map[] = {{7, 40, 0}, {8, 41, 0}};
	double wall = 0, cpu = 0, worst = 0;
	size_t files = 0;
	for (int i = 1; i <= entries; i++) {
		struct floe_spool_entry *e = NULL;
		struct floe_err err = {0};
		if (floe_spool_load(spool, (uint64_t)i, &e)) {
			fprintf(stderr, "bench_reid: load %d failed\n", i);
			return 1;
		}
		files += e->nfiles;
		double w0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_PROCESS_CPUTIME_ID);
		int rc = floe_spool_reid(spool, e, map, 2, &err);
		double w = now_s(CLOCK_MONOTONIC) - w0;
		cpu += now_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
		wall += w;
		worst = w > worst ? w : worst;
		floe_spool_entry_free(&alloc, e);
		if (rc) {
			fprintf(stderr, "bench_reid: entry %d: %s\n", i, err.msg);
			return 1;
		}
	}
	double mb = (double)bytes / 1e6;
	printf("re-id of %d entries (%zu files, %d rows each): %.1f MB spooled, %.1f MB after; "
	       "wall %.1f ms (%.2f ms/entry, worst %.2f ms; %.2f ms/MB), cpu %.1f ms (%.3f "
	       "ms/entry; %.2f ms/MB)\n",
	       entries, files, rows, mb, (double)floe_spool_bytes(spool) / 1e6, wall * 1e3,
	       wall * 1e3 / entries, worst * 1e3, wall * 1e3 / mb, cpu * 1e3, cpu * 1e3 / entries,
	       cpu * 1e3 / mb);
	floe_batch_free(batch);
	floe_spool_free(spool);
	return 0;
}
