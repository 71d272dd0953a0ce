/* A table's partition spec as floe applies it: which record column each partition field
 * reads, its transform, the value it gives a record, the data-file directory it names
 * (ts_day=2026-12-02/host=edge-1) and the types its manifests declare. Specs come from the
 * configuration (new tables) or from an existing table's metadata (which always wins). */
#ifndef FLOE_PARTITION_H
#define FLOE_PARTITION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/iceberg/manifest.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/transform.h"

struct floe_err;
struct floe_json;
struct floe_record;

#define FLOE_PART_MAX 8
#define FLOE_PART_STR_MAX 256

struct floe_part_field {
	int32_t source_id;
	int32_t field_id;
	char name[64];
	struct floe_ice_transform transform;
	const char *result_type; /* "date", "int", "string" */
};

struct floe_part_spec {
	int32_t spec_id; /* -1: a configuration's, not yet given an id by the table */
	size_t n;
	struct floe_part_field f[FLOE_PART_MAX];
};

/* The partition values of one record; string values are copied in. */
struct floe_part_key {
	struct floe_ice_part_value v[FLOE_PART_MAX];
	char str[FLOE_PART_MAX][FLOE_PART_STR_MAX];
};

/* Parses one partition field as the configuration writes it (tables.logs.partition_by):
 * year(ts), month(ts), day(ts), hour(ts), identity(host), identity(app), host or app (=
 * identity), bucket(N, host) with N in 1..1024, blanks allowed around the words. The one
 * parser of that text: the configuration runs it once per entry (agent/config), which
 * then holds the spec. Fills f (field id 0) or returns FLOE_EINVAL with err (may be NULL)
 * saying why; f is untouched then. */
int floe_part_field_parse(const char *s, struct floe_part_field *f, struct floe_err *err);
/* Writes f's canonical text ("day(ts)", "identity(host)", "bucket(16, host)"), which
 * floe_part_field_parse reads back to the same field, into out (cap bytes; FLOE_ELIMIT if
 * it does not fit, FLOE_EINVAL for a field that text cannot express). */
int floe_part_field_text(const struct floe_part_field *f, char *out, size_t cap);
/* Builds a spec from configuration entries (each as floe_part_field_parse reads them) with
 * field ids from 1000 and spec id -1 (not yet known: the table gives it). FLOE_EINVAL with err (may be NULL) on a bad entry. */
int floe_part_spec_from_config(struct floe_part_spec *spec, char *const *entries, size_t n,
			       struct floe_err *err);
/* Reads the default spec of an existing table; FLOE_ESCHEMA when a field is one floe
 * cannot compute (err, may be NULL, says which). */
int floe_part_spec_from_table(struct floe_part_spec *spec, const struct floe_ice_meta *m,
			      struct floe_err *err);
/* Reads spec spec_id of an existing table (FLOE_ESCHEMA when the table has none, or one
 * floe cannot compute). */
int floe_part_spec_from_table_id(struct floe_part_spec *spec, const struct floe_ice_meta *m,
				 int32_t spec_id, struct floe_err *err);
/* The spec as Iceberg partition fields (names and transform strings borrowed from spec,
 * tnames provides storage for the transform names). */
void floe_part_spec_fields(const struct floe_part_spec *spec, struct floe_ice_partition_field *out,
			   char tnames[][24]);
/* The manifest's view of the spec. */
void floe_part_spec_manifest_parts(const struct floe_part_spec *spec, struct floe_ice_manifest_part *out);
/* True when both specs have the same fields and transforms. */
bool floe_part_spec_equal(const struct floe_part_spec *a, const struct floe_part_spec *b);

/* Computes rec's partition key. FLOE_ELIMIT if an identity string value is longer than
 * FLOE_PART_STR_MAX - 1 bytes. */
int floe_part_key_of(const struct floe_part_spec *spec, const struct floe_record *rec,
		     struct floe_part_key *key);
bool floe_part_key_equal(const struct floe_part_spec *spec, const struct floe_part_key *a,
			 const struct floe_part_key *b);
/* Copies a key (fixing up string pointers). */
void floe_part_key_copy(const struct floe_part_spec *spec, struct floe_part_key *dst,
			const struct floe_part_key *src);
/* The Hive-style directory of a key: "ts_day=2026-12-02/host=edge%2D1" ("" when the table
 * is unpartitioned). Values are percent-encoded except [A-Za-z0-9._-]. */
int floe_part_key_path(const struct floe_part_spec *spec, const struct floe_part_key *key, char *out,
		       size_t cap);

#endif
