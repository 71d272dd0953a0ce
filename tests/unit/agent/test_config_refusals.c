/* Tests for agent/config: each class of error, with its exact message and position.
 * (test_config_errors.c: every error of a file reported in one run.) */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "config_lib.h"
static void test_errors(void **state)
{
	static const struct err_case cases[] = {
	    /* unknown keys, at every level, with the valid keys listed */
	    {"agent:\n  foo: 1\n", FLOE_EFORMAT,
	     "t.yaml:2:3: unknown key 'agent.foo'; valid keys here: id, state_dir, memory_limit, "
	     "compress_threads, replaces, log_format, keep_last_good, http"},
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
	     "t.yaml:1:30: unknown key 'tables.logs.properties.history.expire.max-snapshot-age'; "
	     "valid "
	     "keys here: commit.manifest-merge.enabled, commit.manifest.min-count-to-merge, "
	     "commit.manifest.target-size-bytes, history.expire.max-snapshot-age-ms, "
	     "history.expire.min-snapshots-to-keep, write.metadata.previous-versions-max, "
	     "write.metadata.delete-after-commit.enabled"},
	    {"tables: {logs: {properties: {history.expire.min-snapshots-to-keep: 0}}}\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:68: key 'tables.logs.properties.history.expire.min-snapshots-to-keep': "
	     "expected an integer in 1..100000000, got '0'"},
	    {"tables: {logs: {properties: {commit.manifest-merge.enabled: yes}}}\n", FLOE_EFORMAT,
	     "t.yaml:1:61: key 'tables.logs.properties.commit.manifest-merge.enabled': expected "
	     "one of "
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
	     "host_from, zone, socket_mode, socket_owner, socket_group, matches, directory, "
	     "fields, "
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
	     "t.yaml:1:35: key 'lake.catalog.uri': expected https://HOST[:PORT][/PATH] (no query), "
	     "got 'x'"},
	    {"lake: {catalog: {type: rest, uri: \"http://cat.example\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:35: key 'lake.catalog.uri': 'http://cat.example' is plain HTTP to a host "
	     "that is "
	     "not loopback: tokens and client secrets would cross the network unencrypted; use "
	     "https://"},
	    {"lake: {catalog: {type: rest, uri: \"https://c\", credential: \"id:secret\"}}\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:60: key 'lake.catalog.credential': expected a reference, env:NAME (an "
	     "environment "
	     "variable) or file:/absolute/path (a file holding the value); the value itself does "
	     "not "
	     "belong in the configuration"},
	    {"lake: {catalog: {type: rest, uri: \"https://c\", token: \"env:T\", credential: "
	     "\"env:C\"}}\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:55: key 'lake.catalog.token': give token or credential, not both"},
	    {"lake: {catalog: {type: rest, uri: \"https://c\", namespace: \"a..b\"}}\n",
	     FLOE_EFORMAT,
	     "t.yaml:1:59: key 'lake.catalog.namespace': expected 1 to 8 levels of 1 to 128 "
	     "characters of "
	     "A-Z a-z 0-9 _, joined by '.', got 'a..b'"},
	    {"agent: {\"i\\nd\": 1}\n", FLOE_EFORMAT,
	     "t.yaml:1:9: unknown key 'agent.i?d'; valid keys here: id, state_dir, memory_limit, "
	     "compress_threads, replaces, log_format, keep_last_good, http"},
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
	     "t.yaml:1:17: key 'inputs[0].type': expected one of tail, syslog, journal, got "
	     "'journalx'"},
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
	     FLOE_EFORMAT,
	     "t.yaml:1:55: key 'inputs[0].listen[1]': duplicate entry "
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
	     "t.yaml:1:24: key 'lake.catalog.type': rest needs lake.catalog.uri (the catalog's "
	     "base URL)"},
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
	     "in 1..1024, got 'bucket(1025, host)' (typed columns (tables.logs.columns) are not "
	     "supported here yet)"},
	    {"tables: {logs: {partition_by: \"day(received_at)\"}}\n", FLOE_EFORMAT,
	     "t.yaml:1:31: key 'tables.logs.partition_by': expected one of year(ts), "
	     "month(ts), day(ts), hour(ts), identity(host), host, app, bucket(N, host) with N "
	     "in 1..1024, got 'day(received_at)' (typed columns (tables.logs.columns) are not "
	     "supported here yet)"},
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
	    {IN "    zone: local\n", FLOE_EFORMAT,
	     "t.yaml:4:11: key 'inputs[0].zone': only read by the syslog_file parser on a tail "
	     "input (parser is none)"},
	    {IN "    timestamp: {format: rfc3339, zone: Europe/Paris}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC, local or a fixed "
	     "offset +HH:MM or -HH:MM, got 'Europe/Paris'"},
	    {IN "    timestamp: {format: rfc3339, zone: \"+24:00\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC, local or a fixed "
	     "offset +HH:MM or -HH:MM, got '+24:00'"},
	    {IN "    timestamp: {format: rfc3339, zone: \"+0530\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC, local or a fixed "
	     "offset +HH:MM or -HH:MM, got '+0530'"},
	    {IN "    timestamp: {format: rfc3339, zone: \"\"}\n", FLOE_EFORMAT,
	     "t.yaml:4:40: key 'inputs[0].timestamp.zone': expected UTC, local or a fixed "
	     "offset +HH:MM or -HH:MM, got ''"},
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

/* agent.state_dir read from a file that may not parse (the last good configuration's
 * search, agent/cli/last_good.h): as far as the YAML goes, at the top level's agent only. */
static void test_peek_state_dir(void **state)
{
	(void)state;
	static const struct {
		const char *yaml;
		int rc;
		const char *dir;
	} cases[] = {
	    {"agent:\n  id: a\n  state_dir: /var/lib/x\ninputs: []\n", 0, "/var/lib/x"},
	    {"agent: { id: a, state_dir: \"/s d\" }\n", 0, "/s d"},
	    /* broken after it: a bad indent, an unclosed flow, a file cut short */
	    {"agent:\n  state_dir: /a\ninputs:\n  - [unclosed\n", 0, "/a"},
	    {"agent:\n  state_dir: /a\n inputs: x\n   : y\n", 0, "/a"},
	    {"agent:\n  state_dir: /a\ninp", 0, "/a"},
	    /* broken before it, or none */
	    {"agent: [\n  state_dir: /a\n", FLOE_ENOTFOUND, NULL},
	    {"agent:\n  id: a\n", FLOE_ENOTFOUND, NULL},
	    {"", FLOE_ENOTFOUND, NULL},
	    {"- agent\n", FLOE_ENOTFOUND, NULL},
	    /* only agent.state_dir at the top: not under another key, a list, a deeper map */
	    {"inputs:\n  - state_dir: /no\nlake: { state_dir: /no }\nagent: { state_dir: /yes }\n", 0,
	     "/yes"},
	    {"agent:\n  http: { state_dir: /no }\n  state_dir: /yes\n", 0, "/yes"},
	    {"x: { agent: { state_dir: /no } }\n", FLOE_ENOTFOUND, NULL},
	    /* a value that is a collection or an alias is not taken; an empty one is refused */
	    {"agent: { state_dir: [a] }\n", FLOE_ENOTFOUND, NULL},
	    {"agent: { state_dir: \"\" }\n", FLOE_EINVAL, NULL},
	    /* a key that is a collection (a complex key) does not derail the walk */
	    {"? [k]\n: v\nagent: { state_dir: /k }\n", 0, "/k"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64] = "";
		int rc = floe_config_peek_state_dir(cases[i].yaml, strlen(cases[i].yaml), out,
						    sizeof(out));
		if (rc != cases[i].rc || (rc == 0 && strcmp(out, cases[i].dir) != 0))
			print_error("case %zu: got %d '%s'\n", i, rc, rc == 0 ? out : "");
		assert_int_equal(rc, cases[i].rc);
		if (rc == 0)
			assert_string_equal(out, cases[i].dir);
	}
	char tiny[4];
	const char *y = "agent: { state_dir: /long }\n";
	assert_int_equal(floe_config_peek_state_dir(y, strlen(y), tiny, sizeof(tiny)), FLOE_EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_errors_new_keys),
	    cmocka_unit_test(test_peek_state_dir),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
