/* floe_strerror: one table for floe's own codes, strerror() for -errno. */
#include "error.h"

#include <string.h>

static const char *const messages[] = {
	[0] = "unknown floe error",
	[1] = "out of memory or memory budget exhausted",
	[2] = "size or count limit exceeded",
	[3] = "invalid argument",
	[4] = "malformed input",
	[5] = "format rule violated",
	[6] = "unsupported feature or version",
	[7] = "commit conflict",
	[8] = "compression codec error",
	[9] = "corrupt state (bad checksum or magic)",
	[10] = "incompatible table schema",
	[11] = "not found",
	[12] = "already exists",
};

const char *floe_strerror(int code)
{
	if (code == 0)
		return "success";
	if (code < 0 && code > FLOE_EBASE)
		return strerror(-code);
	if (code <= FLOE_EBASE && code > FLOE_ELAST)
		return messages[FLOE_EBASE - code];
	return messages[0];
}
