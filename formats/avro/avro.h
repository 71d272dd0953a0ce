/* Avro binary encoding and object container files (spec 1.11): encoding helpers, a
 * container writer (codecs null and deflate) and a reader that decodes each record,
 * driven by the writer schema in the file header, into a generic value tree the caller
 * queries by field name. Pure over (ptr, len); every length read from input is checked. */
#ifndef FLOE_AVRO_H
#define FLOE_AVRO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_err;

/* ---- Binary encoding: each appends to b and returns 0 or FLOE_ENOMEM/FLOE_ELIMIT. ---- */

int floe_avro_put_long(struct floe_buf *b, int64_t v);  /* zigzag varint */
int floe_avro_put_int(struct floe_buf *b, int32_t v);   /* same encoding as long */
int floe_avro_put_bool(struct floe_buf *b, bool v);
int floe_avro_put_float(struct floe_buf *b, float v);   /* 4 bytes little-endian */
int floe_avro_put_double(struct floe_buf *b, double v); /* 8 bytes little-endian */
int floe_avro_put_bytes(struct floe_buf *b, const void *p, size_t len); /* long length + data */
int floe_avro_put_str(struct floe_buf *b, const char *s); /* NUL-terminated s as an Avro string */
/* Union branch index (the branch's value follows). */
int floe_avro_put_union(struct floe_buf *b, int64_t branch);
/* Arrays and maps: floe_avro_put_long(b, n) before each block of n > 0 items, and
 * floe_avro_put_long(b, 0) at the end. */

/* ---- Reading primitives over a cursor; for code that decodes without a schema. ---- */

struct floe_avro_cursor {
	const uint8_t *p;
	size_t len;
	size_t pos; /* next byte to read; the error offset after a failure */
};
/* Each returns 0, or FLOE_EPARSE on truncated/overlong input (pos unchanged then). */
int floe_avro_get_long(struct floe_avro_cursor *c, int64_t *out);
/* Borrows the bytes from the cursor's buffer. */
int floe_avro_get_bytes(struct floe_avro_cursor *c, const uint8_t **p, size_t *len);

/* ---- Object container writer. ---- */

enum floe_avro_codec {
	FLOE_AVRO_CODEC_NULL,
	FLOE_AVRO_CODEC_DEFLATE, /* raw deflate (RFC 1951), as the Avro spec requires */
};

struct floe_avro_meta {
	const char *key;      /* NUL-terminated; avro.schema and avro.codec are written for you */
	const void *value;
	size_t len;
};

struct floe_avro_writer_opts {
	const char *schema_json;       /* writer schema (borrowed), written as avro.schema */
	size_t schema_len;
	enum floe_avro_codec codec;
	const struct floe_avro_meta *meta; /* extra header metadata, in this order */
	size_t nmeta;
	const uint8_t *sync;           /* 16 bytes: random in production, fixed in tests */
	size_t block_bytes;            /* a block is flushed when its data reaches this; 0 = 1 MiB */
	size_t max_block_bytes;        /* hard maximum of one record + its block; 0 = 64 MiB */
};

struct floe_avro_writer;
/* Writes the header to out (borrowed; it must outlive the writer) and returns a writer
 * in *w. On failure out is truncated back to its previous length. */
int floe_avro_writer_new(struct floe_alloc *a, const struct floe_avro_writer_opts *o,
			 struct floe_buf *out, struct floe_avro_writer **w);
/* The buffer to encode one record into (owned by the writer; valid until the next call
 * to _end_record, _abort_record or _free). */
struct floe_buf *floe_avro_writer_record(struct floe_avro_writer *w);
/* Counts the record just encoded into the block; flushes the block when it is full. */
int floe_avro_writer_end_record(struct floe_avro_writer *w);
/* Discards a partly encoded record (after an encoding error). */
void floe_avro_writer_abort_record(struct floe_avro_writer *w);
/* Writes the pending block (if any records) to out. The writer stays usable. */
int floe_avro_writer_flush(struct floe_avro_writer *w);
void floe_avro_writer_free(struct floe_avro_writer *w);

/* ---- Schemas and generic values. ---- */

enum floe_avro_type {
	FLOE_AVRO_NULL,
	FLOE_AVRO_BOOLEAN,
	FLOE_AVRO_INT,
	FLOE_AVRO_LONG,
	FLOE_AVRO_FLOAT,
	FLOE_AVRO_DOUBLE,
	FLOE_AVRO_BYTES,
	FLOE_AVRO_STRING,
	FLOE_AVRO_RECORD,
	FLOE_AVRO_ENUM,
	FLOE_AVRO_ARRAY,
	FLOE_AVRO_MAP,
	FLOE_AVRO_UNION,
	FLOE_AVRO_FIXED,
};

/* A parsed schema node; lives as long as the reader that parsed it. */
struct floe_avro_schema;
enum floe_avro_type floe_avro_schema_type(const struct floe_avro_schema *s);
/* Full name of a record, enum or fixed; NULL otherwise. */
const char *floe_avro_schema_name(const struct floe_avro_schema *s);
/* Record fields, union branches; 0 otherwise. */
size_t floe_avro_schema_count(const struct floe_avro_schema *s);
/* The i-th field's (record) or branch's (union) schema; the item/value schema of an
 * array/map (i ignored); NULL otherwise. */
const struct floe_avro_schema *floe_avro_schema_at(const struct floe_avro_schema *s, size_t i);
/* The i-th record field's name, and its integer "field-id" attribute (false if none). */
const char *floe_avro_schema_field_name(const struct floe_avro_schema *s, size_t i);
bool floe_avro_schema_field_id(const struct floe_avro_schema *s, size_t i, int32_t *id);
/* Index of the record field called name, or -1. */
long floe_avro_schema_field_index(const struct floe_avro_schema *s, const char *name);

/* A decoded value. Unions are resolved: a value decoded through a union has the type of
 * the chosen branch (FLOE_AVRO_NULL for a null branch). Values live until the reader's
 * next call to floe_avro_reader_next (or its free). All accessors accept NULL. */
struct floe_avro_value;
enum floe_avro_type floe_avro_value_type(const struct floe_avro_value *v);
bool floe_avro_value_is_null(const struct floe_avro_value *v); /* also true for v == NULL */
/* Record field by name (NULL if absent, so optional fields read as null). */
const struct floe_avro_value *floe_avro_value_get(const struct floe_avro_value *v, const char *name);
/* Number of fields (record), items (array) or entries (map); 0 otherwise. */
size_t floe_avro_value_len(const struct floe_avro_value *v);
/* i-th field value (record), item (array) or entry value (map). */
const struct floe_avro_value *floe_avro_value_at(const struct floe_avro_value *v, size_t i);
/* i-th map key (bytes borrowed from the value tree; NUL-terminated). */
const char *floe_avro_value_key_at(const struct floe_avro_value *v, size_t i, size_t *len);
/* Typed reads: 0, or FLOE_EFORMAT when v is not of a matching type. int and long both
 * read as long; float and double as double; string, bytes and fixed as bytes (string
 * and bytes values are NUL-terminated after their length); enum as its index. */
int floe_avro_value_bool(const struct floe_avro_value *v, bool *out);
int floe_avro_value_long(const struct floe_avro_value *v, int64_t *out);
int floe_avro_value_double(const struct floe_avro_value *v, double *out);
int floe_avro_value_bytes(const struct floe_avro_value *v, const uint8_t **p, size_t *len);
int floe_avro_value_enum(const struct floe_avro_value *v, int64_t *index, const char **symbol);

/* ---- Object container reader. ---- */

struct floe_avro_reader_opts {
	size_t max_record_bytes;  /* arena cap for one decoded record; 0 = 16 MiB */
	size_t max_block_bytes;   /* cap on one decompressed block; 0 = 64 MiB */
};

struct floe_avro_reader;
/* Parses the header and the writer schema of the container in data[0..len), which is
 * borrowed and must outlive the reader. opts may be NULL. FLOE_EPARSE/FLOE_EFORMAT for
 * a malformed file, FLOE_EUNSUPPORTED for a codec other than null and deflate; err (may
 * be NULL) then says what, and where in the file when it can. */
int floe_avro_reader_new(struct floe_alloc *a, const uint8_t *data, size_t len,
			 const struct floe_avro_reader_opts *opts, struct floe_avro_reader **out,
			 struct floe_err *err);
/* Header metadata value by key (borrowed), or NULL. */
const uint8_t *floe_avro_reader_meta(const struct floe_avro_reader *r, const char *key, size_t *len);
const struct floe_avro_schema *floe_avro_reader_schema(const struct floe_avro_reader *r);
/* Decodes the next record: returns 1 and *out, 0 at the end of the file, or a negative
 * error, which err (may be NULL) describes: its offset is the byte in the file, or for a
 * record that does not decode the byte in its (decompressed) block, and its message
 * names both. The previous record's values are invalidated. */
int floe_avro_reader_next(struct floe_avro_reader *r, const struct floe_avro_value **out,
			  struct floe_err *err);
/* NULL is a no-op. */
void floe_avro_reader_free(struct floe_avro_reader *r);

#endif
