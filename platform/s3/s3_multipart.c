/* Multipart uploads of the S3 client (see s3.h): create, upload parts from a file range,
 * complete, abort, list in-progress uploads, and floe_s3_put_file which picks a single PUT or
 * multipart by size. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64 /* files over 2 GiB on armhf */
#endif
#include "platform/s3/s3.h"

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/rfc3339.h"
#include "formats/base/error.h"

#include "platform/s3/s3_request.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- multipart ----------------------------------------------------------------------- */

int floe_s3_multipart_create(struct floe_s3 *s3, const char *key, char *upload_id, size_t cap)
{
	if (!floe_s3_key_ok(key) || !upload_id || !cap)
		return -EINVAL;
	struct floe_s3_req rq = {
	    .method = "POST", .key = key, .max = FLOE_S3_ERR_BODY_MAX, .has_body = true};
	static const uint8_t empty[1];
	rq.body = (struct floe_s3_body){.mem = empty, .fd = -1, .len = 0};
	rq.q[rq.nq++] = (struct floe_sigv4_param){"uploads", ""};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	if (rc == 0) {
		rc = floe_aws_xml_find(s3->o.alloc, floe_s3_resp_text(&r), r.body.len, "UploadId",
				       upload_id, cap, NULL);
		if (rc == 0 && !*upload_id)
			rc = FLOE_S3_EPROTO;
		else if (rc && rc != FLOE_ENOMEM)
			rc = rc == FLOE_ELIMIT ? -ENOSPC : FLOE_S3_EPROTO;
	}
	floe_s3_resp_fini(&r);
	return rc;
}

int floe_s3_multipart_upload_part(struct floe_s3 *s3, const char *key, const char *upload_id,
				  int number, int fd, int64_t off, int64_t len,
				  struct floe_s3_part *part)
{
	if (!floe_s3_key_ok(key) || !upload_id || !*upload_id || number < 1 ||
	    number > FLOE_S3_MAX_PARTS || fd < 0 || off < 0 || len < 0 || !part)
		return -EINVAL;
	char num[16];
	snprintf(num, sizeof(num), "%d", number);
	struct floe_s3_req rq = {
	    .method = "PUT", .key = key, .max = FLOE_S3_ERR_BODY_MAX, .has_body = true};
	rq.body = (struct floe_s3_body){.fd = fd, .off = off, .len = len};
	rq.q[rq.nq++] = (struct floe_sigv4_param){"partNumber", num};
	rq.q[rq.nq++] = (struct floe_sigv4_param){"uploadId", upload_id};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	if (rc == 0) {
		if (!r.etag[0])
			rc = FLOE_S3_EPROTO;
		part->number = number;
		snprintf(part->etag, sizeof(part->etag), "%s", r.etag);
	}
	floe_s3_resp_fini(&r);
	return rc;
}

/* Appends s to b with XML's three special characters escaped. */
static int put_xml_text(struct floe_buf *b, const char *s)
{
	int rc = 0;
	for (; *s && rc == 0; s++)
		rc = *s == '&'	 ? floe_buf_puts(b, "&amp;")
		     : *s == '<' ? floe_buf_puts(b, "&lt;")
		     : *s == '>' ? floe_buf_puts(b, "&gt;")
				 : floe_buf_putc(b, (uint8_t)*s);
	return rc;
}

/* The CompleteMultipartUpload document of parts[0..n) (ascending numbers) into b. */
static int complete_doc(struct floe_buf *b, const struct floe_s3_part *parts, size_t n)
{
	int rc = floe_buf_puts(b, "<CompleteMultipartUpload>");
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (i > 0 && parts[i].number <= parts[i - 1].number)
			return -EINVAL;
		if ((rc = floe_buf_printf(b, "<Part><PartNumber>%d</PartNumber><ETag>",
					  parts[i].number)) == 0 &&
		    (rc = put_xml_text(b, parts[i].etag)) == 0)
			rc = floe_buf_puts(b, "</ETag></Part>");
	}
	return rc ? rc : floe_buf_puts(b, "</CompleteMultipartUpload>");
}

int floe_s3_multipart_complete(struct floe_s3 *s3, const char *key, const char *upload_id,
			       const struct floe_s3_part *parts, size_t n)
{
	if (!floe_s3_key_ok(key) || !upload_id || !*upload_id || !parts || n == 0 ||
	    n > FLOE_S3_MAX_PARTS)
		return -EINVAL;
	struct floe_buf doc;
	/* Each part: an ETag under 128 bytes, escaped to at most five times that, in under
	 * 64 bytes of markup. */
	floe_buf_init(&doc, s3->o.alloc, FLOE_S3_MAX_PARTS * (5 * 128 + 64) + 64);
	int rc = complete_doc(&doc, parts, n);
	if (rc) {
		floe_buf_fini(&doc);
		return rc;
	}
	struct floe_s3_req rq = {
	    .method = "POST", .key = key, .max = FLOE_S3_XML_BODY_MAX, .has_body = true};
	rq.body = (struct floe_s3_body){.mem = doc.data, .fd = -1, .len = (int64_t)doc.len};
	rq.q[rq.nq++] = (struct floe_sigv4_param){"uploadId", upload_id};
	rq.h[rq.nh++] = (struct floe_sigv4_header){"content-type", "application/xml"};
	struct floe_s3_resp r = {0};
	rc = floe_s3_request_run(s3, &rq, &r);
	if (rc == 0 && r.body.len) {
		/* S3 may answer 200 and report the failure in the body. */
		char code[64];
		if (floe_aws_xml_find(s3->o.alloc, floe_s3_resp_text(&r), r.body.len, "Code", code,
				      sizeof(code), NULL) == 0) {
			snprintf(s3->last_code, sizeof(s3->last_code), "%s", code);
			rc = FLOE_S3_EHTTP;
		}
	}
	/* After a retry, NoSuchUpload may mean our first attempt completed it. */
	if (rc == -ENOENT && s3->last_attempts > 1)
		rc = FLOE_S3_EAMBIGUOUS;
	floe_s3_resp_fini(&r);
	floe_buf_fini(&doc);
	return rc;
}

int floe_s3_multipart_abort(struct floe_s3 *s3, const char *key, const char *upload_id)
{
	if (!floe_s3_key_ok(key) || !upload_id || !*upload_id)
		return -EINVAL;
	struct floe_s3_req rq = {.method = "DELETE", .key = key, .max = FLOE_S3_ERR_BODY_MAX};
	rq.q[rq.nq++] = (struct floe_sigv4_param){"uploadId", upload_id};
	struct floe_s3_resp r = {0};
	int rc = floe_s3_request_run(s3, &rq, &r);
	floe_s3_resp_fini(&r);
	return rc == -ENOENT ? 0 : rc;
}

struct counted {
	floe_s3_upload_fn fn;
	void *ctx;
	size_t n;
};

static int count_upload(void *ctx, const char *key, const char *upload_id, const char *initiated)
{
	struct counted *c = ctx;
	c->n++;
	return c->fn(c->ctx, key, upload_id, initiated);
}

/* The markers of a ListMultipartUploads page: a key (at most 1024 bytes in S3) and an
 * upload id. */
#define KEY_MARKER_MAX 4096
#define ID_MARKER_MAX 1024

int floe_s3_multipart_list(struct floe_s3 *s3, const char *prefix, floe_s3_upload_fn fn, void *ctx)
{
	/* km and um hold the two markers and, for the pager, "key-marker\nupload-id-marker"
	 * (one token naming the next page). */
	struct floe_alloc *a = s3->o.alloc;
	char *km = floe_calloc(a, 1, KEY_MARKER_MAX), *um = floe_calloc(a, 1, ID_MARKER_MAX);
	char *both = floe_malloc(a, KEY_MARKER_MAX + ID_MARKER_MAX);
	int rc = km && um && both ? 0 : FLOE_ENOMEM;
	bool truncated = true;
	struct floe_s3_pager pager = {0};
	for (int page = 0; truncated && rc == 0; page++) {
		struct floe_s3_req rq = {.method = "GET", .key = NULL, .max = FLOE_S3_XML_BODY_MAX};
		rq.q[rq.nq++] = (struct floe_sigv4_param){"uploads", ""};
		if (prefix && *prefix)
			rq.q[rq.nq++] = (struct floe_sigv4_param){"prefix", prefix};
		if (page > 0 && *km)
			rq.q[rq.nq++] = (struct floe_sigv4_param){"key-marker", km};
		if (page > 0 && *um)
			rq.q[rq.nq++] = (struct floe_sigv4_param){"upload-id-marker", um};
		struct floe_s3_resp r = {0};
		struct counted c = {fn, ctx, 0};
		rc = floe_s3_request_run(s3, &rq, &r);
		if (rc == 0) {
			struct floe_aws_xml_markers next = {km, KEY_MARKER_MAX, um, ID_MARKER_MAX};
			struct floe_err e;
			floe_err_clear(&e);
			rc = floe_aws_xml_uploads(a, floe_s3_resp_text(&r), r.body.len, count_upload,
						  &c, &truncated, &next, &e);
			rc = floe_s3_parser_rc(rc, &e);
		}
		if (rc == 0 && truncated) {
			snprintf(both, KEY_MARKER_MAX + ID_MARKER_MAX, "%s\n%s", km, um);
			rc = floe_s3_pager_next(s3, &pager, prefix, both, c.n);
		}
		floe_s3_resp_fini(&r);
	}
	floe_s3_pager_fini(s3, &pager);
	floe_free(a, km);
	floe_free(a, um);
	floe_free(a, both);
	return rc;
}

/* Stale uploads found by the listing, aborted once it is over (the listing's pages must
 * not shift under it). Bounded: a prefix with more stale uploads is cleaned in turns. */
#define STALE_MAX 10000

struct stale {
	struct floe_alloc *a;
	int64_t cutoff;
	char **keys, **ids;
	size_t n, cap;
	int err;
};

static int collect_stale(void *ctx, const char *key, const char *upload_id, const char *initiated)
{
	struct stale *st = ctx;
	int64_t t;
	if (floe_rfc3339_unix_s(initiated, strlen(initiated), &t) != 0 || t > st->cutoff ||
	    st->n >= STALE_MAX)
		return 0;
	if (st->n == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 16;
		char **k = floe_realloc(st->a, st->keys, cap * sizeof(*k));
		if (k)
			st->keys = k;
		char **i = k ? floe_realloc(st->a, st->ids, cap * sizeof(*i)) : NULL;
		if (!k || !i)
			return FLOE_ENOMEM;
		st->ids = i;
		st->cap = cap;
	}
	char *k = floe_strdup(st->a, key), *i = floe_strdup(st->a, upload_id);
	if (!k || !i) {
		floe_free(st->a, k);
		floe_free(st->a, i);
		return FLOE_ENOMEM;
	}
	st->keys[st->n] = k;
	st->ids[st->n++] = i;
	return 0;
}

int floe_s3_abort_stale_uploads(struct floe_s3 *s3, const char *prefix, int64_t older_than_s,
				size_t *aborted)
{
	if (older_than_s < 0)
		return -EINVAL;
	if (aborted)
		*aborted = 0;
	struct stale st = {0};
	st.a = s3->o.alloc;
	st.cutoff = s3->o.now_fn(s3->o.fn_ctx) + s3->clock_offset - older_than_s;
	int rc = floe_s3_multipart_list(s3, prefix, collect_stale, &st);
	int first = rc;
	for (size_t i = 0; first == 0 && i < st.n; i++) {
		int arc = floe_s3_multipart_abort(s3, st.keys[i], st.ids[i]);
		if (arc == 0 && aborted)
			(*aborted)++;
		else if (arc && !rc)
			rc = arc; /* keep going: each stale upload costs storage */
	}
	for (size_t i = 0; i < st.n; i++) {
		floe_free(st.a, st.keys[i]);
		floe_free(st.a, st.ids[i]);
	}
	floe_free(st.a, st.keys);
	floe_free(st.a, st.ids);
	return rc;
}

int floe_s3_put_file(struct floe_s3 *s3, const char *key, const char *path,
		     const struct floe_s3_put_options *po, struct floe_s3_object_info *info)
{
	if (!floe_s3_key_ok(key) || !path)
		return -EINVAL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	struct stat st;
	int rc;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		close(fd);
		return rc;
	}
	int64_t size = (int64_t)st.st_size;
	if (size <= s3->o.multipart_threshold) {
		struct floe_s3_body b = {.fd = fd, .off = 0, .len = size};
		rc = floe_s3_put_body(s3, key, b, po, info);
		close(fd);
		return rc;
	}
	if (po && (po->if_none_match || po->if_match)) {
		close(fd); /* RGW ignores conditions on multipart completion */
		return -EINVAL;
	}
	int64_t part = s3->o.part_size;
	while ((size + part - 1) / part > FLOE_S3_MAX_PARTS)
		part *= 2;
	size_t nparts = (size_t)((size + part - 1) / part);
	struct floe_s3_part *parts = floe_calloc(s3->o.alloc, nparts, sizeof(*parts));
	char upload_id[1024] = "";
	if (!parts) {
		close(fd);
		return FLOE_ENOMEM;
	}
	rc = floe_s3_multipart_create(s3, key, upload_id, sizeof(upload_id));
	for (size_t i = 0; rc == 0 && i < nparts; i++) {
		int64_t off = (int64_t)i * part;
		int64_t len = size - off < part ? size - off : part;
		rc = floe_s3_multipart_upload_part(s3, key, upload_id, (int)i + 1, fd, off, len,
						   &parts[i]);
	}
	if (rc == 0)
		rc = floe_s3_multipart_complete(s3, key, upload_id, parts, nparts);
	else if (upload_id[0] && rc != FLOE_S3_EAMBIGUOUS) {
		/* Best effort; a crash leaves it for floe_s3_multipart_list to find. */
		int keep_status = s3->last_status;
		(void)floe_s3_multipart_abort(s3, key, upload_id);
		s3->last_status = keep_status;
	}
	/* RGW's completion answer has an empty ETag: ask for it. */
	if (rc == 0 && info)
		rc = floe_s3_head(s3, key, info);
	floe_free(s3->o.alloc, parts);
	close(fd);
	return rc;
}
