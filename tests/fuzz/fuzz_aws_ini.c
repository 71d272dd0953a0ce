/* Fuzz target for the shared-credentials INI reader (formats/aws/ini): any bytes, for the
 * default profile and for a profile named by the input's first line, through a budget
 * that must end empty. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "formats/aws/credentials.h"
#include "formats/aws/ini.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 8 << 20);
	struct floe_aws_credentials c = {0};
	struct floe_err e;
	floe_err_clear(&e);
	int rc = floe_aws_ini_credentials(&a, (const char *)data, size, NULL, &c, &e);
	if (rc == 0) {
		/* Success promises both keys, non-empty. */
		if (!c.access_key_id || !*c.access_key_id || !c.secret_access_key ||
		    !*c.secret_access_key)
			__builtin_trap();
		floe_aws_credentials_fini(&c);
	} else if (e.code != rc || (e.offset != FLOE_ERR_NO_OFFSET && e.offset > size)) {
		__builtin_trap();
	}
	char profile[32];
	size_t n = 0;
	while (n < size && n < sizeof(profile) - 1 && data[n] != '\n' && data[n] != 0) {
		profile[n] = (char)data[n];
		n++;
	}
	profile[n] = 0;
	if (floe_aws_ini_credentials(&a, (const char *)data, size, profile, &c, NULL) == 0)
		floe_aws_credentials_fini(&c);
	if (a.used != 0)
		__builtin_trap();
	return 0;
}
