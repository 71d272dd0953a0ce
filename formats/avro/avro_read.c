/* Avro object container reader: parses the header and the writer schema (JSON), then
 * decodes each record of each block into a generic value tree in a per-record arena.
 * Every count and length from the file is checked against the bytes that remain and
 * against hard caps; nesting is limited, so hostile input fails cleanly. */
#include "avro.h"
#include "avro_internal.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/json/json.h"

#include <string.h>
#include <zlib.h>

#define MAX_DEPTH 64
/* zlib counts in uInt; feed it at most this much at a time (fits 32-bit size_t too). */
#define ZCHUNK_MAX ((size_t)1 << 30)

/* ---- Values. ---- */

struct map_key {
	const char *p;
	size_t len;
};

struct floe_avro_value {
	enum floe_avro_type type;
	const struct floe_avro_schema *schema;
	size_t n; /* bytes length, or items/fields count */
	union {
		bool b;
		int64_t i;
		double d;
		const uint8_t *bytes;
		struct floe_avro_value *items;
	} u;
	struct map_key *keys;
};

enum floe_avro_type floe_avro_value_type(const struct floe_avro_value *v)
{
	return v ? v->type : FLOE_AVRO_NULL;
}

bool floe_avro_value_is_null(const struct floe_avro_value *v) { return !v || v->type == FLOE_AVRO_NULL; }

const struct floe_avro_value *floe_avro_value_get(const struct floe_avro_value *v, const char *name)
{
	if (!v || v->type != FLOE_AVRO_RECORD)
		return NULL;
	long i = floe_avro_schema_field_index(v->schema, name);
	return i < 0 ? NULL : &v->u.items[i];
}

size_t floe_avro_value_len(const struct floe_avro_value *v)
{
	if (v && (v->type == FLOE_AVRO_RECORD || v->type == FLOE_AVRO_ARRAY || v->type == FLOE_AVRO_MAP))
		return v->n;
	return 0;
}

const struct floe_avro_value *floe_avro_value_at(const struct floe_avro_value *v, size_t i)
{
	return i < floe_avro_value_len(v) ? &v->u.items[i] : NULL;
}

const char *floe_avro_value_key_at(const struct floe_avro_value *v, size_t i, size_t *len)
{
	if (!v || v->type != FLOE_AVRO_MAP || i >= v->n)
		return NULL;
	if (len)
		*len = v->keys[i].len;
	return v->keys[i].p;
}

int floe_avro_value_bool(const struct floe_avro_value *v, bool *out)
{
	if (!v || v->type != FLOE_AVRO_BOOLEAN)
		return FLOE_EFORMAT;
	*out = v->u.b;
	return 0;
}

int floe_avro_value_long(const struct floe_avro_value *v, int64_t *out)
{
	if (!v || (v->type != FLOE_AVRO_INT && v->type != FLOE_AVRO_LONG))
		return FLOE_EFORMAT;
	*out = v->u.i;
	return 0;
}

int floe_avro_value_double(const struct floe_avro_value *v, double *out)
{
	if (!v || (v->type != FLOE_AVRO_FLOAT && v->type != FLOE_AVRO_DOUBLE))
		return FLOE_EFORMAT;
	*out = v->u.d;
	return 0;
}

int floe_avro_value_bytes(const struct floe_avro_value *v, const uint8_t **p, size_t *len)
{
	if (!v || (v->type != FLOE_AVRO_BYTES && v->type != FLOE_AVRO_STRING && v->type != FLOE_AVRO_FIXED))
		return FLOE_EFORMAT;
	*p = v->u.bytes;
	*len = v->n;
	return 0;
}

int floe_avro_value_enum(const struct floe_avro_value *v, int64_t *index, const char **symbol)
{
	if (!v || v->type != FLOE_AVRO_ENUM)
		return FLOE_EFORMAT;
	if (index)
		*index = v->u.i;
	if (symbol)
		*symbol = v->schema->names[v->u.i];
	return 0;
}

/* ---- Decoding. ---- */

struct decoder {
	struct floe_avro_cursor c;
	struct floe_avro_arena *ar;
};

static int get_raw(struct decoder *d, size_t n, const uint8_t **p)
{
	if (n > d->c.len - d->c.pos)
		return FLOE_EPARSE;
	*p = d->c.p + d->c.pos;
	d->c.pos += n;
	return 0;
}

static int decode(struct decoder *d, const struct floe_avro_schema *s, struct floe_avro_value *v, int depth);

/* Arrays and maps: blocks of items until a zero count; a negative count is followed by
 * the block's byte size. Items go into an array that doubles as it fills. */
static int decode_items(struct decoder *d, const struct floe_avro_schema *s, struct floe_avro_value *v,
			int depth)
{
	bool is_map = s->type == FLOE_AVRO_MAP;
	size_t n = 0, cap = 0;
	struct floe_avro_value *items = NULL;
	struct map_key *keys = NULL;
	for (;;) {
		int64_t count, size;
		int rc = floe_avro_get_long(&d->c, &count);
		if (rc)
			return rc;
		if (count == 0)
			break;
		if (count < 0) {
			if (count == INT64_MIN)
				return FLOE_EPARSE;
			count = -count;
			if ((rc = floe_avro_get_long(&d->c, &size)) || size < 0)
				return FLOE_EPARSE;
		}
		/* Cap by what an arena could ever hold; the arena's own limit does the rest. */
		if ((uint64_t)count > SIZE_MAX / sizeof(*items) - n)
			return FLOE_ELIMIT;
		size_t need = n + (size_t)count;
		if (need > cap) {
			size_t ncap = cap ? cap : 4;
			while (ncap < need)
				ncap = ncap > SIZE_MAX / 2 / sizeof(*items) ? need : ncap * 2;
			struct floe_avro_value *ni = floe_avro_arena_alloc(d->ar, ncap * sizeof(*ni));
			struct map_key *nk = is_map ? floe_avro_arena_alloc(d->ar, ncap * sizeof(*nk)) : NULL;
			if (!ni || (is_map && !nk))
				return d->ar->err;
			if (n) {
				memcpy(ni, items, n * sizeof(*ni));
				if (is_map)
					memcpy(nk, keys, n * sizeof(*nk));
			}
			items = ni;
			keys = nk;
			cap = ncap;
		}
		for (int64_t k = 0; k < count; k++) {
			if (is_map) {
				const uint8_t *p;
				size_t len;
				if ((rc = floe_avro_get_bytes(&d->c, &p, &len)))
					return rc;
				if (!(keys[n].p = floe_avro_arena_strndup(d->ar, p, len)))
					return d->ar->err;
				keys[n].len = len;
			}
			if ((rc = decode(d, s->kids[0], &items[n], depth + 1)))
				return rc;
			n++;
		}
	}
	v->u.items = items;
	v->keys = keys;
	v->n = n;
	return 0;
}

static int decode(struct decoder *d, const struct floe_avro_schema *s, struct floe_avro_value *v, int depth)
{
	if (depth > MAX_DEPTH)
		return FLOE_ELIMIT;
	memset(v, 0, sizeof(*v));
	v->type = s->type;
	v->schema = s;
	const uint8_t *p;
	int64_t i;
	int rc = 0;
	switch (s->type) {
	case FLOE_AVRO_NULL:
		return 0;
	case FLOE_AVRO_BOOLEAN:
		if ((rc = get_raw(d, 1, &p)))
			return rc;
		if (*p > 1)
			return FLOE_EPARSE;
		v->u.b = *p;
		return 0;
	case FLOE_AVRO_INT:
		if ((rc = floe_avro_get_long(&d->c, &i)))
			return rc;
		if (i < INT32_MIN || i > INT32_MAX)
			return FLOE_EPARSE;
		v->u.i = i;
		return 0;
	case FLOE_AVRO_LONG:
		return floe_avro_get_long(&d->c, &v->u.i);
	case FLOE_AVRO_FLOAT: {
		if ((rc = get_raw(d, 4, &p)))
			return rc;
		uint32_t u = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
		float f;
		memcpy(&f, &u, 4);
		v->u.d = f;
		return 0;
	}
	case FLOE_AVRO_DOUBLE: {
		if ((rc = get_raw(d, 8, &p)))
			return rc;
		uint64_t u = 0;
		for (int k = 7; k >= 0; k--)
			u = u << 8 | p[k];
		memcpy(&v->u.d, &u, 8);
		return 0;
	}
	case FLOE_AVRO_BYTES:
	case FLOE_AVRO_STRING:
	case FLOE_AVRO_FIXED: {
		size_t len;
		if (s->type == FLOE_AVRO_FIXED) {
			len = s->n;
			rc = get_raw(d, len, &p);
		} else {
			rc = floe_avro_get_bytes(&d->c, &p, &len);
		}
		if (rc)
			return rc;
		/* A copy with a NUL after it, so strings can be used as C strings. */
		if (!(v->u.bytes = (const uint8_t *)floe_avro_arena_strndup(d->ar, p, len)))
			return d->ar->err;
		v->n = len;
		return 0;
	}
	case FLOE_AVRO_ENUM:
		if ((rc = floe_avro_get_long(&d->c, &i)))
			return rc;
		if (i < 0 || (uint64_t)i >= s->n)
			return FLOE_EPARSE;
		v->u.i = i;
		return 0;
	case FLOE_AVRO_RECORD:
		v->n = s->n;
		if (s->n) {
			if (s->n > SIZE_MAX / sizeof(*v->u.items))
				return FLOE_ELIMIT;
			if (!(v->u.items = floe_avro_arena_alloc(d->ar, s->n * sizeof(*v->u.items))))
				return d->ar->err;
		}
		for (size_t k = 0; k < s->n; k++)
			if ((rc = decode(d, s->kids[k], &v->u.items[k], depth + 1)))
				return rc;
		return 0;
	case FLOE_AVRO_ARRAY:
	case FLOE_AVRO_MAP:
		return decode_items(d, s, v, depth);
	case FLOE_AVRO_UNION:
		if ((rc = floe_avro_get_long(&d->c, &i)))
			return rc;
		if (i < 0 || (uint64_t)i >= s->n)
			return FLOE_EPARSE;
		return decode(d, s->kids[i], v, depth + 1);
	}
	return FLOE_EFORMAT;
}

/* ---- Container. ---- */

struct meta_entry {
	const char *key;
	const uint8_t *value;
	size_t len;
};

struct floe_avro_reader {
	struct floe_alloc *a;
	const uint8_t *data;
	size_t len;
	struct floe_avro_cursor file; /* position in the file */
	struct floe_avro_arena schema_ar;       /* schema, metadata */
	struct floe_avro_arena rec_ar;          /* the current record's values */
	struct floe_json_doc *doc;
	const struct floe_avro_schema *schema;
	struct meta_entry *meta;
	size_t nmeta;
	bool deflate;
	uint8_t sync[16];
	struct floe_buf inflated;
	size_t max_block;
	struct floe_avro_cursor block; /* the current block's data */
	int64_t left;                 /* records left in the current block */
	struct floe_avro_value value;
	size_t block_at; /* where the current block starts in the file */
};

/* The header's metadata map, after the magic: blocks of key/value pairs until an empty
 * block, copied into meta. */
static int read_meta(struct floe_avro_reader *r)
{
	struct floe_avro_cursor *c = &r->file;
	size_t cap = 0;
	int rc;
	for (;;) {
		int64_t count, size;
		if ((rc = floe_avro_get_long(c, &count)))
			return rc;
		if (count == 0)
			return 0;
		if (count < 0) {
			if (count == INT64_MIN)
				return FLOE_EPARSE;
			count = -count;
			if ((rc = floe_avro_get_long(c, &size)) || size < 0)
				return FLOE_EPARSE;
		}
		/* Each entry takes at least two bytes (two lengths). */
		if ((uint64_t)count > (c->len - c->pos) / 2 || (uint64_t)count > 4096 - r->nmeta)
			return FLOE_EPARSE;
		size_t need = r->nmeta + (size_t)count;
		if (need > cap) {
			struct meta_entry *m = floe_avro_arena_alloc(&r->schema_ar, need * 2 * sizeof(*m));
			if (!m)
				return FLOE_ENOMEM;
			if (r->nmeta)
				memcpy(m, r->meta, r->nmeta * sizeof(*m));
			r->meta = m;
			cap = need * 2;
		}
		for (int64_t k = 0; k < count; k++) {
			const uint8_t *kp;
			size_t kl;
			struct meta_entry *e = &r->meta[r->nmeta];
			if ((rc = floe_avro_get_bytes(c, &kp, &kl)) || (rc = floe_avro_get_bytes(c, &e->value, &e->len)))
				return rc;
			if (!(e->key = floe_avro_arena_strndup(&r->schema_ar, kp, kl)))
				return FLOE_ENOMEM;
			r->nmeta++;
		}
	}
}

/* The writer schema, from the avro.schema metadata (JSON). */
static int read_schema(struct floe_avro_reader *r, struct floe_err *err)
{
	size_t len;
	const uint8_t *sj = floe_avro_reader_meta(r, "avro.schema", &len);
	if (!sj)
		return floe_err_set(err, FLOE_EFORMAT, "Avro header: no avro.schema");
	struct floe_err je;
	int rc = floe_json_parse(r->a, (const char *)sj, len, len, &r->doc, &je);
	if (rc) {
		rc = rc == FLOE_ENOMEM ? rc : FLOE_EFORMAT;
		return floe_err_set(err, rc, "Avro writer schema: %s", je.msg);
	}
	if ((rc = floe_avro_schema_parse(&r->schema_ar, floe_json_root(r->doc), &r->schema)))
		return floe_err_set(err, rc, "Avro writer schema: %s",
				    rc == FLOE_ENOMEM ? floe_strerror(rc) : "not a valid schema");
	return 0;
}

static int read_header(struct floe_avro_reader *r, struct floe_err *err)
{
	struct floe_avro_cursor *c = &r->file;
	if (c->len < 4 || memcmp(c->p, "Obj\x01", 4) != 0)
		return floe_err_at(err, FLOE_EFORMAT, 0, "not an Avro object container file");
	c->pos = 4;
	int rc = read_meta(r);
	if (!rc && c->len - c->pos < 16)
		rc = FLOE_EPARSE;
	if (rc == FLOE_ENOMEM)
		return floe_err_set(err, rc, "Avro header: %s", floe_strerror(rc));
	if (rc)
		return floe_err_at(err, rc, c->pos, "Avro header: malformed metadata at byte %zu",
				   c->pos);
	memcpy(r->sync, c->p + c->pos, 16);
	c->pos += 16;

	size_t len;
	const uint8_t *codec = floe_avro_reader_meta(r, "avro.codec", &len);
	if (!codec || (len == 4 && memcmp(codec, "null", 4) == 0))
		r->deflate = false;
	else if (len == 7 && memcmp(codec, "deflate", 7) == 0)
		r->deflate = true;
	else
		return floe_err_set(err, FLOE_EUNSUPPORTED, "Avro codec \"%.*s\" is not supported",
				    (int)(len < 64 ? len : 64), (const char *)codec);
	return read_schema(r, err);
}

int floe_avro_reader_new(struct floe_alloc *a, const uint8_t *data, size_t len,
			 const struct floe_avro_reader_opts *opts, struct floe_avro_reader **out,
			 struct floe_err *err)
{
	if (!data || !out)
		return floe_err_set(err, FLOE_EINVAL, "Avro reader: no data");
	struct floe_avro_reader *r = floe_calloc(a, 1, sizeof(*r));
	if (!r)
		return floe_err_set(err, FLOE_ENOMEM, "Avro: %s", floe_strerror(FLOE_ENOMEM));
	r->a = a;
	r->data = data;
	r->len = len;
	r->file.p = data;
	r->file.len = len;
	r->schema_ar.a = a;
	r->schema_ar.max = SIZE_MAX;
	r->rec_ar.a = a;
	r->rec_ar.max = opts && opts->max_record_bytes ? opts->max_record_bytes : (size_t)16 << 20;
	r->max_block = opts && opts->max_block_bytes ? opts->max_block_bytes : (size_t)64 << 20;
	floe_buf_init(&r->inflated, a, r->max_block);
	int rc = read_header(r, err);
	if (rc) {
		floe_avro_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

const uint8_t *floe_avro_reader_meta(const struct floe_avro_reader *r, const char *key, size_t *len)
{
	for (size_t i = 0; r && i < r->nmeta; i++) {
		if (strcmp(r->meta[i].key, key) == 0) {
			if (len)
				*len = r->meta[i].len;
			return r->meta[i].value;
		}
	}
	return NULL;
}

const struct floe_avro_schema *floe_avro_reader_schema(const struct floe_avro_reader *r)
{
	return r ? r->schema : NULL;
}

static int inflate_block(struct floe_avro_reader *r, const uint8_t *p, size_t len)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	zs.zalloc = floe_avro_zalloc;
	zs.zfree = floe_avro_zfree;
	zs.opaque = r->a;
	int zrc = inflateInit2(&zs, -15);
	if (zrc == Z_MEM_ERROR)
		return FLOE_ENOMEM;
	if (zrc != Z_OK)
		return FLOE_ECODEC;
	floe_buf_reset(&r->inflated);
	int rc = 0;
	size_t in_left = len;
	zs.next_in = (uint8_t *)(uintptr_t)p;
	for (;;) {
		if (zs.avail_in == 0) {
			uInt n = (uInt)(in_left < ZCHUNK_MAX ? in_left : ZCHUNK_MAX);
			zs.avail_in = n;
			in_left -= n;
		}
		size_t room = r->inflated.cap - r->inflated.len;
		if (room == 0) {
			size_t want = r->inflated.cap ? r->inflated.cap : (len < 4096 ? 4096 : len * 4);
			if (want > r->max_block - r->inflated.len)
				want = r->max_block - r->inflated.len;
			if (want == 0) {
				rc = FLOE_ELIMIT;
				break;
			}
			if ((rc = floe_buf_reserve(&r->inflated, want)))
				break;
			room = r->inflated.cap - r->inflated.len;
		}
		uInt chunk = (uInt)(room < ZCHUNK_MAX ? room : ZCHUNK_MAX);
		zs.next_out = r->inflated.data + r->inflated.len;
		zs.avail_out = chunk;
		zrc = inflate(&zs, Z_NO_FLUSH);
		r->inflated.len += chunk - zs.avail_out;
		if (zrc == Z_STREAM_END)
			break;
		if (zrc == Z_MEM_ERROR) {
			rc = FLOE_ENOMEM;
			break;
		}
		if (zrc == Z_BUF_ERROR && zs.avail_in == 0 && in_left == 0) {
			rc = FLOE_ECODEC; /* truncated stream */
			break;
		}
		if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
			rc = FLOE_ECODEC;
			break;
		}
	}
	inflateEnd(&zs);
	return rc;
}

/* Reads the next block header and data; returns 1 with a block ready, 0 at the end. */
static int next_block(struct floe_avro_reader *r)
{
	struct floe_avro_cursor *c = &r->file;
	for (;;) {
		if (c->pos == c->len)
			return 0;
		int64_t count, size;
		const uint8_t *p;
		r->block_at = c->pos;
		int rc = floe_avro_get_long(c, &count);
		if (!rc)
			rc = floe_avro_get_long(c, &size);
		if (rc)
			return rc;
		if (count < 0 || size < 0 || (uint64_t)size > c->len - c->pos)
			return FLOE_EPARSE;
		/* Records can be empty, so the count is not bounded by the size; this cap keeps a
		 * hostile count from producing billions of empty records. */
		if ((uint64_t)count > (uint64_t)size + 1024)
			return FLOE_ELIMIT;
		p = c->p + c->pos;
		c->pos += (size_t)size;
		if (c->len - c->pos < 16)
			return FLOE_EPARSE;
		if (memcmp(c->p + c->pos, r->sync, 16) != 0)
			return FLOE_EFORMAT;
		c->pos += 16;
		if (count == 0)
			continue;
		if (r->deflate) {
			if ((rc = inflate_block(r, p, (size_t)size)))
				return rc;
			r->block.p = r->inflated.data;
			r->block.len = r->inflated.len;
		} else {
			if ((size_t)size > r->max_block)
				return FLOE_ELIMIT;
			r->block.p = p;
			r->block.len = (size_t)size;
		}
		r->block.pos = 0;
		r->left = count;
		return 1;
	}
}

int floe_avro_reader_next(struct floe_avro_reader *r, const struct floe_avro_value **out,
			  struct floe_err *err)
{
	floe_avro_arena_reset(&r->rec_ar);
	int rc;
	if (r->left == 0) {
		/* Every record of the last block decoded: its data must be used up exactly. */
		if (r->block.pos != r->block.len)
			return floe_err_at(err, FLOE_EFORMAT, r->block.pos,
					   "Avro block at byte %zu: %zu bytes after its records",
					   r->block_at, r->block.len - r->block.pos);
		rc = next_block(r);
		if (rc < 0)
			return floe_err_at(err, rc, r->file.pos,
					   "Avro block at byte %zu: %s (at byte %zu)", r->block_at,
					   floe_strerror(rc), r->file.pos);
		if (rc == 0)
			return 0;
	}
	struct decoder d = {.c = r->block, .ar = &r->rec_ar};
	rc = decode(&d, r->schema, &r->value, 0);
	if (rc)
		return floe_err_at(err, rc, d.c.pos,
				   "Avro record at byte %zu of the block at byte %zu: %s", d.c.pos,
				   r->block_at, floe_strerror(rc));
	r->block.pos = d.c.pos;
	r->left--;
	*out = &r->value;
	return 1;
}

void floe_avro_reader_free(struct floe_avro_reader *r)
{
	if (!r)
		return;
	floe_avro_arena_free(&r->rec_ar);
	floe_avro_arena_free(&r->schema_ar);
	floe_json_doc_free(r->doc);
	floe_buf_fini(&r->inflated);
	floe_free(r->a, r);
}
