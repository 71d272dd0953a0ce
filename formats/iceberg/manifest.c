/* Iceberg v2 manifests as Avro object container files: the writer emits the schema of
 * Java's V2Metadata byte for byte (field ids, order, record names r2/r102/k117_v118,
 * docs); the partition summaries a manifest list records for a new manifest; and the
 * reader of a manifest's entries for `floe inspect`, which resolves fields by name from
 * the file's own schema. Manifest lists are in manifest_list.c. */
#include "manifest.h"
#include "manifest_impl.h"

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <stdio.h>
#include <string.h>

#define SCHEMA_MAX ((size_t)1 << 20)

/* ---- Schemas. ---- */

static const char *const ENTRY_HEAD =
	"{\"type\":\"record\",\"name\":\"manifest_entry\",\"fields\":["
	"{\"name\":\"status\",\"type\":\"int\",\"field-id\":0},"
	"{\"name\":\"snapshot_id\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":1},"
	"{\"name\":\"sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":3},"
	"{\"name\":\"file_sequence_number\",\"type\":[\"null\",\"long\"],\"default\":null,\"field-id\":4},"
	"{\"name\":\"data_file\",\"type\":{\"type\":\"record\",\"name\":\"r2\",\"fields\":["
	"{\"name\":\"content\",\"type\":\"int\",\"doc\":\"Contents of the file: 0=data, 1=position "
	"deletes, 2=equality deletes\",\"field-id\":134},"
	"{\"name\":\"file_path\",\"type\":\"string\",\"doc\":\"Location URI with FS scheme\",\"field-id\":100},"
	"{\"name\":\"file_format\",\"type\":\"string\",\"doc\":\"File format name: avro, orc, or "
	"parquet\",\"field-id\":101},"
	"{\"name\":\"partition\",\"type\":{\"type\":\"record\",\"name\":\"r102\",\"fields\":[";

#define INT_MAP(name, id, k, v, vt, doc)                                                             \
	"{\"name\":\"" name "\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\","   \
	"\"name\":\"k" #k "_v" #v "\",\"fields\":[{\"name\":\"key\",\"type\":\"int\",\"field-id\":" #k   \
	"},{\"name\":\"value\",\"type\":\"" vt "\",\"field-id\":" #v "}]},\"logicalType\":\"map\"}],"    \
	"\"doc\":\"" doc "\",\"default\":null,\"field-id\":" #id "}"

static const char *const ENTRY_TAIL =
	"]},\"doc\":\"Partition data tuple, schema based on the partition spec\",\"field-id\":102},"
	"{\"name\":\"record_count\",\"type\":\"long\",\"doc\":\"Number of records in the file\",\"field-id\":103},"
	"{\"name\":\"file_size_in_bytes\",\"type\":\"long\",\"doc\":\"Total file size in bytes\",\"field-id\":104},"
	INT_MAP("column_sizes", 108, 117, 118, "long", "Map of column id to total size on disk") ","
	INT_MAP("value_counts", 109, 119, 120, "long", "Map of column id to total count, including null and NaN") ","
	INT_MAP("null_value_counts", 110, 121, 122, "long", "Map of column id to null value count") ","
	INT_MAP("nan_value_counts", 137, 138, 139, "long", "Map of column id to number of NaN values in the column") ","
	INT_MAP("lower_bounds", 125, 126, 127, "bytes", "Map of column id to lower bound") ","
	INT_MAP("upper_bounds", 128, 129, 130, "bytes", "Map of column id to upper bound") ","
	"{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\","
	"\"default\":null,\"field-id\":131},"
	"{\"name\":\"split_offsets\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"long\",\"element-id\":133}],"
	"\"doc\":\"Splittable offsets\",\"default\":null,\"field-id\":132},"
	"{\"name\":\"equality_ids\",\"type\":[\"null\",{\"type\":\"array\",\"items\":\"int\",\"element-id\":136}],"
	"\"doc\":\"Equality comparison field IDs\",\"default\":null,\"field-id\":135},"
	"{\"name\":\"sort_order_id\",\"type\":[\"null\",\"int\"],\"doc\":\"Sort order ID\",\"default\":null,"
	"\"field-id\":140},"
	"{\"name\":\"referenced_data_file\",\"type\":[\"null\",\"string\"],\"doc\":\"Fully qualified location "
	"(URI with FS scheme) of a data file that all deletes reference\",\"default\":null,\"field-id\":143}"
	"]},\"field-id\":2}]}";

int floe_ice_part_kind(const char *t, enum floe_ice_part_kind *k)
{
	static const struct {
		const char *name;
		enum floe_ice_part_kind kind;
	} kinds[] = {{"int", FLOE_ICE_PK_INT}, {"date", FLOE_ICE_PK_DATE}, {"long", FLOE_ICE_PK_LONG}, {"string", FLOE_ICE_PK_STRING}, {"timestamptz", FLOE_ICE_PK_TSTZ}};
	for (size_t i = 0; t && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (strcmp(t, kinds[i].name) == 0) {
			*k = kinds[i].kind;
			return 0;
		}
	}
	return FLOE_EINVAL;
}

int floe_ice_entry_schema(const struct floe_ice_manifest_info *info, struct floe_buf *b)
{
	static const char *const types[] = {
		[FLOE_ICE_PK_INT] = "\"int\"",
		[FLOE_ICE_PK_DATE] = "{\"type\":\"int\",\"logicalType\":\"date\"}",
		[FLOE_ICE_PK_LONG] = "\"long\"",
		[FLOE_ICE_PK_STRING] = "\"string\"",
		[FLOE_ICE_PK_TSTZ] = "{\"type\":\"long\",\"logicalType\":\"timestamp-micros\",\"adjust-to-utc\":true}",
	};
	int rc = floe_buf_puts(b, ENTRY_HEAD);
	for (size_t i = 0; !rc && i < info->nparts; i++) {
		const struct floe_ice_manifest_part *p = &info->parts[i];
		enum floe_ice_part_kind k;
		if (!p->name || (rc = floe_ice_part_kind(p->result_type, &k)))
			return FLOE_EINVAL;
		rc = floe_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		if (!rc)
			rc = floe_json_write_str(b, p->name, strlen(p->name));
		if (!rc)
			rc = floe_buf_printf(b, ",\"type\":[\"null\",%s],\"default\":null,\"field-id\":%d}",
					     types[k], (int)p->field_id);
	}
	if (!rc)
		rc = floe_buf_puts(b, ENTRY_TAIL);
	return rc;
}

/* ---- Manifest writer. ---- */

int floe_ice_put_part_value(struct floe_buf *b, enum floe_ice_part_kind k, const struct floe_ice_part_value *v)
{
	if (v->is_null)
		return floe_avro_put_union(b, 0);
	int rc = floe_avro_put_union(b, 1);
	if (rc)
		return rc;
	switch (k) {
	case FLOE_ICE_PK_INT:
	case FLOE_ICE_PK_DATE:
		if (v->i < INT32_MIN || v->i > INT32_MAX)
			return FLOE_EINVAL;
		return floe_avro_put_int(b, (int32_t)v->i);
	case FLOE_ICE_PK_LONG:
	case FLOE_ICE_PK_TSTZ:
		return floe_avro_put_long(b, v->i);
	case FLOE_ICE_PK_STRING:
		if (!v->s && v->len)
			return FLOE_EINVAL;
		return floe_avro_put_bytes(b, v->s, v->len);
	}
	return FLOE_EINVAL;
}

enum metric { M_SIZE, M_VALUES, M_NULLS, M_LOWER, M_UPPER };

/* An int-keyed map (Avro array of k/v records) over the column metrics, or null when no
 * column has the metric. */
static int put_metric_map(struct floe_buf *b, const struct floe_ice_data_file *f, enum metric m)
{
	size_t n = 0;
	for (size_t i = 0; i < f->metrics_count; i++)
		if (m < M_LOWER || f->metrics[i].has_bounds)
			n++;
	if (n == 0)
		return floe_avro_put_union(b, 0);
	int rc = floe_avro_put_union(b, 1);
	if (!rc)
		rc = floe_avro_put_long(b, (int64_t)n);
	for (size_t i = 0; !rc && i < f->metrics_count; i++) {
		const struct floe_ice_column_metrics *c = &f->metrics[i];
		if (m >= M_LOWER && !c->has_bounds)
			continue;
		rc = floe_avro_put_int(b, c->field_id);
		if (rc)
			break;
		switch (m) {
		case M_SIZE: rc = floe_avro_put_long(b, c->column_size); break;
		case M_VALUES: rc = floe_avro_put_long(b, c->value_count); break;
		case M_NULLS: rc = floe_avro_put_long(b, c->null_count); break;
		case M_LOWER: rc = floe_avro_put_bytes(b, c->lower, c->lower_len); break;
		case M_UPPER: rc = floe_avro_put_bytes(b, c->upper, c->upper_len); break;
		}
	}
	if (!rc)
		rc = floe_avro_put_long(b, 0);
	return rc;
}

int floe_ice_put_added_entry(struct floe_buf *b, const struct floe_ice_manifest_info *info,
			     const struct floe_ice_data_file *f)
{
	if (!f->path || (info->nparts && !f->partition) || (f->metrics_count && !f->metrics) ||
	    (f->split_count && !f->split_offsets))
		return FLOE_EINVAL;
	int rc = floe_avro_put_int(b, 1); /* status ADDED */
	if (!rc)
		rc = floe_avro_put_union(b, 1);
	if (!rc)
		rc = floe_avro_put_long(b, info->snapshot_id);
	if (!rc)
		rc = floe_avro_put_union(b, 0); /* sequence_number: inherited */
	if (!rc)
		rc = floe_avro_put_union(b, 0); /* file_sequence_number: inherited */
	if (!rc)
		rc = floe_avro_put_int(b, 0); /* content DATA */
	if (!rc)
		rc = floe_avro_put_str(b, f->path);
	if (!rc)
		rc = floe_avro_put_str(b, "PARQUET");
	for (size_t i = 0; !rc && i < info->nparts; i++) {
		enum floe_ice_part_kind k;
		rc = floe_ice_part_kind(info->parts[i].result_type, &k);
		if (!rc)
			rc = floe_ice_put_part_value(b, k, &f->partition[i]);
	}
	if (!rc)
		rc = floe_avro_put_long(b, f->record_count);
	if (!rc)
		rc = floe_avro_put_long(b, f->file_size);
	for (enum metric m = M_SIZE; !rc && m <= M_NULLS; m++)
		rc = put_metric_map(b, f, m);
	if (!rc)
		rc = floe_avro_put_union(b, 0); /* nan_value_counts: no float columns tracked */
	if (!rc)
		rc = put_metric_map(b, f, M_LOWER);
	if (!rc)
		rc = put_metric_map(b, f, M_UPPER);
	if (!rc)
		rc = floe_avro_put_union(b, 0); /* key_metadata */
	if (!rc && f->split_count) {
		rc = floe_avro_put_union(b, 1);
		if (!rc)
			rc = floe_avro_put_long(b, (int64_t)f->split_count);
		for (size_t i = 0; !rc && i < f->split_count; i++)
			rc = floe_avro_put_long(b, f->split_offsets[i]);
		if (!rc)
			rc = floe_avro_put_long(b, 0);
	} else if (!rc) {
		rc = floe_avro_put_union(b, 0);
	}
	if (!rc)
		rc = floe_avro_put_union(b, 0); /* equality_ids */
	if (!rc && info->sort_order_id > 0) {
		rc = floe_avro_put_union(b, 1); /* sort_order_id */
		if (!rc)
			rc = floe_avro_put_int(b, info->sort_order_id);
	} else if (!rc) {
		rc = floe_avro_put_union(b, 0);
	}
	if (!rc)
		rc = floe_avro_put_union(b, 0); /* referenced_data_file */
	return rc;
}

int floe_ice_manifest_write_container(struct floe_alloc *a, const struct floe_buf *schema,
				      const struct floe_avro_meta *meta, size_t nmeta,
				      const uint8_t sync[16], struct floe_buf *out, size_t n,
				      int (*put)(struct floe_buf *, const void *, size_t),
				      const void *ctx)
{
	struct floe_avro_writer_opts o = {
		.schema_json = (const char *)schema->data,
		.schema_len = schema->len,
		.codec = FLOE_AVRO_CODEC_NULL,
		.meta = meta,
		.nmeta = nmeta,
		.sync = sync,
	};
	size_t old = out->len;
	struct floe_avro_writer *w = NULL;
	int rc = floe_avro_writer_new(a, &o, out, &w);
	for (size_t i = 0; !rc && i < n; i++) {
		rc = put(floe_avro_writer_record(w), ctx, i);
		if (!rc)
			rc = floe_avro_writer_end_record(w);
	}
	if (!rc)
		rc = floe_avro_writer_flush(w);
	floe_avro_writer_free(w);
	if (rc)
		out->len = old;
	return rc;
}

void floe_ice_manifest_meta(const struct floe_ice_manifest_info *info, char schema_id[16],
			    char spec_id[16], struct floe_avro_meta *meta)
{
	snprintf(schema_id, 16, "%d", (int)info->schema_id);
	snprintf(spec_id, 16, "%d", (int)info->partition_spec_id);
	const struct floe_avro_meta m[FLOE_ICE_MANIFEST_NMETA] = {
		{"schema", info->schema_json, strlen(info->schema_json)},
		{"schema-id", schema_id, strlen(schema_id)},
		{"partition-spec", info->partition_spec_json, strlen(info->partition_spec_json)},
		{"partition-spec-id", spec_id, strlen(spec_id)},
		{"format-version", "2", 1},
		{"content", "data", 4},
	};
	memcpy(meta, m, sizeof(m));
}

struct manifest_ctx {
	const struct floe_ice_manifest_info *info;
	const struct floe_ice_data_file *files;
};

static int put_manifest_record(struct floe_buf *b, const void *ctx, size_t i)
{
	const struct manifest_ctx *m = ctx;
	return floe_ice_put_added_entry(b, m->info, &m->files[i]);
}

int floe_ice_manifest_write(struct floe_alloc *a, const struct floe_ice_manifest_info *info,
			    const struct floe_ice_data_file *files, size_t nfiles,
			    const uint8_t sync[16], struct floe_buf *out)
{
	if (!info || !info->schema_json || !info->partition_spec_json || (info->nparts && !info->parts) ||
	    (nfiles && !files) || !sync || !out)
		return FLOE_EINVAL;
	struct floe_buf schema;
	floe_buf_init(&schema, a, SCHEMA_MAX);
	char schema_id[16], spec_id[16];
	struct floe_avro_meta meta[FLOE_ICE_MANIFEST_NMETA];
	floe_ice_manifest_meta(info, schema_id, spec_id, meta);
	struct manifest_ctx ctx = {info, files};
	int rc = floe_ice_entry_schema(info, &schema);
	if (!rc)
		rc = floe_ice_manifest_write_container(a, &schema, meta, FLOE_ICE_MANIFEST_NMETA, sync,
						       out, nfiles, put_manifest_record, &ctx);
	floe_buf_fini(&schema);
	return rc;
}

/* ---- Partition summaries. ---- */

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static int cmp_str(const struct floe_ice_part_value *x, const struct floe_ice_part_value *y)
{
	size_t n = x->len < y->len ? x->len : y->len;
	int c = n ? memcmp(x->s, y->s, n) : 0;
	if (c)
		return c;
	return x->len < y->len ? -1 : x->len > y->len;
}

int floe_ice_manifest_summarize(const struct floe_ice_manifest_part *parts, size_t nparts,
				const struct floe_ice_data_file *files, size_t nfiles,
				struct floe_ice_field_summary *out, uint8_t *scratch)
{
	if ((nparts && (!parts || !out || !scratch)) || (nfiles && !files))
		return FLOE_EINVAL;
	for (size_t p = 0; p < nparts; p++) {
		enum floe_ice_part_kind k;
		if (floe_ice_part_kind(parts[p].result_type, &k))
			return FLOE_EINVAL;
		const struct floe_ice_part_value *lo = NULL, *hi = NULL;
		struct floe_ice_field_summary *s = &out[p];
		memset(s, 0, sizeof(*s));
		s->contains_nan = 0; /* no partition type floe writes can hold NaN */
		for (size_t f = 0; f < nfiles; f++) {
			if (!files[f].partition)
				return FLOE_EINVAL;
			const struct floe_ice_part_value *v = &files[f].partition[p];
			if (v->is_null) {
				s->contains_null = true;
				continue;
			}
			if (k == FLOE_ICE_PK_STRING) {
				if (!v->s && v->len)
					return FLOE_EINVAL;
				if (!lo || cmp_str(v, lo) < 0)
					lo = v;
				if (!hi || cmp_str(v, hi) > 0)
					hi = v;
			} else {
				if (!lo || v->i < lo->i)
					lo = v;
				if (!hi || v->i > hi->i)
					hi = v;
			}
		}
		if (!lo)
			continue;
		s->has_lower = s->has_upper = true;
		if (k == FLOE_ICE_PK_STRING) {
			s->lower = (const uint8_t *)lo->s;
			s->lower_len = lo->len;
			s->upper = (const uint8_t *)hi->s;
			s->upper_len = hi->len;
		} else {
			int w = (k == FLOE_ICE_PK_INT || k == FLOE_ICE_PK_DATE) ? 4 : 8;
			uint8_t *sl = scratch + 16 * p;
			put_le(sl, (uint64_t)lo->i, w);
			put_le(sl + 8, (uint64_t)hi->i, w);
			s->lower = sl;
			s->upper = sl + 8;
			s->lower_len = s->upper_len = (size_t)w;
		}
	}
	return 0;
}

/* ---- Manifest reader (inspect). ---- */

int floe_ice_manifest_read(struct floe_alloc *a, const uint8_t *data, size_t len,
			   floe_ice_manifest_fn fn, void *ctx, struct floe_err *err)
{
	if (!data || !fn)
		return floe_err_set(err, FLOE_EINVAL, "no data");
	struct floe_avro_reader *r = NULL;
	int rc = floe_avro_reader_new(a, data, len, NULL, &r, err);
	for (size_t i = 0; !rc; i++) {
		const struct floe_avro_value *v;
		rc = floe_avro_reader_next(r, &v, err);
		if (rc <= 0)
			break;
		const struct floe_avro_value *df = floe_avro_value_get(v, "data_file");
		const uint8_t *path;
		size_t plen;
		int64_t status, records, size;
		if (floe_avro_value_long(floe_avro_value_get(v, "status"), &status) ||
		    floe_avro_value_bytes(floe_avro_value_get(df, "file_path"), &path, &plen) ||
		    floe_avro_value_long(floe_avro_value_get(df, "record_count"), &records) ||
		    floe_avro_value_long(floe_avro_value_get(df, "file_size_in_bytes"), &size) ||
		    status < 0 || status > 2) {
			rc = floe_err_set(err, FLOE_EFORMAT,
					  "entry %zu: status, file_path, record_count or "
					  "file_size_in_bytes is missing or invalid", i);
			break;
		}
		if ((rc = fn(ctx, (int)status, (const char *)path, records, size)))
			floe_err_set(err, rc, "entry %zu: %s", i, floe_strerror(rc));
	}
	floe_avro_reader_free(r);
	return rc;
}
