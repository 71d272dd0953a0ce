/* The keys of an input (inputs[N], with its multiline and timestamp sections): their
 * rows, the regular expression, timestamp format and zone checks, and the cross-key rules
 * of an input. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "agent/parse/regex.h"
#include "agent/parse/timestamp.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_input_name(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			    char **);
static int check_regex(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_glob(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_ts_format(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int parse_zone(struct floe_config_ctx *, const struct floe_cnode *, const char *,
		      const char *, size_t, char *);
static int format_zone(struct floe_buf *, const char *);
static bool multiline_on(const char *);
static bool timestamp_on(const char *);
static int input_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static bool is_tail(const char *);
static bool is_syslog(const char *);
static bool has_zone(const char *);
static bool is_journal(const char *);
static bool reads_from_start(const char *);
static bool tls_on(const char *);

static const char *const start_at_names[] = {"beginning", "end", NULL};
static const char *const input_type_names[] = {"tail", "syslog", "journal", NULL};
static const char *const journal_fields_default[] = {"_SYSTEMD_UNIT", NULL};
static const char *const host_from_names[] = {"message", "peer", NULL};
static const char *const format_names[] = {"raw", "cri", "docker", NULL};
static const char *const parser_names[] = {"none",	       "json",		 "logfmt",
					   "regex",	       "apache_common", "apache_combined",
					   "nginx_combined", "syslog_file",	  NULL};
static const char *const long_lines_names[] = {"split", "truncate", NULL};
static const char *const symlinks_names[] = {"within_glob_root", "true", "false", NULL};
static const char *const bool_names[] = {"false", "true", NULL};
/* Compressed rotations, and the binary files a glob of all of /var/log meets: the login
 * records (wtmp, btmp and their rotations, lastlog: sparse, up to hundreds of GB that
 * read as zeros, faillog) and the journal's files (read by the journal input). */
static const char *const exclude_default[] = {
    "*.gz",	"*.xz",	   "*.bz2",    "*.zst",	    "wtmp",	  "wtmp[.-]*",
    "btmp",	"btmp[.-]*", "lastlog", "faillog", "*.journal", "*.journal~", NULL};

/* ---- the key table ------------------------------------------------------------------ */

static const struct floe_key multiline_keys[] = {
    {.name = "start",
     .type = FLOE_KT_STRING,
     .off = INP(multiline.start),
     .flags = FLOE_KF_REQUIRED,
     .check = check_regex,
     .help = "regex (PCRE2) matching the first line of a record"},
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
     .help = "for times without an offset: UTC, +HH:MM or local (the system's zone)"},
};
static const struct floe_key_section timestamp_section =
    FLOE_KEY_SECTION(timestamp_keys, NULL, NULL);

static const struct floe_key input_keys[] = {
    {.name = "name",
     .type = FLOE_KT_STRING,
     .off = INP(name),
     .flags = FLOE_KF_COMPUTED,
     .check = check_input_name,
     .help = "in log lines and the metrics' input label; default its position (1, 2, ...)"},
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
     .flags = FLOE_KF_QUIET | FLOE_KF_NONEMPTY, /* required for tail inputs: input_post */
     .shown = is_tail,
     .check = check_glob,
     .help = "globs of files to follow"},
    {.name = "exclude",
     .type = FLOE_KT_STRLIST,
     .off = INP(exclude),
     .off_n = INP(nexclude),
     .def_list = exclude_default,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "globs to skip, matched on full path and basename"},
    {.name = "start_at",
     .type = FLOE_KT_ENUM,
     .off = INP(start_at_end),
     .size = sizeof(bool),
     .def = "end",
     .choices = start_at_names,
     .flags = FLOE_KF_QUIET,
     .shown = reads_from_start,
     .help = "where to start in a file seen first"},
    {.name = "max_line_bytes",
     .type = FLOE_KT_SIZE,
     .off = INP(max_line_bytes),
     .def = "1MiB",
     .min = 256,
     .max = 64 * MiB,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "longer lines are split or truncated (long_lines)"},
    {.name = "format",
     .type = FLOE_KT_ENUM,
     .off = INP(format),
     .size = sizeof(enum floe_input_format),
     .def = "raw",
     .choices = format_names,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "line framing: raw, or container runtime logs"},
    {.name = "parser",
     .type = FLOE_KT_ENUM,
     .off = INP(parser),
     .size = sizeof(enum floe_parser),
     .def = "none",
     .choices = parser_names,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "how messages become attributes"},
    {.name = "pattern",
     .type = FLOE_KT_STRING,
     .off = INP(pattern),
     .check = check_regex,
     .help = "regex (PCRE2) with (?<name>...) groups; only with parser regex"},
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
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "what happens past max_line_bytes"},
    {.name = "rotate_wait",
     .type = FLOE_KT_DURATION,
     .off = INP(rotate_wait_ms),
     .def = "5s",
     .min = 0,
     .max = 1 * HOUR,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "how long a rotated file is still read"},
    {.name = "partial_line_timeout",
     .type = FLOE_KT_DURATION,
     .off = INP(partial_line_ms),
     .def = "5s",
     .min = 0,
     .max = 1 * HOUR,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "a last line without its LF is taken once its file is idle this long"},
    {.name = "max_open_files",
     .type = FLOE_KT_INT,
     .off = INP(max_open_files),
     .size = sizeof(uint32_t),
     .def = "256",
     .min = 8,
     .max = 65536,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "files followed at once"},
    {.name = "forget_after",
     .type = FLOE_KT_DURATION,
     .off = INP(forget_after_ms),
     .def = "24h",
     .min = 1 * MINUTE,
     .max = 365 * DAY,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "positions of files gone this long are dropped"},
    {.name = "follow_symlinks",
     .type = FLOE_KT_ENUM,
     .off = INP(follow_symlinks),
     .size = sizeof(enum floe_follow_symlinks),
     .def = "within_glob_root",
     .choices = symlinks_names,
     .flags = FLOE_KF_QUIET,
     .shown = is_tail,
     .help = "links a matched path may go through: within_glob_root, true (any) or false"},
    {.name = "listen",
     .type = FLOE_KT_STRLIST,
     .off = INP(syslog.listen),
     .off_n = INP(syslog.nlisten),
     .flags = FLOE_KF_QUIET | FLOE_KF_UNIQUE, /* required for syslog inputs: input_post */
     .max = 64,
     .check = floe_config_check_listen,
     .shown = is_syslog,
     .help = "syslog: udp://, tcp://, tls://HOST:PORT, unix:///path, unix+stream:///path"},
    {.name = "max_connections",
     .type = FLOE_KT_INT,
     .off = INP(syslog.max_connections),
     .size = sizeof(uint32_t),
     .def = "1024",
     .min = 1,
     .max = 65536,
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog: connections open at once per stream listener"},
    {.name = "idle_timeout",
     .type = FLOE_KT_DURATION,
     .off = INP(syslog.idle_timeout_ms),
     .def = "1h",
     .min = 0,
     .max = 7 * DAY,
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog: a connection silent this long is closed (0: never)"},
    {.name = "max_message_bytes",
     .type = FLOE_KT_SIZE,
     .off = INP(syslog.max_message_bytes),
     .def = "64KiB",
     .min = 480,
     .max = 1 * MiB,
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog: longer messages are cut and counted"},
    {.name = "socket_receive_buffer",
     .type = FLOE_KT_SIZE,
     .off = INP(syslog.receive_buffer),
     .def = "4MiB",
     .min = 0,
     .max = 1 * GiB,
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog: SO_RCVBUF of each socket (0: the kernel's default)"},
    {.name = "host_from",
     .type = FLOE_KT_ENUM,
     .off = INP(syslog.host_from),
     .size = sizeof(enum floe_syslog_host),
     .def = "message",
     .choices = host_from_names,
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog: the host column from the message (else the peer) or the peer"},
    {.name = "zone",
     .type = FLOE_KT_CUSTOM,
     .off = INP(syslog.zone_offset_s),
     .size = sizeof(int32_t),
     .def = "UTC",
     .parse = parse_zone,
     .format = format_zone,
     .flags = FLOE_KF_QUIET,
     .shown = has_zone,
     .help = "syslog, and parser syslog_file: zone of times without an offset: UTC, +HH:MM "
	     "or local (the system's, with its summer time; a tail input's default)"},
    {.name = "socket_mode",
     .type = FLOE_KT_CUSTOM,
     .off = INP(syslog.socket_mode),
     .size = sizeof(uint32_t),
     .def = "0",
     .parse = floe_config_parse_mode,
     .format = floe_config_format_mode,
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog unix sockets: permission bits in octal, 0666 for every local user"},
    {.name = "socket_owner",
     .type = FLOE_KT_STRING,
     .off = INP(syslog.socket_owner),
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog unix sockets: owner (name or id)"},
    {.name = "socket_group",
     .type = FLOE_KT_STRING,
     .off = INP(syslog.socket_group),
     .flags = FLOE_KF_QUIET,
     .shown = is_syslog,
     .help = "syslog unix sockets: group (name or id)"},
    {.name = "matches",
     .type = FLOE_KT_STRLIST,
     .off = INP(journal.matches),
     .off_n = INP(journal.nmatches),
     .flags = FLOE_KF_QUIET,
     .max = 64,
     .check = floe_config_check_match,
     .shown = is_journal,
     .help = "journal: FIELD=value filters (same field ORed, different fields ANDed)"},
    {.name = "directory",
     .type = FLOE_KT_STRING,
     .off = INP(journal.directory),
     .flags = FLOE_KF_QUIET,
     .shown = is_journal,
     .help = "journal: a directory of journal files instead of the system's journal"},
    {.name = "fields",
     .type = FLOE_KT_STRLIST,
     .off = INP(journal.fields),
     .off_n = INP(journal.nfields),
     .flags = FLOE_KF_QUIET | FLOE_KF_UNIQUE,
     .def_list = journal_fields_default,
     .max = 64,
     .check = floe_config_check_field_name,
     .shown = is_journal,
     .help = "journal: fields kept in attrs besides the mapped ones"},
    {.name = "include_own",
     .type = FLOE_KT_ENUM,
     .off = INP(journal.include_own),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .flags = FLOE_KF_QUIET,
     .shown = is_journal,
     .help = "journal: true reads floe's own entries too (its log would feed its commits)"},
    {.name = "tls",
     .type = FLOE_KT_SECTION,
     .sub = &floe_keys_syslog_tls_section,
     .flags = FLOE_KF_QUIET,
     .shown = tls_on,
     .help = "syslog tls://: {cert, key, key_password, ca} (ca: clients must present a certificate)"},
    {.name = "raw",
     .type = FLOE_KT_ENUM,
     .off = INP(raw),
     .size = sizeof(bool),
     .def = "true",
     .choices = bool_names,
     .help = "false: records only feed aggregations, none go to the raw table"},
    {.name = "table",
     .type = FLOE_KT_STRING,
     .off = INP(table),
     .def = "logs",
     .help = "the raw table its records go to when no route rule takes them"},
    {.name = "route",
     .type = FLOE_KT_SECTION_LIST,
     .off = INP(routes),
     .off_n = INP(nroutes),
     .size = sizeof(struct floe_config_route),
     .sub = &floe_keys_route_section,
     .help = "rules tried in order: {field, equals | matches, table}; the first that matches names the table"},
};
const struct floe_key_section floe_keys_input_section =
    FLOE_KEY_SECTION(input_keys, input_post, NULL);

/* ---- checks and post hooks ------------------------------------------------------------- */

/* Cross-key rules of an input: pattern goes with parser regex, and a timestamp taken from
 * an attribute needs a parser to make attributes. */
/* A name goes into log lines and Prometheus label values as it is, so it holds nothing
 * that would need quoting there, and fits the inputs' 32-byte "input NAME" buffers. */
static int check_input_name(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, FLOE_INPUT_NAME_MAX, "._-"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to %d characters of A-Z a-z 0-9 . _ -, got '%s'",
				path, FLOE_INPUT_NAME_MAX,
				floe_keymap_show(*value, strlen(*value), shown));
}

int floe_keys_inputs_names(struct floe_config_ctx *ctx, const struct floe_cnode *root,
			   struct floe_config *c)
{
	const struct floe_cnode *list = floe_keymap_find_value(root, "inputs");
	for (size_t i = 0; i < c->ninputs; i++) {
		struct floe_config_input *in = &c->inputs[i];
		if (!in->name) {
			char pos[24];
			snprintf(pos, sizeof(pos), "%zu", i + 1);
			if (!(in->name = floe_strdup(ctx->a, pos)))
				return floe_keymap_nomem(ctx);
		}
		for (size_t j = 0; j < i; j++) {
			if (strcmp(c->inputs[j].name, in->name) != 0)
				continue;
			const struct floe_cnode *item =
			    list && i < list->nkids ? list->kids[i] : list;
			const struct floe_cnode *at = floe_keymap_find_value(item, "name");
			return floe_config_fail(ctx, at ? at : item, FLOE_EFORMAT,
						"key 'inputs[%zu].name': '%s' is also the name of "
						"inputs[%zu]%s",
						i, in->name, j,
						at ? "" : " (an input's default name is its position)");
		}
	}
	return 0;
}

static int input_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_input *in = (struct floe_config_input *)(void *)base;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	in->line = map ? (map->line > INT32_MAX ? INT32_MAX : (int)map->line) : 0;
	in->col = map ? (map->col > INT32_MAX ? INT32_MAX : (int)map->col) : 0;
	int rc = floe_config_input_type_rules(ctx, map, path, in);
	if (rc)
		return rc;
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
	/* The zone key is a syslog input's, and the syslog_file parser's on a tail input, whose
	 * file this host's syslog daemon writes in this host's zone: local unless given. */
	const struct floe_cnode *zone = floe_keymap_find_value(map, "zone");
	if (in->type == FLOE_INPUT_TAIL && in->parser != FLOE_PARSER_SYSLOG_FILE && zone)
		return floe_config_fail(ctx, zone, FLOE_EFORMAT,
					"key '%s.zone': only read by the syslog_file parser on a tail "
					"input (parser is %s)",
					path, parser_names[in->parser]);
	if (in->type == FLOE_INPUT_TAIL && !zone)
		in->syslog.zone_offset_s = FLOE_ZONE_LOCAL;
	return 0;
}

/* ---- inputs: patterns, timestamps ---------------------------------------------------- */

/* A glob as glob(3) will read it: brackets and braces that close, no "**" (glob(3) reads
 * it as "*", one directory level, where users of other agents expect any depth), no
 * trailing slash (it would match directories only). */
static int check_glob(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		      char **value)
{
	const char *p = *value;
	size_t n = strlen(p);
	int braces = 0;
	if (n == 0)
		return floe_config_fail(ctx, at, FLOE_EFORMAT, "key '%s': an empty pattern", path);
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\\' && i + 1 < n) {
			i++;
		} else if (p[i] == '[') {
			size_t j = i + 1;
			if (j < n && (p[j] == '!' || p[j] == '^'))
				j++;
			if (j < n && p[j] == ']')
				j++;
			while (j < n && p[j] != ']')
				j++;
			if (j >= n)
				return floe_config_fail(ctx, at, FLOE_EFORMAT,
							"key '%s': '[' at offset %zu is not closed by ']'",
							path, i);
			i = j;
		} else if (p[i] == '{') {
			braces++;
		} else if (p[i] == '}') {
			if (--braces < 0)
				return floe_config_fail(ctx, at, FLOE_EFORMAT,
							"key '%s': '}' at offset %zu closes no '{'", path,
							i);
		} else if (p[i] == '*' && i + 1 < n && p[i + 1] == '*') {
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': '**' at offset %zu: patterns match one "
						"directory level per '*'; list the levels (a/*/*.log) "
						"or several patterns",
						path, i);
		}
	}
	if (braces)
		return floe_config_fail(ctx, at, FLOE_EFORMAT, "key '%s': a '{' is not closed", path);
	if (p[n - 1] == '/')
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': a pattern of files cannot end in '/' (add *.log "
					"or the file name)",
					path);
	return 0;
}

/* Compiled exactly as the input will compile it (agent/parse/regex.c), so that a
 * pattern that passes here cannot fail at start-up. PCRE2's message comes with its byte
 * offset in the pattern; for a plain (unquoted) scalar on one line that offset is also
 * the column the error is reported at. */
static int check_regex(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		       char **value)
{
	size_t n = strlen(*value);
	if (n > FLOE_REGEX_MAX_PATTERN)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': at most %d bytes, got %zu", path,
					FLOE_REGEX_MAX_PATTERN, n);
	struct floe_err why = {0};
	struct floe_regex *re = NULL;
	int err = floe_regex_new(ctx->a, *value, n, 1, 0, &re, &why);
	if (err == 0) {
		floe_regex_free(re);
		return 0;
	}
	if (err == FLOE_ENOMEM)
		return floe_keymap_nomem(ctx);
	struct floe_cnode here = *at;
	if (at->plain && why.offset != FLOE_ERR_NO_OFFSET && why.offset <= n &&
	    !memchr(*value, '\n', n))
		here.col += why.offset;
	return floe_config_fail(ctx, &here, FLOE_EFORMAT, "key '%s': %s", path, why.msg);
}

static const char *const ts_format_names[] = {"rfc3339",  "iso8601",  "epoch",	"epoch_ms",
					      "epoch_us", "epoch_ns", "syslog", "apache",
					      "clf",	  NULL};

/* A named format, or a custom one with at least one conversion, every conversion being
 * one agent/parse/timestamp.c knows. */
/* The input compiles the format at start-up (agent/parse/timestamp.c): a format that
 * passes the check must compile then. The check's own messages come first, as they name
 * the offending conversion; this catches whatever else they and the parser disagree on. */
static int compile_ts_format(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, const char *s)
{
	struct floe_err why = {0};
	struct floe_ts_format *f = NULL;
	int err = floe_ts_format_new(ctx->a, s, strlen(s), NULL, 0, &f, &why);
	if (err == 0) {
		floe_ts_format_free(f);
		return 0;
	}
	if (err == FLOE_ENOMEM)
		return floe_keymap_nomem(ctx);
	return floe_config_fail(ctx, at, FLOE_EFORMAT, "key '%s': %s", path, why.msg);
}

static int check_ts_format(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value;
	bool conv = false;
	for (size_t i = 0; ts_format_names[i]; i++)
		if (strcmp(s, ts_format_names[i]) == 0)
			return compile_ts_format(ctx, at, path, s);
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
		return compile_ts_format(ctx, at, path, s);
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
	if (len == 5 && memcmp(s, "local", 5) == 0) {
		off = FLOE_ZONE_LOCAL;
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
				"key '%s': expected UTC, local or a fixed offset +HH:MM or -HH:MM, "
				"got '%s'",
				path, floe_keymap_show(s, len, shown));
}

static int format_zone(struct floe_buf *out, const char *field)
{
	int32_t off;
	memcpy(&off, field, sizeof(off));
	if (off == 0)
		return floe_buf_puts(out, "\"UTC\"");
	if (off == FLOE_ZONE_LOCAL)
		return floe_buf_puts(out, "\"local\"");
	int32_t a = off < 0 ? -off : off;
	return floe_buf_printf(out, "\"%c%02d:%02d\"", off < 0 ? '-' : '+', (int)(a / 3600),
			       (int)(a / 60 % 60));
}

/* The zone of times without an offset: a syslog input's, or the syslog_file parser's. */
static bool has_zone(const char *base)
{
	const struct floe_config_input *in = (const struct floe_config_input *)(const void *)base;
	return in->type == FLOE_INPUT_SYSLOG ||
	       (in->type == FLOE_INPUT_TAIL && in->parser == FLOE_PARSER_SYSLOG_FILE);
}

static bool is_tail(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->type == FLOE_INPUT_TAIL;
}

static bool is_syslog(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->type == FLOE_INPUT_SYSLOG;
}

static bool is_journal(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->type == FLOE_INPUT_JOURNAL;
}

static bool reads_from_start(const char *base)
{
	return is_tail(base) || is_journal(base);
}

static bool tls_on(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->syslog.tls.cert != NULL;
}

static bool multiline_on(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->multiline.start != NULL;
}

static bool timestamp_on(const char *base)
{
	return ((const struct floe_config_input *)(const void *)base)->timestamp.format != NULL;
}
