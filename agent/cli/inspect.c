/* floe inspect: what a table holds, read from its metadata, manifest list and manifests
 * alone (the way any engine would), so it also shows tables other writers made. */
#include "agent/cli/commands.h"

#include "agent/config/config.h"
#include "agent/lake/catalog_rest.h"
#include "agent/lake/table.h"
#include "agent/lake/warehouse.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "formats/json/json.h"
#include "platform/fs.h"
#include "platform/path.h"
#include "platform/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define FILE_MAX (256u << 20)
/* inspect --json's document: about 250 bytes a live file, so 1 GiB holds millions. */
#define JSON_MAX ((size_t)1 << 30)

static const char inspect_help[] =
	"usage: floe inspect [--json] LOCATION\n"
	"       floe inspect [--json] [--endpoint URL] [--region R] [--path-style] s3://BUCKET/PREFIX\n"
	"       floe inspect [--json] -c FILE [TABLE]\n"
	"\n"
	"LOCATION is a table directory or file:// URI (<warehouse>/<namespace>/<table>), or the\n"
	"s3:// URI of a table; with -c, the logs table of a configuration file (a local or an\n"
	"S3 warehouse), or its raw table TABLE. Prints the table uuid, the current snapshot,\n"
	"every snapshot with its summary, the agents and installations that committed to it, and the live data files\n"
	"of the current snapshot with their record counts and sizes, and the distribution of\n"
	"their sizes (count, min, p10, median, p90, max, total), by size bucket, and the share\n"
	"of small files (under 32 MiB, half the default target_file_size); and the current\n"
	"snapshot's manifests (count and bytes). A table whose metadata\n"
	"history has a gap or goes back (a stray or deleted metadata file) is refused, as\n"
	"floe run refuses to commit to it.\n"
	"\n"
	"--json prints one JSON object instead, for other tools to read exactly what the\n"
	"current snapshot holds: table, uuid, format-version, metadata, current-snapshot-id\n"
	"(null when none), schema (the current Iceberg schema as the metadata holds it),\n"
	"files (the live data files: path as the manifests name it, records, size), records\n"
	"and bytes. Files that compaction replaced or that a failed commit left behind are not\n"
	"in it, though they may still be on disk.\n"
	"\n"
	"For s3:// the endpoint is --endpoint, else AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL,\n"
	"else https://s3.<region>.amazonaws.com; the region --region, else AWS_REGION or\n"
	"AWS_DEFAULT_REGION, else us-east-1. Addressing is path-style with --path-style or for\n"
	"an endpoint on an IP address or localhost. Credentials come from AWS_ACCESS_KEY_ID and\n"
	"AWS_SECRET_ACCESS_KEY (AWS_SESSION_TOKEN), ~/.aws/credentials (AWS_PROFILE), a web\n"
	"identity token or the container endpoint, as lake.s3.credentials' default.\n";

/* Size buckets of the health report: under 1 MiB, 8 MiB, 32 MiB, 128 MiB, and above; the
 * first three are small files (under half the default target_file_size). */
#define NBUCKETS 5
static const int64_t bucket_top[NBUCKETS - 1] = {1 << 20, 8 << 20, 32 << 20, 128 << 20};
static const char *const bucket_name[NBUCKETS] = {"<1MiB", "1-8MiB", "8-32MiB", "32-128MiB", ">=128MiB"};

struct live {
	int64_t files, records, bytes;
	int64_t buckets[NBUCKETS];
	int64_t manifests, manifest_bytes;
	int64_t *sizes; /* every live file's size, for the distribution; NULL if out of memory */
	size_t cap;
	bool lost;	/* a size could not be kept: no distribution */
	struct floe_buf *json; /* --json: the files array being written, else NULL */
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

/* The table's health: how many files are small, and what the current snapshot's
 * manifests weigh (what every query plans over). */
static void print_health(const struct live *l)
{
	printf("live file-buckets");
	for (size_t b = 0; b < NBUCKETS; b++)
		printf(" %s=%" PRId64, bucket_name[b], l->buckets[b]);
	int64_t small = l->buckets[0] + l->buckets[1] + l->buckets[2];
	printf("\nsmall-files count=%" PRId64 " ratio=%.3f\n", small,
	       l->files ? (double)small / (double)l->files : 0.0);
	printf("manifests count=%" PRId64 " bytes=%" PRId64 "\n", l->manifests, l->manifest_bytes);
}

static int print_file(void *ctx, int status, const char *path, int64_t records, int64_t size)
{
	struct live *l = ctx;
	if (status == 2)
		return 0; /* deleted entries are not live */
	if (l->json) {
		int rc = floe_buf_puts(l->json, l->files ? ",\n  {\"path\": " : "\n  {\"path\": ");
		if (rc || (rc = floe_json_write_str(l->json, path, strlen(path))) ||
		    (rc = floe_buf_printf(l->json, ", \"records\": %" PRId64 ", \"size\": %" PRId64 "}",
					  records, size)))
			return rc;
	} else {
		printf("  %s  records=%" PRId64 " size=%" PRId64 "\n", path, records, size);
	}
	keep_size(l, size);
	size_t b = 0;
	while (b < NBUCKETS - 1 && size >= bucket_top[b])
		b++;
	l->buckets[b]++;
	l->files++;
	l->records += records;
	l->bytes += size;
	return 0;
}

/* Reads an object the table names by URI; it must be inside the table's store. Prints
 * why not. */
static int read_uri(struct floe_store *st, const char *uri, void **data, size_t *len)
{
	char key[FLOE_PATH_MAX];
	int rc = floe_store_key(st, uri, key, sizeof(key));
	if (rc == -EXDEV)
		fprintf(stderr, "floe: %s is not inside %s (the table was written at another location and "
				"copied or moved here): floe inspect reads files under the table's location only\n",
			uri, st->uri);
	else if (rc == 0 && (rc = floe_store_get(st, key, FILE_MAX, data, len)) != 0)
		fprintf(stderr, "floe: %s: %s\n", uri, floe_strerror(rc));
	return rc;
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
	if ((rc = read_uri(st, list_uri, &data, &len)))
		return rc;
	struct floe_ice_manifest_list *list = NULL;
	struct floe_err err;
	rc = floe_ice_manifest_list_read(NULL, data, len, &list, &err);
	floe_store_free_data(st, data);
	if (rc) {
		fprintf(stderr, "floe: %s: %s\n", list_uri, floe_err_text(&err, rc));
		return rc;
	}
	for (size_t i = 0; i < floe_ice_manifest_list_count(list) && rc == 0; i++) {
		const struct floe_ice_manifest_entry *e = floe_ice_manifest_list_at(list, i);
		l->manifests++;
		l->manifest_bytes += e->length;
		if ((rc = read_uri(st, e->path, &data, &len)))
			break;
		rc = floe_ice_manifest_read(NULL, data, len, print_file, l, &err);
		floe_store_free_data(st, data);
		if (rc)
			fprintf(stderr, "floe: %s: %s\n", e->path, floe_err_text(&err, rc));
	}
	floe_ice_manifest_list_free(list);
	return rc;
}

/* --json: the table's identity, current schema and live data files as one JSON object on
 * stdout, written whole or not at all (a half object would read as a smaller table). */
static int print_json(struct floe_store *st, const struct floe_table *t)
{
	const struct floe_ice_meta *m = floe_table_meta(t);
	int64_t current = floe_ice_meta_current_snapshot_id(m);
	struct floe_buf b;
	floe_buf_init(&b, NULL, JSON_MAX);
	struct live l = {.json = &b};
	const char *loc = floe_ice_meta_location(m), *uuid = floe_ice_meta_uuid(m);
	const struct floe_json *schema = floe_ice_meta_current_schema(m);
	int rc = floe_buf_puts(&b, "{\"table\": ");
	rc = rc ? rc : floe_json_write_str(&b, loc, strlen(loc));
	rc = rc ? rc : floe_buf_puts(&b, ", \"uuid\": ");
	rc = rc ? rc : floe_json_write_str(&b, uuid, strlen(uuid));
	rc = rc ? rc : floe_buf_printf(&b, ", \"format-version\": %d, \"metadata\": \"v%" PRId64
					  ".metadata.json\", \"current-snapshot-id\": ",
					  floe_ice_meta_format_version(m), floe_table_version(t));
	if (!rc && current >= 0)
		rc = floe_buf_printf(&b, "%" PRId64, current);
	else if (!rc)
		rc = floe_buf_puts(&b, "null");
	rc = rc ? rc : floe_buf_puts(&b, ",\n\"schema\": ");
	rc = rc ? rc : schema ? floe_json_write(schema, &b) : floe_buf_puts(&b, "null");
	rc = rc ? rc : floe_buf_puts(&b, ",\n\"files\": [");
	if (!rc && current >= 0)
		rc = live_files(st, m, floe_ice_meta_find_snapshot(m, current), &l);
	rc = rc ? rc : floe_buf_printf(&b, "%s], \"records\": %" PRId64 ", \"bytes\": %" PRId64 "}\n",
				       l.files ? "\n" : "", l.records, l.bytes);
	if (rc == 0 && fwrite(b.data, 1, b.len, stdout) != b.len)
		rc = -EIO;
	if (rc)
		fprintf(stderr, "floe: inspect --json: %s\n", floe_strerror(rc));
	floe_buf_fini(&b);
	floe_free(NULL, l.sizes);
	return rc ? FLOE_EXIT_RUNTIME : FLOE_EXIT_OK;
}

/* Prints who commits to the table: one line per agent id and installation in the current
 * snapshot's ancestry, with its commits and last commit-seq, and a warning for an agent
 * id that more than one installation uses (what makes floe run stop). */
static void print_writers(const struct floe_ice_meta *m)
{
	enum { MAX_WRITERS = 64 };
	struct {
		const char *agent, *inst;
		long commits;
		const char *last_seq;
	} w[MAX_WRITERS];
	size_t n = 0, more = 0;
	int64_t id = floe_ice_meta_current_snapshot_id(m);
	for (size_t guard = floe_ice_meta_snapshot_count(m); id >= 0 && guard > 0; guard--) {
		long i = floe_ice_meta_find_snapshot(m, id);
		int64_t sid, parent, seq, ts;
		const char *ml;
		if (i < 0 || floe_ice_meta_snapshot_at(m, (size_t)i, &sid, &parent, &seq, &ts, &ml))
			break;
		id = parent;
		const char *agent = floe_ice_meta_snapshot_summary(m, (size_t)i, "floe.agent-id");
		const char *inst = floe_ice_meta_snapshot_summary(m, (size_t)i, "floe.installation-id");
		if (!agent)
			continue;
		inst = inst ? inst : "(none: an older floe)";
		size_t k = 0;
		while (k < n && !(strcmp(w[k].agent, agent) == 0 && strcmp(w[k].inst, inst) == 0))
			k++;
		if (k == n && n == MAX_WRITERS) {
			more++;
			continue;
		}
		if (k == n) {
			w[n].agent = agent;
			w[n].inst = inst;
			w[n].commits = 0;
			w[n].last_seq = floe_ice_meta_snapshot_summary(m, (size_t)i, "floe.commit-seq");
			n++;
		}
		w[k].commits++;
	}
	if (n == 0)
		return;
	printf("writers (newest first):\n");
	for (size_t k = 0; k < n; k++) {
		size_t shared = 0;
		for (size_t j = 0; j < n; j++)
			shared += strcmp(w[j].agent, w[k].agent) == 0;
		printf("  agent %s installation %s commits=%ld last-commit-seq=%s%s\n", w[k].agent, w[k].inst,
		       w[k].commits, w[k].last_seq ? w[k].last_seq : "?",
		       shared > 1 ? "  (agent id shared by several installations)" : "");
	}
	if (more)
		printf("  (%zu more)\n", more);
}

static int print_table(struct floe_store *st, struct floe_table *t, bool json);

/* Prints the table at prefix in st, or the one a REST catalog has (catalog not NULL) under
 * name. */
static int inspect_table(struct floe_store *st, struct floe_catalog_rest *catalog, const char *prefix,
			 const char *name, bool json)
{
	struct floe_table *t = NULL;
	struct floe_err why = {0};
	int rc = catalog ? floe_table_load_catalog(NULL, catalog, prefix, &t, &why)
			 : floe_table_load(NULL, st, prefix, &t, &why);
	if (rc) {
		/* The same decision a commit would make: a history with a gap or a step back is
		 * shown as refused, not as whatever a probe happens to reach. */
		fprintf(stderr, "floe: %s: %s\n", name, floe_err_text(&why, rc));
		return FLOE_EXIT_RUNTIME;
	}
	return print_table(catalog ? floe_table_store(t) : st, t, json);
}

static int print_table(struct floe_store *st, struct floe_table *t, bool json)
{
	if (json) {
		int status = print_json(st, t);
		floe_table_free(t);
		return status;
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
	print_writers(m);
	int status = FLOE_EXIT_OK;
	if (current >= 0) {
		struct live l = {0};
		printf("live data files:\n");
		if (live_files(st, m, floe_ice_meta_find_snapshot(m, current), &l))
			status = FLOE_EXIT_RUNTIME;
		printf("live files=%" PRId64 " records=%" PRId64 " bytes=%" PRId64 "\n", l.files, l.records,
		       l.bytes);
		print_sizes(&l);
		print_health(&l);
		floe_free(NULL, l.sizes);
	}
	floe_table_free(t);
	return status;
}

/* Appends s to a YAML double-quoted scalar in buf; false when s holds a character that
 * has no place in a URI or region (control characters, quotes, backslashes). */
static bool yaml_quoted(char *buf, size_t cap, size_t *len, const char *s)
{
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f || *p == '"' || *p == '\\')
			return false;
	int n = snprintf(buf + *len, cap - *len, "\"%s\"", s);
	if (n < 0 || (size_t)n >= cap - *len)
		return false;
	*len += (size_t)n;
	return true;
}

/* The configuration an s3:// location stands for, made from the options and the
 * environment and parsed like a file, so that the bucket, endpoint and region get the
 * same checks and messages. NULL after printing why. */
static struct floe_config *s3_location_config(const char *uri, const char *endpoint,
					      const char *region, bool path_style)
{
	if (!region)
		region = getenv("AWS_REGION");
	if (!region || !*region)
		region = getenv("AWS_DEFAULT_REGION");
	if (!region || !*region)
		region = "us-east-1";
	if (!endpoint)
		endpoint = getenv("AWS_ENDPOINT_URL_S3");
	if (!endpoint || !*endpoint)
		endpoint = getenv("AWS_ENDPOINT_URL");
	if (endpoint && !*endpoint)
		endpoint = NULL;
	char yaml[8192];
	size_t len = (size_t)snprintf(yaml, sizeof(yaml), "lake:\n  warehouse: ");
	bool ok = yaml_quoted(yaml, sizeof(yaml), &len, uri);
	ok = ok &&
	     (len += (size_t)snprintf(yaml + len, sizeof(yaml) - len,
				      "\n  catalog: {type: s3}\n  s3: {region: ")) < sizeof(yaml);
	ok = ok && yaml_quoted(yaml, sizeof(yaml), &len, region);
	if (ok && endpoint) {
		/* The operator named this endpoint for this one command: plain HTTP is their
		 * call (warehouse_open still warns about it). */
		len += (size_t)snprintf(yaml + len, sizeof(yaml) - len,
					", allow_http: true, endpoint: ");
		ok = len < sizeof(yaml) && yaml_quoted(yaml, sizeof(yaml), &len, endpoint);
		/* An endpoint on an IP address or localhost gets path-style requests from the
		 * S3 client itself (platform/s3/s3.c), whatever path_style says. */
	}
	ok = ok && (len += (size_t)snprintf(yaml + len, sizeof(yaml) - len, ", path_style: %s}\n",
					    path_style ? "true" : "false")) < sizeof(yaml);
	if (!ok) {
		fprintf(stderr, "floe: %s: not a usable s3:// location, endpoint or region\n", uri);
		return NULL;
	}
	struct floe_config *cfg = NULL;
	struct floe_err err = {0};
	int prc = floe_config_parse(NULL, "inspect", yaml, len, "inspect", &cfg, &err);
	if (prc) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&err, prc));
		return NULL;
	}
	return cfg;
}

/* Opens cfg's warehouse and prints the table at prefix in it. */
static int inspect_warehouse(const struct floe_config *cfg, const char *prefix, bool json)
{
	struct floe_store *st = NULL;
	struct floe_err why = {0};
	int rc = floe_warehouse_open(NULL, cfg, false, &st, &why);
	if (rc) {
		fprintf(stderr, "floe: %s\n", floe_err_text(&why, rc));
		return rc == FLOE_EINVAL ? FLOE_EXIT_USAGE : FLOE_EXIT_RUNTIME;
	}
	struct floe_catalog_rest *catalog = NULL;
	if (cfg->lake.catalog == FLOE_CATALOG_REST &&
	    (rc = floe_catalog_rest_new(NULL, cfg, NULL, NULL, &catalog, &why))) {
		floe_store_free(st);
		fprintf(stderr, "floe: %s\n", floe_err_text(&why, rc));
		return FLOE_EXIT_RUNTIME;
	}
	const char *table = strrchr(prefix, '/') ? strrchr(prefix, '/') + 1 : prefix;
	int status = catalog ? inspect_table(NULL, catalog, table, floe_catalog_rest_what(catalog), json)
			     : inspect_table(st, NULL, prefix, cfg->lake.warehouse, json);
	floe_catalog_rest_free(catalog);
	floe_store_free(st);
	return status;
}

/* floe inspect [--endpoint URL] [--region R] [--path-style] s3://BUCKET/PREFIX */
static int inspect_s3(int argc, char **argv, bool json)
{
	const char *endpoint = NULL, *region = NULL, *uri = NULL;
	bool path_style = false, bad = false;
	for (int i = 1; i < argc && !bad; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--region") == 0 && i + 1 < argc)
			region = argv[++i];
		else if (strcmp(argv[i], "--path-style") == 0)
			path_style = true;
		else if (!uri && strncmp(argv[i], "s3://", 5) == 0)
			uri = argv[i];
		else
			bad = true;
	}
	if (bad || !uri) {
		fputs(inspect_help, stderr);
		return FLOE_EXIT_USAGE;
	}
	struct floe_config *cfg = s3_location_config(uri, endpoint, region, path_style);
	if (!cfg)
		return FLOE_EXIT_USAGE;
	int status = inspect_warehouse(cfg, "", json);
	floe_config_free(cfg);
	return status;
}

int floe_cmd_inspect(int argc, char **argv)
{
	/* --json may stand anywhere; the rest is parsed without it. */
	char *args[16];
	bool json = false;
	int n = 0;
	for (int i = 0; i < argc; i++) {
		if (i > 0 && strcmp(argv[i], "--json") == 0)
			json = true;
		else if (n < (int)(sizeof(args) / sizeof(args[0])))
			args[n++] = argv[i];
		else
			n = (int)(sizeof(args) / sizeof(args[0])) + 1;
	}
	if (n > (int)(sizeof(args) / sizeof(args[0]))) {
		fputs(inspect_help, stderr);
		return FLOE_EXIT_USAGE;
	}
	argc = n;
	argv = args;
	bool help = argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0);
	bool with_config = (argc == 3 || argc == 4) && strcmp(argv[1], "-c") == 0;
	bool s3 = false;
	for (int i = 1; i < argc && !with_config; i++)
		s3 = s3 || strncmp(argv[i], "s3://", 5) == 0;
	if (s3 && !help)
		return inspect_s3(argc, argv, json);
	if (help || (argc != 2 && !with_config) || (argc == 2 && argv[1][0] == '-')) {
		fputs(inspect_help, help ? stdout : stderr);
		return help ? FLOE_EXIT_OK : FLOE_EXIT_USAGE;
	}
	int rc, status;
	if (with_config) {
		struct floe_config *cfg = floe_cli_load_config(argv[2], false);
		if (!cfg)
			return FLOE_EXIT_USAGE;
		const char *table = argc == 4 ? argv[3] : cfg->logs.name;
		if (floe_config_table_find(cfg, table) < 0) {
			fprintf(stderr, "floe: %s declares no raw table '%s'\n", argv[2], table);
			floe_config_free(cfg);
			return FLOE_EXIT_USAGE;
		}
		char prefix[1024];
		snprintf(prefix, sizeof(prefix), "%s/%s", cfg->lake.namespace, table);
		status = inspect_warehouse(cfg, prefix, json);
		floe_config_free(cfg);
		return status;
	}
	char path[FLOE_PATH_MAX], abs[FLOE_PATH_MAX];
	rc = floe_path_from_uri(argv[1], path, sizeof(path));
	if (rc == 0)
		rc = floe_path_absolute(path, abs, sizeof(abs));
	if (rc) {
		fprintf(stderr, "floe: %s: %s\n", argv[1], floe_strerror(rc));
		return FLOE_EXIT_USAGE;
	}
	struct floe_store *st = NULL;
	if ((rc = floe_store_local_new(NULL, abs, &st))) {
		fprintf(stderr, "floe: %s: %s\n", abs, floe_strerror(rc));
		return FLOE_EXIT_RUNTIME;
	}
	status = inspect_table(st, NULL, "", abs, json);
	floe_store_free(st);
	return status;
}
