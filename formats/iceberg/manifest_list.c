/* Iceberg v2 manifest lists as Avro object container files: the writer emits the schema
 * of Java's V2Metadata byte for byte (field ids, order, record name r508, docs); the
 * reader resolves fields by name from the file's own schema, so that lists written by
 * Java, Spark or PyIceberg, v1 or v2, are carried forward into the next commit. */
#include "manifest.h"
#include "manifest_impl.h"

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdalign.h>
#include <stdio.h>
#include <string.h>

static const char *const LIST_SCHEMA =
	"{\"type\":\"record\",\"name\":\"manifest_file\",\"fields\":["
	"{\"name\":\"manifest_path\",\"type\":\"string\",\"doc\":\"Location URI with FS scheme\",\"field-id\":500},"
	"{\"name\":\"manifest_length\",\"type\":\"long\",\"doc\":\"Total file size in bytes\",\"field-id\":501},"
	"{\"name\":\"partition_spec_id\",\"type\":\"int\",\"doc\":\"Spec ID used to write\",\"field-id\":502},"
	"{\"name\":\"content\",\"type\":\"int\",\"doc\":\"Contents of the manifest: 0=data, 1=deletes\","
	"\"field-id\":517},"
	"{\"name\":\"sequence_number\",\"type\":\"long\",\"doc\":\"Sequence number when the manifest was "
	"added\",\"field-id\":515},"
	"{\"name\":\"min_sequence_number\",\"type\":\"long\",\"doc\":\"Lowest sequence number in the "
	"manifest\",\"field-id\":516},"
	"{\"name\":\"added_snapshot_id\",\"type\":\"long\",\"doc\":\"Snapshot ID that added the manifest\","
	"\"field-id\":503},"
	"{\"name\":\"added_files_count\",\"type\":\"int\",\"doc\":\"Added entry count\",\"field-id\":504},"
	"{\"name\":\"existing_files_count\",\"type\":\"int\",\"doc\":\"Existing entry count\",\"field-id\":505},"
	"{\"name\":\"deleted_files_count\",\"type\":\"int\",\"doc\":\"Deleted entry count\",\"field-id\":506},"
	"{\"name\":\"added_rows_count\",\"type\":\"long\",\"doc\":\"Added rows count\",\"field-id\":512},"
	"{\"name\":\"existing_rows_count\",\"type\":\"long\",\"doc\":\"Existing rows count\",\"field-id\":513},"
	"{\"name\":\"deleted_rows_count\",\"type\":\"long\",\"doc\":\"Deleted rows count\",\"field-id\":514},"
	"{\"name\":\"partitions\",\"type\":[\"null\",{\"type\":\"array\",\"items\":{\"type\":\"record\","
	"\"name\":\"r508\",\"fields\":["
	"{\"name\":\"contains_null\",\"type\":\"boolean\",\"doc\":\"True if any file has a null partition "
	"value\",\"field-id\":509},"
	"{\"name\":\"contains_nan\",\"type\":[\"null\",\"boolean\"],\"doc\":\"True if any file has a nan "
	"partition value\",\"default\":null,\"field-id\":518},"
	"{\"name\":\"lower_bound\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Partition lower bound for all "
	"files\",\"default\":null,\"field-id\":510},"
	"{\"name\":\"upper_bound\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Partition upper bound for all "
	"files\",\"default\":null,\"field-id\":511}]},\"element-id\":508}],"
	"\"doc\":\"Summary for each partition\",\"default\":null,\"field-id\":507},"
	"{\"name\":\"key_metadata\",\"type\":[\"null\",\"bytes\"],\"doc\":\"Encryption key metadata blob\","
	"\"default\":null,\"field-id\":519}]}";

/* ---- Manifest list writer. ---- */

static int put_opt_bytes(struct floe_buf *b, bool has, const uint8_t *p, size_t len)
{
	if (!has)
		return floe_avro_put_union(b, 0);
	int rc = floe_avro_put_union(b, 1);
	return rc ? rc : floe_avro_put_bytes(b, p, len);
}

/* The partitions field: null, or the array of the entry's field summaries. */
static int put_summaries(struct floe_buf *b, const struct floe_ice_manifest_entry *e)
{
	if (!e->has_partitions)
		return floe_avro_put_union(b, 0);
	int rc = floe_avro_put_union(b, 1);
	if (!rc && e->npartitions)
		rc = floe_avro_put_long(b, (int64_t)e->npartitions);
	for (size_t k = 0; !rc && k < e->npartitions; k++) {
		const struct floe_ice_field_summary *s = &e->partitions[k];
		rc = floe_avro_put_bool(b, s->contains_null);
		if (!rc && s->contains_nan < 0)
			rc = floe_avro_put_union(b, 0);
		else if (!rc && !(rc = floe_avro_put_union(b, 1)))
			rc = floe_avro_put_bool(b, s->contains_nan > 0);
		if (!rc)
			rc = put_opt_bytes(b, s->has_lower, s->lower, s->lower_len);
		if (!rc)
			rc = put_opt_bytes(b, s->has_upper, s->upper, s->upper_len);
	}
	return rc ? rc : floe_avro_put_long(b, 0);
}

static int put_list_record(struct floe_buf *b, const void *ctx, size_t i)
{
	const struct floe_ice_manifest_entry *e = (const struct floe_ice_manifest_entry *)ctx + i;
	if (!e->path || (e->has_partitions && e->npartitions && !e->partitions))
		return FLOE_EINVAL;
	/* The numeric fields in the schema's order, from manifest_length to
	 * deleted_rows_count. Avro's int and long are the same zigzag varint, so the int
	 * fields (int32 values) go out through put_long unchanged. */
	const int64_t nums[] = {
		e->length,	     e->spec_id,	e->content,	   e->sequence_number,
		e->min_sequence_number, e->added_snapshot_id, e->added_files,   e->existing_files,
		e->deleted_files,	     e->added_rows,	e->existing_rows, e->deleted_rows,
	};
	int rc = floe_avro_put_str(b, e->path);
	for (size_t k = 0; !rc && k < sizeof(nums) / sizeof(nums[0]); k++)
		rc = floe_avro_put_long(b, nums[k]);
	if (!rc)
		rc = put_summaries(b, e);
	if (!rc)
		rc = put_opt_bytes(b, e->has_key_metadata, e->key_metadata, e->key_metadata_len);
	return rc;
}

int floe_ice_manifest_list_write(struct floe_alloc *a, int64_t snapshot_id, int64_t parent_id,
				 int64_t sequence_number, const struct floe_ice_manifest_entry *entries,
				 size_t n, const uint8_t sync[16], struct floe_buf *out)
{
	if ((n && !entries) || !sync || !out)
		return FLOE_EINVAL;
	char snap[24], parent[24], seq[24];
	snprintf(snap, sizeof(snap), "%lld", (long long)snapshot_id);
	if (parent_id < 0)
		snprintf(parent, sizeof(parent), "null");
	else
		snprintf(parent, sizeof(parent), "%lld", (long long)parent_id);
	snprintf(seq, sizeof(seq), "%lld", (long long)sequence_number);
	const struct floe_avro_meta meta[] = {
		{"snapshot-id", snap, strlen(snap)},
		{"parent-snapshot-id", parent, strlen(parent)},
		{"sequence-number", seq, strlen(seq)},
		{"format-version", "2", 1},
	};
	struct floe_buf schema = {
		.data = (uint8_t *)(uintptr_t)LIST_SCHEMA,
		.len = strlen(LIST_SCHEMA),
	};
	return floe_ice_manifest_write_container(a, &schema, meta, sizeof(meta) / sizeof(meta[0]),
						 sync, out, n, put_list_record, entries);
}

/* ---- Manifest list reader. ---- */

struct block {
	struct block *next;
	alignas(max_align_t) uint8_t data[];
};

struct floe_ice_manifest_list {
	struct floe_alloc *a;
	struct floe_ice_manifest_entry *entries;
	size_t n, cap;
	struct block *blocks; /* every string, byte array and summary array of the entries */
};

/* Allocations live until the list is freed; each is its own block, which keeps this
 * simple and is cheap for the few dozen manifests of a list. */
static void *list_alloc(struct floe_ice_manifest_list *l, size_t n)
{
	size_t total;
	if (__builtin_add_overflow(sizeof(struct block), n, &total))
		return NULL;
	struct block *b = floe_malloc(l->a, total);
	if (!b)
		return NULL;
	b->next = l->blocks;
	l->blocks = b;
	return b->data;
}

static int copy_bytes(struct floe_ice_manifest_list *l, const struct floe_avro_value *v,
		      const uint8_t **out, size_t *len)
{
	const uint8_t *p;
	size_t n;
	if (floe_avro_value_bytes(v, &p, &n))
		return FLOE_EFORMAT;
	uint8_t *c = list_alloc(l, n + 1);
	if (!c)
		return FLOE_ENOMEM;
	if (n)
		memcpy(c, p, n);
	c[n] = 0;
	*out = c;
	*len = n;
	return 0;
}

/* A field by the first of its names present; absent or null fields take def, unless
 * required. */
static int get_long(const struct floe_avro_value *rec, const char *const *names, bool required,
		    int64_t def, int64_t *out)
{
	const struct floe_avro_value *v = NULL;
	for (; *names && !v; names++)
		v = floe_avro_value_get(rec, *names);
	if (floe_avro_value_is_null(v)) {
		if (required)
			return FLOE_EFORMAT;
		*out = def;
		return 0;
	}
	return floe_avro_value_long(v, out) ? FLOE_EFORMAT : 0;
}

static int get_i32(const struct floe_avro_value *rec, const char *const *names, bool required, int32_t *out)
{
	int64_t v;
	int rc = get_long(rec, names, required, 0, &v);
	if (rc)
		return rc;
	if (v < INT32_MIN || v > INT32_MAX)
		return FLOE_EFORMAT;
	*out = (int32_t)v;
	return 0;
}

static int read_summaries(struct floe_ice_manifest_list *l, const struct floe_avro_value *parts,
			  struct floe_ice_manifest_entry *e)
{
	if (floe_avro_value_is_null(parts))
		return 0;
	if (floe_avro_value_type(parts) != FLOE_AVRO_ARRAY)
		return FLOE_EFORMAT;
	size_t n = floe_avro_value_len(parts);
	e->has_partitions = true;
	e->npartitions = n;
	if (n == 0)
		return 0;
	if (n > SIZE_MAX / sizeof(struct floe_ice_field_summary))
		return FLOE_ELIMIT;
	struct floe_ice_field_summary *s = list_alloc(l, n * sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	memset(s, 0, n * sizeof(*s));
	e->partitions = s;
	for (size_t i = 0; i < n; i++) {
		const struct floe_avro_value *r = floe_avro_value_at(parts, i);
		const struct floe_avro_value *cn = floe_avro_value_get(r, "contains_null");
		const struct floe_avro_value *nan = floe_avro_value_get(r, "contains_nan");
		const struct floe_avro_value *lo = floe_avro_value_get(r, "lower_bound");
		const struct floe_avro_value *hi = floe_avro_value_get(r, "upper_bound");
		bool b;
		if (floe_avro_value_bool(cn, &s[i].contains_null))
			return FLOE_EFORMAT;
		s[i].contains_nan = -1;
		if (!floe_avro_value_is_null(nan)) {
			if (floe_avro_value_bool(nan, &b))
				return FLOE_EFORMAT;
			s[i].contains_nan = b;
		}
		int rc;
		if (!floe_avro_value_is_null(lo)) {
			if ((rc = copy_bytes(l, lo, &s[i].lower, &s[i].lower_len)))
				return rc;
			s[i].has_lower = true;
		}
		if (!floe_avro_value_is_null(hi)) {
			if ((rc = copy_bytes(l, hi, &s[i].upper, &s[i].upper_len)))
				return rc;
			s[i].has_upper = true;
		}
	}
	return 0;
}

#define NAMES(...) ((const char *const[]){__VA_ARGS__, NULL})

static int read_list_entry(struct floe_ice_manifest_list *l, const struct floe_avro_value *rec,
			   struct floe_ice_manifest_entry *e)
{
	memset(e, 0, sizeof(*e));
	if (floe_avro_value_type(rec) != FLOE_AVRO_RECORD)
		return FLOE_EFORMAT;
	const uint8_t *path;
	size_t len;
	int rc = copy_bytes(l, floe_avro_value_get(rec, "manifest_path"), &path, &len);
	if (rc)
		return rc;
	e->path = (const char *)path;
	if ((rc = get_long(rec, NAMES("manifest_length"), true, 0, &e->length)) ||
	    (rc = get_i32(rec, NAMES("partition_spec_id"), true, &e->spec_id)) ||
	    (rc = get_i32(rec, NAMES("content"), false, &e->content)) ||
	    (rc = get_long(rec, NAMES("sequence_number"), false, 0, &e->sequence_number)) ||
	    (rc = get_long(rec, NAMES("min_sequence_number"), false, 0, &e->min_sequence_number)) ||
	    (rc = get_long(rec, NAMES("added_snapshot_id"), false, 0, &e->added_snapshot_id)) ||
	    (rc = get_i32(rec, NAMES("added_files_count", "added_data_files_count"), false, &e->added_files)) ||
	    (rc = get_i32(rec, NAMES("existing_files_count", "existing_data_files_count"), false,
			  &e->existing_files)) ||
	    (rc = get_i32(rec, NAMES("deleted_files_count", "deleted_data_files_count"), false,
			  &e->deleted_files)) ||
	    (rc = get_long(rec, NAMES("added_rows_count"), false, 0, &e->added_rows)) ||
	    (rc = get_long(rec, NAMES("existing_rows_count"), false, 0, &e->existing_rows)) ||
	    (rc = get_long(rec, NAMES("deleted_rows_count"), false, 0, &e->deleted_rows)))
		return rc;
	if ((rc = read_summaries(l, floe_avro_value_get(rec, "partitions"), e)))
		return rc;
	const struct floe_avro_value *km = floe_avro_value_get(rec, "key_metadata");
	if (!floe_avro_value_is_null(km)) {
		if ((rc = copy_bytes(l, km, &e->key_metadata, &e->key_metadata_len)))
			return rc;
		e->has_key_metadata = true;
	}
	return 0;
}

/* Room for one more entry. */
static int grow(struct floe_ice_manifest_list *l)
{
	if (l->n < l->cap)
		return 0;
	size_t ncap = l->cap ? l->cap * 2 : 8;
	struct floe_ice_manifest_entry *ne;
	if (ncap > SIZE_MAX / sizeof(*ne))
		return FLOE_ELIMIT;
	if (!(ne = floe_realloc(l->a, l->entries, ncap * sizeof(*ne))))
		return FLOE_ENOMEM;
	l->entries = ne;
	l->cap = ncap;
	return 0;
}

int floe_ice_manifest_list_read(struct floe_alloc *a, const uint8_t *data, size_t len,
				struct floe_ice_manifest_list **out, struct floe_err *err)
{
	if (!data || !out)
		return floe_err_set(err, FLOE_EINVAL, "no data");
	struct floe_ice_manifest_list *l = floe_calloc(a, 1, sizeof(*l));
	if (!l)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	l->a = a;
	struct floe_avro_reader *r = NULL;
	int rc = floe_avro_reader_new(a, data, len, NULL, &r, err);
	if (!rc && floe_avro_schema_type(floe_avro_reader_schema(r)) != FLOE_AVRO_RECORD)
		rc = floe_err_set(err, FLOE_EFORMAT,
				  "not a manifest list: its items are not records");
	while (!rc) {
		const struct floe_avro_value *v;
		rc = floe_avro_reader_next(r, &v, err);
		if (rc <= 0)
			break;
		if ((rc = grow(l)) || (rc = read_list_entry(l, v, &l->entries[l->n]))) {
			floe_err_set(err, rc, "entry %zu: %s", l->n,
				     rc == FLOE_EFORMAT ? "a field is missing or of the wrong type"
							: floe_strerror(rc));
			break;
		}
		l->n++;
	}
	if (rc)
		goto out;
	*out = l;
	l = NULL;
out:
	floe_avro_reader_free(r);
	floe_ice_manifest_list_free(l);
	return rc;
}

size_t floe_ice_manifest_list_count(const struct floe_ice_manifest_list *l) { return l ? l->n : 0; }

const struct floe_ice_manifest_entry *floe_ice_manifest_list_at(const struct floe_ice_manifest_list *l, size_t i)
{
	return l && i < l->n ? &l->entries[i] : NULL;
}

void floe_ice_manifest_list_free(struct floe_ice_manifest_list *l)
{
	if (!l)
		return;
	while (l->blocks) {
		struct block *b = l->blocks;
		l->blocks = b->next;
		floe_free(l->a, b);
	}
	floe_free(l->a, l->entries);
	floe_free(l->a, l);
}

