/* Decoding a line into a record's structured parts, per input: the configured parser
 * (json, logfmt, regex, access logs, syslog_file) fills attrs (the built-in formats set ts
 * too); the timestamp option sets ts from the message's start or from a parsed field; a
 * level field sets severity. The message stays the line as read, so nothing is lost when
 * a line does not parse (that is counted instead). Per line it allocates nothing: the
 * decoder owns a fixed field table that the record borrows until the next call. */
#ifndef FLOE_DECODE_H
#define FLOE_DECODE_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_config_input;
struct floe_record;
struct floe_colplan;

struct floe_decode_stats {
	uint64_t parse_failures; /* lines the parser rejected or the pattern did not match */
	uint64_t ts_failures;    /* lines whose timestamp was absent or did not parse */
	uint64_t fields_dropped; /* fields beyond the table's capacity */
};

struct floe_decoder;

/* Makes the decoder of input in (borrowed; it must outlive the decoder): 0 and *out
 * (owned), or an error with err (may be NULL) saying why when the input's options cannot
 * be compiled (*out untouched). */
int floe_decoder_new(struct floe_alloc *a, const struct floe_config_input *in,
		     struct floe_decoder **out, struct floe_err *err);
void floe_decoder_free(struct floe_decoder *d);
/* Names the input in d's log lines ("input 3"; copied, at most 31 bytes). */
void floe_decoder_set_name(struct floe_decoder *d, const char *name);
/* Decodes rec->message. rec->ts must hold the receive time, which stays when no
 * timestamp is configured or found. rec's attrs point into d until the next call. */
void floe_decoder_apply(struct floe_decoder *d, struct floe_record *rec);
/* Typed columns (plan borrowed: it outlives d; NULL or unplanned: none, every field stays
 * in attrs). Each line, a field a column takes is converted straight from the parsed
 * bytes into rec->typed and leaves attrs; a value that does not convert is null there,
 * counted for its column (floe_decoder_conv_failures) and kept in attrs as text. For a
 * parser with fixed field names (access logs, regex) the columns each field feeds are
 * resolved here, once: a plan whose columns change must be set again. */
void floe_decoder_set_columns(struct floe_decoder *d, const struct floe_colplan *plan);
/* Values that did not convert, per column of the plan (n of them; NULL when none). */
const uint64_t *floe_decoder_conv_failures(const struct floe_decoder *d, size_t *n);
void floe_decoder_get_stats(const struct floe_decoder *d, struct floe_decode_stats *out);

#endif
