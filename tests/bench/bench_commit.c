/* Commit latency and metadata bytes per commit as a table ages: one
 * agent commits tiny batches (3 rows each, sealed into the spool as the agent does) into
 * a local warehouse through floe_table_commit, the agent's commit path, with a simulated
 * clock that moves by the commit interval between commits (snapshot ages, and so expiry,
 * follow it). At each checkpoint it prints, over the last WINDOW commits before it: the
 * commit latency p50 and p99 (wall time of floe_table_commit alone: the seal is not
 * timed), the metadata bytes written per commit (metadata.json, manifest lists and
 * manifests, counted by a store that wraps the local one), and the current metadata.json
 * size and snapshot count, the files and bytes in metadata/ on disk, and the CPU time of
 * a commit (mean over the window). The data file's copy into the warehouse is in the
 * latency, not in the bytes.
 *
 * usage: bench_commit DIR on|off|defaults INTERVAL_S MAX_AGE_MS SECONDS CHECKPOINT...
 *   on:  Iceberg's default merging and expiry (min-count-to-merge 100, target 8 MiB,
 *        max snapshot age MAX_AGE_MS (0 = the 5-day default), 1 snapshot kept at least,
 *        100 metadata-log entries), and delete-after-commit on so that the run does not
 *        keep every metadata.json it wrote on disk (it changes nothing written);
 *   off: neither merging nor expiry (what floe did before it merged and expired on commit);
 *   defaults: a configuration without properties (Iceberg's defaults, none of them set
 *        in the file): the table floe creates gets floe's own properties for an
 *        unattended writer, and goes by them (MAX_AGE_MS is not used).
 * The run stops at the last checkpoint, or at the first checkpoint after SECONDS of
 * committing (the "off" series grows quadratically). Prints figures only. */
#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "platform/log.h"
#include "platform/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>

#define WINDOW 500
#define DAY_US (86400LL * 1000000)

/* A store that forwards to the local one and counts the bytes written under metadata/. */
struct counting {
	struct floe_store base;
	struct floe_store *in;
	uint64_t meta_bytes;
};

static struct floe_store *in_of(struct floe_store *s)
{
	return ((struct counting *)s)->in;
}

static void count(struct floe_store *s, const char *key, uint64_t n)
{
	if (strstr(key, "/metadata/"))
		((struct counting *)s)->meta_bytes += n;
}

static int c_get(struct floe_store *s, const char *key, size_t max, void **data, size_t *len)
{
	return in_of(s)->ops->get(in_of(s), key, max, data, len);
}

static int c_put(struct floe_store *s, const char *key, const void *data, size_t len)
{
	int rc = in_of(s)->ops->put(in_of(s), key, data, len);
	if (rc == 0)
		count(s, key, len);
	return rc;
}

static int c_put_if_absent(struct floe_store *s, const char *key, const void *data, size_t len)
{
	int rc = in_of(s)->ops->put_if_absent(in_of(s), key, data, len);
	if (rc == 0)
		count(s, key, len);
	return rc;
}

static uint64_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static int c_put_file(struct floe_store *s, const char *key, const char *path)
{
	int rc = in_of(s)->ops->put_file(in_of(s), key, path);
	if (rc == 0)
		count(s, key, file_size(path));
	return rc;
}

static int c_put_file_if_absent(struct floe_store *s, const char *key, const char *path)
{
	int rc = in_of(s)->ops->put_file_if_absent(in_of(s), key, path);
	if (rc == 0)
		count(s, key, file_size(path));
	return rc;
}

static int c_exists(struct floe_store *s, const char *key)
{
	return in_of(s)->ops->exists(in_of(s), key);
}

static int c_size(struct floe_store *s, const char *key, int64_t *size)
{
	return in_of(s)->ops->size(in_of(s), key, size);
}

static int c_remove(struct floe_store *s, const char *key)
{
	return in_of(s)->ops->remove(in_of(s), key);
}

static int c_list(struct floe_store *s, const char *prefix, int (*fn)(void *ctx, const char *key), void *ctx)
{
	return in_of(s)->ops->list(in_of(s), prefix, fn, ctx);
}

static void c_destroy(struct floe_store *s)
{
	(void)s;
}

static int c_read_at(struct floe_store *s, const char *key, uint64_t off, void *buf, size_t len)
{
	return in_of(s)->ops->read_at(in_of(s), key, off, buf, len);
}

static int c_remove_many(struct floe_store *s, const char *const *keys, size_t n, size_t *removed)
{
	return floe_store_remove_many(in_of(s), keys, n, removed);
}

static const struct floe_store_ops counting_ops = FLOE_STORE_OPS(c);

static int64_t sim_wall;
static int64_t fake_wall(void *ctx)
{
	(void)ctx;
	return sim_wall;
}

static void no_sleep(void *ctx, unsigned ms)
{
	(void)ctx;
	(void)ms;
}

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double now_s(void)
{
	return clock_s(CLOCK_MONOTONIC);
}

/* Files and bytes in the directory dir (not below). */
static void dir_usage(const char *dir, uint64_t *files, uint64_t *bytes)
{
	*files = *bytes = 0;
	DIR *d = opendir(dir);
	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		char path[768];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			(*files)++;
			*bytes += (uint64_t)st.st_size;
		}
	}
	closedir(d);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Seals 3 rows as spool entry seq. */
static int seal(struct floe_batch *b, uint64_t seq)
{
	for (int i = 0; i < 3; i++) {
		char msg[64];
		struct floe_record r;
		memset(&r, 0, sizeof(r));
		r.ts = r.received_at = sim_wall + i;
		r.host = (struct floe_str){"h1", 2};
		r.source = (struct floe_str){"/x.log", 6};
		snprintf(msg, sizeof(msg), "line %d of commit %" PRIu64, i, seq);
		r.message = (struct floe_str){msg, strlen(msg)};
		if (floe_batch_add(b, seq, &r) != 0)
			return -1;
	}
	const uint8_t pos[] = {1, (uint8_t)seq};
	return floe_batch_seal(b, sim_wall, pos, sizeof(pos));
}

static void report(const char *mode, uint64_t n, double *lat, double *cpu, uint64_t *bytes, size_t w,
		   struct floe_table *t, const char *wh)
{
	double sorted[WINDOW], cpu_sum = 0;
	uint64_t sum = 0, files, dir_bytes;
	for (size_t i = 0; i < w; i++)
		cpu_sum += cpu[i];
	memcpy(sorted, lat, w * sizeof(*lat));
	qsort(sorted, w, sizeof(*sorted), cmp_double);
	for (size_t i = 0; i < w; i++)
		sum += bytes[i];
	char path[512];
	snprintf(path, sizeof(path), "%s/default/logs/metadata/v%" PRId64 ".metadata.json", wh, floe_table_version(t));
	uint64_t json = file_size(path);
	snprintf(path, sizeof(path), "%s/default/logs/metadata", wh);
	dir_usage(path, &files, &dir_bytes);
	printf("%-4s %7" PRIu64 " commits: latency p50 %7.2f ms p99 %7.2f ms, cpu %6.2f ms/commit, "
	       "metadata %9.0f bytes/commit, metadata.json %8" PRIu64 " bytes, %5zu snapshots, "
	       "metadata/ %6" PRIu64 " files %11" PRIu64 " bytes\n",
	       mode, n, sorted[w / 2] * 1e3, sorted[(w * 99) / 100] * 1e3, cpu_sum / (double)w * 1e3,
	       (double)sum / (double)w, json, floe_ice_meta_snapshot_count(floe_table_meta(t)), files,
	       dir_bytes);
	fflush(stdout);
}

int main(int argc, char **argv)
{
	if (argc < 7) {
		fprintf(stderr, "usage: bench_commit DIR on|off|defaults INTERVAL_S MAX_AGE_MS SECONDS "
				"CHECKPOINT...\n");
		return 2;
	}
	floe_log_set_level(FLOE_LOG_WARN);
	const char *dir = argv[1];
	bool defaults = strcmp(argv[2], "defaults") == 0;
	bool on = defaults || strcmp(argv[2], "on") == 0;
	int64_t interval_us = atoll(argv[3]) * 1000000LL;
	uint64_t max_age = strtoull(argv[4], NULL, 10);
	double budget = atof(argv[5]);
	char wh[256], spooldir[256];
	snprintf(wh, sizeof(wh), "%s/wh", dir);
	snprintf(spooldir, sizeof(spooldir), "%s/spool", dir);
	static struct floe_alloc alloc;
	floe_alloc_init(&alloc, (size_t)1 << 30);
	struct floe_part_spec spec;
	char *parts[] = {"day(ts)"};
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.target_file_size = 1u << 20;
	bo.max_writers = 2;
	struct floe_spool *spool = NULL;
	struct floe_batch *batch = NULL;
	struct counting cs = {.base = {.ops = &counting_ops}};
	struct floe_err err = {0};
	if (floe_part_spec_from_config(&spec, parts, 1, NULL) || floe_spool_open(&alloc, spooldir, &spec, &spool) ||
	    floe_store_local_new(&alloc, wh, &cs.in) || floe_batch_new(&alloc, &spec, &bo, spool, &batch)) {
		fprintf(stderr, "bench_commit: setup failed\n");
		return 1;
	}
	memcpy(cs.base.uri, cs.in->uri, sizeof(cs.base.uri));
	cs.base.alloc = cs.in->alloc;
	struct floe_table_props props = {
	    .merge_enabled = true,
	    .merge_min_count = 100,
	    .merge_target_bytes = 8u << 20,
	    .max_snapshot_age_ms = max_age ? max_age : 5 * 86400 * 1000ULL,
	    .min_snapshots = 1,
	    .previous_versions_max = 100,
	    .delete_after_commit = true,
	};
	if (defaults) {
		/* What the configuration gives when the file sets no property. */
		props.max_snapshot_age_ms = 5 * 86400 * 1000ULL;
		props.delete_after_commit = false;
		props.unset = ~0u;
	}
	sim_wall = 1700000000000000LL;
	struct floe_clock clock = {fake_wall, fake_wall, no_sleep, NULL};
	struct floe_table_options o = {
	    .store = &cs.base,
	    .namespace = "default",
	    .name = "logs",
	    .spec = &spec,
	    .agent_id = "bench",
	    .installation_id = "aaaaaaaa-0000-4000-8000-00000000000a",
	    .props = on ? &props : NULL,
	    .clock = &clock,
	};
	struct floe_table *t = NULL;
	if (floe_table_open(&alloc, &o, &t, &err)) {
		fprintf(stderr, "bench_commit: %s\n", floe_err_text(&err, err.code));
		return 1;
	}
	static double lat[WINDOW], cpu[WINDOW];
	static uint64_t bytes[WINDOW];
	double start = now_s();
	uint64_t n = 0;
	int status = 0;
	for (int cp = 6; cp < argc && status == 0; cp++) {
		uint64_t until = strtoull(argv[cp], NULL, 10);
		for (; n < until; n++) {
			struct floe_spool_entry *e = NULL;
			if (seal(batch, n + 1) || floe_spool_load(spool, n + 1, &e)) {
				fprintf(stderr, "bench_commit: seal %" PRIu64 " failed\n", n + 1);
				status = 1;
				break;
			}
			uint64_t b0 = cs.meta_bytes;
			double c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
			double t0 = now_s();
			int rc = floe_table_commit(t, spool, &e, 1, &err);
			double t1 = now_s();
			cpu[n % WINDOW] = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
			if (rc == 0)
				rc = floe_spool_remove(spool, e);
			floe_spool_entry_free(&alloc, e);
			if (rc) {
				fprintf(stderr, "bench_commit: commit %" PRIu64 ": %s\n", n + 1, floe_err_text(&err, rc));
				status = 1;
				break;
			}
			lat[n % WINDOW] = t1 - t0;
			bytes[n % WINDOW] = cs.meta_bytes - b0;
			sim_wall += interval_us;
		}
		if (status == 0)
			report(argv[2], n, lat, cpu, bytes, n < WINDOW ? n : WINDOW, t, wh);
		if (now_s() - start > budget) {
			if (cp + 1 < argc)
				printf("%-4s stopped after %" PRIu64 " commits: over %.0f s\n", argv[2], n, budget);
			break;
		}
	}
	floe_table_free(t);
	floe_batch_free(batch);
	floe_spool_free(spool);
	floe_store_free(cs.in);
	return status;
}
