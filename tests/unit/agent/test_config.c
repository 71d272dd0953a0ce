/* Tests for agent/config: a full file with every key, defaults, a REST catalog, hostile
 * shapes, size and duration edge cases, file:// warehouses, allocation failures, the
 * packaged example file and what a smaller build refuses. */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config_lib.h"
static void test_full(void **state)
{
	NEEDS_PCRE2(); /* full_yaml has a regex parser and an s3:// warehouse */
	NEEDS_S3();
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_config *c = parse_ok(&a, full_yaml);

	assert_string_equal(c->path, "t.yaml");
	assert_string_equal(c->agent.id, "edge-017");
	assert_string_equal(c->agent.state_dir, "/srv/floe");
	assert_int_equal(c->agent.memory_limit, 64 * MiB);
	assert_int_equal(c->agent.compress_threads, 3);

	assert_int_equal(c->ninputs, 2);
	const struct floe_config_input *in = &c->inputs[0];
	assert_int_equal(in->type, FLOE_INPUT_TAIL);
	assert_int_equal(in->npaths, 2);
	assert_string_equal(in->paths[0], "/var/log/syslog");
	assert_string_equal(in->paths[1], "/var/log/*.log");
	assert_int_equal(in->nexclude, 1);
	assert_string_equal(in->exclude[0], "*.gz");
	assert_false(in->start_at_end);
	assert_int_equal(in->max_line_bytes, 64 * 1024);
	assert_int_equal(in->format, FLOE_FORMAT_CRI);
	assert_int_equal(in->parser, FLOE_PARSER_REGEX);
	assert_string_equal(
	    in->pattern, "^(?<time>[^ ]+ [^ ]+) (?P<level>[A-Z]+) (?:\\[[^]()]*\\]) (?<msg>.*)$");
	assert_string_equal(in->multiline.start, "^[0-9]{4}-");
	assert_int_equal(in->multiline.max_lines, 20);
	assert_int_equal(in->multiline.max_bytes, 64 * 1024);
	assert_int_equal(in->multiline.flush_timeout_ms, 250);
	assert_string_equal(in->timestamp.field, "time");
	assert_string_equal(in->timestamp.format, "%Y-%m-%d %H:%M:%S.%f");
	assert_int_equal(in->timestamp.zone_offset_s, -(5 * 3600 + 30 * 60));
	assert_int_equal(in->long_lines, FLOE_LONG_TRUNCATE);
	assert_int_equal(in->rotate_wait_ms, 0);
	assert_int_equal(in->max_open_files, 1024);
	assert_int_equal(in->forget_after_ms, 7 * 86400000ull);
	assert_int_equal(in->line, 8);
	in = &c->inputs[1];
	assert_int_equal(in->npaths, 1);
	assert_string_equal(in->paths[0], "/srv/app/current.log");
	assert_int_equal(in->nexclude, 12);
	assert_string_equal(in->exclude[0], "*.gz");
	assert_string_equal(in->exclude[1], "*.xz");
	assert_string_equal(in->exclude[2], "*.bz2");
	assert_string_equal(in->exclude[3], "*.zst");
	assert_input_defaults(in);
	assert_int_equal(in->line, 25);

	assert_string_equal(c->logs.name, "logs");
	assert_int_equal(c->logs.codec, FLOE_CODEC_LZ4_RAW);
	assert_int_equal(c->logs.zstd_level, 19);
	assert_int_equal(c->logs.npartition_by, 3);
	assert_string_equal(c->logs.partition_by[0], "hour(ts)");
	assert_string_equal(c->logs.partition_by[1], "identity(app)");
	assert_string_equal(c->logs.partition_by[2], "bucket(16, host)");
	assert_int_equal(c->logs.target_file_size, 128 * MiB);
	assert_int_equal(c->logs.commit_interval_ms, 300000);
	assert_int_equal(c->logs.row_group_size, 32 * MiB);
	assert_int_equal(c->logs.nsort_by, 2);
	assert_string_equal(c->logs.sort_by[0], "app");
	assert_string_equal(c->logs.sort_by[1], "ts");
	assert_int_equal(c->logs.sort_buffer, MiB);

	assert_string_equal(c->lake.warehouse, "s3://edge-lake.example/floe/logs");
	assert_string_equal(c->lake.namespace, "edge_logs");
	assert_int_equal(c->lake.catalog, FLOE_CATALOG_S3);
	assert_string_equal(c->lake.s3_bucket, "edge-lake.example");
	assert_string_equal(c->lake.s3_prefix, "floe/logs");
	assert_string_equal(c->lake.s3.endpoint, "http://127.0.0.1:7480");
	assert_string_equal(c->lake.s3.region, "eu-west-1");
	assert_true(c->lake.s3.path_style);
	assert_string_equal(c->lake.s3.ca_file, "/etc/floe/ca.pem");
	assert_string_equal(c->lake.s3.access_key_id, "env:FLOE_S3_KEY_ID");
	assert_string_equal(c->lake.s3.secret_access_key, "file:/etc/floe/s3-secret");
	assert_string_equal(c->lake.s3.session_token, "env:AWS_SESSION_TOKEN");
	assert_null(c->lake.s3.profile);
	assert_int_equal(c->lake.s3.multipart_threshold, 128 * MiB);
	assert_int_equal(c->lake.s3.part_size, 8 * MiB);
	assert_int_equal(c->spool.max_bytes, 2 * GiB);
	assert_int_equal(c->spool.policy, FLOE_SPOOL_DROP_OLDEST);
	floe_config_free(c);
	assert_int_equal(a.used, 0);
}

static void test_defaults(void **state)
{
	static const char *const empties[] = {
	    "",
	    "# nothing but a comment\n",
	    "---\n",
	    "{}",
	    "---\n...\n",
	    "~\n",
	    "agent:\ninputs:\ntables:\n  logs:\nlake:\n  catalog:\n  s3:\nspool:\n",
	    "lake: {s3: ~, catalog: {type: filesystem}}\nspool: {}\n",
	    "agent: {id: ~, memory_limit: }\n",
	    "inputs: []\n",
	};
	for (size_t i = 0; i < sizeof(empties) / sizeof(empties[0]); i++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		struct floe_config *c = parse_ok(&a, empties[i]);
		assert_int_equal(c->ninputs, 0);
		assert_defaults_except_inputs(c);
		floe_config_free(c);
		assert_int_equal(a.used, 0);
	}
	/* No default id from the caller. */
	struct floe_config *c = NULL;
	assert_int_equal(floe_config_parse(NULL, NULL, NULL, 0, NULL, &c, NULL), 0);
	assert_string_equal(c->agent.id, "floe");
	assert_string_equal(c->path, "<config>");
	floe_config_free(c);
	floe_config_free(NULL);
}

static void test_minimal_input(void **state)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_config *c =
	    parse_ok(&a, "\n\ninputs:\n- type: tail\n  paths: /var/log/syslog\n");
	assert_int_equal(c->ninputs, 1);
	assert_int_equal(c->inputs[0].npaths, 1);
	assert_string_equal(c->inputs[0].paths[0], "/var/log/syslog");
	assert_input_defaults(&c->inputs[0]);
	assert_int_equal(c->inputs[0].line, 4);
	assert_defaults_except_inputs(c);
	floe_config_free(c);
	assert_int_equal(a.used, 0);
}

/* Inputs' parsing keys, lake.s3 and spool: values out of their domain and the cross-key
 * rules. */
/* A REST catalog: its keys as given, the URL without its final '/', the namespace from
 * lake.namespace and the token endpoint from the URL by default. */
static void test_rest_catalog(void **state)
{
	(void)state;
	NEEDS_S3();
	struct floe_config *c =
	    parse_ok(NULL, "lake:\n  namespace: edge\n  catalog: {type: rest, uri: "
			   "\"https://cat.example/api/\", credential: \"env:CRED\", "
			   "warehouse: prod}\n");
	assert_int_equal(c->lake.catalog, FLOE_CATALOG_REST);
	assert_string_equal(c->lake.rest.uri, "https://cat.example/api");
	assert_string_equal(c->lake.rest.namespace, "edge");
	assert_string_equal(c->lake.rest.warehouse, "prod");
	assert_string_equal(c->lake.rest.scope, "catalog");
	assert_string_equal(c->lake.rest.oauth2_server_uri,
			    "https://cat.example/api/v1/oauth/tokens");
	assert_null(c->lake.rest.token);
	floe_config_free(c);
	c = parse_ok(
	    NULL, "lake: {catalog: {type: rest, uri: \"http://127.0.0.1:8181\", namespace: a.b_c, "
		  "token: \"file:/run/tok\", prefix: ws}}\n");
	assert_string_equal(c->lake.rest.namespace, "a.b_c");
	assert_string_equal(c->lake.rest.token, "file:/run/tok");
	assert_string_equal(c->lake.rest.prefix, "ws");
	assert_null(c->lake.rest.oauth2_server_uri);
	floe_config_free(c);
}

static void test_hostile_shapes(void **state)
{
	/* Deep nesting stops at the depth limit rather than recursing. */
	char deep[4096];
	size_t n = 0;
	n += (size_t)snprintf(deep, sizeof(deep), "agent: ");
	for (int i = 0; i < 1000; i++)
		deep[n++] = '[';
	deep[n] = '\0';
	expect_err(deep, FLOE_EPARSE, "t.yaml:1:39: document is nested deeper than 32 levels");

	/* The error detail holds the code and the line; no detail at all is fine. */
	struct floe_err small = {0};
	struct floe_config *c = NULL;
	const char *bad = "agent: 5\n";
	assert_int_equal(floe_config_parse(NULL, "t.yaml", bad, strlen(bad), "h", &c, &small),
			 FLOE_EFORMAT);
	assert_int_equal(small.code, FLOE_EFORMAT);
	assert_non_null(strstr(small.msg, "t.yaml:1:8: key 'agent'"));
	assert_int_equal(floe_config_parse(NULL, "t.yaml", bad, strlen(bad), "h", &c, NULL),
			 FLOE_EFORMAT);
	assert_null(c);

	/* Text without a terminating NUL: only len bytes are read. */
	char text[] = {'a', 'g', 'e', 'n', 't', ':', ' ', '{', '}', 'X'};
	assert_int_equal(floe_config_parse(NULL, "t.yaml", text, 9, "h", &c, NULL), 0);
	floe_config_free(c);

	/* A host name that is not a valid id must be replaced by agent.id. */
	struct floe_err err = {0};
	c = NULL;
	assert_int_equal(floe_config_parse(NULL, "t.yaml", "agent: {}\n", 10, "bad host", &c, &err),
			 FLOE_EFORMAT);
	assert_string_equal(err.msg,
			    "t.yaml:1:8: key 'agent.id' is not set and the host name "
			    "'bad host' is not a valid id (1 to 64 characters of A-Z a-z 0-9 . "
			    "_ -); set agent.id");
	assert_int_equal(
	    floe_config_parse(NULL, "t.yaml", "agent: {id: ok}\n", 16, "bad host", &c, &err), 0);
	floe_config_free(c);
}

static void test_units(void **state)
{
	uint64_t v = 0;
	char buf[FLOE_UNITS_FMT_MAX];
	static const struct {
		const char *s;
		int rc;
		uint64_t v;
	} sizes[] = {
	    {"0", 0, 0},
	    {"1", 0, 1},
	    {"512B", 0, 512},
	    {"1K", 0, 1024},
	    {"1KiB", 0, 1024},
	    {"3 MiB", 0, 3 * MiB},
	    {"2M", 0, 2 * MiB},
	    {"4GiB", 0, 4 * GiB},
	    {"1G", 0, GiB},
	    {"2TiB", 0, 2048 * GiB},
	    {"18446744073709551615", 0, UINT64_MAX},
	    {"18446744073709551615B", 0, UINT64_MAX},
	    {"18446744073709551616", FLOE_ELIMIT, 0},
	    {"16777216TiB", FLOE_ELIMIT, 0}, /* 2^24 * 2^40 = 2^64 */
	    {"16777215TiB", 0, 16777215ull << 40},
	    {"99999999999GiB", FLOE_ELIMIT, 0},
	    {"99999999999999999999999GiB", FLOE_ELIMIT, 0},
	    {"", FLOE_EPARSE, 0},
	    {"MiB", FLOE_EPARSE, 0},
	    {"-1", FLOE_EPARSE, 0},
	    {"+1", FLOE_EPARSE, 0},
	    {"1.5MiB", FLOE_EPARSE, 0},
	    {"1KB", FLOE_EPARSE, 0},
	    {"1MB", FLOE_EPARSE, 0},
	    {"1GB", FLOE_EPARSE, 0},
	    {"1mib", FLOE_EPARSE, 0},
	    {"1  MiB", FLOE_EPARSE, 0},
	    {"1 ", FLOE_EPARSE, 0},
	    {" 1", FLOE_EPARSE, 0},
	    {"1MiB ", FLOE_EPARSE, 0},
	    {"0x10", FLOE_EPARSE, 0},
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		v = 12345;
		int rc = floe_units_parse_size(sizes[i].s, strlen(sizes[i].s), &v);
		if (rc != sizes[i].rc)
			print_error("size '%s'\n", sizes[i].s);
		assert_int_equal(rc, sizes[i].rc);
		assert_int_equal(v, rc == 0 ? sizes[i].v : 12345);
	}
	/* Only len bytes count. */
	assert_int_equal(floe_units_parse_size("64MiBx", 6, &v), FLOE_EPARSE);
	assert_int_equal(floe_units_parse_size("64MiBx", 5, &v), 0);
	assert_int_equal(v, 64 * MiB);
	assert_int_equal(floe_units_parse_size("64MiBx", 2, &v), 0);
	assert_int_equal(v, 64);

	static const struct {
		const char *s;
		int rc;
		uint64_t v;
	} durs[] = {
	    {"1ms", 0, 1},
	    {"1500ms", 0, 1500},
	    {"60s", 0, 60000},
	    {"5m", 0, 300000},
	    {"24h", 0, 86400000},
	    {"2 h", 0, 7200000},
	    {"0s", 0, 0},
	    {"60", FLOE_EPARSE, 0},
	    {"1d", 0, 86400000},
	    {"365d", 0, 365 * 86400000ull},
	    {"1D", FLOE_EPARSE, 0},
	    {"213503982334d", 0, 213503982334ull * 86400000},
	    {"213503982335d", FLOE_ELIMIT, 0},
	    {"1S", FLOE_EPARSE, 0},
	    {"1.5s", FLOE_EPARSE, 0},
	    {"s", FLOE_EPARSE, 0},
	    {"18446744073709551615ms", 0, UINT64_MAX},
	    {"18446744073709551615s", FLOE_ELIMIT, 0},
	    {"5124095576030432h", FLOE_ELIMIT, 0},
	};
	for (size_t i = 0; i < sizeof(durs) / sizeof(durs[0]); i++) {
		v = 12345;
		int rc = floe_units_parse_duration_ms(durs[i].s, strlen(durs[i].s), &v);
		if (rc != durs[i].rc)
			print_error("duration '%s'\n", durs[i].s);
		assert_int_equal(rc, durs[i].rc);
		assert_int_equal(v, rc == 0 ? durs[i].v : 12345);
	}

	assert_string_equal(floe_units_format_size(0, buf), "0B");
	assert_string_equal(floe_units_format_size(1000, buf), "1000B");
	assert_string_equal(floe_units_format_size(1024, buf), "1KiB");
	assert_string_equal(floe_units_format_size(1536 * 1024, buf), "1536KiB");
	assert_string_equal(floe_units_format_size(64 * MiB, buf), "64MiB");
	assert_string_equal(floe_units_format_size(4 * GiB, buf), "4GiB");
	assert_string_equal(floe_units_format_size(1ull << 40, buf), "1TiB");
	assert_string_equal(floe_units_format_size(UINT64_MAX, buf), "18446744073709551615B");
	assert_string_equal(floe_units_format_duration_ms(0, buf), "0ms");
	assert_string_equal(floe_units_format_duration_ms(1500, buf), "1500ms");
	assert_string_equal(floe_units_format_duration_ms(90000, buf), "90s");
	assert_string_equal(floe_units_format_duration_ms(60000, buf), "1m");
	assert_string_equal(floe_units_format_duration_ms(86400000, buf), "1d");
	assert_string_equal(floe_units_format_duration_ms(90000000, buf), "25h");
	assert_string_equal(floe_units_format_duration_ms(7 * 86400000ull, buf), "7d");
}

/* Range edges, in the file. */
static void test_ranges(void **state)
{
	static const struct {
		const char *yaml;
		bool ok;
	} cases[] = {
	    {"agent: {memory_limit: 4MiB}", true},
	    {"agent: {memory_limit: 4194303}", false},
	    {"agent: {memory_limit: 4194304}", true},
	    {"agent: {memory_limit: 4GiB}", true},
	    {"agent: {memory_limit: 4294967297}", false},
	    {"inputs: [{type: tail, paths: a, max_line_bytes: 256}]", true},
	    {"inputs: [{type: tail, paths: a, max_line_bytes: 255B}]", false},
	    {"inputs: [{type: tail, paths: a, max_line_bytes: 64MiB}]", true},
	    {"inputs: [{type: tail, paths: a, max_line_bytes: 65537K}]", false},
	    {"tables: {logs: {target_file_size: 1MiB}}", true},
	    {"tables: {logs: {target_file_size: 1023K}}", false},
	    {"tables: {logs: {target_file_size: 2GiB, row_group_size: 2GiB}}", true},
	    {"tables: {logs: {target_file_size: 2097153K}}", false},
	    {"tables: {logs: {row_group_size: 64MiB}}", true},
	    {"tables: {logs: {row_group_size: 1023K}}", false},
	    {"tables: {logs: {commit_interval: 1s}}", true},
	    {"tables: {logs: {commit_interval: 999ms}}", false},
	    {"tables: {logs: {commit_interval: 86400s}}", true},
	    {"tables: {logs: {commit_interval: 86400001ms}}", false},
	    {"tables: {logs: {zstd_level: 1}}", true},
	    {"tables: {logs: {zstd_level: 22}}", true},
	    {"tables: {logs: {zstd_level: -1}}", false},
	    {"tables: {logs: {partition_by: []}}", true},
	    {"tables: {logs: {partition_by: [\"bucket(1024, host)\"]}}", true},
	    {"tables: {logs: {partition_by: [\"bucket(0, host)\"]}}", false},
	    {"tables: {logs: {partition_by: [\"bucket(16, app)\"]}}", false},
	    {"tables: {logs: {partition_by: [\"day(ts\"]}}", false},
	    {"tables: {logs: {partition_by: [\"day(ts))\"]}}", false},
	    {"tables: {logs: {partition_by: [\"identity(message)\"]}}", false},
	    {"tables: {logs: {partition_by: [\"\"]}}", false},
	    {"agent: {id: a234567890123456789012345678901234567890123456789012345678901234}", true},
	    {"agent: {id: a2345678901234567890123456789012345678901234567890123456789012345}",
	     false},
	    {"agent: {id: A.b_c-9}", true},
	    {"agent: {id: \"é\"}", false},
	    {"lake: {namespace: a_B_9}", true},
	    {"lake: {warehouse: lake/data}", true},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, max_lines: 2}}]", true},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, max_lines: 100001}}]", false},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, max_bytes: 64MiB}}]", true},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, max_bytes: 65537K}}]", false},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, flush_timeout: 1h}}]", true},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, flush_timeout: 99ms}}]", false},
	    {"inputs: [{type: tail, paths: a, rotate_wait: 0ms}]", true},
	    {"inputs: [{type: tail, paths: a, rotate_wait: 3600001ms}]", false},
	    {"inputs: [{type: tail, paths: a, max_open_files: 8}]", true},
	    {"inputs: [{type: tail, paths: a, max_open_files: 65536}]", true},
	    {"inputs: [{type: tail, paths: a, max_open_files: 65537}]", false},
	    {"inputs: [{type: tail, paths: a, max_open_files: -8}]", false},
	    {"inputs: [{type: tail, paths: a, forget_after: 1m}]", true},
	    {"inputs: [{type: tail, paths: a, forget_after: 365d}]", true},
	    {"inputs: [{type: tail, paths: a, forget_after: 8761h}]", false},
	    {"lake: {warehouse: \"s3://b.c\", catalog: {type: s3}, s3: {part_size: 5MiB, "
	     "multipart_threshold: 5GiB}}",
	     true},
	    {"lake: {warehouse: \"s3://b.c\", catalog: {type: s3}, s3: {part_size: 5121K}}", true},
	    {"lake: {warehouse: \"s3://b.c\", catalog: {type: s3}, s3: {part_size: 5119K}}", false},
	    {"lake: {warehouse: \"s3://b.c\", catalog: {type: s3}, s3: {part_size: 5121M}}", false},
	    {"spool: {max_bytes: 16MiB}", true},
	    {"spool: {max_bytes: 1TiB}", true},
	    {"spool: {max_bytes: 16383K}", false},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floe_config *c = NULL;
		struct floe_err err = {0};
		int rc = floe_config_parse(NULL, "t.yaml", cases[i].yaml, strlen(cases[i].yaml),
					   "h", &c, &err);
		if (rc == FLOE_EFORMAT && refused_by_build(&err))
			continue;
		if ((rc == 0) != cases[i].ok)
			print_error("'%s': rc %d %s\n", cases[i].yaml, rc, err.msg);
		assert_int_equal(rc == 0, cases[i].ok);
		assert_int_equal(rc, cases[i].ok ? 0 : FLOE_EFORMAT);
		floe_config_free(c);
	}
}

static void test_row_group_default(void **state)
{
	struct floe_config *c = parse_ok(NULL, "tables: {logs: {target_file_size: 8MiB}}\n");
	assert_int_equal(c->logs.row_group_size, 8 * MiB);
	floe_config_free(c);
	c = parse_ok(NULL, "tables: {logs: {target_file_size: 1GiB}}\n");
	assert_int_equal(c->logs.row_group_size, 64 * MiB);
	floe_config_free(c);
}

static void test_warehouse(void **state)
{
	static const struct {
		const char *yaml, *want;
	} cases[] = {
	    {"lake: {warehouse: \"file:///srv/lake\"}", "/srv/lake"},
	    {"lake: {warehouse: \"file://localhost/srv/my%20lake/%C3%A9\"}",
	     "/srv/my lake/\xc3\xa9"},
	    {"lake: {warehouse: \"file:///\"}", "/"},
	    {"lake: {warehouse: \"file:///%F0%9F%90%9F%E2%82%AC\"}",
	     "/\xf0\x9f\x90\x9f\xe2\x82\xac"},
	    {"lake: {warehouse: /data/lake}", "/data/lake"},
	    {"lake: {warehouse: ./lake}", "./lake"},
	    {"lake: {warehouse: \"c:lake\"}", "c:lake"},
	    {"agent: {state_dir: /srv/floe/}", "/srv/floe/warehouse"},
	    {"agent: {state_dir: state}", "state/warehouse"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct floe_config *c = parse_ok(NULL, cases[i].yaml);
		assert_string_equal(c->lake.warehouse, cases[i].want);
		floe_config_free(c);
	}
}

/* Every allocation in turn fails: the parse returns FLOE_ENOMEM with nothing leaked, and
 * once enough allocations succeed the result equals the unconstrained one. */
static void test_alloc_failures(void **state)
{
	NEEDS_PCRE2(); /* full_yaml */
	NEEDS_S3();
	struct floe_config *ref = parse_ok(NULL, full_yaml);
	char *want = dump(ref);
	floe_config_free(ref);

	bool done = false;
	for (long k = 0; !done && k < 100000; k++) {
		struct floe_alloc a;
		struct floe_config *c = NULL;
		struct floe_err err = {0};
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		int rc = floe_config_parse(&a, "t.yaml", full_yaml, strlen(full_yaml), "host-1", &c,
					   &err);
		if (rc == 0) {
			/* The dump under the same countdown must also fail cleanly. */
			struct floe_buf b;
			floe_buf_init(&b, &a, 1 << 20);
			rc = floe_config_dump(c, &b);
			if (rc == 0) {
				assert_int_equal(floe_buf_putc(&b, '\0'), 0);
				assert_string_equal((char *)b.data, want);
				done = true;
			} else {
				assert_int_equal(rc, FLOE_ENOMEM);
				assert_int_equal(b.len, 0);
			}
			floe_buf_fini(&b);
			floe_config_free(c);
		} else {
			assert_int_equal(rc, FLOE_ENOMEM);
			assert_string_equal(err.msg, "t.yaml: out of memory");
			assert_null(c);
		}
		assert_int_equal(a.used, 0);
	}
	assert_true(done);
	floe_free(NULL, want);

	/* Also an error path under allocation failure. */
	static const char bad[] = "inputs:\n  - type: tail\n    paths: [a, b, c]\n    nope: 1\n";
	for (long k = 0; k < 200; k++) {
		struct floe_alloc a;
		struct floe_config *c = NULL;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		int rc = floe_config_parse(&a, "t.yaml", bad, strlen(bad), "h", &c, NULL);
		assert_true(rc == FLOE_ENOMEM || rc == FLOE_EFORMAT);
		assert_null(c);
		assert_int_equal(a.used, 0);
	}
}

static void test_packaged_example(void **state)
{
	const char *path = FLOE_TEST_DATA "/../../packaging/floe.yaml";
	FILE *f = fopen(path, "rb");
	assert_non_null(f);
	static char text[65536];
	size_t len = fread(text, 1, sizeof(text), f);
	fclose(f);
	assert_true(len > 0 && len < sizeof(text));

	struct floe_alloc a;
	floe_alloc_init(&a, 0);
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	int rc = floe_config_parse(&a, path, text, len, "edge-host", &c, &err);
	if (rc)
		print_error("%s\n", err.msg);
	assert_int_equal(rc, 0);
	assert_string_equal(c->agent.id, "edge-host");
	assert_string_equal(c->agent.state_dir, "/var/lib/floe");
	assert_int_equal(c->ninputs, 1);
	assert_int_equal(c->inputs[0].npaths, 2);
	assert_string_equal(c->inputs[0].paths[0], "/var/log/syslog");
	assert_string_equal(c->inputs[0].paths[1], "/var/log/*.log");
	assert_int_equal(c->inputs[0].nexclude, 12);
	assert_string_equal(c->inputs[0].exclude[0], "*.gz");
	assert_true(c->inputs[0].start_at_end);
	assert_string_equal(c->lake.warehouse, "/var/lib/floe/warehouse");
	assert_int_equal(c->lake.catalog, FLOE_CATALOG_FILESYSTEM);
	assert_string_equal(c->logs.partition_by[0], "day(ts)");
	assert_input_defaults(&c->inputs[0]);
	assert_null(c->lake.s3_bucket);
	assert_int_equal(c->spool.max_bytes, GiB);
	assert_int_equal(c->spool.policy, FLOE_SPOOL_BLOCK);
	floe_config_free(c);
	assert_int_equal(a.used, 0);
}

/* A smaller build refuses a pattern and an s3:// warehouse at their keys, saying why. */
static void test_smaller_build(void **state)
{
	(void)state;
	static const char *const yaml[] = {
	    "inputs: [{type: tail, paths: a, parser: regex, pattern: \"(?<a>x)\"}]",
	    "inputs: [{type: tail, paths: a, multiline: {start: x}}]",
	    "aggregations: [{name: a, where: {field: x, matches: y}}]",
	    "lake: {warehouse: \"s3://bkt\", catalog: {type: s3}}",
	};
	size_t refused = 0;
	for (size_t i = 0; i < sizeof(yaml) / sizeof(yaml[0]); i++) {
		struct floe_config *c = NULL;
		struct floe_err err = {0};
		int rc = floe_config_parse(NULL, "t.yaml", yaml[i], strlen(yaml[i]), "h", &c, &err);
		if (rc == 0) {
			floe_config_free(c);
			continue;
		}
		if (!refused_by_build(&err))
			print_error("'%s': %s\n", yaml[i], err.msg);
		assert_int_equal(rc, FLOE_EFORMAT);
		assert_true(refused_by_build(&err));
		refused++;
	}
	size_t want = 0;
#ifdef FLOE_NO_PCRE2
	want += 3; /* the three patterns */
#endif
#ifdef FLOE_NO_S3
	want += 1; /* the warehouse */
#endif
	assert_int_equal(refused, want);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_full),
	    cmocka_unit_test(test_defaults),
	    cmocka_unit_test(test_minimal_input),
	    cmocka_unit_test(test_rest_catalog),
	    cmocka_unit_test(test_hostile_shapes),
	    cmocka_unit_test(test_units),
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_row_group_default),
	    cmocka_unit_test(test_warehouse),
	    cmocka_unit_test(test_alloc_failures),
	    cmocka_unit_test(test_packaged_example),
	    cmocka_unit_test(test_smaller_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
