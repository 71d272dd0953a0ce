/* Resolving env:/file: secret references. */
#include "secret.h"

#include "fs.h"

#include "formats/base/wipe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int floe_secret_resolve(const char *ref, char **out)
{
	char *v = NULL;
	size_t len = 0;
	if (strncmp(ref, "env:", 4) == 0) {
		const char *e = getenv(ref + 4);
		if (!e)
			return -ENOENT;
		len = strlen(e);
		if (!(v = malloc(len + 1)))
			return -ENOMEM;
		memcpy(v, e, len + 1);
	} else if (strncmp(ref, "file:", 5) == 0) {
		void *data = NULL;
		int rc = floe_fs_read_file(ref + 5, 64 * 1024, &data, &len);
		if (rc)
			return rc;
		if (!(v = malloc(len + 1))) {
			floe_wipe(data, len);
			floe_fs_free(data);
			return -ENOMEM;
		}
		memcpy(v, data, len);
		v[len] = '\0';
		floe_wipe(data, len);
		floe_fs_free(data);
		if (len && v[len - 1] == '\n')
			v[--len] = '\0';
		if (len && v[len - 1] == '\r')
			v[--len] = '\0';
	} else {
		return -EINVAL;
	}
	if (len == 0) {
		free(v);
		return -ENODATA;
	}
	*out = v;
	return 0;
}

void floe_secret_free(char *secret)
{
	if (!secret)
		return;
	floe_wipe(secret, strlen(secret));
	free(secret);
}
