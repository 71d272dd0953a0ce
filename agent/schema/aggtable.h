/* The aggregate tables: one row per window and group, with window_start,
 * window_end, the group keys, one column per metric value, late_events, partial, and the
 * sketches as binary columns. The columns depend on the aggregation's configuration; this
 * file turns a list of key, value and sketch columns into the Parquet columns and the
 * Iceberg schema (field ids fixed by position), and holds the two rules the configuration
 * and the aggregator share: what a field reference names, and how derived columns are
 * named. Nothing here knows the configuration's structs (schema/ is below config/). */
#ifndef FLOE_SCHEMA_AGGTABLE_H
#define FLOE_SCHEMA_AGGTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_ice_field;
struct floe_ice_meta;
struct floe_pq_column;

/* Longest column name, NUL excluded. */
#define FLOE_AGG_NAME_MAX 128

/* What a field reference (group_by, a metric's field, where.field) reads from a record:
 * one of its columns, or an attribute. */
enum floe_field_src {
	FLOE_FIELD_ATTR,
	FLOE_FIELD_HOST,
	FLOE_FIELD_SOURCE,
	FLOE_FIELD_APP,
	FLOE_FIELD_PROC_ID,
	FLOE_FIELD_MSG_ID,
	FLOE_FIELD_MESSAGE,
	FLOE_FIELD_SEVERITY, /* int */
	FLOE_FIELD_FACILITY, /* int */
	FLOE_FIELD_OFFSET,   /* long */
};

struct floe_field_ref {
	enum floe_field_src src;
	const char *attr; /* FLOE_FIELD_ATTR: the key, borrowed from the parsed text */
	size_t attr_len;
};

/* Reads a field reference (s, n bytes): a record column (host, source, app, proc_id,
 * msg_id, message, severity, facility, offset), "attrs.KEY" for the attribute KEY, or any
 * other name for the attribute of that name. ts and received_at are refused (the window
 * is the time, and rules do not test it), and so are empty names, "attrs." alone, control characters and names over
 * FLOE_AGG_NAME_MAX bytes. Returns 0 or FLOE_EINVAL with the reason in err (may be NULL). */
int floe_field_ref_parse(const char *s, size_t n, struct floe_field_ref *out, struct floe_err *err);

/* The number an `equals` value (s, n bytes) stands for when ref is a numeric record
 * field (severity, facility, offset), which is compared as the decimal text of its
 * number: digits (leading zeros too) within the field's range, or for severity and
 * facility a syslog name in any case ("err", "warning", "auth", "local0"), so that a rule
 * or filter written with one takes what it names instead of nothing. *num is -1 for
 * every other field (any text can be an attribute's value). FLOE_EINVAL, with what the
 * field takes in err (may be NULL), for a value the field can never have. */
int floe_field_ref_equals_number(const struct floe_field_ref *ref, const char *s, size_t n,
				 int64_t *num, struct floe_err *err);

/* The severity a level's name stands for, in any case (emerg, fatal, crit, err, error,
 * warn, warning, info, debug, trace, ...: the parsers' level field and a rule's equals
 * read the same names), or -1. */
int floe_severity_of_name(const char *s, size_t n);
/* The largest number ref's field can hold: 7 for severity, 23 for facility, INT64_MAX
 * for offset; -1 for a text field or an attribute. */
int64_t floe_field_ref_number_max(const struct floe_field_ref *ref);

/* The column a field's values get as a group key: the record column's name or the
 * attribute's key (borrowed from ref, len in *len). */
const char *floe_field_ref_column(const struct floe_field_ref *ref, const char *s, size_t *len);

/* Column types of an aggregate table. */
enum floe_aggcol_type {
	FLOE_AGGCOL_STRING,   /* group keys from string fields */
	FLOE_AGGCOL_INT,      /* group keys severity, facility */
	FLOE_AGGCOL_LONG,     /* counts, distinct, group key offset */
	FLOE_AGGCOL_DOUBLE,   /* sum, avg, min, max, quantiles */
	FLOE_AGGCOL_MAP_LONG, /* top_k: map<string,long> */
	FLOE_AGGCOL_BINARY,   /* sketches: HLL image, DDSketch protobuf */
};

struct floe_aggcol {
	const char *name; /* borrowed; copied by floe_aggtable_new */
	enum floe_aggcol_type type;
};

/* The names of the fixed columns. */
#define FLOE_AGG_COL_WINDOW_START "window_start"
#define FLOE_AGG_COL_WINDOW_END "window_end"
#define FLOE_AGG_COL_LATE "late_events"
#define FLOE_AGG_COL_PARTIAL "partial"

/* Whether name (n bytes) is one of the four fixed columns. */
bool floe_aggtable_fixed_name(const char *name, size_t n);

/* The name of quantile q's column of metric base: base + "_p" + 100q with '.' as '_'
 * (0.5: _p50, 0.999: _p99_9, 1: _p100). FLOE_ELIMIT when it does not fit in cap bytes
 * (NUL included) or in FLOE_AGG_NAME_MAX. */
int floe_aggtable_quantile_name(const char *base, double q, char *out, size_t cap);
/* The names of the sketch columns of a metric named base: base + "_hll" (distinct) and
 * base + "_ddsketch" (quantiles). FLOE_ELIMIT as above. */
int floe_aggtable_sketch_name(const char *base, bool ddsketch, char *out, size_t cap);

struct floe_aggtable;

/* The table of nkeys group keys, nvalues metric values and nsketches sketches: columns
 * window_start (timestamptz, required), window_end (timestamptz, required), the keys
 * (optional), the values (optional; count-like longs are written, the others are null
 * when the window had no value for them), late_events (long, required), partial
 * (boolean, required), then the sketches (optional binary). Field ids are the column
 * positions from 1; map columns' key and value ids follow the last column. Names must be
 * unique. Returns 0 and the table in *out (owned; floe_aggtable_free), FLOE_EINVAL (a
 * duplicate or empty name, a type out of place) with the reason in err, or FLOE_ENOMEM. */
int floe_aggtable_new(struct floe_alloc *a, const struct floe_aggcol *keys, size_t nkeys,
		      const struct floe_aggcol *values, size_t nvalues,
		      const struct floe_aggcol *sketches, size_t nsketches, struct floe_aggtable **out,
		      struct floe_err *err);
void floe_aggtable_free(struct floe_aggtable *t);

/* The Parquet columns and the Iceberg fields, in row order (borrowed from t). */
const struct floe_pq_column *floe_aggtable_columns(const struct floe_aggtable *t, size_t *n);
const struct floe_ice_field *floe_aggtable_fields(const struct floe_aggtable *t, size_t *n);
/* The position in a row of the first key, value and sketch column, and of late_events and
 * partial (window_start is 0, window_end 1). */
size_t floe_aggtable_first_key(const struct floe_aggtable *t);
size_t floe_aggtable_first_value(const struct floe_aggtable *t);
size_t floe_aggtable_late_col(const struct floe_aggtable *t);
size_t floe_aggtable_partial_col(const struct floe_aggtable *t);
size_t floe_aggtable_first_sketch(const struct floe_aggtable *t);

/* Checks that an existing table's schema takes these rows, as floe_log_schema_check does
 * for the logs table: each column with its id and type, and none that floe may leave null
 * required. FLOE_ESCHEMA with the reason in err (may be NULL). */
int floe_aggtable_schema_check(const struct floe_aggtable *t, const struct floe_ice_meta *m,
			       struct floe_err *err);

#endif
