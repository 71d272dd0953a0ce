/* AWS credentials from the environment and the shared credentials file (see
 * s3_credentials.h). */
#include "platform/s3/s3_credentials.h"

#include "formats/aws/ini.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"
#include "platform/fs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE (1024 * 1024)

int floe_s3_credentials_from_env(struct floe_alloc *a, struct floe_aws_credentials *out)
{
	const char *ak = getenv("AWS_ACCESS_KEY_ID");
	const char *sk = getenv("AWS_SECRET_ACCESS_KEY");
	if (!ak || !*ak || !sk || !*sk)
		return -ENOENT;
	return floe_aws_credentials_set(a, ak, sk, getenv("AWS_SESSION_TOKEN"), out);
}

int floe_s3_credentials_from_shared_file(struct floe_alloc *a, const char *path,
					 const char *profile, struct floe_aws_credentials *out)
{
	char *owned_path = NULL;
	if (!path || !*path) {
		path = getenv("AWS_SHARED_CREDENTIALS_FILE");
		if (!path || !*path) {
			const char *home = getenv("HOME");
			if (!home || !*home)
				return -ENOENT;
			if (!(owned_path = floe_malloc(a, strlen(home) + sizeof("/.aws/credentials"))))
				return FLOE_ENOMEM;
			strcpy(owned_path, home);
			strcat(owned_path, "/.aws/credentials");
			path = owned_path;
		}
	}
	if (!profile || !*profile) {
		profile = getenv("AWS_PROFILE");
		if (!profile || !*profile)
			profile = "default";
	}
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(a, path, MAX_FILE, &data, &len);
	floe_free(a, owned_path);
	if (rc)
		return rc;
	rc = floe_aws_ini_credentials(a, data, len, profile, out, NULL);
	/* The file holds secrets: wipe our copy before giving the memory back. */
	floe_wipe_free(a, data);
	return rc == FLOE_ENOTFOUND ? -ENOENT : rc == FLOE_EPARSE || rc == FLOE_ELIMIT ? -EINVAL : rc;
}
