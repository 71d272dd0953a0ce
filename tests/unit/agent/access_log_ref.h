/* The access-log scanner as it was before its fast paths (f3ff193): memchr for every
 * field's end, the time's ']' found by a search, the request split by three memchr, and
 * the pairs given to the field table by floe_fields_add_ids (the general way). The unit
 * test runs it and agent/parse/access_log.c over the same lines: both must give the same
 * result, offset, time and pairs. Test code only. */
#ifndef FLOE_TEST_ACCESS_LOG_REF_H
#define FLOE_TEST_ACCESS_LOG_REF_H

#include "agent/parse/access_log.h"
#include "agent/parse/fields.h"
#include "agent/parse/timestamp.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <string.h>

struct ref_scan {
	const char *p;
	size_t len, at;
	const char *what; /* the field being read, for the error */
};

static int ref_fail(struct ref_scan *s, struct floe_err *err)
{
	return floe_err_at(err, FLOE_EPARSE, s->at, "access log: bad %s at offset %zu", s->what,
			   s->at);
}

/* A run of bytes other than space up to the next space or the end; none is an error. */
static bool ref_token(struct ref_scan *s, const char **v, size_t *vl)
{
	size_t b = s->at;
	const char *sp = memchr(s->p + b, ' ', s->len - b);
	s->at = sp ? (size_t)(sp - s->p) : s->len;
	*v = s->p + b;
	*vl = s->at - b;
	return *vl > 0;
}

static bool ref_space(struct ref_scan *s)
{
	if (s->at >= s->len || s->p[s->at] != ' ')
		return false;
	s->at++;
	return true;
}

/* A "..." string; a backslash keeps the byte after it inside (Apache's \" and \\). The
 * value is the bytes between the quotes, as written. */
static bool ref_quoted(struct ref_scan *s, const char **v, size_t *vl)
{
	if (s->at >= s->len || s->p[s->at] != '"')
		return false;
	size_t b = ++s->at;
	/* memchr finds the next quote, a word at a time. A backslash escapes the byte after
	 * it, so pairs start afresh after any other byte: the quote is escaped exactly when
	 * the run of backslashes just before it (within the string) is odd. Most values
	 * have none, and then only the byte before the quote is looked at. */
	for (;;) {
		const char *q = memchr(s->p + s->at, '"', s->len - s->at);
		if (!q) {
			s->at = s->len; /* an unclosed string is reported at the line's end */
			return false;
		}
		size_t end = (size_t)(q - s->p), run = 0;
		while (end - run > b && s->p[end - run - 1] == '\\')
			run++;
		if (run % 2 == 0) {
			s->at = end;
			break;
		}
		s->at = end + 1;
	}
	*v = s->p + b;
	*vl = s->at - b;
	s->at++;
	return true;
}

static bool ref_digits(const char *p, size_t n, unsigned *out)
{
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		if (p[i] < '0' || p[i] > '9')
			return false;
		v = v * 10 + (unsigned)(p[i] - '0');
	}
	*out = v;
	return n > 0;
}

/* The fields, in the order of floe_access_log_field_names(). */
enum { CLIENT, IDENT, USER, METHOD, PATH, PROTOCOL, STATUS, BYTES, REFERER, USER_AGENT, REQUEST };
static const char *const ref_names[] = {"client",	"ident",      "user",	 "method",
				    "path",	"protocol",   "status",	 "bytes",
				    "referer",	"user_agent", "request", NULL};
/* Their lengths, so that no line measures them. */
static const unsigned char ref_lens[] = {6, 5, 4, 6, 4, 8, 6, 5, 7, 10, 7};

/* A line's pairs, gathered while it is read and given to the fields in one call. */
struct ref_pairs {
	size_t n;
	uint8_t ids[REQUEST + 1];
	const char *vals[REQUEST + 1];
	size_t vlens[REQUEST + 1];
};

/* Field id with value v[0..vl), the value borrowed. */
static inline void ref_put(struct ref_pairs *f, unsigned id, const char *v, size_t vl)
{
	f->ids[f->n] = (uint8_t)id;
	f->vals[f->n] = v;
	f->vlens[f->n] = vl;
	f->n++;
}

/* As put, but a "-" leaves the field out. */
static inline void ref_add(struct ref_pairs *f, unsigned id, const char *v, size_t vl)
{
	if (vl == 1 && v[0] == '-')
		return;
	ref_put(f, id, v, vl);
}

/* "METHOD PATH PROTOCOL" (or "METHOD PATH") into three fields, else the whole request. */
static void ref_request(struct ref_pairs *f, const char *r, size_t n)
{
	const char *sp1 = memchr(r, ' ', n);
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', n - (size_t)(sp1 + 1 - r)) : NULL;
	const char *end = r + n;
	bool ok = sp1 && sp1 > r && sp1 + 1 < (sp2 ? sp2 : end) &&
		  (!sp2 || (sp2 + 1 < end && !memchr(sp2 + 1, ' ', (size_t)(end - sp2 - 1))));
	for (const char *c = r; ok && c < sp1; c++)
		ok = (*c >= 'A' && *c <= 'Z') || *c == '-' || *c == '_';
	if (!ok) {
		ref_add(f, REQUEST, r, n);
		return;
	}
	ref_put(f, METHOD, r, (size_t)(sp1 - r));
	const char *pe = sp2 ? sp2 : end;
	ref_put(f, PATH, sp1 + 1, (size_t)(pe - sp1 - 1));
	if (sp2)
		ref_put(f, PROTOCOL, sp2 + 1, (size_t)(end - sp2 - 1));
}

static int ref_access_log_parse(const char *p, size_t len, bool combined, struct floe_fields *f,
			  int64_t *ts_us, struct floe_err *err)
{
	struct ref_scan s = {p, len, 0, "client"};
	const char *v[9];
	size_t vl[9];
	/* client ident user [time] "request" status bytes */
	if (!ref_token(&s, &v[0], &vl[0]) || !ref_space(&s))
		goto bad;
	s.what = "ident";
	if (!ref_token(&s, &v[1], &vl[1]) || !ref_space(&s))
		goto bad;
	s.what = "user";
	if (!ref_token(&s, &v[2], &vl[2]) || !ref_space(&s))
		goto bad;
	s.what = "time";
	if (s.at >= len || p[s.at] != '[')
		goto bad;
	const char *close = memchr(p + s.at, ']', len - s.at);
	if (!close || !floe_ts_clf(p + s.at + 1, (size_t)(close - p - s.at - 1), ts_us))
		goto bad;
	s.at = (size_t)(close - p) + 1;
	s.what = "request";
	if (!ref_space(&s) || !ref_quoted(&s, &v[3], &vl[3]) || !ref_space(&s))
		goto bad;
	/* A bad status or byte count is reported at its first byte. */
	s.what = "status";
	size_t from = s.at;
	unsigned number;
	if (!ref_token(&s, &v[4], &vl[4]) || vl[4] != 3 || !ref_digits(v[4], 3, &number))
		goto bad_token;
	s.what = "bytes";
	if (!ref_space(&s))
		goto bad;
	from = s.at;
	if (!ref_token(&s, &v[5], &vl[5]) ||
	    !((vl[5] == 1 && v[5][0] == '-') || (vl[5] <= 20 && ref_digits(v[5], vl[5], &number))))
		goto bad_token;
	if (combined) {
		s.what = "referer";
		if (!ref_space(&s) || !ref_quoted(&s, &v[6], &vl[6]))
			goto bad;
		s.what = "user_agent";
		if (!ref_space(&s) || !ref_quoted(&s, &v[7], &vl[7]))
			goto bad;
	} else {
		s.what = "end of line";
		while (s.at < len && p[s.at] == ' ')
			s.at++;
		if (s.at < len)
			goto bad;
	}
	/* At most one pair of each id: every field but the request's three is added once,
	 * and request() adds either those three or the whole request. */
	struct ref_pairs q;
	q.n = 0;
	ref_add(&q, CLIENT, v[0], vl[0]);
	ref_add(&q, IDENT, v[1], vl[1]);
	ref_add(&q, USER, v[2], vl[2]);
	ref_request(&q, v[3], vl[3]);
	ref_put(&q, STATUS, v[4], vl[4]);
	ref_add(&q, BYTES, v[5], vl[5]);
	if (combined) {
		ref_add(&q, REFERER, v[6], vl[6]);
		ref_add(&q, USER_AGENT, v[7], vl[7]);
	}
	floe_fields_add_ids(f, q.n, q.ids, ref_names, ref_lens, q.vals, q.vlens);
	return 0;
bad_token:
	s.at = from;
bad:
	floe_fields_reset(f);
	return ref_fail(&s, err);
}

#endif
