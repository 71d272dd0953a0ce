/* syslog_file: the RFC 3164 parser's result as fields. */
#include "syslog_file.h"

#include "fields.h"
#include "syslog.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <string.h>

/* The RFC 3164 parser takes a tag of [A-Za-z0-9._/-] only; files also hold tags such as
 * "sshd(pam_unix)[19939]:" that rsyslog wrote as it got them. Here a tag is any word of
 * up to 48 bytes that ends in ':' (after an optional "[pid]"), the message after it. */
static bool loose_tag(struct floe_syslog_msg *m)
{
	const char *t = m->message.p;
	size_t n = m->message.len, w = 0;
	while (w < n && w < 49 && t[w] != ' ')
		w++;
	if (w < 2 || w > 49 || t[w - 1] != ':')
		return false;
	size_t app_end = w - 1;
	if (t[w - 2] == ']') {
		const char *open = memchr(t, '[', w - 2);
		if (!open || open == t)
			return false;
		app_end = (size_t)(open - t);
		m->proc_id = (struct floe_str){open + 1, w - 2 - app_end - 1};
	}
	if (app_end == 0)
		return false;
	m->app = (struct floe_str){t, app_end};
	size_t skip = w < n ? w + 1 : w;
	m->message = (struct floe_str){t + skip, n - skip};
	return true;
}

int floe_syslog_file_parse(const char *p, size_t len, int64_t received_us, int64_t hint_us,
			   int32_t zone_off_s, const struct floe_zone_fn *zone,
			   struct floe_fields *f, int64_t *ts_us, struct floe_str *pid,
			   struct floe_err *err)
{
	struct floe_syslog_opts o = {
	    .received_us = received_us, .hint_us = hint_us, .zone_off_s = zone_off_s, .zone = zone};
	struct floe_syslog_msg m;
	/* A file line carries no PRI: one that starts with '<' is not of this format. */
	if (len && p[0] == '<')
		goto bad_start;
	if (floe_syslog_parse_3164(p, len, &o, &m, NULL) != 0 || m.format != FLOE_SYSLOG_3164)
		goto bad_start;
	if (!m.has_ts) {
		floe_fields_reset(f);
		return floe_err_at(err, FLOE_EPARSE, m.ts_error_off,
				   "syslog_file: %s at offset %zu",
				   m.ts_error ? m.ts_error : "no timestamp", m.ts_error_off);
	}
	if (!m.app.p && !loose_tag(&m)) {
		/* An empty message may be a static "" rather than the end of the line. */
		size_t at = m.message.len ? (size_t)(m.message.p - p) : len;
		floe_fields_reset(f);
		return floe_err_at(err, FLOE_EPARSE, at, "syslog_file: no tag at offset %zu", at);
	}
	*ts_us = m.ts_us;
	*pid = m.proc_id;
	if (m.host.p)
		floe_fields_add(f, "host", 4, m.host.p, m.host.len);
	floe_fields_add(f, "app", 3, m.app.p, m.app.len);
	if (m.proc_id.p)
		floe_fields_add(f, "pid", 3, m.proc_id.p, m.proc_id.len);
	/* An empty message stays a slice of the line (its end), as every field is. */
	floe_fields_add(f, "msg", 3, m.message.len ? m.message.p : p + len, m.message.len);
	return 0;
bad_start:
	floe_fields_reset(f);
	return floe_err_at(err, FLOE_EPARSE, 0,
			   "syslog_file: no timestamp at the start of the line");
}
