/* Sizes ("64MiB") and durations ("60s") as written in the configuration: parsing from
 * (ptr, len) with overflow checks, and formatting back in the largest exact unit so that
 * a dumped configuration parses to the same values. */
#ifndef FLOE_UNITS_H
#define FLOE_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* Longest text floe_units_format_* writes, NUL included. */
#define FLOE_UNITS_FMT_MAX 32

/* Parses a size: a decimal integer, optionally followed (with or without one space) by
 * B, K, KiB, M, MiB, G, GiB or T, TiB; every multiple is 1024-based. A plain integer is a
 * byte count. Returns 0, FLOE_EPARSE on bad syntax or an unknown unit (KB, MB and GB are
 * refused on purpose: they would be ambiguous), FLOE_ELIMIT when the value does not fit
 * in 64 bits. Borrows s; s need not be NUL-terminated. */
int floe_units_parse_size(const char *s, size_t len, uint64_t *out);

/* Parses a duration into milliseconds: a decimal integer followed (with or without one
 * space) by ms, s, m, h or d (exactly 24 hours). The unit is required: a bare "60" is
 * FLOE_EPARSE, because readers disagree on whether it means seconds or milliseconds.
 * FLOE_ELIMIT on overflow. */
int floe_units_parse_duration_ms(const char *s, size_t len, uint64_t *out);

/* Writes v in the largest unit that divides it exactly ("64MiB", "1000B", "0B") into buf
 * (FLOE_UNITS_FMT_MAX bytes). Returns buf. */
char *floe_units_format_size(uint64_t v, char *buf);
/* Writes ms in the largest unit that divides it exactly ("60s" is written "1m", "24h"
 * "1d"; "1500ms"; "0ms"). Returns buf. */
char *floe_units_format_duration_ms(uint64_t ms, char *buf);

#endif
