/* Spool entries as JSON text: the encoding of an entry file's content and its decoding
 * (pure, the fuzz target's), and what an entry owns. */
#include "spool.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/json/json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Version 2 added each file's XXH64 and the positions where the seal's rows start;
 * version 1 entries (no checksum, no start) are still read. Version 3 adds the columns
 * whose ids are provisional, and is written only by an entry that has some: an agent of
 * an older version cannot commit it as it is, and refuses it (to quarantine). */
#define ENTRY_VERSION 3
#define ENTRY_VERSION_PLAIN 2

/* The provisional columns, as "provisional":[{"name":..,"id":..,"type":..},..], */
static int encode_prov(const struct floe_spool_prov *pv, size_t n, struct floe_buf *b)
{
	int rc = floe_buf_puts(b, "\"provisional\":[");
	for (size_t i = 0; i < n; i++) {
		rc |= floe_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		rc |= floe_json_write_str(b, pv[i].name, strlen(pv[i].name));
		rc |= floe_buf_printf(b, ",\"id\":%d,\"type\":", (int)pv[i].id);
		rc |= floe_json_write_str(b, pv[i].type, strlen(pv[i].type));
		rc |= floe_buf_putc(b, '}');
	}
	return rc | floe_buf_puts(b, "],");
}

int floe_spool_entry_encode(const struct floe_part_spec *spec, const struct floe_spool_entry *e,
			    const struct floe_spool_prov *pv, size_t npv, struct floe_buf *b)
{
	int rc = 0;
	rc |= floe_buf_printf(b, "{\"version\":%d,\"seq\":%" PRIu64 ",\"created_us\":%" PRId64
				 ",\"replaced_utf8\":%" PRIu64 ",",
			      npv ? ENTRY_VERSION : ENTRY_VERSION_PLAIN, e->seq, e->created_us,
			      e->replaced_utf8);
	if (npv)
		rc |= encode_prov(pv, npv, b);
	rc |= floe_buf_puts(b, "\"positions\":\"");
	rc |= floe_hex_put(b, e->positions, e->positions_len);
	rc |= floe_buf_puts(b, "\",\"from\":\"");
	rc |= floe_hex_put(b, e->from, e->from_len);
	if (spec->spec_id >= 0)
		rc |= floe_buf_printf(b, "\",\"spec\":%d,\"files\":[", (int)spec->spec_id);
	else
		rc |= floe_buf_puts(b, "\",\"files\":[");
	for (size_t i = 0; i < e->nfiles && !rc; i++) {
		const struct floe_spool_file *f = &e->files[i];
		rc |= floe_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		rc |= floe_json_write_str(b, f->name, strlen(f->name));
		rc |= floe_buf_printf(b, ",\"records\":%" PRId64 ",\"size\":%" PRId64 ",\"xxh64\":\"%016" PRIx64
					 "\",\"partition\":[",
				      f->records, f->size, f->xxh64);
		for (size_t k = 0; k < spec->n; k++) {
			const struct floe_ice_part_value *v = &f->key.v[k];
			if (k)
				rc |= floe_buf_putc(b, ',');
			if (v->is_null)
				rc |= floe_buf_puts(b, "null");
			else if (v->s)
				rc |= floe_json_write_str(b, v->s, v->len);
			else
				rc |= floe_buf_printf(b, "%" PRId64, v->i);
		}
		rc |= floe_buf_puts(b, "],\"metrics\":[");
		for (size_t k = 0; k < f->nmetrics; k++) {
			const struct floe_ice_column_metrics *m = &f->metrics[k];
			rc |= floe_buf_printf(b, "%s{\"id\":%d,\"size\":%" PRId64 ",\"values\":%" PRId64
						 ",\"nulls\":%" PRId64,
					      k ? "," : "", (int)m->field_id, m->column_size, m->value_count,
					      m->null_count);
			if (m->has_bounds) {
				rc |= floe_buf_puts(b, ",\"lower\":\"");
				rc |= floe_hex_put(b, m->lower, m->lower_len);
				rc |= floe_buf_puts(b, "\",\"upper\":\"");
				rc |= floe_hex_put(b, m->upper, m->upper_len);
				rc |= floe_buf_putc(b, '"');
			}
			rc |= floe_buf_putc(b, '}');
		}
		rc |= floe_buf_puts(b, "],\"splits\":[");
		for (size_t k = 0; k < f->nsplits; k++)
			rc |= floe_buf_printf(b, "%s%" PRId64, k ? "," : "", f->splits[k]);
		rc |= floe_buf_puts(b, "]}");
	}
	rc |= floe_buf_puts(b, "]}");
	/* The buffer calls fail with distinct negative codes; any failure here means the
	 * buffer could not grow. */
	return rc ? FLOE_ENOMEM : 0;
}

uint64_t floe_spool_entry_rows(const struct floe_spool_entry *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nfiles; i++)
		n += (uint64_t)e->files[i].records;
	return n;
}

uint64_t floe_spool_entry_bytes(const struct floe_spool_entry *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nfiles; i++)
		n += (uint64_t)e->files[i].size;
	return n;
}

/* The 16 hex digits of a version 2 file's "xxh64". */
static int decode_xxh64(const struct floe_json *jf, uint64_t *out)
{
	const char *hex;
	if (floe_json_get_str(jf, "xxh64", &hex) || strlen(hex) != 16)
		return FLOE_ECORRUPT;
	uint64_t v = 0;
	for (size_t i = 0; i < 16; i++) {
		int d = floe_hex_digit(hex[i]);
		if (d < 0)
			return FLOE_ECORRUPT;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int decode_file(struct floe_alloc *a, const struct floe_json *jf, int64_t version,
		       struct floe_spool_file *f)
{
	const char *name;
	const struct floe_json *part = floe_json_get(jf, "partition");
	const struct floe_json *metrics = floe_json_get(jf, "metrics");
	const struct floe_json *splits = floe_json_get(jf, "splits");
	if (floe_json_get_str(jf, "name", &name) || floe_json_get_int(jf, "records", &f->records) ||
	    floe_json_get_int(jf, "size", &f->size) || !floe_json_is(part, FLOE_JSON_ARRAY) ||
	    floe_json_len(part) > FLOE_PART_MAX ||
	    !floe_json_is(metrics, FLOE_JSON_ARRAY) || !floe_json_is(splits, FLOE_JSON_ARRAY) ||
	    strchr(name, '/') || f->size < 0)
		return FLOE_ECORRUPT;
	if (version >= 2) {
		if (decode_xxh64(jf, &f->xxh64))
			return FLOE_ECORRUPT;
		f->has_xxh64 = true;
	}
	if (!(f->name = floe_strdup(a, name)))
		return FLOE_ENOMEM;
	f->nparts = floe_json_len(part);
	for (size_t k = 0; k < f->nparts; k++) {
		const struct floe_json *v = floe_json_at(part, k);
		struct floe_ice_part_value *pv = &f->key.v[k];
		memset(pv, 0, sizeof(*pv));
		if (floe_json_is(v, FLOE_JSON_NULL)) {
			pv->is_null = true;
		} else if (floe_json_is(v, FLOE_JSON_STRING)) {
			const char *s;
			size_t len;
			floe_json_str(v, &s, &len);
			if (len >= FLOE_PART_STR_MAX)
				return FLOE_ECORRUPT;
			memcpy(f->key.str[k], s, len + 1);
			pv->s = f->key.str[k];
			pv->len = len;
		} else if (floe_json_int(v, &pv->i) != 0) {
			return FLOE_ECORRUPT;
		}
	}
	f->nmetrics = floe_json_len(metrics);
	f->metrics = floe_calloc(a, f->nmetrics ? f->nmetrics : 1, sizeof(*f->metrics));
	f->nsplits = floe_json_len(splits);
	f->splits = floe_calloc(a, f->nsplits ? f->nsplits : 1, sizeof(*f->splits));
	if (!f->metrics || !f->splits)
		return FLOE_ENOMEM;
	for (size_t k = 0; k < f->nmetrics; k++) {
		const struct floe_json *jm = floe_json_at(metrics, k);
		struct floe_ice_column_metrics *m = &f->metrics[k];
		int64_t id;
		const char *lo, *hi;
		if (floe_json_get_int(jm, "id", &id) || floe_json_get_int(jm, "size", &m->column_size) ||
		    floe_json_get_int(jm, "values", &m->value_count) ||
		    floe_json_get_int(jm, "nulls", &m->null_count))
			return FLOE_ECORRUPT;
		m->field_id = (int32_t)id;
		if (floe_json_get_str(jm, "lower", &lo) == 0 && floe_json_get_str(jm, "upper", &hi) == 0) {
			uint8_t *l, *u;
			int rc = floe_hex_decode(a, lo, strlen(lo), &l, &m->lower_len);
			if (rc)
				return rc;
			m->lower = l;
			if ((rc = floe_hex_decode(a, hi, strlen(hi), &u, &m->upper_len)))
				return rc;
			m->upper = u;
			m->has_bounds = true;
		}
	}
	for (size_t k = 0; k < f->nsplits; k++)
		if (floe_json_int(floe_json_at(splits, k), &f->splits[k]))
			return FLOE_ECORRUPT;
	return 0;
}

/* A version 3 entry's provisional columns (an array, maybe empty). */
static int decode_prov(struct floe_alloc *a, const struct floe_json *arr, struct floe_spool_entry *e)
{
	size_t n = floe_json_len(arr);
	if (!floe_json_is(arr, FLOE_JSON_ARRAY) || n > FLOE_SPOOL_PROV_MAX)
		return FLOE_ECORRUPT;
	if (n && !(e->prov = floe_calloc(a, n, sizeof(*e->prov))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct floe_json *jc = floe_json_at(arr, i);
		struct floe_spool_prov *pv = &e->prov[i];
		const char *name, *type;
		int64_t id;
		if (floe_json_get_str(jc, "name", &name) || floe_json_get_str(jc, "type", &type) ||
		    floe_json_get_int(jc, "id", &id) || !name[0] || strlen(name) > FLOE_SPOOL_PROV_NAME ||
		    !type[0] || strlen(type) >= sizeof(pv->type) || id <= 0 || id > INT32_MAX)
			return FLOE_ECORRUPT;
		strcpy(pv->name, name);
		strcpy(pv->type, type);
		pv->id = (int32_t)id;
		e->nprov = i + 1;
	}
	return 0;
}

int floe_spool_entry_decode(struct floe_alloc *a, const struct floe_part_spec *spec, const char *text,
			    size_t len, struct floe_spool_entry **out)
{
	struct floe_json_doc *doc = NULL;
	struct floe_spool_entry *e = NULL;
	/* The entry names its spec (a file's values are as many as its fields): the
	 * commit reads them under that spec, whatever the spool's is now. */
	(void)spec;
	int rc = floe_json_parse(a, text, len, FLOE_SPOOL_ENTRY_MAX, &doc, NULL);
	if (rc) {
		rc = rc == FLOE_ENOMEM ? rc : FLOE_ECORRUPT;
		goto out;
	}
	const struct floe_json *root = floe_json_root(doc);
	const struct floe_json *files = floe_json_get(root, "files");
	int64_t version, eseq, created, replaced;
	const char *pos;
	if (floe_json_get_int(root, "version", &version) || version < 1 || version > ENTRY_VERSION ||
	    floe_json_get_int(root, "seq", &eseq) || eseq < 0 ||
	    floe_json_get_int(root, "created_us", &created) ||
	    floe_json_get_int(root, "replaced_utf8", &replaced) || replaced < 0 ||
	    floe_json_get_str(root, "positions", &pos) || !floe_json_is(files, FLOE_JSON_ARRAY)) {
		rc = FLOE_ECORRUPT;
		goto out;
	}
	rc = FLOE_ENOMEM;
	if (!(e = floe_calloc(a, 1, sizeof(*e))))
		goto out;
	e->seq = (uint64_t)eseq;
	e->created_us = created;
	int64_t spec_id = -1;
	if (floe_json_get(root, "spec") && (floe_json_get_int(root, "spec", &spec_id) || spec_id < 0 ||
					    spec_id > INT32_MAX)) {
		rc = FLOE_ECORRUPT;
		goto out;
	}
	e->spec_id = (int32_t)spec_id;
	e->replaced_utf8 = (uint64_t)replaced;
	if ((rc = floe_hex_decode(a, pos, strlen(pos), &e->positions, &e->positions_len))) {
		rc = rc == FLOE_EPARSE ? FLOE_ECORRUPT : rc;
		goto out;
	}
	if (version >= 2) {
		const char *from;
		rc = FLOE_ECORRUPT;
		if (floe_json_get_str(root, "from", &from))
			goto out;
		if ((rc = floe_hex_decode(a, from, strlen(from), &e->from, &e->from_len))) {
			rc = rc == FLOE_EPARSE ? FLOE_ECORRUPT : rc;
			goto out;
		}
	}
	if (version >= 3 && (rc = decode_prov(a, floe_json_get(root, "provisional"), e)))
		goto out;
	rc = FLOE_ENOMEM;
	size_t nfiles = floe_json_len(files);
	if (!(e->files = floe_calloc(a, nfiles ? nfiles : 1, sizeof(*e->files))))
		goto out;
	e->nfiles = nfiles;
	for (size_t i = 0; i < e->nfiles; i++)
		if ((rc = decode_file(a, floe_json_at(files, i), version, &e->files[i])))
			goto out;
	rc = 0;
out:
	floe_json_doc_free(doc);
	if (rc) {
		floe_spool_entry_free(a, e);
		return rc;
	}
	*out = e;
	return 0;
}

void floe_spool_entry_fini(struct floe_alloc *a, struct floe_spool_entry *e)
{
	for (size_t i = 0; e->files && i < e->nfiles; i++) {
		struct floe_spool_file *f = &e->files[i];
		floe_free(a, f->name);
		for (size_t k = 0; f->metrics && k < f->nmetrics; k++) {
			floe_free(a, (void *)f->metrics[k].lower);
			floe_free(a, (void *)f->metrics[k].upper);
		}
		floe_free(a, f->metrics);
		floe_free(a, f->splits);
	}
	floe_free(a, e->files);
	floe_free(a, e->positions);
	floe_free(a, e->from);
	floe_free(a, e->prov);
	e->prov = NULL;
	e->nprov = 0;
	e->files = NULL;
	e->positions = NULL;
	e->from = NULL;
}

void floe_spool_entry_free(struct floe_alloc *a, struct floe_spool_entry *e)
{
	if (!e)
		return;
	floe_spool_entry_fini(a, e);
	floe_free(a, e);
}

