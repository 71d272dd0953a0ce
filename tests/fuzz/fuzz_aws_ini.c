/* Fuzz target for the shared-credentials INI parser (platform/s3_credentials): any bytes,
 * for the default profile and for a profile named by the input's first line. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "platform/s3_credentials.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_s3_credentials c = {0};
	size_t line = 0;
	if (floe_s3_credentials_parse_ini((const char *)data, size, NULL, &c, &line) == 0) {
		/* Success promises both keys, non-empty. */
		if (!c.access_key_id || !*c.access_key_id || !c.secret_access_key ||
		    !*c.secret_access_key)
			__builtin_trap();
		floe_s3_credentials_fini(&c);
	}
	char profile[32];
	size_t n = 0;
	while (n < size && n < sizeof(profile) - 1 && data[n] != '\n' && data[n] != 0) {
		profile[n] = (char)data[n];
		n++;
	}
	profile[n] = 0;
	if (floe_s3_credentials_parse_ini((const char *)data, size, profile, &c, &line) == 0)
		floe_s3_credentials_fini(&c);
	return 0;
}
