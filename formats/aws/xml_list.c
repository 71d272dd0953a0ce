/* The S3 listing pages floe reads, on the XML scanner (see xml.h): ListObjectsV2 and
 * ListMultipartUploads share their shape, repeated entries (Contents or Upload) at depth 2
 * with leaf fields at depth 3, and paging fields at depth 2. */
#include "xml.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

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
	struct floe_err *e;
};

static bool name_is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

static int bad(struct list_ctx *l, size_t off, const char *what)
{
	return floe_err_at(l->e, FLOE_EFORMAT, off, "S3 listing: %s at byte %zu", what, off);
}

/* Copies a field's text (a NUL inside it, or more than cap - 1 bytes, is refused). */
static int field(struct list_ctx *l, const char *text, size_t tl, char *out, size_t cap,
		 size_t off)
{
	if (tl >= cap || strlen(text) != tl)
		return bad(l, off, "a field too long or holding a NUL");
	memcpy(out, text, tl + 1);
	return 0;
}

static int list_open(void *ctx, int depth, const char *name, size_t nl)
{
	struct list_ctx *l = ctx;
	if (depth == 2 && name_is(name, nl, l->entry)) {
		l->has_key = l->has_id = l->has_size = false;
		l->when[0] = '\0';
	}
	return 0;
}

static bool parse_size(const char *t, int64_t *out)
{
	if (!*t)
		return false;
	int64_t v = 0;
	for (; *t; t++) {
		if (*t < '0' || *t > '9')
			return false;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *t - '0', &v))
			return false;
	}
	*out = v;
	return true;
}

/* A leaf field of an entry. */
static int entry_field(struct list_ctx *l, const char *name, size_t nl, const char *text,
		       size_t tl, size_t off)
{
	int rc = 0;
	if (name_is(name, nl, "Key")) {
		rc = field(l, text, tl, l->key, sizeof(l->key), off);
		l->has_key = rc == 0;
	} else if (name_is(name, nl, "Size") && l->obj_fn) {
		rc = field(l, text, tl, l->size, sizeof(l->size), off);
		l->has_size = rc == 0;
	} else if (name_is(name, nl, "UploadId") && l->up_fn) {
		rc = field(l, text, tl, l->id, sizeof(l->id), off);
		l->has_id = rc == 0;
	} else if (name_is(name, nl, "Initiated") && l->up_fn) {
		rc = field(l, text, tl, l->when, sizeof(l->when), off);
	}
	return rc;
}

/* A whole entry: the caller's function gets it. */
static int entry_done(struct list_ctx *l, size_t off)
{
	if (!l->has_key)
		return bad(l, off, "an entry without a Key");
	if (l->obj_fn) {
		int64_t size = 0;
		if (!l->has_size || !parse_size(l->size, &size))
			return bad(l, off, "an entry without a valid Size");
		return l->obj_fn(l->ctx, l->key, size);
	}
	if (!l->has_id)
		return bad(l, off, "an upload without an UploadId");
	return l->up_fn(l->ctx, l->key, l->id, l->when);
}

static int list_close(void *ctx, int depth, const char *name, size_t nl, const char *text,
		      size_t tl, size_t off)
{
	struct list_ctx *l = ctx;
	if (depth == 3)
		return entry_field(l, name, nl, text, tl, off);
	if (depth != 2)
		return 0;
	if (name_is(name, nl, l->entry))
		return entry_done(l, off);
	if (name_is(name, nl, "IsTruncated")) {
		if (tl == 4 && memcmp(text, "true", 4) == 0)
			*l->truncated = true;
		else if (tl == 5 && memcmp(text, "false", 5) == 0)
			*l->truncated = false;
		else
			return bad(l, off, "an IsTruncated that is neither true nor false");
	} else if (l->next1_name && name_is(name, nl, l->next1_name)) {
		return field(l, text, tl, l->next1, l->cap1, off);
	} else if (l->next2_name && name_is(name, nl, l->next2_name)) {
		return field(l, text, tl, l->next2, l->cap2, off);
	}
	return 0;
}

/* Walks one page with l (filled by the caller); a truncated page must name the next. */
static int walk_page(struct floe_alloc *a, const char *p, size_t n, struct list_ctx *l)
{
	struct floe_aws_xml_handler h = {list_open, list_close, l};
	*l->truncated = false;
	l->next1[0] = '\0';
	if (l->next2)
		l->next2[0] = '\0';
	int rc = floe_aws_xml_walk(a, p, n, &h, l->e);
	/* A truncated page without a token would loop for ever. */
	if (rc == 0 && *l->truncated && !l->next1[0] && !(l->next2 && l->next2[0]))
		rc = bad(l, n, "a truncated page that does not say where the next one starts");
	return rc;
}

int floe_aws_xml_list(struct floe_alloc *a, const char *p, size_t n,
		      int (*fn)(void *ctx, const char *key, int64_t size), void *ctx,
		      bool *truncated, char *next_token, size_t cap, struct floe_err *e)
{
	if (!next_token || cap == 0)
		return floe_err_set(e, FLOE_EINVAL, "S3 listing: no room for the token");
	struct list_ctx *l = floe_calloc(a, 1, sizeof(*l));
	if (!l)
		return floe_err_set(e, FLOE_ENOMEM, "S3 listing: no memory");
	l->entry = "Contents";
	l->obj_fn = fn;
	l->ctx = ctx;
	l->truncated = truncated;
	l->next1 = next_token;
	l->cap1 = cap;
	l->next1_name = "NextContinuationToken";
	l->e = e;
	int rc = walk_page(a, p, n, l);
	floe_free(a, l);
	return rc;
}

int floe_aws_xml_uploads(struct floe_alloc *a, const char *p, size_t n,
			 int (*fn)(void *ctx, const char *key, const char *upload_id,
				   const char *initiated),
			 void *ctx, bool *truncated, const struct floe_aws_xml_markers *next,
			 struct floe_err *e)
{
	if (!next->key || !next->key_cap || !next->upload_id || !next->upload_id_cap)
		return floe_err_set(e, FLOE_EINVAL, "S3 listing: no room for the markers");
	struct list_ctx *l = floe_calloc(a, 1, sizeof(*l));
	if (!l)
		return floe_err_set(e, FLOE_ENOMEM, "S3 listing: no memory");
	l->entry = "Upload";
	l->up_fn = fn;
	l->ctx = ctx;
	l->truncated = truncated;
	l->next1 = next->key;
	l->cap1 = next->key_cap;
	l->next1_name = "NextKeyMarker";
	l->next2 = next->upload_id;
	l->cap2 = next->upload_id_cap;
	l->next2_name = "NextUploadIdMarker";
	l->e = e;
	int rc = walk_page(a, p, n, l);
	floe_free(a, l);
	return rc;
}
