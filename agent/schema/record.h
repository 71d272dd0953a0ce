/* The raw log record and the `logs` table schema (ARCHITECTURE.md "Tables"): Parquet
 * column declarations, Iceberg schema fields with their fixed ids, and the mapping of a
 * record onto one Parquet row. A record only borrows its bytes. */
#ifndef FLOE_RECORD_H
#define FLOE_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_colplan;
struct floe_err;
struct floe_ice_field;
struct floe_ice_meta;
struct floe_pq_column;
struct floe_pq_value;

#define FLOE_LOG_NCOLS 12
#define FLOE_LOG_LAST_COLUMN_ID 14

/* Field ids of the columns used by partitioning and checks. */
enum {
	FLOE_COL_TS = 1,
	FLOE_COL_RECEIVED_AT = 2,
	FLOE_COL_HOST = 3,
	FLOE_COL_SOURCE = 4,
	FLOE_COL_OFFSET = 5,
	FLOE_COL_APP = 8,
	FLOE_COL_MESSAGE = 11,
	FLOE_COL_ATTRS = 12,
};

struct floe_str {
	const char *p;
	size_t len;
};

struct floe_record {
	int64_t ts;          /* event time, µs since the epoch, UTC */
	int64_t received_at; /* µs */
	struct floe_str host;
	struct floe_str source;
	bool has_offset;
	int64_t offset;
	bool has_facility, has_severity;
	int32_t facility, severity;
	struct floe_str app, proc_id, msg_id; /* p == NULL means null */
	struct floe_str message;
	/* Attributes: nattrs pairs; values may be NULL (null value). */
	size_t nattrs;
	const char *const *attr_keys;
	const size_t *attr_key_lens;
	const char *const *attr_vals;
	const size_t *attr_val_lens;
	/* Values of the typed columns (agent/schema/columns.h), in the plan's order: ntyped
	 * of them (0: the typed columns are null). Strings and binaries borrow their bytes. */
	size_t ntyped;
	const struct floe_pq_value *typed;
	const struct floe_colplan *typed_plan; /* their columns (borrowed); NULL when ntyped is 0 */
	/* A row its maker lends with the record, or NULL: room for FLOE_LOG_MAX_COLS values,
	 * whose typed part (from FLOE_LOG_NCOLS on) is where typed points. The writer's row
	 * is then made there (floe_record_row), the built-in columns' values written in front
	 * of the typed ones, where otherwise every typed value (96 bytes each) is copied into
	 * a row of the batch's: about 200 instructions a line with ten typed columns. The
	 * maker sets the first FLOE_LOG_NCOLS values once (floe_pq_value_init) and leaves
	 * them to floe_record_row, which then sets only the fields each column's kind uses,
	 * row after row. Valid until the record is added; ignored when typed points
	 * elsewhere. */
	struct floe_pq_value *row;
	/* An upper bound its maker knows of the typed values' lengths (the length of the
	 * line they are slices of), or 0 when it knows none: the batch's test for a long
	 * value (which must fit the memory budget before it goes in) then need not visit
	 * them (about 55 instructions a line with ten typed columns). */
	size_t typed_len_max;
};

/* The columns rows can be sorted by (tables.logs.sort_by): the scalar columns but message,
 * in field order. Every key sorts ascending, nulls first (Iceberg's default for ascending
 * order); strings compare bytewise, which is UTF-8 code point order. */
enum floe_sort_key {
	FLOE_SORT_TS,
	FLOE_SORT_RECEIVED_AT,
	FLOE_SORT_HOST,
	FLOE_SORT_SOURCE,
	FLOE_SORT_OFFSET,
	FLOE_SORT_FACILITY,
	FLOE_SORT_SEVERITY,
	FLOE_SORT_APP,
	FLOE_SORT_PROC_ID,
	FLOE_SORT_MSG_ID,
};
#define FLOE_SORT_NKEYS 10

/* Finds the sort key of column name (len bytes, need not be NUL-terminated). Returns 0, or
 * FLOE_EINVAL for a name that is not a sortable column (*out untouched). */
int floe_log_sort_key_parse(const char *name, size_t len, enum floe_sort_key *out);
/* The column name of key k (a static string), or NULL for a value outside the enum. */
const char *floe_log_sort_key_name(enum floe_sort_key k);
/* The field id of the logs table's primitive column name (len bytes: every column but
 * attrs, the ones that can carry a Parquet bloom filter), or 0 for any other name. */
int32_t floe_log_column_id(const char *name, size_t len);

/* The Parquet columns of the logs table, in field order. */
const struct floe_pq_column *floe_log_columns(void);
/* The Iceberg schema fields of the logs table (for creating a table). */
const struct floe_ice_field *floe_log_fields(size_t *n);
/* Fills values[0..ncols) from rec (borrowing rec's bytes): the built-in columns, then
 * the typed ones (ncols >= FLOE_LOG_NCOLS; the typed values rec lacks are null). */
void floe_record_to_row(const struct floe_record *rec, struct floe_pq_value *values,
			size_t ncols);
/* The row of rec's ncols values for a writer, as floe_record_to_row fills it: made in
 * rec->row when rec lends one that holds its typed values (the values there before
 * FLOE_LOG_NCOLS, kept as floe_record.row says, and after its ntyped typed ones are
 * written), else filled in values.
 * Returns the row, borrowed from one or the other, valid while both are. */
const struct floe_pq_value *floe_record_row(const struct floe_record *rec,
					    struct floe_pq_value *values, size_t ncols);
/* Checks that an existing table's current schema can take floe's rows: every floe
 * column exists with the same id, name-independent, same type, and a column floe may
 * leave null is not required. FLOE_ESCHEMA with the reason in err (may be NULL). */
int floe_log_schema_check(const struct floe_ice_meta *m, struct floe_err *err);

#endif
