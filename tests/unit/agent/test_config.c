/* Tests for agent/config: a full file with every key, defaults, each class of error with
 * its exact message and position, size and duration edge cases, file:// warehouses, the
 * effective-config dump, allocation failures, and the packaged example file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/config/config.h"
#include "agent/schema/convert.h"
#include "agent/config/units.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include "build_skip.h"

#define MiB (1024ull * 1024)
#define GiB (1024ull * MiB)

static const char full_yaml[] = "# every key, none at its default\n"
				"agent:\n"
				"  id: edge-017\n"
				"  state_dir: /srv/floe\n"
				"  memory_limit: 64MiB\n"
				"  compress_threads: 3\n"
				"inputs:\n"
				"  - type: tail\n"
				"    paths: [/var/log/syslog, \"/var/log/*.log\"]\n"
				"    exclude: [\"*.gz\"]\n"
				"    start_at: beginning\n"
				"    max_line_bytes: 64KiB\n"
				"    format: cri\n"
				"    parser: regex\n"
				"    pattern: '^(?<time>[^ ]+ [^ ]+) (?P<level>[A-Z]+) "
				"(?:\\[[^]()]*\\]) (?<msg>.*)$'\n"
				"    multiline: {start: \"^[0-9]{4}-\", max_lines: 20, max_bytes: "
				"64KiB, flush_timeout: 250ms}\n"
				"    timestamp:\n"
				"      field: time\n"
				"      format: \"%Y-%m-%d %H:%M:%S.%f\"\n"
				"      zone: \"-05:30\"\n"
				"    long_lines: truncate\n"
				"    rotate_wait: 0s\n"
				"    max_open_files: 1024\n"
				"    forget_after: 7d\n"
				"  - { type: tail, paths: /srv/app/current.log }\n"
				"tables:\n"
				"  logs:\n"
				"    codec: lz4_raw\n"
				"    zstd_level: 19\n"
				"    partition_by: [\"hour(ts)\", app, \"bucket(16,host)\"]\n"
				"    target_file_size: 128 MiB\n"
				"    commit_interval: 5m\n"
				"    row_group_size: 32M\n"
				"    sort_by: [app, ts]\n"
				"    sort_buffer: 1MiB\n"
				"lake:\n"
				"  warehouse: s3://edge-lake.example/floe/logs/\n"
				"  namespace: edge_logs\n"
				"  catalog:\n"
				"    type: s3\n"
				"  s3:\n"
				"    endpoint: http://127.0.0.1:7480/\n"
				"    region: eu-west-1\n"
				"    path_style: true\n"
				"    ca_file: /etc/floe/ca.pem\n"
				"    access_key_id: env:FLOE_S3_KEY_ID\n"
				"    secret_access_key: file:/etc/floe/s3-secret\n"
				"    session_token: env:AWS_SESSION_TOKEN\n"
				"    multipart_threshold: 128MiB\n"
				"    part_size: 8MiB\n"
				"spool:\n"
				"  max_bytes: 2GiB\n"
				"  policy: drop_oldest\n";

static struct floe_config *parse_ok(struct floe_alloc *a, const char *text)
{
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	int rc = floe_config_parse(a, "t.yaml", text, strlen(text), "host-1", &c, &err);
	if (rc != 0)
		print_error("unexpected failure %d: %s\n", rc, err.msg);
	assert_int_equal(rc, 0);
	assert_non_null(c);
	return c;
}

/* What a smaller build refuses: a pattern (a regex parser's, a multiline start, a
 * where.matches) without PCRE2 (FLOE_NO_PCRE2), an s3:// warehouse without the S3 client
 * (FLOE_NO_S3). It refuses them where they stand, before what a case is about, so such
 * cases run only in a full build; test_smaller_build checks the refusals. */
static bool refused_by_build(const struct floe_err *err)
{
#ifdef FLOE_NO_PCRE2
	if (strstr(err->msg, "this floe was built without PCRE2"))
		return true;
#endif
#ifdef FLOE_NO_S3
	if (strstr(err->msg, "this build of floe has no S3 support"))
		return true;
#endif
	(void)err;
	return false;
}

static void expect_err(const char *text, int code, const char *msg)
{
	struct floe_alloc a;
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	floe_alloc_init(&a, 0);
	int rc = floe_config_parse(&a, "t.yaml", text, strlen(text), "host-1", &c, &err);
	if (rc == FLOE_EFORMAT && refused_by_build(&err))
		return;
	if (rc != code || strcmp(err.msg, msg) != 0)
		print_error("input:\n%s\nwant %d '%s'\ngot  %d '%s'\n", text, code, msg, rc,
			    err.msg);
	assert_int_equal(rc, code);
	assert_string_equal(err.msg, msg);
	assert_null(c);
	assert_int_equal(a.used, 0);
}

static void assert_defaults_except_inputs(const struct floe_config *c)
{
	assert_string_equal(c->agent.id, "host-1");
	assert_string_equal(c->agent.state_dir, "/var/lib/floe");
	assert_int_equal(c->agent.memory_limit, 32 * MiB);
	assert_int_equal(c->agent.compress_threads, 1);
	assert_int_equal(c->agent.log_format, FLOE_CONFIG_LOG_TEXT);
	assert_string_equal(c->logs.name, "logs");
	assert_int_equal(c->logs.codec, FLOE_CODEC_ZSTD);
	assert_int_equal(c->logs.zstd_level, 1);
	assert_int_equal(c->logs.npartition_by, 1);
	assert_string_equal(c->logs.partition_by[0], "day(ts)");
	assert_int_equal(c->logs.target_file_size, 64 * MiB);
	assert_int_equal(c->logs.commit_interval_ms, 60000);
	assert_int_equal(c->logs.row_group_size, 64 * MiB);
	assert_string_equal(c->lake.warehouse, "/var/lib/floe/warehouse");
	assert_string_equal(c->lake.namespace, "default");
	assert_int_equal(c->lake.catalog, FLOE_CATALOG_FILESYSTEM);
	assert_null(c->lake.s3_bucket);
	assert_null(c->lake.s3_prefix);
	assert_string_equal(c->lake.s3.endpoint, "https://s3.us-east-1.amazonaws.com");
	assert_string_equal(c->lake.s3.region, "us-east-1");
	assert_false(c->lake.s3.path_style);
	assert_null(c->lake.s3.ca_file);
	assert_null(c->lake.s3.access_key_id);
	assert_null(c->lake.s3.secret_access_key);
	assert_null(c->lake.s3.session_token);
	assert_null(c->lake.s3.profile);
	assert_int_equal(c->lake.s3.multipart_threshold, 64 * MiB);
	assert_int_equal(c->lake.s3.part_size, 16 * MiB);
	assert_int_equal(c->spool.max_bytes, GiB);
	assert_int_equal(c->spool.policy, FLOE_SPOOL_BLOCK);
}

/* The keys of an input that has only type and paths. */
static void assert_input_defaults(const struct floe_config_input *in)
{
	assert_int_equal(in->nexclude, 4);
	assert_true(in->start_at_end);
	assert_int_equal(in->max_line_bytes, MiB);
	assert_int_equal(in->format, FLOE_FORMAT_RAW);
	assert_int_equal(in->parser, FLOE_PARSER_NONE);
	assert_null(in->pattern);
	assert_null(in->multiline.start);
	assert_int_equal(in->multiline.max_lines, 500);
	assert_int_equal(in->multiline.max_bytes, MiB);
	assert_int_equal(in->multiline.flush_timeout_ms, 5000);
	assert_string_equal(in->timestamp.field, "message");
	assert_null(in->timestamp.format);
	assert_int_equal(in->timestamp.zone_offset_s, 0);
	assert_int_equal(in->long_lines, FLOE_LONG_SPLIT);
	assert_int_equal(in->rotate_wait_ms, 5000);
	assert_int_equal(in->max_open_files, 256);
	assert_int_equal(in->forget_after_ms, 86400000ull);
}

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
	assert_int_equal(in->nexclude, 4);
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

struct err_case {
	const char *yaml;
	int code;
	const char *msg;
};

static void test_errors(void **state)
{
	static const struct err_case cases[] = {
	    /* unknown keys, at every level, with the valid keys listed */
	    {"agent:\n  foo: 1\n", FLOE_EFORMAT,
	     "t.yaml:2:3: unknown key 'agent.foo'; valid keys here: id, state_dir, memory_limit, compress_threads, replaces, log_format, http"},
	    /* agent.http.listen: HOST:PORT as a tcp:// listen URI takes it */
	    {"agent:\n  http: {listen: \"127.0.0.1\"}\n", FLOE_EFORMAT,
	     "t.yaml:2:18: key 'agent.http.listen': expected HOST:PORT (e.g. 127.0.0.1:9464 or "
	     "[::1]:9464): missing port (HOST:PORT), got '127.0.0.1'"},
	    {"agent:\n  http: {listen: \"localhost:99999\"}\n", FLOE_EFORMAT,
	     "t.yaml:2:18: key 'agent.http.listen': expected HOST:PORT (e.g. 127.0.0.1:9464 or "
	     "[::1]:9464): port above 65535, got 'localhost:99999'"},
	    {"agent:\n  http: {listen: \"127.0.0.1:9464/metrics\"}\n", FLOE_EFORMAT,
	     "t.yaml:2:18: key 'agent.http.listen': expected HOST:PORT (e.g. 127.0.0.1:9464 or "
	     "[::1]:9464), got '127.0.0.1:9464/metrics'"},
	    {"agent:\n  http: {port: 1}\n", FLOE_EFORMAT,
	     "t.yaml:2:10: unknown key 'agent.http.port'; valid keys here: listen"},
	    {"outputs: []\n", FLOE_EFORMAT,
	     "t.yaml:1:1: unknown key 'outputs'; valid keys here: agent, inputs, tables, lake, "
	     "spool, maintain, aggregations"},
	    /* the Iceberg properties floe follows, by Iceberg's names, and their ranges */
	    {"tables: {logs: {properties: {history.expire.max-snapshot-age: 1d}}}\n", FLOE_EFORMAT,
	     "t.yaml:1:30: unknown key 'tables.logs.properties.history.expire.max-snapshot-age'; valid "
	     "keys here: commit.manifest-merge.enabled, commit.manifest.min-count-to-merge, "
	     "commit.manifest.target-size-bytes, history.expire.max-snapshot-age-ms, "
	     "history.expire.min-snapshots-to-keep, write.metadata.previous-versions-max, "
	     "write.metadata.delete-after-commit.enabled"},
	    {"tables: {logs: {properties: {history.expire.min-snapshots-to-keep: 0}}}\n", FLOE_EFORMAT,
	     "t.yaml:1:68: key 'tables.logs.properties.history.expire.min-snapshots-to-keep': "
	     "expected an integer in 1..100000000, got '0'"},
	    {"tables: {logs: {properties: {commit.manifest-merge.enabled: yes}}}\n", FLOE_EFORMAT,
	     "t.yaml:1:61: key 'tables.logs.properties.commit.manifest-merge.enabled': expected one of "
	     "false, true, got 'yes'"},
	    {"tables:\n  9metrics: {}\n", FLOE_EFORMAT,
	     "t.yaml:2:3: key 'tables.9metrics': a table name is 1 to 128 letters, digits and _, "
	     "not starting with a digit, got '9metrics'"},
	    {"inputs:\n  - {type: tail, paths: [a], table: metrics}\n", FLOE_EFORMAT,
	     "t.yaml:2:37: key 'inputs[0].table': unknown table 'metrics' (the tables are: logs; a "
	     "table is declared under tables:)"},
	    {"inputs:\n  - {type: tail, paths: [a], codec: json}\n", FLOE_EFORMAT,
	     "t.yaml:2:30: unknown key 'inputs[0].codec'; valid keys here: name, type, paths, "
	     "exclude, start_at, max_line_bytes, format, parser, pattern, multiline, "
	     "timestamp, long_lines, rotate_wait, partial_line_timeout, max_open_files, "
	     "forget_after, follow_symlinks, "
	     "listen, max_connections, idle_timeout, max_message_bytes, socket_receive_buffer, "
	     "host_from, zone, socket_mode, socket_owner, socket_group, matches, directory, fields, "
	     "include_own, tls, raw, table, route"},
	    {"inputs: [{type: tail, paths: a, multiline: {start: x, max: 3}}]\n", FLOE_EFORMAT,
	     "t.yaml:1:55: unknown key 'inputs[0].multiline.max'; valid keys here: start, "
	     "max_lines, max_bytes, flush_timeout"},
	    {"lake:\n  s3: {key: x}\n", FLOE_EFORMAT,
	     "t.yaml:2:8: unknown key 'lake.s3.key'; valid keys here: endpoint, region, "
	     "path_style, ca_file, access_key_id, secret_access_key, session_token, profile, "
	     "credentials, allow_http, request_timeout, min_rate, multipart_threshold, part_size"},
	    {"spool: {size: 1GiB}\n", FLOE_EFORMAT,
	     "t.yaml:1:9: unknown key 'spool.size'; valid keys here: max_bytes, policy"},
	    {"lake: {catalog: {type: filesystem, uri: \"https://c\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:41: key 'lake.catalog.uri': only used with type rest"},
	    {"lake: {catalog: {type: rest, uri: x}}\n", FLOE_EFORMAT,
	     "t.yaml:1:35: key 'lake.catalog.uri': expected https://HOST[:PORT][/PATH] (no query), got 'x'"},
	    {"lake: {catalog: {type: rest, uri: \"http://cat.example\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:35: key 'lake.catalog.uri': 'http://cat.example' is plain HTTP to a host that is "
	     "not loopback: tokens and client secrets would cross the network unencrypted; use https://"},
	    {"lake: {catalog: {type: rest, uri: \"https://c\", credential: \"id:secret\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:60: key 'lake.catalog.credential': expected a reference, env:NAME (an environment "
	     "variable) or file:/absolute/path (a file holding the value); the value itself does not "
	     "belong in the configuration"},
	    {"lake: {catalog: {type: rest, uri: \"https://c\", token: \"env:T\", credential: \"env:C\"}}\n",
	     FLOE_EFORMAT, "t.yaml:1:55: key 'lake.catalog.token': give token or credential, not both"},
	    {"lake: {catalog: {type: rest, uri: \"https://c\", namespace: \"a..b\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:59: key 'lake.catalog.namespace': expected 1 to 8 levels of 1 to 128 characters of "
	     "A-Z a-z 0-9 _, joined by '.', got 'a..b'"},
	    {"agent: {\"i\\nd\": 1}\n", FLOE_EFORMAT,
	     "t.yaml:1:9: unknown key 'agent.i?d'; valid keys here: id, state_dir, memory_limit, compress_threads, replaces, log_format, http"},
	    /* globs glob(3) would read otherwise than meant */
	    {"inputs: [{type: tail, paths: [\"/var/log/**/*.log\"]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'inputs[0].paths[0]': '**' at offset 9: patterns match one "
	     "directory level per '*'; list the levels (a/*/*.log) or several patterns"},
	    {"inputs: [{type: tail, paths: [\"/l/[ab.log\"]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'inputs[0].paths[0]': '[' at offset 3 is not closed by ']'"},
	    {"inputs: [{type: tail, paths: [\"/l/{a,b.log\"]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'inputs[0].paths[0]': a '{' is not closed"},
	    {"inputs: [{type: tail, paths: [\"/var/log/\"]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'inputs[0].paths[0]': a pattern of files cannot end in '/' (add "
	     "*.log or the file name)"},
	    {"inputs: [{type: tail, paths: [a], follow_symlinks: yes}]\n", FLOE_EFORMAT,
	     "t.yaml:1:52: key 'inputs[0].follow_symlinks': expected one of within_glob_root, "
	     "true, false, got 'yes'"},
	    /* enum values */
	    {"tables:\n  logs:\n    codec: gzip\n", FLOE_EFORMAT,
	     "t.yaml:3:12: key 'tables.logs.codec': expected one of zstd, lz4_raw, "
	     "uncompressed, got 'gzip'"},
	    {"tables:\n  logs:\n    message: drop\n", FLOE_EFORMAT,
	     "t.yaml:3:14: key 'tables.logs.message': expected one of keep, unparsed, got 'drop'"},
	    {"inputs: [{type: journalx, paths: [a]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:17: key 'inputs[0].type': expected one of tail, syslog, journal, got 'journalx'"},
	    /* the keys of one input type on the other */
	    {"inputs: [{type: syslog, paths: [a]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:32: key 'inputs[0].paths': not a key of a syslog input (a syslog message "
	     "is read by its header: RFC 5424 or 3164)"},
	    {"inputs: [{type: syslog}]\n", FLOE_EFORMAT,
	     "t.yaml:1:10: missing required key 'inputs[0].listen' (a syslog input listens on "
	     "udp://, tcp://, tls://HOST:PORT, unix:///path or unix+stream:///path)"},
	    {"inputs: [{type: tail, paths: [a], listen: udp://127.0.0.1:514}]\n", FLOE_EFORMAT,
	     "t.yaml:1:43: key 'inputs[0].listen': not a key of a tail input (it is one of type "
	     "syslog)"},
	    {"inputs: [{type: syslog, listen: [udp://127.0.0.1:514, udp://127.0.0.1:514]}]\n",
	     FLOE_EFORMAT, "t.yaml:1:55: key 'inputs[0].listen[1]': duplicate entry "
			   "'udp://127.0.0.1:514'"},
	    {"inputs: [{type: syslog, listen: \"udp://127.0.0.1:99999\"}]\n", FLOE_EFORMAT,
	     "t.yaml:1:33: key 'inputs[0].listen': 'udp://127.0.0.1:99999': port above 65535 (at "
	     "byte 16)"},
	    {"inputs: [{type: syslog, listen: \"tls://127.0.0.1:6514\"}]\n", FLOE_EFORMAT,
	     "t.yaml:1:33: key 'inputs[0].listen': a tls:// listener needs inputs[0].tls with "
	     "cert and key"},
	    {"inputs: [{type: syslog, listen: \"unix:///run/x\", socket_mode: \"0999\"}]\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:63: key 'inputs[0].socket_mode': expected permission bits in octal (0660, "
	     "0666), got '0999'"},
	    {"inputs: [{type: tail, paths: [a], start_at: middle}]\n", FLOE_EFORMAT,
	     "t.yaml:1:45: key 'inputs[0].start_at': expected one of beginning, end, got "
	     "'middle'"},
	    {"lake: {catalog: {type: rest}}\n", FLOE_EFORMAT,
	     "t.yaml:1:24: key 'lake.catalog.type': rest needs lake.catalog.uri (the catalog's base URL)"},
	    {"lake: {catalog: {type: nessie}}\n", FLOE_EFORMAT,
	     "t.yaml:1:24: key 'lake.catalog.type': expected one of filesystem, s3, rest, got "
	     "'nessie'"},
	    {"inputs: [{type: tail, paths: a, format: json}]\n", FLOE_EFORMAT,
	     "t.yaml:1:41: key 'inputs[0].format': expected one of raw, cri, docker, got "
	     "'json'"},
	    {"inputs: [{type: tail, paths: a, parser: csv}]\n", FLOE_EFORMAT,
	     "t.yaml:1:41: key 'inputs[0].parser': expected one of none, json, logfmt, regex, "
	     "apache_common, apache_combined, nginx_combined, syslog_file, "
	     "got 'csv'"},
	    {"inputs: [{type: tail, paths: a, long_lines: drop}]\n", FLOE_EFORMAT,
	     "t.yaml:1:45: key 'inputs[0].long_lines': expected one of split, truncate, got "
	     "'drop'"},
	    {"lake: {s3: {path_style: yes}}\n", FLOE_EFORMAT,
	     "t.yaml:1:25: key 'lake.s3.path_style': expected one of false, true, got 'yes'"},
	    {"agent: {log_format: xml}\n", FLOE_EFORMAT,
	     "t.yaml:1:21: key 'agent.log_format': expected one of text, json, got 'xml'"},
	    {"spool: {policy: drop_newest}\n", FLOE_EFORMAT,
	     "t.yaml:1:17: key 'spool.policy': expected one of block, drop_oldest, got "
	     "'drop_newest'"},
	    /* wrong node types */
	    {"agent: [1]\n", FLOE_EFORMAT,
	     "t.yaml:1:8: key 'agent': expected a mapping, got a sequence"},
	    {"agent: 5\n", FLOE_EFORMAT,
	     "t.yaml:1:8: key 'agent': expected a mapping, got a scalar"},
	    {"inputs: {type: tail}\n", FLOE_EFORMAT,
	     "t.yaml:1:9: key 'inputs': expected a sequence of mappings, got a mapping"},
	    {"inputs: [5]\n", FLOE_EFORMAT,
	     "t.yaml:1:10: key 'inputs[0]': expected a mapping, got a scalar"},
	    {"inputs:\n  -\n", FLOE_EFORMAT,
	     "t.yaml:2:4: key 'inputs[0]': expected a mapping, got null"},
	    {"agent: {id: [a]}\n", FLOE_EFORMAT,
	     "t.yaml:1:13: key 'agent.id': expected a string, got a sequence"},
	    {"tables: {logs: {codec: {a: 1}}}\n", FLOE_EFORMAT,
	     "t.yaml:1:24: key 'tables.logs.codec': expected one of zstd, lz4_raw, "
	     "uncompressed, got a mapping"},
	    {"inputs: [{type: tail, paths: {a: 1}}]\n", FLOE_EFORMAT,
	     "t.yaml:1:30: key 'inputs[0].paths': expected a string or a sequence of strings, "
	     "got a mapping"},
	    {"inputs: [{type: tail, paths: [a, [b]]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:34: key 'inputs[0].paths[1]': expected a string, got a sequence"},
	    {"inputs: [{type: tail, paths: [a, ~]}]\n", FLOE_EFORMAT,
	     "t.yaml:1:34: key 'inputs[0].paths[1]': expected a string, got null"},
	    {"- agent\n", FLOE_EFORMAT,
	     "t.yaml:1:1: expected a mapping at the top level, got a sequence"},
	    {"agent\n", FLOE_EFORMAT,
	     "t.yaml:1:1: expected a mapping at the top level, got a scalar"},
	    {"agent:\n  ? [id]\n  : x\n", FLOE_EFORMAT,
	     "t.yaml:2:5: key names must be strings, got a sequence"},
	    /* required keys and empty values */
	    {"inputs:\n  - type: tail\n", FLOE_EFORMAT,
	     "t.yaml:2:5: missing required key 'inputs[0].paths'"},
	    {"inputs:\n  - paths: [a]\n", FLOE_EFORMAT,
	     "t.yaml:2:5: missing required key 'inputs[0].type'"},
	    {"inputs:\n  - type: tail\n    paths: []\n", FLOE_EFORMAT,
	     "t.yaml:3:12: key 'inputs[0].paths': must not be empty"},
	    {"inputs:\n  - type: tail\n    paths:\n", FLOE_EFORMAT,
	     "t.yaml:3:11: key 'inputs[0].paths': a value is required"},
	    {"inputs: [{type: tail, paths: \"\"}]\n", FLOE_EFORMAT,
	     "t.yaml:1:30: key 'inputs[0].paths': must not be empty"},
	    {"agent: {state_dir: ''}\n", FLOE_EFORMAT,
	     "t.yaml:1:20: key 'agent.state_dir': must not be empty"},
	    {"agent: {id: \"a\\0b\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:13: key 'agent.id': must not contain NUL characters"},
	    /* duplicates */
	    {"agent:\n  id: a\n  id: b\n", FLOE_EFORMAT, "t.yaml:3:3: duplicate key 'agent.id'"},
	    {"agent: {}\nagent: {}\n", FLOE_EFORMAT, "t.yaml:2:1: duplicate key 'agent'"},
	    {"tables: {logs: {partition_by: [\"day(ts)\", \"day( ts )\"]}}\n", FLOE_EFORMAT,
	     "t.yaml:1:43: key 'tables.logs.partition_by[1]': duplicate entry 'day(ts)'"},
	    /* values out of their domain */
	    {"agent: {compress_threads: 9}\n", FLOE_EFORMAT,
	     "t.yaml:1:27: key 'agent.compress_threads': expected an integer in 0..8, got '9'"},
	    {"agent: {memory_limit: 1MiB}\n", FLOE_EFORMAT,
	     "t.yaml:1:23: key 'agent.memory_limit': expected a size in 4MiB..4GiB, got '1MiB'"},
	    {"tables: {logs: {zstd_level: 23}}\n", FLOE_EFORMAT,
	     "t.yaml:1:29: key 'tables.logs.zstd_level': expected an integer in 1..22, got '23'"},
	    {"tables: {logs: {zstd_level: 0}}\n", FLOE_EFORMAT,
	     "t.yaml:1:29: key 'tables.logs.zstd_level': expected an integer in 1..22, got '0'"},
	    {"tables: {logs: {zstd_level: three}}\n", FLOE_EFORMAT,
	     "t.yaml:1:29: key 'tables.logs.zstd_level': expected an integer in 1..22, got "
	     "'three'"},
	    {"tables: {logs: {zstd_level: 99999999999999999999}}\n", FLOE_EFORMAT,
	     "t.yaml:1:29: key 'tables.logs.zstd_level': expected an integer in 1..22, got "
	     "'99999999999999999999'"},
	    {"tables: {logs: {row_group_size: 128MiB}}\n", FLOE_EFORMAT,
	     "t.yaml:1:33: key 'tables.logs.row_group_size': 128MiB is larger than "
	     "target_file_size (64MiB)"},
	    {"tables: {logs: {partition_by: [\"bucket(1025, host)\"]}}\n", FLOE_EFORMAT,
	     "t.yaml:1:32: key 'tables.logs.partition_by[0]': expected one of year(ts), "
	     "month(ts), day(ts), hour(ts), identity(host), host, app, bucket(N, host) with N "
	     "in 1..1024, got 'bucket(1025, host)' (typed columns (tables.logs.columns) are not supported here yet)"},
	    {"tables: {logs: {partition_by: \"day(received_at)\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'tables.logs.partition_by': expected one of year(ts), "
	     "month(ts), day(ts), hour(ts), identity(host), host, app, bucket(N, host) with N "
	     "in 1..1024, got 'day(received_at)' (typed columns (tables.logs.columns) are not supported here yet)"},
	    {"tables: {logs: {partition_by: [a, b, c, d, e, f, g, h, i]}}\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'tables.logs.partition_by': at most 8 entries, got 9"},
	    {"agent: {id: \"edge 17\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:13: key 'agent.id': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, "
	     "got 'edge 17'"},
	    {"lake: {namespace: a-b}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.namespace': expected 1 to 128 characters of A-Z a-z 0-9 _, "
	     "got 'a-b'"},
	    {"lake: {warehouse: \"gs://bucket/edge\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': expected a directory path, a file:// URI or "
	     "an s3:// URI, got 'gs://bucket/edge'"},
	    {"agent: {state_dir: \"file:///var/lib/floe\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:20: key 'agent.state_dir': expected a local directory path, got "
	     "'file:///var/lib/floe'"},
	    {"lake: {warehouse: \"file://nas/lake\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': a file:// URI needs an empty host or "
	     "localhost and an absolute path, got 'file://nas/lake'"},
	    {"lake: {warehouse: \"file:///a%2\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': bad %-escape in URI 'file:///a%2'"},
	    {"lake: {warehouse: \"file:///a%C3\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': URI 'file:///a%C3' decodes to invalid UTF-8"},
	    {"lake: {warehouse: \"file:///%ED%A0%80\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': URI 'file:///%ED%A0%80' decodes to invalid "
	     "UTF-8"},
	    {"lake: {warehouse: \"file:///%C0%AF\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': URI 'file:///%C0%AF' decodes to invalid UTF-8"},
	    {"lake: {warehouse: \"file:///a%00b\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': bad %-escape in URI 'file:///a%00b'"},
	    /* sizes and durations */
	    {"agent: {memory_limit: 64MB}\n", FLOE_EFORMAT,
	     "t.yaml:1:23: key 'agent.memory_limit': expected a size (an integer with an "
	     "optional unit B, K, KiB, M, MiB, G, GiB, T, TiB; all 1024-based), got '64MB'"},
	    {"agent: {memory_limit: 99999999999GiB}\n", FLOE_EFORMAT,
	     "t.yaml:1:23: key 'agent.memory_limit': expected a size in 4MiB..4GiB, got "
	     "'99999999999GiB'"},
	    {"tables: {logs: {commit_interval: 60}}\n", FLOE_EFORMAT,
	     "t.yaml:1:34: key 'tables.logs.commit_interval': expected a duration (an integer "
	     "with a unit ms, s, m, h or d), got '60'"},
	    {"tables: {logs: {commit_interval: 1441m}}\n", FLOE_EFORMAT,
	     "t.yaml:1:34: key 'tables.logs.commit_interval': expected a duration in 1s..1d, "
	     "got '1441m'"},
	    /* YAML itself */
	    {"agent: {id: a\n", FLOE_EPARSE,
	     "t.yaml:2:1: YAML syntax error: did not find expected ',' or '}' (while parsing a "
	     "flow mapping at line 1, column 8)"},
	    {"a: b: c\n", FLOE_EPARSE,
	     "t.yaml:1:5: YAML syntax error: mapping values are not allowed in this context"},
	    {"agent: {}\n\x01\n", FLOE_EPARSE,
	     "t.yaml:2:1: YAML syntax error: control characters are not allowed"},
	    {"agent: {id: \"\xc3\x28\"}\n", FLOE_EPARSE,
	     "t.yaml:1:15: YAML syntax error: invalid trailing UTF-8 octet"},
	    {"agent: {}\n---\nlake: {}\n", FLOE_EPARSE,
	     "t.yaml:2:1: multiple YAML documents are not supported"},
	    {"agent: &a {id: x}\nlake: *a\n", FLOE_EPARSE,
	     "t.yaml:2:7: YAML aliases (*name) are not supported"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_err(cases[i].yaml, cases[i].code, cases[i].msg);
}

#define IN "inputs:\n  - type: tail\n    paths: a\n"
#define S3 "lake:\n  warehouse: s3://bkt\n  catalog: {type: s3}\n"

/* Inputs' parsing keys, lake.s3 and spool: values out of their domain and the cross-key
 * rules. */
/* A REST catalog: its keys as given, the URL without its final '/', the namespace from
 * lake.namespace and the token endpoint from the URL by default. */
static void test_rest_catalog(void **state)
{
	(void)state;
	NEEDS_S3();
	struct floe_config *c = parse_ok(NULL, "lake:\n  namespace: edge\n  catalog: {type: rest, uri: "
					       "\"https://cat.example/api/\", credential: \"env:CRED\", "
					       "warehouse: prod}\n");
	assert_int_equal(c->lake.catalog, FLOE_CATALOG_REST);
	assert_string_equal(c->lake.rest.uri, "https://cat.example/api");
	assert_string_equal(c->lake.rest.namespace, "edge");
	assert_string_equal(c->lake.rest.warehouse, "prod");
	assert_string_equal(c->lake.rest.scope, "catalog");
	assert_string_equal(c->lake.rest.oauth2_server_uri, "https://cat.example/api/v1/oauth/tokens");
	assert_null(c->lake.rest.token);
	floe_config_free(c);
	c = parse_ok(NULL, "lake: {catalog: {type: rest, uri: \"http://127.0.0.1:8181\", namespace: a.b_c, "
			   "token: \"file:/run/tok\", prefix: ws}}\n");
	assert_string_equal(c->lake.rest.namespace, "a.b_c");
	assert_string_equal(c->lake.rest.token, "file:/run/tok");
	assert_string_equal(c->lake.rest.prefix, "ws");
	assert_null(c->lake.rest.oauth2_server_uri);
	floe_config_free(c);
}

static void test_errors_new_keys(void **state)
{
	static const struct err_case cases[] = {
	    /* pattern and parser */
	    {IN "    parser: regex\n", FLOE_EFORMAT,
	     "t.yaml:4:13: key 'inputs[0].parser': regex needs a pattern; set "
	     "inputs[0].pattern"},
	    {IN "    pattern: \"^(?<a>x)\"\n", FLOE_EFORMAT,
	     "t.yaml:4:14: key 'inputs[0].pattern': only used with parser regex (parser is "
	     "none)"},
	    {IN "    parser: json\n    pattern: x\n", FLOE_EFORMAT,
	     "t.yaml:5:14: key 'inputs[0].pattern': only used with parser regex (parser is "
	     "json)"},
	    {IN "    parser: regex\n    pattern: \"\"\n", FLOE_EFORMAT,
	     "t.yaml:5:14: key 'inputs[0].pattern': must not be empty"},
	    {IN "    parser: regex\n    pattern: \"(?<a>x\"\n", FLOE_EFORMAT,
	     "t.yaml:5:14: key 'inputs[0].pattern': missing closing parenthesis at offset 6 of "
	     "the pattern (after \"(?<a>x\")"},
	    /* A plain scalar on one line: the column is where PCRE2 stopped. */
	    {IN "    parser: regex\n    pattern: ^(?<1a>x)\n", FLOE_EFORMAT,
	     "t.yaml:5:18: key 'inputs[0].pattern': subpattern name must start with a "
	     "non-digit at offset 4 of the pattern (after \"^(?<\")"},
	    {IN "    parser: regex\n    pattern: \"(?<a>x)(?<a>y)\"\n", FLOE_EFORMAT,
	     "t.yaml:5:14: key 'inputs[0].pattern': two named subpatterns have the same name "
	     "(PCRE2_DUPNAMES not set) at offset 12 of the pattern (after \"(?<a>x)(?<a>\")"},
	    /* glibc's regcomp took gigabytes for this; PCRE2 refuses it at once. */
	    {IN "    parser: regex\n    pattern: \"x(a+++++++++++++++++++++++++++++++)\"\n",
	     FLOE_EFORMAT,
	     "t.yaml:5:14: key 'inputs[0].pattern': quantifier does not follow a repeatable "
	     "item at offset 5 of the pattern (after \"x(a++\")"},
	    /* multiline */
	    {IN "    multiline: {max_lines: 10}\n", FLOE_EFORMAT,
	     "t.yaml:4:16: missing required key 'inputs[0].multiline.start'"},
	    {IN "    multiline: {}\n", FLOE_EFORMAT,
	     "t.yaml:4:16: missing required key 'inputs[0].multiline.start'"},
	    {IN "    multiline: {start: ~}\n", FLOE_EFORMAT,
	     "t.yaml:4:24: key 'inputs[0].multiline.start': a value is required"},
	    {IN "    multiline: {start: \"a(\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:24: key 'inputs[0].multiline.start': missing closing parenthesis at "
	     "offset 2 of the pattern (after \"a(\")"},
	    {IN "    multiline: {start: x, max_lines: 1}\n", FLOE_EFORMAT,
	     "t.yaml:4:38: key 'inputs[0].multiline.max_lines': expected an integer in "
	     "2..100000, got '1'"},
	    {IN "    multiline: {start: x, max_bytes: 1000}\n", FLOE_EFORMAT,
	     "t.yaml:4:38: key 'inputs[0].multiline.max_bytes': expected a size in "
	     "1KiB..64MiB, got '1000'"},
	    {IN "    multiline: {start: x, flush_timeout: 2h}\n", FLOE_EFORMAT,
	     "t.yaml:4:42: key 'inputs[0].multiline.flush_timeout': expected a duration in "
	     "100ms..1h, got '2h'"},
	    {IN "    multiline: x\n", FLOE_EFORMAT,
	     "t.yaml:4:16: key 'inputs[0].multiline': expected a mapping, got a scalar"},
	    /* timestamp */
	    {IN "    timestamp: {zone: UTC}\n", FLOE_EFORMAT,
	     "t.yaml:4:16: missing required key 'inputs[0].timestamp.format'"},
	    {IN "    timestamp: {format: unix}\n", FLOE_EFORMAT,
	     "t.yaml:4:25: key 'inputs[0].timestamp.format': expected one of rfc3339, "
	     "iso8601, epoch, epoch_ms, epoch_us, epoch_ns, syslog, apache, clf, or a custom "
	     "format with % conversions, got 'unix'"},
	    {IN "    timestamp: {format: \"100%%\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:25: key 'inputs[0].timestamp.format': expected one of rfc3339, "
	     "iso8601, epoch, epoch_ms, epoch_us, epoch_ns, syslog, apache, clf, or a custom "
	     "format with % conversions, got '100%%'"},
	    {IN "    timestamp: {format: \"%Y-%q\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:25: key 'inputs[0].timestamp.format': unknown conversion '%q' in "
	     "'%Y-%q'; known: %Y %y %m %d %e %j %H %I %p %M %S %f %s %z %b %h %B %a %A %T %F "
	     "%%"},
	    {IN "    timestamp: {format: \"%H:%\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:25: key 'inputs[0].timestamp.format': unknown conversion '%' in "
	     "'%H:%'; known: %Y %y %m %d %e %j %H %I %p %M %S %f %s %z %b %h %B %a %A %T %F "
	     "%%"},
	    {IN "    timestamp: {format: rfc3339, zone: Europe/Paris}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC or a fixed offset "
	     "+HH:MM or -HH:MM, got 'Europe/Paris'"},
	    {IN "    timestamp: {format: rfc3339, zone: \"+24:00\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC or a fixed offset "
	     "+HH:MM or -HH:MM, got '+24:00'"},
	    {IN "    timestamp: {format: rfc3339, zone: \"+0530\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC or a fixed offset "
	     "+HH:MM or -HH:MM, got '+0530'"},
	    {IN "    timestamp: {format: rfc3339, zone: \"\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC or a fixed offset "
	     "+HH:MM or -HH:MM, got ''"},
	    {IN "    timestamp: {format: epoch, field: ts}\n", FLOE_EFORMAT,
	     "t.yaml:4:39: key 'inputs[0].timestamp.field': 'ts' would be a parsed "
	     "attribute, but inputs[0].parser is none; use message or set a parser"},
	    /* other input keys */
	    {IN "    rotate_wait: 61m\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'inputs[0].rotate_wait': expected a duration in 0ms..1h, got "
	     "'61m'"},
	    {IN "    max_open_files: 7\n", FLOE_EFORMAT,
	     "t.yaml:4:21: key 'inputs[0].max_open_files': expected an integer in 8..65536, "
	     "got '7'"},
	    {IN "    max_open_files: 4294967552\n", FLOE_EFORMAT,
	     "t.yaml:4:21: key 'inputs[0].max_open_files': expected an integer in 8..65536, "
	     "got '4294967552'"},
	    {IN "    forget_after: 59s\n", FLOE_EFORMAT,
	     "t.yaml:4:19: key 'inputs[0].forget_after': expected a duration in 1m..365d, got "
	     "'59s'"},
	    {IN "    forget_after: 366d\n", FLOE_EFORMAT,
	     "t.yaml:4:19: key 'inputs[0].forget_after': expected a duration in 1m..365d, got "
	     "'366d'"},
	    /* warehouse, catalog and lake.s3 must agree */
	    {"lake: {warehouse: \"s3://bkt/x\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': an s3:// warehouse needs lake.catalog.type s3 "
	     "(it is filesystem)"},
	    {"lake:\n  catalog: {type: s3}\n", FLOE_EFORMAT,
	     "t.yaml:2:19: key 'lake.catalog.type': s3 needs an s3:// warehouse "
	     "(lake.warehouse: s3://BUCKET[/PREFIX])"},
	    {"lake:\n  warehouse: /srv/lake\n  catalog: {type: s3}\n", FLOE_EFORMAT,
	     "t.yaml:3:19: key 'lake.catalog.type': s3 needs an s3:// warehouse "
	     "(lake.warehouse: s3://BUCKET[/PREFIX])"},
	    {"lake:\n  s3: {region: eu-west-1}\n", FLOE_EFORMAT,
	     "t.yaml:2:7: key 'lake.s3': only used with lake.catalog.type s3 or rest (it "
	     "is filesystem)"},
	    {"lake: {warehouse: \"s3://ab\", catalog: {type: s3}}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': expected s3://BUCKET[/PREFIX] with a bucket "
	     "name of 3 to 63 characters of a-z 0-9 . - starting and ending with a letter or "
	     "digit, got 's3://ab'"},
	    {"lake: {warehouse: \"s3://My-Bucket/x\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': expected s3://BUCKET[/PREFIX] with a bucket "
	     "name of 3 to 63 characters of a-z 0-9 . - starting and ending with a letter or "
	     "digit, got 's3://My-Bucket/x'"},
	    {"lake: {warehouse: \"s3://bucket-/x\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': expected s3://BUCKET[/PREFIX] with a bucket "
	     "name of 3 to 63 characters of a-z 0-9 . - starting and ending with a letter or "
	     "digit, got 's3://bucket-/x'"},
	    {"lake: {warehouse: \"s3:///x\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': expected s3://BUCKET[/PREFIX] with a bucket "
	     "name of 3 to 63 characters of a-z 0-9 . - starting and ending with a letter or "
	     "digit, got 's3:///x'"},
	    {"lake: {warehouse: \"s3://bucket/a//b\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': the key prefix in 's3://bucket/a//b' has an "
	     "empty segment or a control character"},
	    {"lake: {warehouse: \"s3://bucket//a\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': the key prefix in 's3://bucket//a' has an "
	     "empty segment or a control character"},
	    {"lake: {warehouse: \"s3://bucket/a\\tb\"}\n", FLOE_EFORMAT,
	     "t.yaml:1:19: key 'lake.warehouse': the key prefix in 's3://bucket/a?b' has an "
	     "empty segment or a control character"},
	    /* lake.s3 values */
	    {S3 "  s3: {endpoint: \"ftp://x\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.endpoint': expected http://HOST[:PORT] or "
	     "https://HOST[:PORT] (no path), got 'ftp://x'"},
	    {S3 "  s3: {endpoint: \"https://s3.example.com/bucket\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.endpoint': expected http://HOST[:PORT] or "
	     "https://HOST[:PORT] (no path), got 'https://s3.example.com/bucket'"},
	    {S3 "  s3: {endpoint: \"http://host:65536\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.endpoint': expected http://HOST[:PORT] or "
	     "https://HOST[:PORT] (no path), got 'http://host:65536'"},
	    {S3 "  s3: {endpoint: \"http://:80\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.endpoint': expected http://HOST[:PORT] or "
	     "https://HOST[:PORT] (no path), got 'http://:80'"},
	    {S3 "  s3: {region: \"eu west\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:16: key 'lake.s3.region': expected 1 to 64 characters of A-Z a-z 0-9 -, "
	     "got 'eu west'"},
	    {S3 "  s3: {region: eu_west_1}\n", FLOE_EFORMAT,
	     "t.yaml:4:16: key 'lake.s3.region': expected 1 to 64 characters of A-Z a-z 0-9 -, "
	     "got 'eu_west_1'"},
	    {S3 "  s3: {ca_file: \"file:///etc/ca.pem\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:17: key 'lake.s3.ca_file': expected a local file path, got "
	     "'file:///etc/ca.pem'"},
	    {S3 "  s3:\n    access_key_id: AKIAIOSFODNN7EXAMPLE\n", FLOE_EFORMAT,
	     "t.yaml:5:20: key 'lake.s3.access_key_id': expected a reference, env:NAME (an "
	     "environment variable) or file:/absolute/path (a file holding the value); the "
	     "value itself does not belong in the configuration"},
	    {S3 "  s3:\n    secret_access_key: \"env:1X\"\n", FLOE_EFORMAT,
	     "t.yaml:5:24: key 'lake.s3.secret_access_key': expected a reference, env:NAME (an "
	     "environment variable) or file:/absolute/path (a file holding the value); the "
	     "value itself does not belong in the configuration"},
	    {S3 "  s3:\n    session_token: \"file:relative\"\n", FLOE_EFORMAT,
	     "t.yaml:5:20: key 'lake.s3.session_token': expected a reference, env:NAME (an "
	     "environment variable) or file:/absolute/path (a file holding the value); the "
	     "value itself does not belong in the configuration"},
	    {S3 "  s3: {access_key_id: \"env:K\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:23: key 'lake.s3.access_key_id': set without secret_access_key; give "
	     "both or neither"},
	    {S3 "  s3: {secret_access_key: \"env:S\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:27: key 'lake.s3.secret_access_key': set without access_key_id; give "
	     "both or neither"},
	    {S3 "  s3: {session_token: \"env:T\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:23: key 'lake.s3.session_token': only used with access_key_id and "
	     "secret_access_key"},
	    {S3 "  s3: {access_key_id: \"env:K\", secret_access_key: \"env:S\", profile: p}\n",
	     FLOE_EFORMAT,
	     "t.yaml:4:69: key 'lake.s3.profile': only used when access_key_id and "
	     "secret_access_key are not set"},
	    {S3 "  s3: {profile: \"my profile\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:17: key 'lake.s3.profile': expected 1 to 64 characters of A-Z a-z 0-9 . "
	     "_ -, got 'my profile'"},
	    {S3 "  s3: {part_size: 4MiB}\n", FLOE_EFORMAT,
	     "t.yaml:4:19: key 'lake.s3.part_size': expected a size in 5MiB..5GiB, got "
	     "'4MiB'"},
	    {S3 "  s3: {multipart_threshold: 6GiB}\n", FLOE_EFORMAT,
	     "t.yaml:4:29: key 'lake.s3.multipart_threshold': expected a size in 5MiB..5GiB, "
	     "got '6GiB'"},
	    {S3 "  s3: {endpoint: \"http://10.0.0.5:9000\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.endpoint': 'http://10.0.0.5:9000' is plain HTTP to a "
	     "host that is not loopback: requests, data and any session token would cross the "
	     "network unencrypted; use https://, or set lake.s3.allow_http: true to accept that"},
	    {S3 "  s3: {endpoint: \"http://127.0.0.1.evil.com\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.endpoint': 'http://127.0.0.1.evil.com' is plain HTTP to "
	     "a host that is not loopback: requests, data and any session token would cross the "
	     "network unencrypted; use https://, or set lake.s3.allow_http: true to accept that"},
	    {S3 "  s3: {credentials: [env, ec2]}\n", FLOE_EFORMAT,
	     "t.yaml:4:27: key 'lake.s3.credentials[1]': expected one of env, file, "
	     "web_identity, container, imds, got 'ec2'"},
	    {S3 "  s3: {credentials: [env, env]}\n", FLOE_EFORMAT,
	     "t.yaml:4:27: key 'lake.s3.credentials[1]': duplicate entry 'env'"},
	    {S3 "  s3: {credentials: []}\n", FLOE_EFORMAT,
	     "t.yaml:4:21: key 'lake.s3.credentials': must not be empty"},
	    {S3 "  s3: {credentials: [env, imds], profile: p}\n", FLOE_EFORMAT,
	     "t.yaml:4:43: key 'lake.s3.profile': only used with 'file' in lake.s3.credentials"},
	    {S3 "  s3: {request_timeout: 500ms}\n", FLOE_EFORMAT,
	     "t.yaml:4:25: key 'lake.s3.request_timeout': expected a duration in 1s..1h, got "
	     "'500ms'"},
	    {S3 "  s3: {min_rate: 63B}\n", FLOE_EFORMAT,
	     "t.yaml:4:18: key 'lake.s3.min_rate': expected a size in 64B..1GiB, got '63B'"},
	    /* spool */
	    {"spool: {max_bytes: 15MiB}\n", FLOE_EFORMAT,
	     "t.yaml:1:20: key 'spool.max_bytes': expected a size in 16MiB..1TiB, got "
	     "'15MiB'"},
	    {"spool: {max_bytes: 1025GiB}\n", FLOE_EFORMAT,
	     "t.yaml:1:20: key 'spool.max_bytes': expected a size in 16MiB..1TiB, got "
	     "'1025GiB'"},
	    {"spool: [1]\n", FLOE_EFORMAT,
	     "t.yaml:1:8: key 'spool': expected a mapping, got a sequence"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_err(cases[i].yaml, cases[i].code, cases[i].msg);
}

static char *dump(const struct floe_config *c);

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
	struct floe_config *h = parse_ok(
	    NULL, "lake: {warehouse: \"s3://bkt\", catalog: {type: s3}, s3: {endpoint: "
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

static char *dump(const struct floe_config *c)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_config_dump(c, &b), 0);
	assert_int_equal(floe_buf_putc(&b, '\0'), 0);
	size_t len;
	return (char *)floe_buf_steal(&b, &len);
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
	    "  id: \"host-1\"  # names this agent in commits and object keys; default: host name and a "
	    "hash of /etc/machine-id or the installation id\n"
	    "  state_dir: \"/var/lib/floe\"  # checkpoints and spool\n"
	    "  memory_limit: 32MiB  # total memory budget\n"
	    "  compress_threads: 1  # threads compressing Parquet pages beside the main one; none on one CPU\n"
	    "  replaces: ~  # the installation id (or 'legacy') whose commits under agent.id this agent "
	    "takes over; unset: none\n"
	    "  log_format: text  # log lines on stderr: text, or json (one object per line)\n"
	    "  http: ~  # off: set listen to serve /metrics and /healthz\n"
	    "inputs: []\n"
	    "tables:\n"
	    "  logs:\n"
	    "    codec: zstd  # Parquet page compression\n"
	    "    zstd_level: 1  # used when codec is zstd; default 1, or 6 with profile compact\n"
	    "    profile: default  # Parquet encodings: default (every reader) or compact (v2 pages, "
	    "delta encodings)\n"
	    "    bloom_filters: [\"host\", \"app\"]  # columns with Parquet bloom filters; [] = none\n"
	    "    partition_by: [\"day(ts)\"]  # Iceberg partition fields; [] = unpartitioned\n"
	    "    target_file_size: 64MiB  # data file size to aim for\n"
	    "    commit_interval: 1m  # how often to commit\n"
	    "    row_group_size: 64MiB  # Parquet row group; default min(target_file_size, 64MiB)\n"
	    "    sort_by: []  # columns to sort a file's rows by, in runs of sort_buffer; [] = "
	    "arrival order\n"
	    "    sort_buffer: 4MiB  # rows held for sorting (with sort_by); at most memory_limit / 4\n"
	    "    properties:\n"
	    "      commit.manifest-merge.enabled: true  # merge small manifests into larger ones on commit\n"
	    "      commit.manifest.min-count-to-merge: 100  # small manifests a list must hold before "
	    "they are merged (larger ones merge ten of a size)\n"
	    "      commit.manifest.target-size-bytes: 8MiB  # largest size of a merged manifest\n"
	    "      history.expire.max-snapshot-age-ms: 5d  # snapshots older than this expire (beyond "
	    "min-snapshots-to-keep)\n"
	    "      history.expire.min-snapshots-to-keep: 1  # the newest snapshots kept whatever their age\n"
	    "      write.metadata.previous-versions-max: 100  # metadata-log entries kept\n"
	    "      write.metadata.delete-after-commit.enabled: false  # delete metadata files that fall off "
	    "the metadata-log\n"
	    "    columns: ~  # typed columns from parsed fields; ~ = the built-in parsers' own, [] = "
	    "none\n"
	    "    message: keep  # the message column: keep (every line) or unparsed (only the lines a "
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
		"  - name: \"1\"  # in log lines and the metrics' input label; default its position "
		"(1, 2, ...)\n"
		"    type: tail  # input kind\n"
		"    paths: [\"/l\"]  # globs of files to follow\n"
		"    exclude: [\"*.gz\", \"*.xz\", \"*.bz2\", \"*.zst\"]  # globs to skip, matched "
		"on "
		"full path and basename\n"
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
		"    table: \"logs\"  # the raw table its records go to when no route rule takes them\n"
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
	    "    exclude: [\"*.gz\", \"*.xz\", \"*.bz2\", \"*.zst\"]",
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
	assert_int_equal(c2->inputs[1].line, 38);
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
	assert_int_equal(c->inputs[0].nexclude, 4);
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

static void test_profile_and_bloom(void **state)
{
	(void)state;
	struct floe_config *c = NULL;
	struct floe_err err = {0};
	const char *ok = "tables:\n  logs:\n    profile: compact\n    bloom_filters: [message, severity]\n";
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
	    "tables:\n  logs:\n    columns: [{name: status, type: int}]\n    bloom_filters: [status]\n",
	    "tables:\n  logs:\n    columns: [{name: status, type: int}]\n    sort_by: [status]\n",
	    "tables:\n  logs:\n    columns: [{name: status, type: int}]\n    partition_by: [status]\n"};
	for (size_t i = 0; i < 3; i++) {
		assert_int_not_equal(floe_config_parse(NULL, "t.yaml", typed[i], strlen(typed[i]), "h", &c, &err), 0);
		assert_non_null(strstr(err.msg, "got 'status' (typed columns (tables.logs.columns) are not supported here yet)"));
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
	struct floe_config *c = parse_ok(&a, "tables:\n  logs:\n    columns:\n"
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
	expect_err("tables:\n  logs:\n    columns:\n      - { name: a, type: int, from: x }\n"
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
	     "t.yaml:1:37: key 'aggregations[0].group_by[0]': 'ts' is the time: the window "
	     "groups by it already"},
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
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_rest_catalog),
	    cmocka_unit_test(test_errors_new_keys),
	    cmocka_unit_test(test_new_values),
	    cmocka_unit_test(test_hostile_shapes),
	    cmocka_unit_test(test_units),
	    cmocka_unit_test(test_ranges),
	    cmocka_unit_test(test_row_group_default),
	    cmocka_unit_test(test_warehouse),
	    cmocka_unit_test(test_dump),
	    cmocka_unit_test(test_profile_and_bloom),
	    cmocka_unit_test(test_alloc_failures),
	    cmocka_unit_test(test_packaged_example),
	    cmocka_unit_test(test_sort_by),
	    cmocka_unit_test(test_typed_lists),
	    cmocka_unit_test(test_columns),
	    cmocka_unit_test(test_aggregations),
	    cmocka_unit_test(test_smaller_build),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
