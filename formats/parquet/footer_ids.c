/* A Parquet footer with its schema's field ids replaced, every other byte kept. */
#include "formats/parquet/footer_ids.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/parquet/thrift.h"

#include <string.h>

/* Thrift field ids: FileMetaData.schema and SchemaElement.field_id. */
#define META_SCHEMA 2
#define ELEM_FIELD_ID 9

int floe_pq_footer_span(const uint8_t tail[FLOE_PQ_TAIL], uint64_t size, uint64_t *off,
			uint32_t *len, struct floe_err *err)
{
	if (size < 12 || memcmp(tail + 4, "PAR1", 4) != 0)
		return floe_err_set(err, FLOE_EFORMAT,
				    "not a Parquet file (no PAR1 magic at its end)");
	uint32_t n = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 |
		     (uint32_t)tail[3] << 24;
	if (n == 0 || n > size - 12)
		return floe_err_set(err, FLOE_ECORRUPT, "footer length %u does not fit the file",
				    n);
	*off = size - FLOE_PQ_TAIL - n;
	*len = n;
	return 0;
}

/* The map's entry for id, or NULL. */
static struct floe_pq_reid *mapped(struct floe_pq_reid *map, size_t n, int32_t id)
{
	for (size_t i = 0; i < n; i++)
		if (map[i].from == id)
			return &map[i];
	return NULL;
}

static int check_map(const struct floe_pq_reid *map, size_t n, struct floe_err *err)
{
	for (size_t i = 0; i < n; i++)
		for (size_t k = i + 1; k < n; k++)
			if (map[i].from == map[k].from || map[i].to == map[k].to)
				return floe_err_set(
				    err, FLOE_EINVAL, "the field id map names id %d twice",
				    (int)(map[i].from == map[k].from ? map[i].from : map[i].to));
	return 0;
}

struct walk {
	struct floe_thrift_rd t;
	struct floe_pq_reid *map;
	size_t n;
	size_t copied; /* footer bytes already in out */
	struct floe_buf *out;
	struct floe_err *err;
};

/* One SchemaElement: its field_id's value (a zigzag varint after an unchanged field
 * header) is the only thing that can change; the bytes before it go out as they are. */
static int elem(struct walk *w, int type)
{
	struct floe_thrift_rd *t = &w->t;
	int16_t id;
	int ft;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		if (id != ELEM_FIELD_ID) {
			floe_thrift_rd_skip(t, ft, false);
			continue;
		}
		size_t at = t->pos;
		if (ft != FLOE_THRIFT_I32)
			return floe_err_at(w->err, FLOE_EPARSE, at,
					   "a field_id that is not an i32");
		int32_t v = floe_thrift_rd_i32(t, ft);
		if (t->err)
			break;
		struct floe_pq_reid *m = mapped(w->map, w->n, v);
		if (!m) {
			/* A kept id must not be one the map hands out. */
			for (size_t i = 0; i < w->n; i++)
				if (w->map[i].to == v)
					return floe_err_at(w->err, FLOE_EINVAL, at,
							   "field id %d is kept in the footer and "
							   "given to another column",
							   (int)v);
			continue;
		}
		if (floe_buf_append(w->out, w->t.p + w->copied, at - w->copied) ||
		    floe_buf_put_svarint(w->out, m->to))
			return floe_err_set(w->err, FLOE_ELIMIT,
					    "the new footer does not fit its buffer");
		w->copied = t->pos;
		m->seen++;
	}
	return 0;
}

static int walk(struct walk *w)
{
	struct floe_thrift_rd *t = &w->t;
	int16_t id;
	int ft, et, rc = 0;
	size_t n;
	bool schema = false;
	while (rc == 0 && floe_thrift_rd_field(t, &id, &ft)) {
		if (id != META_SCHEMA || schema) {
			floe_thrift_rd_skip(t, ft, false);
			continue;
		}
		schema = true;
		floe_thrift_rd_list(t, ft, &et, &n);
		if (!t->err && n && et != FLOE_THRIFT_STRUCT)
			return floe_err_at(w->err, FLOE_EPARSE, t->pos,
					   "the footer's schema is not a list of structs");
		for (size_t i = 0; rc == 0 && i < n && !t->err; i++)
			rc = elem(w, et);
	}
	if (rc)
		return rc;
	if (t->err)
		return floe_err_at(w->err, t->err, t->err_pos,
				   "the footer is not a FileMetaData (%s)", floe_strerror(t->err));
	if (!schema)
		return floe_err_at(w->err, FLOE_EPARSE, t->pos, "the footer has no schema");
	return 0;
}

int floe_pq_footer_reid(const uint8_t *footer, size_t len, struct floe_pq_reid *map, size_t n,
			struct floe_buf *out, struct floe_err *err)
{
	size_t was = out->len;
	int rc = check_map(map, n, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++)
		map[i].seen = 0;
	struct walk w = {.map = map, .n = n, .out = out, .err = err};
	floe_thrift_rd_init(&w.t, footer, len);
	rc = walk(&w);
	/* The rest of the footer as it is (what follows the FileMetaData too). */
	if (rc == 0 && floe_buf_append(out, footer + w.copied, len - w.copied))
		rc = floe_err_set(err, FLOE_ELIMIT, "the new footer does not fit its buffer");
	size_t flen = out->len - was;
	if (rc == 0 && flen > UINT32_MAX)
		rc = floe_err_set(err, FLOE_ELIMIT, "the new footer is over 4 GiB");
	if (rc == 0 && (floe_buf_put_le32(out, (uint32_t)flen) || floe_buf_append(out, "PAR1", 4)))
		rc = floe_err_set(err, FLOE_ELIMIT, "the new footer does not fit its buffer");
	if (rc)
		out->len = was;
	return rc;
}
