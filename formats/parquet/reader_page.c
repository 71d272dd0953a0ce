/* The Parquet reader's pages: one leaf's column chunk read page by page. A page header
 * (Thrift compact) is read through a small window, the page's stored bytes are checked
 * against its CRC and decompressed (ZSTD, LZ4_RAW) into the leaf's page buffer, whose
 * levels and values are then decoded in place as the rows ask for them. The dictionary
 * page, first in its chunk, is kept in a buffer of its own. */
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_createDCtx_advanced, for the budgeted allocator */
#include "formats/parquet/reader_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/chunk.h"
#include "formats/base/crc.h"
#include "formats/parquet/rle.h"
#include "formats/parquet/thrift.h"

#include <lz4.h>
#include <string.h>
#include <zstd.h>
#include <zstd_errors.h>

/* The little-endian 32-bit length the format puts before a block. */
static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Page types (parquet.thrift PageType). */
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2, PAGE_DATA_V2 = 3 };

/* A page header is read through a window of this many bytes first, grown (up to
 * HDR_MAX) when the header is longer: statistics can make it so. */
#define HDR_FIRST ((size_t)256)
#define HDR_MAX ((size_t)1 << 20)

static const char *const enc_names[] = {
    "PLAIN",	      "GROUP_VAR_INT",	     "PLAIN_DICTIONARY",	"RLE",
    "BIT_PACKED",     "DELTA_BINARY_PACKED", "DELTA_LENGTH_BYTE_ARRAY", "DELTA_BYTE_ARRAY",
    "RLE_DICTIONARY", "BYTE_STREAM_SPLIT"};

const char *pq_encoding_name(int enc)
{
	return enc >= 0 && enc < 10 ? enc_names[enc] : "unknown";
}

struct page_hdr {
	int type;
	int32_t unc, comp;
	bool has_crc;
	uint32_t crc;
	bool data, v2, dict; /* which of the type-specific headers is present */
	int32_t num_values;
	int enc, def_enc, rep_enc;
	int32_t def_len, rep_len;
	bool compressed;
};

void pq_leaf_start(struct pq_leaf *l)
{
	l->pos = l->ch.start;
	l->end = l->ch.start + l->ch.len;
	l->seen = 0;
	l->any_page = false;
	l->has_dict = false;
	l->ndict = 0;
	l->left = 0;
	l->next_rep = -1;
	l->enc = PQ_ENC_NONE;
}

void pq_leaf_fini(struct floe_alloc *a, struct pq_leaf *l)
{
	pq_block_free(a, &l->dict);
	pq_block_free(a, &l->page);
	floe_free(a, l->dent);
	floe_free(a, l->ents);
	floe_buf_fini(&l->prev);
	floe_buf_fini(&l->arena);
}

/* DataPageHeader (5), DictionaryPageHeader (7) and DataPageHeaderV2 (8). */
static void parse_sub(struct floe_thrift_rd *t, int16_t which, int type, struct page_hdr *h)
{
	int16_t id;
	int ft;
	floe_thrift_rd_struct(t, type);
	while (floe_thrift_rd_field(t, &id, &ft)) {
		if (id == 1) {
			h->num_values = floe_thrift_rd_i32(t, ft);
		} else if ((which == 5 || which == 7) && id == 2) {
			h->enc = floe_thrift_rd_i32(t, ft);
		} else if (which == 5 && id == 3) {
			h->def_enc = floe_thrift_rd_i32(t, ft);
		} else if (which == 5 && id == 4) {
			h->rep_enc = floe_thrift_rd_i32(t, ft);
		} else if (which == 8 && id == 4) {
			h->enc = floe_thrift_rd_i32(t, ft);
		} else if (which == 8 && id == 5) {
			h->def_len = floe_thrift_rd_i32(t, ft);
		} else if (which == 8 && id == 6) {
			h->rep_len = floe_thrift_rd_i32(t, ft);
		} else if (which == 8 && id == 7) {
			h->compressed = floe_thrift_rd_bool(t, ft);
		} else {
			floe_thrift_rd_skip(t, ft, false);
		}
	}
}

/* PageHeader */
static void parse_header(struct floe_thrift_rd *t, struct page_hdr *h)
{
	int16_t id;
	int ft;
	memset(h, 0, sizeof(*h));
	h->type = h->unc = h->comp = h->num_values = -1;
	h->enc = h->def_enc = h->rep_enc = -1;
	h->compressed = true;
	while (floe_thrift_rd_field(t, &id, &ft)) {
		switch (id) {
		case 1:
			h->type = floe_thrift_rd_i32(t, ft);
			break;
		case 2:
			h->unc = floe_thrift_rd_i32(t, ft);
			break;
		case 3:
			h->comp = floe_thrift_rd_i32(t, ft);
			break;
		case 4:
			h->crc = (uint32_t)floe_thrift_rd_i32(t, ft);
			h->has_crc = true;
			break;
		case 5:
		case 7:
		case 8:
			parse_sub(t, id, ft, h);
			h->data |= id == 5;
			h->dict |= id == 7;
			h->v2 |= id == 8;
			break;
		default:
			floe_thrift_rd_skip(t, ft, false);
			break;
		}
	}
}

/* Reads the header of the page at l->pos: *hlen gets its length. */
static int read_header(struct floe_pq_reader *r, struct pq_leaf *l, struct page_hdr *h,
		       size_t *hlen)
{
	uint64_t avail = l->end - l->pos;
	size_t win = avail < HDR_FIRST ? (size_t)avail : HDR_FIRST;
	for (;;) {
		int rc = pq_block_fit(r->alloc, &r->hdr, win);
		if (rc || (rc = pq_read(r, l->pos, r->hdr.p, win)))
			return rc;
		struct floe_thrift_rd t;
		floe_thrift_rd_init(&t, r->hdr.p, win);
		parse_header(&t, h);
		if (!t.err) {
			*hlen = t.pos;
			return 0;
		}
		/* Perhaps only cut short by the window: try a larger one. */
		if (t.err != FLOE_EPARSE || win >= avail || win >= HDR_MAX)
			return pq_fail(r, t.err == FLOE_ELIMIT ? FLOE_ELIMIT : FLOE_EPARSE,
				       l->pos + t.err_pos,
				       "malformed page header in column '%s' at offset %llu",
				       l->label, (unsigned long long)l->pos);
		win = avail < win * 8 ? (size_t)avail : win * 8;
		if (win > HDR_MAX)
			win = HDR_MAX;
	}
}

static void *zalloc(void *opaque, size_t n)
{
	return floe_malloc(opaque, n);
}

static void zfree(void *opaque, void *p)
{
	floe_free(opaque, p);
}

void pq_codec_free(struct floe_pq_reader *r)
{
	ZSTD_freeDCtx(r->zctx);
	r->zctx = NULL;
}

/* Decompresses exactly n bytes of codec into dst from src/sn. */
static int decompress(struct floe_pq_reader *r, struct pq_leaf *l, const uint8_t *src, size_t sn,
		      uint8_t *dst, size_t n)
{
	if (l->ch.codec == FLOE_PQ_LZ4_RAW) {
		/* Sizes are at most max_page, itself at most INT32_MAX. */
		int got = LZ4_decompress_safe((const char *)src, (char *)dst, (int)sn, (int)n);
		if (got < 0 || (size_t)got != n)
			return pq_fail(r, FLOE_ECORRUPT, l->page_off,
				       "LZ4_RAW page in column '%s' at offset %llu does not "
				       "decompress to its size",
				       l->label, (unsigned long long)l->page_off);
		return 0;
	}
	if (!r->zctx) {
		ZSTD_customMem mem = {zalloc, zfree, r->alloc};
		if (!(r->zctx = ZSTD_createDCtx_advanced(mem)))
			return FLOE_ENOMEM;
	}
	size_t got = ZSTD_decompressDCtx(r->zctx, dst, n, src, sn);
	if (ZSTD_isError(got) && ZSTD_getErrorCode(got) == ZSTD_error_memory_allocation)
		return FLOE_ENOMEM;
	if (ZSTD_isError(got) || got != n)
		return pq_fail(r, FLOE_ECORRUPT, l->page_off,
			       "ZSTD page in column '%s' at offset %llu does not decompress to its "
			       "size (%s)",
			       l->label, (unsigned long long)l->page_off,
			       ZSTD_isError(got) ? ZSTD_getErrorName(got) : "wrong size");
	return 0;
}

/* Reads the body of the page whose header h ends at off into dst, uncompressed: its
 * first lead bytes (a v2 page's levels) are stored as they are, the rest compressed
 * unless the page says otherwise. The CRC, when there is one, covers the stored bytes. */
static int load_body(struct floe_pq_reader *r, struct pq_leaf *l, const struct page_hdr *h,
		     uint64_t off, size_t lead, struct pq_block *dst)
{
	size_t comp = (size_t)h->comp, unc = (size_t)h->unc;
	bool compressed = l->ch.codec != FLOE_PQ_UNCOMPRESSED && (!h->v2 || h->compressed);
	int rc;
	if (lead > comp || lead > unc || (!compressed && comp != unc))
		return pq_fail(r, FLOE_ECORRUPT, l->page_off,
			       "page in column '%s' at offset %llu: inconsistent sizes", l->label,
			       (unsigned long long)l->page_off);
	const uint8_t *stored;
	if (!compressed) {
		if ((rc = pq_block_fit(r->alloc, dst, unc)) || (rc = pq_read(r, off, dst->p, comp)))
			return rc;
		stored = dst->p;
	} else {
		if ((rc = pq_block_fit(r->alloc, &r->raw, comp)) ||
		    (rc = pq_read(r, off, r->raw.p, comp)))
			return rc;
		stored = r->raw.p;
	}
	if (h->has_crc && floe_crc32(0, stored, comp) != h->crc)
		return pq_fail(r, FLOE_ECORRUPT, l->page_off,
			       "page CRC mismatch in column '%s' at offset %llu", l->label,
			       (unsigned long long)l->page_off);
	if (!compressed)
		return 0;
	if ((rc = pq_block_fit(r->alloc, dst, unc)))
		return rc;
	memcpy(dst->p, stored, lead);
	return decompress(r, l, stored + lead, comp - lead, dst->p + lead, unc - lead);
}

static int corrupt(struct floe_pq_reader *r, struct pq_leaf *l, const char *what)
{
	return pq_fail(r, FLOE_ECORRUPT, l->page_off, "%s in column '%s', page at offset %llu",
		       what, l->label, (unsigned long long)l->page_off);
}

/* The dictionary page: its entries indexed (byte arrays) or checked (integers). */
static int load_dict(struct floe_pq_reader *r, struct pq_leaf *l, const struct page_hdr *h,
		     uint64_t off)
{
	if (l->any_page || !h->dict || h->num_values < 0)
		return corrupt(r, l, "misplaced or malformed dictionary page");
	if (h->enc != 0 && h->enc != 2)
		return pq_fail(r, FLOE_EUNSUPPORTED, l->page_off,
			       "dictionary page encoding %s in column '%s' is not supported",
			       pq_encoding_name(h->enc), l->label);
	int rc = load_body(r, l, h, off, 0, &l->dict);
	if (rc)
		return rc;
	size_t n = (size_t)h->num_values, len = (size_t)h->unc;
	if (l->ptype == FLOE_PQ_T_BOOLEAN)
		return corrupt(r, l, "a dictionary for booleans");
	if (l->ptype != FLOE_PQ_T_BYTE_ARRAY) {
		size_t w = pq_width(l->ptype);
		if (n > len / w)
			return corrupt(r, l, "dictionary shorter than its count");
	} else {
		if (n > len / 4)
			return corrupt(r, l, "dictionary shorter than its count");
		if (n > l->dent_cap) {
			struct pq_span *d = floe_realloc(r->alloc, l->dent, n * sizeof(*d));
			if (!d)
				return FLOE_ENOMEM;
			l->dent = d;
			l->dent_cap = (uint32_t)n;
		}
		const uint8_t *p = l->dict.p, *end = p + len;
		for (size_t i = 0; i < n; i++) {
			if (end - p < 4)
				return corrupt(r, l, "truncated dictionary");
			uint32_t vl = le32(p);
			p += 4;
			if ((size_t)(end - p) < vl)
				return corrupt(r, l, "truncated dictionary");
			l->dent[i] = (struct pq_span){(uint32_t)(p - l->dict.p), vl};
			p += vl;
		}
	}
	l->ndict = (uint32_t)n;
	l->has_dict = true;
	return 0;
}

/* The levels of a v1 page: each present kind is a 4-byte length and RLE runs. */
static int v1_levels(struct floe_pq_reader *r, struct pq_leaf *l, const struct page_hdr *h,
		     const uint8_t **p, const uint8_t *end)
{
	for (int k = 0; k < 2; k++) {
		int max = k == 0 ? l->max_rep : l->max_def;
		int enc = k == 0 ? h->rep_enc : h->def_enc;
		struct floe_pq_rle_dec *d = k == 0 ? &l->rep : &l->def;
		if (max == 0)
			continue;
		if (enc != PQ_ENC_RLE)
			return pq_fail(r, FLOE_EUNSUPPORTED, l->page_off,
				       "level encoding %s in column '%s' is not supported",
				       pq_encoding_name(enc), l->label);
		if (end - *p < 4)
			return corrupt(r, l, "truncated levels");
		const uint8_t *q = *p;
		uint32_t n = le32(q);
		if ((size_t)(end - q - 4) < n)
			return corrupt(r, l, "truncated levels");
		floe_pq_rle_dec_init(d, q + 4, n, floe_rle_bit_width((uint32_t)max));
		*p = q + 4 + n;
	}
	return 0;
}

/* Sets up the value decoder for the page's encoding over [p, end); start_data has
 * checked that the encoding applies to the leaf's type. */
static int set_values(struct floe_pq_reader *r, struct pq_leaf *l, int enc, const uint8_t *p,
		      const uint8_t *end)
{
	int bits = l->ptype == FLOE_PQ_T_INT32 ? 32 : 64;
	size_t n = (size_t)(end - p), s1 = 0, s2 = 0;
	int rc = 0;
	l->vp = p;
	l->vend = end;
	l->enc = enc;
	switch (enc) {
	case PQ_ENC_PLAIN:
		l->bit = 0;
		return 0;
	case PQ_ENC_RLE: /* booleans only: a 4-byte length, then 1-bit runs */
		s1 = n < 4 ? 0 : le32(p);
		if (n < 4 || n - 4 < s1)
			return corrupt(r, l, "truncated boolean runs");
		floe_pq_rle_dec_init(&l->idx, p + 4, s1, 1);
		return 0;
	case PQ_ENC_PLAIN_DICTIONARY:
	case PQ_ENC_RLE_DICTIONARY:
		if (!l->has_dict)
			return corrupt(r, l, "dictionary-encoded page without a dictionary");
		if (n == 0) { /* a page of nulls only */
			l->enc = PQ_ENC_NONE;
			return 0;
		}
		if (p[0] > 32)
			return corrupt(r, l, "bad dictionary index width");
		floe_pq_rle_dec_init(&l->idx, p + 1, n - 1, p[0]);
		return 0;
	case PQ_ENC_DBP:
		rc = floe_pq_dbp_dec_init(&l->d1, p, n, bits, NULL);
		break;
	case PQ_ENC_BSS: /* byte k of value i at k * count + i */
		if (n % pq_width(l->ptype))
			return corrupt(r, l, "BYTE_STREAM_SPLIT values of a partial width");
		l->bss_n = n / pq_width(l->ptype);
		l->bss_i = 0;
		return 0;
	case PQ_ENC_DLBA:
		if (!(rc = floe_pq_dbp_size(p, n, &s1)))
			rc = floe_pq_dbp_dec_init(&l->d1, p, s1, 32, NULL);
		l->vp = p + s1;
		break;
	case PQ_ENC_DBA:
		/* Prefix lengths, then suffix lengths, then the suffixes' bytes. */
		if (!(rc = floe_pq_dbp_size(p, n, &s1)) &&
		    !(rc = floe_pq_dbp_dec_init(&l->d1, p, s1, 32, NULL)) &&
		    !(rc = floe_pq_dbp_size(p + s1, n - s1, &s2)))
			rc = floe_pq_dbp_dec_init(&l->d2, p + s1, s2, 32, NULL);
		l->vp = p + s1 + s2;
		floe_buf_reset(&l->prev);
		break;
	default:
		return pq_fail(r, FLOE_EUNSUPPORTED, l->page_off,
			       "encoding %s (%d) in column '%s' is not supported",
			       pq_encoding_name(enc), enc, l->label);
	}
	if (rc == FLOE_EUNSUPPORTED)
		return pq_fail(r, rc, l->page_off,
			       "delta block shape in column '%s' is not supported", l->label);
	if (rc) {
		/* A page whose values are all null may have an empty value section. */
		if (n == 0) {
			l->enc = PQ_ENC_NONE;
			return 0;
		}
		return corrupt(r, l, "malformed delta-encoded values");
	}
	return 0;
}

/* A data page (v1 or v2) just read into l->page: its levels and values. */
static int start_data(struct floe_pq_reader *r, struct pq_leaf *l, const struct page_hdr *h)
{
	const uint8_t *p = l->page.p, *end = p + h->unc;
	int rc;
	if (h->v2) {
		size_t rl = (size_t)h->rep_len, dl = (size_t)h->def_len;
		floe_pq_rle_dec_init(&l->rep, p, rl, floe_rle_bit_width((uint32_t)l->max_rep));
		floe_pq_rle_dec_init(&l->def, p + rl, dl, floe_rle_bit_width((uint32_t)l->max_def));
		p += rl + dl;
	} else if ((rc = v1_levels(r, l, h, &p, end))) {
		return rc;
	}
	bool bytes = l->ptype == FLOE_PQ_T_BYTE_ARRAY;
	bool ints = l->ptype == FLOE_PQ_T_INT32 || l->ptype == FLOE_PQ_T_INT64;
	if ((h->enc == PQ_ENC_DBP && !ints) ||
	    ((h->enc == PQ_ENC_DLBA || h->enc == PQ_ENC_DBA) && !bytes) ||
	    (h->enc == PQ_ENC_BSS && (bytes || l->ptype == FLOE_PQ_T_BOOLEAN)) ||
	    ((h->enc == PQ_ENC_RLE) != (l->ptype == FLOE_PQ_T_BOOLEAN) &&
	     h->enc != PQ_ENC_PLAIN) ||
	    (l->ptype == FLOE_PQ_T_BOOLEAN && h->enc != PQ_ENC_PLAIN && h->enc != PQ_ENC_RLE))
		return pq_fail(r, FLOE_EFORMAT, l->page_off,
			       "encoding %s does not apply to column '%s'",
			       pq_encoding_name(h->enc), l->label);
	if ((rc = set_values(r, l, h->enc, p, end)))
		return rc;
	l->left = (uint32_t)h->num_values;
	l->next_rep = -1;
	return 0;
}

/* Checks a data page's header before its body is read. */
static int check_data(struct floe_pq_reader *r, struct pq_leaf *l, const struct page_hdr *h)
{
	bool ok = h->type == PAGE_DATA ? h->data : h->v2;
	if (ok && h->v2)
		ok = h->rep_len >= 0 && h->def_len >= 0 &&
		     (int64_t)h->rep_len + h->def_len <= h->comp &&
		     (int64_t)h->rep_len + h->def_len <= h->unc;
	if (!ok || h->num_values < 0)
		return corrupt(r, l, "malformed data page header");
	if (h->num_values > l->ch.num_values - l->seen)
		return corrupt(r, l, "more values in pages than the column chunk holds");
	return 0;
}

int pq_leaf_next_page(struct floe_pq_reader *r, struct pq_leaf *l)
{
	/* Each pass moves past a page: bounded by the chunk's length. */
	while (l->pos < l->end) {
		struct page_hdr h;
		size_t hlen = 0; /* set by read_header; gcc -O3 without LTO cannot see that */
		int rc = read_header(r, l, &h, &hlen);
		if (rc)
			return rc;
		l->page_off = l->pos;
		if (h.unc < 0 || h.comp < 0 || (uint64_t)h.comp > l->end - l->pos - hlen)
			return corrupt(r, l, "page runs past its column chunk");
		if ((size_t)h.unc > r->opt.max_page || (size_t)h.comp > r->opt.max_page)
			return pq_fail(r, FLOE_ELIMIT, l->page_off,
				       "page of %d bytes (%d stored) in column '%s' at offset %llu "
				       "exceeds the limit of %zu",
				       h.unc, h.comp, l->label, (unsigned long long)l->page_off,
				       r->opt.max_page);
		uint64_t body = l->pos + hlen;
		l->pos = body + (uint64_t)h.comp;
		if (h.type == PAGE_DICTIONARY) {
			if ((rc = load_dict(r, l, &h, body)))
				return rc;
			l->any_page = true;
			continue;
		}
		if (h.type != PAGE_DATA && h.type != PAGE_DATA_V2)
			continue; /* an index page, or a kind this reader need not know */
		if ((rc = check_data(r, l, &h)))
			return rc;
		l->any_page = true;
		if (h.num_values == 0)
			continue;
		size_t lead = h.v2 ? (size_t)h.rep_len + (size_t)h.def_len : 0;
		if ((rc = load_body(r, l, &h, body, lead, &l->page)))
			return rc;
		l->seen += h.num_values;
		return start_data(r, l, &h);
	}
	return corrupt(r, l, "column chunk ends before its row group's rows");
}

int pq_leaf_bool(struct floe_pq_reader *r, struct pq_leaf *l, int64_t *v)
{
	uint32_t b;
	if (l->enc == PQ_ENC_PLAIN && l->vp < l->vend) {
		*v = (*l->vp >> l->bit) & 1;
		if (++l->bit == 8) {
			l->bit = 0;
			l->vp++;
		}
		return 0;
	}
	if (l->enc == PQ_ENC_RLE && floe_pq_rle_dec_next(&l->idx, &b) == 0 && b <= 1) {
		*v = b;
		return 0;
	}
	return corrupt(r, l, "malformed or missing values");
}

int pq_leaf_int(struct floe_pq_reader *r, struct pq_leaf *l, int64_t *v)
{
	uint32_t i;
	size_t w = pq_width(l->ptype);
	const uint8_t *p;
	switch (l->enc) {
	case PQ_ENC_PLAIN:
		if ((size_t)(l->vend - l->vp) < w)
			break;
		p = l->vp;
		l->vp += w;
		goto fixed;
	case PQ_ENC_PLAIN_DICTIONARY:
	case PQ_ENC_RLE_DICTIONARY:
		if (floe_pq_rle_dec_next(&l->idx, &i) || i >= l->ndict)
			break;
		p = l->dict.p + (size_t)i * w;
		goto fixed;
	case PQ_ENC_DBP:
		if (floe_pq_dbp_dec_next(&l->d1, v))
			break;
		return 0;
	case PQ_ENC_BSS: {
		uint64_t u = 0;
		if (l->bss_i >= l->bss_n)
			break;
		for (size_t k = w; k-- > 0;)
			u = u << 8 | l->vp[k * l->bss_n + l->bss_i];
		l->bss_i++;
		*v = w == 4 ? (int64_t)(int32_t)(uint32_t)u : (int64_t)u;
		return 0;
	}
	default:
		break;
	}
	return corrupt(r, l, "malformed or missing values");
fixed:
	if (w == 4) {
		*v = (int32_t)le32(p);
	} else {
		uint64_t u;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		memcpy(&u, p, 8); /* one move, where the loop below stayed a loop */
#else
		u = 0;
		for (int k = 7; k >= 0; k--)
			u = u << 8 | p[k];
#endif
		*v = (int64_t)u;
	}
	return 0;
}

/* DELTA_BYTE_ARRAY: the next value is a prefix of the previous one and a suffix. */
static int dba_next(struct floe_pq_reader *r, struct pq_leaf *l, const uint8_t **p, size_t *n)
{
	int64_t k, s;
	if (floe_pq_dbp_dec_next(&l->d1, &k) || floe_pq_dbp_dec_next(&l->d2, &s) || k < 0 ||
	    (uint64_t)k > l->prev.len || s < 0 || (uint64_t)s > (uint64_t)(l->vend - l->vp))
		return corrupt(r, l, "malformed DELTA_BYTE_ARRAY values");
	l->prev.len = (size_t)k;
	if (s) {
		int rc = floe_buf_append(&l->prev, l->vp, (size_t)s);
		if (rc)
			return rc == FLOE_ELIMIT ? pq_fail(r, rc, l->page_off,
							   "a value in column '%s' exceeds the "
							   "page limit",
							   l->label)
						 : rc;
	}
	l->vp += s;
	*p = l->prev.len ? l->prev.data : (const uint8_t *)"";
	*n = l->prev.len;
	return 0;
}

int pq_leaf_bytes(struct floe_pq_reader *r, struct pq_leaf *l, const uint8_t **p, size_t *n,
		  int *where)
{
	uint32_t i, len;
	int64_t dl;
	*where = PQ_IN_PAGE;
	switch (l->enc) {
	case PQ_ENC_PLAIN:
		if (l->vend - l->vp < 4)
			break;
		len = le32(l->vp);
		if ((size_t)(l->vend - l->vp - 4) < len)
			break;
		*p = l->vp + 4;
		*n = len;
		l->vp += 4 + (size_t)len;
		return 0;
	case PQ_ENC_PLAIN_DICTIONARY:
	case PQ_ENC_RLE_DICTIONARY:
		if (floe_pq_rle_dec_next(&l->idx, &i) || i >= l->ndict)
			break;
		*p = l->dict.p + l->dent[i].off;
		*n = l->dent[i].len;
		*where = PQ_STABLE;
		return 0;
	case PQ_ENC_DLBA:
		if (floe_pq_dbp_dec_next(&l->d1, &dl) || dl < 0 || dl > l->vend - l->vp)
			break;
		*p = l->vp;
		*n = (size_t)dl;
		l->vp += dl;
		return 0;
	case PQ_ENC_DBA:
		*where = PQ_IN_PREV;
		return dba_next(r, l, p, n);
	default:
		break;
	}
	return corrupt(r, l, "malformed or missing values");
}
