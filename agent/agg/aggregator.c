/* The aggregator: windows by event time and the per-event path (filter, key, group,
 * metrics), which allocates nothing; its plan and start-up are in aggregator_new.c. See
 * aggregator.h. */
#include "agent/agg/aggregator_impl.h"
#include "agent/agg/agg_text.h"

#include "agent/parse/regex.h"
#include "agent/schema/columns.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"
#include "platform/libm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- fields of a record ----------------------------------------------------------------- */

/* A field's value: a string (s, len) or an integer (i). */
static bool str_of(struct floe_str v, struct agg_fval *out)
{
	out->kind = AGG_F_TEXT;
	out->s = v.p;
	out->len = v.len;
	return v.p != NULL;
}

static bool int_of(bool has, int64_t v, struct agg_fval *out)
{
	out->kind = AGG_F_INT;
	out->i = v;
	out->s = NULL; /* its text is made when asked for (fval_text) */
	return has;
}

static void dbl_text(struct agg_fval *v)
{
	int n = snprintf(v->num, sizeof(v->num), "%.17g", v->d);
	v->len = n > 0 ? (size_t)n : 0;
}

/* Makes v's text when it is a typed value's and not made yet. */
static inline void fval_text(struct agg_fval *v)
{
	if (v->s)
		return;
	if (v->kind == AGG_F_INT)
		v->len = floe_agg_int_text(v->i, v->num);
	else
		dbl_text(v);
	v->s = v->num;
}

/* Whether typed column c takes attribute ref's values (ref->attr_len <= FLOE_AGG_NAME_MAX
 * < sizeof(c->from), so c->from[ref->attr_len] is inside it). */
static bool col_takes(const struct floe_col *c, const struct floe_field_ref *ref)
{
	if (c->from[ref->attr_len] != '\0')
		return false;
	/* Names are a few bytes: compared here, not through a call per field and event. */
	for (size_t i = 0; i < ref->attr_len; i++)
		if (c->from[i] != ref->attr[i])
			return false;
	return true;
}

/* Sets f->col to the column of plan p that takes field f's values (-1: none). */
static void col_of(const struct floe_colplan *p, struct agg_field *f)
{
	f->col = -1;
	for (size_t k = 0; f->ref.src == FLOE_FIELD_ATTR && k < p->n && f->col < 0; k++)
		if (col_takes(&p->col[k], &f->ref))
			f->col = (int32_t)k;
	f->type_at = offsetof(struct floe_colplan, col) + offsetof(struct floe_col, type) +
		     (f->col < 0 ? 0 : (size_t)f->col * sizeof(struct floe_col));
}

/* Whether typed column type t holds an integer (µs since the epoch for a timestamp), as
 * typed_of reads it. */
static bool int_class(enum floe_col_type t)
{
	return t == FLOE_COL_INT || t == FLOE_COL_LONG || t == FLOE_COL_TIMESTAMPTZ;
}

/* x: field f of the fast read as plan p holds it, read as op; false when it is no
 * configured typed column of p's. */
static bool fast_of(const struct floe_colplan *p, const struct agg_field *f, enum agg_fop op,
		    struct agg_fast *x)
{
	if (!f->typed || f->col < 0 || (size_t)f->col >= p->n)
		return false;
	*x = (struct agg_fast){.at = (size_t)f->col * sizeof(struct floe_pq_value),
			       .col = f->col,
			       .type = p->col[f->col].type,
			       .op = op};
	return true;
}

/* Sets g->fast: whether every group key and value column of plan p is a typed column's
 * value that the fast read takes as typed_of and make_key or values_read would (an
 * integer, a string; a float or double as a number), and what each reads. A field of
 * another type (a double key, a boolean, a date, a number from a string) or a top_k
 * metric leaves it to the general read. */
static void resolve_fast(struct floe_aggregator *g, const struct floe_colplan *p)
{
	g->fast = false;
	size_t cols = 0;
	for (size_t i = 0; i < g->cfg->ngroup_by; i++) {
		struct agg_fast *x = &g->fkey[i];
		bool str = g->key_type[i] == FLOE_AGGCOL_STRING;
		enum agg_fop op = str				      ? AGG_FOP_STR
				  : g->key_type[i] == FLOE_AGGCOL_INT ? AGG_FOP_INT
								      : AGG_FOP_LONG;
		if (!fast_of(p, &g->keys[i], op, x) ||
		    (str ? x->type != FLOE_COL_STRING : !int_class(x->type)))
			return;
		if (op == AGG_FOP_INT && x->type == FLOE_COL_INT)
			x->op = AGG_FOP_LONG; /* an int column's values are in an int's range */
		cols = (size_t)x->col + 1 > cols ? (size_t)x->col + 1 : cols;
	}
	for (uint32_t i = 0; i < g->nvcols; i++) {
		struct agg_vcol *c = &g->vcols[i];
		struct agg_fast *x = &c->fast;
		if (c->kind == AGG_V_TEXT || !fast_of(p, &c->src->f, AGG_FOP_PRESENT, x))
			return;
		bool isint = int_class(x->type),
		     dbl = x->type == FLOE_COL_FLOAT || x->type == FLOE_COL_DOUBLE;
		if (c->kind == AGG_V_NUMBER && (isint || dbl))
			x->op = isint ? AGG_FOP_NUM_INT : AGG_FOP_NUM_DBL;
		else if (c->kind == AGG_V_HASH && (isint || x->type == FLOE_COL_STRING))
			x->op = isint ? AGG_FOP_HASH_INT : AGG_FOP_HASH_STR;
		else if (c->kind != AGG_V_PRESENT)
			return;
		cols = (size_t)x->col + 1 > cols ? (size_t)x->col + 1 : cols;
	}
	g->fast_cols = cols;
	g->fast = true;
}

/* Resolves the column of every field g reads in plan p, the plan of the record being
 * added: once per plan (its from_sig says when the columns' sources changed: a plan
 * learnt at first contact or at a reload), so that reading a typed value is an indexed
 * load. A plan with no from_sig is resolved at every record. */
static void resolve(struct floe_aggregator *g, const struct floe_colplan *p)
{
	for (size_t i = 0; i < g->cfg->ngroup_by; i++)
		col_of(p, &g->keys[i]);
	col_of(p, &g->where);
	for (size_t i = 0; i < g->cfg->nmetrics; i++)
		col_of(p, &g->metrics[i].f); /* col -1 for count without a field */
	resolve_fast(g, p);
	g->plan_sig = p->from_sig;
}

/* Whether r is read by the fast read: g's plan takes it (resolved against a plan of
 * r's from_sig, so of the same columns and types) and r has the typed values. */
static inline bool fast_read(const struct floe_aggregator *g, const struct floe_record *r)
{
	return g->fast && r->ntyped >= g->fast_cols;
}

/* A boolean's or a date's value as its text, into out (rare: kept out of typed_of). */
static int typed_text(enum floe_col_type t, const struct floe_pq_value *v, struct agg_fval *out)
{
	if (t == FLOE_COL_BOOLEAN)
		return str_of(v->i ? (struct floe_str){"true", 4} : (struct floe_str){"false", 5},
			      out);
	int64_t y;
	unsigned m, d;
	floe_civil_from_days(v->i, &y, &m, &d);
	int w = snprintf(out->num, sizeof(out->num), "%04lld-%02u-%02u", (long long)y, m, d);
	return str_of((struct floe_str){out->num, w > 0 ? (size_t)w : 0}, out);
}

/* The typed value of attribute f in r (a typed column takes it), into out; -1 when no
 * column of r's takes it, 0 when its value is null, 1 when out has it. f->col is the
 * column of r's plan (resolve). In line: it is most of reading an event. */
static inline int typed_of(const struct floe_record *r, const struct agg_field *f,
			   struct agg_fval *out)
{
	size_t k = (size_t)(int64_t)f->col; /* -1: past any ntyped */
	if (k >= r->ntyped)
		return -1;
	const struct floe_pq_value *v = &r->typed[k];
	if (v->is_null)
		return 0;
	enum floe_col_type t;
	memcpy(&t, (const char *)r->typed_plan + f->type_at, sizeof(t));
	/* The type's class by a bit of a mask: a test, where a switch is a jump table. */
	uint32_t bit = 1u << ((unsigned)t & 31);
	out->s = NULL; /* a number's text is made when asked for (fval_text) */
	if (bit & ((1u << FLOE_COL_INT) | (1u << FLOE_COL_LONG) |
		   (1u << FLOE_COL_TIMESTAMPTZ))) { /* µs since the epoch: one instant, one key */
		out->kind = AGG_F_INT;
		out->i = v->i;
		return 1;
	}
	if (bit & ((1u << FLOE_COL_FLOAT) | (1u << FLOE_COL_DOUBLE))) {
		out->kind = AGG_F_DBL;
		out->d = v->d;
		return 1;
	}
	if (bit & ((1u << FLOE_COL_BOOLEAN) | (1u << FLOE_COL_DATE)))
		return typed_text(t, v, out);
	return str_of((struct floe_str){v->s ? v->s : "", v->len}, out);
}

/* The text of attribute f in r into out; false when r has none. The slot it was found in
 * last time is tried first (records of one input carry their attributes in one order). */
static bool attr_of(const struct floe_record *r, struct agg_field *f, struct agg_fval *out)
{
	const struct floe_field_ref *ref = &f->ref;
	size_t i = f->attr;
	if (i >= r->nattrs || r->attr_key_lens[i] != ref->attr_len ||
	    memcmp(r->attr_keys[i], ref->attr, ref->attr_len) != 0) {
		for (i = 0; i < r->nattrs; i++)
			if (r->attr_key_lens[i] == ref->attr_len &&
			    memcmp(r->attr_keys[i], ref->attr, ref->attr_len) == 0)
				break;
		if (i == r->nattrs)
			return false;
		f->attr = i;
	}
	out->kind = AGG_F_TEXT;
	out->s = r->attr_vals[i];
	out->len = out->s ? r->attr_val_lens[i] : 0;
	return out->s != NULL;
}

/* field_get past a typed column's value: a typed field's text, a record's built-in field,
 * or an attribute's text (then a typed column's value). Out of line: typed input comes
 * here for nulls only. */
static bool __attribute__((noinline))
field_other(const struct floe_record *r, struct agg_field *f, struct agg_fval *out)
{
	if (f->typed)
		return attr_of(r, f, out);
	switch (f->ref.src) {
	case FLOE_FIELD_HOST:
		return str_of(r->host, out);
	case FLOE_FIELD_SOURCE:
		return str_of(r->source, out);
	case FLOE_FIELD_APP:
		return str_of(r->app, out);
	case FLOE_FIELD_PROC_ID:
		return str_of(r->proc_id, out);
	case FLOE_FIELD_MSG_ID:
		return str_of(r->msg_id, out);
	case FLOE_FIELD_MESSAGE:
		return str_of(r->message, out);
	case FLOE_FIELD_SEVERITY:
		return int_of(r->has_severity, r->severity, out);
	case FLOE_FIELD_FACILITY:
		return int_of(r->has_facility, r->facility, out);
	case FLOE_FIELD_OFFSET:
		return int_of(r->has_offset, r->offset, out);
	case FLOE_FIELD_ATTR:
		break;
	}
	if (attr_of(r, f, out))
		return true;
	return typed_of(r, f, out) > 0;
}

/* Reads field f of r into out; false when the record has no value there. A field a
 * configured typed column takes is read from the record's typed values, and from its
 * text only when the record has no typed value for it (a value that did not convert
 * keeps its text in attrs; a record read before the columns were learnt has text only);
 * any other attribute is read from its text, and from a typed column of the record's
 * when it has no such attribute. */
static inline bool field_get(const struct floe_record *r, struct agg_field *f,
			     struct agg_fval *out)
{
	if (f->typed && typed_of(r, f, out) > 0)
		return true;
	return field_other(r, f, out);
}

/* A number from a field: a typed number as is, a string when it is a whole finite
 * decimal (strtod's syntax less hex, inf and nan). */
static bool number_of(const struct agg_fval *v, double *out)
{
	if (v->kind != AGG_F_TEXT) {
		*out = v->kind == AGG_F_INT ? (double)v->i : v->d;
		return v->kind == AGG_F_INT || isfinite(v->d);
	}
	if (floe_agg_fast_decimal(v->s, v->len, out) > 0)
		return true;
	char buf[64];
	if (v->len == 0 || v->len >= sizeof(buf))
		return false;
	for (size_t i = 0; i < v->len; i++)
		if (!memchr("0123456789.eE+-", v->s[i], 15))
			return false;
	memcpy(buf, v->s, v->len);
	buf[v->len] = '\0';
	char *end = NULL;
	double d = strtod(buf, &end);
	if (end != buf + v->len || !isfinite(d))
		return false;
	*out = d;
	return true;
}

static bool where_keeps(struct floe_aggregator *g, const struct floe_record *r)
{
	const struct floe_config_agg *c = g->cfg;
	if (!c->where.field)
		return true;
	struct agg_fval v;
	if (!field_get(r, &g->where, &v))
		return false;
	fval_text(&v);
	if (c->where.equals)
		return strlen(c->where.equals) == v.len && memcmp(c->where.equals, v.s, v.len) == 0;
	if (g->re) {
		bool matched = false;
		return floe_regex_test(g->re, v.s, v.len, &matched) == 0 && matched;
	}
	return true; /* present */
}

/* ---- groups ----------------------------------------------------------------------------- */

/* Key i's value in r as an integer (its column is int or long): a typed or integer
 * field as it is, a text converted as the column type converts it. false when it has
 * none, or its text is not an integer of the column's range (counted). */
static bool key_int(struct floe_aggregator *g, size_t i, struct agg_fval *v)
{
	bool is32 = g->key_type[i] == FLOE_AGGCOL_INT;
	if (v->kind == AGG_F_DBL) {
		g->stats.unparsable++;
		return false;
	}
	if (v->kind == AGG_F_TEXT) {
		struct floe_pq_value x;
		enum floe_conv c =
		    floe_convert(is32 ? FLOE_COL_INT : FLOE_COL_LONG, v->s, v->len, &x);
		g->stats.unparsable += c == FLOE_CONV_FAIL;
		if (c != FLOE_CONV_OK)
			return false;
		v->i = x.i;
	}
	/* A column typed long in the table (a promotion) under a key configured int. */
	if (is32 && (v->i < INT32_MIN || v->i > INT32_MAX)) {
		g->stats.unparsable++;
		return false;
	}
	return true;
}

/* Encodes r's group key into key (g->key_cap bytes: the batch's room for it); false when
 * it does not fit. Each key is what its column holds: a string's bytes, or an integer's 8
 * bytes (hashed as such, not as text), or null. */
static bool make_key(struct floe_aggregator *g, const struct floe_record *r, uint8_t *key,
		     size_t *len)
{
	size_t n = 0;
	for (size_t i = 0; i < g->cfg->ngroup_by; i++) {
		struct agg_fval v;
		bool has = field_get(r, &g->keys[i], &v);
		bool isint = g->key_type[i] != FLOE_AGGCOL_STRING;
		if (has && isint)
			has = key_int(g, i, &v);
		else if (has)
			fval_text(&v);
		size_t need = !has ? 1 : isint ? 9 : 5 + v.len;
		if (need > g->key_cap - n)
			return false;
		key[n] = !has ? 0 : isint ? 2 : 1;
		if (has && isint) {
			memcpy(key + n + 1, &v.i, 8);
		} else if (has) {
			uint32_t l = (uint32_t)v.len;
			memcpy(key + n + 1, &l, 4);
			floe_agg_key_copy(key + n + 5, v.s, v.len);
		}
		n += need;
	}
	*len = n;
	return true;
}

/* make_key by the fast read (fast_read said r is read so): false when a key is null,
 * out of an int's range or does not fit, which make_key then encodes or counts as it
 * does. */
static inline bool key_fast(const struct floe_aggregator *g, const struct floe_record *r,
			    uint8_t *key, size_t *len)
{
	const char *typed = (const char *)r->typed;
	size_t n = 0, nkeys = g->cfg->ngroup_by, cap = g->key_cap;
	for (size_t i = 0; i < nkeys; i++) {
		const struct agg_fast *x = &g->fkey[i];
		const struct floe_pq_value *v = (const void *)(typed + x->at);
		if (v->is_null)
			return false;
		if (x->op == AGG_FOP_STR) {
			uint32_t l = (uint32_t)v->len;
			if (!v->s || 5 + v->len > cap - n)
				return false;
			key[n] = 1;
			memcpy(key + n + 1, &l, 4);
			floe_agg_key_copy(key + n + 5, v->s, v->len);
			n += 5 + v->len;
			continue;
		}
		if ((x->op == AGG_FOP_INT && (v->i < INT32_MIN || v->i > INT32_MAX)) || 9 > cap - n)
			return false;
		key[n] = 2;
		memcpy(key + n + 1, &v->i, 8);
		n += 9;
	}
	*len = n;
	return true;
}

/* values_read by the fast read (fast_read said r is read so): false when a value is null
 * (or a string without bytes), which values_read then reads from the record's text. */
static inline bool values_fast(const struct floe_aggregator *g, const struct floe_record *r,
			       uint32_t j)
{
	const char *typed = (const char *)r->typed;
	for (uint32_t i = 0, nv = g->nvcols; i < nv; i++) {
		const struct agg_vcol *c = &g->vcols[i];
		const struct floe_pq_value *v = (const void *)(typed + c->fast.at);
		struct agg_mval *x = &c->vals[j];
		if (v->is_null)
			return false;
		x->ok = 1;
		switch (c->fast.op) {
		case AGG_FOP_NUM_INT:
			x->d = (double)v->i;
			break;
		case AGG_FOP_NUM_DBL:
			x->d = v->d;
			x->ok = isfinite(v->d) ? 1 : -1;
			break;
		case AGG_FOP_HASH_INT: {
			char t[24];
			x->hash = floe_hll_hash(t, floe_agg_int_text(v->i, t));
			break;
		}
		case AGG_FOP_HASH_STR:
			if (!v->s)
				return false;
			x->hash = floe_hll_hash(v->s, v->len);
			break;
		default:
			break;
		}
	}
	return true;
}

/* Metric m's value as a number, parsed at most once per event for all its metrics. */
static bool metric_number(struct agg_metric *m, double *d)
{
	if (m->cur_num == 0)
		m->cur_num = number_of(&m->cur, &m->cur_d) ? 1 : -1;
	*d = m->cur_d;
	return m->cur_num > 0;
}

/* Reads the values of r into row j of the batch's value columns: a field read once for
 * its columns, a number parsed once, the distinct value's hash. The groups' memory is not
 * touched here: the batch adds them group by group (aggregator_batch.c). */
static void values_read(struct floe_aggregator *g, const struct floe_record *r, uint32_t j)
{
	for (uint32_t i = 0; i < g->nvcols; i++) {
		const struct agg_vcol *c = &g->vcols[i];
		struct agg_metric *s = c->src;
		struct agg_mval *x = &c->vals[j];
		if (c->reads) {
			s->cur_num = 0;
			s->cur_has = field_get(r, &s->f, &s->cur);
		}
		x->ok = s->cur_has;
		if (!s->cur_has)
			continue;
		switch (c->kind) {
		case AGG_V_PRESENT:
			break;
		case AGG_V_TEXT: /* top_k: added with the record (its batch ends with it) */
			fval_text(&s->cur);
			break;
		case AGG_V_HASH:
			fval_text(&s->cur);
			x->hash = floe_hll_hash(s->cur.s, s->cur.len);
			break;
		case AGG_V_NUMBER:
			if (!metric_number(s, &x->d))
				x->ok = -1;
		}
	}
}

/* ---- windows ----------------------------------------------------------------------------- */

/* The start of the newest window of event time ts (its slide step's), its slot in
 * g->step_slot: kept for the step, so that only an event of another step divides. */
static inline int64_t step_of(struct floe_aggregator *g, int64_t ts)
{
	if (ts < g->step_lo || ts >= g->step_hi) {
		int64_t lo = agg_floor_div(ts, g->slide_us) * g->slide_us;
		g->step_lo = lo;
		g->step_hi = lo > INT64_MAX - g->slide_us ? INT64_MAX : lo + g->slide_us;
		g->step_slot = (uint32_t)(agg_slot_of(g, lo) - g->win);
	}
	return g->step_lo;
}

/* The open window of start, in its slot w, opened if need be (its slot is free: windows
 * are closed before a newer one can need their slot). */
static struct agg_window *window_at(struct floe_aggregator *g, struct agg_window *w,
				    int64_t start)
{
	if (w->open && w->start == start)
		return w;
	w->open = true;
	w->start = start;
	w->ngroups = 0;
	w->late = g->pending_late;
	g->pending_late = 0;
	agg_group_at(g, w, g->cfg->max_groups)->used = 0;
	memset(w->index, 0, g->cap * sizeof(uint32_t));
	floe_agg_pool_reset(&w->pool);
	if (start + g->window_us < g->next_close)
		g->next_close = start + g->window_us;
	return w;
}

static struct agg_window *oldest_open(struct floe_aggregator *g)
{
	struct agg_window *o = NULL;
	for (uint32_t i = 0; i < g->plan.windows; i++)
		if (g->win[i].open && (!o || g->win[i].start < o->start))
			o = &g->win[i];
	return o;
}

/* Emits and frees, oldest first, every open window ending at or before until. */
static int close_until(struct floe_aggregator *g, int64_t until, bool partial,
		       floe_agg_emit_fn emit, void *arg)
{
	struct agg_window *w;
	while ((w = oldest_open(g)) && (partial || w->start + g->window_us <= until)) {
		floe_agg_settle(g);
		int rc = floe_agg_emit_window(g, w, partial, emit, arg);
		if (rc)
			return rc;
		w->open = false;
		/* Its sketches are done: the chunks its pool grew go back to the budget now,
		 * not when the slot is reused. */
		floe_agg_pool_reset(&w->pool);
		/* A flushed window may open again (events after a restart add a row to it). */
		if (!partial && w->start + g->window_us > g->closed_until)
			g->closed_until = w->start + g->window_us;
	}
	g->next_close = w ? w->start + g->window_us : INT64_MAX;
	if (until > g->closed_until)
		g->closed_until = until;
	return 0;
}

/* The watermark is at until: the windows ending at or before it close, which the oldest
 * open window's end (next_close) says without looking at them. */
static inline int watermark(struct floe_aggregator *g, int64_t until, floe_agg_emit_fn emit,
			    void *arg)
{
	if (until >= g->next_close)
		return close_until(g, until, false, emit, arg);
	if (until > g->closed_until)
		g->closed_until = until;
	return 0;
}

/* Adds r to its group of w as a row of the batch, which finds the groups and adds the
 * values when it is full (floe_agg_settle); events of one group are added in their
 * order. The row's key is at koff in the batch's keys (klen UINT32_MAX: it did not fit,
 * the overflow group takes it); its values are read from r for the event's first row
 * (first; unless the fast read put them there already: read) and copied from that row
 * for the others (the windows of a sliding window). */
static inline __attribute__((always_inline)) void
add_row(struct floe_aggregator *g, struct agg_window *w, const struct floe_record *r, uint32_t koff,
	uint32_t klen, uint32_t first, bool read)
{
	uint32_t j = g->npend++;
	g->b.win[j] = w;
	g->b.koff[j] = koff;
	g->b.klen[j] = klen;
	if (j == first) {
		if (!read)
			values_read(g, r, j);
		return;
	}
	for (uint32_t i = 0; i < g->nvcols; i++)
		g->vcols[i].vals[j] = g->vcols[i].vals[first];
}

/* A late event (no open window of its time takes it, or its time is too far ahead):
 * counted, and added to the oldest open window when the configuration says so. */
static void add_late(struct floe_aggregator *g, const struct floe_record *r, bool future,
		     uint32_t koff, uint32_t klen, bool read)
{
	if (future)
		g->stats.future++;
	g->stats.late++;
	struct agg_window *o = oldest_open(g);
	if (!o) {
		g->pending_late++;
		g->stats.late_dropped++;
		return;
	}
	o->late++;
	if (g->cfg->late == FLOE_LATE_OLDEST_OPEN)
		add_row(g, o, r, koff, klen, g->npend, read);
	else
		g->stats.late_dropped++;
}

/* The event time a record is aggregated at. A record whose ts is its received_at has no
 * time of its own (a line its parser did not match, a continuation line, an input with no
 * timestamp): taken as it is, in a backfill (a month-old file read from its beginning,
 * a first boot reading /var/log) it would put the watermark a month ahead, and every
 * dated line after it would be late and dropped. It is placed after the newest dated
 * record instead, by the processing time read since, which is its own time when the
 * dated records are live. Only within idle_timeout of that record (the windows it dated
 * would have closed by then) and while the clock has not gone back; otherwise, and in a
 * stream with no dated record, its own time. */
static int64_t event_time(struct floe_aggregator *g, const struct floe_record *r, int64_t clock,
			  bool *dated)
{
	*dated = r->ts != r->received_at;
	if (*dated || g->timed_at == INT64_MIN || clock < g->timed_at ||
	    clock - g->timed_at > g->idle_us)
		return r->ts;
	int64_t t = g->timed_ts + (clock - g->timed_at);
	return t < r->ts ? t : r->ts;
}

int floe_agg_add(struct floe_aggregator *g, const struct floe_record *r, floe_agg_emit_fn emit,
		 void *arg)
{
	if (r->ntyped && (r->typed_plan->from_sig != g->plan_sig || !g->plan_sig))
		resolve(g, r->typed_plan);
	if (!where_keeps(g, r)) {
		g->stats.filtered++;
		return 0;
	}
	g->stats.events++;
	/* A record received before the clock stepped back (in a queue when it did) carries
	 * the old clock's times: they are measured against the caller's clock instead. */
	bool stale = g->now != INT64_MIN && r->received_at > g->now &&
		     (uint64_t)r->received_at - (uint64_t)g->now > (uint64_t)g->clock_step_us;
	int64_t clock = stale ? g->now : r->received_at;
	g->last_received = clock;
	/* An event time far ahead of the clock (a device's clock reset, a mistyped year)
	 * would move the watermark there and make every real event after it late, across
	 * restarts too (the watermark is in the image). It opens no window and moves
	 * nothing: it goes where a late event goes, and is counted. The difference is taken
	 * unsigned, where it cannot overflow. */
	bool dated;
	int64_t ts = event_time(g, r, clock, &dated);
	bool future = ts > clock && (uint64_t)ts - (uint64_t)clock > (uint64_t)g->future_us;
	if (!future && (!g->seen || ts > g->max_ts)) {
		g->seen = true;
		g->max_ts = ts;
		int rc = watermark(g, g->max_ts - g->lateness_us, emit, arg);
		if (rc)
			return rc;
	}
	/* The key goes straight into the batch's keys, where the event's rows find it. */
	struct agg_batch *b = &g->b;
	size_t len = 0;
	uint32_t koff = b->keys_used, first = g->npend;
	bool fast = fast_read(g, r);
	uint32_t klen =
	    (fast && key_fast(g, r, b->keys + koff, &len)) || make_key(g, r, b->keys + koff, &len)
		? (uint32_t)len
		: UINT32_MAX;
	/* The fast read puts the values in the event's first row now, whether or not a
	 * window takes it (there is room for the event's rows): one call site, in line. */
	bool read = fast && values_fast(g, r, first);
	if (!future && g->nwin == 1) { /* the step's window at most (tumbling windows) */
		int64_t s = step_of(g, ts);
		if (s > ts - g->window_us && s + g->window_us > g->closed_until)
			add_row(g, window_at(g, &g->win[g->step_slot], s), r, koff, klen, first,
				read);
	} else if (!future) {
		int64_t last = step_of(g, ts);
		uint32_t k = g->step_slot;
		for (int64_t s = last; s > ts - g->window_us; s -= g->slide_us) {
			if (s + g->window_us <= g->closed_until)
				break; /* this and every earlier window closed */
			add_row(g, window_at(g, &g->win[k], s), r, koff, klen, first, read);
			k = (k ? k : g->plan.windows) - 1;
		}
	}
	if (g->npend == first)
		add_late(g, r, future, koff, klen, read);
	else if (dated) {
		/* Only a dated record that found its window: one late or too far ahead (a
		 * sender whose clock is a day behind) would take the undated ones with it. */
		g->timed_ts = ts;
		g->timed_at = clock;
	}
	if (g->npend > first && klen != UINT32_MAX)
		b->keys_used += klen;
	/* Room for the next event's rows and key, or the batch is added now. */
	if (g->npend + g->nwin > g->pend_cap || b->keys_cap - b->keys_used < g->key_cap)
		floe_agg_settle(g);
	return 0;
}

/* The clock stepped back by more than allowed_lateness: every event from now on would
 * be late for as long as the step. The open windows go out as they are, as at a stop
 * (partial: events of theirs may still come), and the watermark starts again from the
 * next event. Windows that closed before stay closed in the table; events of their times
 * that come now (the clock living those times again) open them again, for another row. */
static int clock_stepped(struct floe_aggregator *g, int64_t now_us, floe_agg_emit_fn emit,
			 void *arg)
{
	int rc = close_until(g, INT64_MIN, true, emit, arg);
	if (rc)
		return rc; /* g->now not moved: the next reading tries again */
	g->clock_steps++;
	g->seen = false;
	g->max_ts = 0;
	g->closed_until = INT64_MIN;
	g->last_received = now_us;
	g->timed_at = INT64_MIN;
	return 0;
}

int floe_agg_clock(struct floe_aggregator *g, int64_t now_us, floe_agg_emit_fn emit, void *arg)
{
	int64_t was = g->now;
	if (was != INT64_MIN && now_us < was &&
	    (uint64_t)was - (uint64_t)now_us > (uint64_t)g->clock_step_us) {
		int rc = clock_stepped(g, now_us, emit, arg);
		if (rc)
			return rc;
	}
	g->now = now_us;
	return 0;
}

uint64_t floe_agg_clock_steps(const struct floe_aggregator *g)
{
	return g->clock_steps;
}

int64_t floe_agg_clock_now(const struct floe_aggregator *g)
{
	return g->now;
}

int floe_agg_tick(struct floe_aggregator *g, int64_t now_us, floe_agg_emit_fn emit, void *arg)
{
	int rc = floe_agg_clock(g, now_us, emit, arg);
	if (rc || !g->seen || now_us - g->last_received < g->idle_us || !oldest_open(g))
		return rc;
	/* Every open window closes as if the watermark had passed them all: they start at
	 * or before the newest event time. */
	return close_until(g, g->max_ts + g->window_us, false, emit, arg);
}

int floe_agg_flush(struct floe_aggregator *g, floe_agg_emit_fn emit, void *arg)
{
	return close_until(g, INT64_MIN, true, emit, arg);
}
