/* Web server access logs, scanned byte by byte (no regex): Apache's common log format and
 * the combined format that Apache and nginx share:
 *   common:    client ident user [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.0" 200 2326
 *   combined:  common + ` "referer" "user agent"`
 * Fields are slices of the line (nothing is copied or unescaped: Apache writes `\"` and
 * nginx `\x22` for a quote inside a string, and both stay as written), with the names a
 * regex user would give them: client, ident, user, method, path, protocol, status,
 * bytes, referer, user_agent. The request is split into method, path and protocol when it
 * has exactly those three parts (or two, HTTP/0.9: no protocol); otherwise, as for the
 * bytes nginx logs for a TLS handshake sent to a plain port, it is kept whole as
 * `request`. A "-" (the formats' "none") leaves its field out, except in status. The
 * time goes to the record's ts, not to a field. Pure. */
#ifndef FLOE_ACCESS_LOG_H
#define FLOE_ACCESS_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_err;
struct floe_fields;
struct floe_ts_clf_memo;

/* Parses p[0..len) (no NUL needed) as one access-log line, common or (combined == true)
 * combined. Common takes the line up to the bytes field and allows nothing after it but
 * spaces; combined needs referer and user agent and ignores what follows them (nginx
 * configurations often append fields; the message column keeps the whole line).
 * Returns 0 with the fields appended to f and *ts_us set (µs since the epoch, UTC), or
 * FLOE_EPARSE with err (may be NULL) holding the offset of the first byte that does not
 * fit; then f is reset. Borrows p. */
int floe_access_log_parse(const char *p, size_t len, bool combined, struct floe_fields *f,
			  int64_t *ts_us, struct floe_err *err);
/* As floe_access_log_parse, the time read through memo (floe_ts_clf_memo; may be NULL)
 * that the caller keeps from one line to the next: the same result. */
int floe_access_log_parse_memo(const char *p, size_t len, bool combined,
			       struct floe_ts_clf_memo *memo, struct floe_fields *f, int64_t *ts_us,
			       struct floe_err *err);
/* The most fields a line has, and the count of names (ids 0 to 10); the ids of the two
 * whose numbers a line carries. */
#define FLOE_ACCESS_LOG_NFIELDS 11
enum { FLOE_ACCESS_LOG_STATUS = 6, FLOE_ACCESS_LOG_BYTES = 7 };

/* A line's fields for a caller that takes them without a field table: n pairs in the
 * line's order, as floe_access_log_parse adds them (key k's name, its length, the value
 * borrowed from the line, the name's id), and the numbers read while checking them: the
 * status's value, and the byte count's when it has a field of one to nine digits
 * (bytes_ok). */
struct floe_access_log_line {
	size_t n;
	const char *keys[FLOE_ACCESS_LOG_NFIELDS];
	size_t klens[FLOE_ACCESS_LOG_NFIELDS];
	const char *vals[FLOE_ACCESS_LOG_NFIELDS];
	size_t vlens[FLOE_ACCESS_LOG_NFIELDS];
	uint8_t ids[FLOE_ACCESS_LOG_NFIELDS];
	unsigned status, bytes;
	bool bytes_ok;
};

/* As floe_access_log_parse_memo, the fields into *out rather than a field table (n 0
 * when the line does not parse). */
int floe_access_log_parse_line(const char *p, size_t len, bool combined,
			       struct floe_ts_clf_memo *memo, struct floe_access_log_line *out,
			       int64_t *ts_us, struct floe_err *err);
/* Every name a field of floe_access_log_parse can have, NULL-terminated (static): the
 * decoder learns from it, once, which of its per-line lookups can never match. Each
 * field carries its name's index here as its id (floe_fields_add_id). */
const char *const *floe_access_log_field_names(void);

#endif
