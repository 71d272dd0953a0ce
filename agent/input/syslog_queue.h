/* The syslog input's queue of received messages (internal to agent/input/syslog_in.c): a
 * ring of variable-size entries in one block, each contiguous (an entry that does not fit
 * before the end of the block starts again at its beginning), between one producer
 * thread (the receiver, which reads the sockets) and one consumer thread (the runner's,
 * which puts the messages into the batch). The producer owns tail, the consumer head;
 * each publishes its own with a release store and reads the other's with an acquire
 * load, so an entry is complete before the consumer can see it and its bytes are free
 * before the producer writes over them. head == tail means empty: the producer never
 * fills the ring to the last byte.
 *
 * Two kinds of entries: a message (its bytes and flags), and a source (the listener, the
 * peer and the receive time of the messages after it), written only when one of those
 * changes, so that a stream's messages carry no per-message address. */
#ifndef FLOE_SYSLOG_QUEUE_H
#define FLOE_SYSLOG_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/listen.h"

struct floe_alloc;

enum { SQ_MSG = 1, SQ_SRC = 2, SQ_WRAP = 3 };

/* The header of every entry (8 bytes; entries are 8-aligned). */
struct sq_hdr {
	uint32_t len; /* payload bytes */
	uint8_t kind;
	uint8_t flags;	   /* SQ_MSG: FLOE_FRAME_* bits */
	uint16_t listener; /* SQ_SRC: the listener's index in its input */
};

/* The payload of a source entry. */
struct sq_src {
	int64_t received_us;
	union floe_sockaddr peer;
};

struct sq {
	char *buf;
	size_t cap;  /* a multiple of 8 */
	size_t head; /* the consumer's: atomic */
	size_t tail; /* the producer's: atomic */
};

/* The bytes an entry of len payload bytes takes. */
static inline size_t sq_entry_size(size_t len)
{
	return sizeof(struct sq_hdr) + ((len + 7) & ~(size_t)7);
}

int sq_init(struct sq *q, struct floe_alloc *a, size_t cap);
void sq_fini(struct sq *q, struct floe_alloc *a);
/* Producer: the largest entry (header included) a put could take now. */
size_t sq_room(const struct sq *q);
/* Producer: appends an entry; false when it does not fit (nothing written). */
bool sq_put(struct sq *q, uint8_t kind, uint8_t flags, uint16_t listener, const void *p,
	    size_t len);
/* Consumer: the first entry (its header and payload), or NULL when the queue is empty. */
const struct sq_hdr *sq_peek(struct sq *q, const char **payload);
/* Consumer: removes the first entry (sq_peek must have returned it). */
void sq_pop(struct sq *q);
/* Either side: whether entries wait. */
bool sq_empty(const struct sq *q);

#endif
