/* Streaming Parquet reader: opens a file through the caller's source (reader_footer.c
 * reads its footer), then assembles rows, one at a time, from the selected columns'
 * leaves, each reading its column chunk page by page (reader_page.c). A map column's two
 * leaves are read in step, entry by entry, until the key leaf's next repetition level
 * starts a new row. */
#include "formats/parquet/reader_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

#define DEFAULT_MAX_PAGE ((size_t)16 << 20)
#define DEFAULT_MAX_FOOTER ((size_t)16 << 20)
#define DEFAULT_MAX_MAP ((size_t)1 << 20)
static void select_all_leaves(struct floe_pq_reader *r, bool on)
{
	for (size_t j = 0; j < r->nleaves; j++)
		r->leaves[j].active = on;
}

int floe_pq_reader_select(struct floe_pq_reader *r, const size_t *cols, size_t n)
{
	if (r->started || n == 0 || n > r->ncols || !cols)
		return FLOE_EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (cols[i] >= r->ncols)
			return FLOE_EINVAL;
		for (size_t k = 0; k < i; k++) {
			if (cols[k] == cols[i])
				return FLOE_EINVAL;
		}
	}
	size_t *sel = floe_calloc(r->alloc, n, sizeof(*sel));
	if (!sel)
		return FLOE_ENOMEM;
	memcpy(sel, cols, n * sizeof(*sel));
	floe_free(r->alloc, r->sel);
	r->sel = sel;
	r->nsel = n;
	select_all_leaves(r, false);
	for (size_t i = 0; i < n; i++) {
		size_t j = r->col_leaf[cols[i]];
		r->leaves[j].active = true;
		if (r->cols[cols[i]].kind == FLOE_PQ_MAP_STRING)
			r->leaves[j + 1].active = true;
	}
	return 0;
}

static int open_file(struct floe_pq_reader *r)
{
	int rc = pq_footer_load(r);
	if (rc)
		return rc;
	if (!(r->sel = floe_calloc(r->alloc, r->ncols, sizeof(*r->sel))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < r->ncols; i++)
		r->sel[i] = i;
	r->nsel = r->ncols;
	select_all_leaves(r, true);
	return 0;
}

int floe_pq_reader_open(struct floe_alloc *alloc, const struct floe_pq_source *src,
			const struct floe_pq_reader_options *opt, struct floe_pq_reader **out,
			struct floe_err *err)
{
	if (!out)
		return FLOE_EINVAL;
	*out = NULL;
	if (!src || !src->read_at)
		return FLOE_EINVAL;
	struct floe_pq_reader *r = floe_calloc(alloc, 1, sizeof(*r));
	if (!r)
		return FLOE_ENOMEM;
	r->alloc = alloc;
	r->src = *src;
	if (opt)
		r->opt = *opt;
	if (!r->opt.max_page)
		r->opt.max_page = DEFAULT_MAX_PAGE;
	if (r->opt.max_page > (size_t)INT32_MAX) /* page sizes are i32 in the file */
		r->opt.max_page = (size_t)INT32_MAX;
	if (!r->opt.max_footer)
		r->opt.max_footer = DEFAULT_MAX_FOOTER;
	if (!r->opt.max_map_entries)
		r->opt.max_map_entries = DEFAULT_MAX_MAP;
	r->rg_left = -1;
	floe_err_clear(&r->detail);
	int rc = open_file(r);
	if (rc) {
		if (err) {
			*err = r->detail;
			if (!r->err)
				floe_err_set(err, rc, "%s", floe_strerror(rc));
		}
		floe_pq_reader_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

const struct floe_pq_column *floe_pq_reader_columns(const struct floe_pq_reader *r, size_t *n)
{
	*n = r->ncols;
	return r->cols;
}

uint64_t floe_pq_reader_num_rows(const struct floe_pq_reader *r)
{
	return r->num_rows;
}

size_t floe_pq_reader_num_row_groups(const struct floe_pq_reader *r)
{
	return r->nrgs;
}

const char *floe_pq_reader_created_by(const struct floe_pq_reader *r)
{
	return r->created_by;
}

const struct floe_pq_kv *floe_pq_reader_kv(const struct floe_pq_reader *r, size_t *n)
{
	*n = r->nkv;
	return r->kv;
}

const struct floe_err *floe_pq_reader_error(const struct floe_pq_reader *r)
{
	return &r->detail;
}

void floe_pq_reader_free(struct floe_pq_reader *r)
{
	if (!r)
		return;
	struct floe_alloc *a = r->alloc;
	if (r->cols) {
		for (size_t i = 0; i < r->ncols; i++)
			floe_free(a, (char *)r->cols[i].name);
	}
	if (r->leaves) {
		for (size_t j = 0; j < r->nleaves; j++)
			pq_leaf_fini(a, &r->leaves[j]);
	}
	for (size_t i = 0; r->kv && i < r->nkv; i++) {
		floe_free(a, (char *)r->kv[i].key);
		floe_free(a, (char *)r->kv[i].value);
	}
	for (size_t i = 0; r->maps && i < r->nsel; i++) {
		floe_free(a, r->maps[i].keys);
		floe_free(a, r->maps[i].vals);
		floe_free(a, r->maps[i].key_lens);
		floe_free(a, r->maps[i].val_lens);
	}
	floe_free(a, r->maps);
	floe_free(a, r->kv);
	floe_free(a, r->cols);
	floe_free(a, r->col_leaf);
	floe_free(a, r->leaves);
	floe_free(a, r->rg_at);
	floe_free(a, r->rg_rows);
	floe_free(a, r->created_by);
	floe_free(a, r->sel);
	floe_free(a, r->row);
	floe_free(a, r->footer);
	pq_block_free(a, &r->hdr);
	pq_block_free(a, &r->raw);
	pq_codec_free(r);
	floe_free(a, r);
}

/* ---- Rows ---- */

static int bad_levels(struct floe_pq_reader *r, const struct pq_leaf *l, const char *what)
{
	return pq_fail(r, FLOE_ECORRUPT, l->page_off, "%s in column '%s', page at offset %llu",
		       what, l->label, (unsigned long long)l->page_off);
}

/* A value of a primitive column. The row's slot always holds this column's values (the
 * row starts zeroed): only the fields a primitive value uses are set, the rest stay 0. */
static int prim_value(struct floe_pq_reader *r, struct pq_leaf *l, enum floe_pq_kind kind,
		      struct floe_pq_value *v)
{
	int rc;
	if (l->left == 0 && (rc = pq_leaf_next_page(r, l)))
		return rc;
	l->left--;
	uint32_t def = 0;
	if (l->max_def && (floe_pq_rle_dec_next(&l->def, &def) || def > (uint32_t)l->max_def))
		return bad_levels(r, l, "malformed definition levels");
	v->is_null = (int)def < l->max_def;
	if (v->is_null) {
		v->i = 0;
		v->d = 0;
		v->s = NULL;
		v->len = 0;
		return 0;
	}
	if (kind == FLOE_PQ_BOOLEAN)
		return pq_leaf_bool(r, l, &v->i);
	if (kind == FLOE_PQ_FLOAT || kind == FLOE_PQ_DOUBLE) {
		int64_t bits;
		if ((rc = pq_leaf_int(r, l, &bits)))
			return rc;
		if (kind == FLOE_PQ_FLOAT) {
			uint32_t b32 = (uint32_t)bits;
			float f;
			memcpy(&f, &b32, sizeof(f));
			v->d = f;
		} else {
			memcpy(&v->d, &bits, sizeof(v->d));
		}
		return 0;
	}
	if (kind != FLOE_PQ_STRING && kind != FLOE_PQ_BINARY)
		return pq_leaf_int(r, l, &v->i);
	const uint8_t *p;
	size_t n;
	int where;
	if ((rc = pq_leaf_bytes(r, l, &p, &n, &where)))
		return rc;
	v->s = (const char *)p;
	v->len = n;
	return 0;
}

/* Before a map leaf's page is replaced in the middle of a row, the row's entries that
 * point into it move to the leaf's arena. */
static int pin_entries(struct floe_pq_reader *r, struct pq_leaf *l)
{
	size_t need = 0;
	for (size_t i = 0; i < l->nents; i++) {
		if (l->ents[i].where == PQ_IN_PAGE)
			need += l->ents[i].len; /* bounded by the page's length */
	}
	int rc = floe_buf_reserve(&l->arena, need);
	if (rc)
		return rc == FLOE_ELIMIT
			   ? pq_fail(r, rc, l->page_off,
				     "a row of column '%s' exceeds the page limit", l->label)
			   : rc;
	for (size_t i = 0; i < l->nents; i++) {
		struct pq_ent *e = &l->ents[i];
		if (e->where != PQ_IN_PAGE)
			continue;
		size_t off = l->arena.len;
		if (e->len)
			memcpy(l->arena.data + off, l->page.p + e->off, e->len);
		l->arena.len += e->len;
		e->off = off;
		e->where = PQ_IN_ARENA;
	}
	return 0;
}

static int map_page(struct floe_pq_reader *r, struct pq_leaf *l)
{
	int rc = l->nents ? pin_entries(r, l) : 0;
	return rc ? rc : pq_leaf_next_page(r, l);
}

/* The next level pair of a map leaf. */
static int map_levels(struct floe_pq_reader *r, struct pq_leaf *l, uint32_t *rep, uint32_t *def)
{
	int rc;
	if (l->left == 0 && (rc = map_page(r, l)))
		return rc;
	if (l->next_rep >= 0) {
		*rep = (uint32_t)l->next_rep;
		l->next_rep = -1;
	} else if (floe_pq_rle_dec_next(&l->rep, rep) || *rep > 1) {
		return bad_levels(r, l, "malformed repetition levels");
	}
	l->left--;
	if (floe_pq_rle_dec_next(&l->def, def) || *def > (uint32_t)l->max_def)
		return bad_levels(r, l, "malformed definition levels");
	return 0;
}

/* The next entry's repetition level, read ahead; -1 when the chunk has no more. */
static int map_peek(struct floe_pq_reader *r, struct pq_leaf *l, int *rep)
{
	int rc;
	if (l->next_rep < 0) {
		if (l->left == 0) {
			if (l->pos >= l->end || l->seen == l->ch.num_values) {
				*rep = -1;
				return 0;
			}
			if ((rc = map_page(r, l)))
				return rc;
		}
		uint32_t v;
		if (floe_pq_rle_dec_next(&l->rep, &v) || v > 1)
			return bad_levels(r, l, "malformed repetition levels");
		l->next_rep = (int)v;
	}
	*rep = l->next_rep;
	return 0;
}

/* Records one entry of the row: the bytes (p, n) as pq_leaf_bytes placed them, or a
 * null. A value DELTA_BYTE_ARRAY rebuilt is copied, as the next one replaces it. */
static int push_ent(struct floe_pq_reader *r, struct pq_leaf *l, const uint8_t *p, size_t n,
		    int where, bool null)
{
	if (l->nents == l->ents_cap) {
		size_t cap = l->ents_cap ? l->ents_cap * 2 : 16;
		if (l->ents_cap >= r->opt.max_map_entries)
			return pq_fail(r, FLOE_ELIMIT, l->page_off,
				       "a map in column '%s' has more than %zu entries", l->label,
				       r->opt.max_map_entries);
		if (cap > r->opt.max_map_entries)
			cap = r->opt.max_map_entries;
		struct pq_ent *e = floe_realloc(r->alloc, l->ents, cap * sizeof(*e));
		if (!e)
			return FLOE_ENOMEM;
		l->ents = e;
		l->ents_cap = cap;
	}
	struct pq_ent *e = &l->ents[l->nents];
	e->null = null;
	e->len = n;
	e->where = (uint8_t)where;
	if (null || n == 0) {
		e->where = PQ_STABLE;
		e->p = (const uint8_t *)"";
	} else if (where == PQ_IN_PAGE) {
		e->off = (size_t)(p - l->page.p);
	} else if (where == PQ_STABLE) {
		e->p = p;
	} else {
		e->off = l->arena.len;
		e->where = PQ_IN_ARENA;
		int rc = floe_buf_append(&l->arena, p, n);
		if (rc)
			return rc == FLOE_ELIMIT ? pq_fail(r, rc, l->page_off,
							   "a row of column '%s' exceeds the "
							   "page limit",
							   l->label)
						 : rc;
	}
	l->nents++;
	return 0;
}

static const char *ent_bytes(const struct pq_leaf *l, const struct pq_ent *e)
{
	if (e->where == PQ_IN_PAGE)
		return (const char *)l->page.p + e->off;
	if (e->where == PQ_IN_ARENA)
		return (const char *)l->arena.data + e->off;
	return (const char *)e->p;
}

/* The row's entries, now complete, as the writer's arrays. */
static int map_output(struct floe_pq_reader *r, struct pq_leaf *k, struct pq_leaf *v,
		      struct pq_mapout *mo, struct floe_pq_value *out)
{
	size_t n = k->nents;
	if (n > mo->cap) {
		size_t cap = n < 16 ? 16 : n;
		const char **ks = floe_realloc(r->alloc, mo->keys, cap * sizeof(*ks));
		if (ks)
			mo->keys = ks;
		const char **vs = floe_realloc(r->alloc, mo->vals, cap * sizeof(*vs));
		if (vs)
			mo->vals = vs;
		size_t *kl = floe_realloc(r->alloc, mo->key_lens, cap * sizeof(*kl));
		if (kl)
			mo->key_lens = kl;
		size_t *vl = floe_realloc(r->alloc, mo->val_lens, cap * sizeof(*vl));
		if (vl)
			mo->val_lens = vl;
		if (!ks || !vs || !kl || !vl)
			return FLOE_ENOMEM;
		mo->cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		const struct pq_ent *ke = &k->ents[i], *ve = &v->ents[i];
		mo->keys[i] = ent_bytes(k, ke);
		mo->key_lens[i] = ke->len;
		mo->vals[i] = ve->null ? NULL : ent_bytes(v, ve);
		mo->val_lens[i] = ve->len;
	}
	*out = (struct floe_pq_value){.n = n,
				      .keys = mo->keys,
				      .key_lens = mo->key_lens,
				      .vals = mo->vals,
				      .val_lens = mo->val_lens};
	return 0;
}

/* One entry of a map: its key and its value (or null). */
static int map_entry(struct floe_pq_reader *r, struct pq_leaf *k, struct pq_leaf *v, uint32_t vd)
{
	const uint8_t *p;
	size_t n;
	int where, rc;
	if ((rc = pq_leaf_bytes(r, k, &p, &n, &where)) || (rc = push_ent(r, k, p, n, where, false)))
		return rc;
	if (vd < (uint32_t)v->max_def)
		return push_ent(r, v, NULL, 0, PQ_STABLE, true);
	if ((rc = pq_leaf_bytes(r, v, &p, &n, &where)))
		return rc;
	return push_ent(r, v, p, n, where, false);
}

/* A value of a map column: its key and value leaves read in step. */
static int map_value(struct floe_pq_reader *r, struct pq_leaf *k, struct pq_leaf *v,
		     struct pq_mapout *mo, struct floe_pq_value *out)
{
	uint32_t empty = (uint32_t)k->max_def - 1; /* the def level of an empty map */
	int rc, next;
	k->nents = v->nents = 0;
	floe_buf_reset(&k->arena);
	floe_buf_reset(&v->arena);
	for (bool first = true;; first = false) {
		uint32_t kr, kd, vr, vd;
		if ((rc = map_levels(r, k, &kr, &kd)) || (rc = map_levels(r, v, &vr, &vd)))
			return rc;
		bool entry = kd == (uint32_t)k->max_def;
		if (kr != vr || kr != (first ? 0u : 1u) || entry != (vd >= (uint32_t)k->max_def))
			return bad_levels(r, k, "key and value levels disagree");
		if (!entry) {
			if ((rc = map_peek(r, k, &next)))
				return rc;
			if (next == 1)
				return bad_levels(r, k, "an empty map with entries");
			*out = (struct floe_pq_value){.is_null = kd < empty};
			return 0;
		}
		if ((rc = map_entry(r, k, v, vd)) || (rc = map_peek(r, k, &next)))
			return rc;
		if (next != 1)
			break;
	}
	return map_output(r, k, v, mo, out);
}

/* At the end of a row group every leaf read must have given all its values. */
static int end_row_group(struct floe_pq_reader *r)
{
	for (size_t j = 0; j < r->nleaves; j++) {
		struct pq_leaf *l = &r->leaves[j];
		if (!l->active)
			continue;
		if (l->left || l->next_rep >= 0 || l->seen != l->ch.num_values)
			return pq_fail(r, FLOE_ECORRUPT, l->ch.start,
				       "column '%s' holds more values than row group %zu's %lld "
				       "rows",
				       l->label, r->rg, (long long)r->rg_rows[r->rg]);
	}
	return 0;
}

static int enter_row_group(struct floe_pq_reader *r)
{
	int rc = pq_footer_row_group(r, r->rg);
	if (rc)
		return rc;
	for (size_t j = 0; j < r->nleaves; j++) {
		if (r->leaves[j].active)
			pq_leaf_start(&r->leaves[j]);
	}
	r->rg_left = r->rg_rows[r->rg];
	return 0;
}

static int start(struct floe_pq_reader *r)
{
	r->row = floe_calloc(r->alloc, r->nsel, sizeof(*r->row));
	r->maps = floe_calloc(r->alloc, r->nsel, sizeof(*r->maps));
	if (!r->row || !r->maps)
		return FLOE_ENOMEM;
	r->started = true;
	return 0;
}

static int read_row(struct floe_pq_reader *r)
{
	for (size_t s = 0; s < r->nsel; s++) {
		size_t c = r->sel[s];
		struct pq_leaf *l = &r->leaves[r->col_leaf[c]];
		enum floe_pq_kind kind = r->cols[c].kind;
		int rc = kind == FLOE_PQ_MAP_STRING
			     ? map_value(r, l, l + 1, &r->maps[s], &r->row[s])
			     : prim_value(r, l, kind, &r->row[s]);
		if (rc)
			return rc;
	}
	return 0;
}

int floe_pq_reader_next(struct floe_pq_reader *r, const struct floe_pq_value **row)
{
	int rc = 0;
	if (r->err)
		return r->err;
	if (!r->started && (rc = start(r)))
		goto fail;
	while (r->rg_left <= 0) {
		if (r->rg_left == 0) {
			if ((rc = end_row_group(r)))
				goto fail;
			r->rg++;
			r->rg_left = -1;
		}
		if (r->rg >= r->nrgs)
			return 0;
		if ((rc = enter_row_group(r)))
			goto fail;
	}
	if ((rc = read_row(r)))
		goto fail;
	r->rg_left--;
	*row = r->row;
	return 1;
fail:
	pq_fail(r, rc, 0, "%s", floe_strerror(rc));
	return r->err;
}
