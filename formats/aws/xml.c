/* Bounded XML scanner and the S3 documents floe reads (see xml.h). */
#include "xml.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"

#include <string.h>

struct scan {
	const char *p;
	size_t n, pos;
	const struct floe_aws_xml_handler *h;
	struct floe_err *e;
	int depth;
	const char *names[FLOE_AWS_XML_MAX_DEPTH]; /* open element names, into p */
	size_t name_lens[FLOE_AWS_XML_MAX_DEPTH];
	char text[FLOE_AWS_XML_MAX_TEXT + 1];
	size_t text_len;
};

static bool name_char(unsigned char c)
{
	/* Bytes >= 0x80 are parts of UTF-8 names; nothing S3 sends needs finer rules. */
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == ':' || c >= 0x80;
}

static bool ws(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

static int fail(struct scan *s, size_t off, const char *what)
{
	return floe_err_at(s->e, FLOE_EPARSE, off, "XML: %s at byte %zu", what, off);
}

static int text_add(struct scan *s, const char *p, size_t n)
{
	if (n > FLOE_AWS_XML_MAX_TEXT - s->text_len)
		return floe_err_at(s->e, FLOE_ELIMIT, s->pos,
				   "XML: text over %d bytes in one element at byte %zu",
				   FLOE_AWS_XML_MAX_TEXT, s->pos);
	memcpy(s->text + s->text_len, p, n);
	s->text_len += n;
	return 0;
}

/* Appends code point cp as UTF-8. */
static int text_cp(struct scan *s, uint32_t cp, size_t at)
{
	char b[4];
	size_t n;
	if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return fail(s, at, "a character reference to no character");
	if (cp < 0x80) {
		b[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = (char)(0xC0 | (cp >> 6));
		b[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = (char)(0xE0 | (cp >> 12));
		b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		b[0] = (char)(0xF0 | (cp >> 18));
		b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		b[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return text_add(s, b, n);
}

/* The digits of a numeric reference b[0..len) ("#65", "#x41") as a code point. */
static bool char_ref(const char *b, size_t len, uint32_t *out)
{
	if (len < 2 || b[0] != '#')
		return false;
	bool hex = b[1] == 'x';
	size_t i = hex ? 2 : 1;
	if (i >= len)
		return false;
	uint32_t cp = 0;
	for (; i < len; i++) {
		int d = hex ? floe_hex_digit(b[i]) : (b[i] >= '0' && b[i] <= '9' ? b[i] - '0' : -1);
		if (d < 0)
			return false;
		cp = cp * (hex ? 16 : 10) + (uint32_t)d;
		if (cp > 0x10FFFF)
			return false;
	}
	*out = cp;
	return true;
}

/* At '&': decodes one reference and moves past ';'. */
static int entity(struct scan *s)
{
	size_t start = s->pos;
	const char *semi = memchr(s->p + s->pos, ';', s->n - s->pos < 12 ? s->n - s->pos : 12);
	if (!semi)
		return fail(s, start, "an unterminated reference");
	const char *b = s->p + s->pos + 1;
	size_t len = (size_t)(semi - b);
	s->pos = (size_t)(semi - s->p) + 1;
	static const struct {
		const char *name;
		char c;
	} named[] = {{"lt", '<'}, {"gt", '>'}, {"amp", '&'}, {"quot", '"'}, {"apos", '\''}};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (len == strlen(named[i].name) && memcmp(b, named[i].name, len) == 0)
			return text_add(s, &named[i].c, 1);
	uint32_t cp;
	if (!char_ref(b, len, &cp))
		return fail(s, start, "an unknown reference");
	return text_cp(s, cp, start);
}

/* Skips to just after the terminator term; error if absent. */
static int skip_past(struct scan *s, const char *term)
{
	size_t tl = strlen(term);
	const char *hit = memmem(s->p + s->pos, s->n - s->pos, term, tl);
	if (!hit)
		return fail(s, s->pos, "an unterminated declaration or comment");
	s->pos = (size_t)(hit - s->p) + tl;
	return 0;
}

static void local_name(const char **name, size_t *len)
{
	const char *colon = memchr(*name, ':', *len);
	if (colon) {
		*len -= (size_t)(colon + 1 - *name);
		*name = colon + 1;
	}
}

/* Skips the attributes of a start tag up to its '>' ("/>": *self_close). Quoted values may
 * hold '>' or '/'. */
static int attributes(struct scan *s, size_t start, bool *self_close)
{
	for (;;) {
		if (s->pos >= s->n)
			return fail(s, start, "an unterminated tag");
		char c = s->p[s->pos];
		if (c == '"' || c == '\'') {
			const char *q = memchr(s->p + s->pos + 1, c, s->n - s->pos - 1);
			if (!q)
				return fail(s, start, "an unterminated attribute value");
			s->pos = (size_t)(q - s->p) + 1;
		} else if (c == '>') {
			s->pos++;
			return 0;
		} else if (c == '/' && s->pos + 1 < s->n && s->p[s->pos + 1] == '>') {
			s->pos += 2;
			*self_close = true;
			return 0;
		} else if (c == '<') {
			return fail(s, s->pos, "a '<' inside a tag");
		} else {
			s->pos++;
		}
	}
}

/* Opens element name (its start tag read). */
static int open_element(struct scan *s, const char *name, size_t name_len, size_t start)
{
	if (s->depth >= FLOE_AWS_XML_MAX_DEPTH)
		return floe_err_at(s->e, FLOE_ELIMIT, start,
				   "XML: elements nested over %d deep at byte %zu",
				   FLOE_AWS_XML_MAX_DEPTH, start);
	s->names[s->depth] = name;
	s->name_lens[s->depth] = name_len;
	s->depth++;
	s->text_len = 0;
	local_name(&name, &name_len);
	return s->h->open ? s->h->open(s->h->ctx, s->depth, name, name_len) : 0;
}

/* Closes the innermost element. */
static int close_element(struct scan *s)
{
	const char *ln = s->names[s->depth - 1];
	size_t ll = s->name_lens[s->depth - 1];
	local_name(&ln, &ll);
	s->text[s->text_len] = '\0';
	int rc = s->h->close
		     ? s->h->close(s->h->ctx, s->depth, ln, ll, s->text, s->text_len, s->pos)
		     : 0;
	s->depth--;
	s->text_len = 0;
	return rc;
}

/* At '<' of a start or end tag. */
static int tag(struct scan *s)
{
	size_t start = s->pos;
	bool end_tag = s->pos + 1 < s->n && s->p[s->pos + 1] == '/';
	s->pos += end_tag ? 2 : 1;
	size_t nb = s->pos;
	while (s->pos < s->n && name_char((unsigned char)s->p[s->pos]))
		s->pos++;
	if (s->pos == nb || s->pos >= s->n)
		return fail(s, start, "a tag without a name");
	const char *name = s->p + nb;
	size_t name_len = s->pos - nb;
	if (end_tag) {
		while (s->pos < s->n && ws(s->p[s->pos]))
			s->pos++;
		if (s->pos >= s->n || s->p[s->pos] != '>')
			return fail(s, start, "an unterminated end tag");
		s->pos++;
		if (s->depth == 0 || s->name_lens[s->depth - 1] != name_len ||
		    memcmp(s->names[s->depth - 1], name, name_len) != 0)
			return fail(s, start, "an end tag that closes no open element");
		return close_element(s);
	}
	bool self_close = false;
	int rc = attributes(s, start, &self_close);
	if (rc == 0)
		rc = open_element(s, name, name_len, start);
	if (rc == 0 && self_close)
		rc = close_element(s);
	return rc;
}

/* At '<' outside a tag: a declaration, comment, CDATA section or tag. */
static int markup(struct scan *s, bool *root_seen)
{
	const char *r = s->p + s->pos;
	size_t left = s->n - s->pos;
	if (left >= 2 && r[1] == '?')
		return skip_past(s, "?>");
	if (left >= 4 && memcmp(r, "<!--", 4) == 0) {
		s->pos += 4;
		return skip_past(s, "-->");
	}
	if (left >= 9 && memcmp(r, "<![CDATA[", 9) == 0) {
		if (s->depth == 0)
			return fail(s, s->pos, "CDATA outside the root element");
		size_t b = s->pos + 9;
		const char *e = memmem(s->p + b, s->n - b, "]]>", 3);
		if (!e)
			return fail(s, b, "an unterminated CDATA section");
		s->pos = b;
		int rc = text_add(s, s->p + b, (size_t)(e - (s->p + b)));
		s->pos = (size_t)(e - s->p) + 3;
		return rc;
	}
	if (left >= 2 && r[1] == '!')
		return fail(s, s->pos, "a DOCTYPE or other declaration"); /* no entity expansion */
	if (s->depth == 0 && *root_seen)
		return fail(s, s->pos, "a second root element");
	*root_seen = true;
	return tag(s);
}

int floe_aws_xml_walk(struct floe_alloc *a, const char *p, size_t n,
		      const struct floe_aws_xml_handler *h, struct floe_err *e)
{
	struct scan *s = floe_calloc(a, 1, sizeof(*s)); /* ~8 KiB: off small thread stacks */
	if (!s)
		return floe_err_set(e, FLOE_ENOMEM, "XML: no memory for the scanner");
	s->p = p;
	s->n = n;
	s->h = h;
	s->e = e;
	int rc = 0;
	bool root_seen = false;
	while (s->pos < n && rc == 0) {
		char c = p[s->pos];
		if (c == '<') {
			rc = markup(s, &root_seen);
		} else if (s->depth == 0) {
			if (!ws(c))
				rc = fail(s, s->pos, "text outside the root element");
			s->pos++;
		} else if (c == '&') {
			rc = entity(s);
		} else {
			/* Plain text up to the next markup. */
			size_t b = s->pos;
			while (s->pos < n && p[s->pos] != '<' && p[s->pos] != '&')
				s->pos++;
			rc = text_add(s, p + b, s->pos - b);
		}
	}
	if (rc == 0 && (s->depth != 0 || !root_seen))
		rc = fail(s, n, root_seen ? "an unclosed element" : "no element");
	floe_free(a, s);
	return rc;
}

static bool name_is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* Copies text[0..len] (its NUL included) into out[0..cap); false when it does not fit. */
static bool copy_out(const char *text, size_t len, char *out, size_t cap)
{
	if (!out || len >= cap)
		return false;
	memcpy(out, text, len + 1);
	return true;
}

struct find_ctx {
	const char *name;
	char *out;
	size_t cap;
	struct floe_err *e;
};

/* A distinct positive value stops the walk once found. */
#define FOUND 1

static int find_close(void *ctx, int depth, const char *name, size_t nl, const char *text,
		      size_t tl, size_t off)
{
	struct find_ctx *f = ctx;
	(void)depth;
	if (!name_is(name, nl, f->name))
		return 0;
	if (!copy_out(text, tl, f->out, f->cap))
		return floe_err_at(f->e, FLOE_ELIMIT, off, "XML: <%s> holds %zu bytes, over %zu",
				   f->name, tl, f->cap ? f->cap - 1 : 0);
	return FOUND;
}

int floe_aws_xml_find(struct floe_alloc *a, const char *p, size_t n, const char *name, char *out,
		      size_t cap, struct floe_err *e)
{
	struct find_ctx f = {name, out, cap, e};
	struct floe_aws_xml_handler h = {NULL, find_close, &f};
	int rc = floe_aws_xml_walk(a, p, n, &h, e);
	if (rc == FOUND)
		return 0;
	return rc ? rc : floe_err_set(e, FLOE_ENOTFOUND, "XML: no <%s>", name);
}
