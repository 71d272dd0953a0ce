/* Rewriting Iceberg manifests: a reader of any engine's manifest entries with the spec's
 * inheritance applied, and a writer that takes new files and entries read elsewhere, one
 * at a time, and carries every data_file field over as it was. Merging manifests and
 * compaction (agent/lake) are built on the two. Pure. */
#include "manifest.h"
#include "manifest_impl.h"

#include "formats/avro/avro.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <string.h>

#define SCHEMA_MAX ((size_t)1 << 20)

/* ---- Reading entries. ---- */

struct floe_ice_entry_reader {
	struct floe_alloc *a;
	struct floe_avro_reader *r;
	int64_t list_snapshot, list_seq;
	size_t n; /* entries read */
};

int floe_ice_entry_reader_new(struct floe_alloc *a, const uint8_t *data, size_t len,
			      const struct floe_ice_manifest_entry *listed,
			      struct floe_ice_entry_reader **out, struct floe_err *err)
{
	if (!data || !listed || !out)
		return floe_err_set(err, FLOE_EINVAL, "no data");
	struct floe_ice_entry_reader *r = floe_calloc(a, 1, sizeof(*r));
	if (!r)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	r->a = a;
	r->list_snapshot = listed->added_snapshot_id;
	r->list_seq = listed->sequence_number;
	int rc = floe_avro_reader_new(a, data, len, NULL, &r->r, err);
	if (!rc && floe_avro_schema_type(floe_avro_reader_schema(r->r)) != FLOE_AVRO_RECORD)
		rc = floe_err_set(err, FLOE_EFORMAT, "not a manifest: its items are not records");
	if (rc) {
		floe_ice_entry_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

const uint8_t *floe_ice_entry_reader_meta(const struct floe_ice_entry_reader *r, const char *key,
					  size_t *len)
{
	return floe_avro_reader_meta(r->r, key, len);
}

/* An optional long: absent (a v1 file) or null gives def. */
static int opt_long(const struct floe_avro_value *v, int64_t def, int64_t *out)
{
	if (floe_avro_value_is_null(v)) {
		*out = def;
		return 0;
	}
	return floe_avro_value_long(v, out);
}

int floe_ice_entry_reader_next(struct floe_ice_entry_reader *r, struct floe_ice_entry *e,
			       struct floe_err *err)
{
	const struct floe_avro_value *v;
	int rc = floe_avro_reader_next(r->r, &v, err);
	if (rc <= 0)
		return rc;
	memset(e, 0, sizeof(*e));
	const struct floe_avro_value *df = floe_avro_value_get(v, "data_file");
	int64_t status, content = 0;
	const uint8_t *path;
	size_t plen;
	if (floe_avro_value_long(floe_avro_value_get(v, "status"), &status) || status < 0 || status > 2 ||
	    opt_long(floe_avro_value_get(v, "snapshot_id"), r->list_snapshot, &e->snapshot_id) ||
	    floe_avro_value_type(df) != FLOE_AVRO_RECORD ||
	    floe_avro_value_bytes(floe_avro_value_get(df, "file_path"), &path, &plen) ||
	    floe_avro_value_long(floe_avro_value_get(df, "record_count"), &e->record_count) ||
	    floe_avro_value_long(floe_avro_value_get(df, "file_size_in_bytes"), &e->file_size) ||
	    opt_long(floe_avro_value_get(df, "content"), 0, &content) || content < 0 || content > 2)
		return floe_err_set(err, FLOE_EFORMAT,
				    "manifest entry %zu: status, snapshot_id, file_path, record_count, "
				    "file_size_in_bytes or content is missing or invalid",
				    r->n);
	/* The sequence numbers of an ADDED entry are inherited when null; any other entry
	 * must carry them (a v1 manifest has none: 0, as the spec says). */
	int64_t def = status == 1 ? r->list_seq : 0;
	if (opt_long(floe_avro_value_get(v, "sequence_number"), def, &e->sequence_number) ||
	    opt_long(floe_avro_value_get(v, "file_sequence_number"), def, &e->file_sequence_number))
		return floe_err_set(err, FLOE_EFORMAT, "manifest entry %zu: a sequence number is not a long",
				    r->n);
	e->status = (int)status;
	e->content = (int32_t)content;
	e->path = (const char *)path;
	e->data_file = df;
	r->n++;
	return 1;
}

void floe_ice_entry_reader_free(struct floe_ice_entry_reader *r)
{
	if (!r)
		return;
	floe_avro_reader_free(r->r);
	floe_free(r->a, r);
}

/* ---- Writing. ---- */

/* The bounds of one partition field over the entries written. String bounds are copies
 * (the values they come from do not outlive the entry). */
struct part_acc {
	bool contains_null, has;
	int64_t lo, hi;
	struct floe_buf slo, shi;
};

struct floe_ice_manifest_writer {
	struct floe_alloc *a;
	struct floe_ice_manifest_info info; /* strings and parts borrowed */
	enum floe_ice_part_kind *kinds;
	struct part_acc *acc;
	struct floe_ice_field_summary *sums;
	uint8_t *scratch; /* 16 bytes per field: the encoded integer bounds */
	struct floe_buf schema;
	struct floe_buf *out;
	size_t start;
	struct floe_avro_writer *aw;
	size_t n;
	int32_t files[3];
	int64_t rows[3];
	int64_t min_existing;
	bool has_added;
};

void floe_ice_manifest_writer_free(struct floe_ice_manifest_writer *w)
{
	if (!w)
		return;
	floe_avro_writer_free(w->aw);
	for (size_t i = 0; w->acc && i < w->info.nparts; i++) {
		floe_buf_fini(&w->acc[i].slo);
		floe_buf_fini(&w->acc[i].shi);
	}
	floe_free(w->a, w->kinds);
	floe_free(w->a, w->acc);
	floe_free(w->a, w->sums);
	floe_free(w->a, w->scratch);
	floe_buf_fini(&w->schema);
	floe_free(w->a, w);
}

int floe_ice_manifest_writer_new(struct floe_alloc *a, const struct floe_ice_manifest_info *info,
				 const uint8_t sync[16], struct floe_buf *out,
				 struct floe_ice_manifest_writer **wout)
{
	if (!info || !info->schema_json || !info->partition_spec_json || (info->nparts && !info->parts) ||
	    !sync || !out || !wout)
		return FLOE_EINVAL;
	struct floe_ice_manifest_writer *w = floe_calloc(a, 1, sizeof(*w));
	if (!w)
		return FLOE_ENOMEM;
	w->a = a;
	w->info = *info;
	w->out = out;
	w->start = out->len;
	w->min_existing = INT64_MAX;
	floe_buf_init(&w->schema, a, SCHEMA_MAX);
	size_t np = info->nparts ? info->nparts : 1;
	int rc = FLOE_ENOMEM;
	if (!(w->kinds = floe_calloc(a, np, sizeof(*w->kinds))) || !(w->acc = floe_calloc(a, np, sizeof(*w->acc))) ||
	    !(w->sums = floe_calloc(a, np, sizeof(*w->sums))) || !(w->scratch = floe_calloc(a, np, 16)))
		goto out;
	for (size_t i = 0; i < info->nparts; i++) {
		floe_buf_init(&w->acc[i].slo, a, SCHEMA_MAX);
		floe_buf_init(&w->acc[i].shi, a, SCHEMA_MAX);
		if ((rc = floe_ice_part_kind(info->parts[i].result_type, &w->kinds[i])))
			goto out;
	}
	char schema_id[16], spec_id[16];
	struct floe_avro_meta meta[FLOE_ICE_MANIFEST_NMETA];
	floe_ice_manifest_meta(info, schema_id, spec_id, meta);
	if ((rc = floe_ice_entry_schema(info, &w->schema)))
		goto out;
	struct floe_avro_writer_opts o = {
		.schema_json = (const char *)w->schema.data,
		.schema_len = w->schema.len,
		.codec = FLOE_AVRO_CODEC_NULL,
		.meta = meta,
		.nmeta = FLOE_ICE_MANIFEST_NMETA,
		.sync = sync,
	};
	rc = floe_avro_writer_new(a, &o, out, &w->aw);
out:
	if (rc) {
		floe_ice_manifest_writer_free(w);
		return rc;
	}
	*wout = w;
	return 0;
}

static int cmp_bytes(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
	size_t n = alen < blen ? alen : blen;
	int c = n ? memcmp(a, b, n) : 0;
	return c ? c : (alen < blen ? -1 : alen > blen);
}

static int set_bytes(struct floe_buf *b, const char *s, size_t len)
{
	floe_buf_reset(b);
	return floe_buf_append(b, s, len);
}

/* Widens field i's bounds with value v. */
static int acc_value(struct floe_ice_manifest_writer *w, size_t i, const struct floe_ice_part_value *v)
{
	struct part_acc *p = &w->acc[i];
	if (v->is_null) {
		p->contains_null = true;
		return 0;
	}
	int rc = 0;
	if (w->kinds[i] == FLOE_ICE_PK_STRING) {
		if (!p->has || cmp_bytes((const uint8_t *)v->s, v->len, p->slo.data, p->slo.len) < 0)
			rc = set_bytes(&p->slo, v->s, v->len);
		if (!rc && (!p->has || cmp_bytes((const uint8_t *)v->s, v->len, p->shi.data, p->shi.len) > 0))
			rc = set_bytes(&p->shi, v->s, v->len);
	} else {
		if (!p->has || v->i < p->lo)
			p->lo = v->i;
		if (!p->has || v->i > p->hi)
			p->hi = v->i;
	}
	p->has = true;
	return rc;
}

static void count(struct floe_ice_manifest_writer *w, int status, int64_t records, int64_t seq)
{
	w->files[status]++;
	w->rows[status] += records;
	if (status == 1)
		w->has_added = true;
	else if (status == 0 && seq < w->min_existing)
		w->min_existing = seq;
	w->n++;
}

int floe_ice_manifest_writer_add(struct floe_ice_manifest_writer *w, const struct floe_ice_data_file *f)
{
	if (!f || (w->info.nparts && !f->partition))
		return FLOE_EINVAL;
	struct floe_buf *b = floe_avro_writer_record(w->aw);
	int rc = floe_ice_put_added_entry(b, &w->info, f);
	for (size_t i = 0; !rc && i < w->info.nparts; i++)
		rc = acc_value(w, i, &f->partition[i]);
	if (rc) {
		floe_avro_writer_abort_record(w->aw);
		return rc;
	}
	if ((rc = floe_avro_writer_end_record(w->aw)) == 0)
		count(w, 1, f->record_count, 0);
	return rc;
}

/* One long or int of an array. */
static int put_long_item(struct floe_buf *b, const struct floe_avro_value *v, bool bytes)
{
	(void)bytes;
	int64_t x;
	if (floe_avro_value_long(v, &x))
		return FLOE_EFORMAT;
	return floe_avro_put_long(b, x);
}

/* One entry of an int-keyed map (a key/value record) with a long or bytes value. */
static int put_kv_item(struct floe_buf *b, const struct floe_avro_value *kv, bool bytes)
{
	int64_t key, x;
	const uint8_t *p;
	size_t len;
	if (floe_avro_value_long(floe_avro_value_get(kv, "key"), &key) || key < INT32_MIN || key > INT32_MAX)
		return FLOE_EFORMAT;
	int rc = floe_avro_put_long(b, key);
	if (!rc && bytes) {
		if (floe_avro_value_bytes(floe_avro_value_get(kv, "value"), &p, &len))
			return FLOE_EFORMAT;
		rc = floe_avro_put_bytes(b, p, len);
	} else if (!rc) {
		if (floe_avro_value_long(floe_avro_value_get(kv, "value"), &x))
			return FLOE_EFORMAT;
		rc = floe_avro_put_long(b, x);
	}
	return rc;
}

/* An optional array (null when absent) in one block, each item written by put: longs or
 * ints (put_long_item), or an int-keyed map (put_kv_item) with long or bytes values. */
static int put_opt_array(struct floe_buf *b, const struct floe_avro_value *v, bool bytes,
			 int (*put)(struct floe_buf *, const struct floe_avro_value *, bool))
{
	if (floe_avro_value_is_null(v))
		return floe_avro_put_union(b, 0);
	if (floe_avro_value_type(v) != FLOE_AVRO_ARRAY)
		return FLOE_EFORMAT;
	size_t n = floe_avro_value_len(v);
	int rc = floe_avro_put_union(b, 1);
	if (!rc && n)
		rc = floe_avro_put_long(b, (int64_t)n);
	for (size_t i = 0; !rc && i < n; i++)
		rc = put(b, floe_avro_value_at(v, i), bytes);
	return rc ? rc : floe_avro_put_long(b, 0);
}

/* An optional scalar: null, a long (int or long) or bytes (string or bytes). */
static int put_opt_scalar(struct floe_buf *b, const struct floe_avro_value *v, bool bytes)
{
	if (floe_avro_value_is_null(v))
		return floe_avro_put_union(b, 0);
	int64_t x;
	const uint8_t *p;
	size_t len;
	if (bytes ? floe_avro_value_bytes(v, &p, &len) != 0 : floe_avro_value_long(v, &x) != 0)
		return FLOE_EFORMAT;
	int rc = floe_avro_put_union(b, 1);
	if (rc)
		return rc;
	return bytes ? floe_avro_put_bytes(b, p, len) : floe_avro_put_long(b, x);
}

/* The partition tuple of a copied entry in info's field order, found by name. */
static int put_partition(struct floe_ice_manifest_writer *w, struct floe_buf *b,
			 const struct floe_avro_value *part)
{
	if (floe_avro_value_type(part) != FLOE_AVRO_RECORD)
		return FLOE_EFORMAT;
	int rc = 0;
	for (size_t i = 0; !rc && i < w->info.nparts; i++) {
		const struct floe_avro_value *v = floe_avro_value_get(part, w->info.parts[i].name);
		struct floe_ice_part_value pv = {.is_null = true};
		if (!v)
			return FLOE_EFORMAT; /* the record is of another spec */
		if (!floe_avro_value_is_null(v)) {
			const uint8_t *s;
			pv.is_null = false;
			if (w->kinds[i] == FLOE_ICE_PK_STRING) {
				if (floe_avro_value_type(v) != FLOE_AVRO_STRING || floe_avro_value_bytes(v, &s, &pv.len))
					return FLOE_EFORMAT;
				pv.s = (const char *)s;
			} else if (floe_avro_value_long(v, &pv.i)) {
				return FLOE_EFORMAT;
			}
		}
		if (!(rc = floe_ice_put_part_value(b, w->kinds[i], &pv)))
			rc = acc_value(w, i, &pv);
	}
	return rc;
}

/* The data_file record of a copied entry in the V2 schema's order, every field from the
 * source record by name (absent optional fields are null). */
static int put_data_file(struct floe_ice_manifest_writer *w, struct floe_buf *b,
			 const struct floe_ice_entry *e)
{
	const struct floe_avro_value *df = e->data_file;
	const uint8_t *fmt, *path;
	size_t fmt_len, path_len;
	if (floe_avro_value_bytes(floe_avro_value_get(df, "file_format"), &fmt, &fmt_len) ||
	    floe_avro_value_bytes(floe_avro_value_get(df, "file_path"), &path, &path_len))
		return FLOE_EFORMAT;
	int rc = floe_avro_put_int(b, e->content);
	if (!rc)
		rc = floe_avro_put_bytes(b, path, path_len);
	if (!rc)
		rc = floe_avro_put_bytes(b, fmt, fmt_len);
	if (!rc)
		rc = put_partition(w, b, floe_avro_value_get(df, "partition"));
	if (!rc)
		rc = floe_avro_put_long(b, e->record_count);
	if (!rc)
		rc = floe_avro_put_long(b, e->file_size);
	static const struct {
		const char *name;
		bool bytes;
	} maps[] = {{"column_sizes", false}, {"value_counts", false}, {"null_value_counts", false},
		    {"nan_value_counts", false}, {"lower_bounds", true}, {"upper_bounds", true}};
	for (size_t i = 0; !rc && i < sizeof(maps) / sizeof(maps[0]); i++)
		rc = put_opt_array(b, floe_avro_value_get(df, maps[i].name), maps[i].bytes, put_kv_item);
	if (!rc)
		rc = put_opt_scalar(b, floe_avro_value_get(df, "key_metadata"), true);
	if (!rc)
		rc = put_opt_array(b, floe_avro_value_get(df, "split_offsets"), false, put_long_item);
	if (!rc)
		rc = put_opt_array(b, floe_avro_value_get(df, "equality_ids"), false, put_long_item);
	if (!rc)
		rc = put_opt_scalar(b, floe_avro_value_get(df, "sort_order_id"), false);
	if (!rc)
		rc = put_opt_scalar(b, floe_avro_value_get(df, "referenced_data_file"), true);
	return rc;
}

int floe_ice_manifest_writer_copy(struct floe_ice_manifest_writer *w, const struct floe_ice_entry *e,
				  int status)
{
	if (!e || !e->data_file || !e->path || status < 0 || status > 2 ||
	    (status == 1 && e->snapshot_id != w->info.snapshot_id))
		return FLOE_EINVAL;
	struct floe_buf *b = floe_avro_writer_record(w->aw);
	int64_t snap = status == 2 ? w->info.snapshot_id : e->snapshot_id;
	int rc = floe_avro_put_int(b, status);
	if (!rc && !(rc = floe_avro_put_union(b, 1)))
		rc = floe_avro_put_long(b, snap);
	if (!rc && status == 1) {
		if (!(rc = floe_avro_put_union(b, 0)))
			rc = floe_avro_put_union(b, 0);
	} else if (!rc) {
		if (!(rc = floe_avro_put_union(b, 1)) && !(rc = floe_avro_put_long(b, e->sequence_number)) &&
		    !(rc = floe_avro_put_union(b, 1)))
			rc = floe_avro_put_long(b, e->file_sequence_number);
	}
	if (!rc)
		rc = put_data_file(w, b, e);
	if (rc) {
		floe_avro_writer_abort_record(w->aw);
		return rc;
	}
	if ((rc = floe_avro_writer_end_record(w->aw)) == 0)
		count(w, status, e->record_count, e->sequence_number);
	return rc;
}

size_t floe_ice_manifest_writer_count(const struct floe_ice_manifest_writer *w)
{
	return w->n;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int64_t floe_ice_manifest_min_seq(const struct floe_ice_manifest_stats *st, int64_t seq)
{
	int64_t m = st->min_existing_seq;
	if (st->has_added || m == INT64_MAX)
		m = seq < m ? seq : m;
	return m;
}

int floe_ice_manifest_writer_finish(struct floe_ice_manifest_writer *w, int64_t seq,
				    struct floe_ice_manifest_entry *listed,
				    struct floe_ice_manifest_stats *st)
{
	int rc = floe_avro_writer_flush(w->aw);
	if (rc)
		return rc;
	for (size_t i = 0; i < w->info.nparts; i++) {
		struct part_acc *p = &w->acc[i];
		struct floe_ice_field_summary *s = &w->sums[i];
		memset(s, 0, sizeof(*s));
		s->contains_null = p->contains_null;
		s->contains_nan = 0; /* no partition type a manifest here holds can be NaN */
		if (!p->has)
			continue;
		s->has_lower = s->has_upper = true;
		if (w->kinds[i] == FLOE_ICE_PK_STRING) {
			s->lower = p->slo.data;
			s->lower_len = p->slo.len;
			s->upper = p->shi.data;
			s->upper_len = p->shi.len;
		} else {
			int width = (w->kinds[i] == FLOE_ICE_PK_INT || w->kinds[i] == FLOE_ICE_PK_DATE) ? 4 : 8;
			uint8_t *sl = w->scratch + 16 * i;
			put_le(sl, (uint64_t)p->lo, width);
			put_le(sl + 8, (uint64_t)p->hi, width);
			s->lower = sl;
			s->upper = sl + 8;
			s->lower_len = s->upper_len = (size_t)width;
		}
	}
	st->min_existing_seq = w->min_existing;
	st->has_added = w->has_added;
	memset(listed, 0, sizeof(*listed));
	listed->length = (int64_t)(w->out->len - w->start);
	listed->spec_id = w->info.partition_spec_id;
	listed->content = 0;
	listed->sequence_number = seq;
	listed->min_sequence_number = floe_ice_manifest_min_seq(st, seq);
	listed->added_snapshot_id = w->info.snapshot_id;
	listed->added_files = w->files[1];
	listed->existing_files = w->files[0];
	listed->deleted_files = w->files[2];
	listed->added_rows = w->rows[1];
	listed->existing_rows = w->rows[0];
	listed->deleted_rows = w->rows[2];
	listed->partitions = w->sums;
	listed->npartitions = w->info.nparts;
	listed->has_partitions = true;
	return 0;
}

int floe_ice_field_summaries_copy(struct floe_alloc *a, const struct floe_ice_field_summary *src,
				  size_t n, struct floe_ice_field_summary **out)
{
	size_t total = n * sizeof(*src), k;
	if (n && (!src || n > SIZE_MAX / 2 / sizeof(*src)))
		return FLOE_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (__builtin_add_overflow(src[i].lower_len, src[i].upper_len, &k) ||
		    __builtin_add_overflow(total, k, &total))
			return FLOE_ELIMIT;
	uint8_t *mem = floe_malloc(a, total ? total : 1);
	if (!mem)
		return FLOE_ENOMEM;
	struct floe_ice_field_summary *d = (struct floe_ice_field_summary *)(void *)mem;
	uint8_t *p = mem + n * sizeof(*src);
	for (size_t i = 0; i < n; i++) {
		d[i] = src[i];
		if (src[i].has_lower && src[i].lower_len) {
			memcpy(p, src[i].lower, src[i].lower_len);
			d[i].lower = p;
			p += src[i].lower_len;
		}
		if (src[i].has_upper && src[i].upper_len) {
			memcpy(p, src[i].upper, src[i].upper_len);
			d[i].upper = p;
			p += src[i].upper_len;
		}
	}
	*out = d;
	return 0;
}
