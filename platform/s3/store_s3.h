/* The S3 backend of the object store (platform/store.h): keys under an optional prefix in
 * one bucket, creates arbitrated by conditional PUTs. Part of the S3 client's library. */
#ifndef FLOE_PLATFORM_S3_STORE_S3_H
#define FLOE_PLATFORM_S3_STORE_S3_H

#include <stddef.h>
#include <stdint.h>

struct floe_s3_options;
struct floe_store;

/* A store over an S3 bucket (options borrowed, copied by the client) with keys under
 * prefix ("" = the bucket's root). */
int floe_store_s3_new(const struct floe_s3_options *o, const char *prefix, struct floe_store **out);

/* S3 stores only: aborts the multipart uploads under key prefix (relative to the store's
 * prefix, "" = all of it) initiated more than older_than_s seconds ago, as left by a crashed
 * run (see floe_s3_abort_stale_uploads). -EINVAL for another kind of store. */
int floe_store_s3_abort_stale_uploads(struct floe_store *s, const char *prefix,
				      int64_t older_than_s, size_t *aborted);

/* S3 stores only: floe_s3_set_max_retries on the store's client. -EINVAL for another kind
 * of store. */
int floe_store_s3_set_max_retries(struct floe_store *s, int max_retries);

/* The last failed request of an S3 store as a sentence for the operator (see
 * floe_s3_last_error): "" for another kind of store, or after a success. Valid until the
 * store's next request; same thread as the store. */
const char *floe_store_s3_last_error(const struct floe_store *s);

/* floe_s3_retry_after_ms of an S3 store's client: 0 for another kind of store. Same
 * thread as the store. */
int64_t floe_store_s3_retry_after_ms(const struct floe_store *s);

#endif
