/* The logs table schema, declared once, and the record-to-row mapping. */
#include "record.h"

#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/parquet/writer.h"

#include <stdio.h>
#include <string.h>

static const struct floe_pq_column columns[FLOE_LOG_NCOLS] = {
	{"ts", 1, FLOE_PQ_TIMESTAMPTZ, false, 0, 0},
	{"received_at", 2, FLOE_PQ_TIMESTAMPTZ, false, 0, 0},
	{"host", 3, FLOE_PQ_STRING, false, 0, 0},
	{"source", 4, FLOE_PQ_STRING, false, 0, 0},
	{"offset", 5, FLOE_PQ_INT64, true, 0, 0},
	{"facility", 6, FLOE_PQ_INT32, true, 0, 0},
	{"severity", 7, FLOE_PQ_INT32, true, 0, 0},
	{"app", 8, FLOE_PQ_STRING, true, 0, 0},
	{"proc_id", 9, FLOE_PQ_STRING, true, 0, 0},
	{"msg_id", 10, FLOE_PQ_STRING, true, 0, 0},
	{"message", 11, FLOE_PQ_STRING, false, 0, 0},
	{"attrs", 12, FLOE_PQ_MAP_STRING, true, 13, 14},
};

static const struct floe_ice_field fields[FLOE_LOG_NCOLS] = {
	{1, "ts", "timestamptz", true, 0, 0, NULL, NULL, false},
	{2, "received_at", "timestamptz", true, 0, 0, NULL, NULL, false},
	{3, "host", "string", true, 0, 0, NULL, NULL, false},
	{4, "source", "string", true, 0, 0, NULL, NULL, false},
	{5, "offset", "long", false, 0, 0, NULL, NULL, false},
	{6, "facility", "int", false, 0, 0, NULL, NULL, false},
	{7, "severity", "int", false, 0, 0, NULL, NULL, false},
	{8, "app", "string", false, 0, 0, NULL, NULL, false},
	{9, "proc_id", "string", false, 0, 0, NULL, NULL, false},
	{10, "msg_id", "string", false, 0, 0, NULL, NULL, false},
	{11, "message", "string", true, 0, 0, NULL, NULL, false},
	{12, "attrs", "map", false, 13, 14, "string", "string", false},
};

int floe_log_sort_key_parse(const char *name, size_t len, enum floe_sort_key *out)
{
	/* The sort keys are the first FLOE_SORT_NKEYS columns, in order. */
	for (size_t i = 0; i < FLOE_SORT_NKEYS; i++) {
		if (strlen(columns[i].name) == len && memcmp(columns[i].name, name, len) == 0) {
			*out = (enum floe_sort_key)i;
			return 0;
		}
	}
	return FLOE_EINVAL;
}

const char *floe_log_sort_key_name(enum floe_sort_key k)
{
	return (unsigned)k < FLOE_SORT_NKEYS ? columns[k].name : NULL;
}

int32_t floe_log_column_id(const char *name, size_t len)
{
	for (size_t i = 0; i < FLOE_LOG_NCOLS; i++)
		if (columns[i].kind != FLOE_PQ_MAP_STRING && strlen(columns[i].name) == len &&
		    memcmp(columns[i].name, name, len) == 0)
			return columns[i].field_id;
	return 0;
}

const struct floe_pq_column *floe_log_columns(void)
{
	return columns;
}

const struct floe_ice_field *floe_log_fields(size_t *n)
{
	*n = FLOE_LOG_NCOLS;
	return fields;
}

/* A value of a string column; with whole false only the fields a string sets, the
 * others being as floe_pq_value_init left them (floe_record_row's lent row). */
static inline void put_str(struct floe_pq_value *v, struct floe_str s, bool whole)
{
	if (whole)
		floe_pq_value_init(v, s.p == NULL);
	v->is_null = s.p == NULL;
	v->s = s.p;
	v->len = s.len;
}

/* A value of an integer column, as put_str. */
static inline void put_int(struct floe_pq_value *v, bool has, int64_t i, bool whole)
{
	if (whole)
		floe_pq_value_init(v, !has);
	v->is_null = !has;
	v->i = i;
}

/* The built-in columns' values, values[0..FLOE_LOG_NCOLS): every one set whole, field by
 * field (floe_pq_value_init says why), or with whole false only the fields each column's
 * kind uses, in values whose other fields are still zero. */
static inline void builtin_values(const struct floe_record *rec, struct floe_pq_value *values,
				  bool whole)
{
	put_int(&values[0], true, rec->ts, whole);
	put_int(&values[1], true, rec->received_at, whole);
	put_str(&values[2], rec->host, whole);
	put_str(&values[3], rec->source, whole);
	put_int(&values[4], rec->has_offset, rec->offset, whole);
	put_int(&values[5], rec->has_facility, rec->facility, whole);
	put_int(&values[6], rec->has_severity, rec->severity, whole);
	put_str(&values[7], rec->app, whole);
	put_str(&values[8], rec->proc_id, whole);
	put_str(&values[9], rec->msg_id, whole);
	put_str(&values[10], rec->message, whole);
	struct floe_pq_value *m = &values[11];
	if (whole)
		floe_pq_value_init(m, false);
	m->is_null = false;
	m->n = rec->nattrs;
	m->keys = rec->attr_keys;
	m->key_lens = rec->attr_key_lens;
	m->vals = rec->attr_vals;
	m->val_lens = rec->attr_val_lens;
}

void floe_record_to_row(const struct floe_record *rec, struct floe_pq_value *values,
			size_t ncols)
{
	builtin_values(rec, values, true);
	for (size_t i = FLOE_LOG_NCOLS; i < ncols; i++) {
		if (i - FLOE_LOG_NCOLS < rec->ntyped)
			values[i] = rec->typed[i - FLOE_LOG_NCOLS];
		else
			floe_pq_value_init(&values[i], true);
	}
}

const struct floe_pq_value *floe_record_row(const struct floe_record *rec,
					    struct floe_pq_value *values, size_t ncols)
{
	struct floe_pq_value *row = rec->row;
	if (!row || !rec->ntyped || rec->typed != row + FLOE_LOG_NCOLS) {
		floe_record_to_row(rec, values, ncols);
		return values;
	}
	builtin_values(rec, row, false);
	for (size_t i = FLOE_LOG_NCOLS + rec->ntyped; i < ncols; i++)
		floe_pq_value_init(&row[i], true);
	return row;
}

int floe_log_schema_check(const struct floe_ice_meta *m, struct floe_err *err)
{
	for (size_t i = 0; i < FLOE_LOG_NCOLS; i++) {
		const struct floe_ice_field *f = &fields[i];
		const char *type = NULL, *name = NULL;
		bool required = false;
		if (!floe_ice_meta_schema_field(m, f->id, &type, &required, &name))
			return floe_err_set(
			    err, FLOE_ESCHEMA,
			    "the table has no field with id %d (floe writes '%s' there)",
			    (int)f->id, f->name);
		if (strcmp(type, f->type) != 0)
			return floe_err_set(err, FLOE_ESCHEMA,
					    "field %d '%s' is %s in the table, floe writes %s",
					    (int)f->id, name ? name : "?", type, f->type);
		if (required && !f->required)
			return floe_err_set(
			    err, FLOE_ESCHEMA,
			    "field %d '%s' is required in the table, floe may leave it null",
			    (int)f->id, name ? name : "?");
	}
	return 0;
}
