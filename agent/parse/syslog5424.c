/* RFC 5424 messages. The header is read strictly (single spaces, the RFC's field
 * limits): a message that claims version 1 and breaks the grammar is kept whole rather
 * than guessed at. Structured data is walked twice, first to check it, then to append
 * its parameters, so that a message that fails leaves the field collector untouched. */
#include "syslog.h"
#include "syslog_int.h"

#include "agent/parse/fields.h"
#include "formats/base/error.h"

#include <string.h>

#define HOSTNAME_MAX 255
#define APPNAME_MAX 48
#define PROCID_MAX 128
#define MSGID_MAX 32
#define SDNAME_MAX 32

static bool printable(char c)
{
	return (unsigned char)c >= 33 && (unsigned char)c <= 126;
}

/* SD-NAME: printable US-ASCII except '=', SP, ']' and '"'. */
static bool sdname_char(char c)
{
	return printable(c) && c != '=' && c != ']' && c != '"';
}

struct cursor {
	const char *p;
	size_t len, i;
	const char *why; /* set on failure, with i at the offending byte */
};

static bool fail(struct cursor *c, const char *why)
{
	c->why = why;
	return false;
}

/* A header field: 1..max printable bytes, then SP. "-" gives a null slice. */
static bool header_field(struct cursor *c, size_t max, const char *name, struct floe_str *out)
{
	size_t start = c->i;
	while (c->i < c->len && printable(c->p[c->i])) {
		if (c->i - start == max)
			return fail(c, name);
		c->i++;
	}
	if (c->i == start || c->i >= c->len || c->p[c->i] != ' ')
		return fail(c, name);
	size_t n = c->i - start;
	c->i++;
	if (n == 1 && c->p[start] == '-') {
		out->p = NULL;
		out->len = 0;
	} else {
		out->p = c->p + start;
		out->len = n;
	}
	return true;
}

/* An SD-NAME at the cursor; returns its length (0 on failure). */
static size_t sd_name(struct cursor *c, const char *why)
{
	size_t start = c->i;
	while (c->i < c->len && sdname_char(c->p[c->i])) {
		if (c->i - start == SDNAME_MAX) {
			fail(c, why);
			return 0;
		}
		c->i++;
	}
	if (c->i == start)
		fail(c, why);
	return c->i - start;
}

/* The value between quotes, from after the opening '"': sets *esc when it holds an
 * escape. Unescaped ']' is accepted inside the quotes (unambiguous, and real senders
 * write it). */
static bool sd_value(struct cursor *c, bool *esc)
{
	*esc = false;
	while (c->i < c->len) {
		char ch = c->p[c->i];
		if (ch == '"') {
			c->i++;
			return true;
		}
		if (ch == '\\' && c->i + 1 < c->len &&
		    (c->p[c->i + 1] == '"' || c->p[c->i + 1] == '\\' || c->p[c->i + 1] == ']')) {
			*esc = true;
			c->i += 2;
			continue;
		}
		c->i++;
	}
	return fail(c, "unterminated SD-PARAM value");
}

/* Unescapes v[0..n) into dst (room for n bytes): \" \\ \] lose their backslash. */
static size_t unescape(const char *v, size_t n, char *dst)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i] == '\\' && i + 1 < n &&
		    (v[i + 1] == '"' || v[i + 1] == '\\' || v[i + 1] == ']'))
			i++;
		dst[o++] = v[i];
	}
	return o;
}

/* Appends SDID.name = value to f, key (and an unescaped value) in its arena. A pair that
 * does not fit is dropped and counted there. */
static void emit_param(struct floe_fields *f, const char *id, size_t idn, const char *name,
		       size_t nn, const char *v, size_t vn, bool esc)
{
	size_t klen = idn + 1 + nn, need = klen + (esc ? vn : 0), avail;
	char *dst = floe_fields_scratch(f, &avail);
	if (need > avail) {
		floe_fields_drop(f);
		return;
	}
	memcpy(dst, id, idn);
	dst[idn] = '.';
	memcpy(dst + idn + 1, name, nn);
	const char *val = v;
	if (esc) {
		val = dst + klen;
		vn = unescape(v, vn, dst + klen);
	}
	floe_fields_commit(f, klen + (esc ? vn : 0));
	(void)floe_fields_add(f, dst, klen, val, vn);
}

/* One SD-ELEMENT from its '['. With f NULL it only checks; with f it appends (and,
 * having been checked, cannot fail). */
static bool sd_element(struct cursor *c, struct floe_fields *f)
{
	c->i++;
	const char *id = c->p + c->i;
	size_t idn = sd_name(c, "invalid SD-ID");
	if (!idn)
		return false;
	bool params = false;
	for (;;) {
		if (c->i >= c->len)
			return fail(c, "unterminated SD-ELEMENT");
		if (c->p[c->i] == ']') {
			c->i++;
			break;
		}
		if (c->p[c->i] != ' ')
			return fail(c, "expected SP or ']' in SD-ELEMENT");
		c->i++;
		const char *name = c->p + c->i;
		size_t nn = sd_name(c, "invalid PARAM-NAME");
		if (!nn)
			return false;
		if (c->i >= c->len || c->p[c->i] != '=')
			return fail(c, "expected '=' after PARAM-NAME");
		c->i++;
		if (c->i >= c->len || c->p[c->i] != '"')
			return fail(c, "expected '\"' before PARAM-VALUE");
		c->i++;
		size_t vstart = c->i;
		bool esc;
		if (!sd_value(c, &esc))
			return false;
		if (f)
			emit_param(f, id, idn, name, nn, c->p + vstart, c->i - 1 - vstart, esc);
		params = true;
	}
	/* An element without parameters still says something (a flag such as
	 * [origin]): it becomes its SD-ID with an empty value. */
	if (f && !params)
		(void)floe_fields_add(f, id, idn, id + idn, 0);
	return true;
}

/* STRUCTURED-DATA at the cursor: "-" or SD-ELEMENTs, then the end or SP. */
static bool structured_data(struct cursor *c, struct floe_fields *f)
{
	if (c->i >= c->len)
		return fail(c, "missing STRUCTURED-DATA");
	if (c->p[c->i] == '-') {
		c->i++;
	} else if (c->p[c->i] == '[') {
		while (c->i < c->len && c->p[c->i] == '[')
			if (!sd_element(c, f))
				return false;
	} else {
		return fail(c, "invalid STRUCTURED-DATA");
	}
	if (c->i < c->len && c->p[c->i] != ' ')
		return fail(c, "expected SP after STRUCTURED-DATA");
	return true;
}

/* TIMESTAMP: "-" or RFC 3339. A bad timestamp fails this field only. */
static bool timestamp(struct cursor *c, struct floe_syslog_msg *m)
{
	size_t start = c->i;
	while (c->i < c->len && printable(c->p[c->i]))
		c->i++;
	if (c->i == start || c->i >= c->len || c->p[c->i] != ' ')
		return fail(c, "invalid TIMESTAMP");
	size_t n = c->i - start;
	c->i++;
	if (n == 1 && c->p[start] == '-')
		return true;
	size_t off;
	int rc = floe_syslog_ts_rfc3339(c->p + start, n, NULL, &m->ts_us, &off);
	if (rc == 0) {
		m->has_ts = true;
	} else {
		m->ts_error = rc == FLOE_EFORMAT ? "TIMESTAMP out of range" : "invalid TIMESTAMP";
		m->ts_error_off = start + off;
	}
	return true;
}

static bool header(struct cursor *c, struct floe_syslog_msg *m)
{
	if (c->i >= c->len || c->p[c->i] != '1')
		return fail(c, "unsupported VERSION");
	c->i++;
	if (c->i >= c->len || c->p[c->i] != ' ')
		return fail(c, "expected SP after VERSION");
	c->i++;
	return timestamp(c, m) && header_field(c, HOSTNAME_MAX, "invalid HOSTNAME", &m->host) &&
	       header_field(c, APPNAME_MAX, "invalid APP-NAME", &m->app) &&
	       header_field(c, PROCID_MAX, "invalid PROCID", &m->proc_id) &&
	       header_field(c, MSGID_MAX, "invalid MSGID", &m->msg_id);
}

int floe_syslog_parse_5424(const char *p, size_t len, const struct floe_syslog_opts *o,
			   struct floe_syslog_msg *m, struct floe_fields *f)
{
	len = floe_syslog_trim(p, len);
	floe_syslog_init(m, p, len);
	int pri;
	size_t end;
	const char *why;
	if (floe_syslog_pri(p, len, &pri, &end, &why) != 0)
		return floe_syslog_fail(m, p, len, why, end);
	struct cursor c = {.p = p, .len = len, .i = end};
	if (!header(&c, m))
		return floe_syslog_fail(m, p, len, c.why, c.i);
	size_t sd = c.i;
	if (!structured_data(&c, NULL))
		return floe_syslog_fail(m, p, len, c.why, c.i);
	if (f) {
		struct cursor again = {.p = p, .len = len, .i = sd};
		(void)structured_data(&again, f);
	}
	m->format = FLOE_SYSLOG_5424;
	floe_syslog_set_pri(m, pri);
	size_t i = c.i < len ? c.i + 1 : len;
	/* MSG may start with a UTF-8 BOM, which only says "this is UTF-8". */
	if (len - i >= 3 && memcmp(p + i, "\xEF\xBB\xBF", 3) == 0)
		i += 3;
	m->message.p = i < len ? p + i : "";
	m->message.len = len - i;
	return 0;
}
