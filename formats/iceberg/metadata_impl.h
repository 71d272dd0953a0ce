/* The Iceberg table metadata's model, shared by metadata.c (reading: parsing, validation,
 * accessors) and metadata_build.c (writing: a new table, a new snapshot). Private to
 * formats/iceberg. */
#ifndef FLOE_ICE_METADATA_IMPL_H
#define FLOE_ICE_METADATA_IMPL_H

#include "formats/iceberg/metadata.h"

#include <stdint.h>

struct floe_json_doc;

/* What floe reads from the document, checked once per root. */
struct floe_ice_view {
	struct floe_json *root;
	int format_version;
	const char *uuid; /* NULL in v1 tables without one */
	const char *location;
	int64_t last_seq;
	int64_t last_updated_ms;
	int64_t current_snapshot_id; /* -1: none */
	int32_t current_schema_id;
	int32_t default_spec_id;
	struct floe_json *schema;      /* object */
	struct floe_json *spec_fields; /* array */
	struct floe_json *snapshots;   /* array, or NULL when absent */
	const char *bad; /* after FLOE_EFORMAT: the member found missing or wrong, for messages */
};

struct floe_ice_meta {
	struct floe_alloc *a; /* borrowed */
	struct floe_json_doc *doc;
	struct floe_ice_view v;
};

/* Fills v from root (borrowed; v points into it), or fails with FLOE_EFORMAT (v->bad
 * naming the member) / FLOE_EUNSUPPORTED. */
int floe_ice_meta_index(struct floe_ice_view *v, struct floe_json *root);

/* A new object with the members of src (may be NULL) in order, and a new array with the
 * items of src from index from; values are shared (metadata_build.c). NULL without
 * memory. */
struct floe_json *floe_ice_json_copy_object(struct floe_json_doc *d, const struct floe_json *src);
struct floe_json *floe_ice_json_copy_array(struct floe_json_doc *d, const struct floe_json *src,
					  size_t from);

/* Makes root (a copy of m's root, changed) m's: appends prev_metadata_location (NULL:
 * none) to its metadata-log (max_log entries kept), sets last-updated-ms to now_ms and
 * re-indexes; m is unchanged on failure (metadata_build.c). */
int floe_ice_meta_set_new_root(struct floe_ice_meta *m, struct floe_json *root,
			       const char *prev_metadata_location, int64_t now_ms, size_t max_log);

/* Snapshot s as the metadata's snapshots list holds it (metadata_build.c; the REST
 * catalog's add-snapshot update carries the same object). */
int floe_ice_snapshot_json(struct floe_json_doc *d, const struct floe_ice_snapshot *s,
			   struct floe_json **out);

#endif
