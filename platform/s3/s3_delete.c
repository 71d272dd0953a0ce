/* DeleteObjects (POST /?delete): up to 1000 keys per request instead of a DELETE each,
 * for expiry's cleanup of manifests, lists and data files. S3 requires the body's
 * Content-MD5 (or an x-amz-checksum-*) on this call; Content-MD5 is the one every
 * implementation (AWS, RGW, MinIO) checks. Quiet mode: the answer lists only the keys
 * that failed. */
#include "platform/s3/s3_request.h"

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <errno.h>
#include <mbedtls/base64.h>
#include <mbedtls/md.h>
#include <stdio.h>
#include <string.h>

/* XML 1.0 cannot carry these bytes, even escaped: such a key needs its own DELETE. */
static bool xml_safe(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\n' && *s != '\r')
			return false;
	return true;
}

static int put_key(struct floe_buf *b, const char *s)
{
	int rc = floe_buf_puts(b, "<Object><Key>");
	for (; *s && rc == 0; s++)
		rc = *s == '&'	 ? floe_buf_puts(b, "&amp;")
		     : *s == '<' ? floe_buf_puts(b, "&lt;")
		     : *s == '>' ? floe_buf_puts(b, "&gt;")
		     : *s == '\r' ? floe_buf_puts(b, "&#13;")
				  : floe_buf_putc(b, (uint8_t)*s);
	return rc ? rc : floe_buf_puts(b, "</Key></Object>");
}

/* base64(MD5(p[0..n))) into out. */
static int content_md5(const void *p, size_t n, char out[32])
{
	unsigned char md5[16];
	size_t olen = 0;
	const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_MD5);
	if (!md || mbedtls_md(md, p, n, md5) != 0 ||
	    mbedtls_base64_encode((unsigned char *)out, 32, &olen, md5, sizeof(md5)) != 0)
		return -EIO;
	return 0;
}

struct counted {
	int (*fn)(void *ctx, const char *key, const char *code, const char *message);
	void *ctx;
	size_t failed;
};

static int count_error(void *ctx, const char *key, const char *code, const char *message)
{
	struct counted *c = ctx;
	c->failed++;
	return c->fn ? c->fn(c->ctx, key, code, message) : 0;
}

/* One request for keys[0..n) (n <= 1000, every key XML-safe). */
static int delete_batch(struct floe_s3 *s3, const char *const *keys, size_t n, struct counted *c)
{
	struct floe_buf doc;
	/* A key of at most 1024 bytes, escaped to at most five times that, in its markup. */
	floe_buf_init(&doc, s3->o.alloc, n * (5 * 1024 + 32) + 128);
	int rc = floe_buf_puts(&doc, "<Delete xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"><Quiet>true</Quiet>");
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = put_key(&doc, keys[i]);
	if (rc == 0)
		rc = floe_buf_puts(&doc, "</Delete>");
	char md5[32];
	if (rc == 0)
		rc = content_md5(doc.data, doc.len, md5);
	if (rc) {
		floe_buf_fini(&doc);
		return rc;
	}
	struct floe_s3_req rq = {.method = "POST", .max = FLOE_S3_XML_BODY_MAX, .has_body = true};
	rq.body = (struct floe_s3_body){.mem = doc.data, .fd = -1, .len = (int64_t)doc.len};
	rq.q[rq.nq++] = (struct floe_sigv4_param){"delete", ""};
	rq.h[rq.nh++] = (struct floe_sigv4_header){"content-md5", md5};
	rq.h[rq.nh++] = (struct floe_sigv4_header){"content-type", "application/xml"};
	struct floe_s3_resp r = {0};
	rc = floe_s3_request_run(s3, &rq, &r);
	/* Not implemented by this server (some gateways): the caller deletes one by one. */
	if (rc && (s3->last_status == 501 || strcmp(s3->last_code, "NotImplemented") == 0))
		rc = -ENOTSUP;
	if (rc == 0 && r.body.len) {
		struct floe_err e = {0};
		rc = floe_s3_parser_rc(floe_aws_xml_delete_result(s3->o.alloc, floe_s3_resp_text(&r), r.body.len,
								  count_error, c, NULL, &e),
				       &e);
	}
	floe_s3_resp_fini(&r);
	floe_buf_fini(&doc);
	return rc;
}

int floe_s3_delete_objects(struct floe_s3 *s3, const char *const *keys, size_t n,
			   int (*on_error)(void *ctx, const char *key, const char *code, const char *message),
			   void *ctx, size_t *failed)
{
	struct counted c = {on_error, ctx, 0};
	const char *batch[FLOE_S3_DELETE_MAX];
	size_t nb = 0;
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (!floe_s3_key_ok(keys[i]))
			return -EINVAL;
		if (!xml_safe(keys[i])) {
			if ((rc = floe_s3_delete(s3, keys[i])) && on_error) {
				c.failed++;
				rc = on_error(ctx, keys[i], floe_s3_last_error_code(s3), floe_strerror(rc));
			}
			continue;
		}
		batch[nb++] = keys[i];
		if (nb == FLOE_S3_DELETE_MAX || i + 1 == n) {
			rc = delete_batch(s3, batch, nb, &c);
			nb = 0;
		}
	}
	if (rc == 0 && nb)
		rc = delete_batch(s3, batch, nb, &c);
	if (failed)
		*failed = c.failed;
	return rc;
}
