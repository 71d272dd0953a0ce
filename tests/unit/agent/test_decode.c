/* Unit tests for agent/pipeline/decode: each parser's attrs, the level and app fields
 * copied to their columns, timestamps from the message or a field (with a zone), failures
 * counted while the line stays whole, parsed host, message and ts fields in their
 * columns, more fields than the table holds, bad options explained through struct
 * floe_err, and every allocation failing in turn. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "agent/config/config.h"
#include "agent/parse/access_log.h"
#include "agent/parse/fields.h"
#include "agent/parse/regex.h"
#include "agent/parse/timestamp.h"
#include "agent/pipeline/decode.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"

#include "build_skip.h"
#include "logs_meta.h"

#define RECV 1700000000000000LL /* the receive time every record starts with */

static struct floe_config_input input(enum floe_parser parser)
{
	struct floe_config_input in;
	memset(&in, 0, sizeof(in));
	in.parser = parser;
	in.max_line_bytes = 1 << 20;
	in.timestamp.field = "message";
	return in;
}

static struct floe_decoder *decoder(const struct floe_config_input *in)
{
	struct floe_decoder *d = NULL;
	struct floe_err err = {0};
	if (floe_decoder_new(NULL, in, &d, &err))
		fail_msg("%s", err.msg);
	return d;
}

static struct floe_record apply(struct floe_decoder *d, const char *line)
{
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = rec.received_at = RECV;
	rec.message = (struct floe_str){line, strlen(line)};
	floe_decoder_apply(d, &rec);
	return rec;
}

/* The value of attr key in rec, or NULL (a null value is "(null)"). */
static const char *attr(const struct floe_record *rec, const char *key, char *buf, size_t cap)
{
	for (size_t i = 0; i < rec->nattrs; i++) {
		if (rec->attr_key_lens[i] == strlen(key) &&
		    memcmp(rec->attr_keys[i], key, strlen(key)) == 0) {
			if (!rec->attr_vals[i])
				return "(null)";
			snprintf(buf, cap, "%.*s", (int)rec->attr_val_lens[i], rec->attr_vals[i]);
			return buf;
		}
	}
	return NULL;
}

static void test_none_keeps_the_line(void **state)
{
	(void)state;
	struct floe_config_input in = input(FLOE_PARSER_NONE);
	struct floe_decoder *d = decoder(&in);
	struct floe_record rec = apply(d, "level=error app=x just text");
	assert_int_equal(rec.nattrs, 0);
	assert_int_equal(rec.ts, RECV);
	assert_false(rec.has_severity);
	assert_null(rec.app.p);
	struct floe_decode_stats st;
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.parse_failures, 0);
	floe_decoder_free(d);
}

static void test_json_level_app(void **state)
{
	(void)state;
	char buf[64];
	struct floe_config_input in = input(FLOE_PARSER_JSON);
	struct floe_decoder *d = decoder(&in);
	const char *line = "{\"level\":\"WARNING\",\"service\":\"billing\",\"n\":3,\"x\":null}";
	struct floe_record rec = apply(d, line);
	assert_string_equal(attr(&rec, "level", buf, sizeof(buf)), "WARNING");
	assert_string_equal(attr(&rec, "n", buf, sizeof(buf)), "3");
	assert_string_equal(attr(&rec, "x", buf, sizeof(buf)), "(null)");
	assert_true(rec.has_severity);
	assert_int_equal(rec.severity, 4);
	assert_int_equal(rec.app.len, 7);
	assert_memory_equal(rec.app.p, "billing", 7);
	assert_ptr_equal(rec.message.p, line); /* the message stays the line */
	/* A digit level, and a level name it does not know (no severity). */
	rec = apply(d, "{\"lvl\":\"2\"}");
	assert_int_equal(rec.severity, 2);
	rec = apply(d, "{\"level\":\"loud\"}");
	assert_false(rec.has_severity);
	/* A line that is not JSON: kept whole, no attrs, counted. */
	rec = apply(d, "not json {");
	assert_int_equal(rec.nattrs, 0);
	assert_int_equal(rec.message.len, 10);
	struct floe_decode_stats st;
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.parse_failures, 1);
	floe_decoder_free(d);
}

static void test_logfmt_and_regex(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a regex parser */
	char buf[64];
	struct floe_config_input in = input(FLOE_PARSER_LOGFMT);
	struct floe_decoder *d = decoder(&in);
	struct floe_record rec = apply(d, "level=debug program=cron msg=\"a b\"");
	assert_string_equal(attr(&rec, "msg", buf, sizeof(buf)), "a b");
	assert_int_equal(rec.severity, 7);
	assert_memory_equal(rec.app.p, "cron", 4);
	floe_decoder_free(d);

	in = input(FLOE_PARSER_REGEX);
	in.pattern = "^(?<user>[a-z]+) did (?<what>.*)$";
	d = decoder(&in);
	rec = apply(d, "alice did it");
	assert_string_equal(attr(&rec, "user", buf, sizeof(buf)), "alice");
	assert_string_equal(attr(&rec, "what", buf, sizeof(buf)), "it");
	rec = apply(d, "no match here");
	assert_int_equal(rec.nattrs, 0);
	struct floe_decode_stats st;
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.parse_failures, 1);
	floe_decoder_free(d);

	/* A regex's groups named like the column rules' fields fill those columns (the
	 * lists its names are in are looked up; the others, which cannot match, are not):
	 * the second of a list (hostname, program, lvl, msg) as well as the first. */
	in = input(FLOE_PARSER_REGEX);
	in.pattern = "^(?<ts>\\S+) (?<hostname>\\S+) (?<program>\\S+) (?<lvl>\\S+) (?<msg>.*)$";
	d = decoder(&in);
	rec = apply(d, "2023-05-15T14:30:45Z web-7 cron warn disk full");
	assert_int_equal(rec.ts, 1684161045000000LL);
	assert_int_equal(rec.host.len, 5);
	assert_memory_equal(rec.host.p, "web-7", 5);
	assert_int_equal(rec.app.len, 4);
	assert_memory_equal(rec.app.p, "cron", 4);
	assert_true(rec.has_severity);
	assert_int_equal(rec.severity, 4);
	assert_int_equal(rec.message.len, 9);
	assert_memory_equal(rec.message.p, "disk full", 9);
	floe_decoder_free(d);
	in.pattern = "^(?<level>\\S+) (?<rest>.*)$";
	d = decoder(&in);
	const char *plain = "error host=x msg=y";
	rec = apply(d, plain);
	assert_int_equal(rec.severity, 3);
	assert_null(rec.host.p); /* apply leaves the record's host unset */
	assert_ptr_equal(rec.message.p, plain);
	floe_decoder_free(d);
}

/* Every attr value of rec lies inside line[0..len). */
static void assert_slices(const struct floe_record *rec, const char *line, size_t len)
{
	assert_true(rec->nattrs > 0);
	for (size_t i = 0; i < rec->nattrs; i++) {
		const char *v = rec->attr_vals[i];
		if (!v)
			continue;
		if (v < line || v + rec->attr_val_lens[i] > line + len)
			fail_msg("attr %zu (%.*s) is a copy, not a slice of the line", i,
				 (int)rec->attr_key_lens[i], rec->attr_keys[i]);
	}
}

/* Parsed fields point into the line until the batch takes them. Values the
 * parser had to rewrite (a JSON string with escapes) are the exception, in the decoder's
 * arena; none of these has one. */
static void test_fields_are_slices(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a regex parser */
	const char *access = "192.0.2.1 - - [03/Dec/2026:10:00:00 +0000] \"GET /a?b=1 HTTP/1.1\" 200 512";
	struct floe_config_input in = input(FLOE_PARSER_REGEX);
	in.pattern = "^(?<client>[0-9.]+) [^ ]+ [^ ]+ \\[(?<time>[^]]+)\\] \"(?<method>[A-Z]+) "
		     "(?<path>[^ ]+) [^\"]+\" (?<status>[0-9]{3}) (?<bytes>[0-9]+)$";
	struct floe_decoder *d = decoder(&in);
	struct floe_record rec = apply(d, access);
	assert_int_equal(rec.nattrs, 6);
	assert_slices(&rec, access, strlen(access));
	floe_decoder_free(d);

	in = input(FLOE_PARSER_APACHE_COMMON);
	d = decoder(&in);
	rec = apply(d, access);
	assert_slices(&rec, access, strlen(access));
	floe_decoder_free(d);

	const char *lf = "level=info app=web took=12ms path=/x";
	in = input(FLOE_PARSER_LOGFMT);
	d = decoder(&in);
	rec = apply(d, lf);
	assert_int_equal(rec.nattrs, 4);
	assert_slices(&rec, lf, strlen(lf));
	floe_decoder_free(d);

	const char *js = "{\"level\":\"info\",\"n\":3,\"msg\":\"plain\"}";
	in = input(FLOE_PARSER_JSON);
	d = decoder(&in);
	rec = apply(d, js);
	assert_int_equal(rec.nattrs, 3);
	assert_slices(&rec, js, strlen(js));
	floe_decoder_free(d);
}

static void test_timestamps(void **state)
{
	(void)state;
	/* From the start of the message. */
	struct floe_config_input in = input(FLOE_PARSER_NONE);
	in.timestamp.format = "rfc3339";
	struct floe_decoder *d = decoder(&in);
	struct floe_record rec = apply(d, "2023-05-15T14:30:45.5Z started");
	assert_int_equal(rec.ts, 1684161045500000LL);
	assert_int_equal(rec.received_at, RECV);
	rec = apply(d, "no time here");
	assert_int_equal(rec.ts, RECV); /* the receive time stays */
	struct floe_decode_stats st;
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.ts_failures, 1);
	floe_decoder_free(d);

	/* From a parsed field, in a fixed zone. */
	in = input(FLOE_PARSER_JSON);
	in.timestamp.field = "time";
	in.timestamp.format = "%Y-%m-%d %H:%M:%S";
	in.timestamp.zone_offset_s = 2 * 3600;
	d = decoder(&in);
	rec = apply(d, "{\"time\":\"2023-05-15 16:30:45\",\"m\":1}");
	assert_int_equal(rec.ts, 1684161045000000LL);
	rec = apply(d, "{\"m\":1}"); /* no such field */
	assert_int_equal(rec.ts, RECV);
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.ts_failures, 1);
	floe_decoder_free(d);
}

/* A regex's timestamp field is found by its pair's id: the time is the one read from the
 * field the pattern captured under that name, found by name in a table of the same
 * captures (floe_fields_find), with the same failures: a time that does not parse, a
 * group that took no part, a name given to two groups, a field the pattern lacks. */
static void test_timestamp_field_by_id(void **state)
{
	(void)state;
	NEEDS_PCRE2();
	static const struct {
		const char *pattern, *field, *format;
		const char *lines[6];
	} cases[] = {
	    {"^(?<time>[^ ]*) (?<msg>.*)$",
	     "time",
	     "clf",
	     {"03/Dec/2026:10:00:00 +0000 a", "03/Dec/2026:10:00:00 +0100 b", "nope c", " d",
	      "no-space", NULL}},
	    {"(?J)^(?:(?<time>[0-9]+)|x(?<time>[^ ]+)) (?<rest>.*)$",
	     "time",
	     "epoch",
	     {"123 a", "x456 b", "xq c", "7 ", NULL}},
	    {"^(?<t>[0-9]+)?-(?<time>[0-9]*)(?<timer>!?)$",
	     "time",
	     "epoch",
	     {"-", "5-", "-7", "5-7!", "x", NULL}},
	    {"^(?<a>.*)$", "time", "epoch", {"1", "", NULL}},
	};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct floe_config_input in = input(FLOE_PARSER_REGEX);
		in.pattern = (char *)cases[c].pattern;
		in.timestamp.field = (char *)cases[c].field;
		in.timestamp.format = (char *)cases[c].format;
		struct floe_decoder *d = decoder(&in);
		struct floe_regex *r = NULL;
		assert_int_equal(floe_regex_new(NULL, in.pattern, strlen(in.pattern), 1 << 20, 0, &r, NULL),
				 0);
		struct floe_fields *f = NULL;
		assert_int_equal(floe_fields_new(NULL, 64, 0, &f), 0);
		struct floe_ts_format *fmt = NULL;
		assert_int_equal(floe_ts_format_new(NULL, in.timestamp.format, strlen(in.timestamp.format),
						    "+00:00", 6, &fmt, NULL),
				 0);
		uint64_t failures = 0;
		for (size_t i = 0; cases[c].lines[i]; i++) {
			const char *line = cases[c].lines[i];
			floe_fields_reset(f);
			bool matched = false;
			int64_t want = RECV, us;
			const char *v = NULL;
			size_t vl = 0;
			if (floe_regex_capture(r, line, strlen(line), f, &matched) == 0 && matched &&
			    floe_fields_find(f, cases[c].field, strlen(cases[c].field), &v, &vl) && v &&
			    floe_ts_parse(fmt, v, vl, RECV, &us, NULL) == 0)
				want = us;
			else
				failures++;
			struct floe_record rec = apply(d, line);
			if (rec.ts != want)
				fail_msg("%s on \"%s\": %lld, by name %lld", cases[c].pattern, line,
					 (long long)rec.ts, (long long)want);
		}
		struct floe_decode_stats st;
		floe_decoder_get_stats(d, &st);
		assert_int_equal(st.ts_failures, failures);
		floe_ts_format_free(fmt);
		floe_fields_free(f);
		floe_regex_free(r);
		floe_decoder_free(d);
	}
}

/* Parsed host, message/msg and ts/time/timestamp fields fill their columns (the first
 * name of each list with a value wins) and stay in attrs; a timestamp option wins over
 * the ts rule, and a ts value that is not RFC 3339 keeps the receive time, counted. */
static void test_parsed_columns(void **state)
{
	(void)state;
	char buf[64];
	struct floe_config_input in = input(FLOE_PARSER_JSON);
	struct floe_decoder *d = decoder(&in);
	struct floe_record rec =
	    apply(d, "{\"host\":\"web-7\",\"msg\":\"disk full\",\"time\":\"2023-05-15T14:30:45Z\"}");
	assert_int_equal(rec.host.len, 5);
	assert_memory_equal(rec.host.p, "web-7", 5);
	assert_int_equal(rec.message.len, 9);
	assert_memory_equal(rec.message.p, "disk full", 9);
	assert_int_equal(rec.ts, 1684161045000000LL);
	assert_string_equal(attr(&rec, "host", buf, sizeof(buf)), "web-7");
	assert_string_equal(attr(&rec, "msg", buf, sizeof(buf)), "disk full");
	/* message before msg, host before hostname, ts before time; empty values skipped. */
	rec = apply(d, "{\"hostname\":\"b\",\"host\":\"\",\"msg\":\"m\",\"message\":\"M\","
		       "\"time\":\"2023-05-15T14:30:45Z\",\"ts\":\"2023-05-15T14:30:46Z\"}");
	assert_memory_equal(rec.host.p, "b", 1);
	assert_memory_equal(rec.message.p, "M", 1);
	assert_int_equal(rec.ts, 1684161046000000LL);
	/* Not RFC 3339: the receive time stays, counted; the row is otherwise whole. */
	rec = apply(d, "{\"ts\":1684161046,\"msg\":\"x\"}");
	assert_int_equal(rec.ts, RECV);
	assert_memory_equal(rec.message.p, "x", 1);
	struct floe_decode_stats st;
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.ts_failures, 1);
	assert_int_equal(st.parse_failures, 0);
	floe_decoder_free(d);

	/* A timestamp option reading another field wins over the ts rule. */
	in = input(FLOE_PARSER_LOGFMT);
	in.timestamp.field = "when";
	in.timestamp.format = "epoch";
	d = decoder(&in);
	rec = apply(d, "when=1684161045 ts=2023-05-15T14:30:46Z msg=hi");
	assert_int_equal(rec.ts, 1684161045000000LL);
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.ts_failures, 0);
	floe_decoder_free(d);

	/* A timestamp option reading the message keeps the line as the message. */
	in = input(FLOE_PARSER_LOGFMT);
	in.timestamp.format = "rfc3339";
	d = decoder(&in);
	const char *line = "2023-05-15T14:30:45Z msg=hi";
	rec = apply(d, line);
	assert_ptr_equal(rec.message.p, line);
	floe_decoder_free(d);
}

static void test_too_many_fields(void **state)
{
	(void)state;
	struct floe_config_input in = input(FLOE_PARSER_LOGFMT);
	struct floe_decoder *d = decoder(&in);
	char line[2048];
	size_t n = 0;
	for (int i = 0; i < 70; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "k%d=v ", i);
	struct floe_record rec = apply(d, line);
	assert_int_equal(rec.nattrs, 64);
	assert_int_equal(rec.typed_len_max, 0); /* no bound known: the batch visits them */
	struct floe_decode_stats st;
	floe_decoder_get_stats(d, &st);
	assert_int_equal(st.fields_dropped, 6);
	floe_decoder_free(d);
}

static void test_bad_options(void **state)
{
	(void)state;
	struct floe_config_input in = input(FLOE_PARSER_REGEX);
	in.pattern = "(unclosed";
	struct floe_decoder *d = NULL;
	struct floe_err err = {0};
	const int want = PATTERN_ERROR(FLOE_EINVAL);
	assert_int_equal(floe_decoder_new(NULL, &in, &d, &err), want);
	assert_null(d);
	assert_int_equal(err.code, want);
	assert_true(err.msg[0] != '\0');
	in = input(FLOE_PARSER_NONE);
	in.timestamp.format = "nonsense";
	assert_int_equal(floe_decoder_new(NULL, &in, &d, &err), FLOE_EINVAL);
	assert_non_null(strstr(err.msg, "unknown timestamp format"));
}

/* An access log's lines with typed columns go straight from the scan to the typed
 * values (decode.c's take_access): the same record as the general way gives (the field
 * table, then floe_colplan_take), made here, for plans of every kind of column (a
 * string, the status and the byte count as numbers, a field feeding two columns, types
 * the scan has no number for, a value that does not convert), for lines with "-"
 * fields, a whole request, long byte counts, a line that does not parse, the common
 * format, and a plan whose types change in place (its fingerprint says so). */
struct access_case {
	enum floe_parser parser;
	bool unparsed;
	const char *const *lines;
};

static void expect_same_as_fields(struct floe_decoder *d, struct floe_colplan *p,
				  enum floe_parser parser, const char *line, uint64_t *failures)
{
	struct floe_record got = apply(d, line);
	/* The general way. */
	struct floe_record want;
	memset(&want, 0, sizeof(want));
	want.ts = want.received_at = RECV;
	want.message = (struct floe_str){line, strlen(line)};
	struct floe_fields *f = NULL;
	assert_int_equal(floe_fields_new(NULL, 64, 1u << 16, &f), 0);
	int64_t ts;
	if (floe_access_log_parse(line, strlen(line), parser != FLOE_PARSER_APACHE_COMMON, f, &ts,
				  NULL) == 0) {
		want.ts = ts;
		if (p->message_unparsed)
			want.message = (struct floe_str){NULL, 0};
	}
	floe_fields_to_record(f, &want);
	struct floe_pq_value vals[FLOE_COLS_MAX];
	const char *keys[64], *avals[64];
	size_t klens[64], avlens[64];
	floe_colplan_take(p, &want, vals, keys, klens, avals, avlens, failures);
	assert_int_equal(got.ts, want.ts);
	assert_ptr_equal(got.message.p, want.message.p);
	assert_int_equal(got.message.len, want.message.len);
	assert_int_equal(got.nattrs, want.nattrs);
	for (size_t i = 0; i < want.nattrs; i++) {
		assert_int_equal(got.attr_key_lens[i], want.attr_key_lens[i]);
		assert_memory_equal(got.attr_keys[i], want.attr_keys[i], want.attr_key_lens[i]);
		assert_ptr_equal(got.attr_vals[i], want.attr_vals[i]);
		assert_int_equal(got.attr_val_lens[i], want.attr_val_lens[i]);
	}
	assert_int_equal(got.ntyped, p->n);
	assert_ptr_equal(got.typed_plan, p);
	assert_non_null(got.row);
	assert_ptr_equal(got.typed, got.row + FLOE_LOG_NCOLS);
	for (size_t i = 0; i < p->n; i++) {
		/* Every field the writer and the batch read. */
		const struct floe_pq_value *a = &got.typed[i], *b = &vals[i];
		assert_int_equal(a->is_null, b->is_null);
		assert_int_equal(a->i, b->i);
		assert_true(a->d == b->d || (a->d != a->d && b->d != b->d));
		assert_ptr_equal(a->s, b->s);
		assert_int_equal(a->len, b->len);
		assert_int_equal(a->n, b->n);
		assert_null(a->keys);
		assert_null(a->ivals);
		/* The bound the batch's test for long values trusts. */
		assert_true(a->is_null || a->len <= got.typed_len_max);
	}
	assert_int_equal(got.typed_len_max, strlen(line));
	size_t n = 0;
	const uint64_t *cf = floe_decoder_conv_failures(d, &n);
	assert_int_equal(n, p->n);
	for (size_t i = 0; i < p->n; i++)
		assert_int_equal(cf[i], failures[i]);
	floe_fields_free(f);
}

static void test_access_log_direct(void **state)
{
	(void)state;
	static const char *const combined[] = {
	    "10.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 2326 "
	    "\"http://x/\" \"Mozilla/4.08\"",
	    "10.0.0.2 id - [10/Oct/2000:13:55:37 -0700] \"POST /b HTTP/1.1\" 404 - \"-\" \"curl\"",
	    "10.0.0.3 - - [10/Oct/2000:13:56:01 -0700] \"GET /c\" 500 123456789012 \"-\" \"-\"",
	    "10.0.0.4 - - [10/Oct/2000:13:56:02 -0700] \"\\x16\\x03\\x01\" 400 1234567890 \"-\" \"-\"",
	    "10.0.0.5 - - [10/Oct/2000:13:56:02 -0700] \"GET / HTTP/2.0\" 301 0000000007 \"r\" \"u\" x",
	    "not an access log line",
	    "10.0.0.6 - - [10/Oct/2000:13:56:03 -0700] \"GET /d HTTP/1.0\" 20x 1 \"-\" \"-\"",
	    "::1 - true [11/Oct/2000:00:00:00 +0000] \"GET 1.5 HTTP/1.0\" 200 99 \"-\" \"-\"",
	    NULL};
	static const char *const common[] = {
	    "10.0.0.1 - frank [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 2326",
	    "10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 -  ",
	    "10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] \"GET /a.gif HTTP/1.0\" 200 1 trailing",
	    NULL};
	const struct access_case cases[] = {
	    {FLOE_PARSER_APACHE_COMBINED, false, combined},
	    {FLOE_PARSER_NGINX_COMBINED, true, combined},
	    {FLOE_PARSER_APACHE_COMMON, false, common},
	    {FLOE_PARSER_APACHE_COMMON, true, common},
	};
	struct floe_ice_meta *m = logs_meta(NULL, 0);
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int plan = 0; plan < 3; plan++) {
			struct floe_colplan p;
			memset(&p, 0, sizeof(p));
			if (plan == 0) {
				/* The access logs' natural columns. */
				static const char *const str[] = {"client", "ident",    "user",
								  "method", "path",     "protocol",
								  "referer", "user_agent"};
				for (size_t i = 0; i < 8; i++)
					assert_int_equal(floe_colplan_add(&p, str[i], FLOE_COL_STRING,
									  NULL, NULL),
							 0);
				assert_int_equal(floe_colplan_add(&p, "status", FLOE_COL_INT, NULL, NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "bytes", FLOE_COL_LONG, NULL, NULL), 0);
			} else if (plan == 1) {
				/* Numbers of the other width, fields feeding two columns, types
				 * the scan has no number for; request and others left in attrs. */
				assert_int_equal(floe_colplan_add(&p, "status", FLOE_COL_LONG, NULL, NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "bytes", FLOE_COL_INT, NULL, NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "code", FLOE_COL_STRING, "status", NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "size_d", FLOE_COL_DOUBLE, "bytes", NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "is_user", FLOE_COL_BOOLEAN, "user", NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "path_f", FLOE_COL_FLOAT, "path", NULL), 0);
				assert_int_equal(floe_colplan_add(&p, "ua", FLOE_COL_BINARY, "user_agent", NULL), 0);
			} else {
				/* One column, from a field most lines lack. */
				assert_int_equal(floe_colplan_add(&p, "request", FLOE_COL_STRING, NULL, NULL), 0);
			}
			assert_int_equal(floe_colplan_learn(&p, m, NULL), 0);
			p.message_unparsed = cases[c].unparsed;
			struct floe_config_input in = input(cases[c].parser);
			in.timestamp.field = NULL;
			struct floe_decoder *d = decoder(&in);
			floe_decoder_set_columns(d, &p);
			uint64_t failures[FLOE_COLS_MAX] = {0};
			for (const char *const *l = cases[c].lines; *l; l++)
				expect_same_as_fields(d, &p, cases[c].parser, *l, failures);
			if (plan == 0) {
				/* A type changed in place, the fingerprint made again: read so. */
				p.col[8].type = FLOE_COL_STRING;
				p.col[9].type = FLOE_COL_DOUBLE;
				floe_colplan_sign(&p);
				for (const char *const *l = cases[c].lines; *l; l++)
					expect_same_as_fields(d, &p, cases[c].parser, *l, failures);
			}
			floe_decoder_free(d);
		}
	}
	floe_ice_meta_free(m);
}

/* Every allocation failing in turn: an error, nothing held. */
static void test_faults(void **state)
{
	(void)state;
	NEEDS_PCRE2(); /* a regex parser */
	struct floe_decoder *d = NULL;
	struct floe_config_input in = input(FLOE_PARSER_REGEX);
	in.pattern = "^(?<a>x)";
	in.timestamp.format = "epoch";
	in.timestamp.field = "a";
	for (long k = 0;; k++) {
		struct floe_alloc a;
		floe_alloc_init(&a, 0);
		a.fail_after = k;
		d = NULL;
		int rc = floe_decoder_new(&a, &in, &d, NULL);
		if (rc == 0) {
			floe_decoder_free(d);
			assert_int_equal(a.used, 0);
			break;
		}
		assert_int_equal(rc, FLOE_ENOMEM);
		assert_null(d);
		assert_int_equal(a.used, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_none_keeps_the_line),
	    cmocka_unit_test(test_json_level_app),
	    cmocka_unit_test(test_logfmt_and_regex),
	    cmocka_unit_test(test_timestamps), cmocka_unit_test(test_timestamp_field_by_id),
	    cmocka_unit_test(test_parsed_columns),
	    cmocka_unit_test(test_fields_are_slices),
	    cmocka_unit_test(test_too_many_fields),
	    cmocka_unit_test(test_access_log_direct),
	    cmocka_unit_test(test_bad_options),
	    cmocka_unit_test(test_faults),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
