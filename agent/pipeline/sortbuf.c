/* Sort buffer: records copied into arena blocks, sorted through an index of pointers with
 * a stable bottom-up merge sort (O(n log n), and one comparison per run boundary when
 * the input is already in order, as logs mostly are). */
#include "sortbuf.h"

#include "agent/schema/record.h"
#include "formats/parquet/writer.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stdalign.h>
#include <stdbool.h>
#include <string.h>

#define MIN_BYTES 4096
#define BLOCK_MIN 4096
#define BLOCK_MAX (1u << 20)
#define INDEX_MIN 64 /* index slots of the first index allocation */
#define RUN 16	     /* insertion-sorted run length before merging */

/* One copied record: the struct, then its typed values, then its attribute arrays, then
 * its string bytes. */
struct item {
	struct floe_record rec;
	size_t size; /* bytes of the copy, this struct included */
	uint32_t tag;
	bool gone; /* passed on by a partial drain; its space is reclaimed after it */
};

#define ITEM_ALIGN alignof(struct item)

/* A block of record copies; its data follows the header at DATA_OFF. */
struct block {
	struct block *next;
	size_t cap;  /* data bytes */
	size_t used; /* data bytes taken, a multiple of ITEM_ALIGN */
};

#define DATA_OFF                                                                                   \
	((sizeof(struct block) + alignof(max_align_t) - 1) / alignof(max_align_t) *                \
	 alignof(max_align_t))

struct floe_sortbuf {
	struct floe_alloc *alloc;
	enum floe_sort_key keys[FLOE_SORT_NKEYS];
	size_t nkeys;
	size_t max_bytes;
	size_t held;	      /* bytes of blocks (headers included) and index */
	struct block *blocks; /* every block, in fill order */
	struct block *cur;    /* the block being filled; the ones after it are empty */
	size_t block_size;    /* data bytes of an ordinary block */
	struct item **order;  /* index: rows entries, then room for the merge's scratch */
	size_t icap;	      /* index slots; the allocation holds 2 * icap pointers */
	size_t rows;
};

/* Non-null strings of length 0 point here: the copy keeps them distinct from null. */
static const char empty[1] = "";

int floe_sortbuf_new(struct floe_alloc *alloc, const enum floe_sort_key *keys, size_t nkeys,
		     size_t max_bytes, struct floe_sortbuf **out)
{
	if (nkeys > FLOE_SORT_NKEYS || (nkeys && !keys) || max_bytes < MIN_BYTES)
		return FLOE_EINVAL;
	for (size_t i = 0; i < nkeys; i++)
		if ((unsigned)keys[i] >= FLOE_SORT_NKEYS)
			return FLOE_EINVAL;
	struct floe_sortbuf *sb = floe_calloc(alloc, 1, sizeof(*sb));
	if (!sb)
		return FLOE_ENOMEM;
	sb->alloc = alloc;
	if (nkeys)
		memcpy(sb->keys, keys, nkeys * sizeof(*keys));
	sb->nkeys = nkeys;
	sb->max_bytes = max_bytes;
	/* Sixteen blocks fill a buffer: few allocations, little left unused at the end of
	 * the last block. */
	size_t bs = max_bytes / 16;
	sb->block_size = bs < BLOCK_MIN ? BLOCK_MIN : bs > BLOCK_MAX ? BLOCK_MAX : bs;
	*out = sb;
	return 0;
}

static void release_blocks(struct floe_sortbuf *sb)
{
	struct block *b = sb->blocks;
	while (b) {
		struct block *next = b->next;
		sb->held -= DATA_OFF + b->cap;
		floe_free(sb->alloc, b);
		b = next;
	}
	sb->blocks = sb->cur = NULL;
}

void floe_sortbuf_free(struct floe_sortbuf *sb)
{
	if (!sb)
		return;
	release_blocks(sb);
	floe_free(sb->alloc, sb->order);
	floe_free(sb->alloc, sb);
}

void floe_sortbuf_clear(struct floe_sortbuf *sb)
{
	for (struct block *b = sb->blocks; b; b = b->next)
		b->used = 0;
	sb->cur = sb->blocks;
	sb->rows = 0;
}

size_t floe_sortbuf_rows(const struct floe_sortbuf *sb)
{
	return sb->rows;
}

size_t floe_sortbuf_bytes(const struct floe_sortbuf *sb)
{
	return sb->held;
}

/* ---- adding ------------------------------------------------------------------------- */

static bool add_str(size_t *total, struct floe_str s)
{
	return s.p ? !__builtin_add_overflow(*total, s.len, total) : true;
}

/* Sets *out to the bytes rec's copy takes (rounded to ITEM_ALIGN). Returns 0,
 * FLOE_EINVAL for a record the Parquet writer would refuse too (bytes without a pointer),
 * or FLOE_ELIMIT when the size does not fit a size_t. */
static int copy_size(const struct floe_record *rec, size_t *out)
{
	const struct floe_str strs[] = {rec->host,    rec->source, rec->app,
					rec->proc_id, rec->msg_id, rec->message};
	size_t n = rec->nattrs, total = sizeof(struct item), arrays;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (!strs[i].p && strs[i].len)
			return FLOE_EINVAL;
	if (n &&
	    (!rec->attr_keys || !rec->attr_key_lens || (rec->attr_vals && !rec->attr_val_lens)))
		return FLOE_EINVAL;
	/* Arrays of pointers and of size_t, aligned as struct item is (which holds both). */
	if (__builtin_mul_overflow(n, 2 * sizeof(char *) + 2 * sizeof(size_t), &arrays) ||
	    __builtin_add_overflow(total, arrays, &total))
		return FLOE_ELIMIT;
	if (rec->ntyped && !rec->typed)
		return FLOE_EINVAL;
	if (__builtin_mul_overflow(rec->ntyped, sizeof(struct floe_pq_value), &arrays) ||
	    __builtin_add_overflow(total, arrays, &total))
		return FLOE_ELIMIT;
	bool ok = true;
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		ok = ok && add_str(&total, strs[i]);
	for (size_t i = 0; ok && i < rec->ntyped; i++)
		if (!rec->typed[i].is_null)
			ok = add_str(&total, (struct floe_str){rec->typed[i].s, rec->typed[i].len});
	for (size_t i = 0; ok && i < n; i++) {
		if (!rec->attr_keys[i] && rec->attr_key_lens[i])
			return FLOE_EINVAL;
		if (rec->attr_keys[i])
			ok = !__builtin_add_overflow(total, rec->attr_key_lens[i], &total);
		if (ok && rec->attr_vals && rec->attr_vals[i])
			ok = !__builtin_add_overflow(total, rec->attr_val_lens[i], &total);
	}
	if (!ok || __builtin_add_overflow(total, ITEM_ALIGN - 1, &total))
		return FLOE_ELIMIT;
	*out = total / ITEM_ALIGN * ITEM_ALIGN;
	return 0;
}

/* Makes room for one more index entry. Returns 0, 1 (over max_bytes) or FLOE_ENOMEM. */
static int grow_index(struct floe_sortbuf *sb)
{
	const size_t slot = 2 * sizeof(struct item *);
	size_t old = sb->icap * slot, rest = sb->held - old;
	size_t cap = sb->icap ? sb->icap * 2 : INDEX_MIN;
	if (cap > (sb->max_bytes - rest) / slot)
		cap = (sb->max_bytes - rest) / slot;
	if (cap <= sb->icap)
		return 1;
	struct item **order = floe_realloc(sb->alloc, sb->order, cap * slot);
	if (!order)
		return FLOE_ENOMEM;
	sb->order = order;
	sb->icap = cap;
	sb->held = rest + cap * slot;
	return 0;
}

/* Finds need bytes in the blocks, allocating one when the empty ones left are too
 * small. Returns 0 with *at set, 1 (over max_bytes) or FLOE_ENOMEM. */
static int reserve(struct floe_sortbuf *sb, size_t need, unsigned char **at)
{
	struct block *b = sb->cur;
	while (b && b->cap - b->used < need && b->next)
		b = b->next; /* the blocks after cur are empty */
	if (!b || b->cap - b->used < need) {
		size_t room = sb->max_bytes - sb->held;
		if (room < DATA_OFF || room - DATA_OFF < need)
			return 1;
		size_t cap = need > sb->block_size ? need : sb->block_size;
		if (cap > room - DATA_OFF)
			cap = room - DATA_OFF;
		struct block *nb = floe_malloc(sb->alloc, DATA_OFF + cap);
		if (!nb)
			return FLOE_ENOMEM;
		nb->cap = cap;
		nb->used = 0;
		/* Insert after the last block so that fill order stays list order. */
		nb->next = NULL;
		if (!b)
			sb->blocks = nb;
		else
			b->next = nb;
		sb->held += DATA_OFF + cap;
		b = nb;
	}
	sb->cur = b;
	*at = (unsigned char *)b + DATA_OFF + b->used;
	b->used += need;
	return 0;
}

/* Copies s's bytes to *dst (advancing it); null stays null. */
static struct floe_str copy_str(unsigned char **dst, struct floe_str s)
{
	struct floe_str out = {NULL, 0};
	if (!s.p)
		return out;
	out.len = s.len;
	if (s.len == 0) {
		out.p = empty;
		return out;
	}
	memcpy(*dst, s.p, s.len);
	out.p = (const char *)*dst;
	*dst += s.len;
	return out;
}

size_t floe_sortbuf_cost(const struct floe_record *rec)
{
	size_t need = 0;
	return copy_size(rec, &need) ? 0 : need;
}

bool floe_sortbuf_fits(const struct floe_sortbuf *sb, const struct floe_record *rec)
{
	size_t need = 0;
	if (copy_size(rec, &need) || sb->rows == sb->icap)
		return false;
	for (const struct block *b = sb->cur; b; b = b->next)
		if (b->cap - b->used >= need)
			return true;
	return false;
}

int floe_sortbuf_add(struct floe_sortbuf *sb, uint32_t tag, const struct floe_record *rec)
{
	size_t need = 0;
	int rc = copy_size(rec, &need);
	if (rc)
		return rc;
	if (sb->rows == sb->icap && (rc = grow_index(sb)))
		return rc;
	unsigned char *at;
	rc = reserve(sb, need, &at);
	if (rc == 1 && sb->rows == 0 && sb->held > 0) {
		/* Empty, but what earlier runs left (blocks cut for smaller records, an
		 * index for many of them) is in the way: start again from nothing. */
		release_blocks(sb);
		floe_free(sb->alloc, sb->order);
		sb->order = NULL;
		sb->held = 0;
		sb->icap = 0;
		if ((rc = grow_index(sb)) == 0)
			rc = reserve(sb, need, &at);
	}
	if (rc)
		return rc;

	struct item *it = (struct item *)(void *)at;
	unsigned char *p = at + sizeof(*it);
	size_t n = rec->nattrs;
	memset(it, 0, sizeof(*it));
	it->size = need;
	it->tag = tag;
	it->rec = *rec;
	it->rec.attr_keys = it->rec.attr_vals = NULL;
	it->rec.attr_key_lens = it->rec.attr_val_lens = NULL;
	it->rec.typed = NULL;
	it->rec.row = NULL; /* the maker's, which the copy outlives */
	if (rec->ntyped) {
		/* Right after the item, whose size keeps the values aligned. */
		struct floe_pq_value *tv = (struct floe_pq_value *)(void *)p;
		memcpy(tv, rec->typed, rec->ntyped * sizeof(*tv));
		p += rec->ntyped * sizeof(*tv);
		it->rec.typed = tv;
	}
	if (n) {
		const char **keys = (const char **)(void *)p, **vals = keys + n;
		size_t *klens = (size_t *)(void *)(vals + n), *vlens = klens + n;
		p = (unsigned char *)(vlens + n);
		for (size_t i = 0; i < n; i++) {
			struct floe_str k = {rec->attr_keys[i], rec->attr_key_lens[i]},
					v = {NULL, 0};
			if (rec->attr_vals && rec->attr_vals[i])
				v = (struct floe_str){rec->attr_vals[i], rec->attr_val_lens[i]};
			k = copy_str(&p, k);
			v = copy_str(&p, v);
			keys[i] = k.p;
			klens[i] = k.len;
			vals[i] = v.p;
			vlens[i] = v.len;
		}
		it->rec.attr_keys = keys;
		it->rec.attr_key_lens = klens;
		it->rec.attr_vals = vals;
		it->rec.attr_val_lens = vlens;
	}
	it->rec.host = copy_str(&p, rec->host);
	it->rec.source = copy_str(&p, rec->source);
	it->rec.app = copy_str(&p, rec->app);
	it->rec.proc_id = copy_str(&p, rec->proc_id);
	it->rec.msg_id = copy_str(&p, rec->msg_id);
	it->rec.message = copy_str(&p, rec->message);
	for (size_t i = 0; i < rec->ntyped; i++) {
		struct floe_pq_value *v = (struct floe_pq_value *)&it->rec.typed[i];
		if (v->is_null || !v->s)
			continue;
		struct floe_str c = copy_str(&p, (struct floe_str){v->s, v->len});
		v->s = c.p;
	}
	sb->order[sb->rows++] = it;
	return 0;
}

/* ---- sorting ------------------------------------------------------------------------ */

static int cmp_i64(bool ha, int64_t a, bool hb, int64_t b)
{
	if (!ha || !hb)
		return (int)ha - (int)hb; /* nulls first */
	return (a > b) - (a < b);
}

static int cmp_str(struct floe_str a, struct floe_str b)
{
	if (!a.p || !b.p)
		return (a.p != NULL) - (b.p != NULL);
	size_t n = a.len < b.len ? a.len : b.len;
	int c = n ? memcmp(a.p, b.p, n) : 0;
	if (c)
		return c;
	return (a.len > b.len) - (a.len < b.len);
}

static int cmp_items(const struct floe_sortbuf *sb, const struct item *x, const struct item *y)
{
	if (x->tag != y->tag)
		return x->tag < y->tag ? -1 : 1;
	const struct floe_record *a = &x->rec, *b = &y->rec;
	for (size_t i = 0; i < sb->nkeys; i++) {
		int c = 0;
		switch (sb->keys[i]) {
		case FLOE_SORT_TS:
			c = cmp_i64(true, a->ts, true, b->ts);
			break;
		case FLOE_SORT_RECEIVED_AT:
			c = cmp_i64(true, a->received_at, true, b->received_at);
			break;
		case FLOE_SORT_HOST:
			c = cmp_str(a->host, b->host);
			break;
		case FLOE_SORT_SOURCE:
			c = cmp_str(a->source, b->source);
			break;
		case FLOE_SORT_OFFSET:
			c = cmp_i64(a->has_offset, a->offset, b->has_offset, b->offset);
			break;
		case FLOE_SORT_FACILITY:
			c = cmp_i64(a->has_facility, a->facility, b->has_facility, b->facility);
			break;
		case FLOE_SORT_SEVERITY:
			c = cmp_i64(a->has_severity, a->severity, b->has_severity, b->severity);
			break;
		case FLOE_SORT_APP:
			c = cmp_str(a->app, b->app);
			break;
		case FLOE_SORT_PROC_ID:
			c = cmp_str(a->proc_id, b->proc_id);
			break;
		case FLOE_SORT_MSG_ID:
			c = cmp_str(a->msg_id, b->msg_id);
			break;
		}
		if (c)
			return c;
	}
	return 0;
}

/* Stable: an element moves left only past strictly greater ones. */
static void insertion_sort(const struct floe_sortbuf *sb, struct item **a, size_t lo, size_t hi)
{
	for (size_t i = lo + 1; i < hi; i++) {
		struct item *x = a[i];
		size_t j = i;
		while (j > lo && cmp_items(sb, a[j - 1], x) > 0) {
			a[j] = a[j - 1];
			j--;
		}
		a[j] = x;
	}
}

/* Merges src[lo..mid) and src[mid..hi) into dst[lo..hi); ties take the left run first. */
static void merge(const struct floe_sortbuf *sb, struct item *const *src, struct item **dst,
		  size_t lo, size_t mid, size_t hi)
{
	size_t i = lo, j = mid, o = lo;
	if (mid < hi && cmp_items(sb, src[mid - 1], src[mid]) <= 0) {
		memcpy(dst + lo, src + lo, (hi - lo) * sizeof(*dst)); /* already in order */
		return;
	}
	while (i < mid && j < hi)
		dst[o++] = cmp_items(sb, src[j], src[i]) < 0 ? src[j++] : src[i++];
	while (i < mid)
		dst[o++] = src[i++];
	while (j < hi)
		dst[o++] = src[j++];
}

static void sort_index(const struct floe_sortbuf *sb)
{
	size_t n = sb->rows;
	if (n < 2)
		return;
	struct item **src = sb->order, **dst = sb->order + sb->icap;
	for (size_t lo = 0; lo < n; lo += RUN)
		insertion_sort(sb, src, lo, n - lo < RUN ? n : lo + RUN);
	for (size_t width = RUN; width < n; width *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * width) {
			size_t mid = n - lo < width ? n : lo + width;
			size_t hi = n - mid < width ? n : mid + width;
			merge(sb, src, dst, lo, mid, hi);
		}
		struct item **t = src;
		src = dst;
		dst = t;
	}
	if (src != sb->order)
		memcpy(sb->order, src, n * sizeof(*src));
}

int floe_sortbuf_drain(struct floe_sortbuf *sb, floe_sortbuf_fn fn, void *ctx)
{
	sort_index(sb);
	for (size_t i = 0; i < sb->rows; i++) {
		int rc = fn(ctx, sb->order[i]->tag, &sb->order[i]->rec);
		if (rc) {
			/* Keep the rest, still sorted: a later sort leaves them first among
			 * equals, as they came before anything added after. */
			memmove(sb->order, sb->order + i, (sb->rows - i) * sizeof(*sb->order));
			sb->rows -= i;
			return rc;
		}
	}
	floe_sortbuf_clear(sb);
	return 0;
}

/* ---- partial drains ----------------------------------------------------------------- */

/* p moved with the item that held it from old to nu, when it pointed inside it. */
static const void *moved(const void *p, const unsigned char *old, size_t size, unsigned char *nu)
{
	const unsigned char *c = p;
	if (!c || c < old || c >= old + size)
		return p;
	return nu + (c - old);
}

/* Moves the item at old (size bytes) to nu, and its pointers into itself with it. */
static struct item *move_item(unsigned char *old, unsigned char *nu, size_t size)
{
	memmove(nu, old, size);
	struct item *it = (struct item *)(void *)nu;
	struct floe_record *r = &it->rec;
	struct floe_str *strs[] = {&r->host, &r->source, &r->app, &r->proc_id, &r->msg_id, &r->message};
	for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		strs[i]->p = moved(strs[i]->p, old, size, nu);
	if (r->ntyped) {
		r->typed = moved(r->typed, old, size, nu);
		struct floe_pq_value *tv = (struct floe_pq_value *)r->typed;
		for (size_t i = 0; i < r->ntyped; i++)
			tv[i].s = moved(tv[i].s, old, size, nu);
	}
	if (!r->nattrs)
		return it;
	r->attr_keys = moved(r->attr_keys, old, size, nu);
	r->attr_vals = moved(r->attr_vals, old, size, nu);
	r->attr_key_lens = moved(r->attr_key_lens, old, size, nu);
	r->attr_val_lens = moved(r->attr_val_lens, old, size, nu);
	const char **keys = (const char **)r->attr_keys, **vals = (const char **)r->attr_vals;
	for (size_t i = 0; i < r->nattrs; i++) {
		keys[i] = moved(keys[i], old, size, nu);
		vals[i] = moved(vals[i], old, size, nu);
	}
	return it;
}

/* Slides the records that stay to the front of the blocks, in the order they were added
 * (an item never spans blocks, and the write position never passes the read position:
 * every item fits where it is), and lists them in that order in the index. */
static void compact(struct floe_sortbuf *sb)
{
	struct block *wb = sb->blocks;
	size_t wo = 0, n = 0;
	for (struct block *rb = sb->blocks; rb; rb = rb->next) {
		size_t used = rb->used;
		for (size_t off = 0; off < used;) {
			unsigned char *at = (unsigned char *)rb + DATA_OFF + off;
			struct item *it = (struct item *)(void *)at;
			size_t size = it->size;
			off += size;
			if (it->gone)
				continue;
			while (wb->cap - wo < size) {
				wb->used = wo;
				wb = wb->next;
				wo = 0;
			}
			unsigned char *to = (unsigned char *)wb + DATA_OFF + wo;
			sb->order[n++] = to == at ? it : move_item(at, to, size);
			wo += size;
		}
	}
	if (!wb)
		return;
	wb->used = wo;
	sb->cur = wb;
	for (struct block *b = wb->next; b; b = b->next)
		b->used = 0;
	sb->rows = n;
}

int floe_sortbuf_drain_some(struct floe_sortbuf *sb, floe_sortbuf_pick_fn pick, floe_sortbuf_fn fn,
			    void *ctx)
{
	sort_index(sb);
	size_t kept = 0;
	for (size_t i = 0; i < sb->rows; i++) {
		struct item *it = sb->order[i];
		if (!pick(ctx, it->tag)) {
			kept++;
			continue;
		}
		int rc = fn(ctx, it->tag, &it->rec);
		if (rc)
			return rc;
		it->gone = true;
	}
	if (kept == 0)
		floe_sortbuf_clear(sb);
	else
		compact(sb);
	return 0;
}
