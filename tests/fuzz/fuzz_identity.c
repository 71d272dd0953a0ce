/* Fuzz target: the installation file's payload (the JSON inside state_dir/installation).
 * Any input must decode or fail cleanly; a decoded identity must hold valid fields and
 * encode to what decodes to the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/state/identity.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	floe_alloc_init(&a, 16u << 20);
	struct floe_identity id, again;
	if (floe_identity_decode(&a, (const char *)data, size, &id) == 0) {
		if (strlen(id.installation) != 36 || strlen(id.machine) > 16 || strlen(id.legacy_agent_id) > 64)
			abort();
		struct floe_buf b;
		floe_buf_init(&b, &a, 4096);
		if (floe_identity_encode(&id, &b) != 0 ||
		    floe_identity_decode(&a, (const char *)b.data, b.len, &again) != 0 ||
		    memcmp(&id, &again, sizeof(id)) != 0)
			abort();
		floe_buf_fini(&b);
	}
	if (a.used != 0)
		abort(); /* every path must release what it took */
	return 0;
}
