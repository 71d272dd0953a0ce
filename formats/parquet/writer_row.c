/* The Parquet writer's rows: checks a row, routes its values and levels to the leaves'
 * chunks (repairing ill-formed UTF-8), picks the leaf whose pages stream out, and closes
 * the row group when enough is buffered or its pages reach the memory budget (rowgroup.c
 * writes it). Shares the writer's state with writer.c through writer_impl.h. */
#include "writer.h"

#include "formats/base/error.h"
#include "formats/base/utf8.h"
#include "formats/parquet/chunk.h"
#include "formats/parquet/compress.h"
#include "formats/parquet/writer_impl.h"

#include <assert.h>
#include <stddef.h>
#include <string.h>

/* A map value's check, out of line: a row has one map. */
__attribute__((noinline)) static int check_map(enum floe_pq_kind kind,
					       const struct floe_pq_value *v)
{
	if (v->n && (!v->keys || !v->key_lens ||
		     (kind == FLOE_PQ_MAP_STRING_LONG ? !v->ivals : v->vals && !v->val_lens)))
		return FLOE_EINVAL;
	if (v->n > (size_t)INT32_MAX)
		return FLOE_ELIMIT;
	for (size_t j = 0; j < v->n; j++) {
		if (!v->keys[j] && v->key_lens[j])
			return FLOE_EINVAL;
	}
	return 0;
}

#define KINDS(a, b) (1u << (a) | 1u << (b))

/* Checks a row before any of it is written, so that bad input never leaves a half row.
 * The kinds by bit masks, strings first: most of a row's values are. */
static int check_row(const struct floe_pq_writer *w, const struct floe_pq_value *v)
{
	if (!v)
		return FLOE_EINVAL;
	const struct floe_pq_column *c = w->cols, *end = w->cols + w->ncols;
	for (; c < end; c++, v++) {
		if (v->is_null) {
			if (!c->optional)
				return FLOE_EINVAL;
			continue;
		}
		unsigned k = 1u << c->kind;
		if (k & KINDS(FLOE_PQ_STRING, FLOE_PQ_BINARY)) {
			if (!v->s && v->len)
				return FLOE_EINVAL;
		} else if (k & KINDS(FLOE_PQ_INT32, FLOE_PQ_DATE)) {
			if (v->i < INT32_MIN || v->i > INT32_MAX)
				return FLOE_EINVAL;
		} else if (k & KINDS(FLOE_PQ_DOUBLE, FLOE_PQ_FLOAT)) {
			if (v->d != v->d) /* NaN: its statistics are unordered; write a null */
				return FLOE_EINVAL;
		} else if (k & KINDS(FLOE_PQ_MAP_STRING, FLOE_PQ_MAP_STRING_LONG)) {
			int rc = check_map(c->kind, v);
			if (rc)
				return rc;
		}
	}
	return 0;
}

/* Appends the repair of ill-formed (p, n) as a value of leaf l: out of line, so that the
 * common path saves no registers for it. */
__attribute__((noinline)) static int put_repaired(struct floe_pq_writer *w, struct leaf *l, int rep,
						  const uint8_t *p, size_t n)
{
	int rc = floe_utf8_repair(p, n, &w->scratch, &p, &n, &w->replaced);
	return rc ? rc : floe_pq_chunk_put_bytes(l->chunk, rep, p, n);
}

/* Repairs (p, n) if needed and appends it as a value of leaf l. A value the leaf's
 * dictionary holds is well-formed (its entry was checked when added) and goes in without
 * a check. Other values are almost always well-formed: checked here, they take one call,
 * and only the others go through the repair (which checks them again). */
static inline int put_string(struct floe_pq_writer *w, struct leaf *l, int rep, const char *s,
			     size_t n)
{
	const uint8_t *p = (const uint8_t *)(s ? s : "");
	int rc = floe_pq_chunk_put_known(l->chunk, rep, p, n);
	if (rc)
		return rc < 0 ? rc : 0;
	if (floe_utf8_valid(p, n) != n)
		return put_repaired(w, l, rep, p, n);
	return floe_pq_chunk_put_bytes(l->chunk, rep, p, n);
}

/* Gives leaf l's chunk the rows of nulls held back from it (rowgroup.c gives every
 * leaf's before the row group is written). */
static inline void settle(struct leaf *l)
{
	if (l->lazy) {
		floe_pq_chunk_null_rows(l->chunk, l->lazy);
		l->lazy = 0;
	}
}

/* The leaves a row reaches, in w->touched in the order it reaches them; those it gives
 * a null also from the array's back (their room is asked again at the end of the row). */
struct reached {
	struct leaf **all, **nulls;
};

/* Leaf l gets a value: first the nulls held back from it (none without room). */
static inline void reach_value(struct reached *r, struct leaf *l)
{
	if (__builtin_expect(l->room != 0, 0)) {
		settle(l);
		l->room = 0;
	}
	*r->all++ = l;
}

/* A null of definition level def, alone in its row, into leaf l: held back when the
 * chunk would only count it, else given with the nulls before it. */
static inline int put_null_row(struct reached *r, struct leaf *l, int def)
{
	if (l->lazy < l->room && l->lazy_def == def) {
		l->lazy++;
		return 0;
	}
	settle(l);
	*r->all++ = l;
	*--r->nulls = l;
	return floe_pq_chunk_put_null(l->chunk, 0, def);
}

static int put_map(struct floe_pq_writer *w, struct leaf *k, const struct floe_pq_value *v,
		   struct reached *r)
{
	struct leaf *val = k + 1;
	int base = k->max_def - 1; /* the map's own level, when it is optional */
	int rc;
	if (v->is_null || v->n == 0) {
		/* A null map: no level defined; an empty one: the map level is, the
		 * key_value level is not. */
		int def = v->is_null ? 0 : base;
		if ((rc = put_null_row(r, k, def)))
			return rc;
		return put_null_row(r, val, def);
	}
	reach_value(r, k);
	reach_value(r, val);
	for (size_t j = 0; j < v->n; j++) {
		int rep = j > 0;
		if ((rc = put_string(w, k, rep, v->keys[j], v->key_lens[j])))
			return rc;
		if (v->ivals)
			rc = floe_pq_chunk_put_int(val->chunk, rep, v->ivals[j]);
		else if (v->vals && v->vals[j])
			rc = put_string(w, val, rep, v->vals[j], v->val_lens[j]);
		else
			rc = floe_pq_chunk_put_null(val->chunk, rep, base + 1);
		if (rc)
			return rc;
	}
	return 0;
}

/* Sink of the streaming leaf's pages. */
static int stream_page(void *ctx, const void *data, size_t len)
{
	struct floe_pq_writer *w = ctx;
	int rc;
	if (!w->started) {
		if ((rc = floe_pq_writer_emit(w, "PAR1", 4)))
			return rc;
		w->started = true;
	}
	if (w->stream_off < 0)
		w->stream_off = (int64_t)w->written;
	return floe_pq_writer_emit(w, data, len);
}

/* Pages are held until their row group is written because a column chunk must be
 * contiguous. The exception, which keeps memory from growing with the row group: the
 * leaf holding the most (the message text, typically) writes its pages as they are
 * made, and its chunk comes first in the row group. It is chosen once it holds
 * STREAM_MIN bytes. */
#define STREAM_MIN ((size_t)64 << 10)

static int pick_stream_leaf(struct floe_pq_writer *w)
{
	size_t best = 0;
	int pick = -1;
	for (size_t j = 0; j < w->nleaves; j++) {
		size_t h = floe_pq_chunk_held(w->leaves[j].chunk);
		if (h > best) {
			best = h;
			pick = (int)j;
		}
	}
	if (pick < 0)
		return 0;
	w->stream_leaf = pick;
	return floe_pq_chunk_set_stream(w->leaves[pick].chunk, stream_page, w);
}

/* Leaf l's bytes but the open ones, asked of its chunk again, into l->s and the sums. */
static inline void resum_leaf(struct leaf *l, struct leaf_sums *t)
{
	struct leaf_sums n;
	n.unc = floe_pq_chunk_buffered(l->chunk) - l->s.open;
	n.held = floe_pq_chunk_held(l->chunk);
	floe_pq_chunk_in_flight(l->chunk, &n.fly_held, &n.fly_buf);
	/* Unsigned: the differences wrap, the sums come out right. */
	t->unc += n.unc - l->s.unc;
	t->held += n.held - l->s.held;
	t->fly_held += n.fly_held - l->s.fly_held;
	t->fly_buf += n.fly_buf - l->s.fly_buf;
	l->s.unc = n.unc;
	l->s.held = n.held;
	l->s.fly_held = n.fly_held;
	l->s.fly_buf = n.fly_buf;
	l->moves = floe_pq_chunk_moves(l->chunk);
}

/* The bytes each leaf holds, asked of every chunk again (not only of those a row
 * reached): after pages moved, or a new row group. */
static void sum_chunks(struct floe_pq_writer *w, struct leaf_sums *t)
{
	memset(t, 0, sizeof(*t));
	for (size_t j = 0; j < w->nleaves; j++) {
		struct leaf *l = &w->leaves[j];
		memset(&l->s, 0, sizeof(l->s));
		l->s.open = floe_pq_chunk_open_bytes(l->chunk);
		t->open += l->s.open;
		resum_leaf(l, t);
	}
	w->sums_ok = true;
}

/* The row step is by leaf: a leaf whose chunk would only count the row's null (a
 * column the rows leave empty, row after row) is not visited, its nulls held back
 * (floe_pq_chunk_null_rows_room) and given in one step when it next gets a value, its
 * room runs out or its row group closes. The end of row then visits only the leaves the
 * row reached, and the sums the writer decides by (buffered, held, open and in-flight
 * bytes) are kept by what changed in those. The file is byte for byte that of a writer
 * that puts every null and ends every row in every leaf. */
int floe_pq_writer_add_row(struct floe_pq_writer *w, const struct floe_pq_value *values)
{
	if (w->err)
		return w->err;
	if (w->finished)
		return FLOE_EINVAL;
	int rc = check_row(w, values);
	if (rc)
		return rc;
	/* Pages another leaf's hand-over completes (waiting for the compressor) change
	 * leaves the row may not reach: then every leaf's sum is asked again. */
	unsigned long done0 = w->acomp ? floe_pq_compressor_completed(w->acomp) : 0;
	struct leaf *l = w->leaves;
	struct reached r = {w->touched, w->touched + 2 * w->nleaves};
	const struct floe_pq_value *v = values, *vend = values + w->ncols;
	for (; v < vend; v++) {
		struct floe_pq_chunk *ch = l->chunk;
		if (v->is_null && !is_map(l->kind)) {
			/* An optional column's null: its leaf's room is for def 0. */
			if (l->lazy < l->room)
				l->lazy++;
			else {
				settle(l);
				*r.all++ = l;
				*--r.nulls = l;
				if ((rc = floe_pq_chunk_put_null(ch, 0, 0)))
					break;
			}
			l++;
			continue;
		}
		/* Strings first, most of a row's values are; then one switch on the kind
		 * rather than a chain of tests. */
		if (l->kind == FLOE_PQ_STRING) {
			reach_value(&r, l);
			if ((rc = put_string(w, l, 0, v->s, v->len)))
				break;
			l++;
			continue;
		}
		switch (l->kind) {
		case FLOE_PQ_MAP_STRING:
		case FLOE_PQ_MAP_STRING_LONG:
			rc = put_map(w, l, v, &r);
			l++; /* the value leaf */
			break;
		case FLOE_PQ_BINARY:
			reach_value(&r, l);
			rc = floe_pq_chunk_put_bytes(ch, 0, (const uint8_t *)(v->s ? v->s : ""),
						     v->len);
			break;
		case FLOE_PQ_DOUBLE:
			reach_value(&r, l);
			rc = floe_pq_chunk_put_double(ch, 0, v->d);
			break;
		case FLOE_PQ_FLOAT:
			reach_value(&r, l);
			rc = floe_pq_chunk_put_float(ch, 0, (float)v->d);
			break;
		case FLOE_PQ_BOOLEAN:
			reach_value(&r, l);
			rc = floe_pq_chunk_put_bool(ch, 0, v->i != 0);
			break;
		default:
			reach_value(&r, l);
			rc = floe_pq_chunk_put_int(ch, 0, v->i);
			break;
		}
		if (rc)
			break;
		l++;
	}
	struct leaf_sums t = w->sums;
	w->est_ok = false;
	for (struct leaf **p = rc ? r.all : w->touched; p < r.all; p++) {
		struct leaf *e = *p;
		size_t o;
		if ((rc = floe_pq_chunk_end_row_open(e->chunk, NULL, NULL, &o)))
			break;
		t.open += o - e->s.open;
		e->s.open = o;
		/* The rest changes when a page of this leaf closed, was compressed or
		 * streamed. */
		if (floe_pq_chunk_moves(e->chunk) != e->moves)
			resum_leaf(e, &t);
	}
	for (struct leaf **p = r.nulls; p < w->touched + 2 * w->nleaves && !rc; p++)
		(*p)->room = floe_pq_chunk_null_rows_room((*p)->chunk, &(*p)->lazy_def);
	/* Pages the other thread has finished are completed here. A page completed during
	 * the row or here changed leaves the row may not have reached: sum again. */
	if (!rc && w->acomp && floe_pq_compressor_busy(w->acomp))
		rc = floe_pq_compressor_pump(w->acomp);
	bool moved = false;
	if (!rc && w->acomp && floe_pq_compressor_completed(w->acomp) != done0) {
		sum_chunks(w, &t);
		moved = true;
	} else if (!rc && !w->sums_ok) {
		sum_chunks(w, &t);
	}
	if (rc)
		goto out;
	size_t buffered = t.unc + t.open, held = t.held, open = t.open;
	size_t fly_held = t.fly_held, fly_buf = t.fly_buf;
#ifndef NDEBUG
	/* Debug builds check the sums kept by what changed against every chunk's bytes. */
	size_t b0 = 0, h0 = 0, o0 = 0, fh0 = 0, fb0 = 0;
	for (size_t j = 0; j < w->nleaves; j++) {
		size_t fh, fb;
		b0 += floe_pq_chunk_buffered(w->leaves[j].chunk);
		h0 += floe_pq_chunk_held(w->leaves[j].chunk);
		o0 += floe_pq_chunk_open_bytes(w->leaves[j].chunk);
		floe_pq_chunk_in_flight(w->leaves[j].chunk, &fh, &fb);
		fh0 += fh;
		fb0 += fb;
	}
	assert(b0 == buffered && h0 == held && o0 == open && fh0 == fly_held && fb0 == fly_buf);
	assert(fb0 == 0 || floe_pq_compressor_busy(w->acomp));
#endif
	w->rows++;
	w->rg_rows++;
	/* With a small budget, stream before the budget closes the row group. */
	size_t stream_min = STREAM_MIN;
	if (w->opt.memory_budget && w->opt.memory_budget / 2 < stream_min)
		stream_min = w->opt.memory_budget / 2;
	/* A page in flight adds to these sums once done. When it could tip a decision,
	 * complete it first: the decisions, and so the file, are then exactly those of an
	 * inline writer. That happens about once a row group. */
	if (fly_buf && ((w->stream_leaf < 0 && held + fly_held >= stream_min) ||
			(w->opt.memory_budget && held + fly_held >= w->opt.memory_budget) ||
			buffered + fly_buf >= w->opt.row_group_size)) {
		if ((rc = floe_pq_compressor_sync(w->acomp)))
			goto out;
		sum_chunks(w, &t);
		buffered = t.unc + t.open;
		held = t.held;
		moved = true;
	}
	if (w->stream_leaf < 0 && held >= stream_min) {
		moved = true;
		if ((rc = pick_stream_leaf(w)))
			goto out;
		sum_chunks(w, &t);
		buffered = t.unc + t.open;
		held = t.held;
	}
	w->buffered = buffered;
	w->sums = t;
	bool full = buffered >= w->opt.row_group_size ||
		    (w->opt.memory_budget && held >= w->opt.memory_budget);
	if (full)
		rc = floe_pq_writer_flush_row_group(w);
	else if (!moved) {
		/* No page moved since the sums: the in-flight bytes are those summed above
		 * (none when the compressor is idle). */
		w->est_leaves = (uint64_t)held + open + fly_held;
		w->est_ok = true;
	}
out:
	if (rc)
		w->err = rc; /* sticky: the writer only reports it from now on */
	return rc;
}
