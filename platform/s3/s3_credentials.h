/* AWS credentials for the S3 client from the environment and from the shared credentials
 * file (~/.aws/credentials) with its profile; the file is read here and parsed by
 * formats/aws/ini. Secrets are never logged; their memory is wiped when freed. */
#ifndef FLOE_PLATFORM_S3_CREDENTIALS_H
#define FLOE_PLATFORM_S3_CREDENTIALS_H

#include "formats/aws/credentials.h"

#include <stddef.h>

/* AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and optional AWS_SESSION_TOKEN, as owned
 * copies from a (floe_aws_credentials_fini). -ENOENT if either key is unset or empty,
 * FLOE_ENOMEM. *out is filled only on success. */
int floe_s3_credentials_from_env(struct floe_alloc *a, struct floe_aws_credentials *out);

/* Profile profile (NULL: $AWS_PROFILE, else "default") of the credentials file path (NULL:
 * $AWS_SHARED_CREDENTIALS_FILE, else $HOME/.aws/credentials), read and held in memory from
 * a. -ENOENT if the file, the profile or one of its two keys is missing; -EINVAL on a
 * syntax error. */
int floe_s3_credentials_from_shared_file(struct floe_alloc *a, const char *path,
					 const char *profile, struct floe_aws_credentials *out);

#endif
