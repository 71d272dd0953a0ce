/* A bounded JSON reader for credential documents (see s3_cred_json.h). The JSON scanner validates the whole text with recursion capped at
 * FLOE_S3_JSON_MAX_DEPTH, so hostile nesting cannot exhaust the stack. */
#include "platform/s3_cred_json.h"

#include "platform/s3.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

struct cur {
	const char *p;
	size_t n, i;
	size_t err_off;
};

/* The member being looked for and where its decoded value goes. */
struct want {
	const char *name;
	size_t name_len;
	char *out;
	size_t cap;
	int found; /* 0 not yet, 1 found, or a negative error of the match */
};

static int bad(struct cur *c)
{
	c->err_off = c->i;
	return FLOE_S3_EPROTO;
}

static void skip_ws(struct cur *c)
{
	while (c->i < c->n && (c->p[c->i] == ' ' || c->p[c->i] == '\t' || c->p[c->i] == '\n' ||
			       c->p[c->i] == '\r'))
		c->i++;
}

static int hex4(struct cur *c, unsigned *v)
{
	if (c->n - c->i < 4)
		return bad(c);
	unsigned x = 0;
	for (int k = 0; k < 4; k++) {
		char h = c->p[c->i + (size_t)k];
		unsigned d;
		if (h >= '0' && h <= '9')
			d = (unsigned)(h - '0');
		else if (h >= 'a' && h <= 'f')
			d = (unsigned)(h - 'a' + 10);
		else if (h >= 'A' && h <= 'F')
			d = (unsigned)(h - 'A' + 10);
		else
			return bad(c);
		x = x * 16 + d;
	}
	c->i += 4;
	*v = x;
	return 0;
}

/* Output of a string being decoded: bytes past cap are counted, not written. */
struct sink {
	char *out;
	size_t cap, len;
	bool nul;
};

static void put(struct sink *s, char ch)
{
	if (!s)
		return;
	if (ch == '\0')
		s->nul = true;
	if (s->out && s->len < s->cap)
		s->out[s->len] = ch;
	s->len++;
}

static void put_utf8(struct sink *s, unsigned cp)
{
	if (cp < 0x80) {
		put(s, (char)cp);
	} else if (cp < 0x800) {
		put(s, (char)(0xC0 | (cp >> 6)));
		put(s, (char)(0x80 | (cp & 0x3F)));
	} else if (cp < 0x10000) {
		put(s, (char)(0xE0 | (cp >> 12)));
		put(s, (char)(0x80 | ((cp >> 6) & 0x3F)));
		put(s, (char)(0x80 | (cp & 0x3F)));
	} else {
		put(s, (char)(0xF0 | (cp >> 18)));
		put(s, (char)(0x80 | ((cp >> 12) & 0x3F)));
		put(s, (char)(0x80 | ((cp >> 6) & 0x3F)));
		put(s, (char)(0x80 | (cp & 0x3F)));
	}
}

/* A string at c->i (which is '"'); decoded into s when s is not NULL. */
static int scan_string(struct cur *c, struct sink *s)
{
	c->i++; /* the opening quote */
	for (;;) {
		if (c->i >= c->n)
			return bad(c);
		unsigned char ch = (unsigned char)c->p[c->i];
		if (ch == '"') {
			c->i++;
			return 0;
		}
		if (ch < 0x20)
			return bad(c);
		if (ch != '\\') {
			put(s, (char)ch);
			c->i++;
			continue;
		}
		if (++c->i >= c->n)
			return bad(c);
		char e = c->p[c->i++];
		unsigned cp;
		switch (e) {
		case '"':
		case '\\':
		case '/':
			put(s, e);
			break;
		case 'b':
			put(s, '\b');
			break;
		case 'f':
			put(s, '\f');
			break;
		case 'n':
			put(s, '\n');
			break;
		case 'r':
			put(s, '\r');
			break;
		case 't':
			put(s, '\t');
			break;
		case 'u':
			if (hex4(c, &cp))
				return FLOE_S3_EPROTO;
			if (cp >= 0xDC00 && cp <= 0xDFFF)
				return bad(c); /* a low surrogate alone */
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				unsigned lo;
				if (c->n - c->i < 2 || c->p[c->i] != '\\' || c->p[c->i + 1] != 'u')
					return bad(c);
				c->i += 2;
				if (hex4(c, &lo))
					return FLOE_S3_EPROTO;
				if (lo < 0xDC00 || lo > 0xDFFF)
					return bad(c);
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			put_utf8(s, cp);
			break;
		default:
			c->i--;
			return bad(c);
		}
	}
}

static bool digit(const struct cur *c)
{
	return c->i < c->n && c->p[c->i] >= '0' && c->p[c->i] <= '9';
}

static int scan_number(struct cur *c)
{
	if (c->p[c->i] == '-')
		c->i++;
	if (!digit(c))
		return bad(c);
	if (c->p[c->i] == '0')
		c->i++;
	else
		while (digit(c))
			c->i++;
	if (c->i < c->n && c->p[c->i] == '.') {
		c->i++;
		if (!digit(c))
			return bad(c);
		while (digit(c))
			c->i++;
	}
	if (c->i < c->n && (c->p[c->i] == 'e' || c->p[c->i] == 'E')) {
		c->i++;
		if (c->i < c->n && (c->p[c->i] == '+' || c->p[c->i] == '-'))
			c->i++;
		if (!digit(c))
			return bad(c);
		while (digit(c))
			c->i++;
	}
	return 0;
}

static int scan_value(struct cur *c, int depth, struct want *w);

/* An object at c->i ('{'); at depth 1 its members are compared with w. */
static int scan_object(struct cur *c, int depth, struct want *w)
{
	c->i++;
	skip_ws(c);
	if (c->i < c->n && c->p[c->i] == '}') {
		c->i++;
		return 0;
	}
	for (;;) {
		skip_ws(c);
		if (c->i >= c->n || c->p[c->i] != '"')
			return bad(c);
		size_t key_start = c->i + 1;
		/* Names are compared raw: the members floe reads have plain ASCII names. */
		int rc = scan_string(c, NULL);
		if (rc)
			return rc;
		size_t key_len = c->i - 1 - key_start;
		bool match = depth == 1 && w && w->found == 0 && key_len == w->name_len &&
			     memcmp(c->p + key_start, w->name, key_len) == 0;
		skip_ws(c);
		if (c->i >= c->n || c->p[c->i] != ':')
			return bad(c);
		c->i++;
		skip_ws(c);
		if (match) {
			if (c->i < c->n && c->p[c->i] == '"') {
				struct sink s = {w->out, w->cap, 0, false};
				if ((rc = scan_string(c, &s)))
					return rc;
				if (s.nul)
					w->found = -EINVAL;
				else if (s.len >= w->cap)
					w->found = -ENOSPC;
				else
					w->found = 1, w->out[s.len] = '\0';
			} else {
				w->found = -EINVAL;
				if ((rc = scan_value(c, depth + 1, NULL)))
					return rc;
			}
		} else if ((rc = scan_value(c, depth + 1, NULL))) {
			return rc;
		}
		skip_ws(c);
		if (c->i >= c->n)
			return bad(c);
		if (c->p[c->i] == '}') {
			c->i++;
			return 0;
		}
		if (c->p[c->i] != ',')
			return bad(c);
		c->i++;
	}
}

static int scan_array(struct cur *c, int depth)
{
	c->i++;
	skip_ws(c);
	if (c->i < c->n && c->p[c->i] == ']') {
		c->i++;
		return 0;
	}
	for (;;) {
		skip_ws(c);
		int rc = scan_value(c, depth + 1, NULL);
		if (rc)
			return rc;
		skip_ws(c);
		if (c->i >= c->n)
			return bad(c);
		if (c->p[c->i] == ']') {
			c->i++;
			return 0;
		}
		if (c->p[c->i] != ',')
			return bad(c);
		c->i++;
	}
}

static int literal(struct cur *c, const char *word)
{
	size_t k = strlen(word);
	if (c->n - c->i < k || memcmp(c->p + c->i, word, k) != 0)
		return bad(c);
	c->i += k;
	return 0;
}

static int scan_value(struct cur *c, int depth, struct want *w)
{
	if (depth > FLOE_S3_JSON_MAX_DEPTH || c->i >= c->n)
		return bad(c);
	switch (c->p[c->i]) {
	case '{':
		return scan_object(c, depth, w);
	case '[':
		return scan_array(c, depth);
	case '"':
		return scan_string(c, NULL);
	case 't':
		return literal(c, "true");
	case 'f':
		return literal(c, "false");
	case 'n':
		return literal(c, "null");
	default:
		return scan_number(c);
	}
}

int floe_s3_cred_json_string(const char *p, size_t n, const char *name, char *out, size_t cap,
			     size_t *err_off)
{
	if ((!p && n) || !name || !out || cap == 0)
		return -EINVAL;
	struct cur c = {p, n, 0, 0};
	struct want w = {name, strlen(name), out, cap, 0};
	int rc;
	skip_ws(&c);
	if (c.i >= c.n || c.p[c.i] != '{')
		rc = bad(&c);
	else
		rc = scan_value(&c, 1, &w);
	if (rc == 0) {
		skip_ws(&c);
		if (c.i != c.n)
			rc = bad(&c);
	}
	if (rc) {
		if (err_off)
			*err_off = c.err_off;
		out[0] = '\0'; /* a malformed document yields nothing */
		return rc;
	}
	return w.found == 1 ? 0 : w.found < 0 ? w.found : -ENOENT;
}
