/* Fuzz target for the configuration parser: any bytes must give a config or an error
 * message, never a crash or a leak; a config that parses must dump to YAML that parses
 * back to the same dump (the dump is the effective configuration users see). The
 * state_dir peek (of a file that may not parse) gives a terminated path or nothing. */
#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_alloc a;
	struct floe_config *c = NULL, *c2 = NULL;
	struct floe_buf b1, b2;
	struct floe_err err = {0};

	char dir[64];
	int prc = floe_config_peek_state_dir((const char *)data, size, dir, sizeof(dir));
	if (prc == 0 && (dir[0] == '\0' || strnlen(dir, sizeof(dir)) == sizeof(dir)))
		abort();
	if (prc != 0 && prc != FLOE_ENOTFOUND && prc != FLOE_EINVAL && prc != FLOE_ENOMEM)
		abort();
	floe_alloc_init(&a, 64u << 20);
	floe_buf_init(&b1, &a, 1u << 20);
	floe_buf_init(&b2, &a, 1u << 20);
	if (floe_config_parse(&a, "fuzz.yaml", (const char *)data, size, "fuzz-host", &c, &err) ==
	    0) {
		if (floe_config_dump(c, &b1) != 0)
			abort();
		if (floe_config_parse(&a, "dump.yaml", (const char *)b1.data, b1.len, "other-host",
				      &c2, &err) != 0)
			abort();
		/* The first line names the file, so compare from the second. */
		if (floe_config_dump(c2, &b2) != 0)
			abort();
		const uint8_t *p1 = memchr(b1.data, '\n', b1.len),
			      *p2 = memchr(b2.data, '\n', b2.len);
		if (!p1 || !p2 ||
		    b1.len - (size_t)(p1 - b1.data) != b2.len - (size_t)(p2 - b2.data) ||
		    memcmp(p1, p2, b1.len - (size_t)(p1 - b1.data)) != 0)
			abort();
	} else if (err.msg[0] == '\0' || strchr(err.msg, '\n') || err.code == 0) {
		abort(); /* every failure explains itself in one line */
	}
	floe_config_free(c);
	floe_config_free(c2);
	floe_buf_fini(&b1);
	floe_buf_fini(&b2);
	if (a.used != 0)
		abort();
	return 0;
}
