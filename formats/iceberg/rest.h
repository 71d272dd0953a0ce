/* The Iceberg REST catalog protocol's documents (../shared/specs/iceberg-rest/): the
 * answers floe reads (the catalog configuration, a loaded table, an OAuth2 token, an
 * error) and the requests it sends (create a namespace, create a table, commit a table),
 * and the paths they go to. Pure: JSON in, JSON out; the HTTP exchange is the caller's.
 *
 * Answers are checked, not trusted: a document of the wrong shape (a member of the
 * wrong type, a required one missing, a body over the caller's limit) is FLOE_EFORMAT,
 * FLOE_EPARSE or FLOE_ELIMIT with err naming the member, never a crash. Members the
 * protocol may add later are ignored. */
#ifndef FLOE_ICE_REST_H
#define FLOE_ICE_REST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_err;
struct floe_ice_field;
struct floe_ice_kv;
struct floe_ice_meta;
struct floe_ice_partition_field;
struct floe_ice_snapshot;
struct floe_json;

/* ---- GET /v1/config ---- */

struct floe_rest_config;

/* Parses a CatalogConfig and merges it in the spec's order: the server's defaults, then
 * the client's properties client[0..nclient) (copied), then the server's overrides. */
int floe_rest_config_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
			   const struct floe_ice_kv *client, size_t nclient,
			   struct floe_rest_config **out, struct floe_err *err);
void floe_rest_config_free(struct floe_rest_config *c);
/* A merged property (borrowed until free), or NULL. */
const char *floe_rest_config_get(const struct floe_rest_config *c, const char *key);
/* Whether the server serves endpoint, as "<VERB> <path>" with the spec's placeholders
 * ("POST /v1/{prefix}/namespaces/{namespace}/tables/{table}"). A server that lists no
 * endpoints serves the spec's default set. */
bool floe_rest_config_serves(const struct floe_rest_config *c, const char *endpoint);
/* The Idempotency-Key reuse window in ms (ISO 8601 "PT30M", "PT24H", "P1D"), or 0 when
 * the server does not support the header (or gives no window floe can read). */
int64_t floe_rest_config_idempotency_ms(const struct floe_rest_config *c);

/* ---- a LoadTableResult (GET, create, commit answers) ---- */

struct floe_rest_table;

/* Parses a LoadTableResult; its metadata goes through floe_ice_meta_parse. */
int floe_rest_table_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
			  struct floe_rest_table **out, struct floe_err *err);
/* Parses a LoadCredentialsResponse (GET .../tables/{table}/credentials) into a table
 * without metadata (floe_rest_table_metadata NULL, no config) whose storage credentials
 * answer floe_rest_table_credential, _storage and _setting as a loaded table's do. */
int floe_rest_credentials_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
				struct floe_rest_table **out, struct floe_err *err);
/* Frees t; secrets (credentials, a token) are wiped first. */
void floe_rest_table_free(struct floe_rest_table *t);
/* The metadata file's location, or NULL (a staged table). */
const char *floe_rest_table_location(const struct floe_rest_table *t);
/* The table's metadata (borrowed until free). */
struct floe_ice_meta *floe_rest_table_metadata(const struct floe_rest_table *t);
/* The table's metadata, taken: the caller owns it (floe_ice_meta_free) and t no longer
 * has it (floe_rest_table_metadata is NULL after). */
struct floe_ice_meta *floe_rest_table_take_metadata(struct floe_rest_table *t);
/* The version a metadata file's location names: N of ".../<N>-<uuid>.metadata.json" (as
 * Java's catalogs name them) or of ".../v<N>.metadata.json"; 0 when it names none (NULL,
 * another name, or a number past INT64_MAX). */
int64_t floe_rest_metadata_version(const char *location);
/* The table's remote-signing-config (checked at parse): fn(ctx, 'p', name, value) for
 * each of its properties, then fn(ctx, 'h', name, value) for each value of each of its
 * headers; fn's error stops and is returned. 0 when it has none. */
int floe_rest_table_signing(const struct floe_rest_table *t,
			    int (*fn)(void *ctx, char kind, const char *name, const char *value), void *ctx);
/* Whether the answer carried a config, storage credentials or a remote-signing-config
 * (a CommitTableResponse carries none). */
bool floe_rest_table_has_config(const struct floe_rest_table *t);
/* A property of the table's config map, or NULL. */
const char *floe_rest_table_config(const struct floe_rest_table *t, const char *key);
/* The storage credential for location: the config object (of strings) of the one whose
 * prefix is the longest prefix of location; NULL when none matches. */
const struct floe_json *floe_rest_table_credential(const struct floe_rest_table *t,
						   const char *location);
/* A storage setting for location: from the matching storage credential when one matches
 * (a key it lacks is NULL, so that one source's keys are never paired with another's),
 * else from the table's config. */
const char *floe_rest_table_storage(const struct floe_rest_table *t, const char *location,
				    const char *key);
/* A storage setting that is not a secret (s3.endpoint, the region, s3.path-style-access),
 * which any source may give on its own: the first of keys (a NULL-terminated list of the
 * spellings, the preferred first) the matching storage credential holds, else the table's
 * config, else the catalog's merged configuration conf (may be NULL); NULL when none has
 * it, and the caller's own configuration answers. */
const char *floe_rest_table_setting(const struct floe_rest_table *t, const char *location,
				    const struct floe_rest_config *conf, const char *const *keys);

/* ---- answers: errors and tokens ---- */

struct floe_rest_error {
	int code;	/* the HTTP code the body states (0 when it states none) */
	char type[96];	/* e.g. "CommitFailedException" */
	char message[512];
};

/* Parses an IcebergErrorResponse. A body that is not one leaves *out empty and returns
 * FLOE_EFORMAT: the HTTP status then speaks alone. */
int floe_rest_error_parse(const char *json, size_t len, struct floe_rest_error *out);

struct floe_rest_token {
	char *access_token;  /* owned; wiped and freed by floe_rest_token_free */
	int64_t expires_in_s; /* -1 when the server does not say */
};

/* Parses an OAuth2 token response (RFC 6749 5.1): a bearer access_token. */
int floe_rest_token_parse(struct floe_alloc *a, const char *json, size_t len,
			  struct floe_rest_token *out, struct floe_err *err);
void floe_rest_token_free(struct floe_alloc *a, struct floe_rest_token *t);

/* ---- requests ---- */

/* The path of a resource under the catalog: "/v1/" prefix "/namespaces/" ns ["/tables/"
 * table] [suffix], each namespace level and the table name percent-encoded (RFC 3986:
 * all but unreserved characters), levels joined by sep (the config's url-encoded
 * `namespace-separator`, "%1F" when NULL). An empty prefix is left out. */
int floe_rest_path(const char *prefix, const char *const *ns, size_t nns, const char *sep,
		   const char *table, const char *suffix, struct floe_buf *out);

/* A CreateNamespaceRequest for ns[0..nns). */
int floe_rest_namespace_request(const char *const *ns, size_t nns, struct floe_buf *out);

/* A CreateTableRequest: name, the schema of fields, the spec of pfields, an unsorted
 * write order, the properties; location when not NULL (else the catalog chooses). */
int floe_rest_create_request(struct floe_alloc *a, const char *name, const char *location,
			     const struct floe_ice_field *fields, size_t nfields,
			     const struct floe_ice_partition_field *pfields, size_t npfields,
			     const struct floe_ice_kv *props, size_t nprops, struct floe_buf *out);

/* A RemoteSignRequest (POST .../tables/{table}/sign): the S3 request the catalog is
 * asked to sign, each header with its one value, into out. */
struct floe_rest_header {
	const char *name;
	const char *value;
};
struct floe_rest_sign_in {
	const char *region, *uri, *method;
	const struct floe_rest_header *headers;
	size_t nheaders;
	/* The table's remote-signing-config properties, passed through unchanged. */
	const struct floe_rest_header *props;
	size_t nprops;
	/* The request's body, for one the signer must see to authorize it (S3's
	 * DeleteObjects, whose body names the keys): NULL for none. */
	const char *body;
	size_t body_len;
};
int floe_rest_sign_request(const struct floe_rest_sign_in *in, struct floe_buf *out);
/* A RemoteSignResult: checked whole (a string uri, headers an object of arrays of
 * strings), then fn is called for each header value (name, value); fn's error stops and
 * is returned. FLOE_EFORMAT (with err) for an answer of another shape. */
int floe_rest_sign_result_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
				int (*fn)(void *ctx, const char *name, const char *value), void *ctx,
				struct floe_err *err);

/* A CommitTableRequest that appends snapshot s to branch ref:
 * requirements assert-table-uuid, assert-ref-snapshot-id (null when ref_snapshot_id is
 * -1: the branch must not exist yet) and, when schema is not NULL, assert-current-schema-id
 * of base_schema_id; updates add-schema (schema, a schema object) and set-current-schema
 * (-1: the one just added) when schema is not NULL, then add-snapshot and
 * set-snapshot-ref, then remove-snapshots and set-properties when the commit expires
 * snapshots. snapshot NULL (with a schema): the schema change alone, without
 * assert-ref-snapshot-id (it does not depend on the branch's head). */
struct floe_rest_commit {
	const char *table_uuid;
	const char *ref;	 /* "main" */
	int64_t ref_snapshot_id; /* the branch head the snapshot was built on, -1: none */
	const struct floe_json *schema;
	int32_t base_schema_id;
	/* A new default partition spec: set_spec, then add_spec (the spec object; NULL when
	 * the table has it already) and spec_id (set-default-spec: -1 the spec added),
	 * asserting the default it was built on (base_spec_id). The same for the sort order. */
	bool set_spec, set_sort_order;
	const struct floe_json *add_spec, *add_sort_order;
	int32_t spec_id, base_spec_id, sort_order_id, base_sort_order_id;
	const struct floe_ice_snapshot *snapshot;
	/* With a snapshot: the snapshots its commit expires (remove-snapshots), and the
	 * table properties set with them (set-properties), none when n is 0. */
	const int64_t *remove_ids;
	size_t nremove;
	const struct floe_ice_kv *props;
	size_t nprops;
};
int floe_rest_commit_request(struct floe_alloc *a, const struct floe_rest_commit *c,
			     struct floe_buf *out);

#endif
