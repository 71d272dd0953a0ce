/* The DeleteResult document of S3's DeleteObjects (POST ?delete), on the XML scanner (see
 * xml.h): <Deleted> and <Error> entries at depth 2, their Key, Code and Message at depth
 * 3. In quiet mode only the errors are listed. */
#include "xml.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdio.h>
#include <string.h>

struct del_ctx {
	char key[1025 * 4];
	char code[128];
	char msg[512];
	bool has_key, in_error, in_deleted;
	int (*fn)(void *ctx, const char *key, const char *code, const char *message);
	void *ctx;
	size_t deleted;
	struct floe_err *e;
};

static bool is(const char *name, size_t len, const char *want)
{
	return len == strlen(want) && memcmp(name, want, len) == 0;
}

static int del_open(void *ctx, int depth, const char *name, size_t nl)
{
	struct del_ctx *d = ctx;
	if (depth == 1 && !is(name, nl, "DeleteResult"))
		return floe_err_set(d->e, FLOE_EFORMAT, "S3 DeleteObjects: the answer is not a DeleteResult");
	if (depth == 2) {
		d->in_error = is(name, nl, "Error");
		d->in_deleted = is(name, nl, "Deleted");
		d->has_key = false;
		d->code[0] = d->msg[0] = '\0';
	}
	return 0;
}

/* Copies a leaf's text, cut to fit (a message is for people; a key that does not fit, or
 * holds a NUL, is refused). */
static int leaf(struct del_ctx *d, const char *name, size_t nl, const char *text, size_t tl, size_t off)
{
	if (is(name, nl, "Key")) {
		if (tl >= sizeof(d->key) || strlen(text) != tl)
			return floe_err_at(d->e, FLOE_EFORMAT, off,
					   "S3 DeleteObjects: a Key too long or holding a NUL at byte %zu", off);
		memcpy(d->key, text, tl + 1);
		d->has_key = true;
	} else if (is(name, nl, "Code")) {
		snprintf(d->code, sizeof(d->code), "%s", text);
	} else if (is(name, nl, "Message")) {
		snprintf(d->msg, sizeof(d->msg), "%s", text);
	}
	return 0;
}

static int del_close(void *ctx, int depth, const char *name, size_t nl, const char *text, size_t tl,
		     size_t off)
{
	struct del_ctx *d = ctx;
	if (depth == 3 && (d->in_error || d->in_deleted))
		return leaf(d, name, nl, text, tl, off);
	if (depth != 2)
		return 0;
	if (d->in_deleted)
		d->deleted++;
	if (!d->in_error)
		return 0;
	d->in_error = false;
	if (!d->has_key)
		return floe_err_at(d->e, FLOE_EFORMAT, off, "S3 DeleteObjects: an Error without a Key at byte %zu",
				   off);
	return d->fn ? d->fn(d->ctx, d->key, d->code[0] ? d->code : "?", d->msg) : 0;
}

int floe_aws_xml_delete_result(struct floe_alloc *a, const char *p, size_t n,
			       int (*fn)(void *ctx, const char *key, const char *code, const char *message),
			       void *ctx, size_t *deleted, struct floe_err *e)
{
	struct del_ctx *d = floe_calloc(a, 1, sizeof(*d));
	if (!d)
		return floe_err_set(e, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	d->fn = fn;
	d->ctx = ctx;
	d->e = e;
	struct floe_aws_xml_handler h = {del_open, del_close, d};
	int rc = floe_aws_xml_walk(a, p, n, &h, e);
	if (deleted)
		*deleted = d->deleted;
	floe_free(a, d);
	return rc;
}
