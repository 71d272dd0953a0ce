/* What the manifest writer (manifest.c) and the manifest list writer (manifest_list.c)
 * share: writing records into an Avro object container. Private to formats/iceberg. */
#ifndef FLOE_ICE_MANIFEST_IMPL_H
#define FLOE_ICE_MANIFEST_IMPL_H

#include "formats/avro/avro.h"

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;

/* Writes an Avro container (codec null) of n records, record i encoded by put(b, ctx, i),
 * with the writer schema in schema (borrowed) and the header metadata meta, onto out.
 * On failure out is back at its old length. */
int floe_ice_manifest_write_container(struct floe_alloc *a, const struct floe_buf *schema,
				      const struct floe_avro_meta *meta, size_t nmeta,
				      const uint8_t sync[16], struct floe_buf *out, size_t n,
				      int (*put)(struct floe_buf *, const void *, size_t),
				      const void *ctx);

#endif
