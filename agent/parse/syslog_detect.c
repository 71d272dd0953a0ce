/* The syslog parser's entry points: format detection (floe_syslog_parse hands a message
 * to syslog5424.c or syslog3164.c) and the failure attributes. */
#include "syslog.h"
#include "syslog_int.h"

#include "agent/parse/fields.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <string.h>

int floe_syslog_parse(const char *p, size_t len, const struct floe_syslog_opts *o,
		      struct floe_syslog_msg *m, struct floe_fields *f)
{
	size_t n = floe_syslog_trim(p, len);
	if (n > 0 && p[0] == '<') {
		int pri;
		size_t end;
		const char *why;
		if (floe_syslog_pri(p, n, &pri, &end, &why) != 0)
			return floe_syslog_fail(m, p, n, why, end);
		if (n - end >= 2 && p[end] == '1' && p[end + 1] == ' ')
			return floe_syslog_parse_5424(p, n, o, m, f);
	}
	return floe_syslog_parse_3164(p, n, o, m, f);
}

static int add_error(struct floe_fields *f, const char *key, const char *why, size_t off)
{
	size_t avail;
	char *dst = floe_fields_scratch(f, &avail);
	int n = snprintf(dst, avail, "%s at byte %zu", why, off);
	if (n < 0 || (size_t)n >= avail) {
		floe_fields_drop(f);
		return FLOE_ELIMIT;
	}
	floe_fields_commit(f, (size_t)n);
	return floe_fields_add(f, key, strlen(key), dst, (size_t)n);
}

int floe_syslog_error_attrs(const struct floe_syslog_msg *m, struct floe_fields *f)
{
	int rc = 0, rc2 = 0;
	if (m->error)
		rc = add_error(f, "syslog.error", m->error, m->error_off);
	if (m->ts_error)
		rc2 = add_error(f, "syslog.ts_error", m->ts_error, m->ts_error_off);
	return rc ? rc : rc2;
}
