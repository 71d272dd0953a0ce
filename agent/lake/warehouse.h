/* The configured warehouse as an object store (see warehouse.c). */
#ifndef FLOE_WAREHOUSE_H
#define FLOE_WAREHOUSE_H

#include <stdbool.h>
#include <stddef.h>

struct floe_alloc;
struct floe_config;
struct floe_err;
struct floe_store;
struct floe_s3_credprov;
struct floe_s3_to_sign;

/* Opens cfg's warehouse, whose memory (object bodies, listings, credentials) comes from a
 * (the agent's budget; borrowed, it must outlive the store). With probe, an S3 store must
 * first show that it refuses a second conditional create of a probe key (-ENOTSUP
 * otherwise). err (may be NULL) gets the code and a message for the operator on failure;
 * FLOE_EINVAL is a configuration error (an env: credential reference that does not
 * resolve, no credentials at all). A file: reference's file that cannot be used yet is
 * not: the store is opened, logged once, and its requests fail with FLOE_S3_EUNAVAILABLE
 * (waited out) until the file is there. */
int floe_warehouse_open(struct floe_alloc *a, const struct floe_config *cfg, bool probe,
			struct floe_store **out, struct floe_err *err);

/* The AWS credentials lake.s3 finds (its keys, else the sources of lake.s3.credentials:
 * the environment, the shared file, ...), for what else signs with them (a REST catalog's
 * SigV4). Errors as floe_warehouse_open's; -ENOTSUP in a build without S3. */
int floe_warehouse_credprov(struct floe_alloc *a, const struct floe_config *cfg, struct floe_s3_credprov **out,
			    struct floe_err *err);

/* What a REST catalog vends for a location's storage, in place of lake.s3's. */
struct floe_warehouse_vended {
	struct floe_s3_credprov *credprov; /* borrowed: the store takes a reference */
	const char *endpoint, *region;	   /* NULL: lake.s3's */
	int path_style;			   /* -1: lake.s3's */
	/* A signer of the catalog's (s3.remote-signing-enabled), or NULL: then no key is
	 * used at all, every request is signed by it (floe_s3_options.sign_fn). */
	int (*sign_fn)(void *ctx, const struct floe_s3_to_sign *in,
		       int (*add)(void *add_ctx, const char *name, const char *value), void *add_ctx);
	void *sign_ctx;
};

/* Opens a store at a table's location (a REST catalog gives it): a local directory
 * (file:// or an absolute path), or s3://BUCKET/PREFIX with lake.s3's endpoint, options
 * and credentials, or what the catalog vended (v, may be NULL) in their place.
 * FLOE_EUNSUPPORTED for another scheme. */
int floe_warehouse_open_location(struct floe_alloc *a, const struct floe_config *cfg, const char *location,
				 const struct floe_warehouse_vended *v, struct floe_store **out,
				 struct floe_err *err);

/* The check of floe_warehouse_open's probe on a store it opened without: an S3 store must
 * refuse a second conditional create of a probe key. 0 for a local warehouse. Stale
 * multipart uploads of the logs table are aborted after it. installation (borrowed; NULL:
 * a random key per call, as floe_warehouse_open's) names the probe key: a bucket that
 * denies DELETE keeps one probe object per installation, not one per start. */
int floe_warehouse_probe(struct floe_store *st, const struct floe_config *cfg,
			 const char *installation, struct floe_err *err);
/* Whether a failure of the store (an S3 error code) is waited out rather than stopping
 * the agent: an endpoint that cannot be reached, times out, fails TLS or answers 5xx, but
 * also refusals that only the store can tell and someone fixes there (401/403, no such
 * bucket, a redirect to another region), and a table this agent committed to missing from
 * the warehouse (FLOE_EGONE: a mount that has not come up), a local warehouse's file
 * system that is full or read-only (ENOSPC, EDQUOT, EROFS: space freed, a mount
 * remounted), and a new installation id that
 * meets its lost predecessor's commits (FLOE_ENEWID: agent.replaces to set). Not: a store that breaks the
 * protocol (refuses every conditional create, a listing without end) and a stop. */
bool floe_warehouse_waited_out(int rc);

/* What floe check can know of cfg's S3 credentials without the network: the configured
 * references resolve, and a source of lake.s3.credentials that answers from this host
 * (the environment, the shared credentials file, or a remote source that the environment
 * does not set up) gives keys. 0 when one does, or when none does but a source set up to
 * use the network (web identity with a token file, the container endpoint, IMDS) is
 * configured, which only the agent asks (*remote then says so); also 0, with err's
 * message set (code FLOE_S3_EUNAVAILABLE) for a warning, when a file: reference's file
 * cannot be used now (missing, unreadable, being written), which floe run waits for; else
 * the code and message floe run would stop with (FLOE_EINVAL for missing credentials). 0
 * for a local warehouse. */
int floe_warehouse_check_credentials(const struct floe_config *cfg, bool *remote,
				     struct floe_err *err);

#endif
