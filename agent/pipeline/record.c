/* The logs table schema, declared once, and the record-to-row mapping. */
#include "record.h"

#include "formats/base/error.h"

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

const struct floe_pq_column *floe_log_columns(void)
{
	return columns;
}

const struct floe_ice_field *floe_log_fields(size_t *n)
{
	*n = FLOE_LOG_NCOLS;
	return fields;
}

static void set_str(struct floe_pq_value *v, struct floe_str s)
{
	v->is_null = s.p == NULL;
	v->s = s.p;
	v->len = s.len;
}

void floe_record_to_row(const struct floe_record *rec, struct floe_pq_value *values)
{
	memset(values, 0, sizeof(*values) * FLOE_LOG_NCOLS);
	values[0].i = rec->ts;
	values[1].i = rec->received_at;
	set_str(&values[2], rec->host);
	set_str(&values[3], rec->source);
	values[4].is_null = !rec->has_offset;
	values[4].i = rec->offset;
	values[5].is_null = !rec->has_facility;
	values[5].i = rec->facility;
	values[6].is_null = !rec->has_severity;
	values[6].i = rec->severity;
	set_str(&values[7], rec->app);
	set_str(&values[8], rec->proc_id);
	set_str(&values[9], rec->msg_id);
	set_str(&values[10], rec->message);
	values[11].n = rec->nattrs;
	values[11].keys = rec->attr_keys;
	values[11].key_lens = rec->attr_key_lens;
	values[11].vals = rec->attr_vals;
	values[11].val_lens = rec->attr_val_lens;
}

int floe_log_schema_check(const struct floe_ice_meta *m, char *why, size_t cap)
{
	for (size_t i = 0; i < FLOE_LOG_NCOLS; i++) {
		const struct floe_ice_field *f = &fields[i];
		const char *type = NULL, *name = NULL;
		bool required = false;
		if (!floe_ice_meta_schema_field(m, f->id, &type, &required, &name)) {
			snprintf(why, cap, "the table has no field with id %d (floe writes '%s' there)",
				 (int)f->id, f->name);
			return FLOE_ESCHEMA;
		}
		if (strcmp(type, f->type) != 0) {
			snprintf(why, cap, "field %d '%s' is %s in the table, floe writes %s", (int)f->id,
				 name ? name : "?", type, f->type);
			return FLOE_ESCHEMA;
		}
		if (required && !f->required) {
			snprintf(why, cap, "field %d '%s' is required in the table, floe may leave it null",
				 (int)f->id, name ? name : "?");
			return FLOE_ESCHEMA;
		}
	}
	return 0;
}
