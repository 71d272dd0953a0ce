/* The column plan of the logs table: typed columns, their sources and field ids. */
#include "columns.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/schema.h"
#include "formats/parquet/writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* The Parquet kind of each column type. */
static const enum floe_pq_kind kinds[FLOE_COL_NTYPES] = {
    [FLOE_COL_BOOLEAN] = FLOE_PQ_BOOLEAN, [FLOE_COL_INT] = FLOE_PQ_INT32,
    [FLOE_COL_LONG] = FLOE_PQ_INT64,	  [FLOE_COL_FLOAT] = FLOE_PQ_FLOAT,
    [FLOE_COL_DOUBLE] = FLOE_PQ_DOUBLE,	  [FLOE_COL_STRING] = FLOE_PQ_STRING,
    [FLOE_COL_DATE] = FLOE_PQ_DATE,	  [FLOE_COL_BINARY] = FLOE_PQ_BINARY,
    [FLOE_COL_TIMESTAMPTZ] = FLOE_PQ_TIMESTAMPTZ,
};

static int copy_text(char *dst, size_t cap, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n >= cap)
		return FLOE_ELIMIT;
	memcpy(dst, s ? s : "", n);
	dst[n] = '\0';
	return 0;
}

void floe_colplan_sign(struct floe_colplan *p)
{
	uint64_t h = XXH64(&p->n, sizeof(p->n), 0);
	for (size_t i = 0; i < p->n; i++) {
		h = XXH64(p->col[i].from, strlen(p->col[i].from) + 1, h);
		h = XXH64(&p->col[i].type, sizeof(p->col[i].type), h);
	}
	p->from_sig = h ? h : 1;
}

int floe_colplan_add(struct floe_colplan *p, const char *name, enum floe_col_type type,
		     const char *from, const char *renamed_from)
{
	if ((unsigned)type >= FLOE_COL_NTYPES || !name || !*name)
		return FLOE_EINVAL;
	for (size_t i = 0; i < p->n; i++)
		if (strcmp(p->col[i].name, name) == 0)
			return 0;
	if (p->n == FLOE_COLS_MAX)
		return FLOE_ELIMIT;
	struct floe_col c = {.type = type};
	if (copy_text(c.name, sizeof(c.name), name) ||
	    copy_text(c.from, sizeof(c.from), from && *from ? from : name) ||
	    copy_text(c.renamed_from, sizeof(c.renamed_from), renamed_from))
		return FLOE_ELIMIT;
	p->col[p->n++] = c;
	p->planned = false;
	floe_colplan_sign(p);
	return 0;
}

void floe_colplan_ice_columns(const struct floe_colplan *p, struct floe_ice_column *out)
{
	for (size_t i = 0; i < p->n; i++)
		out[i] = (struct floe_ice_column){
		    .name = p->col[i].name,
		    .type = floe_col_type_name(p->col[i].type),
		    .renamed_from = p->col[i].renamed_from[0] ? p->col[i].renamed_from : NULL,
		    .id = p->planned ? p->col[i].id : 0};
}

int floe_colplan_learn(struct floe_colplan *p, const struct floe_ice_meta *m, struct floe_err *err)
{
	struct floe_ice_column cols[FLOE_COLS_MAX];
	struct floe_ice_col_plan plan[FLOE_COLS_MAX];
	bool changed = false;
	floe_colplan_ice_columns(p, cols);
	int rc = floe_ice_schema_plan(m, cols, p->n, plan, &changed, err);
	if (rc)
		return rc;
	for (size_t i = 0; i < p->n; i++) {
		int t = floe_col_type_parse(plan[i].type, strlen(plan[i].type));
		if (t < 0)
			return floe_err_set(err, FLOE_ESCHEMA,
					    "column '%s' is %s in the table, which floe cannot write",
					    p->col[i].name, plan[i].type);
	}
	for (size_t i = 0; i < p->n; i++) {
		p->col[i].id = plan[i].id;
		p->col[i].type = (enum floe_col_type)floe_col_type_parse(plan[i].type, strlen(plan[i].type));
	}
	floe_colplan_sign(p); /* the types may have widened */
	p->planned = true;
	return 0;
}

bool floe_colplan_same_columns(const struct floe_colplan *a, const struct floe_colplan *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->col[i].name, b->col[i].name) != 0 ||
		    strcmp(a->col[i].from, b->col[i].from) != 0 ||
		    !floe_ice_type_promotes(floe_col_type_name(b->col[i].type),
					    floe_col_type_name(a->col[i].type)))
			return false;
	return true;
}

void floe_colplan_pq_columns(const struct floe_colplan *p, struct floe_pq_column *out, size_t *n)
{
	memcpy(out, floe_log_columns(), FLOE_LOG_NCOLS * sizeof(*out));
	*n = FLOE_LOG_NCOLS;
	if (p && p->message_unparsed)
		out[FLOE_COL_MESSAGE - 1].optional = true;
	if (!p || !p->planned)
		return;
	for (size_t i = 0; i < p->n; i++)
		out[(*n)++] = (struct floe_pq_column){p->col[i].name, p->col[i].id,
						      kinds[p->col[i].type], true, 0, 0};
}

int floe_colplan_check(const struct floe_colplan *p, const struct floe_ice_meta *m,
		       struct floe_err *err)
{
	if (!p || !p->planned)
		return 0;
	for (size_t i = 0; i < p->n; i++) {
		const struct floe_col *c = &p->col[i];
		const char *type = NULL, *name = NULL, *ours = floe_col_type_name(c->type);
		bool required = false;
		if (!floe_ice_meta_schema_field(m, c->id, &type, &required, &name))
			return floe_err_set(err, FLOE_ESCHEMA,
					    "column '%s' was written as field id %d, which the table "
					    "does not have",
					    c->name, (int)c->id);
		if (strcmp(name ? name : "", c->name) != 0)
			return floe_err_set(err, FLOE_ESCHEMA,
					    "column '%s' was written as field id %d, which is '%s' in "
					    "the table",
					    c->name, (int)c->id, name ? name : "?");
		if (!floe_ice_type_promotes(ours, type))
			return floe_err_set(err, FLOE_ESCHEMA,
					    "column '%s' (field id %d) is %s in the table, floe writes %s",
					    c->name, (int)c->id, type, ours);
	}
	return 0;
}

/* The encoding: "floe-columns 1\n", then one line per column:
 * "<id>\t<type>\t<name>\t<from>\t<renamed_from>\n". Names are letters, digits and _; a
 * from holds no tab or newline (the configuration's check). The blob file around it
 * carries the checksum. */
int floe_colplan_encode(const struct floe_colplan *p, struct floe_buf *out)
{
	int rc = floe_buf_puts(out, "floe-columns 1\n");
	for (size_t i = 0; rc == 0 && i < p->n; i++) {
		const struct floe_col *c = &p->col[i];
		rc = floe_buf_printf(out, "%d\t%s\t%s\t%s\t%s\n", (int)c->id,
				     floe_col_type_name(c->type), c->name, c->from, c->renamed_from);
	}
	return rc;
}

/* The next tab- or newline-ended field of line [*at, end) into dst (cap bytes). */
static int field(const char **at, const char *end, char stop, char *dst, size_t cap)
{
	const char *s = *at, *e = memchr(s, stop, (size_t)(end - s));
	if (!e || (size_t)(e - s) >= cap || memchr(s, stop == '\t' ? '\n' : '\t', (size_t)(e - s)))
		return FLOE_ECORRUPT;
	memcpy(dst, s, (size_t)(e - s));
	dst[e - s] = '\0';
	*at = e + 1;
	return 0;
}

int floe_colplan_decode(const uint8_t *b, size_t len, struct floe_colplan *p)
{
	static const char head[] = "floe-columns 1\n";
	const char *at = (const char *)b, *end = at + len;
	struct floe_colplan q = {.planned = true};
	if (len < sizeof(head) - 1 || memcmp(at, head, sizeof(head) - 1) != 0)
		return FLOE_ECORRUPT;
	at += sizeof(head) - 1;
	while (at < end) {
		char id[12], type[16];
		if (q.n == FLOE_COLS_MAX)
			return FLOE_ECORRUPT;
		struct floe_col *c = &q.col[q.n];
		if (field(&at, end, '\t', id, sizeof(id)) || field(&at, end, '\t', type, sizeof(type)) ||
		    field(&at, end, '\t', c->name, sizeof(c->name)) ||
		    field(&at, end, '\t', c->from, sizeof(c->from)) ||
		    field(&at, end, '\n', c->renamed_from, sizeof(c->renamed_from)))
			return FLOE_ECORRUPT;
		int t = floe_col_type_parse(type, strlen(type));
		char *e = NULL;
		long v = strtol(id, &e, 10);
		if (t < 0 || !c->name[0] || e == id || *e || v <= FLOE_LOG_LAST_COLUMN_ID ||
		    v > INT32_MAX)
			return FLOE_ECORRUPT;
		c->type = (enum floe_col_type)t;
		c->id = (int32_t)v;
		q.n++;
	}
	floe_colplan_sign(&q);
	*p = q;
	return 0;
}

/* Whether attribute k of rec is named from (NUL-terminated, at most FLOE_COL_FROM_MAX
 * bytes): the key's length bounds the compare, so no strlen per line. */
static bool attr_is(const struct floe_record *rec, size_t k, const char *from)
{
	size_t n = rec->attr_key_lens[k];
	const char *key = rec->attr_keys[k];
	if (n > FLOE_COL_FROM_MAX || from[n] != '\0')
		return false;
	/* Field names are a few bytes: a loop costs less than a call to memcmp. */
	for (size_t j = 0; j < n; j++)
		if (key[j] != from[j])
			return false;
	return true;
}

/* The attribute named from in rec, or -1, looked for from index hint on (wrapping):
 * parsers give their fields in the same order line after line, and a plan takes them
 * in that order, so the first place looked at is usually the one. */
static long find_attr(const struct floe_record *rec, const char *from, size_t hint)
{
	size_t n = rec->nattrs;
	if (hint >= n)
		hint = 0;
	/* One loop, wrapping, so that attr_is has one call site and is inlined: a column
	 * whose field a line lacks (an access log's "-" user) compares every key. */
	for (size_t j = 0, k = hint; j < n; j++, k = k + 1 == n ? 0 : k + 1)
		if (attr_is(rec, k, from))
			return (long)k;
	return -1;
}

/* floe_convert, a string or binary (its bytes as they are) without the call: most
 * columns of most plans are strings, and every line converts each. So is an int or long
 * of one to nine plain digits (a status code, a byte count), which cannot overflow
 * either: the call and its checks cost more than the digits. Anything else (a sign, a
 * "-", more digits, other bytes) goes to floe_convert, which gives the same value for
 * these. *out is a null its caller made with floe_pq_value_init: these two set only
 * the fields they change (the rest are zero already), not all eleven again. */
static inline enum floe_conv convert(enum floe_col_type t, const char *v, size_t n,
				     struct floe_pq_value *out)
{
	if ((t == FLOE_COL_INT || t == FLOE_COL_LONG) && n - 1 < 9) {
		uint32_t u = 0;
		size_t j = 0;
		for (; j < n; j++) {
			unsigned d = (unsigned)(unsigned char)v[j] - '0';
			if (d > 9)
				break;
			u = u * 10 + d;
		}
		if (j == n) {
			out->is_null = false;
			out->i = (int64_t)u;
			return FLOE_CONV_OK;
		}
	}
	if (t != FLOE_COL_STRING && t != FLOE_COL_BINARY)
		return floe_convert(t, v, n, out);
	out->is_null = false;
	out->s = v;
	out->len = n;
	return FLOE_CONV_OK;
}

/* Leaves in rec the attributes no column took (bit k of gone_bits for the first 64; for
 * the others, a column i with taken[i] and at[i] == k, n_at of them), in the caller's
 * arrays, and points rec's typed values at vals. Inline: for a line whose every
 * attribute a column took it is a few stores, less than the call. */
__attribute__((always_inline)) static inline void
keep_rest(const struct floe_colplan *p, struct floe_record *rec, uint64_t gone_bits,
	  const bool *taken, const long *at, size_t n_at, const struct floe_pq_value *vals,
	  const char **keys, size_t *klens, const char **avals, size_t *avlens)
{
	size_t n = 0;
	/* The first 64 by the bits of those kept, in order: a line whose every attribute a
	 * column took (an access log's, mostly) has none to visit. */
	uint64_t all = rec->nattrs >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << rec->nattrs) - 1;
	for (uint64_t keep = all & ~gone_bits; keep; keep &= keep - 1) {
		size_t k = (size_t)__builtin_ctzll(keep);
		keys[n] = rec->attr_keys[k];
		klens[n] = rec->attr_key_lens[k];
		avals[n] = rec->attr_vals ? rec->attr_vals[k] : NULL;
		avlens[n] = rec->attr_vals ? rec->attr_val_lens[k] : 0;
		n++;
	}
	for (size_t k = 64; k < rec->nattrs; k++) {
		bool gone = false;
		for (size_t i = 0; i < n_at && !gone; i++)
			gone = taken[i] && at[i] == (long)k;
		if (gone)
			continue;
		keys[n] = rec->attr_keys[k];
		klens[n] = rec->attr_key_lens[k];
		avals[n] = rec->attr_vals ? rec->attr_vals[k] : NULL;
		avlens[n] = rec->attr_vals ? rec->attr_val_lens[k] : 0;
		n++;
	}
	floe_colplan_taken(p, rec, vals, n, keys, klens, avals, avlens);
}

void floe_colplan_take(const struct floe_colplan *p, struct floe_record *rec,
		       struct floe_pq_value *vals, const char **keys, size_t *klens,
		       const char **avals, size_t *avlens, uint64_t *failures)
{
	/* The attributes taken: a bit each for the first 64 (a parser gives 64 at most), a
	 * look through the columns for the others (records no parser made). */
	uint64_t gone_bits = 0;
	bool taken[FLOE_COLS_MAX] = {false};
	long at[FLOE_COLS_MAX];
	size_t hint = 0;
	for (size_t i = 0; i < p->n; i++) {
		floe_pq_value_init(&vals[i], true);
		at[i] = find_attr(rec, p->col[i].from, hint);
		if (at[i] < 0)
			continue;
		hint = (size_t)at[i] + 1;
		const char *v = rec->attr_vals ? rec->attr_vals[at[i]] : NULL;
		if (v && convert(p->col[i].type, v, rec->attr_val_lens[at[i]], &vals[i]) ==
			     FLOE_CONV_FAIL) {
			failures[i]++;
			continue;
		}
		taken[i] = true;
		if (at[i] < 64)
			gone_bits |= (uint64_t)1 << at[i];
	}
	keep_rest(p, rec, gone_bits, taken, at, p->n, vals, keys, klens, avals, avlens);
}

int floe_colmap_build(struct floe_colmap *m, const struct floe_colplan *p,
		      const char *const *names, const size_t *lens, size_t n)
{
	if (n > FLOE_COLMAP_NAMES)
		return FLOE_ELIMIT;
	struct floe_colmap q = {.ncols = p->n, .nnames = n};
	for (size_t k = 0; k < n; k++) {
		q.first[k] = -1;
		for (size_t i = 0; i < p->n && q.first[k] < 0; i++)
			if (strlen(p->col[i].from) == lens[k] &&
			    memcmp(p->col[i].from, names[k], lens[k]) == 0)
				q.first[k] = (int8_t)i;
	}
	for (size_t i = 0; i < p->n; i++) {
		q.next[i] = -1;
		for (size_t j = i + 1; j < p->n && q.next[i] < 0; j++)
			if (strcmp(p->col[i].from, p->col[j].from) == 0)
				q.next[i] = (int8_t)j;
	}
	*m = q;
	return 0;
}

void floe_colplan_take_ids(const struct floe_colplan *p, const struct floe_colmap *m,
			   const uint8_t *ids, struct floe_record *rec, struct floe_pq_value *vals,
			   const char **keys, size_t *klens, const char **avals, size_t *avlens,
			   uint64_t *failures)
{
	bool covered = m->ncols == p->n && rec->nattrs <= 64;
	for (size_t k = 0; covered && !m->complete && k < rec->nattrs; k++)
		covered = ids[k] < m->nnames;
	if (!covered) {
		floe_colplan_take(p, rec, vals, keys, klens, avals, avlens, failures);
		return;
	}
	for (size_t i = 0; i < p->n; i++)
		floe_pq_value_init(&vals[i], true);
	/* Each attribute feeds its columns in the plan's order, as the general way takes
	 * them: it is gone when one of them took it, and a failure counts per column. The
	 * record's arrays and count in locals: a value's stores (a size_t, a pointer) could
	 * otherwise be taken to change them, and each attribute would load them again. */
	uint64_t gone_bits = 0;
	const size_t na = rec->nattrs;
	const char *const *av = rec->attr_vals;
	const size_t *avl = rec->attr_val_lens;
	for (size_t k = 0; k < na; k++) {
		int i = m->first[ids[k]];
		if (i < 0)
			continue;
		const char *v = av ? av[k] : NULL;
		size_t vl = av ? avl[k] : 0;
		do {
			if (v && convert(p->col[i].type, v, vl, &vals[i]) == FLOE_CONV_FAIL)
				failures[i]++;
			else
				gone_bits |= (uint64_t)1 << k;
		} while ((i = m->next[i]) >= 0);
	}
	keep_rest(p, rec, gone_bits, NULL, NULL, 0, vals, keys, klens, avals, avlens);
}
