/* Resolving env:/file: secret references. */
#include "secret.h"

#include "fs.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int floe_secret_resolve(struct floe_alloc *a, const char *ref, char **out)
{
	char *v = NULL;
	size_t len = 0;
	if (strncmp(ref, "env:", 4) == 0) {
		const char *e = getenv(ref + 4);
		if (!e)
			return -ENOENT;
		len = strlen(e);
		if (!(v = floe_strndup(a, e, len)))
			return FLOE_ENOMEM;
	} else if (strncmp(ref, "file:", 5) == 0) {
		void *data = NULL;
		int rc = floe_fs_read_file(a, ref + 5, 64 * 1024, &data, &len);
		if (rc)
			return rc;
		v = floe_strndup(a, data, len);
		floe_wipe_free(a, data);
		if (!v)
			return FLOE_ENOMEM;
		if (len && v[len - 1] == '\n')
			v[--len] = '\0';
		if (len && v[len - 1] == '\r')
			v[--len] = '\0';
	} else {
		return -EINVAL;
	}
	if (len == 0) {
		floe_wipe_free(a, v);
		return -ENODATA;
	}
	*out = v;
	return 0;
}

void floe_secret_free(struct floe_alloc *a, char *secret)
{
	floe_wipe_free(a, secret);
}
