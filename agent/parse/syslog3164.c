/* RFC 3164 (BSD syslog) as senders really write it. Each part of the header is optional
 * and recognised by its shape, the way rsyslog and syslog-ng read it: nothing here
 * fails except a PRI that is present and invalid. What is not recognised stays in the
 * message, so no byte is lost to a wrong guess, only left unsplit. */
#include "syslog.h"
#include "syslog_int.h"

#include "agent/parse/fields.h"
#include "formats/base/error.h"

#include <string.h>

#define TAG_MAX 48
#define PID_MAX 128
#define HOST_MAX 255
#define SEQ_MAX 10
#define MNEMONIC_MAX 64

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

static bool isalnum_ascii(char c)
{
	return isdig(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* RFC 3164 says alphanumerics; real tags have '-', '.', '_' and '/' (postfix/smtpd). */
static bool tag_char(char c)
{
	return isalnum_ascii(c) || c == '.' || c == '_' || c == '/' || c == '-';
}

/* Names, IPv4 and IPv6 addresses. */
static bool host_char(char c)
{
	return isalnum_ascii(c) || c == '.' || c == '_' || c == '-' || c == ':';
}

static struct floe_str slice(const char *p, size_t a, size_t b)
{
	struct floe_str s = {p + a, b - a};
	return s;
}

/* The end of the run of non-SP bytes at i. */
static size_t word_end(const char *p, size_t len, size_t i)
{
	while (i < len && p[i] != ' ')
		i++;
	return i;
}

static size_t skip_sp(const char *p, size_t len, size_t i)
{
	while (i < len && p[i] == ' ')
		i++;
	return i;
}

/* A HOSTNAME at i: host characters up to a SP, not ending in ':' (that is a TAG). */
static bool host_at(const char *p, size_t len, size_t i, size_t *end)
{
	size_t e = word_end(p, len, i);
	if (e == i || e == len || e - i > HOST_MAX || p[e - 1] == ':')
		return false;
	for (size_t k = i; k < e; k++)
		if (!host_char(p[k]))
			return false;
	*end = e;
	return true;
}

/* TAG[PID]: at i. With loose (a timestamp was found, so this is a header), a TAG ended by
 * SP alone is taken as rsyslog takes it. On success sets app (and proc_id) and returns
 * the offset of the message; otherwise returns i. */
static size_t tag_at(const char *p, size_t len, size_t i, bool loose, struct floe_syslog_msg *m)
{
	size_t e = i;
	while (e < len && e - i <= TAG_MAX && tag_char(p[e]))
		e++;
	if (e == i || e - i > TAG_MAX || e == len)
		return i;
	size_t after = e;
	struct floe_str pid = {NULL, 0};
	if (p[e] == '[') {
		size_t r = e + 1;
		while (r < len && r - e <= PID_MAX && p[r] != ']' && p[r] != ' ')
			r++;
		if (r >= len || p[r] != ']' || r == e + 1)
			return i;
		pid = slice(p, e + 1, r);
		after = r + 1;
	}
	if (after < len && p[after] == ':') {
		after++;
	} else if (!(loose && after < len && p[after] == ' ')) {
		return i;
	}
	m->app = slice(p, i, e);
	m->proc_id = pid;
	return after < len && p[after] == ' ' ? after + 1 : after;
}

/* `%FACILITY-SEVERITY-MNEMONIC:` at the start of a Cisco message gives msg_id. */
static void mnemonic(const char *p, size_t len, size_t i, struct floe_syslog_msg *m)
{
	if (i >= len || p[i] != '%')
		return;
	size_t e = i + 1;
	bool dash = false;
	while (e < len && e - i <= MNEMONIC_MAX &&
	       (isalnum_ascii(p[e]) || p[e] == '_' || p[e] == '-')) {
		dash |= p[e] == '-';
		e++;
	}
	if (e < len && p[e] == ':' && dash && e - i > 3)
		m->msg_id = slice(p, i + 1, e);
}

/* Cisco's `SEQ: ` (and `SEQ: HOST: `) after the PRI; returns the offset after them. */
static size_t cisco_seq(const char *p, size_t len, size_t i, struct floe_syslog_msg *m,
			struct floe_fields *f)
{
	size_t e = i;
	while (e < len && e - i < SEQ_MAX && isdig(p[e]))
		e++;
	if (e == i || len - e < 2 || p[e] != ':' || p[e + 1] != ' ')
		return i;
	if (f)
		(void)floe_fields_add(f, "cisco.seq", 9, p + i, e - i);
	i = e + 2;
	/* `logging origin-id hostname` puts the name next, ended by ": ". */
	e = i;
	while (e < len && e - i < HOST_MAX && host_char(p[e]) && p[e] != ':')
		e++;
	if (e > i && len - e >= 2 && p[e] == ':' && p[e + 1] == ' ' && !isdig(p[i])) {
		m->host = slice(p, i, e);
		i = e + 2;
	}
	return i;
}

/* A Cisco zone name after the time (`00:00:00.123 UTC:`): UTC and GMT are honoured,
 * other names are not known offsets and leave the configured zone. */
static size_t cisco_zone(const char *p, size_t len, size_t i, int32_t *zone)
{
	if (i >= len || p[i] != ' ')
		return i;
	size_t e = i + 1;
	while (e < len && e - i <= 6 && p[e] >= 'A' && p[e] <= 'Z')
		e++;
	if (e - i < 2 || e - i > 6 || e >= len || p[e] != ':')
		return i;
	if ((e - i == 4 && (memcmp(p + i + 1, "UTC", 3) == 0 || memcmp(p + i + 1, "GMT", 3) == 0)))
		*zone = 0;
	return e;
}

/* A timestamp at i, BSD or RFC 3339; sets has_ts/ts_us or ts_error. Returns the offset
 * after it, or i when there is none. */
static size_t timestamp_at(const char *p, size_t len, size_t i, const struct floe_syslog_opts *o,
			   struct floe_syslog_msg *m)
{
	struct floe_syslog_bsd t;
	size_t n = floe_syslog_bsd_scan(p + i, len - i, &t);
	const char *why = NULL;
	if (n) {
		/* A Cisco zone of UTC or GMT after the time overrides the zone option. */
		int32_t zone = INT32_MIN;
		size_t e = cisco_zone(p, len, i + n, &zone);
		bool utc = zone == 0;
		if (floe_syslog_bsd_time(&t, o, utc ? 0 : o->zone_off_s, utc ? NULL : o->zone,
					 &m->ts_us, &why) == 0) {
			m->has_ts = true;
		} else {
			m->ts_error = why;
			m->ts_error_off = i;
		}
		return e;
	}
	/* RFC 3339 (rsyslog's high-precision format), recognised only when it is one:
	 * "2024-01-02 12:00:00 text" is a plain line, not a broken timestamp. */
	if (len - i < 5 || !isdig(p[i]) || !isdig(p[i + 3]) || p[i + 4] != '-')
		return i;
	size_t e = word_end(p, len, i), off;
	int rc = floe_syslog_ts_rfc3339_in(p + i, e - i, o, &m->ts_us, &off);
	if (rc == FLOE_EPARSE)
		return i;
	if (rc == 0) {
		m->has_ts = true;
	} else {
		m->ts_error = "TIMESTAMP out of range";
		m->ts_error_off = i + off;
	}
	return e;
}

/* After a timestamp: `: ` (Cisco) or SP, then HOSTNAME and TAG. Returns the offset of
 * the message. */
static size_t after_timestamp(const char *p, size_t len, size_t i, const struct floe_syslog_opts *o,
			      struct floe_syslog_msg *m)
{
	if (i < len && p[i] == ':') {
		i++;
		return i < len && p[i] == ' ' ? i + 1 : i;
	}
	i = skip_sp(p, len, i);
	size_t e;
	if (!o->no_hostname && !m->host.p && host_at(p, len, i, &e)) {
		m->host = slice(p, i, e);
		i = skip_sp(p, len, e);
	}
	size_t msg = tag_at(p, len, i, true, m);
	/* `host : msg` (Cisco ASA with a name): an empty TAG. */
	if (msg == i && len - i >= 2 && p[i] == ':' && p[i + 1] == ' ')
		msg = i + 2;
	return msg;
}

int floe_syslog_parse_3164(const char *p, size_t len, const struct floe_syslog_opts *o,
			   struct floe_syslog_msg *m, struct floe_fields *f)
{
	len = floe_syslog_trim(p, len);
	floe_syslog_init(m, p, len);
	size_t i = 0;
	bool has_pri = false;
	if (len > 0 && p[0] == '<') {
		int pri;
		const char *why;
		if (floe_syslog_pri(p, len, &pri, &i, &why) != 0)
			return floe_syslog_fail(m, p, len, why, i);
		floe_syslog_set_pri(m, pri);
		has_pri = true;
		i = cisco_seq(p, len, i, m, f);
	}
	/* Cisco marks a time from an unsynchronised clock with '*', a lost sync with '.'. */
	size_t ts = i;
	if (i < len && (p[i] == '*' || p[i] == '.'))
		ts = i + 1;
	size_t e = timestamp_at(p, len, ts, o, m);
	if (e == ts) {
		if (!has_pri) /* no PRI, no timestamp: a line, not syslog */
			return 0;
		i = tag_at(p, len, i, false, m);
	} else {
		i = after_timestamp(p, len, e, o, m);
	}
	m->format = FLOE_SYSLOG_3164;
	if (!m->app.p)
		mnemonic(p, len, i, m);
	m->message.p = i < len ? p + i : "";
	m->message.len = len - i;
	return 0;
}
