/* A chain of AWS credential providers in the SDKs' order: static (the agent's resolved
 * configuration), environment, web identity (STS AssumeRoleWithWebIdentity), the shared
 * credentials file, the container endpoint (ECS/EKS) and EC2 instance metadata (IMDSv2).
 * Temporary credentials are cached and refreshed when they expire within a margin. One
 * provider may serve several clients and threads (reference counted, locked). Secrets are
 * never logged, never put in error messages, and wiped when freed. */
#ifndef FLOE_PLATFORM_S3_CREDPROV_H
#define FLOE_PLATFORM_S3_CREDPROV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/base/error.h"
#include "platform/s3/s3_credentials.h"

/* Which providers run (bits of floe_s3_credprov_options.providers), in chain order. */
enum {
	FLOE_S3_CREDPROV_STATIC = 1 << 0,
	FLOE_S3_CREDPROV_ENV = 1 << 1,
	FLOE_S3_CREDPROV_WEB_IDENTITY = 1 << 2,
	FLOE_S3_CREDPROV_SHARED_FILE = 1 << 3,
	FLOE_S3_CREDPROV_CONTAINER = 1 << 4,
	FLOE_S3_CREDPROV_IMDS = 1 << 5,
	FLOE_S3_CREDPROV_ALL = (1 << 6) - 1,
};

/* Every string is borrowed and copied by floe_s3_credprov_new. NULL means "from the
 * environment variable named", as the AWS SDKs read it, at each refresh. */
struct floe_s3_credprov_options {
	/* Where every allocation of the provider comes from, credential documents included:
	 * the agent's budget (borrowed; it must outlive the provider; NULL: unbudgeted). */
	struct floe_alloc *alloc;
	unsigned providers; /* FLOE_S3_CREDPROV_* bits; 0: all */
	/* The order the providers run in: single FLOE_S3_CREDPROV_* bits, up to a 0 or six of
	 * them; order[0] == 0: the SDKs' order above. Providers not in providers are
	 * skipped; those in providers but not here run after these, in the SDKs' order. */
	unsigned order[6];
	/* Static credentials (already resolved from the configuration's references); NULL or
	 * empty keys: that provider is skipped. They never expire. */
	const struct floe_aws_credentials *static_credentials;
	/* The configuration's references they were resolved from (file:/path or env:NAME:
	 * access key, secret, session token; NULL: none), resolved again after the store
	 * refused the keys (floe_s3_credprov_invalidate): a key rotated in its file is
	 * taken without a restart. */
	const char *static_refs[3];
	/* Shared credentials file: AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials;
	 * profile: AWS_PROFILE or "default". */
	const char *shared_file, *profile;
	/* Web identity: AWS_WEB_IDENTITY_TOKEN_FILE, AWS_ROLE_ARN, AWS_ROLE_SESSION_NAME (else
	 * "floe-<unix time>"). sts_endpoint: AWS_ENDPOINT_URL_STS, else
	 * https://sts.<sts_region>.amazonaws.com; sts_region: AWS_REGION, AWS_DEFAULT_REGION,
	 * else "us-east-1". The token file is read again at every refresh (it rotates). */
	const char *web_identity_token_file, *role_arn, *role_session_name;
	const char *sts_endpoint, *sts_region;
	/* Container: AWS_CONTAINER_CREDENTIALS_FULL_URI, or AWS_CONTAINER_CREDENTIALS_RELATIVE_URI
	 * appended to container_host (NULL: "http://169.254.170.2"); the Authorization header
	 * from AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE (read at each refresh) or
	 * AWS_CONTAINER_AUTHORIZATION_TOKEN. A full URI over plain http must name a loopback
	 * address or one of the ECS/EKS link-local agents. */
	const char *container_full_uri, *container_relative_uri, *container_host;
	const char *container_auth_token, *container_auth_token_file;
	/* IMDSv2: AWS_EC2_METADATA_SERVICE_ENDPOINT, else "http://169.254.169.254"; disabled by
	 * AWS_EC2_METADATA_DISABLED=true (or imds_disabled). */
	const char *imds_endpoint;
	bool imds_disabled;
	const char *ca_file; /* for https endpoints (STS); NULL: the system's bundle */
	/* Timeouts of the metadata endpoints (container, IMDS), whose absence should cost
	 * little: connect 0: 1 s, whole request 0: 3 s. STS: connect 0: 5 s, request 0: 15 s. */
	int64_t metadata_connect_timeout_ms, metadata_timeout_ms;
	int64_t sts_connect_timeout_ms, sts_timeout_ms;
	int64_t refresh_margin_s; /* refresh when expiring within this; 0: 300 (5 minutes) */
	/* After a stop request, a fetch in flight is cut and none is started once
	 * stop_grace_ms have passed (0: 2 s); get then fails with FLOE_S3_ESTOPPED. */
	int64_t stop_grace_ms;
	int64_t (*stop_fn)(void *ctx); /* floe_s3_stop_fn; NULL: floe_signal_stop_age_ms */
	void *stop_ctx;
};

struct floe_s3_credprov;

/* Creates a provider holding one reference (floe_s3_credprov_free). Resolves nothing yet:
 * the first floe_s3_credprov_get does. -ENOMEM, -EINVAL (bad providers bits). */
int floe_s3_credprov_new(const struct floe_s3_credprov_options *o, struct floe_s3_credprov **out);
/* Takes another reference (a client holding the provider does); returns p. */
struct floe_s3_credprov *floe_s3_credprov_ref(struct floe_s3_credprov *p);
/* Drops a reference; the last one frees (wiping secrets). NULL is fine. */
void floe_s3_credprov_free(struct floe_s3_credprov *p);

/* Current credentials at unix time now (seconds, ideally corrected to the server's clock):
 * the cached ones unless they expire within the margin, else the chain runs (first the
 * provider that served last; if its refresh fails while the cached credentials have not
 * yet expired, those are kept). *out gets owned copies (floe_aws_credentials_fini); on
 * failure it is left as it was. *expiration, if not NULL, gets their expiry (0: never).
 * Returns 0; FLOE_S3_EAUTH when no provider produced credentials (e, if not NULL, gets
 * every provider tried and its reason, e.g. "env: AWS_ACCESS_KEY_ID or ... is not set;
 * web-identity: ...", never a secret); FLOE_S3_EUNAVAILABLE when a configured remote
 * provider (STS, container) could not be reached, so that trying later may succeed;
 * FLOE_S3_ESTOPPED after a stop (see stop_grace_ms); FLOE_ENOMEM. */
int floe_s3_credprov_get(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *out,
			 int64_t *expiration, struct floe_err *e);
/* Replaces the static credentials with copies of c, which expire at expiration (unix
 * seconds; 0: never), as a catalog vends them; a get after this returns them. 0,
 * -ENOENT (a key unset or empty: nothing changes), FLOE_ENOMEM. */
int floe_s3_credprov_set_static(struct floe_s3_credprov *p, const struct floe_aws_credentials *c,
				int64_t expiration);
/* Forgets the cached credentials so that the next get runs the chain (after the server
 * answered ExpiredToken, say). */
void floe_s3_credprov_invalidate(struct floe_s3_credprov *p);
/* The name of the provider that served the cached credentials ("static", "env",
 * "web-identity", "shared-file", "container", "imds"), or "" if none. */
const char *floe_s3_credprov_source(struct floe_s3_credprov *p);
/* Of providers (FLOE_S3_CREDPROV_* bits), those that the environment sets up to ask the
 * network: web identity with a token file (STS), the container endpoint when its URI is
 * set, IMDS unless AWS_EC2_METADATA_DISABLED=true. The others answer from this host
 * alone (floe check runs only those). */
unsigned floe_s3_credprov_networked(unsigned providers);
/* Why the last chain run failed, as floe_s3_credprov_get reported it (code 0 and an empty
 * message after a success): for the client of a request that failed with
 * FLOE_S3_EAUTH. */
void floe_s3_credprov_error(struct floe_s3_credprov *p, struct floe_err *e);

#endif
