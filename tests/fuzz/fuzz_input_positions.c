/* Fuzz target: the position blobs of the syslog and journal inputs, as a checkpoint or a
 * spool entry gives them back (agent/input/syslog_in.h, journal_in.h). A blob is either
 * refused or read; a cursor read is within the blob, NUL-free and below the limit. */
#include "agent/input/journal_in.h"
#include "agent/input/syslog_in.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* An exact-size copy, so that a read past the end is caught by ASan. */
	uint8_t *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	uint64_t taken;
	(void)floe_syslog_in_blob_taken(p, size, &taken);
	const char *c = NULL;
	size_t n = 0;
	if (floe_journal_in_blob_cursor(p, size, &c, &n) == 0) {
		if (c < (const char *)p || n > size || c + n > (const char *)p + size ||
		    n >= FLOE_JOURNAL_CURSOR_MAX || memchr(c, 0, n))
			abort();
	}
	free(p);
	return 0;
}
