/* Per-input line decoding: parser, timestamp, and the parsed fields that fill columns. */
#include "decode.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/parse/access_log.h"
#include "agent/parse/fields.h"
#include "agent/parse/json_line.h"
#include "agent/parse/logfmt.h"
#include "agent/parse/regex.h"
#include "agent/parse/syslog_file.h"
#include "agent/parse/timestamp.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/columns.h"
#include "agent/schema/convert.h"
#include "agent/schema/record.h"
#include "formats/parquet/writer.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELDS 64
#define FIELD_BYTES (64u << 10)
#define JSON_DEPTH 4

struct floe_decoder {
	struct floe_alloc *alloc;
	enum floe_parser parser;
	/* The syslog_file parser's zone: a fixed offset, or the system's (zone: local), and
	 * the system's zone itself (also the timestamp option's with zone: local). */
	int32_t zone_off_s;
	const struct floe_zone_fn *zone;
	struct floe_env_zone local;
	/* The time of the last line syslog_file read (0: none): a log is written in time
	 * order, so the hour a fall back repeats is read nearer it than the receive time,
	 * which in a backlog (a file read a month late) is as near one reading as the other. */
	int64_t syslog_last_us;
	/* The same for the timestamp option's zone: local: the time it last read, and the
	 * system's zone behind a function that takes it as the hint (ts_to_utc). */
	int64_t ts_last_us;
	struct floe_zone_fn ts_zone;
	struct floe_fields *fields;
	struct floe_regex *regex;
	struct floe_ts_format *ts;
	bool ts_from_message;
	const char *ts_field;
	size_t ts_field_len;
	/* For a parser with fixed names (a regex's groups, the access logs'): the ids, a bit
	 * each, of the names that are ts_field. Its pair is then found by its id, without
	 * the compare of names (floe_fields_find cost about 90 instructions a line). */
	bool ts_by_id;
	uint64_t ts_ids;
	/* The access logs' time: the minute of the last line's (floe_ts_clf_memo). */
	struct floe_ts_clf_memo clf_memo;
	struct floe_decode_stats st;
	char name[32]; /* "input N", for the log */
	struct failure_log {
		int64_t since_us; /* start of the minute being counted (receive time) */
		uint64_t more;	  /* failures after the logged one in that minute */
	} parse_log, ts_log;
	/* Typed columns: the plan (borrowed), this line's values and the attributes no
	 * column took, and the values that did not convert, per column. */
	const struct floe_colplan *plan;
	struct floe_pq_value row[FLOE_LOG_MAX_COLS]; /* typed from FLOE_LOG_NCOLS on (rec->row) */
	const char *tkeys[MAX_FIELDS], *tvals[MAX_FIELDS];
	size_t tklens[MAX_FIELDS], tvlens[MAX_FIELDS];
	uint64_t conv_failures[FLOE_COLS_MAX];
	/* For a parser with fixed field names (the access logs', a regex's groups): the
	 * columns each of its fields feeds, resolved when the plan is set. */
	bool mapped;
	struct floe_colmap map;
	bool message_unparsed; /* the plan's: a line taken apart leaves its message out */
	/* The lists of field names that fill a column (a bit per list, LIST_*) that the
	 * parser's fields can be in: all for parsers whose names come with the line (json,
	 * logfmt); for fixed names (the access logs', a regex's groups), those lists that
	 * hold one of them. A list no name is in is not looked up: it never matches. */
	unsigned lists;
	/* An access log whose every field the map finds, with no rule but the typed
	 * columns reading its fields (no name in a list, no timestamp option): its lines
	 * go straight from the scan to the typed values and attrs (take_access), without
	 * the field table and the general take between them. */
	bool direct;
	struct floe_access_log_line line;
	uint8_t act[FLOE_ACCESS_LOG_NFIELDS]; /* take_access's, by field id (ACT_*) */
	uint64_t act_sig;		       /* the plan's from_sig they were made for */
};

#define FAILURE_LOG_US (60 * 1000000LL)
#define SAMPLE_BYTES 160

/* Logs a failure: the first of each minute with the line it happened on (escaped, cut at
 * SAMPLE_BYTES), and with it how many more the previous minute had. A parser that fails
 * on every line says so once a minute, not once a line. */
static void log_failure(struct floe_decoder *d, struct failure_log *l, const char *what,
			const struct floe_record *rec)
{
	int64_t now = rec->received_at;
	if (l->since_us && now - l->since_us < FAILURE_LOG_US && now >= l->since_us) {
		l->more++;
		return;
	}
	char sample[SAMPLE_BYTES * 4 + 8];
	size_t o = 0, n = rec->message.len < SAMPLE_BYTES ? rec->message.len : SAMPLE_BYTES;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)rec->message.p[i];
		if (c >= 0x20 && c < 0x7f && c != '\\')
			sample[o++] = (char)c;
		else
			o += (size_t)snprintf(sample + o, sizeof(sample) - o, "\\x%02x", c);
	}
	sample[o] = '\0';
	if (l->more)
		floe_warn("%s: %s failed on %" PRIu64 " more lines in the minute before; now on: "
			  "\"%s\"%s", d->name, what, l->more, sample, n < rec->message.len ? "..." : "");
	else
		floe_warn("%s: %s failed on: \"%s\"%s (logged once a minute; counted in "
			  "metrics.json)", d->name, what, sample, n < rec->message.len ? "..." : "");
	l->since_us = now;
	l->more = 0;
}

/* A field name with its length, known at compile time: these lists are looked up on
 * every line. */
struct key {
	const char *s;
	size_t n;
};
#define KEY(lit) {lit, sizeof(lit) - 1}

/* The parsed fields that fill a column, by the column (README, "inputs[].parser"). */
static const struct key level_keys[] = {KEY("level"), KEY("severity"), KEY("lvl"), KEY("loglevel"),
					{NULL, 0}};
static const struct key app_keys[] = {KEY("app"),     KEY("app_name"), KEY("appname"),
				      KEY("program"), KEY("service"),  {NULL, 0}};
static const struct key host_keys[] = {KEY("host"), KEY("hostname"), {NULL, 0}};
static const struct key ts_keys[] = {KEY("ts"), KEY("time"), KEY("timestamp"), {NULL, 0}};
static const struct key message_keys[] = {KEY("message"), KEY("msg"), {NULL, 0}};

enum { LIST_LEVEL = 1, LIST_APP = 2, LIST_HOST = 4, LIST_TS = 8, LIST_MESSAGE = 16, LIST_ALL = 31 };

/* The lists (LIST_*) that hold the field name (name, len). */
static unsigned lists_of(const char *name, size_t len)
{
	static const struct key *const lists[] = {level_keys, app_keys, host_keys, ts_keys,
						  message_keys};
	unsigned bits = 0;
	for (size_t l = 0; l < sizeof(lists) / sizeof(lists[0]); l++)
		for (const struct key *k = lists[l]; k->s; k++)
			if (k->n == len && memcmp(k->s, name, len) == 0)
				bits |= 1u << l;
	return bits;
}

void floe_decoder_set_name(struct floe_decoder *d, const char *name)
{
	snprintf(d->name, sizeof(d->name), "%s", name);
}

static size_t fixed_names(const struct floe_decoder *d, const char **names, size_t *lens);
static size_t all_names(const struct floe_decoder *d);

/* d->ts_ids, when d's parser has fixed names and the map of them holds them all (a pair
 * carries the id of one of them, or FLOE_FIELD_NOID only when added by name, which such
 * a parser never does). */
static void ts_ids_of(struct floe_decoder *d)
{
	const char *names[FLOE_COLMAP_NAMES];
	size_t lens[FLOE_COLMAP_NAMES], n = fixed_names(d, names, lens);
	_Static_assert(FLOE_COLMAP_NAMES <= 64, "a bit per name");
	if (n == 0 || n != all_names(d))
		return;
	for (size_t k = 0; k < n; k++)
		if (lens[k] == d->ts_field_len && memcmp(names[k], d->ts_field, lens[k]) == 0)
			d->ts_ids |= (uint64_t)1 << k;
	d->ts_by_id = true;
}

/* The timestamp field's value, as floe_fields_find(ts_field) gives it: a table holds one
 * pair a name, and that pair carries the id of one of the names that are ts_field (a
 * name given to several groups gives its pair the last one's). */
static bool ts_field_by_id(const struct floe_decoder *d, const char **v, size_t *vl)
{
	const uint8_t *ids = floe_fields_ids(d->fields);
	for (size_t k = 0, n = floe_fields_count(d->fields); k < n; k++) {
		if (ids[k] < 64 && (d->ts_ids >> ids[k] & 1)) {
			*v = floe_fields_vals(d->fields)[k];
			*vl = floe_fields_val_lens(d->fields)[k];
			return true;
		}
	}
	return false;
}

/* The system's zone for the timestamp option: a repeated hour is read nearer the time
 * the option last read, when that is within a day (the previous line of the log), else
 * nearer the receive time. */
static int64_t ts_to_utc(void *ctx, int64_t local_us, int64_t hint_us)
{
	struct floe_decoder *d = ctx;
	const int64_t day = 86400LL * 1000000;
	int64_t last = d->ts_last_us;
	if (last && last - day < local_us && local_us < last + day)
		hint_us = last;
	return d->local.fn.to_utc(d->local.fn.ctx, local_us, hint_us);
}

static int32_t ts_offset_at(void *ctx, int64_t utc_us)
{
	struct floe_decoder *d = ctx;
	return d->local.fn.offset_at(d->local.fn.ctx, utc_us);
}

int floe_decoder_new(struct floe_alloc *a, const struct floe_config_input *in,
		     struct floe_decoder **out, struct floe_err *err)
{
	struct floe_decoder *d = floe_calloc(a, 1, sizeof(*d));
	if (!d)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	d->alloc = a;
	d->parser = in->parser;
	/* The system's zone, for the syslog_file parser's and the timestamp option's
	 * zone: local (one cache: the decoder is one thread's). */
	floe_env_zone_local(&d->local);
	if (in->syslog.zone_offset_s == FLOE_ZONE_LOCAL)
		d->zone = &d->local.fn;
	else
		d->zone_off_s = in->syslog.zone_offset_s;
	/* The lent row's built-in values, set once (floe_record.row). */
	for (size_t i = 0; i < FLOE_LOG_NCOLS; i++)
		floe_pq_value_init(&d->row[i], true);
	snprintf(d->name, sizeof(d->name), "input");
	int rc = 0;
	if (in->parser != FLOE_PARSER_NONE &&
	    (rc = floe_fields_new(a, MAX_FIELDS, FIELD_BYTES, &d->fields))) {
		floe_err_set(err, rc, "%s", floe_strerror(rc));
		goto out;
	}
	d->lists = LIST_ALL;
	if (in->parser == FLOE_PARSER_APACHE_COMMON || in->parser == FLOE_PARSER_APACHE_COMBINED ||
	    in->parser == FLOE_PARSER_NGINX_COMBINED) {
		const char *const *names = floe_access_log_field_names();
		d->lists = 0;
		for (size_t i = 0; names[i]; i++)
			d->lists |= lists_of(names[i], strlen(names[i]));
	}
	if (in->parser == FLOE_PARSER_REGEX &&
	    (rc = floe_regex_new(a, in->pattern, strlen(in->pattern), (size_t)in->max_line_bytes, 0,
				 &d->regex, err)))
		goto out;
	if (d->regex) {
		/* A regex's fields are its named groups. */
		d->lists = 0;
		for (size_t i = 0; i < floe_regex_name_count(d->regex); i++) {
			size_t len;
			const char *name = floe_regex_name(d->regex, i, &len);
			d->lists |= lists_of(name, len);
		}
	}
	/* Matching still works, only slower: said once, where an operator looks. */
	if (d->regex && !floe_regex_jit(d->regex) && floe_regex_jit_built())
		floe_warn("regex parser: PCRE2's JIT did not take the pattern (it refuses some, and "
			  "cannot run where writable memory may not become executable, as under "
			  "systemd's MemoryDenyWriteExecute=yes): lines are matched by its "
			  "interpreter, several times slower");
	if (in->timestamp.format) {
		char zone[16];
		bool local = in->timestamp.zone_offset_s == FLOE_ZONE_LOCAL;
		int32_t off = local ? 0 : in->timestamp.zone_offset_s, mag = off < 0 ? -off : off;
		snprintf(zone, sizeof(zone), "%c%02d:%02d", off < 0 ? '-' : '+', (int)(mag / 3600),
			 (int)(mag / 60 % 60));
		const char *spec = in->timestamp.format;
		if ((rc = floe_ts_format_new(a, spec, strlen(spec), zone, strlen(zone), &d->ts,
					     err)))
			goto out;
		if (local) {
			d->ts_zone = (struct floe_zone_fn){ts_to_utc, ts_offset_at, d};
			floe_ts_format_set_zone(d->ts, &d->ts_zone);
		}
		d->ts_from_message = strcmp(in->timestamp.field, "message") == 0;
		d->ts_field = in->timestamp.field;
		d->ts_field_len = strlen(in->timestamp.field);
		if (!d->ts_from_message)
			ts_ids_of(d);
	}
out:
	if (rc) {
		floe_decoder_free(d);
		return rc;
	}
	*out = d;
	return 0;
}

void floe_decoder_free(struct floe_decoder *d)
{
	if (!d)
		return;
	floe_fields_free(d->fields);
	floe_regex_free(d->regex);
	floe_ts_format_free(d->ts);
	floe_free(d->alloc, d);
}

/* The names of d's parser's fields when they are fixed, in the order of their ids (at
 * most FLOE_COLMAP_NAMES): the count, or 0 for a parser whose names come with the line. */
static size_t fixed_names(const struct floe_decoder *d, const char **names, size_t *lens)
{
	size_t n = 0;
	if (d->regex) {
		for (; n < floe_regex_name_count(d->regex) && n < FLOE_COLMAP_NAMES; n++)
			names[n] = floe_regex_name(d->regex, n, &lens[n]);
	} else if (d->parser == FLOE_PARSER_APACHE_COMMON ||
		   d->parser == FLOE_PARSER_APACHE_COMBINED ||
		   d->parser == FLOE_PARSER_NGINX_COMBINED) {
		const char *const *all = floe_access_log_field_names();
		for (; all[n] && n < FLOE_COLMAP_NAMES; n++) {
			names[n] = all[n];
			lens[n] = strlen(all[n]);
		}
	}
	return n;
}

/* How many names d's parser with fixed names has in all. */
static size_t all_names(const struct floe_decoder *d)
{
	size_t n = 0;
	if (d->regex)
		return floe_regex_name_count(d->regex);
	for (const char *const *all = floe_access_log_field_names(); all[n]; n++)
		;
	return n;
}

void floe_decoder_set_columns(struct floe_decoder *d, const struct floe_colplan *plan)
{
	d->plan = plan && plan->planned && plan->n ? plan : NULL;
	d->message_unparsed = plan && plan->message_unparsed;
	const char *names[FLOE_COLMAP_NAMES];
	size_t lens[FLOE_COLMAP_NAMES], n = d->plan ? fixed_names(d, names, lens) : 0;
	d->mapped = n > 0 && floe_colmap_build(&d->map, d->plan, names, lens, n) == 0;
	/* Every id the parser gives is one of these names (the access logs' list, a regex's
	 * groups, FLOE_COLMAP_NAMES at most): unless the list was cut, no line's ids need a
	 * check (about 55 instructions a line). */
	if (d->mapped)
		d->map.complete = n == all_names(d);
	d->direct = d->mapped && d->map.complete && !d->regex && !d->lists && !d->ts &&
		    !d->ts_from_message;
	d->act_sig = 0; /* made again at the next line (from_sig is never 0) */
}

const uint64_t *floe_decoder_conv_failures(const struct floe_decoder *d, size_t *n)
{
	*n = d->plan ? d->plan->n : 0;
	return d->plan ? d->conv_failures : NULL;
}

void floe_decoder_get_stats(const struct floe_decoder *d, struct floe_decode_stats *out)
{
	*out = d->st;
}

/* The next of the keys (ended by one with s NULL), from *k on, that the fields hold with
 * a non-null value: true with its value in *v and *vl and *k past it; false when none is
 * left. */
static bool next_field(const struct floe_fields *f, const struct key *keys, size_t *k,
		       const char **v, size_t *vl)
{
	for (; keys[*k].s; ++*k) {
		if (floe_fields_find(f, keys[*k].s, keys[*k].n, v, vl) && *v) {
			++*k;
			return true;
		}
	}
	return false;
}

/* Syslog severity (RFC 5424: 0 emergency .. 7 debug) of a level name or digit, or -1. */
static int severity_of(const char *s, size_t n)
{
	if (n == 1 && s[0] >= '0' && s[0] <= '7')
		return s[0] - '0';
	return floe_severity_of_name(s, n);
}

/* Parsed fields that name a column fill it, by one rule for every parser (README,
 * "inputs[].parser"): the first of each list of names with a usable value wins, and the
 * field stays in attrs too. Without this, a JSON event's own host would lose to the
 * agent's host name in partitions and group_by, silently. ts takes an RFC 3339 value
 * only, and only where no timestamp option is set, so a configured format always wins;
 * a value that is not RFC 3339 is counted and logged like any timestamp failure, since
 * the row would otherwise carry the receive time unnoticed. The message column is
 * mapped last (map_message). */
static void map_columns(struct floe_decoder *d, struct floe_record *rec)
{
	const char *v;
	size_t vl, k = 0;
	while ((d->lists & LIST_LEVEL) && !rec->has_severity &&
	       next_field(d->fields, level_keys, &k, &v, &vl)) {
		int sev = severity_of(v, vl);
		if (sev >= 0) {
			rec->has_severity = true;
			rec->severity = sev;
		}
	}
	for (k = 0; (d->lists & LIST_APP) && !rec->app.p && next_field(d->fields, app_keys, &k, &v, &vl);)
		if (vl)
			rec->app = (struct floe_str){v, vl};
	bool host_set = false;
	for (k = 0; (d->lists & LIST_HOST) && !host_set &&
		    next_field(d->fields, host_keys, &k, &v, &vl);)
		if ((host_set = vl > 0))
			rec->host = (struct floe_str){v, vl};
	/* The access-log and syslog_file parsers set ts themselves. */
	bool ts_parsed = d->parser == FLOE_PARSER_APACHE_COMMON ||
			 d->parser == FLOE_PARSER_APACHE_COMBINED ||
			 d->parser == FLOE_PARSER_NGINX_COMBINED || d->parser == FLOE_PARSER_SYSLOG_FILE;
	k = 0;
	if ((d->lists & LIST_TS) && !d->ts && !ts_parsed &&
	    next_field(d->fields, ts_keys, &k, &v, &vl)) {
		int64_t us;
		if (floe_ts_parse_rfc3339(v, vl, &us, NULL) == 0) {
			rec->ts = us;
		} else {
			d->st.ts_failures++;
			log_failure(d, &d->ts_log,
				    "the ts field (RFC 3339 expected; for another format, set the "
				    "input's timestamp option)",
				    rec);
		}
	}
}

/* The message column from a parsed message or msg field, last, so that every failure
 * logged before shows the whole line; the line stays the message when a timestamp
 * option reads it. */
static void map_message(struct floe_decoder *d, struct floe_record *rec)
{
	const char *v;
	size_t vl, k = 0;
	if (d->ts_from_message || !(d->lists & LIST_MESSAGE))
		return;
	while (next_field(d->fields, message_keys, &k, &v, &vl))
		if (vl) {
			rec->message = (struct floe_str){v, vl};
			return;
		}
}

/* The parser, as the failure log names it. */
static const char *const parser_what[] = {
    [FLOE_PARSER_JSON] = "the json parser",
    [FLOE_PARSER_LOGFMT] = "the logfmt parser",
    [FLOE_PARSER_REGEX] = "the regex parser",
    [FLOE_PARSER_APACHE_COMMON] = "the apache_common parser",
    [FLOE_PARSER_APACHE_COMBINED] = "the apache_combined parser",
    [FLOE_PARSER_NGINX_COMBINED] = "the nginx_combined parser",
    [FLOE_PARSER_SYSLOG_FILE] = "the syslog_file parser",
};

/* What take_access does with an access-log field, by its id: made for the plan's
 * columns as its fingerprint (from_sig, which covers their types) says them. */
enum { ACT_ATTR, ACT_STRING, ACT_NUMBER, ACT_ANY };

static void plan_access(struct floe_decoder *d)
{
	const struct floe_colplan *p = d->plan;
	for (unsigned id = 0; id < FLOE_ACCESS_LOG_NFIELDS; id++) {
		int i = d->map.first[id];
		uint8_t a = ACT_ATTR;
		if (i >= 0) {
			enum floe_col_type t = p->col[i].type;
			a = ACT_ANY;
			if (d->map.next[i] >= 0)
				;
			else if (t == FLOE_COL_STRING || t == FLOE_COL_BINARY)
				a = ACT_STRING;
			else if ((t == FLOE_COL_INT || t == FLOE_COL_LONG) &&
				 (id == FLOE_ACCESS_LOG_STATUS || id == FLOE_ACCESS_LOG_BYTES))
				a = ACT_NUMBER;
		}
		d->act[id] = a;
	}
	d->act_sig = p->from_sig;
}

/* An access-log line the direct way (d->direct; the map made for this plan's columns):
 * what floe_decoder_apply does with such a line through the field table, map_message
 * and floe_colplan_take_ids, the same record, counts and log. Each field feeds its
 * columns in the plan's order and is gone from attrs when one took it; a value that
 * does not convert counts for its column. A field that feeds one string column puts
 * the slice there as it is, one that feeds one int or long column (the status, the byte
 * count) the value the scan read while it checked the digits (what the conversion
 * gives), any other goes through floe_convert. */
__attribute__((always_inline)) static inline void take_access(struct floe_decoder *d,
							       struct floe_record *rec)
{
	const struct floe_colplan *p = d->plan;
	struct floe_access_log_line *ln = &d->line;
	int64_t ts;
	if (d->act_sig != p->from_sig)
		plan_access(d);
	/* Its values are slices of the line (or numbers). */
	rec->typed_len_max = rec->message.len;
	if (floe_access_log_parse_line(rec->message.p, rec->message.len,
				       d->parser != FLOE_PARSER_APACHE_COMMON, &d->clf_memo, ln, &ts,
				       NULL) == 0) {
		rec->ts = ts;
		if (d->message_unparsed)
			rec->message = (struct floe_str){NULL, 0};
	} else {
		d->st.parse_failures++;
		log_failure(d, &d->parse_log, parser_what[d->parser], rec);
	}
	struct floe_pq_value *vals = d->row + FLOE_LOG_NCOLS;
	for (size_t i = 0; i < p->n; i++)
		floe_pq_value_init(&vals[i], true);
	size_t n = 0;
	for (size_t k = 0; k < ln->n; k++) {
		unsigned id = ln->ids[k];
		const char *v = ln->vals[k];
		size_t vl = ln->vlens[k];
		struct floe_pq_value *out = &vals[d->map.first[id]];
		switch (d->act[id]) {
		case ACT_STRING:
			out->is_null = false;
			out->s = v;
			out->len = vl;
			continue;
		case ACT_NUMBER:
			if (id == FLOE_ACCESS_LOG_STATUS || ln->bytes_ok) {
				out->is_null = false;
				out->i = id == FLOE_ACCESS_LOG_STATUS ? ln->status : ln->bytes;
				continue;
			}
			/* A byte count of ten digits or more: the conversion says. */
			__attribute__((fallthrough));
		case ACT_ANY: {
			bool gone = false;
			for (int i = d->map.first[id]; i >= 0; i = d->map.next[i]) {
				if (floe_convert(p->col[i].type, v, vl, &vals[i]) == FLOE_CONV_FAIL)
					d->conv_failures[i]++;
				else
					gone = true;
			}
			if (gone)
				continue;
			break;
		}
		default:
			break;
		}
		d->tkeys[n] = ln->keys[k];
		d->tklens[n] = ln->klens[k];
		d->tvals[n] = v;
		d->tvlens[n] = vl;
		n++;
	}
	floe_colplan_taken(p, rec, vals, n, d->tkeys, d->tklens, d->tvals, d->tvlens);
	rec->row = d->row;
}

void floe_decoder_apply(struct floe_decoder *d, struct floe_record *rec)
{
	if (d->direct && d->plan && d->map.ncols == d->plan->n) {
		take_access(d, rec);
		return;
	}
	bool parsed = false;
	rec->typed_len_max = 0;
	rec->nattrs = 0;
	rec->ntyped = 0;
	rec->row = NULL;
	if (d->fields) {
		floe_fields_reset(d->fields);
		int rc = 0;
		bool matched = true;
		int64_t parsed_ts;
		struct floe_str pid;
		const char *p = rec->message.p;
		size_t len = rec->message.len;
		switch (d->parser) {
		case FLOE_PARSER_JSON:
			rc = floe_json_line_parse(p, len, JSON_DEPTH, d->fields, NULL);
			break;
		case FLOE_PARSER_LOGFMT:
			rc = floe_logfmt_parse(p, len, d->fields, NULL);
			break;
		case FLOE_PARSER_REGEX:
			rc = floe_regex_capture(d->regex, p, len, d->fields, &matched);
			break;
		case FLOE_PARSER_APACHE_COMMON:
		case FLOE_PARSER_APACHE_COMBINED:
		case FLOE_PARSER_NGINX_COMBINED:
			rc = floe_access_log_parse_memo(p, len,
							d->parser != FLOE_PARSER_APACHE_COMMON,
							&d->clf_memo, d->fields, &parsed_ts, NULL);
			if (rc == 0)
				rec->ts = parsed_ts;
			break;
		case FLOE_PARSER_SYSLOG_FILE:
			/* A time without an offset is in the input's zone (local by default); a
			 * timestamp option may read it again. */
			rc = floe_syslog_file_parse(p, len, rec->received_at, d->syslog_last_us,
						    d->zone_off_s, d->zone, d->fields, &parsed_ts,
						    &pid, NULL);
			if (rc == 0) {
				rec->ts = d->syslog_last_us = parsed_ts;
				if (pid.p)
					rec->proc_id = pid;
			}
			break;
		default:
			break;
		}
		if (rc || !matched) {
			d->st.parse_failures++;
			log_failure(d, &d->parse_log, parser_what[d->parser], rec);
			floe_fields_reset(d->fields);
		} else {
			parsed = true;
		}
		d->st.fields_dropped += floe_fields_dropped(d->fields);
		floe_fields_to_record(d->fields, rec);
		if (d->lists)
			map_columns(d, rec);
	}
	if (d->ts) {
		const char *v = NULL;
		size_t vl = 0;
		size_t consumed;
		int64_t us;
		int rc = FLOE_EPARSE;
		if (d->ts_from_message)
			rc = floe_ts_parse(d->ts, rec->message.p, rec->message.len, rec->received_at, &us, &consumed);
		else if (d->fields &&
			 (d->ts_by_id ? ts_field_by_id(d, &v, &vl)
				      : floe_fields_find(d->fields, d->ts_field, d->ts_field_len, &v, &vl)) &&
			 v)
			rc = floe_ts_parse(d->ts, v, vl, rec->received_at, &us, NULL);
		if (rc == 0) {
			rec->ts = d->ts_last_us = us;
		} else {
			d->st.ts_failures++;
			log_failure(d, &d->ts_log, "the timestamp", rec);
		}
	}
	if (d->fields)
		map_message(d, rec);
	/* The line's fields hold what it said: its text is left out when the table asks
	 * (tables.logs.message: unparsed). A line the parser did not take apart keeps it,
	 * so nothing is lost. After every rule that reads the message (timestamps, the
	 * failure log). */
	if (parsed && d->message_unparsed)
		rec->message = (struct floe_str){NULL, 0};
	/* Last, after every rule that reads attrs: the typed columns take their fields. */
	if (d->fields && d->plan && d->mapped)
		floe_colplan_take_ids(d->plan, &d->map, floe_fields_ids(d->fields), rec,
				      d->row + FLOE_LOG_NCOLS, d->tkeys, d->tklens, d->tvals,
				      d->tvlens, d->conv_failures);
	else if (d->fields && d->plan)
		floe_colplan_take(d->plan, rec, d->row + FLOE_LOG_NCOLS, d->tkeys, d->tklens,
				  d->tvals, d->tvlens, d->conv_failures);
	if (d->fields && d->plan)
		rec->row = d->row;
}
