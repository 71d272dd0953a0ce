/* Bounded XML scanner and S3 response readers (see s3_xml.h). */
#include "platform/s3_xml.h"

#include "platform/s3.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct scan {
	const char *p;
	size_t n, pos;
	const struct floe_s3_xml_handler *h;
	int depth;
	const char *names[FLOE_S3_XML_MAX_DEPTH]; /* open element names, into p */
	size_t name_lens[FLOE_S3_XML_MAX_DEPTH];
	char text[FLOE_S3_XML_MAX_TEXT + 1];
	size_t text_len;
	size_t err_off;
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

static int fail(struct scan *s, size_t off)
{
	s->err_off = off;
	return FLOE_S3_EPROTO;
}

static int text_add(struct scan *s, const char *p, size_t n)
{
	if (n > FLOE_S3_XML_MAX_TEXT - s->text_len)
		return fail(s, s->pos);
	memcpy(s->text + s->text_len, p, n);
	s->text_len += n;
	return 0;
}

/* Appends code point cp as UTF-8. */
static int text_cp(struct scan *s, uint32_t cp)
{
	char b[4];
	size_t n;
	if (cp == 0 || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return fail(s, s->pos);
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

/* At '&': decodes one reference and moves past ';'. */
static int entity(struct scan *s)
{
	size_t start = s->pos;
	const char *semi = memchr(s->p + s->pos, ';', s->n - s->pos < 12 ? s->n - s->pos : 12);
	if (!semi)
		return fail(s, start);
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
	if (len < 2 || b[0] != '#')
		return fail(s, start);
	uint32_t cp = 0;
	bool hex = b[1] == 'x';
	size_t i = hex ? 2 : 1;
	if (i >= len)
		return fail(s, start);
	for (; i < len; i++) {
		unsigned char c = (unsigned char)b[i];
		uint32_t d;
		if (c >= '0' && c <= '9')
			d = c - '0';
		else if (hex && c >= 'a' && c <= 'f')
			d = c - 'a' + 10;
		else if (hex && c >= 'A' && c <= 'F')
			d = c - 'A' + 10;
		else
			return fail(s, start);
		cp = cp * (hex ? 16 : 10) + d;
		if (cp > 0x10FFFF)
			return fail(s, start);
	}
	return text_cp(s, cp);
}

/* Skips to just after the terminator term; error if absent. */
static int skip_past(struct scan *s, const char *term)
{
	size_t tl = strlen(term);
	const char *hit = memmem(s->p + s->pos, s->n - s->pos, term, tl);
	if (!hit)
		return fail(s, s->pos);
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
		return fail(s, start);
	const char *name = s->p + nb;
	size_t name_len = s->pos - nb;
	bool self_close = false;
	if (end_tag) {
		while (s->pos < s->n && ws(s->p[s->pos]))
			s->pos++;
		if (s->pos >= s->n || s->p[s->pos] != '>')
			return fail(s, start);
		s->pos++;
	} else {
		/* Attributes: skipped, but quoted values may hold '>' or '/'. */
		for (;;) {
			if (s->pos >= s->n)
				return fail(s, start);
			char c = s->p[s->pos];
			if (c == '"' || c == '\'') {
				const char *q = memchr(s->p + s->pos + 1, c, s->n - s->pos - 1);
				if (!q)
					return fail(s, start);
				s->pos = (size_t)(q - s->p) + 1;
			} else if (c == '>') {
				s->pos++;
				break;
			} else if (c == '/' && s->pos + 1 < s->n && s->p[s->pos + 1] == '>') {
				s->pos += 2;
				self_close = true;
				break;
			} else if (c == '<') {
				return fail(s, s->pos);
			} else {
				s->pos++;
			}
		}
	}
	int rc;
	if (!end_tag) {
		if (s->depth >= FLOE_S3_XML_MAX_DEPTH)
			return fail(s, start);
		s->names[s->depth] = name;
		s->name_lens[s->depth] = name_len;
		s->depth++;
		s->text_len = 0;
		const char *ln = name;
		size_t ll = name_len;
		local_name(&ln, &ll);
		if (s->h->open && (rc = s->h->open(s->h->ctx, s->depth, ln, ll)) != 0)
			return rc;
		if (!self_close)
			return 0;
	} else {
		if (s->depth == 0 || s->name_lens[s->depth - 1] != name_len ||
		    memcmp(s->names[s->depth - 1], name, name_len) != 0)
			return fail(s, start);
	}
	const char *ln = s->names[s->depth - 1];
	size_t ll = s->name_lens[s->depth - 1];
	local_name(&ln, &ll);
	s->text[s->text_len] = '\0';
	rc = s->h->close ? s->h->close(s->h->ctx, s->depth, ln, ll, s->text, s->text_len) : 0;
	s->depth--;
	s->text_len = 0;
	return rc;
}

int floe_s3_xml_walk(const char *p, size_t n, const struct floe_s3_xml_handler *h, size_t *err_off)
{
	struct scan *s = calloc(1, sizeof(*s)); /* ~8 KiB: keep it off small thread stacks */
	if (!s)
		return -ENOMEM;
	s->p = p;
	s->n = n;
	s->h = h;
	int rc = 0;
	bool root_seen = false;
	while (s->pos < n && rc == 0) {
		char c = p[s->pos];
		if (c == '<') {
			const char *r = p + s->pos;
			size_t left = n - s->pos;
			if (left >= 2 && r[1] == '?') {
				rc = skip_past(s, "?>");
			} else if (left >= 4 && memcmp(r, "<!--", 4) == 0) {
				s->pos += 4;
				rc = skip_past(s, "-->");
			} else if (left >= 9 && memcmp(r, "<![CDATA[", 9) == 0) {
				if (s->depth == 0) {
					rc = fail(s, s->pos);
					break;
				}
				s->pos += 9;
				const char *e = memmem(p + s->pos, n - s->pos, "]]>", 3);
				if (!e) {
					rc = fail(s, s->pos);
					break;
				}
				rc = text_add(s, p + s->pos, (size_t)(e - (p + s->pos)));
				s->pos = (size_t)(e - p) + 3;
			} else if (left >= 2 && r[1] == '!') {
				rc = fail(s, s->pos); /* DOCTYPE and friends: refused */
			} else {
				if (s->depth == 0 && root_seen) {
					rc = fail(s, s->pos); /* a second root */
					break;
				}
				root_seen = true;
				rc = tag(s);
			}
		} else if (s->depth == 0) {
			if (!ws(c))
				rc = fail(s, s->pos);
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
		rc = fail(s, n);
	if (rc == FLOE_S3_EPROTO && err_off)
		*err_off = s->err_off;
	free(s);
	return rc;
}

static bool name_is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

/* Copies text into out[0..cap) or fails with -ENOSPC. */
static int copy_out(const char *text, size_t len, char *out, size_t cap)
{
	if (!out || len >= cap)
		return -ENOSPC;
	memcpy(out, text, len + 1);
	return 0;
}

struct find_ctx {
	const char *name;
	char *out;
	size_t cap;
	int found;
};

/* A distinct positive value stops the walk once found. */
#define FOUND 1

static int find_close(void *ctx, int depth, const char *name, size_t nl, const char *text,
		      size_t tl)
{
	struct find_ctx *f = ctx;
	if (!name_is(name, nl, f->name))
		return 0;
	int rc = copy_out(text, tl, f->out, f->cap);
	return rc ? rc : FOUND;
}

int floe_s3_xml_find(const char *p, size_t n, const char *name, char *out, size_t cap)
{
	struct find_ctx f = {name, out, cap, 0};
	struct floe_s3_xml_handler h = {NULL, find_close, &f};
	int rc = floe_s3_xml_walk(p, n, &h, NULL);
	if (rc == FOUND)
		return 0;
	return rc ? rc : -ENOENT;
}

/* ListObjectsV2 and ListMultipartUploads share their shape: repeated entries (Contents or
 * Upload) at depth 2 with leaf fields at depth 3, and paging fields at depth 2. */
struct list_ctx {
	const char *entry; /* "Contents" or "Upload" */
	char key[1025 * 4];
	char id[1024];
	char when[64];
	char size[32];
	bool has_key, has_id, has_size;
	int (*obj_fn)(void *ctx, const char *key, int64_t size);
	int (*up_fn)(void *ctx, const char *key, const char *upload_id, const char *initiated);
	void *ctx;
	bool *truncated;
	char *next1, *next2;
	size_t cap1, cap2;
	const char *next1_name, *next2_name;
};

static int list_open(void *ctx, int depth, const char *name, size_t nl)
{
	struct list_ctx *l = ctx;
	if (depth == 2 && name_is(name, nl, l->entry)) {
		l->has_key = l->has_id = l->has_size = false;
		l->when[0] = '\0';
	}
	return 0;
}

static int parse_size(const char *t, int64_t *out)
{
	if (!*t)
		return FLOE_S3_EPROTO;
	int64_t v = 0;
	for (; *t; t++) {
		if (*t < '0' || *t > '9')
			return FLOE_S3_EPROTO;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *t - '0', &v))
			return FLOE_S3_EPROTO;
	}
	*out = v;
	return 0;
}

static int list_close(void *ctx, int depth, const char *name, size_t nl, const char *text,
		      size_t tl)
{
	struct list_ctx *l = ctx;
	if (depth == 3) {
		if (name_is(name, nl, "Key")) {
			if (copy_out(text, tl, l->key, sizeof(l->key)) || strlen(l->key) != tl)
				return FLOE_S3_EPROTO; /* too long, or a NUL inside */
			l->has_key = true;
		} else if (name_is(name, nl, "Size") && l->obj_fn) {
			if (copy_out(text, tl, l->size, sizeof(l->size)))
				return FLOE_S3_EPROTO;
			l->has_size = true;
		} else if (name_is(name, nl, "UploadId") && l->up_fn) {
			if (copy_out(text, tl, l->id, sizeof(l->id)))
				return FLOE_S3_EPROTO;
			l->has_id = true;
		} else if (name_is(name, nl, "Initiated") && l->up_fn) {
			if (copy_out(text, tl, l->when, sizeof(l->when)))
				return FLOE_S3_EPROTO;
		}
		return 0;
	}
	if (depth != 2)
		return 0;
	if (name_is(name, nl, l->entry)) {
		if (!l->has_key)
			return FLOE_S3_EPROTO;
		if (l->obj_fn) {
			int64_t size = 0;
			if (!l->has_size || parse_size(l->size, &size))
				return FLOE_S3_EPROTO;
			return l->obj_fn(l->ctx, l->key, size);
		}
		if (!l->has_id)
			return FLOE_S3_EPROTO;
		return l->up_fn(l->ctx, l->key, l->id, l->when);
	}
	if (name_is(name, nl, "IsTruncated")) {
		if (tl == 4 && memcmp(text, "true", 4) == 0)
			*l->truncated = true;
		else if (tl == 5 && memcmp(text, "false", 5) == 0)
			*l->truncated = false;
		else
			return FLOE_S3_EPROTO;
	} else if (l->next1_name && name_is(name, nl, l->next1_name)) {
		if (copy_out(text, tl, l->next1, l->cap1))
			return FLOE_S3_EPROTO;
	} else if (l->next2_name && name_is(name, nl, l->next2_name)) {
		if (copy_out(text, tl, l->next2, l->cap2))
			return FLOE_S3_EPROTO;
	}
	return 0;
}

int floe_s3_xml_parse_list(const char *p, size_t n,
			   int (*fn)(void *ctx, const char *key, int64_t size), void *ctx,
			   bool *truncated, char *next_token, size_t cap)
{
	if (!next_token || cap == 0)
		return -EINVAL;
	struct list_ctx *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	*truncated = false;
	next_token[0] = '\0';
	l->entry = "Contents";
	l->obj_fn = fn;
	l->ctx = ctx;
	l->truncated = truncated;
	l->next1 = next_token;
	l->cap1 = cap;
	l->next1_name = "NextContinuationToken";
	struct floe_s3_xml_handler h = {list_open, list_close, l};
	int rc = floe_s3_xml_walk(p, n, &h, NULL);
	/* A truncated page without a token would loop for ever. */
	if (rc == 0 && *truncated && !next_token[0])
		rc = FLOE_S3_EPROTO;
	free(l);
	return rc;
}

int floe_s3_xml_parse_uploads(const char *p, size_t n,
			      int (*fn)(void *ctx, const char *key, const char *upload_id,
					const char *initiated),
			      void *ctx, bool *truncated, char *next_key, size_t key_cap,
			      char *next_upload_id, size_t id_cap)
{
	if (!next_key || !key_cap || !next_upload_id || !id_cap)
		return -EINVAL;
	struct list_ctx *l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	*truncated = false;
	next_key[0] = next_upload_id[0] = '\0';
	l->entry = "Upload";
	l->up_fn = fn;
	l->ctx = ctx;
	l->truncated = truncated;
	l->next1 = next_key;
	l->cap1 = key_cap;
	l->next1_name = "NextKeyMarker";
	l->next2 = next_upload_id;
	l->cap2 = id_cap;
	l->next2_name = "NextUploadIdMarker";
	struct floe_s3_xml_handler h = {list_open, list_close, l};
	int rc = floe_s3_xml_walk(p, n, &h, NULL);
	if (rc == 0 && *truncated && !next_key[0] && !next_upload_id[0])
		rc = FLOE_S3_EPROTO;
	free(l);
	return rc;
}
