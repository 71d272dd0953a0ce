/* The access-log scanner: one pass over the line, each field a slice of it. */
#include "access_log.h"

#include "fields.h"
#include "timestamp.h"
#include "formats/base/error.h"

#include <string.h>

struct scan {
	const char *p;
	size_t len, at;
	const char *what; /* the field being read, for the error */
};

static int fail(struct scan *s, struct floe_err *err)
{
	return floe_err_at(err, FLOE_EPARSE, s->at, "access log: bad %s at offset %zu", s->what,
			   s->at);
}

/* The index of the first space in the 8 bytes at p, or 8 when there is none: the
 * fields read by token() are short (an address, "-", a status code, a size), and
 * memchr costs about 27 instructions of call and set-up whatever the distance (a dozen
 * calls were an eighth of the scan), a byte loop 4 a byte. The test of the bytes at
 * once is exact (no carry crosses from one byte to the next), so the order of the
 * bytes in the word does not matter but for which is first. */
__attribute__((always_inline)) static inline unsigned space_in_word(const char *p)
{
	const uint64_t lo7 = 0x7f7f7f7f7f7f7f7fULL;
	uint64_t w;
	memcpy(&w, p, 8);
	w ^= 0x2020202020202020ULL;
	/* A byte's high bit set in z exactly when that byte of w is 0 (a space). */
	uint64_t z = ~(((w & lo7) + lo7) | w | lo7);
	if (!z)
		return 8;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return (unsigned)__builtin_ctzll(z) / 8;
#else
	return (unsigned)__builtin_clzll(z) / 8;
#endif
}

/* The first space in p[at..len), or len: two words in line (16 bytes), then memchr for a
 * longer run (an IPv6 address, a name, junk); fewer than 8 bytes left a byte at a time. */
__attribute__((always_inline)) static inline size_t space_at(const char *p, size_t len, size_t at)
{
	for (int k = 0; k < 2 && len - at >= 8; k++, at += 8) {
		unsigned i = space_in_word(p + at);
		if (i < 8)
			return at + i;
	}
	if (len - at >= 8) {
		const char *sp = memchr(p + at, ' ', len - at);
		return sp ? (size_t)(sp - p) : len;
	}
	while (at < len && p[at] != ' ')
		at++;
	return at;
}

/* A run of bytes other than space up to the next space or the end; none is an error. */
__attribute__((always_inline)) static inline bool token(struct scan *s, const char **v, size_t *vl)
{
	size_t b = s->at;
	s->at = space_at(s->p, s->len, b);
	*v = s->p + b;
	*vl = s->at - b;
	return *vl > 0;
}

static bool space(struct scan *s)
{
	if (s->at >= s->len || s->p[s->at] != ' ')
		return false;
	s->at++;
	return true;
}

/* A "..." string; a backslash keeps the byte after it inside (Apache's \" and \\). The
 * value is the bytes between the quotes, as written. */
__attribute__((always_inline)) static inline bool quoted(struct scan *s, const char **v, size_t *vl)
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

__attribute__((always_inline)) static inline bool digits(const char *p, size_t n, unsigned *out)
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

/* The fields, in the order of floe_access_log_field_names(): a pair carries its index
 * there as its id. */
enum { CLIENT, IDENT, USER, METHOD, PATH, PROTOCOL, STATUS, BYTES, REFERER, USER_AGENT, REQUEST };
static const char *const names[] = {"client",	"ident",      "user",	 "method",
				    "path",	"protocol",   "status",	 "bytes",
				    "referer",	"user_agent", "request", NULL};
/* Their lengths, so that no line measures them. */
static const unsigned char lens[] = {6, 5, 4, 6, 4, 8, 6, 5, 7, 10, 7};
_Static_assert(sizeof(lens) == FLOE_ACCESS_LOG_NFIELDS, "the line's arrays hold every id");
_Static_assert((int)STATUS == (int)FLOE_ACCESS_LOG_STATUS && (int)BYTES == (int)FLOE_ACCESS_LOG_BYTES,
	       "the ids");
_Static_assert(sizeof(lens) == sizeof(names) / sizeof(names[0]) - 1, "a length per name");
/* Their key classes (FLOE_FIELDS_KEY_CLASS of the length and the first byte), so that no
 * line works them out. A wrong one would hide its field from floe_fields_find, which
 * test_parse_access_log's comparison with the reference scanner looks for (and debug
 * builds assert them in floe_fields_add_distinct). */
static const uint64_t classes[] = {
    FLOE_FIELDS_KEY_CLASS(6, 'c'), FLOE_FIELDS_KEY_CLASS(5, 'i'),  FLOE_FIELDS_KEY_CLASS(4, 'u'),
    FLOE_FIELDS_KEY_CLASS(6, 'm'), FLOE_FIELDS_KEY_CLASS(4, 'p'),  FLOE_FIELDS_KEY_CLASS(8, 'p'),
    FLOE_FIELDS_KEY_CLASS(6, 's'), FLOE_FIELDS_KEY_CLASS(5, 'b'),  FLOE_FIELDS_KEY_CLASS(7, 'r'),
    FLOE_FIELDS_KEY_CLASS(10, 'u'), FLOE_FIELDS_KEY_CLASS(7, 'r'),
};
_Static_assert(sizeof(classes) / sizeof(classes[0]) == sizeof(lens), "a class per name");

const char *const *floe_access_log_field_names(void)
{
	return names;
}

/* A line's pairs, written once the line is read, into the arrays of a
 * floe_access_log_line. Each put's id is a constant, so its key and length are too. */
struct pairs {
	size_t n;
	struct floe_access_log_line *l;
};

/* Field id with value v[0..vl), the value borrowed. */
__attribute__((always_inline)) static inline void put(struct pairs *f, unsigned id, const char *v,
						      size_t vl)
{
	f->l->keys[f->n] = names[id];
	f->l->klens[f->n] = lens[id];
	f->l->vals[f->n] = v;
	f->l->vlens[f->n] = vl;
	f->l->ids[f->n] = (uint8_t)id;
	f->n++;
}

/* As put, but a "-" leaves the field out. */
__attribute__((always_inline)) static inline void add(struct pairs *f, unsigned id, const char *v,
						      size_t vl)
{
	if (vl == 1 && v[0] == '-')
		return;
	put(f, id, v, vl);
}

/* "METHOD PATH PROTOCOL" (or "METHOD PATH") into three fields, else the whole request.
 * The method (capitals, '-' or '_' up to the first space) and the protocol (after the
 * last space) are a few bytes, read in line from either end; one memchr checks that the
 * path between them has no space. */
__attribute__((always_inline)) static inline void request(struct pairs *f, const char *r,
							    size_t n)
{
	size_t m = 0, last = 0;
	while (m < n && ((r[m] >= 'A' && r[m] <= 'Z') || r[m] == '-' || r[m] == '_'))
		m++;
	bool ok = m > 0 && m < n && r[m] == ' ';
	if (ok) {
		/* The last space, r[m] (the first) when there is no other. */
		for (last = n - 1; last > m && r[last] != ' ';)
			last--;
		if (last == m)
			ok = m + 1 < n;
		else
			ok = last + 1 < n && m + 1 < last && !memchr(r + m + 1, ' ', last - m - 1);
	}
	if (!ok) {
		add(f, REQUEST, r, n);
		return;
	}
	put(f, METHOD, r, m);
	if (last == m) {
		put(f, PATH, r + m + 1, n - m - 1);
		return;
	}
	put(f, PATH, r + m + 1, last - m - 1);
	put(f, PROTOCOL, r + last + 1, n - last - 1);
}

int floe_access_log_parse(const char *p, size_t len, bool combined, struct floe_fields *f,
			  int64_t *ts_us, struct floe_err *err)
{
	return floe_access_log_parse_memo(p, len, combined, NULL, f, ts_us, err);
}

/* A line's slices, as the scan reads them: client, ident, user, request, status, bytes,
 * referer, user agent (the last two NULL in the common format); and the values of the
 * status and of a byte count of up to nine digits (bytes_ok), read as they were checked. */
struct slices {
	const char *v[8];
	size_t vl[8];
	unsigned status, bytes;
	bool bytes_ok;
};

/* Reads the line into l and *ts_us: true, or false with s->at where it does not fit. */
__attribute__((always_inline)) static inline bool scan_line(struct scan *s, bool combined,
							    struct floe_ts_clf_memo *memo,
							    struct slices *l, int64_t *ts_us)
{
	const char *p = s->p, **v = l->v;
	size_t len = s->len, *vl = l->vl;
	/* Set only in the combined formats, and read only there: gcc cannot tell once
	 * quoted() is inlined. */
	v[6] = v[7] = NULL;
	vl[6] = vl[7] = 0;
	/* client ident user [time] "request" status bytes */
	if (!token(s, &v[0], &vl[0]) || !space(s))
		return false;
	s->what = "ident";
	if (!token(s, &v[1], &vl[1]) || !space(s))
		return false;
	s->what = "user";
	if (!token(s, &v[2], &vl[2]) || !space(s))
		return false;
	s->what = "time";
	if (s->at >= len || p[s->at] != '[')
		return false;
	/* Apache and nginx write the time in 26 bytes: then its ']' is at a fixed place, and
	 * no byte floe_ts_clf takes is a ']', so that one is the first. Any other shape goes
	 * to the search (and is refused there as before). */
	if (len - s->at >= 28 && p[s->at + 27] == ']' &&
	    (memo ? floe_ts_clf_memo(memo, p + s->at + 1, 26, ts_us)
		  : floe_ts_clf(p + s->at + 1, 26, ts_us))) {
		s->at += 28;
	} else {
		const char *close = memchr(p + s->at, ']', len - s->at);
		if (!close || !floe_ts_clf(p + s->at + 1, (size_t)(close - p - s->at - 1), ts_us))
			return false;
		s->at = (size_t)(close - p) + 1;
	}
	s->what = "request";
	if (!space(s) || !quoted(s, &v[3], &vl[3]) || !space(s))
		return false;
	/* A bad status or byte count is reported at its first byte. */
	s->what = "status";
	size_t from = s->at;
	if (!token(s, &v[4], &vl[4]) || vl[4] != 3 || !digits(v[4], 3, &l->status))
		goto bad_token;
	s->what = "bytes";
	if (!space(s))
		return false;
	from = s->at;
	l->bytes_ok = false;
	l->bytes = 0;
	if (!token(s, &v[5], &vl[5]))
		goto bad_token;
	if (!(vl[5] == 1 && v[5][0] == '-')) {
		if (vl[5] > 20 || !digits(v[5], vl[5], &l->bytes))
			goto bad_token;
		l->bytes_ok = vl[5] <= 9;
	}
	if (combined) {
		s->what = "referer";
		if (!space(s) || !quoted(s, &v[6], &vl[6]))
			return false;
		s->what = "user_agent";
		if (!space(s) || !quoted(s, &v[7], &vl[7]))
			return false;
	} else {
		s->what = "end of line";
		while (s->at < len && p[s->at] == ' ')
			s->at++;
		if (s->at < len)
			return false;
	}
	return true;
bad_token:
	s->at = from;
	return false;
}

/* The line's pairs from its slices, in the line's order (at most one of each id: every
 * field but the request's three is added once, and request() adds either those three
 * or the whole request). */
__attribute__((always_inline)) static inline void put_all(struct pairs *q, const struct slices *l,
							  bool combined)
{
	add(q, CLIENT, l->v[0], l->vl[0]);
	add(q, IDENT, l->v[1], l->vl[1]);
	add(q, USER, l->v[2], l->vl[2]);
	request(q, l->v[3], l->vl[3]);
	put(q, STATUS, l->v[4], l->vl[4]);
	add(q, BYTES, l->v[5], l->vl[5]);
	if (combined) {
		add(q, REFERER, l->v[6], l->vl[6]);
		add(q, USER_AGENT, l->v[7], l->vl[7]);
	}
}

/* The line into q's slots (and l's numbers), or false with s->at where it does not fit.
 * The one copy of the scan, for both ways out (a field table, a caller's arrays): two
 * copies inlined in each made gcc leave the time, the digits and the request out of
 * line in both (about 340 instructions a line). */
__attribute__((always_inline)) static inline bool scan_pairs(struct scan *s, bool combined,
						 struct floe_ts_clf_memo *memo, struct pairs *q,
						 struct slices *l, int64_t *ts_us)
{
	if (!scan_line(s, combined, memo, l, ts_us))
		return false;
	put_all(q, l, combined);
	return true;
}

/* Through floe_access_log_parse_line and a copy into the table: one copy of the scan in
 * the program. A second one inlined here made gcc inline less elsewhere (the regex
 * parser's typed columns took 40 instructions a line more). */
int floe_access_log_parse_memo(const char *p, size_t len, bool combined,
			       struct floe_ts_clf_memo *memo, struct floe_fields *f, int64_t *ts_us,
			       struct floe_err *err)
{
	struct floe_access_log_line l;
	int rc = floe_access_log_parse_line(p, len, combined, memo, &l, ts_us, err);
	if (rc) {
		floe_fields_reset(f);
		return rc;
	}
	floe_fields_add_distinct(f, l.n, l.ids, names, lens, classes, l.vals, l.vlens);
	return 0;
}

int floe_access_log_parse_line(const char *p, size_t len, bool combined,
			       struct floe_ts_clf_memo *memo, struct floe_access_log_line *out,
			       int64_t *ts_us, struct floe_err *err)
{
	struct scan s = {p, len, 0, "client"};
	struct slices l;
	struct pairs q = {0, out};
	if (!scan_pairs(&s, combined, memo, &q, &l, ts_us)) {
		out->n = 0;
		return fail(&s, err);
	}
	out->n = q.n;
	out->status = l.status;
	out->bytes = l.bytes;
	out->bytes_ok = l.bytes_ok;
	return 0;
}
