/* The DDSketch protobuf message (sketches-go ddsketch/pb/ddsketch.proto):
 *   DDSketch { IndexMapping mapping = 1; Store positiveValues = 2;
 *              Store negativeValues = 3; double zeroCount = 4; }
 *   IndexMapping { double gamma = 1; double indexOffset = 2; Interpolation interpolation = 3; }
 *   Store { map<sint32, double> binCounts = 1; repeated double contiguousBinCounts = 2;
 *           sint32 contiguousBinIndexOffset = 3; }
 * written and read by hand: varints, zigzag sint32, little-endian fixed64 doubles, packed
 * repeated doubles and map entries are all these three messages use. */
#include "agent/agg/ddsketch.h"
#include "agent/agg/ddsketch_impl.h"

#include <string.h>

#include "formats/base/error.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };

/* A writer that only counts when p is NULL, so that one function gives both the exact
 * size and the bytes. */
struct pbw {
	uint8_t *p;
	size_t n;
};

static void w_byte(struct pbw *w, uint8_t b)
{
	if (w->p)
		w->p[w->n] = b;
	w->n++;
}

static void w_varint(struct pbw *w, uint64_t v)
{
	while (v >= 0x80) {
		w_byte(w, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	w_byte(w, (uint8_t)v);
}

static void w_double(struct pbw *w, double d)
{
	uint64_t v;
	memcpy(&v, &d, sizeof(v));
	for (int i = 0; w->p && i < 8; i++) /* little-endian, whatever the host's order */
		w->p[w->n + (size_t)i] = (uint8_t)(v >> (8 * i));
	w->n += 8;
}

static size_t varint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static uint32_t zigzag32(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

static size_t store_body_len(const struct floe_dds_store *st)
{
	int64_t lo;
	uint32_t n;
	floe_dds_store_span(st, &lo, &n);
	if (!n)
		return 0;
	size_t bytes = (size_t)n * 8;
	return 1 + varint_len(bytes) + bytes + 1 + varint_len(zigzag32((int32_t)lo));
}

static void write_store(struct pbw *w, uint8_t tag, const struct floe_dds_store *st)
{
	int64_t lo;
	uint32_t n, j = 0;
	floe_dds_store_span(st, &lo, &n);
	w_byte(w, tag);
	w_varint(w, store_body_len(st));
	if (!n)
		return;
	/* Contiguous counts rather than the binCounts map: sketches-js reads only these. */
	w_byte(w, (2 << 3) | WT_LEN);
	w_varint(w, (uint64_t)n * 8);
	if (!w->p) /* sizing: the counts are 8 bytes each, whatever they are */
		w->n += (size_t)n * 8;
	for (uint32_t i = 0; w->p && i < n; i++)
		w_double(w, (double)floe_dds_store_count(st, lo + i, &j));
	w_byte(w, (3 << 3) | WT_VARINT);
	w_varint(w, zigzag32((int32_t)lo));
}

static void write_sketch(struct pbw *w, const struct floe_dds *s)
{
	w_byte(w, (1 << 3) | WT_LEN);
	w_varint(w, 20);
	w_byte(w, (1 << 3) | WT_I64);
	w_double(w, s->gamma);
	w_byte(w, (2 << 3) | WT_I64);
	w_double(w, 0.0);
	w_byte(w, (3 << 3) | WT_VARINT);
	w_byte(w, 0); /* NONE: the logarithmic mapping */
	write_store(w, (2 << 3) | WT_LEN, &s->pos);
	write_store(w, (3 << 3) | WT_LEN, &s->neg);
	w_byte(w, (4 << 3) | WT_I64);
	w_double(w, (double)s->zero_count);
}

size_t floe_dds_proto_size(const struct floe_dds *s)
{
	struct pbw w = {NULL, 0};
	write_sketch(&w, s);
	return w.n;
}

int floe_dds_encode_proto(const struct floe_dds *s, void *out, size_t cap)
{
	if (cap < floe_dds_proto_size(s))
		return FLOE_ELIMIT;
	struct pbw w = {out, 0};
	write_sketch(&w, s);
	return 0;
}

/* Decoding runs the same walk three times over the input: SCAN reads the mapping and
 * each store's contiguousBinIndexOffset (the last one given wins, and the contiguous
 * counts are relative to it wherever it appears), CHECK validates every count and bucket
 * index against them, APPLY fills the sketch. So a failure leaves the sketch untouched,
 * and hostile input is rejected before any state changes. */
enum pass { SCAN, CHECK, APPLY };

struct dec {
	const uint8_t *b;
	size_t len;
	struct floe_dds *s;
	enum pass pass;
	size_t err; /* offset of the first offending byte */
	bool have_mapping;
	double gamma, index_offset;
	uint64_t interp;
	int64_t koff;	     /* -indexOffset, added to every incoming index */
	int64_t bound;	     /* largest index magnitude a double can have */
	int64_t cont_off[2]; /* final contiguousBinIndexOffset per store */
	int64_t cont_pos[2]; /* running position in the contiguous counts */
	double zero;
	uint64_t total; /* counts in the stores */
};

static int fail(struct dec *d, size_t at, int code)
{
	d->err = at;
	return code;
}

static int rd_varint(struct dec *d, size_t *pos, size_t end, uint64_t *v)
{
	uint64_t r = 0;
	size_t start = *pos;
	for (unsigned i = 0; i < 10; i++) {
		if (*pos >= end)
			return fail(d, *pos, FLOE_EPARSE);
		uint8_t c = d->b[(*pos)++];
		if (i == 9 && c > 1)
			return fail(d, start, FLOE_EPARSE);
		r |= (uint64_t)(c & 0x7f) << (7 * i);
		if (!(c & 0x80)) {
			*v = r;
			return 0;
		}
	}
	return fail(d, start, FLOE_EPARSE);
}

static int rd_double(struct dec *d, size_t *pos, size_t end, double *out)
{
	if (end - *pos < 8)
		return fail(d, *pos, FLOE_EPARSE);
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)d->b[*pos + i] << (8 * i);
	memcpy(out, &v, sizeof(v));
	*pos += 8;
	return 0;
}

static int rd_sint32(struct dec *d, size_t *pos, size_t end, int64_t *out)
{
	size_t at = *pos;
	uint64_t v;
	int rc = rd_varint(d, pos, end, &v);
	if (rc)
		return rc;
	if (v > UINT32_MAX)
		return fail(d, at, FLOE_EFORMAT);
	*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
	return 0;
}

/* Reads a tag; *field 0 means the end of [*pos, end). */
static int rd_tag(struct dec *d, size_t *pos, size_t end, uint64_t *field, unsigned *wt)
{
	*field = 0;
	if (*pos >= end)
		return 0;
	size_t at = *pos;
	uint64_t t;
	int rc = rd_varint(d, pos, end, &t);
	if (rc)
		return rc;
	*wt = (unsigned)(t & 7);
	*field = t >> 3;
	if (*field == 0 || *field > 0x1fffffff)
		return fail(d, at, FLOE_EPARSE);
	return 0;
}

/* The [*sub, *subend) of a length-delimited field whose length prefix is at *pos. */
static int rd_len(struct dec *d, size_t *pos, size_t end, size_t *subend)
{
	size_t at = *pos;
	uint64_t n;
	int rc = rd_varint(d, pos, end, &n);
	if (rc)
		return rc;
	if (n > end - *pos)
		return fail(d, at, FLOE_EPARSE);
	*subend = *pos + (size_t)n;
	return 0;
}

static int skip_field(struct dec *d, size_t at, size_t *pos, size_t end, unsigned wt)
{
	uint64_t v;
	size_t sub;
	switch (wt) {
	case WT_VARINT:
		return rd_varint(d, pos, end, &v);
	case WT_I64:
	case WT_I32: {
		size_t n = wt == WT_I64 ? 8 : 4;
		if (end - *pos < n)
			return fail(d, *pos, FLOE_EPARSE);
		*pos += n;
		return 0;
	}
	case WT_LEN: {
		int rc = rd_len(d, pos, end, &sub);
		if (!rc)
			*pos = sub;
		return rc;
	}
	case 3:
	case 4:
		return fail(d, at, FLOE_EUNSUPPORTED); /* proto2 groups */
	default:
		return fail(d, at, FLOE_EPARSE);
	}
}

/* True when finite c >= 0 is a whole number (every double from 2^52 up is). */
static bool whole(double c)
{
	return c >= 4503599627370496.0 || (double)(uint64_t)c == c;
}

/* Validates a count (CHECK) or adds it to bucket key - indexOffset (APPLY). */
static int take_count(struct dec *d, int si, size_t at, int64_t key, double c)
{
	if (d->pass == SCAN)
		return 0;
	if (!__builtin_isfinite(c) || c < 0.0)
		return fail(d, at, FLOE_EFORMAT);
	if (!whole(c))
		return fail(d, at, FLOE_EUNSUPPORTED);
	if (c == 0.0)
		return 0;
	if (c > (double)UINT32_MAX || (uint64_t)c > UINT32_MAX - d->total)
		return fail(d, at, FLOE_ELIMIT);
	key += d->koff;
	if (key > d->bound || key < -d->bound)
		return fail(d, at, FLOE_EFORMAT);
	d->total += (uint64_t)c;
	if (d->pass == APPLY)
		floe_dds_add_key(d->s, si ? &d->s->neg : &d->s->pos, (int32_t)key, (uint32_t)c);
	return 0;
}

static int dec_map_entry(struct dec *d, int si, size_t pos, size_t end)
{
	size_t at = pos;
	int64_t key = 0;
	double c = 0.0;
	uint64_t field;
	unsigned wt;
	int rc;
	while (!(rc = rd_tag(d, &pos, end, &field, &wt)) && field) {
		size_t fat = pos;
		if (field == 1 && wt == WT_VARINT)
			rc = rd_sint32(d, &pos, end, &key);
		else if (field == 2 && wt == WT_I64)
			rc = rd_double(d, &pos, end, &c);
		else if (field <= 2)
			rc = fail(d, fat, FLOE_EFORMAT);
		else
			rc = skip_field(d, fat, &pos, end, wt);
		if (rc)
			return rc;
	}
	return rc ? rc : take_count(d, si, at, key, c);
}

static int dec_contiguous(struct dec *d, int si, size_t *pos, size_t end, unsigned wt)
{
	size_t sub = end;
	int rc = 0;
	if (wt == WT_LEN) {
		rc = rd_len(d, pos, end, &sub);
		if (!rc && (sub - *pos) % 8)
			rc = fail(d, *pos, FLOE_EPARSE);
	} else {
		sub = *pos + 8 <= end ? *pos + 8 : end;
	}
	while (!rc && *pos < sub) {
		size_t at = *pos;
		double c;
		rc = rd_double(d, pos, sub, &c);
		if (!rc)
			rc = take_count(d, si, at, d->cont_off[si] + d->cont_pos[si], c);
		d->cont_pos[si]++;
	}
	return rc;
}

static int dec_store(struct dec *d, int si, size_t pos, size_t end)
{
	uint64_t field;
	unsigned wt;
	int rc;
	while (!(rc = rd_tag(d, &pos, end, &field, &wt)) && field) {
		size_t at = pos;
		size_t sub;
		if (field == 1 && wt == WT_LEN) {
			rc = rd_len(d, &pos, end, &sub);
			if (!rc)
				rc = dec_map_entry(d, si, pos, sub);
			pos = sub;
		} else if (field == 2 && (wt == WT_LEN || wt == WT_I64)) {
			rc = dec_contiguous(d, si, &pos, end, wt);
		} else if (field == 3 && wt == WT_VARINT) {
			int64_t off;
			rc = rd_sint32(d, &pos, end, &off);
			if (!rc && d->pass == SCAN)
				d->cont_off[si] = off;
		} else if (field <= 3) {
			rc = fail(d, at, FLOE_EFORMAT);
		} else {
			rc = skip_field(d, at, &pos, end, wt);
		}
		if (rc)
			return rc;
	}
	return rc;
}

static int dec_mapping(struct dec *d, size_t pos, size_t end)
{
	uint64_t field;
	unsigned wt;
	int rc;
	d->have_mapping = true;
	while (!(rc = rd_tag(d, &pos, end, &field, &wt)) && field) {
		size_t at = pos;
		if (field == 1 && wt == WT_I64)
			rc = rd_double(d, &pos, end, &d->gamma);
		else if (field == 2 && wt == WT_I64)
			rc = rd_double(d, &pos, end, &d->index_offset);
		else if (field == 3 && wt == WT_VARINT)
			rc = rd_varint(d, &pos, end, &d->interp);
		else if (field <= 3)
			rc = fail(d, at, FLOE_EFORMAT);
		else
			rc = skip_field(d, at, &pos, end, wt);
		if (rc)
			return rc;
	}
	return rc;
}

static int dec_sketch(struct dec *d)
{
	size_t pos = 0, end = d->len;
	uint64_t field;
	unsigned wt;
	int rc;
	d->cont_pos[0] = d->cont_pos[1] = 0;
	d->total = 0;
	while (!(rc = rd_tag(d, &pos, end, &field, &wt)) && field) {
		size_t at = pos, sub;
		if ((field == 1 || field == 2 || field == 3) && wt == WT_LEN) {
			rc = rd_len(d, &pos, end, &sub);
			if (!rc && field == 1 && d->pass == SCAN)
				rc = dec_mapping(d, pos, sub);
			else if (!rc && field != 1)
				rc = dec_store(d, field == 3, pos, sub);
			if (!rc)
				pos = sub;
		} else if (field == 4 && wt == WT_I64) {
			rc = rd_double(d, &pos, end, &d->zero);
			if (!rc && d->pass == CHECK &&
			    (!__builtin_isfinite(d->zero) || d->zero < 0.0))
				rc = fail(d, at, FLOE_EFORMAT);
			else if (!rc && d->pass == CHECK && !whole(d->zero))
				rc = fail(d, at, FLOE_EUNSUPPORTED);
		} else if (field <= 4) {
			rc = fail(d, at, FLOE_EFORMAT);
		} else {
			rc = skip_field(d, at, &pos, end, wt);
		}
		if (rc)
			return rc;
	}
	return rc;
}

/* Checks the mapping SCAN found against the sketch's own. */
static int check_mapping(struct dec *d)
{
	if (!d->have_mapping)
		return fail(d, 0, FLOE_EFORMAT);
	if (d->interp != 0)
		return fail(d, 0, FLOE_EUNSUPPORTED);
	/* Writers compute gamma as (1+a)/(1-a) or 1 + 2a/(1-a): equal within rounding. */
	if (!(__builtin_fabs(d->gamma - d->s->gamma) <= 1e-9 * d->s->gamma))
		return fail(d, 0, FLOE_EFORMAT);
	if (!__builtin_isfinite(d->index_offset) || !whole(__builtin_fabs(d->index_offset)))
		return fail(d, 0, FLOE_EUNSUPPORTED);
	if (__builtin_fabs(d->index_offset) > (double)d->bound)
		return fail(d, 0, FLOE_EFORMAT);
	d->koff = -(int64_t)d->index_offset;
	return 0;
}

int floe_dds_decode_proto(struct floe_dds *s, const void *p, size_t len, struct floe_err *err)
{
	struct dec d;
	memset(&d, 0, sizeof(d));
	d.b = p;
	d.len = len;
	d.s = s;
	d.bound = floe_dds_key_bound(s);
	d.pass = SCAN;
	int rc = dec_sketch(&d);
	if (!rc)
		rc = check_mapping(&d);
	if (!rc) {
		d.pass = CHECK;
		rc = dec_sketch(&d);
	}
	if (!rc && d.zero > (double)(UINT32_MAX - d.total))
		rc = fail(&d, 0, FLOE_ELIMIT);
	if (rc)
		return floe_err_at(err, rc, d.err, "DDSketch protobuf: %s at byte %zu",
				   floe_strerror(rc), d.err);
	floe_dds_reset(s);
	d.pass = APPLY;
	rc = dec_sketch(&d);
	s->zero_count = (uint64_t)d.zero;
	s->count = d.total + s->zero_count;
	/* Not part of the format: the caller restores them from its own columns. */
	s->sum = __builtin_nan("");
	s->min = __builtin_nan("");
	s->max = __builtin_nan("");
	return rc;
}
