/* The syslog input's ring of messages (syslog_queue.h). */
#include "agent/input/syslog_queue.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <string.h>

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

size_t sq_room(const struct sq *q)
{
	if (q->fill == 0)
		return q->cap;
	if (q->tail > q->head)
		return q->cap - q->tail > q->head ? q->cap - q->tail : q->head;
	return q->head - q->tail; /* wrapped: the gap between tail and head */
}

bool sq_put(struct sq *q, uint8_t kind, uint8_t flags, uint16_t listener, const void *p,
	    size_t len)
{
	if (len > UINT32_MAX)
		return false;
	size_t need = sq_entry_size(len);
	if (q->fill == 0)
		q->head = q->tail = 0;
	size_t at;
	if (q->fill == 0 || q->tail > q->head) {
		if (q->cap - q->tail >= need) {
			at = q->tail;
		} else if (q->head >= need) {
			/* The end cannot take it: a wrap marker (when a header fits), then 0. */
			if (q->cap - q->tail >= sizeof(struct sq_hdr)) {
				struct sq_hdr w = {0, SQ_WRAP, 0, 0};
				memcpy(q->buf + q->tail, &w, sizeof(w));
			}
			q->fill += q->cap - q->tail;
			at = 0;
		} else {
			return false;
		}
	} else if (q->head - q->tail >= need) {
		at = q->tail;
	} else {
		return false;
	}
	struct sq_hdr h = {(uint32_t)len, kind, flags, listener};
	memcpy(q->buf + at, &h, sizeof(h));
	if (len)
		memcpy(q->buf + at + sizeof(h), p, len);
	q->tail = at + need;
	q->fill += need;
	if (q->tail == q->cap)
		q->tail = 0;
	return true;
}

const struct sq_hdr *sq_peek(struct sq *q, const char **payload)
{
	for (;;) {
		if (q->fill == 0)
			return NULL;
		if (q->cap - q->head < sizeof(struct sq_hdr) ||
		    ((const struct sq_hdr *)(const void *)(q->buf + q->head))->kind == SQ_WRAP) {
			q->fill -= q->cap - q->head;
			q->head = 0;
			continue;
		}
		const struct sq_hdr *h = (const struct sq_hdr *)(const void *)(q->buf + q->head);
		*payload = q->buf + q->head + sizeof(*h);
		return h;
	}
}

void sq_pop(struct sq *q)
{
	const char *p;
	const struct sq_hdr *h = sq_peek(q, &p);
	if (!h)
		return;
	size_t n = sq_entry_size(h->len);
	q->head += n;
	q->fill -= n;
	if (q->head == q->cap)
		q->head = 0;
	if (q->fill == 0)
		q->head = q->tail = 0;
}
