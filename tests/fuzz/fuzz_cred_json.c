/* Fuzz target for the credential document readers (platform/s3_cred_json): the JSON string
 * member extractor over any bytes, with fields of several sizes, and the ISO 8601 parser. */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "formats/base/civil.h"
#include "platform/s3.h"
#include "platform/s3_cred_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	static const char *const names[] = {
	    "AccessKeyId", "SecretAccessKey", "Token", "Expiration", "Code", ""};
	char out[64];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (size_t cap = 1; cap <= sizeof(out); cap *= 4) {
			size_t off = 0;
			int rc = floe_s3_cred_json_string(p, size, names[i], out, cap, &off);
			if (rc == 0 && strlen(out) >= cap)
				__builtin_trap(); /* success promises a terminated fit */
			if (rc == FLOE_S3_EPROTO && off > size)
				__builtin_trap();
			if (rc != 0 && rc != -ENOENT && rc != -ENOSPC && rc != -EINVAL &&
			    rc != FLOE_S3_EPROTO)
				__builtin_trap();
			if (rc == 0) {
				int64_t t;
				(void)floe_civil_parse_rfc3339(out, strlen(out), &t);
			}
		}
	}
	int64_t t;
	if (floe_civil_parse_rfc3339(p, size, &t) == 0 && size < 20)
		__builtin_trap();
	return 0;
}
