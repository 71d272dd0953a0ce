/* The agent's configuration: YAML text in, an immutable typed struct out. Every key is
 * declared once in a table (keys.c) with its type, default, range and help; the same
 * table drives validation, defaults, the effective-config dump and freeing. */
#ifndef FLOE_CONFIG_H
#define FLOE_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/partition.h"
#include "agent/schema/record.h"

/* zone: local, the system's zone with its summer time (agent/env/env.h). */
#define FLOE_ZONE_LOCAL INT32_MIN

struct floe_alloc;
struct floe_buf;
struct floe_err;

enum floe_codec { FLOE_CODEC_ZSTD, FLOE_CODEC_LZ4_RAW, FLOE_CODEC_UNCOMPRESSED };
enum floe_catalog_type { FLOE_CATALOG_FILESYSTEM, FLOE_CATALOG_S3, FLOE_CATALOG_REST };
enum floe_input_type { FLOE_INPUT_TAIL, FLOE_INPUT_SYSLOG, FLOE_INPUT_JOURNAL };
enum floe_syslog_host { FLOE_SYSLOG_HOST_MESSAGE, FLOE_SYSLOG_HOST_PEER };
enum floe_input_format { FLOE_FORMAT_RAW, FLOE_FORMAT_CRI, FLOE_FORMAT_DOCKER };
enum floe_parser {
	FLOE_PARSER_NONE,
	FLOE_PARSER_JSON,
	FLOE_PARSER_LOGFMT,
	FLOE_PARSER_REGEX,
	FLOE_PARSER_APACHE_COMMON,
	FLOE_PARSER_APACHE_COMBINED,
	FLOE_PARSER_NGINX_COMBINED, /* the same format as apache_combined, by nginx's name */
	FLOE_PARSER_SYSLOG_FILE,
};
enum floe_long_lines { FLOE_LONG_SPLIT, FLOE_LONG_TRUNCATE };
enum floe_spool_policy { FLOE_SPOOL_BLOCK, FLOE_SPOOL_DROP_OLDEST };
/* agent.log_format: how floe writes its log lines to stderr (platform/log.h). */
enum floe_config_log_format { FLOE_CONFIG_LOG_TEXT, FLOE_CONFIG_LOG_JSON };
enum floe_follow_symlinks { FLOE_SYMLINKS_WITHIN_ROOT, FLOE_SYMLINKS_TRUE, FLOE_SYMLINKS_FALSE };

/* The longest inputs[].name: "input NAME" fits the 32-byte names inputs log with. */
#define FLOE_INPUT_NAME_MAX 24

struct floe_config_input {
	/* name: what log lines and the metrics' input label call it; 1 to 24 characters of
	 * A-Z a-z 0-9 . _ -, unique; default its 1-based position ("1", "2", ...). */
	char *name;
	enum floe_input_type type;     /* type: tail, syslog or journal (required) */
	char **paths;		       /* tail: globs, required, at least one; a single */
	size_t npaths;		       /* string is accepted as a list of one */
	char **exclude;		       /* globs matched against the full path and the */
	size_t nexclude;	       /* basename; default *.gz *.xz *.bz2 *.zst */
	bool start_at_end;	       /* start_at: beginning|end, default end */
	uint64_t max_line_bytes;       /* default 1 MiB, range 256 B .. 64 MiB */
	enum floe_input_format format; /* raw|cri|docker, default raw (container log framing) */
	enum floe_parser parser;       /* none|json|logfmt|regex|access logs, default none */
	/* PCRE2 pattern with (?<name>...) groups; set iff parser is regex (at most 4096 bytes). */
	char *pattern;
	struct {
		char *start;		   /* regex of a first line; NULL = multiline off */
		uint32_t max_lines;	   /* default 500, 2..100000 */
		uint64_t max_bytes;	   /* default 1 MiB, 1 KiB .. 64 MiB */
		uint64_t flush_timeout_ms; /* default 5 s, 100 ms .. 1 h */
	} multiline;
	struct {
		/* "message" (the start of the message; the default) or an attribute name set
		 * by the parser (which must then not be none). */
		char *field;
		/* NULL = no timestamp parsing (ts is the receive time). Otherwise rfc3339,
		 * iso8601, epoch, epoch_ms, epoch_us, epoch_ns, syslog, apache, clf, or a
		 * custom format holding at least one '%' conversion. */
		char *format;
		int32_t zone_offset_s; /* zone: "UTC" (default) or "+HH:MM"/"-HH:MM" */
	} timestamp;
	enum floe_long_lines long_lines; /* split|truncate, default split */
	uint64_t rotate_wait_ms;	 /* default 5 s, 0 .. 1 h */
	uint64_t partial_line_ms;	 /* partial_line_timeout: default 5 s, 0 .. 1 h */
	uint32_t max_open_files;	 /* default 256, 8..65536 */
	uint64_t forget_after_ms;	 /* default 24 h, 1 m .. 365 d */
	/* within_glob_root (default) | true | false: which symbolic links a matched path may
	 * go through (agent/input/tail.h, enum floe_tail_symlinks). */
	enum floe_follow_symlinks follow_symlinks;
	/* type: syslog (agent/input/syslog_in.h); the tail keys above do not apply, except
	 * that the defaults are set. */
	struct {
		char **listen; /* URIs (platform/listen.h), at least one, all different */
		size_t nlisten;
		uint32_t max_connections;     /* per stream listener, default 1024 */
		uint64_t idle_timeout_ms;     /* default 1 h, 0 = never */
		uint64_t max_message_bytes;   /* default 64 KiB, 480 B .. 1 MiB */
		uint64_t receive_buffer;      /* socket_receive_buffer, default 4 MiB, 0 = kernel's */
		enum floe_syslog_host host_from; /* message (default) or peer */
		/* Zone of times without an offset (BSD ones; also the syslog_file parser's, on
		 * a tail input): seconds east of UTC, or FLOE_ZONE_LOCAL. Default UTC, and
		 * local for a tail input (its file is written in this host's zone). */
		int32_t zone_offset_s;
		uint32_t socket_mode;	      /* unix sockets: chmod bits, 0 = umask's */
		char *socket_owner, *socket_group; /* unix sockets: chown, NULL = unchanged */
		struct {
			char *cert, *key, *key_password, *ca; /* tls://: cert and key required */
		} tls;
	} syslog;
	/* type: journal (agent/input/journal_in.h); start_at applies too. */
	struct {
		char **matches; /* FIELD=value filters; [] = every entry */
		size_t nmatches;
		char *directory; /* journal files to read; NULL = the system's */
		char **fields;	 /* fields kept in attrs, default [_SYSTEMD_UNIT] */
		size_t nfields;
		bool include_own; /* false (default): floe's own entries are skipped */
	} journal;
	/* raw: true (default) writes its records to the raw table too; false only feeds the
	 * aggregations that take from it (at least one must: floe_keys_aggs_check). */
	bool raw;
	/* table: the raw table its records go to when no route rule takes them, default
	 * "logs"; route: rules tried in order, the first that matches names the table. The
	 * tables are "logs" or one of tables.<name> (checked); table_idx and each rule's
	 * table_idx (computed) index them as floe_config_table_at does. */
	char *table;
	struct floe_config_route *routes;
	size_t nroutes;
	uint32_t table_idx;
	int line;			 /* where the input was declared (1-based) */
	int col;
};

/* A rule of inputs[].route: records whose field equals a value (or matches a POSIX ERE,
 * or, with neither, has the field at all) go to table. */
struct floe_config_route {
	char *field; /* a field reference (schema/aggtable.h): a built-in field or an attribute */
	char *equals;
	char *matches;
	char *table;
	uint32_t table_idx; /* computed: as floe_config_table_at numbers the tables */
	int line, col;
};

/* The Iceberg table properties floe follows (tables.logs.properties), named and
 * defaulted as Iceberg's TableProperties. The table's own property of the same name, when
 * it has one, takes precedence (agent/lake/table.h). */
struct floe_table_props {
	bool merge_enabled;		/* commit.manifest-merge.enabled, default true */
	uint32_t merge_min_count;	/* commit.manifest.min-count-to-merge, default 100 */
	uint64_t merge_target_bytes;	/* commit.manifest.target-size-bytes, default 8 MiB */
	uint64_t max_snapshot_age_ms;	/* history.expire.max-snapshot-age-ms, default 5 days */
	uint32_t min_snapshots;		/* history.expire.min-snapshots-to-keep, default 1 */
	uint32_t previous_versions_max; /* write.metadata.previous-versions-max, default 100 */
	bool delete_after_commit;	/* write.metadata.delete-after-commit.enabled, default false */
	/* The keys the configuration file left out (FLOE_PROP_* bits; 0 when the struct is
	 * filled by hand: every value above is meant). A table floe creates gets floe's
	 * defaults for an unattended writer where these are left out, the values above
	 * elsewhere; an existing table's own properties win over both (agent/lake/table.c). */
	uint32_t unset;
};

enum {
	FLOE_PROP_MERGE_ENABLED = 1u << 0,
	FLOE_PROP_MERGE_MIN_COUNT = 1u << 1,
	FLOE_PROP_MERGE_TARGET_BYTES = 1u << 2,
	FLOE_PROP_MAX_SNAPSHOT_AGE = 1u << 3,
	FLOE_PROP_MIN_SNAPSHOTS = 1u << 4,
	FLOE_PROP_PREVIOUS_VERSIONS_MAX = 1u << 5,
	FLOE_PROP_DELETE_AFTER_COMMIT = 1u << 6,
};

/* A typed column of a table (tables.logs.columns[N]; README "Typed columns"). */
struct floe_config_column {
	/* name: letters, digits and _, 1..64, starting with a letter or _; unique in the
	 * list; not a built-in column of the logs table (nor attrs). */
	char *name;
	int type; /* enum floe_col_type (agent/schema/convert.h); required */
	/* from: the parsed field the value comes from; "attrs.KEY" is KEY. Stored without
	 * the prefix; default: name. */
	char *from;
	char *renamed_from; /* the column's previous name (keeps its field id); NULL: none */
	int line, col;	    /* where it was declared (computed) */
};

struct floe_config_table {
	char *name;	       /* "logs" */
	enum floe_codec codec; /* default zstd */
	int zstd_level;	       /* 1..22; default 3, 6 with the compact profile */
	/* Partition fields in canonical form, each one of "year(ts)", "month(ts)", "day(ts)",
	 * "hour(ts)", "identity(host)", "identity(app)", "bucket(N, host)" (N 1..1024). The
	 * file may also say "host" or "app" (= identity) and "bucket(16,host)" (any spacing).
	 * Default ["day(ts)"]; an empty list means unpartitioned; duplicates are rejected. */
	char **partition_by;
	size_t npartition_by;
	uint64_t target_file_size;   /* default 64 MiB, range 1 MiB .. 2 GiB */
	uint64_t commit_interval_ms; /* commit_interval, default 60 s, 1 s .. 24 h */
	enum floe_table_profile { FLOE_PROFILE_DEFAULT, FLOE_PROFILE_COMPACT } profile;
	char **bloom_filters;        /* column names with Parquet bloom filters; default host, app */
	size_t nbloom_filters;
	uint64_t row_group_size;     /* default min(target_file_size, 64 MiB), */
				     /* range 1 MiB .. target_file_size */
	/* Columns the rows of a data file are sorted by, in runs of sort_buffer bytes:
	 * names of agent/schema/record.h's sortable columns (ts, received_at, host,
	 * source, offset, facility, severity, app, proc_id, msg_id), no duplicates. Default
	 * [] = arrival order, no sort buffer. */
	char **sort_by;
	size_t nsort_by;
	/* Default 4 MiB, range 64 KiB .. 1 GiB; with sort_by set, at most a quarter of
	 * agent.memory_limit. */
	uint64_t sort_buffer;
	/* The three lists above as the agent uses them, parsed once when the configuration
	 * is (computed, never in the file): the partition spec (field ids from 1000), the
	 * sort keys (nsort_by of them) and the field ids with a bloom filter (nbloom_filters
	 * of them). */
	struct floe_part_spec partition;
	enum floe_sort_key sort_keys[FLOE_SORT_NKEYS];
	int32_t bloom_ids[FLOE_LOG_NCOLS];
	struct floe_table_props props; /* properties */
	/* columns: typed columns after the built-in ones, at most FLOE_COLS_MAX. Absent (the
	 * default): those of the inputs' built-in parsers (agent/run/colplan.h); [] written
	 * in the file: none (columns_given, computed, says which). */
	struct floe_config_column *columns;
	size_t ncolumns;
	bool columns_given;
	/* message: keep (default) writes every line's message; unparsed writes it only for
	 * the lines no parser took apart (their fields hold it), null for the others. */
	enum floe_table_message { FLOE_MESSAGE_KEEP, FLOE_MESSAGE_UNPARSED } message;
};

/* An aggregation's metric (aggregations[N].metrics[M]). In the file, "count" alone or a
 * mapping { KIND: FIELD, options } with KIND one of count, sum, min, max, avg, distinct,
 * quantiles, top_k; the dump writes the canonical { metric: KIND, field: FIELD }. */
enum floe_agg_metric_kind {
	FLOE_METRIC_COUNT, /* events (with field: events where it is present) */
	FLOE_METRIC_SUM,
	FLOE_METRIC_MIN,
	FLOE_METRIC_MAX,
	FLOE_METRIC_AVG,
	FLOE_METRIC_DISTINCT,  /* HyperLogLog */
	FLOE_METRIC_QUANTILES, /* DDSketch */
	FLOE_METRIC_TOP_K,     /* SpaceSaving */
};
#define FLOE_METRIC_NKINDS 8

struct floe_config_metric {
	enum floe_agg_metric_kind kind; /* metric */
	char *field;			/* a field reference (schema/aggtable.h); NULL: count */
	/* The column (quantiles: the prefix of its columns; distinct and quantiles: of the
	 * sketch column too). Default <kind>_<field>, count, or <field> for quantiles. */
	char *name;
	uint32_t precision; /* distinct: HLL precision, default 14, 4..18 */
	double accuracy;    /* quantiles: relative accuracy, default 0.01, 0.001..0.2 */
	char **q;	    /* quantiles: as written, default 0.5 0.9 0.99, each in 0..1 */
	size_t nq;
	double *qv; /* the same as numbers (computed) */
	uint32_t k;	    /* top_k: counters kept, default 10, 1..1000 */
	uint32_t key_bytes; /* top_k: bytes of a value kept, default 64, 8..1024 */
	/* The shorthand keys (count, sum, ...: FIELD), folded into kind and field. */
	char *by_kind[FLOE_METRIC_NKINDS];
	int line, col;
};

enum floe_agg_late { FLOE_LATE_DROP, FLOE_LATE_OLDEST_OPEN };

struct floe_config_agg {
	char *name;	   /* required, [A-Za-z0-9_]{1,64}, unique */
	char *table;	   /* default: name; [A-Za-z0-9_]{1,128}, not logs, unique */
	char **from;	   /* input indexes as written; [] = every input */
	size_t nfrom;
	uint32_t *from_idx; /* the same as numbers (computed) */
	struct {
		char *field; /* NULL: no filter */
		char *equals;
		char *matches; /* a POSIX ERE */
		bool present;
	} where;
	uint64_t window_ms;	      /* default 1m, 1s .. 7d */
	uint64_t slide_ms;	      /* default window (tumbling); divides window, >= window/64 */
	uint64_t allowed_lateness_ms; /* default 0, 0 .. 7d */
	enum floe_agg_late late;      /* drop|oldest_open, default drop */
	uint64_t max_future_skew_ms;  /* default 5m, 1s .. 7d */
	uint64_t idle_timeout_ms;     /* default window + allowed_lateness, 1s .. 30d */
	char **group_by;	      /* field references, at most 8, unique */
	size_t ngroup_by;
	struct floe_config_metric *metrics; /* default [count] */
	size_t nmetrics;
	uint32_t max_groups;	/* per window, default 1000, 1 .. 10000000 */
	uint64_t max_key_bytes; /* a group's key values together, default 256B, 16B .. 64KiB */
	int line, col;		/* where the aggregation was declared */
};

/* agent.state_dir's default: also where floe run looks for the last good configuration
 * of a file that names none it can read. */
#define FLOE_CONFIG_STATE_DIR "/var/lib/floe"

struct floe_config {
	char *path; /* the name passed to floe_config_parse */
	/* The bytes parsed (floe_cli_load_config keeps them, for the last good copy; NULL
	 * otherwise); freed with the configuration. */
	char *source;
	size_t source_len;
	/* The text held no YAML document (nothing, or only blanks and comments): every key
	 * took its default. floe_cli_parse_config refuses it (a push cut short, a template
	 * that rendered nothing); the library takes it, for the defaults. */
	bool empty;
	/* What floe check refuses and floe run logs (floe_config_warn): one finding a line,
	 * "file:line:column: message", NUL-terminated; NULL when none. */
	char *warnings;
	struct {
		char *id;	       /* default: the caller's default_id; [A-Za-z0-9._-]{1,64} */
		/* An installation id (or "legacy") whose commits under id this agent takes
		 * over; NULL: none. */
		char *replaces;
		char *state_dir;       /* default FLOE_CONFIG_STATE_DIR */
		uint64_t memory_limit; /* default 32 MiB, range 4 MiB .. 4 GiB */
		/* Threads compressing Parquet pages while the main thread encodes; default 1,
		 * range 0..8. The runner starts none on a machine with one CPU. */
		uint32_t compress_threads;
		/* agent.http.listen: HOST:PORT of the HTTP listener serving /metrics and
		 * /healthz (agent/run/status.c); NULL: none (the default). */
		char *http_listen;
		enum floe_config_log_format log_format; /* default text */
		/* Whether floe run keeps a copy of the configuration each runner started with
		 * in state_dir, to run on it when the file has errors at a later start
		 * (agent/cli/last_good.h); default true. */
		bool keep_last_good;
		/* Where memory_limit was given (1-based; 0 when it was not), for the memory
		 * rule's message (floe_memory_check, agent/run/memory.h). */
		int memory_limit_line, memory_limit_col;
	} agent;
	struct floe_config_input *inputs; /* may be empty (ninputs = 0) */
	size_t ninputs;
	struct floe_config_table logs; /* tables.logs */
	/* tables.<name>: the raw tables after logs, in the file's order (names are Iceberg
	 * identifiers, unique, none an aggregation's table); may be empty. */
	struct floe_config_table *tables;
	size_t ntables;
	struct floe_config_agg *aggs;	/* aggregations; may be empty */
	size_t naggs;
	struct {
		/* A directory path, absolute or relative (to the agent's working directory);
		 * a file:// URI (empty host or localhost, %XX decoded) is stored as its path.
		 * Default "<state_dir>/warehouse".
		 * Or "s3://BUCKET[/PREFIX]" (stored without a trailing slash), which goes
		 * with catalog type s3 and only with it. */
		char *warehouse;
		char *namespace;		/* default "default"; [A-Za-z0-9_]{1,128} */
		/* false (default): a table this agent committed to that is missing from the
		 * warehouse is waited for, not created again (lake/table.h, existed). */
		bool recreate_tables;
		enum floe_catalog_type catalog; /* catalog: { type: filesystem|s3|rest } */
		/* lake.catalog's keys for type rest (all NULL otherwise): the base URL (no final
		 * '/'), the warehouse asked of /v1/config, the namespace (levels joined by '.',
		 * default lake.namespace), the path prefix (NULL: the server's), a secret
		 * reference to "client_id:client_secret" or to a bearer token (at most one), the
		 * OAuth2 scope, and the token endpoint (default <uri>/v1/oauth/tokens with a
		 * credential); SigV4 request signing (AWS endpoints: Glue, S3 Tables) with its
		 * signing name (default execute-api) and region (default lake.s3.region). */
		struct {
			char *uri, *warehouse, *namespace, *prefix;
			char *credential, *token;
			char *scope, *oauth2_server_uri;
			bool sigv4;
			char *signing_name, *signing_region;
		} rest;
		/* From an s3:// warehouse: the bucket (3..63 of a-z 0-9 . -) and the key
		 * prefix without leading or trailing slash ("" when absent); both NULL for a
		 * local warehouse. */
		char *s3_bucket;
		char *s3_prefix;
		/* lake.s3, only allowed with catalog s3; filled with defaults otherwise. The
		 * three credentials are references, "env:NAME" or "file:/absolute/path", for
		 * the runner to resolve; access_key_id and secret_access_key come together
		 * (session_token needs them); when they are NULL the runner uses the
		 * environment and the shared credentials file (profile, if set, only then). */
		struct {
			char *endpoint;	 /* http(s)://host[:port], default
					    https://s3.<region>.amazonaws.com */
			char *region;	 /* default us-east-1 */
			bool path_style; /* default false */
			char *ca_file;	 /* NULL: the system's CA bundle */
			char *access_key_id;
			char *secret_access_key;
			char *session_token;
			char *profile;
			uint64_t multipart_threshold; /* default 64 MiB, 5 MiB .. 5 GiB */
			uint64_t part_size;	      /* default 16 MiB, 5 MiB .. 5 GiB */
			/* Credential sources tried in order when access_key_id is not set: each
			 * one of "env", "file", "web_identity", "container", "imds", no
			 * duplicates; default [env, file, web_identity, container]. */
			char **credentials;
			size_t ncredentials;
			/* http:// to a host that is not loopback is refused unless allow_http
			 * (default false); cleartext (computed) is true when it is so allowed. */
			bool allow_http;
			bool cleartext;
			/* Each request's deadline: request_timeout plus 1 s per min_rate bytes it
			 * has moved. Defaults 30 s (1 s .. 1 h) and 4 KiB (64 B .. 1 GiB). */
			uint64_t request_timeout_ms;
			uint64_t min_rate;
		} s3;
	} lake;
	struct {
		uint64_t max_bytes;	       /* default 1 GiB, 16 MiB .. 1 TiB */
		enum floe_spool_policy policy; /* block|drop_oldest, default block */
	} spool;
	struct {
		/* floe maintain rewrites the small files of partitions whose time range ended
		 * this long ago; default 1 h, 0 .. 366 days. */
		uint64_t min_age_ms;
	} maintain;
	struct floe_alloc *alloc; /* borrowed: what everything above came from */
};

/* Parses YAML text (pure: no I/O). text need not be NUL-terminated. name (borrowed,
 * copied) is used in messages and stored in path. default_id (borrowed, copied) is the
 * agent id when agent.id is absent; NULL means "floe". On success *out receives an owned
 * config (free with floe_config_free); allocations come from a (may be NULL, must outlive
 * the config). On error returns FLOE_EPARSE (YAML syntax, unsupported YAML features,
 * nesting deeper than 32 or more than 100000 nodes), FLOE_EFORMAT (valid YAML, invalid
 * configuration), FLOE_ENOMEM (message "file: out of memory", no position) or FLOE_EINVAL
 * (text NULL with len > 0), leaves *out untouched and records the code and one line
 * "file:line:column: message" in err (may be NULL; the line fits with a file name of up to
 * 400 bytes, else it is cut). Positions are 1-based; columns count characters. Example:
 *   floe.yaml:7:12: key 'tables.logs.codec': expected one of zstd, lz4_raw, uncompressed,
 *   got 'gzip'
 * YAML notes: one document only; aliases (*x) are rejected (anchors alone are harmless);
 * tags are ignored; an empty value or ~/null counts as absent (the default applies). */
int floe_config_parse(struct floe_alloc *a, const char *name, const char *text, size_t len,
		      const char *default_id, struct floe_config **out, struct floe_err *err);

/* Every error of a file, as a compiler reports them: one "file:line:column: message" a
 * line, in the order found (document order, then the rules that span sections, which
 * are checked only where the keys they tie together were valid). */
#define FLOE_CONFIG_ERRORS_MAX 16384
struct floe_config_errors {
	char text[FLOE_CONFIG_ERRORS_MAX];
	size_t len;
	unsigned n;	    /* errors found */
	unsigned shown;	    /* of those, the lines in text (the rest did not fit) */
	bool log_json;	    /* the file sets agent.log_format: json (and that key was valid) */
};
/* floe_config_parse, with every error also in *all (may be NULL). */
int floe_config_parse_all(struct floe_alloc *a, const char *name, const char *text, size_t len,
			  const char *default_id, struct floe_config **out, struct floe_err *err,
			  struct floe_config_errors *all);

/* agent.state_dir as the text names it, read from the YAML events before any error (a
 * file broken further down still gives it), without checking anything else. Returns 0
 * with it in out, FLOE_ENOTFOUND when the text names none that can be read, FLOE_EINVAL when
 * it is empty or longer than cap - 1, FLOE_ENOMEM. */
int floe_config_peek_state_dir(const char *text, size_t len, char *out, size_t cap);

/* The raw tables: logs first (i = 0), then tables.<name> in order (i = 1..ntables). */
static inline size_t floe_config_ntables(const struct floe_config *c)
{
	return 1 + c->ntables;
}
static inline const struct floe_config_table *floe_config_table_at(const struct floe_config *c,
								   size_t i)
{
	return i == 0 ? &c->logs : &c->tables[i - 1];
}
/* The index of raw table name (floe_config_table_at's), or -1. */
int floe_config_table_find(const struct floe_config *c, const char *name);

/* Releases c and everything it owns. c may be NULL. */
void floe_config_free(struct floe_config *c);

/* Appends the effective configuration (every key with its value, defaults included, help
 * as comments, sizes and durations in their largest exact unit) as YAML to out. The
 * output parses back to an equal configuration. Returns 0, or FLOE_ENOMEM / FLOE_ELIMIT
 * from the buffer, and then out is as it was before the call. */
int floe_config_dump(const struct floe_config *c, struct floe_buf *out);

#endif
