/* One leap second, the same instant through every input path that reads a timestamp:
 * RFC 5424 and RFC 3164 syslog (ISO and BSD forms), CRI and Docker container logs, a
 * JSON line's "ts" field, each configured timestamp format, the access log parsers and
 * an AWS credential expiry. All of them read 2016-12-31T23:59:60.5Z (or its own
 * spelling of it) as the last µs of 23:59, the rule formats/base/civil.h states. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "agent/config/config.h"
#include "agent/parse/access_log.h"
#include "agent/parse/container.h"
#include "agent/parse/fields.h"
#include "agent/parse/syslog.h"
#include "agent/parse/timestamp.h"
#include "agent/pipeline/decode.h"
#include "agent/schema/record.h"
#include "formats/aws/credentials.h"
#include "formats/base/error.h"
#include "formats/base/rfc3339.h"

/* 2016-12-31T23:59:59.999999Z: where the leap second at the end of 2016 lands. */
#define LEAP_US INT64_C(1483228799999999)
#define RECV_US INT64_C(1483228900000000) /* a little later, for year inference */

static void test_base(void **state)
{
	(void)state;
	struct floe_rfc3339 t;
	size_t end;
	int64_t us = 0;
	assert_int_equal(floe_rfc3339_scan("2016-12-31T23:59:60.5Z", 22, 0, &t, &end), 0);
	assert_int_equal(floe_rfc3339_us(&t, 0, &us), 0);
	assert_int_equal(us, LEAP_US);
	/* The fraction of a leap second does not move it: every event of it is one instant
	 * between second 59 and the next minute. */
	assert_int_equal(floe_rfc3339_scan("2016-12-31T23:59:60Z", 20, 0, &t, &end), 0);
	assert_int_equal(floe_rfc3339_us(&t, 0, &us), 0);
	assert_int_equal(us, LEAP_US);
}

static void test_syslog(void **state)
{
	(void)state;
	struct floe_syslog_opts o = {.received_us = RECV_US};
	struct floe_syslog_msg m;
	const char *in[] = {
	    "<13>1 2016-12-31T23:59:60.5Z h app - - - x", /* RFC 5424 */
	    "<13>2016-12-31T23:59:60.5Z h app: x",	   /* RFC 3164, rsyslog's RFC 3339 */
	    "<13>2017-01-01T00:59:60.5+01:00 h app: x",   /* the same with an offset */
	    "<13>Dec 31 23:59:60 h app: x",		   /* BSD, the year inferred */
	    "<13>Dec 31 2016 23:59:60.5 h app: x",	   /* Cisco's year before the time */
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		assert_int_equal(floe_syslog_parse(in[i], strlen(in[i]), &o, &m, NULL), 0);
		assert_true(m.has_ts);
		assert_int_equal(m.ts_us, LEAP_US);
	}
}

static void test_container(void **state)
{
	(void)state;
	struct floe_container_piece p;
	const char *cri = "2016-12-31T23:59:60.500000000Z stdout F x";
	assert_int_equal(floe_cri_parse(cri, strlen(cri), &p, NULL), 0);
	assert_int_equal(p.ts_us, LEAP_US);
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 8, 256, &f), 0);
	const char *docker = "{\"log\":\"x\\n\",\"stream\":\"stdout\","
			     "\"time\":\"2016-12-31T23:59:60.5Z\"}";
	assert_int_equal(floe_docker_parse(docker, strlen(docker), f, &p, NULL), 0);
	assert_int_equal(p.ts_us, LEAP_US);
	floe_fields_free(f);
}

/* A JSON line's ts field, and a timestamp option on the message. */
static void test_decode(void **state)
{
	(void)state;
	struct {
		enum floe_parser parser;
		char *field, *format; /* as the configuration holds them */
		const char *line;
	} in[] = {
	    {FLOE_PARSER_JSON, NULL, NULL, "{\"ts\":\"2016-12-31T23:59:60.5Z\",\"msg\":\"x\"}"},
	    {FLOE_PARSER_NONE, (char *)"message", (char *)"iso8601", "20161231T235960,5Z x"},
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct floe_config_input cfg;
		memset(&cfg, 0, sizeof(cfg));
		cfg.parser = in[i].parser;
		cfg.max_line_bytes = 1 << 20;
		cfg.timestamp.field = in[i].field;
		cfg.timestamp.format = in[i].format;
		struct floe_decoder *d = NULL;
		assert_int_equal(floe_decoder_new(NULL, &cfg, &d, NULL), 0);
		struct floe_record rec;
		memset(&rec, 0, sizeof(rec));
		rec.ts = rec.received_at = RECV_US;
		rec.message = (struct floe_str){in[i].line, strlen(in[i].line)};
		floe_decoder_apply(d, &rec);
		assert_int_equal(rec.ts, LEAP_US);
		floe_decoder_free(d);
	}
}

static void test_formats(void **state)
{
	(void)state;
	struct {
		const char *spec, *s;
	} in[] = {
	    {"rfc3339", "2016-12-31T23:59:60.5Z"},
	    {"iso8601", "2016-12-31T23:59:60.5"},
	    {"iso8601", "20161231T235960.5Z"},
	    {"syslog", "Dec 31 23:59:60.5"},
	    {"apache", "Sat Dec 31 23:59:60.5 2016"},
	    {"clf", "[31/Dec/2016:23:59:60 +0000]"},
	    {"%Y-%m-%d %H:%M:%S.%f", "2016-12-31 23:59:60.5"},
	    {"%d.%m.%y %T %z", "01.01.17 00:59:60 +0100"},
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		struct floe_ts_format *f = NULL;
		assert_int_equal(floe_ts_format_new(NULL, in[i].spec, strlen(in[i].spec), "UTC", 3, &f, NULL), 0);
		int64_t us = 0;
		assert_int_equal(floe_ts_parse(f, in[i].s, strlen(in[i].s), RECV_US, &us, NULL), 0);
		assert_int_equal(us, LEAP_US);
		floe_ts_format_free(f);
	}
	int64_t us = 0;
	assert_int_equal(floe_ts_parse_rfc3339("2016-12-31T23:59:60.5Z", 22, &us, NULL), 0);
	assert_int_equal(us, LEAP_US);
}

static void test_access_log(void **state)
{
	(void)state;
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 16, 0, &f), 0);
	const char *line = "h - - [31/Dec/2016:23:59:60 +0000] \"GET / HTTP/1.1\" 200 1";
	int64_t us = 0;
	assert_int_equal(floe_access_log_parse(line, strlen(line), false, f, &us, NULL), 0);
	assert_int_equal(us, LEAP_US);
	floe_fields_free(f);
}

/* An expiry is whole seconds: the leap second is 23:59:59, never the next minute. */
static void test_credentials(void **state)
{
	(void)state;
	const char *doc = "{\"AccessKeyId\":\"AK\",\"SecretAccessKey\":\"SK\",\"Token\":\"T\","
			  "\"Expiration\":\"2016-12-31T23:59:60Z\"}";
	struct floe_aws_credentials c;
	memset(&c, 0, sizeof(c));
	int64_t exp = 0;
	assert_int_equal(floe_aws_cred_json(NULL, doc, strlen(doc), &c, &exp, NULL), 0);
	assert_int_equal(exp, LEAP_US / 1000000);
	floe_aws_credentials_fini(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_base),	 cmocka_unit_test(test_syslog),
	    cmocka_unit_test(test_container),	 cmocka_unit_test(test_decode),
	    cmocka_unit_test(test_formats),	 cmocka_unit_test(test_access_log),
	    cmocka_unit_test(test_credentials),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
