/* Fuzz target for the S3 XML scanner and its readers (platform/s3_xml): list pages,
 * multipart upload lists and element lookup over any bytes. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "platform/s3_xml.h"

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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	size_t total = 0;
	bool tr;
	char a[256], b[256];
	if (floe_s3_xml_parse_list(p, size, on_key, &total, &tr, a, sizeof(a)) == 0 && tr && !a[0])
		__builtin_trap(); /* a truncated page must carry its token */
	(void)floe_s3_xml_parse_uploads(p, size, on_upload, &total, &tr, a, sizeof(a), b,
					sizeof(b));
	if (floe_s3_xml_find(p, size, "Code", a, sizeof(a)) == 0 && strlen(a) >= sizeof(a))
		__builtin_trap();
	return 0;
}
