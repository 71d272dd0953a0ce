/* A small, bounded XML scanner for S3 responses, pure over (ptr, len): elements, text with
 * the five named entities and numeric references, CDATA, comments and the XML declaration.
 * No DTDs (a DOCTYPE is an error, so no entity expansion), nesting at most 32 deep, text of
 * one element at most 8 KiB. On top of it: the few S3 documents floe reads. */
#ifndef FLOE_PLATFORM_S3_XML_H
#define FLOE_PLATFORM_S3_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FLOE_S3_XML_MAX_DEPTH 32
#define FLOE_S3_XML_MAX_TEXT 8192

/* Called when an element closes: depth (1 = root), its local name (namespace prefix
 * dropped; not NUL-terminated), and its decoded text (NUL-terminated; the text directly
 * inside it, "" for elements with children only). open is called when it opens (text
 * NULL). A non-zero return stops the walk and is returned. */
struct floe_s3_xml_handler {
	int (*open)(void *ctx, int depth, const char *name, size_t name_len);
	int (*close)(void *ctx, int depth, const char *name, size_t name_len, const char *text,
		     size_t text_len);
	void *ctx;
};

/* Walks p[0..n). Returns 0, a handler's non-zero value, or FLOE_S3_EPROTO on malformed or
 * over-limit input (*err_off, if not NULL, gets the byte offset of the problem). */
int floe_s3_xml_walk(const char *p, size_t n, const struct floe_s3_xml_handler *h, size_t *err_off);

/* Text of the first element named name (local name) anywhere in the document into
 * out[0..cap) (NUL-terminated). -ENOENT if there is none, -ENOSPC if it does not fit,
 * FLOE_S3_EPROTO on malformed XML. */
int floe_s3_xml_find(const char *p, size_t n, const char *name, char *out, size_t cap);

/* One page of ListObjectsV2 (ListBucketResult): fn(ctx, key, size) per <Contents>; a
 * non-zero return stops and is returned. truncated and next_token (cap bytes) describe the
 * continuation. A <Contents> without <Key> or with a bad <Size> is FLOE_S3_EPROTO. */
int floe_s3_xml_parse_list(const char *p, size_t n,
			   int (*fn)(void *ctx, const char *key, int64_t size), void *ctx,
			   bool *truncated, char *next_token, size_t cap);

/* One page of ListMultipartUploads: fn(ctx, key, upload_id, initiated) per <Upload>, and
 * the markers for the next page. */
int floe_s3_xml_parse_uploads(const char *p, size_t n,
			      int (*fn)(void *ctx, const char *key, const char *upload_id,
					const char *initiated),
			      void *ctx, bool *truncated, char *next_key, size_t key_cap,
			      char *next_upload_id, size_t id_cap);

#endif
