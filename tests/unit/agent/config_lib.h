/* Helpers of agent/config's tests (include after cmocka.h): the file with every key, a
 * parse that must succeed, an error that must come with its exact message, the defaults
 * of every key, the effective-config dump. */
#ifndef FLOE_TEST_CONFIG_LIB_H
#define FLOE_TEST_CONFIG_LIB_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static inline struct floe_config *parse_ok(struct floe_alloc *a, const char *text)
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
static inline bool refused_by_build(const struct floe_err *err)
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

static inline void expect_err(const char *text, int code, const char *msg)
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

static inline void assert_defaults_except_inputs(const struct floe_config *c)
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
static inline void assert_input_defaults(const struct floe_config_input *in)
{
	assert_int_equal(in->nexclude, 12);
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

struct err_case {
	const char *yaml;
	int code;
	const char *msg;
};

#define IN "inputs:\n  - type: tail\n    paths: a\n"
#define S3 "lake:\n  warehouse: s3://bkt\n  catalog: {type: s3}\n"

static inline char *dump(const struct floe_config *c)
{
	struct floe_buf b;
	floe_buf_init(&b, NULL, 1 << 20);
	assert_int_equal(floe_config_dump(c, &b), 0);
	assert_int_equal(floe_buf_putc(&b, '\0'), 0);
	size_t len;
	return (char *)floe_buf_steal(&b, &len);
}

#endif
