/* The syslog input's state, shared by its two files (internal to agent/input/):
 * syslog_rx.c, the receiver thread's side (listeners, connections, framing into the
 * queue, pausing), and syslog_in.c, the runner thread's side (draining the queue into
 * the batch, positions, holds, stats). Neither calls the other: they meet in the queue
 * (syslog_queue.h) and in the atomics marked below; everything else belongs to one side. */
#ifndef FLOE_SYSLOG_IMPL_H
#define FLOE_SYSLOG_IMPL_H

#include "agent/input/syslog_in.h"
#include "agent/input/syslog_queue.h"
#include "agent/parse/framing.h"
#include "platform/listen.h"
#include "platform/loop.h"
#include "platform/owner.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_clock;
struct floe_server;
struct floe_syslog_handover;
struct floe_tls_server;
struct floe_worker;

/* One listener of an input (receiver side). */
struct sl_lst {
	struct floe_syslog_in *in;
	uint16_t index;
	struct floe_listen_uri u; /* parsed at the start: sources are named by it */
	/* NULL (and srv too) while the address cannot be taken: waiting (atomic) is then 1,
	 * bind_err (atomic) the last try's error, and the receiver tries again at retry_ms. */
	struct floe_listener *l;
	int waiting, bind_err;
	int64_t retry_ms;
	struct floe_server *srv;
	void *mem; /* the server's memory */
	char uri[FLOE_LISTEN_URI_MAX];
	/* The kernel's drops the listener counted before this input took it over from the
	 * previous configuration's (syslog_handover.h): theirs, not this input's. */
	uint64_t drops_before;
};

/* Counters, written by one side with relaxed atomic stores and read by the other. */
struct sl_counters {
	uint64_t truncated, bad_length, at_close, dropped, kernel_drops, connections, rejected,
	    open, closed_idle, evicted, handshake_failures, read_errors, paused, rx_bytes;
};

struct floe_syslog_in {
	struct floe_alloc *a;
	const struct floe_config_input *cfg;
	char name[32];
	struct floe_syslog_rx *rx;
	struct floe_loop *notify; /* the runner's loop, woken when messages wait */
	const struct floe_clock *clock; /* receive times */
	struct floe_syslog_in *next; /* the receiver's list */
	unsigned max_conns; /* each stream listener's cap: max_connections within the fd limit */
	struct floe_tls_server *tls;
	/* The TLS files could not be read at the start (missing, not readable: an ACME
	 * client or a mount not done yet): tls is NULL, tls_waiting (atomic) 1 and tls_why
	 * says why (written before the receiver runs); the receiver reads the files again
	 * at tls_retry_ms, and its tls:// listeners wait for them. */
	int tls_waiting;
	int64_t tls_retry_ms;
	char tls_why[384];
	struct sl_lst *lst;
	size_t nlst;
	struct sq q;
	size_t low; /* pause reading below this much room */

	/* Shared (atomic). */
	int ctl_hold;	  /* the runner asks the receiver to stop (1) or go on (0) reading */
	int held;	  /* the receiver's answer: the hold it applied */
	int ctl_reload;	  /* the runner asks for the TLS files again */
	int full;	  /* the receiver stopped for room (the stash may hold a chunk) */
	int want_wake;	  /* the runner is about to sleep: wake it for the next message */
	struct sl_counters c;

	/* Receiver side. */
	bool paused_now;  /* the servers' state */
	bool have_src;	  /* the last source entry written, so that the next one is */
	uint16_t src_listener; /* written only on a change */
	struct sq_src src;
	char *stash; /* what a full queue left of a stream chunk, and whose it is */
	size_t stash_len, stash_off;
	struct floe_conn *stash_conn;
	struct floe_framer_stats fst; /* of framers freed so far */
	uint64_t dgram_truncated, framer_refused;

	/* Runner side. */
	uint16_t cur_listener; /* the source of the messages being handed over */
	struct sq_src cur;
	char cur_source[FLOE_LISTEN_URI_MAX + 16];
	size_t cur_source_len, cur_peer_off, cur_peer_len;
	uint64_t taken, messages, bytes;
	uint64_t parse_failures, ts_failures, lost_at_stop;
	bool hold_asked;
};

/* The receiver: a thread running a loop that every syslog input's listeners are on. */
struct floe_syslog_rx {
	struct floe_alloc *a;
	struct floe_loop *loop;
	char *buf; /* the loop's shared read buffer */
	struct floe_worker *thread;
	void *task;
	struct floe_syslog_in *ins;
	struct floe_timer stats_timer;
	struct floe_syslog_handover *handover; /* borrowed; NULL: listeners are not kept */
};

static inline int sl_load(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}
static inline void sl_store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}
static inline uint64_t sl_get(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}
static inline void sl_set(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}
static inline void sl_add(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + v, __ATOMIC_RELAXED);
}

#endif
