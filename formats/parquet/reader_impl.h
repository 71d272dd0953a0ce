/* The Parquet reader's state, shared by reader.c (opening, rows), reader_footer.c (the
 * footer: schema and row groups) and reader_page.c (pages and values). Private to
 * formats/parquet. */
#ifndef FLOE_PQ_READER_IMPL_H
#define FLOE_PQ_READER_IMPL_H

#include "formats/base/buf.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/decode.h"
#include "formats/parquet/reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Where a map entry's bytes are until its row is complete: in the leaf's page (which a
 * later page replaces), in the leaf's row arena, or somewhere stable for the row (the
 * dictionary, a static empty string). Offsets rather than pointers for the first two, so
 * that a buffer may move while the row is assembled. */
enum { PQ_IN_PAGE, PQ_IN_ARENA, PQ_STABLE, PQ_IN_PREV };

struct pq_ent {
	const uint8_t *p; /* PQ_STABLE */
	size_t off;	  /* PQ_IN_PAGE, PQ_IN_ARENA */
	size_t len;
	uint8_t where;
	bool null;
};

/* One column chunk as the footer describes it. */
struct pq_chunk {
	uint64_t start, len; /* its pages: the dictionary page (if any), then data pages */
	int64_t num_values;  /* level entries */
	int codec;
};

/* Value encodings in a page, as the reader sets them up (the Encoding ids, and NONE
 * for a page whose value section is empty). */
enum {
	PQ_ENC_PLAIN = 0,
	PQ_ENC_PLAIN_DICTIONARY = 2,
	PQ_ENC_RLE = 3, /* booleans */
	PQ_ENC_DBP = 5,
	PQ_ENC_DLBA = 6,
	PQ_ENC_DBA = 7,
	PQ_ENC_RLE_DICTIONARY = 8,
	PQ_ENC_BSS = 9, /* BYTE_STREAM_SPLIT */
	PQ_ENC_NONE = -1,
};

/* A growable block with exact control over its size: pages are read into it whole. */
struct pq_block {
	uint8_t *p;
	size_t cap;
};

/* A leaf column: what the schema says, and the cursor over its column chunk in the row
 * group being read. */
struct pq_leaf {
	int ptype, max_def, max_rep;
	size_t col;		/* owning top-level column */
	int role;		/* 0 a primitive column, 1 a map's key, 2 its value */
	char label[64];		/* for messages: the column's name, and .key/.value */
	const uint8_t *path[3]; /* path_in_schema, borrowed from the footer */
	size_t path_len[3];
	int npath;
	bool active; /* selected: its chunks are read */
	/* The chunk. */
	struct pq_chunk ch;
	uint64_t pos, end; /* the next page header; the chunk's end */
	int64_t seen;	   /* level entries in the pages read so far */
	bool any_page;	   /* a page of this chunk has been read */
	/* The dictionary. */
	struct pq_block dict;
	struct pq_span {
		uint32_t off, len; /* in dict */
	} * dent; /* byte array entries: at most twice the dictionary page's bytes */
	uint32_t ndict, dent_cap;
	bool has_dict;
	/* The page. */
	struct pq_block page;
	uint64_t page_off; /* its header's file offset */
	uint32_t left;	   /* level entries not yet read */
	int next_rep;	   /* the next entry's repetition level, read ahead; -1: not yet */
	struct floe_pq_rle_dec rep, def, idx;
	int enc;
	const uint8_t *vp, *vend; /* PLAIN values, or the bytes of delta-encoded strings */
	unsigned bit;		  /* PLAIN booleans: the next value's bit in *vp */
	size_t bss_n, bss_i;	  /* BYTE_STREAM_SPLIT: values in the page, the next one */
	struct floe_pq_dbp_dec d1, d2;
	struct floe_buf prev; /* DELTA_BYTE_ARRAY: the previous value */
	/* Map leaves: the current row's entries and the bytes they own. */
	struct pq_ent *ents;
	size_t nents, ents_cap;
	struct floe_buf arena;
};

/* A map column's output arrays, reused from row to row. */
struct pq_mapout {
	const char **keys, **vals;
	size_t *key_lens, *val_lens;
	size_t cap;
};

struct floe_pq_reader {
	struct floe_alloc *alloc;
	struct floe_pq_source src;
	struct floe_pq_reader_options opt;
	/* The footer, kept: names and the row groups are read from it. */
	uint8_t *footer;
	size_t footer_len;
	uint64_t footer_off; /* its file offset */
	struct floe_pq_column *cols;
	size_t ncols;
	size_t *col_leaf; /* per column, its first leaf */
	struct pq_leaf *leaves;
	size_t nleaves;
	uint64_t num_rows;
	size_t nrgs;
	size_t *rg_at; /* per row group, the footer offset of its RowGroup struct */
	int64_t *rg_rows;
	char *created_by;
	struct floe_pq_kv *kv;
	size_t nkv;
	/* The selection and the row handed out. */
	size_t *sel;
	size_t nsel;
	struct floe_pq_value *row;
	struct pq_mapout *maps; /* per selected column (used by maps only) */
	/* Iteration. */
	bool started;
	size_t rg;	 /* the row group being read, or nrgs at the end */
	int64_t rg_left; /* its rows not yet read */
	/* Buffers shared by the leaves: a page header's bytes, a compressed page. */
	struct pq_block hdr, raw;
	void *zctx; /* ZSTD_DCtx, made at the first ZSTD page */
	int err;	     /* sticky: the first failure's code (0: none) */
	struct floe_err detail; /* and its detail, the offset a file offset */
};

/* reader_io.c, below the other three files. */
/* Records the reader's first error, with the file offset it concerns and a message
 * (printf-style), and returns err. ENOMEM needs no message. */
int pq_fail(struct floe_pq_reader *r, int err, uint64_t off, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Makes b at least n bytes (plus 8 bytes of zeroed slack), dropping its content. */
int pq_block_fit(struct floe_alloc *a, struct pq_block *b, size_t n);
void pq_block_free(struct floe_alloc *a, struct pq_block *b);
/* Reads len bytes at off through the source, checking the range against the file. */
int pq_read(struct floe_pq_reader *r, uint64_t off, void *buf, size_t len);

/* reader_footer.c: reads the frame and the footer, builds the columns and leaves, and
 * checks every row group. */
int pq_footer_load(struct floe_pq_reader *r);
/* Sets every active leaf's chunk to its chunk in row group g (parsed again from the
 * footer, which pq_footer_load checked). */
int pq_footer_row_group(struct floe_pq_reader *r, size_t g);

/* reader_page.c: the cursor over a leaf's column chunk. */
/* Starts the leaf on its chunk l->ch: no page is read yet. */
void pq_leaf_start(struct pq_leaf *l);
/* Reads the leaf's next data page (and the dictionary page before it). */
int pq_leaf_next_page(struct floe_pq_reader *r, struct pq_leaf *l);
/* The next value of the leaf's page, whose levels said it is there: an integer, or the
 * bits of a FLOAT or DOUBLE (pq_leaf_int), a boolean as 0/1 (pq_leaf_bool). */
int pq_leaf_int(struct floe_pq_reader *r, struct pq_leaf *l, int64_t *v);
int pq_leaf_bool(struct floe_pq_reader *r, struct pq_leaf *l, int64_t *v);
/* The PLAIN width of a fixed-width physical type: 4 or 8 bytes. */
static inline size_t pq_width(int ptype)
{
	return ptype == FLOE_PQ_T_INT32 || ptype == FLOE_PQ_T_FLOAT ? 4 : 8;
}
/* *where is PQ_IN_PAGE (a slice of l->page), PQ_STABLE (the dictionary, or an empty
 * string) or PQ_IN_PREV (l->prev, the value DELTA_BYTE_ARRAY just rebuilt). */
int pq_leaf_bytes(struct floe_pq_reader *r, struct pq_leaf *l, const uint8_t **p, size_t *n,
		  int *where);
/* Frees the decompression context. */
void pq_codec_free(struct floe_pq_reader *r);
/* Frees the leaf's buffers. */
void pq_leaf_fini(struct floe_alloc *a, struct pq_leaf *l);
/* The Parquet name of a codec, encoding or physical type, for messages. */
const char *pq_codec_name(int codec);
const char *pq_encoding_name(int enc);

#endif
