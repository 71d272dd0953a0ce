/* Resolving env:/file: secret references. */
#include "secret.h"

#include "fs.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int floe_secret_read_file(struct floe_alloc *a, const char *path, char **out)
{
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(a, path, 64 * 1024, &data, &len);
	if (rc)
		return rc;
	char *v = floe_strndup(a, data, len);
	floe_wipe_free(a, data);
	if (!v)
		return FLOE_ENOMEM;
	if (len && v[len - 1] == '\n')
		v[--len] = '\0';
	if (len && v[len - 1] == '\r')
		v[--len] = '\0';
	/* A NUL byte would cut the value short for every user of it, silently: a file of
	 * zeros (a power cut during its write) is not a secret. */
	int bad = len == 0 ? -ENODATA : memchr(v, '\0', len) ? -EILSEQ : 0;
	if (bad) {
		floe_wipe_free(a, v);
		return bad;
	}
	*out = v;
	return 0;
}

int floe_secret_resolve(struct floe_alloc *a, const char *ref, char **out)
{
	if (strncmp(ref, "file:", 5) == 0)
		return floe_secret_read_file(a, ref + 5, out);
	if (strncmp(ref, "env:", 4) != 0)
		return -EINVAL;
	const char *e = getenv(ref + 4);
	if (!e)
		return -ENOENT;
	size_t len = strlen(e);
	if (len == 0)
		return -ENODATA;
	char *v = floe_strndup(a, e, len);
	if (!v)
		return FLOE_ENOMEM;
	*out = v;
	return 0;
}

void floe_secret_free(struct floe_alloc *a, char *secret)
{
	floe_wipe_free(a, secret);
}
