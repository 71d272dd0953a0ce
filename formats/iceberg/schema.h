/* Schema evolution of an Iceberg table: from the columns one writer wants and the
 * table's current schema, the schema both can live with, and the metadata update that
 * makes it current. Pure: it reads and changes the metadata model only.
 *
 * The rules (Iceberg spec, "Schema Evolution"; field ids never reused):
 * - a column is matched to a table field by name, or by its old name (renamed_from),
 *   which keeps the field id, so files written before a rename read under the new name;
 * - a column the table lacks is added as optional, with an id above last-column-id;
 * - types may only widen as the spec allows: int to long, float to double, decimal(P,S)
 *   to decimal(P',S) with P' > P. When the writer's type is the wider one, the table's
 *   field is promoted; when the table's is, the writer writes the table's type. Any other
 *   difference is a conflict, reported with the field's id and both types;
 * - a field the writer does not write stays in the table (other writers may write it),
 *   and becomes optional if it was required, since this writer's files will lack it.
 * Several writers with different column lists therefore merge by name: none drops or
 * retypes another's columns, and the result does not depend on who committed first. */
#ifndef FLOE_ICE_SCHEMA_H
#define FLOE_ICE_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_err;
struct floe_ice_meta;

/* One column a writer writes: a top-level primitive field. */
struct floe_ice_column {
	const char *name;
	const char *type;	  /* "int", "long", "string", "decimal(9,2)", ... */
	const char *renamed_from; /* the column's previous name, or NULL */
	int32_t id;		  /* the id files were already written under, or 0 */
};

enum floe_ice_col_fate {
	FLOE_ICE_COL_SAME,     /* the table has it as is */
	FLOE_ICE_COL_ADDED,    /* new field, new id */
	FLOE_ICE_COL_PROMOTED, /* the table's field widens to the writer's type */
	FLOE_ICE_COL_WIDER     /* the table's type is wider: written as the table's */
};

/* What becomes of one column: its field id, the type its values are written as, and
 * whether it was found under its old name (the rename is part of the new schema). */
struct floe_ice_col_plan {
	int32_t id;
	char type[32];
	enum floe_ice_col_fate fate;
	bool renamed;
};

/* Whether type is an Iceberg primitive type floe can hold in a column. */
bool floe_ice_type_valid(const char *type);
/* Whether a value of type from may be read as type to (equal, or a spec promotion). */
bool floe_ice_type_promotes(const char *from, const char *to);

/* Plans cols[0..n) against m's current schema: fills plan[0..n) and *changed (whether a
 * new schema is needed). A column the table lacks gets its id (the id its files were
 * written under) when no schema of the table ever used it, else the next free one. Read-only, for `check` as much as for a commit. Fails with
 * FLOE_EINVAL (a column list that is wrong in itself: a bad type, a name twice) or
 * FLOE_ESCHEMA (a conflict with the table), err naming the column and both types. */
int floe_ice_schema_plan(const struct floe_ice_meta *m, const struct floe_ice_column *cols,
			 size_t n, struct floe_ice_col_plan *plan, bool *changed,
			 struct floe_err *err);

/* Plans as above and, when the schema changes, makes the new schema current: it is added
 * to schemas (or an equal schema already there is made current again), last-column-id is
 * raised, and the metadata-log gains prev_metadata_location (NULL: none; max_log entries
 * kept), as for a snapshot. On failure m is unchanged. plan may be NULL. */
int floe_ice_meta_evolve_schema(struct floe_ice_meta *m, const struct floe_ice_column *cols,
				size_t n, struct floe_ice_col_plan *plan, bool *changed,
				const char *prev_metadata_location, int64_t now_ms,
				size_t max_log, struct floe_err *err);

#endif
