/* Typed values from text: a parsed field's bytes converted once, straight into the value
 * a typed column writes (no intermediate string). The rules are the column types'
 * contract with users (README "Typed columns"):
 * - boolean: true/false, t/f, yes/no, on/off, 1/0, any case;
 * - int, long: an optional sign and decimal digits, within the type's range;
 * - float, double: a decimal number (sign, digits, fraction, exponent), or nan/inf;
 *   a float keeps the nearest single-precision value;
 * - date: YYYY-MM-DD, a real date;
 * - string: the bytes as they are (valid UTF-8 is the caller's contract);
 * - binary: the bytes as they are;
 * - timestamptz: an RFC 3339 date-time with its offset (Z or +HH:MM), 'T', 't' or a
 *   space between date and time, up to nine fraction digits (the first six kept, never
 *   rounded), as µs since the epoch in UTC; a leap second is the last µs of its minute.
 *   A time without an offset does not convert: its zone would be a guess.
 * No surrounding spaces, no thousands separators, no hex: text that is not exactly one
 * value does not convert. Empty text and "-" (what access logs print for an absent
 * value) are null, not failures. */
#ifndef FLOE_SCHEMA_CONVERT_H
#define FLOE_SCHEMA_CONVERT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_pq_value;

enum floe_col_type {
	FLOE_COL_BOOLEAN,
	FLOE_COL_INT,
	FLOE_COL_LONG,
	FLOE_COL_FLOAT,
	FLOE_COL_DOUBLE,
	FLOE_COL_STRING,
	FLOE_COL_DATE,
	FLOE_COL_BINARY,
	FLOE_COL_TIMESTAMPTZ, /* after the others: saved plans store the number */
	FLOE_COL_NTYPES
};

/* The type named by Iceberg type name name[0..len), or -1. */
int floe_col_type_parse(const char *name, size_t len);
/* The Iceberg name of t (static), or NULL outside the enum. */
const char *floe_col_type_name(enum floe_col_type t);

enum floe_conv {
	FLOE_CONV_OK,	/* *out holds the value */
	FLOE_CONV_NULL, /* empty or "-": *out is null */
	FLOE_CONV_FAIL	/* not a value of the type: *out is null */
};

/* Converts p[0..n) to a value of type t in *out (strings and binaries borrow p; numbers
 * go to out->i or out->d, booleans to out->i as 0/1, dates to out->i as days since
 * 1970-01-01, timestamps to out->i as µs since the epoch). */
enum floe_conv floe_convert(enum floe_col_type t, const char *p, size_t n,
			    struct floe_pq_value *out);

#endif
