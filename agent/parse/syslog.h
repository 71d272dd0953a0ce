/* Syslog messages (RFC 5424, RFC 3164 and the variants real senders emit) into the
 * columns of a log record: pure functions over (ptr, len) that fill a small result of
 * slices into the input, plus structured data appended to a field collector. No I/O, no
 * clock (the receive time and the zone of zone-less timestamps are inputs), no
 * allocation per message, never a read past len, no reliance on NUL. */
#ifndef FLOE_SYSLOG_H
#define FLOE_SYSLOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/record.h"

struct floe_zone_fn; /* agent/env/env.h */

struct floe_fields;

/* How a message was read. */
enum floe_syslog_format {
	FLOE_SYSLOG_PLAIN = 0,	 /* no syslog header: the whole input is the message */
	FLOE_SYSLOG_3164 = 1,	 /* BSD syslog and its variants (with or without PRI) */
	FLOE_SYSLOG_5424 = 2,	 /* `<PRI>1 ...` */
	FLOE_SYSLOG_INVALID = 3, /* looked like syslog but broke its grammar (see error) */
};

/* Timestamps of BSD messages carry no year: the year chosen is the latest one that puts
 * the time no further than this into the future of the receive time (clock skew and a
 * mis-set zone), so a Dec 31 message received on Jan 1 belongs to the year before. */
#define FLOE_SYSLOG_FUTURE_SKEW_S (3 * 86400)

/* Inputs besides the bytes. */
struct floe_syslog_opts {
	int64_t received_us; /* receive time, µs since the epoch (year inference) */
	/* A local time the zone repeats (the hour after a fall back) is read nearer this, µs
	 * since the epoch; 0: received_us. A file's previous line's time (a file read a month
	 * late, whose repeated hour is a month before its receive time). */
	int64_t hint_us;
	int32_t zone_off_s; /* seconds east of UTC of timestamps that carry no offset */
	/* Non-NULL: timestamps that carry no offset are in this zone (zone_off_s unused). */
	const struct floe_zone_fn *zone;
	/* The sender never writes a HOSTNAME in BSD messages (a local socket such as
	 * /dev/log): the word after the timestamp is always read as the TAG. */
	bool no_hostname;
};

/* The result. Strings are slices of the input (p == NULL means null); message is never
 * null. The caller maps them one to one onto struct floe_record. */
struct floe_syslog_msg {
	enum floe_syslog_format format;
	bool has_facility, has_severity;
	int32_t facility, severity;
	bool has_ts;
	int64_t ts_us; /* µs since the epoch, UTC */
	struct floe_str host, app, proc_id, msg_id, message;
	/* The whole message failed (format FLOE_SYSLOG_INVALID): a static reason and the byte
	 * offset where the grammar broke; message is then the whole input. NULL otherwise. */
	const char *error;
	size_t error_off;
	/* The timestamp field alone was rejected (Feb 30, hour 24, a malformed RFC 3339
	 * string): has_ts is false, the rest of the message is parsed. NULL otherwise. */
	const char *ts_error;
	size_t ts_error_off;
};

/* Detects the format of p[0..len) and parses it (one message: a datagram or a frame;
 * trailing LF, CR and NUL bytes are not part of it and are ignored):
 *   `<PRI>1 `                         RFC 5424
 *   `<PRI>` then anything else        RFC 3164 and variants (see floe_syslog_parse_3164)
 *   no PRI, a BSD or ISO timestamp    RFC 3164 without PRI (some local sockets)
 *   no PRI otherwise                  FLOE_SYSLOG_PLAIN: the whole input is the message
 * Structured-data parameters are appended to f as `SDID.name` (f may be NULL: they are
 * then checked and dropped). Returns 0, or FLOE_EPARSE when the message broke its
 * grammar (an invalid PRI, a malformed RFC 5424 header or structured data): m is then
 * filled so that the caller keeps it whole (format FLOE_SYSLOG_INVALID, message = the
 * input, facility and severity null, error and error_off set) and f is left as it was.
 * Borrows p (m points into it; f's keys and unescaped values live in its arena), o. */
int floe_syslog_parse(const char *p, size_t len, const struct floe_syslog_opts *o,
		      struct floe_syslog_msg *m, struct floe_fields *f);

/* RFC 5424 only: `<PRI>VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP MSGID SP
 * STRUCTURED-DATA [SP MSG]`, VERSION 1, NILVALUE `-` for any header field, field limits
 * as in the RFC (HOSTNAME 255, APP-NAME 48, PROCID 128, MSGID 32, SD names 32), SD values
 * with the escapes \" \\ \] (any other backslash stays as it is), a BOM at the start of
 * MSG stripped. Returns and fills as floe_syslog_parse. */
int floe_syslog_parse_5424(const char *p, size_t len, const struct floe_syslog_opts *o,
			   struct floe_syslog_msg *m, struct floe_fields *f);

/* RFC 3164 and the variants real senders emit; every part is optional:
 *   [<PRI>] [SEQ: [HOST: ]] [*|.]TIMESTAMP[:] [HOSTNAME] [TAG[[PID]][:]] MSG
 * TIMESTAMP is BSD (`Mmm dd hh:mm:ss`, day space- or zero-padded, optional fraction,
 * optional year before the time as Cisco and ASA write it; the year otherwise inferred)
 * or RFC 3339 (rsyslog's high-precision format; without an offset the zone option
 * applies). SEQ: and a timestamp ending in ':' are Cisco IOS; the sequence goes to f as
 * `cisco.seq`, and a message starting `%FAC-SEV-MNEMONIC:` gives msg_id. HOSTNAME is a
 * word of host characters followed by SP that does not end in ':' and has no '['; TAG
 * is up to 48 of [A-Za-z0-9._/-] followed by `[pid]`, ':' or (after a timestamp only, as
 * rsyslog reads it) SP. Without PRI and without a timestamp the input is PLAIN. Returns
 * FLOE_EPARSE only for an invalid PRI. */
int floe_syslog_parse_3164(const char *p, size_t len, const struct floe_syslog_opts *o,
			   struct floe_syslog_msg *m, struct floe_fields *f);

/* Adds `syslog.error` (when m->error is set) and `syslog.ts_error` (when m->ts_error is
 * set) to f, each "<reason> at byte <offset>", written into f's arena. Returns 0 or
 * FLOE_ELIMIT when f is full (the pair is dropped and counted there). */
int floe_syslog_error_attrs(const struct floe_syslog_msg *m, struct floe_fields *f);

/* Parses an RFC 3339 timestamp s[0..len) exactly (the whole string) with the base layer's
 * parser (formats/base/rfc3339.h): YYYY-MM-DD, 'T' (or 't' or a space), HH:MM:SS, an
 * optional fraction of 1 to 9 digits (kept to the µs, truncated), then 'Z' (or 'z') or
 * ±HH:MM; with zone_off_s non-NULL a missing offset is allowed and *zone_off_s applies.
 * A leap second (60) is the last µs of its minute, as everywhere. Returns 0 with *out_us,
 * FLOE_EPARSE for bad syntax or FLOE_EFORMAT for an out-of-range field (month 13, Feb 30,
 * hour 24), with *err_off (may be NULL) at the offending byte. */
int floe_syslog_ts_rfc3339(const char *s, size_t len, const int32_t *zone_off_s, int64_t *out_us,
			   size_t *err_off);

#endif
