/* The syslog input's ring of messages (syslog_queue.h). */
#include "agent/input/syslog_queue.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

static inline size_t load_acq(const size_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void store_rel(size_t *p, size_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

int sq_init(struct sq *q, struct floe_alloc *a, size_t cap)
{
	memset(q, 0, sizeof(*q));
	cap &= ~(size_t)7;
	if (cap < 4096)
		return FLOE_EINVAL;
	if (!(q->buf = floe_malloc(a, cap)))
		return FLOE_ENOMEM;
	q->cap = cap;
	return 0;
}

void sq_fini(struct sq *q, struct floe_alloc *a)
{
	floe_free(a, q->buf);
	memset(q, 0, sizeof(*q));
}

bool sq_empty(const struct sq *q)
{
	return load_acq(&q->head) == load_acq(&q->tail);
}

/* Where an entry of need bytes goes with the consumer at h and the producer at t, or
 * SIZE_MAX when it does not fit; *wrap when it goes at 0 past the end. An entry never
 * makes tail reach head (that would read as empty). */
static size_t place(const struct sq *q, size_t h, size_t t, size_t need, bool *wrap)
{
	*wrap = false;
	if (t >= h) {
		size_t end = q->cap - t;
		if (need < end || (need == end && h > 0))
			return t;
		if (need < h) {
			*wrap = true;
			return 0;
		}
		return SIZE_MAX;
	}
	return need < h - t ? t : SIZE_MAX;
}

size_t sq_room(const struct sq *q)
{
	size_t h = load_acq(&q->head), t = q->tail;
	if (t >= h) {
		size_t end = q->cap - t;
		size_t a = h > 0 ? end : (end ? end - 8 : 0);
		size_t b = h ? h - 8 : 0;
		return a > b ? a : b;
	}
	return h - t - 8;
}

bool sq_put(struct sq *q, uint8_t kind, uint8_t flags, uint16_t listener, const void *p,
	    size_t len)
{
	if (len > UINT32_MAX || len > q->cap)
		return false;
	size_t need = sq_entry_size(len);
	size_t h = load_acq(&q->head), t = q->tail;
	bool wrap;
	size_t at = place(q, h, t, need, &wrap);
	if (at == SIZE_MAX)
		return false;
	if (wrap && q->cap - t >= sizeof(struct sq_hdr)) {
		struct sq_hdr w = {0, SQ_WRAP, 0, 0};
		memcpy(q->buf + t, &w, sizeof(w));
	}
	struct sq_hdr hd = {(uint32_t)len, kind, flags, listener};
	memcpy(q->buf + at, &hd, sizeof(hd));
	if (len)
		memcpy(q->buf + at + sizeof(hd), p, len);
	size_t nt = at + need;
	store_rel(&q->tail, nt == q->cap ? 0 : nt);
	return true;
}

const struct sq_hdr *sq_peek(struct sq *q, const char **payload)
{
	size_t t = load_acq(&q->tail), h = q->head;
	if (h == t)
		return NULL;
	if (q->cap - h < sizeof(struct sq_hdr) ||
	    ((const struct sq_hdr *)(const void *)(q->buf + h))->kind == SQ_WRAP) {
		/* The producer went on at 0 (it wrote past this point only after the entry
		 * there, so that one is complete). */
		h = 0;
		store_rel(&q->head, 0);
		if (h == t)
			return NULL;
	}
	const struct sq_hdr *hd = (const struct sq_hdr *)(const void *)(q->buf + h);
	*payload = q->buf + h + sizeof(*hd);
	return hd;
}

void sq_pop(struct sq *q)
{
	size_t h = q->head;
	const struct sq_hdr *hd = (const struct sq_hdr *)(const void *)(q->buf + h);
	size_t n = h + sq_entry_size(hd->len);
	store_rel(&q->head, n == q->cap ? 0 : n);
}
