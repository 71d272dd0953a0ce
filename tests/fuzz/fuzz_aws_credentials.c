/* Fuzz target for the credential documents (formats/aws/credentials): the container and
 * IMDS JSON reader and the STS XML reader over any bytes, and the RFC 3339 parser their
 * Expiration goes through, through a budget that must end empty. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "formats/aws/credentials.h"
#include "formats/base/alloc.h"
#include "formats/base/rfc3339.h"
#include "formats/base/error.h"

static void check(int rc, const struct floe_aws_credentials *c, const struct floe_err *e,
		  size_t size)
{
	if (rc == 0 && (!c->access_key_id || !*c->access_key_id || !c->secret_access_key ||
			!*c->secret_access_key))
		__builtin_trap(); /* success promises both keys, non-empty */
	if (rc && (e->code != rc || (e->offset != FLOE_ERR_NO_OFFSET && e->offset > size)))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *p = (const char *)data;
	struct floe_alloc a;
	floe_alloc_init(&a, 4 << 20);
	struct floe_aws_credentials c = {0};
	struct floe_err e;
	int64_t exp;
	floe_err_clear(&e);
	int rc = floe_aws_cred_json(&a, p, size, &c, &exp, &e);
	check(rc, &c, &e, size);
	floe_aws_credentials_fini(&c);
	floe_err_clear(&e);
	rc = floe_aws_cred_sts(&a, p, size, &c, &exp, &e);
	check(rc, &c, &e, size);
	floe_aws_credentials_fini(&c);
	int64_t t;
	if (floe_rfc3339_unix_s(p, size, &t) == 0 && size < 20)
		__builtin_trap();
	if (a.used != 0)
		__builtin_trap();
	return 0;
}
