/* A client of an Iceberg REST catalog (../shared/specs/iceberg-rest/): the catalog's
 * configuration (GET /v1/config: prefix and endpoints), namespaces and tables created when
 * absent, tables loaded with their ETag, and commits (POST .../tables/{t}) that carry their
 * requirements. Authentication by a bearer token (a secret reference, read again for every
 * request, so a rotated file is taken at once) or by OAuth2 client credentials (a token
 * asked for before the first request, again before it expires and again on 401 or 419).
 * Tokens and secrets never reach a log or an error message.
 *
 * The documents are formats/iceberg/rest.h's; the HTTP is platform/http.h's. One object
 * serves every table of the agent, on one thread at a time (the committer's, or the main
 * thread before the committer starts). */
#ifndef FLOE_CATALOG_REST_H
#define FLOE_CATALOG_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_clock;
struct floe_config;
struct floe_err;
struct floe_ice_field;
struct floe_ice_kv;
struct floe_ice_meta;
struct floe_ice_partition_field;
struct floe_rand;
struct floe_rest_commit;
struct floe_store;
struct floe_catalog_rest;

/* What floe check can know of cfg's catalog credentials without the network: the
 * reference (credential or token) resolves, and a credential holds client_id:secret.
 * FLOE_EINVAL (a configuration error) with the reference named, never its value. */
int floe_catalog_rest_check(struct floe_alloc *a, const struct floe_config *cfg, struct floe_err *err);

/* A client for cfg's lake.catalog (type rest; cfg borrowed, it must outlive the client).
 * Nothing is sent yet; the credentials are checked as floe_catalog_rest_check does. clock
 * and rand may be NULL (the system's). */
int floe_catalog_rest_new(struct floe_alloc *a, const struct floe_config *cfg,
			  const struct floe_clock *clock, const struct floe_rand *rand,
			  struct floe_catalog_rest **out, struct floe_err *err);
void floe_catalog_rest_free(struct floe_catalog_rest *c);

/* What is left (µs) of the wait the catalog asked for with its last 429 or 503
 * (Retry-After): the caller's next commit should not come sooner. 0: none. Same thread
 * as the catalog's requests. */
int64_t floe_catalog_rest_retry_after_us(const struct floe_catalog_rest *c);
/* "rest catalog https://host/path, namespace a.b" for messages (borrowed). */
const char *floe_catalog_rest_what(const struct floe_catalog_rest *c);

/* A store (owned by the caller) at a table's location: a local directory (file:// or a
 * path), or s3://BUCKET/PREFIX with lake.s3's endpoint and credentials. */
int floe_catalog_rest_open_store(struct floe_catalog_rest *c, const char *location, struct floe_store **out,
				 struct floe_err *err);

/* What a table is created with when it is absent: the schema, the partition spec and the
 * properties. The catalog assigns the ids and the location: they are read back from its
 * answer, never assumed. */
struct floe_catalog_rest_create {
	const struct floe_ice_field *fields;
	size_t nfields;
	const struct floe_ice_partition_field *pfields;
	size_t npfields;
	const struct floe_ice_kv *props;
	size_t nprops;
};

/* Loads table name into *meta (owned by the caller) and its version into *version: the
 * number the catalog's metadata file name carries (N of "<N>-<uuid>.metadata.json" or
 * "v<N>.metadata.json"), else its last-sequence-number. etag[256] holds the ETag of the
 * metadata the caller has (or ""): when the catalog answers 304 Not Modified, *meta is
 * NULL and 0 is returned; otherwise etag gets the new one. With create (not NULL), the
 * namespace and the table are created when absent. FLOE_ENOTFOUND when the table is absent
 * and create is NULL; the S3 client's codes for a catalog that cannot be reached or
 * answers 5xx (FLOE_S3_ETRANSPORT, FLOE_S3_ETIMEOUT, FLOE_S3_EUNAVAILABLE), refuses
 * the credentials (FLOE_S3_EAUTH) or breaks the protocol (FLOE_S3_EPROTO, FLOE_S3_EHTTP),
 * so that the runner waits them out as it does a store's. */
int floe_catalog_rest_load(struct floe_catalog_rest *c, const char *name,
			   const struct floe_catalog_rest_create *create, char etag[256],
			   struct floe_ice_meta **meta, int64_t *version, struct floe_err *err);

/* Commits cm to table name: 0 with the new metadata in *meta (owned by the caller), its
 * version in *version and the answer's ETag in etag (empty when the catalog sent none:
 * the OpenAPI document gives a CommitTableResponse one, so that the committer's next load
 * can be a 304),
 * FLOE_ECONFLICT when a requirement failed (409: reload and rebuild). A failure after
 * the request was sent (a 5xx, a timeout, a cut connection) leaves the outcome unknown:
 * *unknown is set, and the caller must reload and look for its snapshot before anything
 * else. */
int floe_catalog_rest_commit(struct floe_catalog_rest *c, const char *name,
			     const struct floe_rest_commit *cm, char etag[256], struct floe_ice_meta **meta,
			     int64_t *version, bool *unknown, struct floe_err *err);

#endif
