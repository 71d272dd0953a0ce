/* A small, bounded XML scanner for the documents AWS services answer with, pure over
 * (ptr, len): elements, text with the five named entities and numeric references, CDATA,
 * comments and the XML declaration. No DTDs (a DOCTYPE is an error, so no entity
 * expansion), nesting at most 32 deep, text of one element at most 8 KiB. On top of it:
 * the S3 documents floe reads (an element's text, ListObjectsV2 and ListMultipartUploads
 * pages). */
#ifndef FLOE_AWS_XML_H
#define FLOE_AWS_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;

#define FLOE_AWS_XML_MAX_DEPTH 32
#define FLOE_AWS_XML_MAX_TEXT 8192

/* open is called when an element opens, close when it closes: depth (1 = root), its local
 * name (namespace prefix dropped; not NUL-terminated), and in close its decoded text
 * (NUL-terminated; the text directly inside it, "" for elements with children only) and
 * the byte offset of its end. A non-zero return stops the walk and is returned. Either
 * function may be NULL. */
struct floe_aws_xml_handler {
	int (*open)(void *ctx, int depth, const char *name, size_t name_len);
	int (*close)(void *ctx, int depth, const char *name, size_t name_len, const char *text,
		     size_t text_len, size_t off);
	void *ctx;
};

/* Walks p[0..n) (a few KiB of scanner state come from a). Returns 0, a handler's non-zero
 * value (e untouched), FLOE_EPARSE on malformed input or FLOE_ELIMIT past the nesting or
 * text limit (e gets the byte offset and why), or FLOE_ENOMEM. */
int floe_aws_xml_walk(struct floe_alloc *a, const char *p, size_t n,
		      const struct floe_aws_xml_handler *h, struct floe_err *e);

/* The text of the first element named name (local name) anywhere in the document, into
 * out[0..cap) NUL-terminated. FLOE_ENOTFOUND if there is none, FLOE_ELIMIT if it does not
 * fit, or the walk's failure (e says why). */
int floe_aws_xml_find(struct floe_alloc *a, const char *p, size_t n, const char *name, char *out,
		      size_t cap, struct floe_err *e);

/* One page of ListObjectsV2 (ListBucketResult): fn(ctx, key, size) per <Contents> (a
 * non-zero return stops and is returned, e untouched); *truncated and next_token (cap
 * bytes) describe the continuation. A <Contents> without <Key> or with a bad <Size>, a
 * truncated page without a token, or a field too long for its buffer is FLOE_EFORMAT;
 * otherwise as floe_aws_xml_walk. */
int floe_aws_xml_list(struct floe_alloc *a, const char *p, size_t n,
		      int (*fn)(void *ctx, const char *key, int64_t size), void *ctx,
		      bool *truncated, char *next_token, size_t cap, struct floe_err *e);

/* One page of ListMultipartUploads: fn(ctx, key, upload_id, initiated) per <Upload>, and
 * the markers for the next page; as floe_aws_xml_list. */
struct floe_aws_xml_markers {
	char *key;	   /* NextKeyMarker */
	size_t key_cap;
	char *upload_id;   /* NextUploadIdMarker */
	size_t upload_id_cap;
};
int floe_aws_xml_uploads(struct floe_alloc *a, const char *p, size_t n,
			 int (*fn)(void *ctx, const char *key, const char *upload_id,
				   const char *initiated),
			 void *ctx, bool *truncated, const struct floe_aws_xml_markers *next,
			 struct floe_err *e);

/* The DeleteResult of a DeleteObjects request (xml_delete.c): fn(ctx, key, code, message)
 * per <Error> (code "?" when absent, message "" when absent; a non-zero return stops and
 * is returned, e untouched), and in *deleted (may be NULL) the number of <Deleted>
 * entries (none in quiet mode). Another root element, or an Error without a Key, is
 * FLOE_EFORMAT; otherwise as floe_aws_xml_walk. */
int floe_aws_xml_delete_result(struct floe_alloc *a, const char *p, size_t n,
			       int (*fn)(void *ctx, const char *key, const char *code, const char *message),
			       void *ctx, size_t *deleted, struct floe_err *e);

#endif
