/* Tests for agent/config: the newer keys' values, the effective-config dump, profiles
 * and bloom filters, sort_by, typed columns and lists, aggregations. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config_lib.h"
/* Accepted values of the new keys and what they become. */
static void test_new_values(void **state)
{
	NEEDS_S3();    /* s3:// warehouses throughout */
	NEEDS_PCRE2(); /* and patterns further down */
	static const struct {
		const char *wh, *bucket, *prefix, *stored;
	} whs[] = {
	    {"s3://abc", "abc", "", "s3://abc"},
	    {"s3://abc/", "abc", "", "s3://abc"},
	    {"s3://abc///", "abc", "", "s3://abc"},
	    {"s3://my.bucket-1/a/b/", "my.bucket-1", "a/b", "s3://my.bucket-1/a/b"},
	    {"s3://a23456789012345678901234567890123456789012345678901234567890123/x y/%41",
	     "a23456789012345678901234567890123456789012345678901234567890123", "x y/%41",
	     "s3://a23456789012345678901234567890123456789012345678901234567890123/x y/%41"},
	};
	for (size_t i = 0; i < sizeof(whs) / sizeof(whs[0]); i++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml), "lake: {warehouse: \"%s\", catalog: {type: s3}}",
			 whs[i].wh);
		struct floe_config *c = parse_ok(NULL, yaml);
		assert_string_equal(c->lake.warehouse, whs[i].stored);
		assert_string_equal(c->lake.s3_bucket, whs[i].bucket);
		assert_string_equal(c->lake.s3_prefix, whs[i].prefix);
		floe_config_free(c);
	}
	/* A 64-character bucket is one too many. */
	expect_err(
	    "lake: {warehouse: "
	    "\"s3://a234567890123456789012345678901234567890123456789012345678901234\"}",
	    FLOE_EFORMAT,
	    "t.yaml:1:19: key 'lake.warehouse': expected s3://BUCKET[/PREFIX] with a bucket "
	    "name of 3 to 63 characters of a-z 0-9 . - starting and ending with a letter or "
	    "digit, got 's3://a234567890123456789012345678901234567890123456789012345678901234'");

	static const struct {
		const char *endpoint, *want;
	} eps[] = {
	    {"https://s3.example.com", "https://s3.example.com"},
	    {"http://127.0.0.1:7480/", "http://127.0.0.1:7480"},
	    {"http://[::1]:9000", "http://[::1]:9000"},
	    {"https://minio-1.lan:1", "https://minio-1.lan:1"},
	    {"http://localhost:65535", "http://localhost:65535"},
	    {"http://127.1.2.3", "http://127.1.2.3"},
	};
	for (size_t i = 0; i < sizeof(eps) / sizeof(eps[0]); i++) {
		char yaml[256];
		snprintf(yaml, sizeof(yaml),
			 "lake: {warehouse: \"s3://bkt\", catalog: {type: s3}, s3: {endpoint: "
			 "\"%s\", profile: ops.prod_1}}",
			 eps[i].endpoint);
		struct floe_config *c = parse_ok(NULL, yaml);
		assert_string_equal(c->lake.s3.endpoint, eps[i].want);
		assert_string_equal(c->lake.s3.profile, "ops.prod_1");
		assert_false(c->lake.s3.cleartext);
		floe_config_free(c);
	}
	/* Plain HTTP elsewhere only when allowed, and then marked for check's warning. */
	struct floe_config *h =
	    parse_ok(NULL, "lake: {warehouse: \"s3://bkt\", catalog: {type: s3}, s3: {endpoint: "
			   "\"http://h:65535\", allow_http: true, credentials: [imds, env], "
			   "request_timeout: 2m, min_rate: 512B}}");
	assert_true(h->lake.s3.allow_http && h->lake.s3.cleartext);
	assert_int_equal(h->lake.s3.ncredentials, 2);
	assert_string_equal(h->lake.s3.credentials[0], "imds");
	assert_int_equal(h->lake.s3.request_timeout_ms, 120000);
	assert_int_equal(h->lake.s3.min_rate, 512);
	floe_config_free(h);

	static const struct {
		const char *zone;
		int32_t off;
		const char *dumped;
	} zones[] = {
	    {"UTC", 0, "\"UTC\""},
	    {"\"+00:00\"", 0, "\"UTC\""},
	    {"\"-00:00\"", 0, "\"UTC\""},
	    {"\"+05:30\"", 19800, "\"+05:30\""},
	    {"\"-23:59\"", -86340, "\"-23:59\""},
	    {"\"+14:00\"", 50400, "\"+14:00\""},
	};
	for (size_t i = 0; i < sizeof(zones) / sizeof(zones[0]); i++) {
		char yaml[256], want[64];
		snprintf(yaml, sizeof(yaml),
			 "inputs: [{type: tail, paths: a, timestamp: {format: iso8601, zone: %s}}]",
			 zones[i].zone);
		struct floe_config *c = parse_ok(NULL, yaml);
		assert_int_equal(c->inputs[0].timestamp.zone_offset_s, zones[i].off);
		assert_string_equal(c->inputs[0].timestamp.format, "iso8601");
		assert_string_equal(c->inputs[0].timestamp.field, "message");
		char *d = dump(c);
		snprintf(want, sizeof(want), "      zone: %s  #", zones[i].dumped);
		assert_non_null(strstr(d, want));
		floe_free(NULL, d);
		floe_config_free(c);
	}

	/* Patterns regcomp accepts once named groups are plain, including parentheses that
	 * are literal; timestamp formats; a field named by a parser. */
	static const char *const ok[] = {
	    "inputs: [{type: tail, paths: a, parser: regex, pattern: '^(?<a>[()])\\((?P<b>x)'}]",
	    "inputs: [{type: tail, paths: a, parser: regex, pattern: '[]()](?<c>[[:alpha:](]+)'}]",
	    "inputs: [{type: tail, paths: a, parser: regex, pattern: '(?:a|b)+(?<_x9>.)'}]",
	    "inputs: [{type: tail, paths: a, parser: json, timestamp: {field: \"@t\", format: "
	    "epoch_ms}}]",
	    "inputs: [{type: tail, paths: a, parser: logfmt, timestamp: {field: ts, format: "
	    "\"[%d/%b/%Y:%T %z]\"}}]",
	    "inputs: [{type: tail, paths: a, timestamp: {format: \"%%%s\"}}]",
	    "inputs: [{type: tail, paths: a, timestamp: {format: clf}}]",
	    "inputs: [{type: tail, paths: a, multiline: {start: '^\\S', max_lines: 100000, "
	    "max_bytes: 1K, flush_timeout: 100ms}}]",
	    "inputs: [{type: tail, paths: a, format: docker, long_lines: truncate}]",
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		floe_config_free(parse_ok(NULL, ok[i]));

	/* The pattern length limit counts bytes. */
	static char big[4200];
	int n =
	    snprintf(big, sizeof(big), "inputs: [{type: tail, paths: a, parser: regex, pattern: '");
	memset(big + n, 'x', 4096);
	memcpy(big + n + 4096, "'}]", 4);
	floe_config_free(parse_ok(NULL, big));
	memcpy(big + n + 4096, "x'}]", 5);
	expect_err(big, FLOE_EFORMAT,
		   "t.yaml:1:57: key 'inputs[0].pattern': at most 4096 bytes, got 4097");
}

static void test_dump(void **state)
{
	NEEDS_PCRE2(); /* full_yaml, and s3:// warehouses */
	NEEDS_S3();
	/* The defaults, byte for byte. */
	struct floe_config *c = parse_ok(NULL, "");
	char *d = dump(c);
	assert_string_equal(
	    d,
	    "# effective configuration of t.yaml\n"
	    "agent:\n"
	    "  id: \"host-1\"  # names this agent in commits and object keys; default: host name "
	    "and a "
	    "hash of /etc/machine-id or the installation id\n"
	    "  state_dir: \"/var/lib/floe\"  # checkpoints and spool\n"
	    "  memory_limit: 32MiB  # total memory budget\n"
	    "  compress_threads: 1  # threads compressing Parquet pages beside the main one; none "
	    "on one CPU\n"
	    "  replaces: ~  # the installation id (or 'legacy') whose commits under agent.id this "
	    "agent "
	    "takes over; unset: none\n"
	    "  log_format: text  # log lines on stderr: text, or json (one object per line)\n"
	    "  keep_last_good: true  # keep a copy of the configuration each start ran with in "
	    "state_dir: a later start whose file has errors runs on it\n"
	    "  http: ~  # off: set listen to serve /metrics, /healthz and /livez\n"
	    "inputs: []\n"
	    "tables:\n"
	    "  logs:\n"
	    "    codec: zstd  # Parquet page compression\n"
	    "    zstd_level: 1  # used when codec is zstd; default 1, or 6 with profile compact\n"
	    "    profile: default  # Parquet encodings: default (every reader) or compact (v2 "
	    "pages, "
	    "delta encodings)\n"
	    "    bloom_filters: [\"host\", \"app\"]  # columns with Parquet bloom filters; [] = "
	    "none\n"
	    "    partition_by: [\"day(ts)\"]  # Iceberg partition fields; [] = unpartitioned\n"
	    "    target_file_size: 64MiB  # data file size to aim for\n"
	    "    commit_interval: 1m  # how often to commit\n"
	    "    row_group_size: 64MiB  # Parquet row group; default min(target_file_size, 64MiB)\n"
	    "    sort_by: []  # columns to sort a file's rows by, in runs of sort_buffer; [] = "
	    "arrival order\n"
	    "    sort_buffer: 4MiB  # rows held for sorting (with sort_by); at most memory_limit / "
	    "4\n"
	    "    properties:\n"
	    "      commit.manifest-merge.enabled: true  # merge small manifests into larger ones "
	    "on commit\n"
	    "      commit.manifest.min-count-to-merge: 100  # small manifests a list must hold "
	    "before "
	    "they are merged (larger ones merge ten of a size)\n"
	    "      commit.manifest.target-size-bytes: 8MiB  # largest size of a merged manifest\n"
	    "      history.expire.max-snapshot-age-ms: 5d  # snapshots older than this expire "
	    "(beyond "
	    "min-snapshots-to-keep)\n"
	    "      history.expire.min-snapshots-to-keep: 1  # the newest snapshots kept whatever "
	    "their age\n"
	    "      write.metadata.previous-versions-max: 100  # metadata-log entries kept\n"
	    "      write.metadata.delete-after-commit.enabled: false  # delete metadata files that "
	    "fall off "
	    "the metadata-log\n"
	    "    columns: ~  # typed columns from parsed fields; ~ = the built-in parsers' own, [] "
	    "= "
	    "none\n"
	    "    message: keep  # the message column: keep (every line) or unparsed (only the "
	    "lines a "
	    "parser did not take apart; null for the others)\n"
	    "lake:\n"
	    "  warehouse: \"/var/lib/floe/warehouse\"  # directory, file:// or s3:// URI; "
	    "default <state_dir>/warehouse\n"
	    "  namespace: \"default\"  # Iceberg namespace\n"
	    "  catalog:\n"
	    "    type: filesystem  # how commits are made atomic\n"
	    "  s3: ~  # used with catalog type s3\n"
	    "spool:\n"
	    "  max_bytes: 1GiB  # sealed files waiting for upload\n"
	    "  policy: block  # when full: block (stop reading) or drop_oldest\n"
	    "maintain:\n"
	    "  min_age: 1h  # floe maintain compacts partitions closed this long\n"
	    "aggregations: []\n");
	floe_free(NULL, d);
	floe_config_free(c);

	/* An input with only its required keys: every default, and the sections that are
	 * off dumped as null; with S3, the s3 section with its computed endpoint. */
	c = parse_ok(NULL, "inputs: [{type: tail, paths: /l}]\n"
			   "lake: {warehouse: \"s3://b-1/p/\", catalog: {type: s3}, s3: {region: "
			   "eu-north-1}}\n");
	d = dump(c);
	const char *from = strstr(d, "inputs:\n");
	assert_non_null(from);
	const char *to = strstr(from, "tables:\n");
	assert_non_null(to);
	assert_int_equal(
	    strncmp(
		from,
		"inputs:\n"
		"  - name: \"1\"  # in log lines and the metrics' input label; default its "
		"position "
		"(1, 2, ...)\n"
		"    type: tail  # input kind\n"
		"    paths: [\"/l\"]  # globs of files to follow\n"
		"    exclude: [\"*.gz\", \"*.xz\", \"*.bz2\", \"*.zst\", \"wtmp\", \"wtmp[.-]*\", "
		"\"btmp\", \"btmp[.-]*\", \"lastlog\", \"faillog\", \"*.journal\", \"*.journal~\"]  "
		"# globs to skip, matched on full path and basename\n"
		"    start_at: end  # where to start in a file seen first\n"
		"    max_line_bytes: 1MiB  # longer lines are split or truncated (long_lines)\n"
		"    format: raw  # line framing: raw, or container runtime logs\n"
		"    parser: none  # how messages become attributes\n"
		"    pattern: ~  # regex (PCRE2) with (?<name>...) groups; only with parser regex\n"
		"    multiline: ~  # off: set start to join continuation lines\n"
		"    timestamp: ~  # off: ts is the time a line is read; set format to parse it\n"
		"    long_lines: split  # what happens past max_line_bytes\n"
		"    rotate_wait: 5s  # how long a rotated file is still read\n"
		"    partial_line_timeout: 5s  # a last line without its LF is taken once its file "
		"is idle this long\n"
		"    max_open_files: 256  # files followed at once\n"
		"    forget_after: 1d  # positions of files gone this long are dropped\n"
		"    follow_symlinks: within_glob_root  # links a matched path may go through: "
		"within_glob_root, true (any) or false\n"
		"    raw: true  # false: records only feed aggregations, none go to the raw table\n"
		"    table: \"logs\"  # the raw table its records go to when no route rule takes "
		"them\n"
		"    route: []\n",
		(size_t)(to - from)),
	    0);
	assert_string_equal(
	    strstr(d, "lake:\n"),
	    "lake:\n"
	    "  warehouse: \"s3://b-1/p\"  # directory, file:// or s3:// URI; default "
	    "<state_dir>/warehouse\n"
	    "  namespace: \"default\"  # Iceberg namespace\n"
	    "  catalog:\n"
	    "    type: s3  # how commits are made atomic\n"
	    "  s3:\n"
	    "    endpoint: \"https://s3.eu-north-1.amazonaws.com\"  # http(s)://host[:port]; "
	    "default https://s3.<region>.amazonaws.com\n"
	    "    region: \"eu-north-1\"  # signing region\n"
	    "    path_style: false  # host/bucket/key instead of bucket.host/key\n"
	    "    ca_file: ~  # CA bundle (PEM); default: the system's\n"
	    "    access_key_id: ~  # env:NAME or file:/path; default: environment, then shared "
	    "credentials\n"
	    "    secret_access_key: ~  # env:NAME or file:/path, with access_key_id\n"
	    "    session_token: ~  # env:NAME or file:/path, for temporary keys\n"
	    "    profile: ~  # shared credentials profile, when no keys are set\n"
	    "    credentials: [\"env\", \"file\", \"web_identity\", \"container\"]  # sources "
	    "tried in order without access_key_id: env, file, web_identity, container, imds\n"
	    "    allow_http: false  # allow an http:// endpoint on a host that is not loopback "
	    "(unencrypted)\n"
	    "    request_timeout: 30s  # a request's deadline: this plus 1 s per min_rate bytes it "
	    "moves\n"
	    "    min_rate: 4KiB  # bytes per second a transfer may take beyond request_timeout\n"
	    "    multipart_threshold: 64MiB  # larger uploads are multipart\n"
	    "    part_size: 16MiB  # multipart part size\n"
	    "spool:\n"
	    "  max_bytes: 1GiB  # sealed files waiting for upload\n"
	    "  policy: block  # when full: block (stop reading) or drop_oldest\n"
	    "maintain:\n"
	    "  min_age: 1h  # floe maintain compacts partitions closed this long\n"
	    "aggregations: []\n");
	struct floe_config *c3 = parse_ok(NULL, d);
	char *d3 = dump(c3);
	assert_string_equal(d, d3);
	floe_free(NULL, d3);
	floe_config_free(c3);
	floe_free(NULL, d);
	floe_config_free(c);

	/* The full file: every value shows, and the dump parses back to the same config. */
	c = parse_ok(NULL, full_yaml);
	d = dump(c);
	static const char *const lines[] = {
	    "  id: \"edge-017\"",
	    "  state_dir: \"/srv/floe\"",
	    "  memory_limit: 64MiB",
	    "  - name: \"1\"",
	    "    type: tail",
	    "    paths: [\"/var/log/syslog\", \"/var/log/*.log\"]",
	    "    exclude: [\"*.gz\"]",
	    "    start_at: beginning",
	    "    max_line_bytes: 64KiB",
	    "    paths: [\"/srv/app/current.log\"]",
	    "    exclude: [\"*.gz\", \"*.xz\", \"*.bz2\", \"*.zst\", \"wtmp\", \"wtmp[.-]*\", "
	    "\"btmp\", \"btmp[.-]*\", \"lastlog\", \"faillog\", \"*.journal\", \"*.journal~\"]",
	    "    start_at: end",
	    "    max_line_bytes: 1MiB",
	    "    codec: lz4_raw",
	    "    zstd_level: 19",
	    "    partition_by: [\"hour(ts)\", \"identity(app)\", \"bucket(16, host)\"]",
	    "    target_file_size: 128MiB",
	    "    commit_interval: 5m",
	    "    row_group_size: 32MiB",
	    "    format: cri",
	    "    parser: regex",
	    ("    pattern: \"^(?<time>[^ ]+ [^ ]+) (?P<level>[A-Z]+) (?:\\\\[[^]()]*\\\\]) "
	     "(?<msg>.*)$\""),
	    "    multiline:\n      start: \"^[0-9]{4}-\"",
	    "      max_lines: 20",
	    "      max_bytes: 64KiB",
	    "      flush_timeout: 250ms",
	    "    timestamp:\n      field: \"time\"",
	    "      format: \"%Y-%m-%d %H:%M:%S.%f\"",
	    "      zone: \"-05:30\"",
	    "    long_lines: truncate",
	    "    rotate_wait: 0ms",
	    "    max_open_files: 1024",
	    "    forget_after: 7d",
	    "    multiline: ~",
	    "    timestamp: ~",
	    "    forget_after: 1d",
	    "  warehouse: \"s3://edge-lake.example/floe/logs\"",
	    "  namespace: \"edge_logs\"",
	    "    type: s3",
	    "    endpoint: \"http://127.0.0.1:7480\"",
	    "    region: \"eu-west-1\"",
	    "    path_style: true",
	    "    ca_file: \"/etc/floe/ca.pem\"",
	    "    access_key_id: \"env:FLOE_S3_KEY_ID\"",
	    "    secret_access_key: \"file:/etc/floe/s3-secret\"",
	    "    session_token: \"env:AWS_SESSION_TOKEN\"",
	    "    profile: ~",
	    "    multipart_threshold: 128MiB",
	    "    part_size: 8MiB",
	    "  max_bytes: 2GiB",
	    "  policy: drop_oldest",
	};
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (!strstr(d, lines[i]))
			print_error("missing '%s' in\n%s", lines[i], d);
		assert_non_null(strstr(d, lines[i]));
	}
	struct floe_config *c2 = parse_ok(NULL, d);
	char *d2 = dump(c2);
	assert_string_equal(d, d2);
	assert_int_equal(c2->inputs[1].line, 39);
	floe_free(NULL, d);
	floe_free(NULL, d2);
	floe_config_free(c2);
	floe_config_free(c);

	/* Awkward strings survive the round trip. */
	c = parse_ok(
	    NULL,
	    "inputs: [{type: tail, paths: [\"a\\\"b\\\\c\\td\\x7f\\x85\\u2028\\uFFFE\xc3\xa9\"]}]\n"
	    "agent: {state_dir: \"# not a comment\"}\n");
	d = dump(c);
	assert_non_null(
	    strstr(d, "paths: [\"a\\\"b\\\\c\\x09d\\x7F\\x85\\u2028\\uFFFE\xc3\xa9\"]"));
	c2 = parse_ok(NULL, d);
	assert_string_equal(c2->inputs[0].paths[0], c->inputs[0].paths[0]);
	assert_string_equal(c2->agent.state_dir, "# not a comment");
	floe_free(NULL, d);
	floe_config_free(c2);
	floe_config_free(c);

	/* A dump that does not fit leaves the buffer as it was. */
	c = parse_ok(NULL, "");
	struct floe_buf b;
	floe_buf_init(&b, NULL, 100);
	assert_int_equal(floe_buf_puts(&b, "x"), 0);
	assert_int_equal(floe_config_dump(c, &b), FLOE_ELIMIT);
	assert_int_equal(b.len, 1);
	floe_buf_fini(&b);
	floe_config_free(c);
}

static void test_profile_and_bloom(void **state)
{
	(void)state;
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	const char *ok =
	    "tables:\n  logs:\n    profile: compact\n    bloom_filters: [message, severity]\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", ok, strlen(ok), "h", &c, &err), 0);
	assert_int_equal(c->logs.profile, FLOE_PROFILE_COMPACT);
	assert_int_equal(c->logs.nbloom_filters, 2);
	assert_string_equal(c->logs.bloom_filters[0], "message");
	assert_int_equal(c->logs.zstd_level, 6); /* the compact profile's level */
	floe_config_free(c);
	const char *lvl = "tables:\n  logs:\n    profile: compact\n    zstd_level: 2\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", lvl, strlen(lvl), "h", &c, &err), 0);
	assert_int_equal(c->logs.zstd_level, 2); /* a level given wins */
	floe_config_free(c);
	const char *bad = "tables:\n  logs:\n    bloom_filters: [attrs]\n";
	assert_int_not_equal(floe_config_parse(NULL, "t.yaml", bad, strlen(bad), "h", &c, &err), 0);
	assert_non_null(strstr(err.msg, "t.yaml:3:21: key 'tables.logs.bloom_filters"));
	/* A typed column: refused at check, saying so. */
	const char *typed[] = {
	    "tables:\n  logs:\n    columns: [{name: status, type: int}]\n    bloom_filters: "
	    "[status]\n",
	    "tables:\n  logs:\n    columns: [{name: status, type: int}]\n    sort_by: [status]\n",
	    "tables:\n  logs:\n    columns: [{name: status, type: int}]\n    partition_by: "
	    "[status]\n"};
	for (size_t i = 0; i < 3; i++) {
		assert_int_not_equal(
		    floe_config_parse(NULL, "t.yaml", typed[i], strlen(typed[i]), "h", &c, &err),
		    0);
		assert_non_null(strstr(err.msg, "got 'status' (typed columns (tables.logs.columns) "
						"are not supported here yet)"));
	}
	const char *bad2 = "tables:\n  logs:\n    profile: tiny\n";
	assert_int_not_equal(floe_config_parse(NULL, "t.yaml", bad2, strlen(bad2), "h", &c, &err),
			     0);
	assert_non_null(strstr(err.msg, "t.yaml:3:14: key 'tables.logs.profile'"));
}

/* tables.logs.sort_by and sort_buffer: values, defaults, errors with their positions,
 * the memory_limit rule (only with sort_by), the dump and its round trip. */
static void test_sort_by(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_config *c = parse_ok(&a, "");
	assert_int_equal(c->logs.nsort_by, 0);
	assert_int_equal(c->logs.sort_buffer, 4 * MiB);
	floe_config_free(c);

	c = parse_ok(&a, "tables:\n  logs:\n    sort_by: [app, ts]\n    sort_buffer: 64KiB\n");
	assert_int_equal(c->logs.nsort_by, 2);
	assert_string_equal(c->logs.sort_by[0], "app");
	assert_string_equal(c->logs.sort_by[1], "ts");
	assert_int_equal(c->logs.sort_buffer, 64 * 1024);
	char *d = dump(c);
	assert_non_null(strstr(d, "\n    sort_by: [\"app\", \"ts\"]  # "));
	assert_non_null(strstr(d, "\n    sort_buffer: 64KiB  # "));
	struct floe_config *back = parse_ok(&a, d);
	assert_int_equal(back->logs.nsort_by, 2);
	assert_string_equal(back->logs.sort_by[1], "ts");
	assert_int_equal(back->logs.sort_buffer, 64 * 1024);
	floe_config_free(back);
	floe_free(NULL, d);
	floe_config_free(c);

	/* Every sortable column at once, a single string as a list of one. */
	c = parse_ok(&a, "tables: {logs: {sort_by: [ts, received_at, host, source, offset, "
			 "facility, severity, app, proc_id, msg_id]}}\n");
	assert_int_equal(c->logs.nsort_by, 10);
	assert_string_equal(c->logs.sort_by[9], "msg_id");
	floe_config_free(c);
	c = parse_ok(&a, "tables: {logs: {sort_by: host}}\n");
	assert_int_equal(c->logs.nsort_by, 1);
	assert_string_equal(c->logs.sort_by[0], "host");
	floe_config_free(c);
	/* 8 MiB is a quarter of the default 32 MiB: allowed. */
	c = parse_ok(&a, "tables: {logs: {sort_by: [ts], sort_buffer: 8MiB}}\n");
	assert_int_equal(c->logs.sort_buffer, 8 * MiB);
	floe_config_free(c);
	/* Without sort_by there is no buffer, so its size is not held against the budget. */
	c = parse_ok(&a, "agent: {memory_limit: 4MiB}\n");
	assert_int_equal(c->logs.nsort_by, 0);
	floe_config_free(c);
	assert_int_equal(a.used, 0);

	expect_err("tables:\n  logs:\n    sort_by: [app, message]\n", FLOE_EFORMAT,
		   "t.yaml:3:20: key 'tables.logs.sort_by[1]': expected a sortable column of the "
		   "logs table (ts, received_at, host, source, offset, facility, severity, app, "
		   "proc_id, msg_id), got 'message'"
		   " (typed columns (tables.logs.columns) are not supported here yet)");
	expect_err("tables:\n  logs:\n    sort_by: attrs\n", FLOE_EFORMAT,
		   "t.yaml:3:14: key 'tables.logs.sort_by': expected a sortable column of the "
		   "logs table (ts, received_at, host, source, offset, facility, severity, app, "
		   "proc_id, msg_id), got 'attrs'"
		   " (typed columns (tables.logs.columns) are not supported here yet)");
	expect_err("tables:\n  logs:\n    sort_by: [ts, app, ts]\n", FLOE_EFORMAT,
		   "t.yaml:3:24: key 'tables.logs.sort_by[2]': duplicate entry 'ts'");
	expect_err("tables:\n  logs:\n    sort_by: {app: 1}\n", FLOE_EFORMAT,
		   "t.yaml:3:14: key 'tables.logs.sort_by': expected a string or a sequence of "
		   "strings, got a mapping");
	expect_err("tables:\n  logs:\n    sort_buffer: 63KiB\n", FLOE_EFORMAT,
		   "t.yaml:3:18: key 'tables.logs.sort_buffer': expected a size in 64KiB..1GiB, "
		   "got '63KiB'");
	expect_err("tables:\n  logs:\n    sort_buffer: 2GiB\n", FLOE_EFORMAT,
		   "t.yaml:3:18: key 'tables.logs.sort_buffer': expected a size in 64KiB..1GiB, "
		   "got '2GiB'");
	expect_err("tables:\n  logs:\n    sort_buffer: lots\n", FLOE_EFORMAT,
		   "t.yaml:3:18: key 'tables.logs.sort_buffer': expected a size (an integer with "
		   "an optional unit B, K, KiB, M, MiB, G, GiB, T, TiB; all 1024-based), got "
		   "'lots'");
	/* The budget rule points at sort_buffer when it is set, else at sort_by. */
	expect_err("agent: {memory_limit: 32MiB}\ntables:\n  logs:\n    sort_by: [ts]\n"
		   "    sort_buffer: 9MiB\n",
		   FLOE_EFORMAT,
		   "t.yaml:5:18: key 'tables.logs.sort_buffer': 9MiB is more than a quarter of "
		   "agent.memory_limit (32MiB); lower sort_buffer or raise memory_limit");
	expect_err("agent: {memory_limit: 8MiB}\ntables:\n  logs:\n    sort_by: [ts]\n",
		   FLOE_EFORMAT,
		   "t.yaml:4:14: key 'tables.logs.sort_buffer': 4MiB is more than a quarter of "
		   "agent.memory_limit (8MiB); lower sort_buffer or raise memory_limit");
}

/* partition_by, sort_by and bloom_filters parsed once, here: the configuration holds the
 * spec, the sort keys and the field ids the agent uses. */
/* tables.logs.columns: each column's keys, from's default and attrs. prefix, the dump
 * parsed back, and the errors floe check reports. */
static void test_columns(void **state)
{
	(void)state;
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_config *c =
	    parse_ok(&a, "tables:\n  logs:\n    columns:\n"
			 "      - { name: status, type: int }\n"
			 "      - { name: latency_ms, type: double, from: attrs.lat }\n"
			 "      - { name: code, type: long, renamed_from: old_code }\n");
	assert_int_equal(c->logs.ncolumns, 3);
	assert_string_equal(c->logs.columns[0].name, "status");
	assert_int_equal(c->logs.columns[0].type, FLOE_COL_INT);
	assert_string_equal(c->logs.columns[0].from, "status");
	assert_null(c->logs.columns[0].renamed_from);
	assert_string_equal(c->logs.columns[1].from, "lat");
	assert_int_equal(c->logs.columns[1].type, FLOE_COL_DOUBLE);
	assert_string_equal(c->logs.columns[2].renamed_from, "old_code");
	char *d = dump(c);
	struct floe_config *back = parse_ok(&a, d);
	assert_int_equal(back->logs.ncolumns, 3);
	assert_string_equal(back->logs.columns[1].from, "lat");
	assert_int_equal(back->logs.columns[2].type, FLOE_COL_LONG);
	floe_config_free(back);
	floe_free(NULL, d);
	floe_config_free(c);
	/* Absent (the parsers' own) and [] (none) are told apart, and survive the dump. */
	c = parse_ok(&a, "");
	assert_false(c->logs.columns_given);
	d = dump(c);
	assert_non_null(strstr(d, "\n    columns: ~  # "));
	back = parse_ok(&a, d);
	assert_false(back->logs.columns_given);
	floe_config_free(back);
	floe_free(NULL, d);
	floe_config_free(c);
	c = parse_ok(&a, "tables: {logs: {columns: []}}\n");
	assert_true(c->logs.columns_given);
	assert_int_equal(c->logs.ncolumns, 0);
	d = dump(c);
	assert_non_null(strstr(d, "\n    columns: []\n"));
	back = parse_ok(&a, d);
	assert_true(back->logs.columns_given);
	floe_config_free(back);
	floe_free(NULL, d);
	floe_config_free(c);
	expect_err("tables: {logs: {columns: [{name: s, type: integer}]}}\n", FLOE_EFORMAT,
		   "t.yaml:1:43: key 'tables.logs.columns[0].type': expected one of boolean, int, "
		   "long, float, double, string, date, binary, timestamptz, got 'integer'");
	expect_err("tables: {logs: {columns: [{name: s}]}}\n", FLOE_EFORMAT,
		   "t.yaml:1:27: missing required key 'tables.logs.columns[0].type'");
	expect_err("tables: {logs: {columns: [{name: host, type: string}]}}\n", FLOE_EFORMAT,
		   "t.yaml:1:34: key 'tables.logs.columns[0].name': 'host' is a built-in column "
		   "of the logs table");
	expect_err("tables: {logs: {columns: [{name: attrs, type: string}]}}\n", FLOE_EFORMAT,
		   "t.yaml:1:34: key 'tables.logs.columns[0].name': 'attrs' is a built-in column "
		   "of the logs table");
	expect_err("tables: {logs: {columns: [{name: 1x, type: int}]}}\n", FLOE_EFORMAT,
		   "t.yaml:1:34: key 'tables.logs.columns[0].name': expected a name of 1 to 64 "
		   "letters, digits and _, not starting with a digit, got '1x'");
	expect_err("tables:\n  logs:\n    columns:\n      - { name: s, type: int }\n"
		   "      - { name: s, type: long }\n",
		   FLOE_EFORMAT,
		   "t.yaml:4:7: key 'tables.logs.columns': column 's' is declared twice (lines 4 "
		   "and 5)");
	expect_err(
	    "tables:\n  logs:\n    columns:\n      - { name: a, type: int, from: x }\n"
	    "      - { name: b, type: long, from: attrs.x }\n",
	    FLOE_EFORMAT,
	    "t.yaml:4:7: key 'tables.logs.columns': columns 'a' and 'b' both take field 'x'");
	expect_err("tables:\n  logs:\n    columns:\n      - { name: a, type: int }\n"
		   "      - { name: b, type: int, renamed_from: a }\n",
		   FLOE_EFORMAT,
		   "t.yaml:4:7: key 'tables.logs.columns': column 'b' is renamed from 'a', which "
		   "the list still declares");
}

static void test_typed_lists(void **state)
{
	(void)state;
	const char *text =
	    "tables:\n  logs:\n    partition_by: [\"hour(ts)\", app, \"bucket( 16 ,host)\"]\n"
	    "    sort_by: [app, ts]\n    bloom_filters: [message, host]\n";
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	assert_int_equal(floe_config_parse(NULL, "t.yaml", text, strlen(text), "h", &c, &err), 0);
	const struct floe_part_spec *p = &c->logs.partition;
	assert_int_equal(p->n, 3);
	assert_int_equal(p->f[0].source_id, FLOE_COL_TS);
	assert_int_equal(p->f[0].transform.kind, FLOE_ICE_HOUR);
	assert_int_equal(p->f[0].field_id, 1000);
	assert_string_equal(p->f[0].name, "ts_hour");
	assert_int_equal(p->f[1].source_id, FLOE_COL_APP);
	assert_int_equal(p->f[1].transform.kind, FLOE_ICE_IDENTITY);
	assert_string_equal(p->f[1].name, "app");
	assert_int_equal(p->f[2].transform.kind, FLOE_ICE_BUCKET);
	assert_int_equal(p->f[2].transform.param, 16);
	assert_int_equal(p->f[2].field_id, 1002);
	/* The canonical text stays for the dump. */
	assert_string_equal(c->logs.partition_by[2], "bucket(16, host)");
	assert_int_equal(c->logs.nsort_by, 2);
	assert_int_equal(c->logs.sort_keys[0], FLOE_SORT_APP);
	assert_int_equal(c->logs.sort_keys[1], FLOE_SORT_TS);
	assert_int_equal(c->logs.nbloom_filters, 2);
	assert_int_equal(c->logs.bloom_ids[0], FLOE_COL_MESSAGE);
	assert_int_equal(c->logs.bloom_ids[1], FLOE_COL_HOST);
	floe_config_free(c);
	/* The defaults: day(ts); bloom filters on host and app; no sort. */
	assert_int_equal(floe_config_parse(NULL, "t.yaml", "", 0, "h", &c, &err), 0);
	assert_int_equal(c->logs.partition.n, 1);
	assert_int_equal(c->logs.partition.f[0].transform.kind, FLOE_ICE_DAY);
	assert_int_equal(c->logs.bloom_ids[0], FLOE_COL_HOST);
	assert_int_equal(c->logs.bloom_ids[1], FLOE_COL_APP);
	assert_int_equal(c->logs.nsort_by, 0);
	floe_config_free(c);
}

/* aggregations: the shorthands folded, the computed defaults, the dump read back, and
 * the errors at their file:line:column. */
static void test_aggregations(void **state)
{
	NEEDS_PCRE2(); /* where.matches throughout */
	(void)state;
	struct floe_config *c = parse_ok(
	    NULL, "inputs: [{type: tail, paths: /a}, {type: tail, paths: /b, raw: false}]\n"
		  "aggregations:\n"
		  "  - name: errs\n"
		  "    from: [1]\n"
		  "    window: 5m\n"
		  "    slide: 1m\n"
		  "    allowed_lateness: 30s\n"
		  "    group_by: [host, attrs.level]\n"
		  "    where: {field: app, matches: '^ssh'}\n"
		  "    metrics: [count, {sum: attrs.bytes}, {quantiles: lat, q: [0.5, 0.999]},"
		  " {distinct: attrs.user, precision: 12}, {top_k: app, k: 3}]\n"
		  "  - {name: all, table: all_t}\n");
	assert_int_equal(c->naggs, 2);
	const struct floe_config_agg *g = &c->aggs[0];
	assert_string_equal(g->table, "errs");
	assert_int_equal(g->window_ms, 300000);
	assert_int_equal(g->slide_ms, 60000);
	assert_int_equal(g->idle_timeout_ms, 330000);
	assert_int_equal(g->nfrom, 1);
	assert_int_equal(g->from_idx[0], 1);
	assert_int_equal(g->ngroup_by, 2);
	assert_string_equal(g->where.matches, "^ssh");
	assert_int_equal(g->nmetrics, 5);
	assert_int_equal(g->metrics[0].kind, FLOE_METRIC_COUNT);
	assert_string_equal(g->metrics[1].name, "sum_bytes");
	assert_string_equal(g->metrics[1].field, "attrs.bytes");
	assert_string_equal(g->metrics[2].name, "lat");
	assert_int_equal(g->metrics[2].nq, 2);
	assert_true(g->metrics[2].qv[1] == 0.999);
	assert_int_equal(g->metrics[3].precision, 12);
	assert_int_equal(g->metrics[4].k, 3);
	assert_string_equal(c->aggs[1].table, "all_t");
	assert_int_equal(c->aggs[1].nmetrics, 1);
	assert_int_equal(c->aggs[1].slide_ms, 60000);
	assert_true(c->inputs[0].raw);
	assert_false(c->inputs[1].raw);
	char *d = dump(c);
	struct floe_config *c2 = parse_ok(NULL, d);
	char *d2 = dump(c2);
	assert_string_equal(d, d2);
	floe_free(NULL, d);
	floe_free(NULL, d2);
	floe_config_free(c2);
	floe_config_free(c);

	static const struct err_case cases[] = {
	    {"aggregations: [{name: a, metrics: [{sum: x, k: 3}]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:48: key 'aggregations[0].metrics[0].k': only for top_k metrics (this one "
	     "is sum)"},
	    {"aggregations: [{name: a, slide: 7s}]\n", FLOE_EFORMAT,
	     "t.yaml:1:33: key 'aggregations[0].slide': expected a divisor of window (60000 ms) "
	     "of at least window/64, got 7000 ms"},
	    {"aggregations: [{name: a, from: [2]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:32: key 'aggregations[0].from[0]': there is no inputs[2] (0 inputs)"},
	    {"aggregations: [{name: a}, {name: a}]\n", FLOE_EFORMAT,
	     "t.yaml:1:34: key 'aggregations[1].name': 'a' is also the name of aggregations[0]"},
	    {"aggregations: [{name: logs}]\n", FLOE_EFORMAT,
	     "t.yaml:1:16: key 'aggregations[0].table': 'logs' is the raw table"},
	    {"aggregations: [{name: a, where: {field: x}}]\n", FLOE_EFORMAT,
	     "t.yaml:1:33: key 'aggregations[0].where': expected one of equals, matches or "
	     "present: true, got none"},
	    {"aggregations: [{name: a, metrics: [bogus]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:36: key 'aggregations[0].metrics[0].metric': expected one of count, sum, "
	     "min, max, avg, distinct, quantiles, top_k, got 'bogus'"},
	    {"aggregations: [{name: a, metrics: [{sum: x, max: y}]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:36: key 'aggregations[0].metrics[0]': expected one of count, sum, min, "
	     "max, avg, distinct, quantiles, top_k (as KIND: FIELD, or metric: KIND with field), "
	     "got several"},
	    {"aggregations: [{name: a, group_by: [ts]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:37: key 'aggregations[0].group_by[0]': 'ts' is the time: an "
	     "aggregation's window groups by it already, and a route rule or where does not "
	     "test it"},
	    {"aggregations: [{name: a, metrics: [count, count]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:43: key 'aggregations[0].metrics[1]': a second column named 'count' in "
	     "the aggregate table (set the metric's name)"},
	    {"aggregations: [{name: a, group_by: [host], metrics: [{max: x, name: host}]}]\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:54: key 'aggregations[0].metrics[0]': a second column named 'host' in "
	     "the aggregate table (set the metric's name)"},
	    {"aggregations: [{name: a, where: {field: x, matches: '('}}]\n", FLOE_EFORMAT, NULL},
	    {"inputs: [{type: tail, paths: a, raw: false}]\n", FLOE_EFORMAT,
	     "t.yaml:1:38: key 'inputs[0].raw': false, but no aggregation takes from inputs[0]: "
	     "its records would be kept nowhere (set raw: true, or name it in an aggregation's "
	     "from)"},
	    {"inputs: [{type: tail, paths: a}, {type: tail, paths: b, raw: false}]\n"
	     "aggregations: [{name: a, from: [0]}]\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:62: key 'inputs[1].raw': false, but no aggregation takes from inputs[1]: "
	     "its records would be kept nowhere (set raw: true, or name it in an aggregation's "
	     "from)"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (cases[i].code == 0) {
			floe_config_free(parse_ok(NULL, cases[i].yaml));
		} else if (!cases[i].msg) {
			struct floe_config *bad = NULL;
			struct floe_err err = {0};
			assert_int_equal(floe_config_parse(NULL, "t.yaml", cases[i].yaml,
							   strlen(cases[i].yaml), "host-1", &bad,
							   &err),
					 cases[i].code);
			assert_null(bad);
		} else {
			expect_err(cases[i].yaml, cases[i].code, cases[i].msg);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_values),	      cmocka_unit_test(test_dump),
	    cmocka_unit_test(test_profile_and_bloom), cmocka_unit_test(test_sort_by),
	    cmocka_unit_test(test_columns),	      cmocka_unit_test(test_typed_lists),
	    cmocka_unit_test(test_aggregations),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
