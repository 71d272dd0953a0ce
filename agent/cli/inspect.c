/* floe inspect: what a table holds, read from its metadata, manifest list and manifests
 * alone (the way any engine would), so it also shows tables other writers made. */
#include "agent/cli/commands.h"

#include "agent/config/config.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "platform/fs.h"
#include "platform/path.h"
#include "platform/store.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FILE_MAX (256u << 20)

static const char inspect_help[] =
	"usage: floe inspect LOCATION\n"
	"       floe inspect -c FILE\n"
	"\n"
	"LOCATION is a table directory or file:// URI (<warehouse>/<namespace>/<table>);\n"
	"with -c, the table of a configuration file (a local or an S3 warehouse).\n"
	"Prints the table uuid, the current snapshot, every snapshot with its summary, and\n"
	"the live data files of the current snapshot with their record counts and sizes,\n"
	"and the distribution of their sizes (count, min, p10, median, p90, max, total).\n";

struct live {
	int64_t files, records, bytes;
	int64_t *sizes; /* every live file's size, for the distribution; NULL if out of memory */
	size_t cap;
	bool lost;	/* a size could not be kept: no distribution */
};

/* Keeps a file's size for the distribution. A failure only costs the distribution. */
static void keep_size(struct live *l, int64_t size)
{
	if (l->lost)
		return;
	if ((size_t)l->files == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		int64_t *p = floe_realloc(NULL, l->sizes, cap * sizeof(*p));
		if (!p) {
			l->lost = true;
			return;
		}
		l->sizes = p;
		l->cap = cap;
	}
	l->sizes[l->files] = size;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile p (0..100) of n sorted values. */
static int64_t rank(const int64_t *v, size_t n, unsigned p)
{
	size_t k = (n * p + 99) / 100;
	return v[k ? k - 1 : 0];
}

/* Small files are what readers and the table's metadata pay for: the distribution of the
 * live files' sizes shows whether files reach their target size. */
static void print_sizes(struct live *l)
{
	size_t n = (size_t)l->files;
	if (n == 0 || l->lost)
		return;
	qsort(l->sizes, n, sizeof(*l->sizes), cmp_i64);
	printf("live file-sizes count=%zu min=%" PRId64 " p10=%" PRId64 " median=%" PRId64 " p90=%" PRId64
	       " max=%" PRId64 " total=%" PRId64 "\n",
	       n, l->sizes[0], rank(l->sizes, n, 10), rank(l->sizes, n, 50), rank(l->sizes, n, 90),
	       l->sizes[n - 1], l->bytes);
}

static int print_file(void *ctx, int status, const char *path, int64_t records, int64_t size)
{
	struct live *l = ctx;
	if (status == 2)
		return 0; /* deleted entries are not live */
	printf("  %s  records=%" PRId64 " size=%" PRId64 "\n", path, records, size);
	keep_size(l, size);
	l->files++;
	l->records += records;
	l->bytes += size;
	return 0;
}

/* Reads an object the table names by URI; it must be inside the table's store. */
static int read_uri(struct floe_store *st, const char *uri, void **data, size_t *len)
{
	char key[4096];
	int rc = floe_store_key(st, uri, key, sizeof(key));
	if (rc)
		return rc;
	return floe_store_get(st, key, FILE_MAX, data, len);
}

static void print_time(int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	printf("%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
	       tm.tm_hour, tm.tm_min, tm.tm_sec, (int)(ms % 1000));
}

static int live_files(struct floe_store *st, const struct floe_ice_meta *m, long idx, struct live *l)
{
	int64_t id, parent, seq, ts;
	const char *list_uri;
	int rc = floe_ice_meta_snapshot_at(m, (size_t)idx, &id, &parent, &seq, &ts, &list_uri);
	if (rc || !list_uri)
		return rc ? rc : FLOE_EUNSUPPORTED;
	void *data = NULL;
	size_t len = 0;
	if ((rc = read_uri(st, list_uri, &data, &len))) {
		fprintf(stderr, "floe: %s: %s\n", list_uri, floe_strerror(rc));
		return rc;
	}
	struct floe_ice_manifest_list *list = NULL;
	rc = floe_ice_manifest_list_read(NULL, data, len, &list);
	floe_store_free_data(data);
	if (rc) {
		fprintf(stderr, "floe: %s: %s\n", list_uri, floe_strerror(rc));
		return rc;
	}
	for (size_t i = 0; i < floe_ice_manifest_list_count(list) && rc == 0; i++) {
		const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(list, i);
		if ((rc = read_uri(st, e->path, &data, &len))) {
			fprintf(stderr, "floe: %s: %s\n", e->path, floe_strerror(rc));
			break;
		}
		rc = floe_ice_manifest_read(NULL, data, len, print_file, l);
		floe_store_free_data(data);
		if (rc)
			fprintf(stderr, "floe: %s: %s\n", e->path, floe_strerror(rc));
	}
	floe_ice_manifest_list_free(list);
	return rc;
}

/* Prints the table at prefix in st. */
static int inspect_table(struct floe_store *st, const char *prefix, const char *name)
{
	struct floe_table *t = NULL;
	int rc = floe_table_load(NULL, st, prefix, &t);
	if (rc) {
		fprintf(stderr, "floe: %s: %s\n", name,
			rc == FLOE_ENOTFOUND ? "no Iceberg table here (no metadata/v*.metadata.json)"
					     : floe_strerror(rc));
		return FLOE_EXIT_RUNTIME;
	}
	const struct floe_ice_meta *m = floe_table_meta(t);
	int64_t current = floe_ice_meta_current_snapshot_id(m);
	printf("table %s\n", floe_ice_meta_location(m));
	printf("uuid %s\n", floe_ice_meta_uuid(m));
	printf("format-version %d\n", floe_ice_meta_format_version(m));
	printf("metadata v%" PRId64 ".metadata.json\n", floe_table_version(t));
	printf("last-sequence-number %" PRId64 "\n", floe_ice_meta_last_sequence(m));
	if (current >= 0)
		printf("current-snapshot %" PRId64 "\n", current);
	else
		printf("current-snapshot none\n");
	size_t n = floe_ice_meta_snapshot_count(m);
	printf("snapshots %zu\n", n);
	for (size_t i = 0; i < n; i++) {
		int64_t id, parent, seq, ts;
		const char *ml;
		if (floe_ice_meta_snapshot_at(m, i, &id, &parent, &seq, &ts, &ml))
			continue;
		printf("snapshot %" PRId64 " seq=%" PRId64 " parent=", id, seq);
		if (parent >= 0)
			printf("%" PRId64, parent);
		else
			printf("none");
		printf(" time=");
		print_time(ts);
		printf("%s\n", id == current ? " (current)" : "");
		size_t k = floe_ice_meta_snapshot_summary_count(m, i);
		for (size_t j = 0; j < k; j++) {
			const char *key, *value;
			if (floe_ice_meta_snapshot_summary_at(m, i, j, &key, &value) == 0)
				printf("  %s=%s\n", key, value);
		}
	}
	int status = FLOE_EXIT_OK;
	if (current >= 0) {
		struct live l = {0, 0, 0, NULL, 0, false};
		printf("live data files:\n");
		if (live_files(st, m, floe_ice_meta_find_snapshot(m, current), &l))
			status = FLOE_EXIT_RUNTIME;
		printf("live files=%" PRId64 " records=%" PRId64 " bytes=%" PRId64 "\n", l.files, l.records,
		       l.bytes);
		print_sizes(&l);
		floe_free(NULL, l.sizes);
	}
	floe_table_free(t);
	return status;
}

int floe_cmd_inspect(int argc, char **argv)
{
	bool help = argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
	bool with_config = argc == 3 && strcmp(argv[1], "-c") == 0;
	if (help || (argc != 2 && !with_config) || (argc == 2 && argv[1][0] == '-')) {
		fputs(inspect_help, help ? stdout : stderr);
		return help ? FLOE_EXIT_OK : FLOE_EXIT_USAGE;
	}
	struct floe_store *st = NULL;
	int rc, status;
	if (with_config) {
		struct floe_config *cfg = floe_cli_load_config(argv[2]);
		if (!cfg)
			return FLOE_EXIT_USAGE;
		char why[1024] = "", prefix[1024];
		rc = floe_warehouse_open(cfg, false, &st, why, sizeof(why));
		if (rc) {
			fprintf(stderr, "floe: %s\n", why);
			floe_config_free(cfg);
			return FLOE_EXIT_RUNTIME;
		}
		snprintf(prefix, sizeof(prefix), "%s/%s", cfg->lake.namespace, cfg->logs.name);
		status = inspect_table(st, prefix, cfg->lake.warehouse);
		floe_config_free(cfg);
	} else {
		char path[4096], abs[4096];
		rc = floe_path_from_uri(argv[1], path, sizeof(path));
		if (rc == 0)
			rc = floe_path_absolute(path, abs, sizeof(abs));
		if (rc) {
			fprintf(stderr, "floe: %s: %s\n", argv[1], floe_strerror(rc));
			return FLOE_EXIT_USAGE;
		}
		if ((rc = floe_store_local_new(abs, &st))) {
			fprintf(stderr, "floe: %s: %s\n", abs, floe_strerror(rc));
			return FLOE_EXIT_RUNTIME;
		}
		status = inspect_table(st, "", abs);
	}
	floe_store_free(st);
	return status;
}
