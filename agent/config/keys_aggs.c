/* The keys of an aggregation (aggregations[N], with its where filter and its metrics):
 * their rows, the field, quantile and accuracy checks, the defaults computed from other
 * keys (table, slide, idle_timeout, column names); the rules that span the file (unique
 * names and tables, `from`) are in keys_aggs_check.c. What an aggregation costs in memory is
 * agent/agg's to say (it knows the sketches); `floe check` prints it. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "agent/parse/regex.h"
#include "agent/schema/aggtable.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_agg_name(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			  char **);
static int check_column(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_index(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_quantile(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			  char **);
static int parse_accuracy(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			  const char *, size_t, char *);
static int format_accuracy(struct floe_buf *, const char *);
static bool never(const char *);
static bool for_distinct(const char *);
static bool for_quantiles(const char *);
static bool for_top_k(const char *);
static bool where_on(const char *);
static int metric_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void metric_fini(struct floe_alloc *, char *);
static int where_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int agg_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void agg_fini(struct floe_alloc *, char *);

static const char *const kind_names[] = {"count",    "sum",	  "min",   "max", "avg",
					 "distinct", "quantiles", "top_k", NULL};
static const char *const late_names[] = {"drop", "oldest_open", NULL};
static const char *const bool_names[] = {"false", "true", NULL};
static const char *const q_default[] = {"0.5", "0.9", "0.99", NULL};

/* The shorthand keys: { sum: FIELD } is { metric: sum, field: FIELD }. Never dumped (the
 * dump writes metric and field), hence never shown. */
#define KIND_KEY(i, name_)                                                                         \
	{                                                                                          \
		.name = name_, .type = FLOE_KT_STRING, .off = MET(by_kind[i]),                     \
		.check = floe_config_check_field_ref, .shown = never, .flags = FLOE_KF_QUIET                       \
	}

/* ---- the key tables ----------------------------------------------------------------- */

static const struct floe_key metric_keys[] = {
    {.name = "metric",
     .type = FLOE_KT_ENUM,
     .off = MET(kind),
     .size = sizeof(enum floe_agg_metric_kind),
     .choices = kind_names,
     .help = "what is computed per window and group"},
    {.name = "field",
     .type = FLOE_KT_STRING,
     .off = MET(field),
     .check = floe_config_check_field_ref,
     .help = "a record field (host, app, severity, ...) or an attribute (attrs.KEY)"},
    {.name = "name",
     .type = FLOE_KT_STRING,
     .off = MET(name),
     .flags = FLOE_KF_COMPUTED,
     .check = check_column,
     .help = "the column; default <metric>_<field>, or <field> for quantiles"},
    {.name = "precision",
     .type = FLOE_KT_INT,
     .off = MET(precision),
     .size = sizeof(uint32_t),
     .def = "14",
     .min = 4,
     .max = 18,
     .shown = for_distinct,
     .flags = FLOE_KF_QUIET,
     .help = "HyperLogLog precision p: 2^p bytes, error about 1.04/sqrt(2^p)"},
    {.name = "accuracy",
     .type = FLOE_KT_CUSTOM,
     .off = MET(accuracy),
     .size = sizeof(double),
     .def = "0.01",
     .parse = parse_accuracy,
     .format = format_accuracy,
     .shown = for_quantiles,
     .flags = FLOE_KF_QUIET,
     .help = "DDSketch relative accuracy (0.001..0.2, or 1%)"},
    {.name = "q",
     .type = FLOE_KT_STRLIST,
     .off = MET(q),
     .off_n = MET(nq),
     .flags = FLOE_KF_NONEMPTY | FLOE_KF_UNIQUE | FLOE_KF_QUIET,
     .def_list = q_default,
     .max = 16,
     .check = check_quantile,
     .shown = for_quantiles,
     .help = "the quantiles written, each a column <name>_p<100q>"},
    {.name = "k",
     .type = FLOE_KT_INT,
     .off = MET(k),
     .size = sizeof(uint32_t),
     .def = "10",
     .min = 1,
     .max = 1000,
     .shown = for_top_k,
     .flags = FLOE_KF_QUIET,
     .help = "values counted by SpaceSaving; the map holds them all"},
    {.name = "key_bytes",
     .type = FLOE_KT_INT,
     .off = MET(key_bytes),
     .size = sizeof(uint32_t),
     .def = "64",
     .min = 8,
     .max = 1024,
     .shown = for_top_k,
     .flags = FLOE_KF_QUIET,
     .help = "bytes of a value kept (longer ones are cut and counted)"},
    KIND_KEY(FLOE_METRIC_COUNT, "count"),
    KIND_KEY(FLOE_METRIC_SUM, "sum"),
    KIND_KEY(FLOE_METRIC_MIN, "min"),
    KIND_KEY(FLOE_METRIC_MAX, "max"),
    KIND_KEY(FLOE_METRIC_AVG, "avg"),
    KIND_KEY(FLOE_METRIC_DISTINCT, "distinct"),
    KIND_KEY(FLOE_METRIC_QUANTILES, "quantiles"),
    KIND_KEY(FLOE_METRIC_TOP_K, "top_k"),
};
static const struct floe_key_section metric_section = {
    .keys = metric_keys,
    .nkeys = sizeof(metric_keys) / sizeof(metric_keys[0]),
    .post = metric_post,
    .fini = metric_fini,
    .shorthand = "metric",
};

static const struct floe_key where_keys[] = {
    {.name = "field",
     .type = FLOE_KT_STRING,
     .off = AGG(where.field),
     .flags = FLOE_KF_REQUIRED,
     .check = floe_config_check_field_ref,
     .help = "the field tested"},
    {.name = "equals",
     .type = FLOE_KT_STRING,
     .off = AGG(where.equals),
     .help = "keep events whose field is this value"},
    {.name = "matches",
     .type = FLOE_KT_STRING,
     .off = AGG(where.matches),
     .check = floe_config_check_matches,
     .help = "keep events whose field matches this POSIX ERE"},
    {.name = "present",
     .type = FLOE_KT_ENUM,
     .off = AGG(where.present),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .help = "true: keep events that have the field"},
};
static const struct floe_key_section where_section = FLOE_KEY_SECTION(where_keys, where_post, NULL);

static const struct floe_key agg_keys[] = {
    {.name = "name",
     .type = FLOE_KT_STRING,
     .off = AGG(name),
     .flags = FLOE_KF_REQUIRED,
     .check = check_agg_name,
     .help = "names the aggregation"},
    {.name = "table",
     .type = FLOE_KT_STRING,
     .off = AGG(table),
     .flags = FLOE_KF_COMPUTED,
     .check = check_agg_name,
     .help = "the aggregate table; default: name"},
    {.name = "from",
     .type = FLOE_KT_STRLIST,
     .off = AGG(from),
     .off_n = AGG(nfrom),
     .flags = FLOE_KF_UNIQUE,
     .check = check_index,
     .help = "inputs (their index in inputs, from 0) aggregated; [] = all"},
    {.name = "where",
     .type = FLOE_KT_SECTION,
     .sub = &where_section,
     .shown = where_on,
     .help = "off: every event; set field and equals, matches or present"},
    {.name = "window",
     .type = FLOE_KT_DURATION,
     .off = AGG(window_ms),
     .def = "1m",
     .min = 1 * SEC,
     .max = 7 * DAY,
     .help = "window length, aligned on the epoch"},
    {.name = "slide",
     .type = FLOE_KT_DURATION,
     .off = AGG(slide_ms),
     .flags = FLOE_KF_COMPUTED,
     .min = 1 * SEC,
     .max = 7 * DAY,
     .help = "hopping windows start every slide; default window (tumbling)"},
    {.name = "allowed_lateness",
     .type = FLOE_KT_DURATION,
     .off = AGG(allowed_lateness_ms),
     .def = "0s",
     .min = 0,
     .max = 7 * DAY,
     .help = "a window closes when the newest event time is this far past its end"},
    {.name = "late",
     .type = FLOE_KT_ENUM,
     .off = AGG(late),
     .size = sizeof(enum floe_agg_late),
     .def = "drop",
     .choices = late_names,
     .help = "events of a closed window: drop or oldest_open (both counted)"},
    {.name = "max_future_skew",
     .type = FLOE_KT_DURATION,
     .off = AGG(max_future_skew_ms),
     .def = "5m",
     .min = 1 * SEC,
     .max = 7 * DAY,
     .help = "an event time further than this ahead of the clock is counted and handled as "
	     "late, and does not move the watermark"},
    {.name = "idle_timeout",
     .type = FLOE_KT_DURATION,
     .off = AGG(idle_timeout_ms),
     .flags = FLOE_KF_COMPUTED,
     .min = 1 * SEC,
     .max = 30 * DAY,
     .help = "open windows close after this long without events; default window + "
	     "allowed_lateness"},
    {.name = "group_by",
     .type = FLOE_KT_STRLIST,
     .off = AGG(group_by),
     .off_n = AGG(ngroup_by),
     .flags = FLOE_KF_UNIQUE,
     .max = 8,
     .check = floe_config_check_field_ref,
     .help = "fields whose values make a group; [] = one group"},
    {.name = "metrics",
     .type = FLOE_KT_SECTION_LIST,
     .off = AGG(metrics),
     .off_n = AGG(nmetrics),
     .size = sizeof(struct floe_config_metric),
     .sub = &metric_section,
     .help = "default [count]"},
    {.name = "max_groups",
     .type = FLOE_KT_INT,
     .off = AGG(max_groups),
     .size = sizeof(uint32_t),
     .def = "1000",
     .min = 1,
     .max = 10000000,
     .help = "groups per window; more keys go to the __overflow__ group"},
    {.name = "max_key_bytes",
     .type = FLOE_KT_SIZE,
     .off = AGG(max_key_bytes),
     .def = "256B",
     .min = 16,
     .max = 64 * KiB,
     .help = "a group's key values together; longer keys go to __overflow__"},
};
const struct floe_key_section floe_keys_aggs_section =
    FLOE_KEY_SECTION(agg_keys, agg_post, agg_fini);

/* ---- checks ------------------------------------------------------------------------- */

int floe_config_check_field_ref(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				const char *path, char **value)
{
	struct floe_err why;
	struct floe_field_ref ref;
	if (floe_field_ref_parse(*value, strlen(*value), &ref, &why) == 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT, "key '%s': %s", path, why.msg);
}

/* Whether pattern matches the decimal text of any number 0..max (the values of a
 * severity or a facility). true also when it cannot be compiled: check_matches says so. */
static bool matches_a_number(struct floe_config_ctx *ctx, const char *pattern, int64_t max)
{
	struct floe_regex *re = NULL;
	bool any = false;
	if (floe_regex_new(ctx->a, pattern, strlen(pattern), 8, FLOE_REGEX_NOSUB, &re, NULL))
		return true;
	for (int64_t v = 0; v <= max && !any; v++) {
		char num[24];
		int n = snprintf(num, sizeof(num), "%" PRId64, v);
		bool m = false;
		any = floe_regex_test(re, num, (size_t)n, &m) != 0 || m;
	}
	floe_regex_free(re);
	return any;
}

int floe_config_check_numeric_rule(struct floe_config_ctx *ctx, const struct floe_cnode *map,
				   const char *path, const char *field, char *equals,
				   const char *matches)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	struct floe_err why;
	struct floe_field_ref ref;
	int64_t num = -1, max;
	if (!field || floe_field_ref_parse(field, strlen(field), &ref, NULL))
		return 0;
	max = floe_field_ref_number_max(&ref);
	if (equals && floe_field_ref_equals_number(&ref, equals, strlen(equals), &num, &why)) {
		const struct floe_cnode *at = floe_keys_given(map, "equals");
		return floe_config_warn(ctx, at ? at : map,
					"key '%s.equals': %s: '%s' is neither, and never equals it",
					path, why.msg, floe_keymap_show(equals, strlen(equals), shown));
	}
	/* Never longer than what it replaces: a name has 3 letters or more and stands for
	 * a number of 2 digits at most, and digits lose their leading zeros alone. */
	if (equals && num >= 0)
		snprintf(equals, strlen(equals) + 1, "%" PRId64, num);
	if (matches && max >= 0 && max < 100 && !matches_a_number(ctx, matches, max)) {
		const struct floe_cnode *at = floe_keys_given(map, "matches");
		return floe_config_warn(ctx, at ? at : map,
					"key '%s.matches': %s is matched as its number, 0 to %" PRId64
					": '%s' matches none of them",
					path, field, max,
					floe_keymap_show(matches, strlen(matches), shown));
	}
	return 0;
}

static int check_agg_name(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			  const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 64, "_"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 _, got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Column names: printable, not a fixed column's, at most FLOE_AGG_NAME_MAX bytes (the
 * suffixes _p99_9 and _ddsketch must fit too: check_columns says when they do not).
 * Names derived from attribute keys meet the same rule when a dump is read back. */
static int check_column(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	size_t n = strlen(*value);
	bool ok = n <= FLOE_AGG_NAME_MAX && !floe_aggtable_fixed_name(*value, n);
	for (size_t i = 0; ok && i < n; i++)
		ok = (unsigned char)(*value)[i] >= 0x20 && (*value)[i] != 0x7f;
	if (ok)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a column name of at most %d printable bytes "
				"other than window_start, window_end, late_events and partial, got "
				"'%s'",
				path, FLOE_AGG_NAME_MAX, floe_keymap_show(*value, n, shown));
}

static int check_index(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		       char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value;
	size_t n = strlen(s);
	bool ok = n >= 1 && n <= 5 && (n == 1 || s[0] != '0');
	for (size_t i = 0; ok && i < n; i++)
		ok = s[i] >= '0' && s[i] <= '9';
	if (ok)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected the index of an input (0 for the first), got "
				"'%s'",
				path, floe_keymap_show(s, n, shown));
}

/* A plain decimal number: digits, one point, an exponent; no sign, no hex, no inf or
 * nan, which strtod would take. */
static bool parse_decimal(const char *s, double *out)
{
	size_t n = strlen(s);
	if (n == 0 || n > 32 || strspn(s, "0123456789.eE-+") != n ||
	    !(s[0] == '.' || (s[0] >= '0' && s[0] <= '9')))
		return false;
	char *end = NULL;
	double v = strtod(s, &end);
	if (end != s + n || !isfinite(v))
		return false;
	*out = v;
	return true;
}

static int check_quantile(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			  const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	double q;
	if (parse_decimal(*value, &q) && q >= 0.0 && q <= 1.0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a quantile from 0 to 1 (0.5, 0.99), got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Compiled as the aggregator will (agent/parse/regex.c), so a pattern that passes here
 * compiles at start-up. */
int floe_config_check_matches(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			      const char *path, char **value)
{
	size_t n = strlen(*value);
	if (n > 4096)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': at most 4096 bytes, got %zu", path, n);
	struct floe_err why = {0};
	struct floe_regex *re = NULL;
	int err = floe_regex_new(ctx->a, *value, n, 1, FLOE_REGEX_NOSUB, &re, &why);
	floe_regex_free(re);
	if (err == 0)
		return 0;
	if (err == FLOE_ENOMEM)
		return floe_keymap_nomem(ctx);
	return floe_config_fail(ctx, at, FLOE_EFORMAT, "key '%s': %s", path, why.msg);
}

static int parse_accuracy(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			  const char *path, const char *s, size_t len, char *field)
{
	char shown[FLOE_KEYMAP_SHOW_CAP], num[40];
	double v = 0;
	bool pct = len > 1 && s[len - 1] == '%';
	size_t n = pct ? len - 1 : len;
	bool ok = n < sizeof(num);
	if (ok) {
		memcpy(num, s, n);
		num[n] = '\0';
		ok = parse_decimal(num, &v);
	}
	if (ok && pct)
		v /= 100.0;
	if (ok && v >= 0.001 && v <= 0.2) {
		memcpy(field, &v, sizeof(v));
		return 0;
	}
	return floe_config_fail(
	    ctx, at, FLOE_EFORMAT,
	    "key '%s': expected a relative accuracy from 0.001 to 0.2 (or 0.1%% "
	    "to 20%%), got '%s'",
	    path, floe_keymap_show(s, len, shown));
}

/* The shortest form that reads back to the same double. */
static int format_accuracy(struct floe_buf *out, const char *field)
{
	double v;
	char num[40];
	memcpy(&v, field, sizeof(v));
	for (int prec = 6; prec <= 17; prec++) {
		snprintf(num, sizeof(num), "%.*g", prec, v);
		if (strtod(num, NULL) == v)
			break;
	}
	return floe_buf_puts(out, num);
}

static const struct floe_config_metric *metric_of(const char *base)
{
	return (const struct floe_config_metric *)(const void *)base;
}

static bool never(const char *base)
{
	(void)base;
	return false;
}

static bool for_distinct(const char *base)
{
	return metric_of(base)->kind == FLOE_METRIC_DISTINCT;
}

static bool for_quantiles(const char *base)
{
	return metric_of(base)->kind == FLOE_METRIC_QUANTILES;
}

static bool for_top_k(const char *base)
{
	return metric_of(base)->kind == FLOE_METRIC_TOP_K;
}

static bool where_on(const char *base)
{
	return ((const struct floe_config_agg *)(const void *)base)->where.field != NULL;
}

/* ---- post hooks ------------------------------------------------------------------------ */

static int pos(size_t v)
{
	return v > INT32_MAX ? INT32_MAX : (int)v;
}

/* The kind from `metric`, or from the one shorthand key (sum: FIELD), whose field then
 * moves to `field`. */
static int metric_kind(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		       struct floe_config_metric *m)
{
	int n = floe_keys_given(map, "metric") ? 1 : 0, which = -1;
	for (int i = 0; i < FLOE_METRIC_NKINDS; i++)
		if (m->by_kind[i]) {
			n++;
			which = i;
		}
	if (n != 1)
		return floe_config_fail(
		    ctx, map, FLOE_EFORMAT,
		    "key '%s': expected one of count, sum, min, max, avg, "
		    "distinct, quantiles, top_k (as KIND: FIELD, or metric: KIND "
		    "with field), got %s",
		    path, n ? "several" : "none");
	if (which >= 0) {
		if (floe_keys_given(map, "field"))
			return floe_config_fail(ctx, floe_keys_given(map, "field"), FLOE_EFORMAT,
						"key '%s.field': the field is already given by %s",
						path, kind_names[which]);
		m->kind = (enum floe_agg_metric_kind)which;
		m->field = m->by_kind[which];
		m->by_kind[which] = NULL;
	}
	if (m->kind != FLOE_METRIC_COUNT && !m->field)
		return floe_config_fail(ctx, map, FLOE_EFORMAT,
					"key '%s': %s needs a field ({ %s: FIELD })", path,
					kind_names[m->kind], kind_names[m->kind]);
	return 0;
}

/* Options that belong to another kind of metric are refused rather than ignored. */
static int metric_options(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			  const char *path, const struct floe_config_metric *m)
{
	static const struct {
		const char *key;
		enum floe_agg_metric_kind kind;
	} opts[] = {{"precision", FLOE_METRIC_DISTINCT},
		    {"accuracy", FLOE_METRIC_QUANTILES},
		    {"q", FLOE_METRIC_QUANTILES},
		    {"k", FLOE_METRIC_TOP_K},
		    {"key_bytes", FLOE_METRIC_TOP_K}};
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (m->kind != opts[i].kind && floe_keys_given(map, opts[i].key))
			return floe_config_fail(ctx, floe_keys_given(map, opts[i].key), FLOE_EFORMAT,
						"key '%s.%s': only for %s metrics (this one is %s)",
						path, opts[i].key, kind_names[opts[i].kind],
						kind_names[m->kind]);
	return 0;
}

/* The default column name: count, <kind>_<column>, top_<column>, or <column> for the
 * prefix of quantile columns. */
static int metric_name(struct floe_config_ctx *ctx, struct floe_config_metric *m)
{
	char buf[FLOE_AGG_NAME_MAX + 32];
	if (m->name)
		return 0;
	if (!m->field) {
		snprintf(buf, sizeof(buf), "count");
	} else {
		struct floe_field_ref ref;
		size_t n = 0;
		(void)floe_field_ref_parse(m->field, strlen(m->field), &ref, NULL);
		const char *col = floe_field_ref_column(&ref, m->field, &n);
		if (m->kind == FLOE_METRIC_QUANTILES)
			snprintf(buf, sizeof(buf), "%.*s", (int)n, col);
		else
			snprintf(buf, sizeof(buf), "%s_%.*s",
				 m->kind == FLOE_METRIC_TOP_K ? "top" : kind_names[m->kind], (int)n,
				 col);
	}
	if (!(m->name = floe_strdup(ctx->a, buf)))
		return floe_keymap_nomem(ctx);
	return 0;
}

static int metric_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		       char *base)
{
	struct floe_config_metric *m = (struct floe_config_metric *)(void *)base;
	m->line = map ? pos(map->line) : 0;
	m->col = map ? pos(map->col) : 0;
	int rc = metric_kind(ctx, map, path, m);
	if (rc == 0)
		rc = metric_options(ctx, map, path, m);
	if (rc == 0)
		rc = metric_name(ctx, m);
	if (rc == 0 && m->nq) {
		if (!(m->qv = floe_calloc(ctx->a, m->nq, sizeof(*m->qv))))
			return floe_keymap_nomem(ctx);
		for (size_t i = 0; i < m->nq; i++)
			(void)parse_decimal(m->q[i], &m->qv[i]);
	}
	return rc;
}

static void metric_fini(struct floe_alloc *a, char *base)
{
	floe_free(a, ((struct floe_config_metric *)(void *)base)->qv);
}

static int where_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	/* The where keys' offsets are the aggregation's (the section has no offset). */
	struct floe_config_agg *g = (struct floe_config_agg *)(void *)base;
	if (!g->where.field)
		return 0;
	int n = (g->where.equals != NULL) + (g->where.matches != NULL) + g->where.present;
	if (n == 1)
		return floe_config_check_numeric_rule(ctx, map, path, g->where.field,
						      g->where.equals, g->where.matches);
	return floe_config_fail(
	    ctx, map, FLOE_EFORMAT,
	    "key '%s': expected one of equals, matches or present: true, got %s", path,
	    n ? "several" : "none");
}

/* Every column of the table by name: the four fixed ones, the group keys, each metric's
 * values (one per quantile) and sketches. A clash names the later of the two. */
struct colnames {
	char (*names)[FLOE_AGG_NAME_MAX + 1];
	size_t n;
};

static int add_column(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		      struct colnames *c, const char *name, size_t len)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (len > FLOE_AGG_NAME_MAX)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT, "key '%s': the column name '%s' is longer than %d bytes",
		    path, floe_keymap_show(name, strlen(name), shown), FLOE_AGG_NAME_MAX);
	bool clash = floe_aggtable_fixed_name(name, len);
	for (size_t i = 0; !clash && i < c->n; i++)
		clash = strlen(c->names[i]) == len && memcmp(c->names[i], name, len) == 0;
	if (clash)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': a second column named '%s' in the aggregate table "
		    "(set the metric's name)",
		    path, floe_keymap_show(name, len, shown));
	memcpy(c->names[c->n], name, len);
	c->names[c->n++][len] = '\0';
	return 0;
}

static int metric_columns(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			  const char *path, struct colnames *c, const struct floe_config_metric *m)
{
	char buf[FLOE_AGG_NAME_MAX + 32];
	int rc = 0;
	if (m->kind == FLOE_METRIC_QUANTILES) {
		for (size_t i = 0; rc == 0 && i < m->nq; i++) {
			if (floe_aggtable_quantile_name(m->name, m->qv[i], buf, sizeof(buf)))
				return add_column(ctx, at, path, c, buf, FLOE_AGG_NAME_MAX + 1);
			rc = add_column(ctx, at, path, c, buf, strlen(buf));
		}
	} else {
		rc = add_column(ctx, at, path, c, m->name, strlen(m->name));
	}
	if (rc == 0 && (m->kind == FLOE_METRIC_QUANTILES || m->kind == FLOE_METRIC_DISTINCT)) {
		if (floe_aggtable_sketch_name(m->name, m->kind == FLOE_METRIC_QUANTILES, buf,
					      sizeof(buf)))
			return add_column(ctx, at, path, c, buf, FLOE_AGG_NAME_MAX + 1);
		rc = add_column(ctx, at, path, c, buf, strlen(buf));
	}
	return rc;
}

static int check_columns(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			 const char *path, const struct floe_config_agg *g)
{
	char kpath[200];
	const struct floe_cnode *gb = floe_keys_given(map, "group_by"), *ms = floe_keys_given(map, "metrics");
	size_t cap = g->ngroup_by;
	for (size_t i = 0; i < g->nmetrics; i++)
		cap += g->metrics[i].nq + 2;
	struct colnames c = {floe_calloc(ctx->a, cap ? cap : 1, sizeof(*c.names)), 0};
	if (!c.names)
		return floe_keymap_nomem(ctx);
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < g->ngroup_by; i++) {
		struct floe_field_ref ref;
		size_t n = 0;
		(void)floe_field_ref_parse(g->group_by[i], strlen(g->group_by[i]), &ref, NULL);
		const char *col = floe_field_ref_column(&ref, g->group_by[i], &n);
		const struct floe_cnode *at =
		    gb && gb->kind == FLOE_CNODE_SEQ && i < gb->nkids ? gb->kids[i] : gb;
		snprintf(kpath, sizeof(kpath), "%s.group_by[%zu]", path, i);
		rc = add_column(ctx, at ? at : map, kpath, &c, col, n);
	}
	for (size_t i = 0; rc == 0 && i < g->nmetrics; i++) {
		const struct floe_cnode *at = ms && i < ms->nkids ? ms->kids[i] : map;
		snprintf(kpath, sizeof(kpath), "%s.metrics[%zu]", path, i);
		rc = metric_columns(ctx, at, kpath, &c, &g->metrics[i]);
	}
	floe_free(ctx->a, c.names);
	return rc;
}

/* metrics: absent or [] means [count]. */
static int default_metrics(struct floe_config_ctx *ctx, struct floe_config_agg *g)
{
	if (g->nmetrics)
		return 0;
	floe_free(ctx->a, g->metrics);
	g->metrics = floe_calloc(ctx->a, 1, sizeof(*g->metrics));
	if (!g->metrics)
		return floe_keymap_nomem(ctx);
	g->nmetrics = 1;
	struct floe_config_metric *m = &g->metrics[0];
	m->kind = FLOE_METRIC_COUNT;
	m->precision = 14;
	m->accuracy = 0.01;
	m->k = 10;
	m->key_bytes = 64;
	if (!(m->name = floe_strdup(ctx->a, "count")))
		return floe_keymap_nomem(ctx);
	return 0;
}

/* Windows and their timing: slide divides the window into at most 64 steps (an event
 * lands in window/slide windows, each a group table in memory). */
static int timing(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		  struct floe_config_agg *g)
{
	if (g->slide_ms == 0)
		g->slide_ms = g->window_ms;
	if (g->slide_ms > g->window_ms || g->window_ms % g->slide_ms != 0 ||
	    g->window_ms / g->slide_ms > 64)
		return floe_config_fail(ctx, floe_keys_given(map, "slide"), FLOE_EFORMAT,
					"key '%s.slide': expected a divisor of window (%" PRIu64
					" ms) of at least window/64, got %" PRIu64 " ms",
					path, g->window_ms, g->slide_ms);
	if (g->idle_timeout_ms == 0) {
		uint64_t t = g->window_ms + g->allowed_lateness_ms;
		g->idle_timeout_ms = t > (uint64_t)(30 * DAY) ? (uint64_t)(30 * DAY) : t;
	}
	return 0;
}

static int agg_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		    char *base)
{
	struct floe_config_agg *g = (struct floe_config_agg *)(void *)base;
	g->line = map ? pos(map->line) : 0;
	g->col = map ? pos(map->col) : 0;
	if (!g->table && !(g->table = floe_strdup(ctx->a, g->name)))
		return floe_keymap_nomem(ctx);
	int rc = timing(ctx, map, path, g);
	if (rc == 0)
		rc = default_metrics(ctx, g);
	if (rc == 0 && g->nfrom) {
		if (!(g->from_idx = floe_calloc(ctx->a, g->nfrom, sizeof(*g->from_idx))))
			return floe_keymap_nomem(ctx);
		for (size_t i = 0; i < g->nfrom; i++)
			g->from_idx[i] = (uint32_t)strtoul(g->from[i], NULL, 10);
	}
	if (rc == 0)
		rc = check_columns(ctx, map, path, g);
	return rc;
}

static void agg_fini(struct floe_alloc *a, char *base)
{
	floe_free(a, ((struct floe_config_agg *)(void *)base)->from_idx);
}
