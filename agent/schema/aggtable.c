/* The aggregate tables' schema: field references, derived column names, and the columns
 * and Iceberg fields of one aggregation's table. */
#include "agent/schema/aggtable.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/parquet/writer.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const struct {
	const char *name;
	enum floe_field_src src;
} record_fields[] = {
    {"host", FLOE_FIELD_HOST},	       {"source", FLOE_FIELD_SOURCE},
    {"app", FLOE_FIELD_APP},	       {"proc_id", FLOE_FIELD_PROC_ID},
    {"msg_id", FLOE_FIELD_MSG_ID},     {"message", FLOE_FIELD_MESSAGE},
    {"severity", FLOE_FIELD_SEVERITY}, {"facility", FLOE_FIELD_FACILITY},
    {"offset", FLOE_FIELD_OFFSET},
};
#define NRECORD_FIELDS (sizeof(record_fields) / sizeof(record_fields[0]))

static bool same(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && memcmp(s, lit, n) == 0;
}

int floe_field_ref_parse(const char *s, size_t n, struct floe_field_ref *out, struct floe_err *err)
{
	if (n == 0)
		return floe_err_set(err, FLOE_EINVAL, "an empty field name");
	if (n > FLOE_AGG_NAME_MAX)
		return floe_err_set(err, FLOE_EINVAL, "a field name of %zu bytes (at most %d)", n,
				    FLOE_AGG_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return floe_err_set(err, FLOE_EINVAL,
					    "a control character at offset %zu of a field name", i);
	if (same(s, n, "ts") || same(s, n, "received_at"))
		return floe_err_set(err, FLOE_EINVAL,
				    "'%.*s' is the time: an aggregation's window groups by it "
				    "already, and a route rule or where does not test it",
				    (int)n, s);
	if (n >= 6 && memcmp(s, "attrs.", 6) == 0) {
		if (n == 6)
			return floe_err_set(err, FLOE_EINVAL, "'attrs.' names no attribute");
		*out = (struct floe_field_ref){FLOE_FIELD_ATTR, s + 6, n - 6};
		return 0;
	}
	for (size_t i = 0; i < NRECORD_FIELDS; i++) {
		if (same(s, n, record_fields[i].name)) {
			*out = (struct floe_field_ref){record_fields[i].src, NULL, 0};
			return 0;
		}
	}
	*out = (struct floe_field_ref){FLOE_FIELD_ATTR, s, n};
	return 0;
}

/* The names of severities, as the parsers read a level field (floe_severity_of_name,
 * which pipeline/decode.c's severity_of takes), and of facilities (RFC 5424, as syslog(3) and logger(1) name them). */
static const struct {
	const char *name;
	int num;
} severity_names[] = {
    {"emerg", 0},   {"emergency", 0}, {"panic", 0}, {"fatal", 0},	{"alert", 1},
    {"crit", 2},    {"critical", 2},  {"err", 3},   {"error", 3},	{"warn", 4},
    {"warning", 4}, {"notice", 5},    {"info", 6},  {"information", 6}, {"informational", 6},
    {"debug", 7},   {"trace", 7},
};
static const char *const facility_names[] = {
    "kern",   "user",	"mail",	    "daemon", "auth",	"syslog", "lpr",    "news",
    "uucp",   "cron",	"authpriv", "ftp",    "ntp",	"audit",  "alert",  "clock",
    "local0", "local1", "local2",   "local3", "local4", "local5", "local6", "local7"};

static bool same_nocase(const char *s, size_t n, const char *lit)
{
	return strlen(lit) == n && strncasecmp(s, lit, n) == 0;
}

int floe_severity_of_name(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(severity_names) / sizeof(severity_names[0]); i++)
		if (same_nocase(s, n, severity_names[i].name))
			return severity_names[i].num;
	return -1;
}

/* The number a severity's (facility's) name stands for, or -1. */
static int64_t syslog_number(bool severity, const char *s, size_t n)
{
	size_t count = severity ? sizeof(severity_names) / sizeof(severity_names[0])
				: sizeof(facility_names) / sizeof(facility_names[0]);
	for (size_t i = 0; i < count; i++)
		if (same_nocase(s, n, severity ? severity_names[i].name : facility_names[i]))
			return severity ? severity_names[i].num : (int64_t)i;
	return -1;
}

int64_t floe_field_ref_number_max(const struct floe_field_ref *ref)
{
	switch (ref->src) {
	case FLOE_FIELD_SEVERITY:
		return 7;
	case FLOE_FIELD_FACILITY:
		return 23;
	case FLOE_FIELD_OFFSET:
		return INT64_MAX;
	default:
		return -1;
	}
}

int floe_field_ref_equals_number(const struct floe_field_ref *ref, const char *s, size_t n,
				 int64_t *num, struct floe_err *err)
{
	const char *what;
	int64_t max = floe_field_ref_number_max(ref);
	bool named = false;
	*num = -1;
	switch (ref->src) {
	case FLOE_FIELD_SEVERITY:
		what = "severity is a number, 0 (emerg) to 7 (debug), or a level's name";
		named = true;
		break;
	case FLOE_FIELD_FACILITY:
		what = "facility is a number, 0 (kern) to 23 (local7), or its syslog name";
		named = true;
		break;
	case FLOE_FIELD_OFFSET:
		what = "offset is a number, 0 or more";
		break;
	default:
		return 0;
	}
	bool ok = n >= 1;
	int64_t v = 0;
	for (size_t i = 0; ok && i < n; i++) {
		ok = s[i] >= '0' && s[i] <= '9' && s[i] - '0' <= max &&
		     v <= (max - (s[i] - '0')) / 10;
		v = ok ? v * 10 + (s[i] - '0') : v;
	}
	if (!ok && named)
		v = syslog_number(ref->src == FLOE_FIELD_SEVERITY, s, n), ok = v >= 0;
	if (!ok)
		return floe_err_set(err, FLOE_EINVAL, "%s", what);
	*num = v;
	return 0;
}

const char *floe_field_ref_column(const struct floe_field_ref *ref, const char *s, size_t *len)
{
	if (ref->src == FLOE_FIELD_ATTR) {
		*len = ref->attr_len;
		return ref->attr;
	}
	for (size_t i = 0; i < NRECORD_FIELDS; i++) {
		if (record_fields[i].src == ref->src) {
			*len = strlen(record_fields[i].name);
			return record_fields[i].name;
		}
	}
	*len = strlen(s);
	return s;
}

bool floe_aggtable_fixed_name(const char *name, size_t n)
{
	return same(name, n, FLOE_AGG_COL_WINDOW_START) || same(name, n, FLOE_AGG_COL_WINDOW_END) ||
	       same(name, n, FLOE_AGG_COL_LATE) || same(name, n, FLOE_AGG_COL_PARTIAL);
}

static int name_fits(int w, size_t cap)
{
	return w < 0 || (size_t)w >= cap || w > FLOE_AGG_NAME_MAX ? FLOE_ELIMIT : 0;
}

int floe_aggtable_quantile_name(const char *base, double q, char *out, size_t cap)
{
	/* %.10g of 100q: the configured quantiles are short decimals, and 10 significant
	 * digits print them without binary noise (0.999 * 100 is 99.89999999999999). */
	char num[32];
	snprintf(num, sizeof(num), "%.10g", q * 100.0);
	for (char *p = num; *p; p++)
		if (*p == '.')
			*p = '_';
	return name_fits(snprintf(out, cap, "%s_p%s", base, num), cap);
}

int floe_aggtable_sketch_name(const char *base, bool ddsketch, char *out, size_t cap)
{
	return name_fits(snprintf(out, cap, "%s_%s", base, ddsketch ? "ddsketch" : "hll"), cap);
}

/* ---- the table ------------------------------------------------------------------------ */

struct floe_aggtable {
	struct floe_alloc *a;
	struct floe_pq_column *cols;
	struct floe_ice_field *fields;
	size_t n;
	size_t first_key, first_value, late, partial, first_sketch;
};

static const char *ice_type(enum floe_aggcol_type t)
{
	switch (t) {
	case FLOE_AGGCOL_STRING:
		return "string";
	case FLOE_AGGCOL_INT:
		return "int";
	case FLOE_AGGCOL_LONG:
		return "long";
	case FLOE_AGGCOL_DOUBLE:
		return "double";
	case FLOE_AGGCOL_MAP_LONG:
		return "map";
	case FLOE_AGGCOL_BINARY:
		return "binary";
	}
	return "?";
}

static enum floe_pq_kind pq_kind(enum floe_aggcol_type t)
{
	switch (t) {
	case FLOE_AGGCOL_STRING:
		return FLOE_PQ_STRING;
	case FLOE_AGGCOL_INT:
		return FLOE_PQ_INT32;
	case FLOE_AGGCOL_LONG:
		return FLOE_PQ_INT64;
	case FLOE_AGGCOL_DOUBLE:
		return FLOE_PQ_DOUBLE;
	case FLOE_AGGCOL_MAP_LONG:
		return FLOE_PQ_MAP_STRING_LONG;
	case FLOE_AGGCOL_BINARY:
		return FLOE_PQ_BINARY;
	}
	return FLOE_PQ_BINARY;
}

/* Adds column i (its name copied) with its Iceberg field; map ids come from *next_id. */
static int put_col(struct floe_aggtable *t, size_t i, const char *name, enum floe_pq_kind kind,
		   const char *type, bool required, int32_t *next_id)
{
	char *copy = floe_strdup(t->a, name);
	if (!copy)
		return FLOE_ENOMEM;
	int32_t id = (int32_t)i + 1;
	t->cols[i] = (struct floe_pq_column){copy, id, kind, !required, 0, 0};
	t->fields[i] = (struct floe_ice_field){id, copy, type, required, 0, 0, NULL, NULL, false};
	if (kind == FLOE_PQ_MAP_STRING_LONG) {
		t->cols[i].key_field_id = t->fields[i].key_id = (*next_id)++;
		t->cols[i].value_field_id = t->fields[i].value_id = (*next_id)++;
		t->fields[i].key_type = "string";
		t->fields[i].value_type = "long";
		t->fields[i].value_required = true;
	}
	return 0;
}

static int check_names(const struct floe_aggtable *t, struct floe_err *err)
{
	for (size_t i = 0; i < t->n; i++) {
		if (!t->cols[i].name[0])
			return floe_err_set(err, FLOE_EINVAL, "column %zu has no name", i);
		for (size_t j = 0; j < i; j++)
			if (strcmp(t->cols[i].name, t->cols[j].name) == 0)
				return floe_err_set(err, FLOE_EINVAL, "two columns named '%s'",
						    t->cols[i].name);
	}
	return 0;
}

static int fill(struct floe_aggtable *t, const struct floe_aggcol *keys, size_t nkeys,
		const struct floe_aggcol *values, size_t nvalues,
		const struct floe_aggcol *sketches, size_t nsketches)
{
	int32_t next = (int32_t)t->n + 1;
	size_t i = 0;
	int rc = put_col(t, i++, FLOE_AGG_COL_WINDOW_START, FLOE_PQ_TIMESTAMPTZ, "timestamptz",
			 true, &next);
	if (!rc)
		rc = put_col(t, i++, FLOE_AGG_COL_WINDOW_END, FLOE_PQ_TIMESTAMPTZ, "timestamptz",
			     true, &next);
	for (size_t k = 0; !rc && k < nkeys; k++)
		rc = put_col(t, i++, keys[k].name, pq_kind(keys[k].type), ice_type(keys[k].type),
			     false, &next);
	for (size_t k = 0; !rc && k < nvalues; k++)
		rc = put_col(t, i++, values[k].name, pq_kind(values[k].type),
			     ice_type(values[k].type), false, &next);
	if (!rc)
		rc = put_col(t, i++, FLOE_AGG_COL_LATE, FLOE_PQ_INT64, "long", true, &next);
	if (!rc)
		rc = put_col(t, i++, FLOE_AGG_COL_PARTIAL, FLOE_PQ_BOOLEAN, "boolean", true, &next);
	for (size_t k = 0; !rc && k < nsketches; k++)
		rc = put_col(t, i++, sketches[k].name, FLOE_PQ_BINARY, "binary", false, &next);
	return rc;
}

int floe_aggtable_new(struct floe_alloc *a, const struct floe_aggcol *keys, size_t nkeys,
		      const struct floe_aggcol *values, size_t nvalues,
		      const struct floe_aggcol *sketches, size_t nsketches, struct floe_aggtable **out,
		      struct floe_err *err)
{
	size_t n = 4 + nkeys + nvalues + nsketches;
	for (size_t k = 0; k < nkeys; k++)
		if (keys[k].type == FLOE_AGGCOL_MAP_LONG || keys[k].type == FLOE_AGGCOL_BINARY ||
		    keys[k].type == FLOE_AGGCOL_DOUBLE)
			return floe_err_set(err, FLOE_EINVAL, "group key '%s' of a type keys cannot have",
					    keys[k].name);
	for (size_t k = 0; k < nsketches; k++)
		if (sketches[k].type != FLOE_AGGCOL_BINARY)
			return floe_err_set(err, FLOE_EINVAL, "sketch column '%s' is not binary",
					    sketches[k].name);
	/* Field ids are int32: the schema has at most a few hundred columns in practice. */
	if (n > 4096)
		return floe_err_set(err, FLOE_EINVAL, "%zu columns (at most 4096)", n);
	struct floe_aggtable *t = floe_calloc(a, 1, sizeof(*t));
	if (!t)
		return floe_err_set(err, FLOE_ENOMEM, "out of memory for the aggregate table's schema");
	t->a = a;
	t->n = n;
	t->first_key = 2;
	t->first_value = 2 + nkeys;
	t->late = t->first_value + nvalues;
	t->partial = t->late + 1;
	t->first_sketch = t->partial + 1;
	t->cols = floe_calloc(a, n, sizeof(*t->cols));
	t->fields = floe_calloc(a, n, sizeof(*t->fields));
	int rc = t->cols && t->fields ? fill(t, keys, nkeys, values, nvalues, sketches, nsketches)
				      : FLOE_ENOMEM;
	if (rc)
		floe_err_set(err, rc, "out of memory for the aggregate table's schema");
	else
		rc = check_names(t, err);
	if (rc) {
		floe_aggtable_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void floe_aggtable_free(struct floe_aggtable *t)
{
	if (!t)
		return;
	for (size_t i = 0; t->cols && i < t->n; i++)
		floe_free(t->a, (void *)t->cols[i].name);
	floe_free(t->a, t->cols);
	floe_free(t->a, t->fields);
	floe_free(t->a, t);
}

const struct floe_pq_column *floe_aggtable_columns(const struct floe_aggtable *t, size_t *n)
{
	*n = t->n;
	return t->cols;
}

const struct floe_ice_field *floe_aggtable_fields(const struct floe_aggtable *t, size_t *n)
{
	*n = t->n;
	return t->fields;
}

size_t floe_aggtable_first_key(const struct floe_aggtable *t)
{
	return t->first_key;
}

size_t floe_aggtable_first_value(const struct floe_aggtable *t)
{
	return t->first_value;
}

size_t floe_aggtable_late_col(const struct floe_aggtable *t)
{
	return t->late;
}

size_t floe_aggtable_partial_col(const struct floe_aggtable *t)
{
	return t->partial;
}

size_t floe_aggtable_first_sketch(const struct floe_aggtable *t)
{
	return t->first_sketch;
}

int floe_aggtable_schema_check(const struct floe_aggtable *t, const struct floe_ice_meta *m,
			       struct floe_err *err)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct floe_ice_field *f = &t->fields[i];
		const char *type = NULL, *name = NULL;
		bool required = false;
		if (!floe_ice_meta_schema_field(m, f->id, &type, &required, &name))
			return floe_err_set(err, FLOE_ESCHEMA,
					    "the table has no field with id %d (floe writes '%s' there)",
					    (int)f->id, f->name);
		bool key = i >= t->first_key && i < t->first_value;
		if (key && strcmp(type, f->type) != 0 && strcmp(name ? name : "", f->name) == 0)
			/* A group key's column takes the type of the field it comes from: a field
			 * that became a typed column (an int or long) changes it, and Iceberg
			 * promotes no string to a number. */
			return floe_err_set(err, FLOE_ESCHEMA,
					    "field %d is %s '%s' in the table, floe writes %s '%s': the "
					    "group key's values now come from a typed column of that "
					    "type, and a column's type cannot change from %s to %s",
					    (int)f->id, type, f->name, f->type, f->name, type, f->type);
		if (strcmp(type, f->type) != 0 || strcmp(name ? name : "", f->name) != 0)
			return floe_err_set(err, FLOE_ESCHEMA,
					    "field %d is %s '%s' in the table, floe writes %s '%s' "
					    "(the aggregation's group_by or metrics changed?)",
					    (int)f->id, type, name ? name : "?", f->type, f->name);
		if (required && !f->required)
			return floe_err_set(err, FLOE_ESCHEMA,
					    "field %d '%s' is required in the table, floe may leave it null",
					    (int)f->id, f->name);
	}
	return 0;
}
