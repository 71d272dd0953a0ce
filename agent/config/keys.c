/* floe's configuration keys: one row per key (name, type, field, default, range, help)
 * for the engine in keymap.c, plus the checks and cross-key rules a row cannot express.
 * Adding a key means adding a row here and a field in config.h. */
#include "agent/config/keys.h"

#include "agent/config/config.h"
#include "agent/config/units.h"
#include "agent/pipeline/sortbuf.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <regex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KiB 1024ll
#define MiB (1024ll * KiB)
#define GiB (1024ll * MiB)
#define TiB (1024ll * GiB)
#define SEC 1000ll
#define MINUTE (60ll * SEC)
#define HOUR (3600ll * SEC)
#define DAY (24ll * HOUR)

#define CFG(member) offsetof(struct floe_config, member)
#define TBL(member) offsetof(struct floe_config_table, member)
#define INP(member) offsetof(struct floe_config_input, member)

static int check_id(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_state_dir(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_namespace(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_warehouse(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_partition(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_regex(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_ts_format(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_endpoint(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			  char **);
static int check_region(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_local_file(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			    char **);
static int check_secret_ref(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			    char **);
static int check_profile(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			 char **);
static int parse_zone(struct floe_config_ctx *, const struct floe_cnode *, const char *,
		      const char *, size_t, char *);
static int format_zone(struct floe_buf *, const char *);
static bool multiline_on(const char *);
static bool timestamp_on(const char *);
static bool s3_on(const char *);
static int s3_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int lake_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void lake_fini(struct floe_alloc *, char *);
static int agent_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int input_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int table_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int root_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void table_fini(struct floe_alloc *, char *);

static const char *const codec_names[] = {"zstd", "lz4_raw", "uncompressed", NULL};
static const char *const profile_names[] = {"default", "compact", NULL};
static const char *const bloom_default[] = {"host", "app", NULL};
static int check_bloom_column(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			      char **);
static int check_sort_column(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			     char **);
static const char *const start_at_names[] = {"beginning", "end", NULL};
static const char *const input_type_names[] = {"tail", NULL};
static const char *const catalog_names[] = {"filesystem", "s3", NULL};
static const char *const format_names[] = {"raw", "cri", "docker", NULL};
static const char *const parser_names[] = {"none", "json", "logfmt", "regex", NULL};
static const char *const long_lines_names[] = {"split", "truncate", NULL};
static const char *const bool_names[] = {"false", "true", NULL};
static const char *const spool_policy_names[] = {"block", "drop_oldest", NULL};
static const char *const exclude_default[] = {"*.gz", "*.xz", "*.bz2", "*.zst", NULL};
static const char *const partition_default[] = {"day(ts)", NULL};

/* ---- the key table ------------------------------------------------------------------ */

static const struct floe_key agent_keys[] = {
    {.name = "id",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.id),
     .flags = FLOE_KF_COMPUTED,
     .check = check_id,
     .help = "names this agent in commits and object keys; default: host name"},
    {.name = "state_dir",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.state_dir),
     .def = "/var/lib/floe",
     .check = check_state_dir,
     .help = "checkpoints and spool"},
    {.name = "memory_limit",
     .type = FLOE_KT_SIZE,
     .off = CFG(agent.memory_limit),
     .def = "32MiB",
     .min = 4 * MiB,
     .max = 4 * GiB,
     .help = "total memory budget"},
    {.name = "compress_threads",
     .type = FLOE_KT_INT,
     .off = CFG(agent.compress_threads),
     .size = sizeof(uint32_t),
     .def = "1",
     .min = 0,
     .max = 8,
     .help = "threads compressing Parquet pages beside the main one; none on one CPU"},
};
static const struct floe_key_section agent_section = FLOE_KEY_SECTION(agent_keys, agent_post, NULL);

static const struct floe_key multiline_keys[] = {
    {.name = "start",
     .type = FLOE_KT_STRING,
     .off = INP(multiline.start),
     .flags = FLOE_KF_REQUIRED,
     .check = check_regex,
     .help = "ERE matching the first line of a record"},
    {.name = "max_lines",
     .type = FLOE_KT_INT,
     .off = INP(multiline.max_lines),
     .size = sizeof(uint32_t),
     .def = "500",
     .min = 2,
     .max = 100000,
     .help = "a record is flushed at this many lines"},
    {.name = "max_bytes",
     .type = FLOE_KT_SIZE,
     .off = INP(multiline.max_bytes),
     .def = "1MiB",
     .min = 1 * KiB,
     .max = 64 * MiB,
     .help = "or at this many bytes"},
    {.name = "flush_timeout",
     .type = FLOE_KT_DURATION,
     .off = INP(multiline.flush_timeout_ms),
     .def = "5s",
     .min = 100,
     .max = 1 * HOUR,
     .help = "or when no line came for this long"},
};
static const struct floe_key_section multiline_section =
    FLOE_KEY_SECTION(multiline_keys, NULL, NULL);

static const struct floe_key timestamp_keys[] = {
    {.name = "field",
     .type = FLOE_KT_STRING,
     .off = INP(timestamp.field),
     .def = "message",
     .help = "message (its start) or a parsed attribute"},
    {.name = "format",
     .type = FLOE_KT_STRING,
     .off = INP(timestamp.format),
     .flags = FLOE_KF_REQUIRED,
     .check = check_ts_format,
     .help = "rfc3339, iso8601, epoch, epoch_ms, epoch_us, epoch_ns, syslog, apache, clf or "
	     "%-format"},
    {.name = "zone",
     .type = FLOE_KT_CUSTOM,
     .off = INP(timestamp.zone_offset_s),
     .size = sizeof(int32_t),
     .def = "UTC",
     .parse = parse_zone,
     .format = format_zone,
     .help = "for times without an offset: UTC or +HH:MM"},
};
static const struct floe_key_section timestamp_section =
    FLOE_KEY_SECTION(timestamp_keys, NULL, NULL);

static const struct floe_key input_keys[] = {
    {.name = "type",
     .type = FLOE_KT_ENUM,
     .off = INP(type),
     .size = sizeof(enum floe_input_type),
     .flags = FLOE_KF_REQUIRED,
     .choices = input_type_names,
     .help = "input kind"},
    {.name = "paths",
     .type = FLOE_KT_STRLIST,
     .off = INP(paths),
     .off_n = INP(npaths),
     .flags = FLOE_KF_REQUIRED | FLOE_KF_NONEMPTY,
     .help = "globs of files to follow"},
    {.name = "exclude",
     .type = FLOE_KT_STRLIST,
     .off = INP(exclude),
     .off_n = INP(nexclude),
     .def_list = exclude_default,
     .help = "globs to skip, matched on full path and basename"},
    {.name = "start_at",
     .type = FLOE_KT_ENUM,
     .off = INP(start_at_end),
     .size = sizeof(bool),
     .def = "end",
     .choices = start_at_names,
     .help = "where to start in a file seen first"},
    {.name = "max_line_bytes",
     .type = FLOE_KT_SIZE,
     .off = INP(max_line_bytes),
     .def = "1MiB",
     .min = 256,
     .max = 64 * MiB,
     .help = "longer lines are split or truncated (long_lines)"},
    {.name = "format",
     .type = FLOE_KT_ENUM,
     .off = INP(format),
     .size = sizeof(enum floe_input_format),
     .def = "raw",
     .choices = format_names,
     .help = "line framing: raw, or container runtime logs"},
    {.name = "parser",
     .type = FLOE_KT_ENUM,
     .off = INP(parser),
     .size = sizeof(enum floe_parser),
     .def = "none",
     .choices = parser_names,
     .help = "how messages become attributes"},
    {.name = "pattern",
     .type = FLOE_KT_STRING,
     .off = INP(pattern),
     .check = check_regex,
     .help = "ERE with (?<name>...) groups; only with parser regex"},
    {.name = "multiline",
     .type = FLOE_KT_SECTION,
     .sub = &multiline_section,
     .shown = multiline_on,
     .help = "off: set start to join continuation lines"},
    {.name = "timestamp",
     .type = FLOE_KT_SECTION,
     .sub = &timestamp_section,
     .shown = timestamp_on,
     .help = "off: ts is the time a line is read; set format to parse it"},
    {.name = "long_lines",
     .type = FLOE_KT_ENUM,
     .off = INP(long_lines),
     .size = sizeof(enum floe_long_lines),
     .def = "split",
     .choices = long_lines_names,
     .help = "what happens past max_line_bytes"},
    {.name = "rotate_wait",
     .type = FLOE_KT_DURATION,
     .off = INP(rotate_wait_ms),
     .def = "5s",
     .min = 0,
     .max = 1 * HOUR,
     .help = "how long a rotated file is still read"},
    {.name = "max_open_files",
     .type = FLOE_KT_INT,
     .off = INP(max_open_files),
     .size = sizeof(uint32_t),
     .def = "256",
     .min = 8,
     .max = 65536,
     .help = "files followed at once"},
    {.name = "forget_after",
     .type = FLOE_KT_DURATION,
     .off = INP(forget_after_ms),
     .def = "24h",
     .min = 1 * MINUTE,
     .max = 365 * DAY,
     .help = "positions of files gone this long are dropped"},
};
static const struct floe_key_section input_section = FLOE_KEY_SECTION(input_keys, input_post, NULL);

static const struct floe_key table_keys[] = {
    {.name = "codec",
     .type = FLOE_KT_ENUM,
     .off = TBL(codec),
     .size = sizeof(enum floe_codec),
     .def = "zstd",
     .choices = codec_names,
     .help = "Parquet page compression"},
    {.name = "zstd_level",
     .type = FLOE_KT_INT,
     .off = TBL(zstd_level),
     .size = sizeof(int),
     .def = "3",
     .min = 1,
     .max = 22,
     .help = "used when codec is zstd"},
    {.name = "profile",
     .type = FLOE_KT_ENUM,
     .off = TBL(profile),
     .size = sizeof(enum floe_table_profile),
     .def = "default",
     .choices = profile_names,
     .help = "Parquet encodings: default (every reader) or compact (v2 pages, delta encodings)"},
    {.name = "bloom_filters",
     .type = FLOE_KT_STRLIST,
     .off = TBL(bloom_filters),
     .off_n = TBL(nbloom_filters),
     .flags = FLOE_KF_UNIQUE,
     .def_list = bloom_default,
     .max = 11,
     .check = check_bloom_column,
     .help = "columns with Parquet bloom filters; [] = none"},
    {.name = "partition_by",
     .type = FLOE_KT_STRLIST,
     .off = TBL(partition_by),
     .off_n = TBL(npartition_by),
     .flags = FLOE_KF_UNIQUE,
     .def_list = partition_default,
     .max = 8,
     .check = check_partition,
     .help = "Iceberg partition fields; [] = unpartitioned"},
    {.name = "target_file_size",
     .type = FLOE_KT_SIZE,
     .off = TBL(target_file_size),
     .def = "64MiB",
     .min = 1 * MiB,
     .max = 2 * GiB,
     .help = "data file size to aim for"},
    {.name = "commit_interval",
     .type = FLOE_KT_DURATION,
     .off = TBL(commit_interval_ms),
     .def = "60s",
     .min = 1 * SEC,
     .max = 24 * HOUR,
     .help = "how often to commit"},
    {.name = "row_group_size",
     .type = FLOE_KT_SIZE,
     .off = TBL(row_group_size),
     .flags = FLOE_KF_COMPUTED,
     .min = 1 * MiB,
     .max = 2 * GiB,
     .help = "Parquet row group; default min(target_file_size, 64MiB)"},
    {.name = "sort_by",
     .type = FLOE_KT_STRLIST,
     .off = TBL(sort_by),
     .off_n = TBL(nsort_by),
     .flags = FLOE_KF_UNIQUE,
     .max = FLOE_SORT_NKEYS,
     .check = check_sort_column,
     .help = "columns to sort a file's rows by, in runs of sort_buffer; [] = arrival order"},
    {.name = "sort_buffer",
     .type = FLOE_KT_SIZE,
     .off = TBL(sort_buffer),
     .def = "4MiB",
     .min = 64 * KiB,
     .max = 1 * GiB,
     .help = "rows held for sorting (with sort_by); at most memory_limit / 4"},
};
static const struct floe_key_section table_section =
    FLOE_KEY_SECTION(table_keys, table_post, table_fini);

static const struct floe_key tables_keys[] = {
    {.name = "logs",
     .type = FLOE_KT_SECTION,
     .off = CFG(logs),
     .sub = &table_section,
     .help = "the raw log table"},
};
static const struct floe_key_section tables_section = FLOE_KEY_SECTION(tables_keys, NULL, NULL);

static const struct floe_key catalog_keys[] = {
    {.name = "type",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.catalog),
     .size = sizeof(enum floe_catalog_type),
     .def = "filesystem",
     .choices = catalog_names,
     .help = "how commits are made atomic"},
};
static const struct floe_key_section catalog_section = FLOE_KEY_SECTION(catalog_keys, NULL, NULL);

static const struct floe_key s3_keys[] = {
    {.name = "endpoint",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.endpoint),
     .flags = FLOE_KF_COMPUTED,
     .check = check_endpoint,
     .help = "http(s)://host[:port]; default https://s3.<region>.amazonaws.com"},
    {.name = "region",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.region),
     .def = "us-east-1",
     .check = check_region,
     .help = "signing region"},
    {.name = "path_style",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.s3.path_style),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .help = "host/bucket/key instead of bucket.host/key"},
    {.name = "ca_file",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.ca_file),
     .check = check_local_file,
     .help = "CA bundle (PEM); default: the system's"},
    {.name = "access_key_id",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.access_key_id),
     .check = check_secret_ref,
     .help = "env:NAME or file:/path; default: environment, then shared credentials"},
    {.name = "secret_access_key",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.secret_access_key),
     .check = check_secret_ref,
     .help = "env:NAME or file:/path, with access_key_id"},
    {.name = "session_token",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.session_token),
     .check = check_secret_ref,
     .help = "env:NAME or file:/path, for temporary keys"},
    {.name = "profile",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.profile),
     .check = check_profile,
     .help = "shared credentials profile, when no keys are set"},
    {.name = "multipart_threshold",
     .type = FLOE_KT_SIZE,
     .off = CFG(lake.s3.multipart_threshold),
     .def = "64MiB",
     .min = 5 * MiB,
     .max = 5 * GiB,
     .help = "larger uploads are multipart"},
    {.name = "part_size",
     .type = FLOE_KT_SIZE,
     .off = CFG(lake.s3.part_size),
     .def = "16MiB",
     .min = 5 * MiB,
     .max = 5 * GiB,
     .help = "multipart part size"},
};
static const struct floe_key_section s3_section = FLOE_KEY_SECTION(s3_keys, s3_post, NULL);

static const struct floe_key lake_keys[] = {
    {.name = "warehouse",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.warehouse),
     .flags = FLOE_KF_COMPUTED,
     .check = check_warehouse,
     .help = "directory, file:// or s3:// URI; default <state_dir>/warehouse"},
    {.name = "namespace",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.namespace),
     .def = "default",
     .check = check_namespace,
     .help = "Iceberg namespace"},
    {.name = "catalog", .type = FLOE_KT_SECTION, .sub = &catalog_section},
    {.name = "s3",
     .type = FLOE_KT_SECTION,
     .sub = &s3_section,
     .shown = s3_on,
     .help = "used with catalog type s3"},
};
static const struct floe_key_section lake_section =
    FLOE_KEY_SECTION(lake_keys, lake_post, lake_fini);

static const struct floe_key spool_keys[] = {
    {.name = "max_bytes",
     .type = FLOE_KT_SIZE,
     .off = CFG(spool.max_bytes),
     .def = "1GiB",
     .min = 16 * MiB,
     .max = 1 * TiB,
     .help = "sealed files waiting for upload"},
    {.name = "policy",
     .type = FLOE_KT_ENUM,
     .off = CFG(spool.policy),
     .size = sizeof(enum floe_spool_policy),
     .def = "block",
     .choices = spool_policy_names,
     .help = "when full: block (stop reading) or drop_oldest"},
};
static const struct floe_key_section spool_section = FLOE_KEY_SECTION(spool_keys, NULL, NULL);

static const struct floe_key root_keys[] = {
    {.name = "agent", .type = FLOE_KT_SECTION, .sub = &agent_section},
    {.name = "inputs",
     .type = FLOE_KT_SECTION_LIST,
     .off = CFG(inputs),
     .off_n = CFG(ninputs),
     .size = sizeof(struct floe_config_input),
     .sub = &input_section},
    {.name = "tables", .type = FLOE_KT_SECTION, .sub = &tables_section},
    {.name = "lake", .type = FLOE_KT_SECTION, .sub = &lake_section},
    {.name = "spool", .type = FLOE_KT_SECTION, .sub = &spool_section},
};
const struct floe_key_section floe_config_keys = FLOE_KEY_SECTION(root_keys, root_post, NULL);

/* ---- checks and post hooks ------------------------------------------------------------- */

static bool all_of(const char *s, size_t min, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return false;
	}
	return true;
}

static int check_id(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		    char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (all_of(*value, 1, 64, "._-"))
		return 0;
	return floe_config_fail(
	    ctx, at, FLOE_EFORMAT,
	    "key '%s': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got '%s'", path,
	    floe_keymap_show(*value, strlen(*value), shown));
}

static int check_namespace(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (all_of(*value, 1, 128, "_"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 128 characters of A-Z a-z 0-9 _, got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Whether s starts with "scheme://" (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )). */
static bool has_scheme(const char *s)
{
	size_t i = 0;
	if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))
		while (s[i] && (strchr("+-.", s[i]) || (s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			i++;
	return i > 0 && strncmp(s + i, "://", 3) == 0;
}

/* The state directory is always local; a URI there is a mistake, and the default
 * warehouse, <state_dir>/warehouse, must stay a plain path too. */
static int check_state_dir(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (!has_scheme(*value))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a local directory path, got '%s'", path,
				floe_keymap_show(*value, strlen(*value), shown));
}

/* Whether s is well-formed UTF-8 (no overlong forms, surrogates or values past
 * U+10FFFF), as every string YAML gives us is, and as the dump must stay. */
static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s, n = c < 0x80		      ? 0
				     : c >= 0xC2 && c <= 0xDF ? 1
				     : c >= 0xE0 && c <= 0xEF ? 2
				     : c >= 0xF0 && c <= 0xF4 ? 3
							      : 9;
		if (n == 9)
			return false;
		unsigned lo = 0x80, hi = 0xBF;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
		else if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
		s++;
		for (unsigned i = 0; i < n; i++, s++) {
			if (*s < (i == 0 ? lo : 0x80) || *s > (i == 0 ? hi : 0xBF))
				return false;
		}
	}
	return true;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool bucket_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

/* s3://BUCKET[/PREFIX]: the bucket follows S3's naming rules (3 to 63 of a-z 0-9 . -,
 * starting and ending with a letter or digit) so that a typo fails here rather than at
 * the first upload; the prefix loses its trailing slashes and may not hold empty
 * segments (keys with "//" are legal in S3 but never what was meant). The value is
 * stored as written otherwise: S3 keys are not percent-decoded. */
static int check_s3_warehouse(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			      const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value, *b = s + 5;
	size_t n = strlen(s), blen = strcspn(b, "/");
	floe_keymap_show(s, n, shown);
	bool ok = blen >= 3 && blen <= 63 && b[0] != '.' && b[0] != '-' && b[blen - 1] != '.' &&
		  b[blen - 1] != '-';
	for (size_t i = 0; ok && i < blen; i++)
		ok = bucket_char(b[i]);
	if (!ok)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': expected s3://BUCKET[/PREFIX] with a bucket name "
		    "of 3 to 63 characters of a-z 0-9 . - starting and ending "
		    "with a letter or digit, got '%s'",
		    path, shown);
	while (n > 5 + blen && s[n - 1] == '/')
		n--; /* the prefix's trailing slashes */
	for (size_t i = 5 + blen; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c == '/' && s[i + 1] == '/') || c < 0x20 || c == 0x7f)
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': the key prefix in '%s' has an empty "
						"segment or a control character",
						path, shown);
	}
	(*value)[n] = '\0';
	return 0;
}

/* A warehouse is a local directory. file:///dir and file://localhost/dir are accepted
 * and turned into /dir (with %XX decoded), since that is how Iceberg tools print
 * locations; any other scheme is not supported yet. */
static int check_warehouse(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value;
	size_t n = strlen(s);
	floe_keymap_show(s, n, shown);
	if (strncmp(s, "file://", 7) == 0) {
		const char *p = s + 7;
		if (strncmp(p, "localhost/", 10) == 0)
			p += 9;
		if (*p != '/')
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': a file:// URI needs an empty host or "
						"localhost and an absolute path, got '%s'",
						path, shown);
		char *out = floe_malloc(ctx->a, strlen(p) + 1);
		if (!out)
			return floe_keymap_nomem(ctx);
		size_t o = 0;
		for (; *p; p++) {
			if (*p != '%') {
				out[o++] = *p;
				continue;
			}
			int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);
			if (h < 0 || l < 0 || (h == 0 && l == 0)) {
				floe_free(ctx->a, out);
				return floe_config_fail(ctx, at, FLOE_EFORMAT,
							"key '%s': bad %%-escape in URI '%s'", path,
							shown);
			}
			out[o++] = (char)(h * 16 + l);
			p += 2;
		}
		out[o] = '\0';
		if (!utf8_valid((const unsigned char *)out)) {
			floe_free(ctx->a, out);
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': URI '%s' decodes to invalid UTF-8", path,
						shown);
		}
		floe_free(ctx->a, *value);
		*value = out;
		return 0;
	}
	if (strncmp(s, "s3://", 5) == 0)
		return check_s3_warehouse(ctx, at, path, value);
	if (has_scheme(s))
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected a directory path, a file:// URI or an "
					"s3:// URI, got '%s'",
					path, shown);
	return 0;
}

static void skip_ws(const char **p, const char *e)
{
	while (*p < e && (**p == ' ' || **p == '\t'))
		(*p)++;
}

static size_t word(const char **p, const char *e, const char **w)
{
	skip_ws(p, e);
	*w = *p;
	while (*p < e && ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') ||
			  (**p >= '0' && **p <= '9') || **p == '_'))
		(*p)++;
	return (size_t)(*p - *w);
}

#define IS(w, l, lit) ((l) == sizeof(lit) - 1 && memcmp((w), (lit), (l)) == 0)

/* Writes the canonical form of partition field s into out (32 bytes); -1 if s is not one
 * floe supports. */
static int canonical_partition(const char *s, char *out)
{
	const char *p = s, *e = s + strlen(s), *fn, *a1 = "", *a2 = "";
	size_t fnl, a1l = 0, a2l = 0;
	int nargs = 0;

	fnl = word(&p, e, &fn);
	skip_ws(&p, e);
	if (p < e && *p == '(') {
		p++;
		a1l = word(&p, e, &a1);
		nargs = 1;
		skip_ws(&p, e);
		if (p < e && *p == ',') {
			p++;
			a2l = word(&p, e, &a2);
			nargs = 2;
			skip_ws(&p, e);
		}
		if (p >= e || *p != ')')
			return -1;
		p++;
		skip_ws(&p, e);
	}
	if (p != e || fnl == 0)
		return -1;
	if (nargs == 0 && (IS(fn, fnl, "host") || IS(fn, fnl, "app")))
		return snprintf(out, 32, "identity(%.*s)", (int)fnl, fn), 0;
	if (nargs == 1 && IS(fn, fnl, "identity") && (IS(a1, a1l, "host") || IS(a1, a1l, "app")))
		return snprintf(out, 32, "identity(%.*s)", (int)a1l, a1), 0;
	if (nargs == 1 && IS(a1, a1l, "ts") &&
	    (IS(fn, fnl, "year") || IS(fn, fnl, "month") || IS(fn, fnl, "day") ||
	     IS(fn, fnl, "hour")))
		return snprintf(out, 32, "%.*s(ts)", (int)fnl, fn), 0;
	if (nargs == 2 && IS(fn, fnl, "bucket") && IS(a2, a2l, "host") && a1l >= 1 && a1l <= 4) {
		int nb = 0;
		for (size_t i = 0; i < a1l; i++) {
			if (a1[i] < '0' || a1[i] > '9')
				return -1;
			nb = nb * 10 + (a1[i] - '0');
		}
		if (nb < 1 || nb > 1024)
			return -1;
		return snprintf(out, 32, "bucket(%d, host)", nb), 0;
	}
	return -1;
}

/* Bloom filters go on the logs table's primitive columns. */
static int check_bloom_column(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			      const char *path, char **value)
{
	static const char *const cols[] = {"ts",  "received_at", "host",    "source", "offset", "facility",
					   "severity", "app", "proc_id", "msg_id", "message"};
	char shown[FLOE_KEYMAP_SHOW_CAP];
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		if (strcmp(*value, cols[i]) == 0)
			return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a column of the logs table (ts, received_at, host, "
				"source, offset, facility, severity, app, proc_id, msg_id, message), got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Sort keys are the logs table's scalar columns (not message, which would cost a lot of
 * comparisons for nothing, nor the attrs map); sortbuf.c holds the list. */
static int check_sort_column(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	enum floe_sort_key k;
	if (floe_sortbuf_key_parse(*value, strlen(*value), &k) == 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a sortable column of the logs table (ts, "
				"received_at, host, source, offset, facility, severity, app, "
				"proc_id, msg_id), got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

static int check_partition(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char canon[32], shown[FLOE_KEYMAP_SHOW_CAP];
	if (canonical_partition(*value, canon) < 0)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': expected one of year(ts), month(ts), day(ts), "
		    "hour(ts), identity(host), host, app, bucket(N, host) with N "
		    "in 1..1024, got '%s'",
		    path, floe_keymap_show(*value, strlen(*value), shown));
	if (strcmp(canon, *value) == 0)
		return 0;
	char *c = floe_strdup(ctx->a, canon);
	if (!c)
		return floe_keymap_nomem(ctx);
	floe_free(ctx->a, *value);
	*value = c;
	return 0;
}

static int agent_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (c->agent.id)
		return 0;
	if (!(c->agent.id = floe_strdup(ctx->a, ctx->default_id)))
		return floe_keymap_nomem(ctx);
	if (all_of(c->agent.id, 1, 64, "._-"))
		return 0;
	return floe_config_fail(
	    ctx, map, FLOE_EFORMAT,
	    "key 'agent.id' is not set and the host name '%s' is not a valid id "
	    "(1 to 64 characters of A-Z a-z 0-9 . _ -); set agent.id",
	    floe_keymap_show(c->agent.id, strlen(c->agent.id), shown));
}

/* Cross-key rules of an input: pattern goes with parser regex, and a timestamp taken from
 * an attribute needs a parser to make attributes. */
static int input_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_input *in = (struct floe_config_input *)(void *)base;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	in->line = map ? (map->line > INT32_MAX ? INT32_MAX : (int)map->line) : 0;
	if (in->parser == FLOE_PARSER_REGEX && !in->pattern)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "parser"), FLOE_EFORMAT,
					"key '%s.parser': regex needs a pattern; set %s.pattern",
					path, path);
	if (in->parser != FLOE_PARSER_REGEX && in->pattern)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "pattern"), FLOE_EFORMAT,
					"key '%s.pattern': only used with parser regex (parser "
					"is %s)",
					path, parser_names[in->parser]);
	if (in->timestamp.format && in->parser == FLOE_PARSER_NONE &&
	    strcmp(in->timestamp.field, "message") != 0)
		return floe_config_fail(
		    ctx, floe_keymap_find_value(floe_keymap_find_value(map, "timestamp"), "field"),
		    FLOE_EFORMAT,
		    "key '%s.timestamp.field': '%s' would be a parsed attribute, but %s.parser is "
		    "none; use message or set a parser",
		    path, floe_keymap_show(in->timestamp.field, strlen(in->timestamp.field), shown),
		    path);
	return 0;
}

static int table_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_table *t = (struct floe_config_table *)(void *)base;
	const char *dot = strrchr(path, '.');
	char a[FLOE_UNITS_FMT_MAX], b[FLOE_UNITS_FMT_MAX];

	if (!(t->name = floe_strdup(ctx->a, dot ? dot + 1 : path)))
		return floe_keymap_nomem(ctx);
	if (t->row_group_size == 0) {
		t->row_group_size = t->target_file_size < (uint64_t)(64 * MiB)
					? t->target_file_size
					: (uint64_t)(64 * MiB);
	} else if (t->row_group_size > t->target_file_size) {
		return floe_config_fail(ctx, floe_keymap_find_value(map, "row_group_size"),
					FLOE_EFORMAT,
					"key '%s.row_group_size': %s is larger than "
					"target_file_size (%s)",
					path, floe_units_format_size(t->row_group_size, a),
					floe_units_format_size(t->target_file_size, b));
	}
	return 0;
}

static void table_fini(struct floe_alloc *a, char *base)
{
	floe_free(a, ((struct floe_config_table *)(void *)base)->name);
}

static int root_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		     char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	/* The sort buffer is held next to the writers' row groups (a quarter of the budget
	 * between them) and everything else: it may take another quarter at most. Without
	 * sort_by there is no buffer, and no rule. */
	if (c->logs.nsort_by && c->logs.sort_buffer > c->agent.memory_limit / 4) {
		char a[FLOE_UNITS_FMT_MAX], b[FLOE_UNITS_FMT_MAX];
		const struct floe_cnode *logs =
		    floe_keymap_find_value(floe_keymap_find_value(map, "tables"), "logs");
		const struct floe_cnode *at = floe_keymap_find_value(logs, "sort_buffer");
		if (!at || floe_cnode_is_null(at))
			at = floe_keymap_find_value(logs, "sort_by");
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key 'tables.logs.sort_buffer': %s is more than a quarter "
					"of agent.memory_limit (%s); lower sort_buffer or raise "
					"memory_limit",
					floe_units_format_size(c->logs.sort_buffer, a),
					floe_units_format_size(c->agent.memory_limit, b));
	}
	if (c->lake.warehouse)
		return 0;
	const char *dir = c->agent.state_dir;
	size_t n = strlen(dir), total;
	bool slash = n > 0 && dir[n - 1] == '/';
	if (__builtin_add_overflow(n, sizeof("/warehouse"), &total))
		return floe_keymap_nomem(ctx);
	if (!(c->lake.warehouse = floe_malloc(ctx->a, total)))
		return floe_keymap_nomem(ctx);
	snprintf(c->lake.warehouse, total, "%s%swarehouse", dir, slash ? "" : "/");
	return 0;
}

/* ---- inputs: patterns, timestamps ---------------------------------------------------- */

#define PATTERN_MAX 4096

/* A minimal copy of agent/parse/regex.c's translation, enough to ask regcomp whether a
 * pattern is valid: (?<name>...), (?P<name>...) and (?:...) become plain groups, any other
 * "(?" is refused. Escapes and bracket expressions ("[()]", "[]()]", "[[:alpha:](]") are
 * copied untouched. out has room for strlen(in) + 1. Returns 0, or -1 for a bad group. */
static int strip_named_groups(const char *in, char *out)
{
	size_t o = 0;
	while (*in) {
		if (*in == '\\' && in[1]) {
			out[o++] = *in++;
			out[o++] = *in++;
		} else if (*in == '[') {
			const char *p = in + 1;
			if (*p == '^')
				p++;
			if (*p == ']')
				p++;
			while (*p && *p != ']') {
				if (*p == '[' && (p[1] == ':' || p[1] == '.' || p[1] == '=')) {
					const char *e = strchr(p + 2, p[1]);
					while (e && e[1] != ']')
						e = strchr(e + 1, p[1]);
					p = e ? e + 2 : p + 1;
				} else {
					p++;
				}
			}
			if (*p == ']')
				p++;
			while (in < p)
				out[o++] = *in++;
		} else if (in[0] == '(' && in[1] == '?') {
			const char *p = in + 2;
			if (*p == ':') {
				in = p + 1;
			} else {
				if (*p == 'P')
					p++;
				if (*p++ != '<')
					return -1;
				const char *name = p;
				while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
				       *p == '_' || (p > name && *p >= '0' && *p <= '9'))
					p++;
				if (p == name || p - name > 64 || *p != '>')
					return -1;
				in = p + 1;
			}
			out[o++] = '(';
		} else {
			out[o++] = *in++;
		}
	}
	out[o] = '\0';
	return 0;
}

static int check_regex(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		       char **value)
{
	size_t n = strlen(*value);
	if (n > PATTERN_MAX)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': at most %d bytes, got %zu", path, PATTERN_MAX,
					n);
	char *plain = floe_malloc(ctx->a, n + 1);
	if (!plain)
		return floe_keymap_nomem(ctx);
	int rc = 0;
	if (strip_named_groups(*value, plain) < 0) {
		rc = floe_config_fail(ctx, at, FLOE_EFORMAT,
				      "key '%s': a group starting \"(?\" must be (?<name>...), "
				      "(?P<name>...) or (?:...), names being "
				      "[A-Za-z_][A-Za-z0-9_]* of at most 64 bytes",
				      path);
	} else {
		regex_t re;
		int e = regcomp(&re, plain, REG_EXTENDED | REG_NOSUB);
		if (e == REG_ESPACE) {
			rc = floe_keymap_nomem(ctx);
		} else if (e != 0) {
			char why[128];
			regerror(e, &re, why, sizeof(why));
			rc = floe_config_fail(ctx, at, FLOE_EFORMAT,
					      "key '%s': not a valid POSIX extended regular "
					      "expression: %s",
					      path, why);
		} else {
			regfree(&re);
		}
	}
	floe_free(ctx->a, plain);
	return rc;
}

static const char *const ts_format_names[] = {"rfc3339",  "iso8601",  "epoch",	"epoch_ms",
					      "epoch_us", "epoch_ns", "syslog", "apache",
					      "clf",	  NULL};

/* A named format, or a custom one with at least one conversion, every conversion being
 * one agent/parse/timestamp.c knows. */
static int check_ts_format(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value;
	bool conv = false;
	for (size_t i = 0; ts_format_names[i]; i++)
		if (strcmp(s, ts_format_names[i]) == 0)
			return 0;
	floe_keymap_show(s, strlen(s), shown);
	for (const char *p = strchr(s, '%'); p; p = strchr(p + 2, '%')) {
		if (p[1] == '\0' || !strchr("YymdejHIMSfszbhBaAp%TF", p[1]))
			return floe_config_fail(
			    ctx, at, FLOE_EFORMAT,
			    "key '%s': unknown conversion '%%%.*s' in '%s'; known: %%Y %%y %%m "
			    "%%d %%e %%j %%H %%I %%p %%M %%S %%f %%s %%z %%b %%h %%B %%a %%A "
			    "%%T %%F %%%%",
			    path, p[1] && (unsigned char)p[1] >= 0x20 && p[1] != '\'' ? 1 : 0,
			    p + 1, shown);
		conv = conv || p[1] != '%';
	}
	if (conv)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected one of rfc3339, iso8601, epoch, epoch_ms, "
				"epoch_us, epoch_ns, syslog, apache, clf, or a custom format with "
				"%% conversions, got '%s'",
				path, shown);
}

static int two_digits(const char *s, int max)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return -1;
	int v = (s[0] - '0') * 10 + (s[1] - '0');
	return v <= max ? v : -1;
}

/* "UTC" or a fixed offset "+HH:MM" / "-HH:MM" (HH up to 23): named zones would need the
 * tz database, which floe never reads. */
static int parse_zone(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		      const char *s, size_t len, char *field)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	int32_t off = 0;
	if (len == 3 && memcmp(s, "UTC", 3) == 0) {
		memcpy(field, &off, sizeof(off));
		return 0;
	}
	int h = len == 6 ? two_digits(s + 1, 23) : -1, m = len == 6 ? two_digits(s + 4, 59) : -1;
	if ((s[0] == '+' || s[0] == '-') && h >= 0 && m >= 0 && s[3] == ':') {
		off = (int32_t)((h * 60 + m) * 60) * (s[0] == '-' ? -1 : 1);
		memcpy(field, &off, sizeof(off));
		return 0;
	}
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected UTC or a fixed offset +HH:MM or -HH:MM, got "
				"'%s'",
				path, floe_keymap_show(s, len, shown));
}

static int format_zone(struct floe_buf *out, const char *field)
{
	int32_t off;
	memcpy(&off, field, sizeof(off));
	if (off == 0)
		return floe_buf_puts(out, "\"UTC\"");
	int32_t a = off < 0 ? -off : off;
	return floe_buf_printf(out, "\"%c%02d:%02d\"", off < 0 ? '-' : '+', (int)(a / 3600),
			       (int)(a / 60 % 60));
}

static bool multiline_on(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->multiline.start != NULL;
}

static bool timestamp_on(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->timestamp.format != NULL;
}

/* ---- lake: S3 ------------------------------------------------------------------------ */

static bool s3_on(const char *base)
{
	return ((const struct floe_config *)(const void *)base)->lake.catalog == FLOE_CATALOG_S3;
}

/* http(s)://HOST[:PORT] with an optional final '/', which is dropped: the S3 client wants
 * no path, and bucket and key are added to it. HOST is a name, an IPv4 address or an
 * IPv6 address in brackets. */
static int check_endpoint(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			  const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	char *s = *value;
	size_t n = strlen(s);
	const char *h = strncmp(s, "https://", 8) == 0	? s + 8
			: strncmp(s, "http://", 7) == 0 ? s + 7
							: NULL;
	bool ok = h != NULL;
	const char *p = h;
	if (ok && *p == '[') {
		p++;
		while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
		       (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.')
			p++;
		ok = p > h + 1 && *p++ == ']';
	} else if (ok) {
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '.' || *p == '-')
			p++;
		ok = p > h;
	}
	if (ok && *p == ':') {
		unsigned port = 0;
		const char *d = ++p;
		while (*p >= '0' && *p <= '9' && p - d < 5)
			port = port * 10 + (unsigned)(*p++ - '0');
		ok = p > d && port >= 1 && port <= 65535;
	}
	if (ok && *p == '/' && p[1] == '\0')
		p++;
	if (!ok || *p != '\0')
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected http://HOST[:PORT] or "
					"https://HOST[:PORT] (no path), got '%s'",
					path, floe_keymap_show(s, n, shown));
	if (n > 0 && s[n - 1] == '/')
		s[n - 1] = '\0';
	return 0;
}

/* The region goes into the default endpoint's host name (hence no '_') and the SigV4
 * scope. */
static int check_region(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (all_of(*value, 1, 64, "-"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 -, got "
				"'%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

static int check_profile(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			 char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (all_of(*value, 1, 64, "._-"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got "
				"'%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

static int check_local_file(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (!has_scheme(*value))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a local file path, got '%s'", path,
				floe_keymap_show(*value, strlen(*value), shown));
}

/* Credentials are never written in the configuration, which is often world-readable and
 * gets dumped and logged: only a reference, "env:NAME" or "file:/absolute/path", that
 * the runner resolves. The message does not repeat the value, which may be the secret. */
static int check_secret_ref(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value)
{
	const char *s = *value;
	bool ok = false;
	if (strncmp(s, "env:", 4) == 0)
		ok = (s[4] < '0' || s[4] > '9') && all_of(s + 4, 1, 128, "_");
	else if (strncmp(s, "file:/", 6) == 0)
		ok = s[6] != '\0' && utf8_valid((const unsigned char *)s);
	if (ok)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a reference, env:NAME (an environment "
				"variable) or file:/absolute/path (a file holding the value); the "
				"value itself does not belong in the configuration",
				path);
}

/* Defaults and cross-key rules of lake.s3 (also run when the section is absent). */
static int s3_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		   char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	if (c->lake.s3.access_key_id && !c->lake.s3.secret_access_key)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "access_key_id"),
					FLOE_EFORMAT,
					"key '%s.access_key_id': set without secret_access_key; "
					"give both or neither",
					path);
	if (!c->lake.s3.access_key_id && c->lake.s3.secret_access_key)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "secret_access_key"),
					FLOE_EFORMAT,
					"key '%s.secret_access_key': set without access_key_id; "
					"give both or neither",
					path);
	if (!c->lake.s3.access_key_id && c->lake.s3.session_token)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "session_token"),
					FLOE_EFORMAT,
					"key '%s.session_token': only used with access_key_id and "
					"secret_access_key",
					path);
	if (c->lake.s3.access_key_id && c->lake.s3.profile)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "profile"), FLOE_EFORMAT,
					"key '%s.profile': only used when access_key_id and "
					"secret_access_key are not set",
					path);
	if (c->lake.s3.endpoint)
		return 0;
	size_t total;
	if (__builtin_add_overflow(strlen(c->lake.s3.region), sizeof("https://s3..amazonaws.com"),
				   &total))
		return floe_keymap_nomem(ctx);
	if (!(c->lake.s3.endpoint = floe_malloc(ctx->a, total)))
		return floe_keymap_nomem(ctx);
	snprintf(c->lake.s3.endpoint, total, "https://s3.%s.amazonaws.com", c->lake.s3.region);
	return 0;
}

/* The warehouse, the catalog and lake.s3 must agree: an s3:// warehouse goes with catalog
 * s3 and the other way round, and lake.s3 is only for catalog s3. Then the bucket and
 * prefix of an s3:// warehouse are split out for the runner. */
static int lake_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		     char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	const struct floe_cnode *s3 = floe_keymap_find_value(map, "s3");
	const char *w = c->lake.warehouse;
	bool s3_wh = w && strncmp(w, "s3://", 5) == 0;

	if (c->lake.catalog == FLOE_CATALOG_FILESYSTEM && s3 && !floe_cnode_is_null(s3))
		return floe_config_fail(ctx, s3, FLOE_EFORMAT,
					"key 'lake.s3': only used with lake.catalog.type s3 (it is "
					"filesystem)");
	if (c->lake.catalog == FLOE_CATALOG_FILESYSTEM && s3_wh)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "warehouse"), FLOE_EFORMAT,
					"key 'lake.warehouse': an s3:// warehouse needs "
					"lake.catalog.type s3 (it is filesystem)");
	if (c->lake.catalog == FLOE_CATALOG_S3 && !s3_wh)
		return floe_config_fail(
		    ctx, floe_keymap_find_value(floe_keymap_find_value(map, "catalog"), "type"),
		    FLOE_EFORMAT,
		    "key 'lake.catalog.type': s3 needs an s3:// warehouse (lake.warehouse: "
		    "s3://BUCKET[/PREFIX])");
	if (!s3_wh)
		return 0;
	size_t blen = strcspn(w + 5, "/");
	const char *prefix = w[5 + blen] ? w + 5 + blen + 1 : "";
	if (!(c->lake.s3_bucket = floe_strndup(ctx->a, w + 5, blen)) ||
	    !(c->lake.s3_prefix = floe_strdup(ctx->a, prefix)))
		return floe_keymap_nomem(ctx);
	return 0;
}

static void lake_fini(struct floe_alloc *a, char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	floe_free(a, c->lake.s3_bucket);
	floe_free(a, c->lake.s3_prefix);
}
