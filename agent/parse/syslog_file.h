/* The lines rsyslog and syslog-ng write into /var/log/syslog, /var/log/messages and
 * auth.log in their traditional file format, `Mmm dd hh:mm:ss host tag[pid]: text` (or
 * with an RFC 3339 time, rsyslog's high-precision format), read by the RFC 3164 parser
 * (agent/parse/syslog.h) and mapped onto fields: host, app, pid, msg. The time goes to
 * ts: a BSD time has no year (inferred from the receive time) and no zone (the zone
 * given applies: zone_off_s, or zone when it is not NULL, the system's for zone: local).
 * Pure: zone is a function the caller gives. */
#ifndef FLOE_SYSLOG_FILE_H
#define FLOE_SYSLOG_FILE_H

#include <stddef.h>
#include <stdint.h>

struct floe_err;
struct floe_fields;
struct floe_str;
struct floe_zone_fn;

/* Parses p[0..len) (no NUL needed). Returns 0 with the fields appended to f (slices of
 * p), *ts_us set and *pid the process id (p == NULL when the line has none), or
 * FLOE_EPARSE with err (may be NULL) holding the offset where the line stopped being a
 * syslog file line (no timestamp at its start, an impossible date, no tag); f is then
 * reset. Borrows p. A local time the zone repeats (the hour after a fall back) is read
 * nearer hint_us (the time of the line before it; 0: received_us), a year inferred from
 * received_us. */
int floe_syslog_file_parse(const char *p, size_t len, int64_t received_us, int64_t hint_us,
			   int32_t zone_off_s, const struct floe_zone_fn *zone,
			   struct floe_fields *f, int64_t *ts_us, struct floe_str *pid,
			   struct floe_err *err);

#endif
