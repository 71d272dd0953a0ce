/* What the manifest writer (manifest.c) and the manifest list writer (manifest_list.c)
 * share: writing records into an Avro object container. Private to formats/iceberg. */
#ifndef FLOE_ICE_MANIFEST_IMPL_H
#define FLOE_ICE_MANIFEST_IMPL_H

#include "formats/avro/avro.h"

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_ice_manifest_info;
struct floe_ice_part_value;

/* The partition result types a manifest's partition tuple may hold. */
enum floe_ice_part_kind { FLOE_ICE_PK_INT, FLOE_ICE_PK_DATE, FLOE_ICE_PK_LONG, FLOE_ICE_PK_STRING, FLOE_ICE_PK_TSTZ };

/* The kind of a result type name ("int", "date", ...); FLOE_EINVAL for another. */
int floe_ice_part_kind(const char *type, enum floe_ice_part_kind *k);
/* The manifest_entry schema (Java's V2Metadata) for info's partition fields, onto b. */
int floe_ice_entry_schema(const struct floe_ice_manifest_info *info, struct floe_buf *b);
/* One partition value as its optional Avro union. */
int floe_ice_put_part_value(struct floe_buf *b, enum floe_ice_part_kind k,
			    const struct floe_ice_part_value *v);
/* One ADDED manifest_entry record for a new file f (snapshot id info->snapshot_id,
 * sequence numbers null: inherited). */
int floe_ice_put_added_entry(struct floe_buf *b, const struct floe_ice_manifest_info *info,
			     const struct floe_ice_data_file *f);
/* The header metadata of a manifest for info, with schema_id and spec_id as the strings
 * it points at (caller's storage, 16 bytes each); fills meta[0..6). */
#define FLOE_ICE_MANIFEST_NMETA 6
void floe_ice_manifest_meta(const struct floe_ice_manifest_info *info, char schema_id[16],
			    char spec_id[16], struct floe_avro_meta *meta);

/* Writes an Avro container (codec null) of n records, record i encoded by put(b, ctx, i),
 * with the writer schema in schema (borrowed) and the header metadata meta, onto out.
 * On failure out is back at its old length. */
int floe_ice_manifest_write_container(struct floe_alloc *a, const struct floe_buf *schema,
				      const struct floe_avro_meta *meta, size_t nmeta,
				      const uint8_t sync[16], struct floe_buf *out, size_t n,
				      int (*put)(struct floe_buf *, const void *, size_t),
				      const void *ctx);

#endif
