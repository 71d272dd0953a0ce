/* Fuzz target for the XML scanner and the S3 documents read on it (formats/aws/xml): list
 * pages, multipart upload lists, DeleteObjects results and element lookup over any bytes, through a budget that
 * must end empty. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

static int on_key(void *ctx, const char *key, int64_t size)
{
	if (size < 0 || !key)
		__builtin_trap();
	*(size_t *)ctx += strlen(key);
	return 0;
}

static int on_upload(void *ctx, const char *key, const char *id, const char *when)
{
	*(size_t *)ctx += strlen(key) + strlen(id) + strlen(when);
	return 0;
}

static int on_error(void *ctx, const char *key, const char *code, const char *msg)
{
	if (!key || !code || !*code || !msg)
		__builtin_trap();
	*(size_t *)ctx += strlen(key);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	struct floe_alloc a;
	floe_alloc_init(&a, 1 << 20);
	struct floe_err e;
	size_t total = 0;
	bool tr;
	char k[256], u[256];
	floe_err_clear(&e);
	int rc = floe_aws_xml_list(&a, p, size, on_key, &total, &tr, k, sizeof(k), &e);
	if (rc == 0 && tr && !k[0])
		__builtin_trap(); /* a truncated page must carry its token */
	if (rc && (e.code != rc || (e.offset != FLOE_ERR_NO_OFFSET && e.offset > size)))
		__builtin_trap(); /* a failure explains itself, within the input */
	struct floe_aws_xml_markers next = {k, sizeof(k), u, sizeof(u)};
	(void)floe_aws_xml_uploads(&a, p, size, on_upload, &total, &tr, &next, NULL);
	size_t deleted = 0;
	floe_err_clear(&e);
	rc = floe_aws_xml_delete_result(&a, p, size, on_error, &total, &deleted, &e);
	if (rc && (e.code != rc || (e.offset != FLOE_ERR_NO_OFFSET && e.offset > size)))
		__builtin_trap();
	if (floe_aws_xml_find(&a, p, size, "Code", k, sizeof(k), NULL) == 0 &&
	    strlen(k) >= sizeof(k))
		__builtin_trap();
	if (a.used != 0)
		__builtin_trap();
	return 0;
}
