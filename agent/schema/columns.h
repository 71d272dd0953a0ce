/* The typed columns of the logs table as the writer uses them (the column plan): each
 * column's name, type, the parsed field its value comes from and the Iceberg field id it
 * is written under. The ids are the table's: they are learnt from its schema (planned
 * with formats/iceberg/schema.h, as the commit will evolve it), never guessed, so a data
 * file always carries the ids of the schema it is committed under. A plan is plain data
 * on caller-owned storage; it is saved in the state directory (encode/decode here, the
 * file in agent/run/) so that a restart while the store is away writes the same ids. */
#ifndef FLOE_SCHEMA_COLUMNS_H
#define FLOE_SCHEMA_COLUMNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/convert.h"
#include "agent/schema/record.h"

struct floe_buf;
struct floe_err;
struct floe_ice_column;
struct floe_ice_meta;
struct floe_pq_column;

#define FLOE_COLS_MAX 32
#define FLOE_COL_NAME_MAX 64  /* bytes of a column name */
#define FLOE_COL_FROM_MAX 128 /* bytes of the field a value comes from */
/* Columns of a logs table writer at most: the built-in ones, then the typed ones. */
#define FLOE_LOG_MAX_COLS (FLOE_LOG_NCOLS + FLOE_COLS_MAX)

struct floe_col {
	char name[FLOE_COL_NAME_MAX + 1];
	char from[FLOE_COL_FROM_MAX + 1];
	char renamed_from[FLOE_COL_NAME_MAX + 1]; /* "" when none */
	enum floe_col_type type;		  /* the type written (the table's, when wider) */
	int32_t id;				  /* the field id; 0 until planned */
	/* The id was chosen here while the table was away (run/colplan.c): files carry
	 * it until the commit gives them the table's; never saved, never committed. */
	bool provisional;
};

struct floe_colplan {
	size_t n;
	bool planned; /* every column has an id: the table's, or a provisional one */
	bool provisional; /* some column's id is provisional (floe_col.provisional) */
	/* The message column is null for the lines a parser took apart (tables.logs.message:
	 * unparsed): the writers make it optional and the commit relaxes the table's field.
	 * Not part of the saved plan (the configuration says it). */
	bool message_unparsed;
	/* A fingerprint of n and the columns' sources (from) and types, set by
	 * floe_colplan_add, floe_colplan_decode and wherever a type changes in place
	 * (floe_colplan_sign; 0: not set): a reader that resolved the fields it wants to
	 * column indices and types once (the aggregator) knows by it that a plan, changed in
	 * place or copied over, still has them there, of those types. A struct copy carries
	 * it with the columns. */
	uint64_t from_sig;
	struct floe_col col[FLOE_COLS_MAX];
};

/* Sets p->from_sig from its columns (never 0): after a change of a column's type or
 * source in place. */
void floe_colplan_sign(struct floe_colplan *p);

/* Appends a column (name, from and renamed_from borrowed, copied; from NULL or "" =
 * name; renamed_from may be NULL). A name already there is left as it is (0: the first
 * declaration wins). FLOE_ELIMIT when full or a text is too long, FLOE_EINVAL for a bad
 * type. Clears planned. */
int floe_colplan_add(struct floe_colplan *p, const char *name, enum floe_col_type type,
		     const char *from, const char *renamed_from);
/* Sets the ids and types of p's columns from the table's current schema as the commit
 * will evolve it: a column the table has keeps the table's id (and its type when it is
 * the wider one), a new one gets the id the evolution gives it. FLOE_ESCHEMA (err names
 * the column and both types) when a column's type cannot live with the table's; p is then
 * unchanged. */
int floe_colplan_learn(struct floe_colplan *p, const struct floe_ice_meta *m, struct floe_err *err);
/* Whether a and b name the same columns, with the same types and sources (not ids). */
bool floe_colplan_same_columns(const struct floe_colplan *a, const struct floe_colplan *b);
/* The columns as the schema evolution takes them (out holds p->n; strings borrowed from p). */
void floe_colplan_ice_columns(const struct floe_colplan *p, struct floe_ice_column *out);
/* The writer's columns: the built-in ones (message optional when p->message_unparsed),
 * then, when p is planned, the typed ones (names borrowed from p). out holds
 * FLOE_LOG_MAX_COLS; *n gets the count. */
void floe_colplan_pq_columns(const struct floe_colplan *p, struct floe_pq_column *out, size_t *n);
/* Checks, for a commit, that the table's schema (after evolution) has each planned column
 * under its planned id with a type its values read as: FLOE_ESCHEMA with the column, the
 * ids or the types in err otherwise. */
int floe_colplan_check(const struct floe_colplan *p, const struct floe_ice_meta *m,
		       struct floe_err *err);

/* A planned plan as bytes (for the state file), and back. decode: FLOE_ECORRUPT for bytes
 * that are not a plan (p unchanged). */
int floe_colplan_encode(const struct floe_colplan *p, struct floe_buf *out);
int floe_colplan_decode(const uint8_t *b, size_t len, struct floe_colplan *p);

/* The end of a take: the attributes left (n of them, in the caller's arrays) and the typed
 * values of plan p become the record's. */
static inline void floe_colplan_taken(const struct floe_colplan *p, struct floe_record *rec,
				      const struct floe_pq_value *vals, size_t n, const char **keys,
				      size_t *klens, const char **avals, size_t *avlens)
{
	rec->nattrs = n;
	rec->attr_keys = keys;
	rec->attr_key_lens = klens;
	rec->attr_vals = avals;
	rec->attr_val_lens = avlens;
	rec->ntyped = p->n;
	rec->typed = vals;
	rec->typed_plan = p;
}
/* Takes the typed columns' values out of rec's attributes, for every input alike: vals
 * (p->n of them, the caller's) get each column's value converted from its attribute's
 * text (null when absent), and rec->typed points at them. rec's attributes become those
 * no column took, in the caller's arrays keys, klens, avals, avlens (room for
 * rec->nattrs each; rec's old arrays are only read): a value that does not convert stays
 * there as text, and failures[i] (p->n of them) counts it for its column. */
void floe_colplan_take(const struct floe_colplan *p, struct floe_record *rec,
		       struct floe_pq_value *vals, const char **keys, size_t *klens,
		       const char **avals, size_t *avlens, uint64_t *failures);

/* The most field names a parser with fixed names has (a regex's named groups). */
#define FLOE_COLMAP_NAMES 64

/* The columns each field of a parser with fixed field names feeds, by the field's id (its
 * name's index in the parser's list, agent/parse/fields.h): resolved once per plan and
 * parser, so that taking a line's values compares no names. Plain data. */
struct floe_colmap {
	size_t ncols;			 /* the plan's column count it was built for */
	size_t nnames;			 /* ids below this are the parser's */
	/* Set by the map's user when every id its parser gives is below nnames (its whole
	 * list of names is the map's): a line's ids are then not checked one by one. */
	bool complete;
	int8_t first[FLOE_COLMAP_NAMES]; /* the first column fed by name k, or -1 */
	int8_t next[FLOE_COLS_MAX];	 /* the next column fed by column i's field, or -1 */
};

/* Builds m for plan p and a parser's names (names[k], lens[k] bytes, for k < n;
 * borrowed during the call). FLOE_ELIMIT when n > FLOE_COLMAP_NAMES (m unchanged). */
int floe_colmap_build(struct floe_colmap *m, const struct floe_colplan *p,
		      const char *const *names, const size_t *lens, size_t n);
/* floe_colplan_take for a record whose attributes the map's parser gave, attribute k
 * carrying id ids[k]: the same values, failures and attributes left, each attribute's
 * columns found through m. A record m does not cover (an id outside m's names, more than
 * 64 attributes, a plan of another column count) goes the general way. */
void floe_colplan_take_ids(const struct floe_colplan *p, const struct floe_colmap *m,
			   const uint8_t *ids, struct floe_record *rec, struct floe_pq_value *vals,
			   const char **keys, size_t *klens, const char **avals, size_t *avlens,
			   uint64_t *failures);

#endif
