/* Named crash points driven by FLOE_CRASH_AT. */
#include "crash.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void floe_crashpoint(const char *name)
{
	const char *at = getenv("FLOE_CRASH_AT");
	if (at && strcmp(at, name) == 0) {
		fprintf(stderr, "floe: crash point %s reached, exiting\n", name);
		_exit(99);
	}
}
