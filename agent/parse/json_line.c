/* Streaming JSON-object-per-line scanner. Members are scanned in place; only strings with
 * escapes and dotted keys are written (into the fields arena). Flattening recurses at most
 * FLOE_JSON_LINE_MAX_DEPTH levels; raw values are skipped by an iterative scanner with a
 * bit stack, so hostile nesting costs neither C stack nor memory. */
#include "json_line.h"

#include "fields.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

struct jp {
	const char *p;
	size_t len, i;
	struct floe_fields *f;
	unsigned max_depth;
	size_t err_off;
	int err;
};

static int fail(struct jp *j, int code)
{
	if (!j->err) {
		j->err = code;
		j->err_off = j->i;
	}
	return code;
}

static void skip_ws(struct jp *j)
{
	while (j->i < j->len) {
		char c = j->p[j->i];
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		j->i++;
	}
}

static bool hex4(const char *s, size_t n, size_t at, unsigned *out)
{
	if (n < 4 || at > n - 4)
		return false;
	unsigned v = 0;
	for (size_t k = 0; k < 4; k++) {
		int h = floe_hex_digit(s[at + k]);
		if (h < 0)
			return false;
		v = v << 4 | (unsigned)h;
	}
	*out = v;
	return true;
}

/* Bytes that end a run of plain string bytes: '"', '\\' and the controls below 0x20. */
static const uint8_t str_special[256] = {
    [0 ... 0x1f] = 1,
    ['"'] = 1,
    ['\\'] = 1,
};

/* Scans a string at j->i (a '"'); leaves j->i after the closing quote. body and blen give the
 * raw body, esc whether it holds a backslash. Validates escapes and control bytes. */
static int scan_string(struct jp *j, size_t *body, size_t *blen, bool *esc)
{
	if (j->i >= j->len || j->p[j->i] != '"')
		return fail(j, FLOE_EPARSE);
	size_t start = ++j->i;
	*esc = false;
	while (j->i < j->len) {
		unsigned char c = (unsigned char)j->p[j->i];
		if (c == '"') {
			*body = start;
			*blen = j->i - start;
			j->i++;
			return 0;
		}
		if (c < 0x20)
			return fail(j, FLOE_EPARSE);
		if (c == '\\') {
			*esc = true;
			if (j->i + 1 >= j->len) {
				j->i++;
				return fail(j, FLOE_EPARSE);
			}
			char e = j->p[j->i + 1];
			if (e == 'u') {
				unsigned v;
				if (!hex4(j->p, j->len, j->i + 2, &v))
					return fail(j, FLOE_EPARSE);
				j->i += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", e) || e == 0)
				return fail(j, FLOE_EPARSE);
			j->i += 2;
			continue;
		}
		/* Fast path over plain bytes up to the next quote, backslash or control. */
		j->i++;
		while (j->i < j->len && !str_special[(unsigned char)j->p[j->i]])
			j->i++;
	}
	return fail(j, FLOE_EPARSE);
}

static size_t put_utf8(char *d, unsigned cp)
{
	if (cp < 0x80) {
		d[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		d[0] = (char)(0xc0 | cp >> 6);
		d[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		d[0] = (char)(0xe0 | cp >> 12);
		d[1] = (char)(0x80 | (cp >> 6 & 0x3f));
		d[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	d[0] = (char)(0xf0 | cp >> 18);
	d[1] = (char)(0x80 | (cp >> 12 & 0x3f));
	d[2] = (char)(0x80 | (cp >> 6 & 0x3f));
	d[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

int floe_json_unescape(const char *s, size_t n, char *dst, size_t cap, size_t *out_len)
{
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		char c = s[i];
		if (c != '\\') {
			/* Copy the run up to the next backslash in one go. */
			const char *bs = memchr(s + i, '\\', n - i);
			size_t run = bs ? (size_t)(bs - (s + i)) : n - i;
			if (run > cap - o)
				return FLOE_ELIMIT;
			memcpy(dst + o, s + i, run);
			o += run;
			i += run;
			continue;
		}
		if (i + 1 >= n)
			return FLOE_EPARSE;
		char e = s[i + 1];
		char out;
		switch (e) {
		case '"':
			out = '"';
			break;
		case '\\':
			out = '\\';
			break;
		case '/':
			out = '/';
			break;
		case 'b':
			out = '\b';
			break;
		case 'f':
			out = '\f';
			break;
		case 'n':
			out = '\n';
			break;
		case 'r':
			out = '\r';
			break;
		case 't':
			out = '\t';
			break;
		case 'u': {
			unsigned cp, lo;
			if (!hex4(s, n, i + 2, &cp))
				return FLOE_EPARSE;
			i += 6;
			if (cp >= 0xd800 && cp <= 0xdbff && i + 1 < n && s[i] == '\\' &&
			    s[i + 1] == 'u' && hex4(s, n, i + 2, &lo) && lo >= 0xdc00 &&
			    lo <= 0xdfff) {
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
				i += 6;
			} else if (cp >= 0xd800 && cp <= 0xdfff) {
				cp = 0xfffd; /* lone surrogate: not encodable as UTF-8 */
			}
			char tmp[4];
			size_t k = put_utf8(tmp, cp);
			if (k > cap - o)
				return FLOE_ELIMIT;
			memcpy(dst + o, tmp, k);
			o += k;
			continue;
		}
		default:
			return FLOE_EPARSE;
		}
		if (o == cap)
			return FLOE_ELIMIT;
		dst[o++] = out;
		i += 2;
	}
	*out_len = o;
	return 0;
}

static int scan_number(struct jp *j)
{
	size_t i = j->i;
	const char *p = j->p;
	size_t n = j->len;
	int rc = FLOE_EPARSE;
	if (i < n && p[i] == '-')
		i++;
	if (i >= n)
		goto out;
	if (p[i] == '0') {
		i++;
	} else if (p[i] >= '1' && p[i] <= '9') {
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	} else {
		goto out;
	}
	if (i < n && p[i] == '.') {
		i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			goto out;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (i >= n || p[i] < '0' || p[i] > '9')
			goto out;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
	}
	rc = 0;
out:
	j->i = i;
	return rc ? fail(j, rc) : 0;
}

static int scan_literal(struct jp *j, const char *lit, size_t n)
{
	if (j->len - j->i < n || memcmp(j->p + j->i, lit, n) != 0) {
		/* Point at the first byte that differs. */
		size_t k = 0;
		while (j->i + k < j->len && k < n && j->p[j->i + k] == lit[k])
			k++;
		j->i += k;
		return fail(j, FLOE_EPARSE);
	}
	j->i += n;
	return 0;
}

static int scan_scalar(struct jp *j)
{
	if (j->i >= j->len)
		return fail(j, FLOE_EPARSE);
	char c = j->p[j->i];
	size_t b, bl;
	bool esc;
	switch (c) {
	case '"':
		return scan_string(j, &b, &bl, &esc);
	case 't':
		return scan_literal(j, "true", 4);
	case 'f':
		return scan_literal(j, "false", 5);
	case 'n':
		return scan_literal(j, "null", 4);
	default:
		return scan_number(j);
	}
}

/* A member's name (its body, length and whether it has escapes into *body, *blen, *esc)
 * and the colon after it, at j->i: 0, or j's error. */
static int scan_name(struct jp *j, size_t *body, size_t *blen, bool *esc)
{
	if (scan_string(j, body, blen, esc))
		return j->err;
	skip_ws(j);
	if (j->i >= j->len || j->p[j->i] != ':')
		return fail(j, FLOE_EPARSE);
	j->i++;
	return 0;
}

/* Skips any value at j->i, with depth containers already open around it. Iterative: a
 * bit per level records whether the open container is an object. */
static int skip_value(struct jp *j, unsigned depth)
{
	uint8_t stack[FLOE_JSON_LINE_MAX_NEST / 8];
	unsigned level = 0;
	size_t b, bl;
	bool esc;
	for (;;) {
		/* A value is expected here. */
		skip_ws(j);
		if (j->i >= j->len)
			return fail(j, FLOE_EPARSE);
		char c = j->p[j->i];
		if (c == '{' || c == '[') {
			if (depth + level >= FLOE_JSON_LINE_MAX_NEST)
				return fail(j, FLOE_ELIMIT);
			bool obj = c == '{';
			if (obj)
				stack[level / 8] |= (uint8_t)(1u << (level % 8));
			else
				stack[level / 8] &= (uint8_t) ~(1u << (level % 8));
			level++;
			j->i++;
			skip_ws(j);
			if (j->i < j->len && j->p[j->i] == (obj ? '}' : ']')) {
				j->i++;
				level--;
			} else if (obj) {
				if (scan_name(j, &b, &bl, &esc))
					return j->err;
				continue;
			} else {
				continue;
			}
		} else if (scan_scalar(j)) {
			return j->err;
		}
		/* After a value: close containers or move to the next element. */
		for (;;) {
			if (level == 0)
				return 0;
			bool obj = stack[(level - 1) / 8] >> ((level - 1) % 8) & 1;
			skip_ws(j);
			if (j->i >= j->len)
				return fail(j, FLOE_EPARSE);
			c = j->p[j->i];
			if (c == (obj ? '}' : ']')) {
				j->i++;
				level--;
				continue;
			}
			if (c != ',')
				return fail(j, FLOE_EPARSE);
			j->i++;
			if (obj) {
				skip_ws(j);
				if (scan_name(j, &b, &bl, &esc))
					return j->err;
			}
			break;
		}
	}
}

/* Makes the stored form of a string body: a slice when it has no escapes, else unescaped
 * into the arena. Returns false (nothing committed) when the arena is full. */
static bool string_value(struct jp *j, size_t body, size_t blen, bool esc, const char **out,
			 size_t *olen)
{
	if (!esc) {
		*out = j->p + body;
		*olen = blen;
		return true;
	}
	size_t avail;
	char *d = floe_fields_scratch(j->f, &avail);
	size_t n;
	if (floe_json_unescape(j->p + body, blen, d, avail, &n))
		return false;
	floe_fields_commit(j->f, n);
	*out = d;
	*olen = n;
	return true;
}

/* Builds prefix "." key (unescaped) in the arena, or the bare key at the top level. */
static bool make_key(struct jp *j, const char *prefix, size_t plen, size_t body, size_t blen,
		     bool esc, const char **out, size_t *olen)
{
	if (!prefix)
		return string_value(j, body, blen, esc, out, olen);
	size_t avail;
	char *d = floe_fields_scratch(j->f, &avail);
	if (avail < plen + 1)
		return false;
	memcpy(d, prefix, plen);
	d[plen] = '.';
	size_t n;
	if (esc) {
		if (floe_json_unescape(j->p + body, blen, d + plen + 1, avail - plen - 1, &n))
			return false;
	} else {
		if (blen > avail - plen - 1)
			return false;
		memcpy(d + plen + 1, j->p + body, blen);
		n = blen;
	}
	floe_fields_commit(j->f, plen + 1 + n);
	*out = d;
	*olen = plen + 1 + n;
	return true;
}

/* Parses an object at j->i ('{') whose members are named prefix.key (prefix NULL at the
 * top); level is the object's flattening level (1 at the top). */
static int parse_object(struct jp *j, const char *prefix, size_t plen, unsigned level)
{
	j->i++;
	skip_ws(j);
	if (j->i < j->len && j->p[j->i] == '}') {
		j->i++;
		return 0;
	}
	for (;;) {
		size_t kb, kl;
		bool kesc;
		skip_ws(j);
		if (scan_name(j, &kb, &kl, &kesc))
			return j->err;
		skip_ws(j);
		if (j->i >= j->len)
			return fail(j, FLOE_EPARSE);

		const char *key = NULL;
		size_t klen = 0;
		bool have_key = make_key(j, prefix, plen, kb, kl, kesc, &key, &klen);
		char c = j->p[j->i];
		size_t vstart = j->i;
		if (c == '{' && level < j->max_depth) {
			/* Peek for an empty object: it is kept as "{}" so the key is not lost. */
			size_t save = j->i;
			j->i++;
			skip_ws(j);
			bool empty = j->i < j->len && j->p[j->i] == '}';
			j->i = save;
			if (!empty && have_key) {
				if (parse_object(j, key, klen, level + 1))
					return j->err;
			} else {
				if (skip_value(j, level))
					return j->err;
				if (have_key)
					floe_fields_add(j->f, key, klen, j->p + vstart,
							j->i - vstart);
				else
					floe_fields_drop(j->f);
			}
		} else if (c == '{' || c == '[') {
			if (skip_value(j, level))
				return j->err;
			if (have_key)
				floe_fields_add(j->f, key, klen, j->p + vstart, j->i - vstart);
			else
				floe_fields_drop(j->f);
		} else if (c == '"') {
			size_t vb, vl;
			bool vesc;
			if (scan_string(j, &vb, &vl, &vesc))
				return j->err;
			const char *v;
			size_t vlen;
			if (have_key && string_value(j, vb, vl, vesc, &v, &vlen))
				floe_fields_add(j->f, key, klen, v, vlen);
			else
				floe_fields_drop(j->f);
		} else {
			if (scan_scalar(j))
				return j->err;
			if (!have_key)
				floe_fields_drop(j->f);
			else if (c == 'n')
				floe_fields_add(j->f, key, klen, NULL, 0);
			else
				floe_fields_add(j->f, key, klen, j->p + vstart, j->i - vstart);
		}
		skip_ws(j);
		if (j->i >= j->len)
			return fail(j, FLOE_EPARSE);
		if (j->p[j->i] == '}') {
			j->i++;
			return 0;
		}
		if (j->p[j->i] != ',')
			return fail(j, FLOE_EPARSE);
		j->i++;
	}
}

int floe_json_line_parse(const char *p, size_t len, unsigned max_depth, struct floe_fields *f,
			 struct floe_err *err)
{
	struct jp j = {.p = p, .len = len, .f = f};
	j.max_depth = max_depth == 0 ? 1 : max_depth;
	if (j.max_depth > FLOE_JSON_LINE_MAX_DEPTH)
		j.max_depth = FLOE_JSON_LINE_MAX_DEPTH;
	skip_ws(&j);
	if (j.i >= len || p[j.i] != '{')
		fail(&j, FLOE_EPARSE);
	else if (parse_object(&j, NULL, 0, 1) == 0) {
		skip_ws(&j);
		if (j.i != len)
			fail(&j, FLOE_EPARSE);
	}
	if (j.err) {
		floe_fields_reset(f);
		return floe_err_at(err, j.err, j.err_off, "%s at byte %zu",
				   j.err == FLOE_ELIMIT ? "JSON nested too deeply" : "invalid JSON",
				   j.err_off);
	}
	return 0;
}
