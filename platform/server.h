/* Serving one listener on an event loop: for stream listeners, accepting connections up to
 * max_connections, reading them (through TLS for tls://) into the loop's shared buffer and
 * handing the bytes to the caller (who frames them: agent/parse/framing.h), closing idle
 * ones and stalled handshakes; for datagram listeners, handing each datagram over. The
 * caller pauses a connection, or the whole server, when its pipeline is full.
 *
 * Memory: the server and a fixed table of connections live in memory the caller gives
 * (floe_server_footprint: about 200 bytes a connection); nothing is allocated per
 * connection, except the mbedtls session of a TLS connection once its client speaks
 * (FLOE_TLS_SESSION_BYTES). An idle plain connection costs its socket and its slot. */
#ifndef FLOE_PLATFORM_SERVER_H
#define FLOE_PLATFORM_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/listen.h"

struct floe_loop;
struct floe_tls_server;
struct floe_server;
struct floe_conn;

/* Why a connection closed. */
enum floe_conn_close {
	FLOE_CLOSE_EOF = 0,	  /* the peer closed it (end of stream, TLS close_notify) */
	FLOE_CLOSE_ERROR = 1,	  /* a read failed (reset by the peer, a TLS record error) */
	FLOE_CLOSE_IDLE = 2,	  /* nothing arrived for idle_timeout */
	FLOE_CLOSE_HANDSHAKE = 3, /* the TLS handshake failed or did not finish in time */
	FLOE_CLOSE_LOCAL = 4,	  /* floe_conn_close, or the server was finished */
	FLOE_CLOSE_DEADLINE = 5,  /* open longer than deadline_ms */
	FLOE_CLOSE_EVICTED = 6,	  /* closed for a new one (evict_oldest, evict_idle_ms) */
};

/* The caller's callbacks, run on the loop's thread. None may call floe_server_fini. */
struct floe_server_cbs {
	void *arg;
	/* A connection was accepted (may be NULL). Returning non-zero refuses it: it is
	 * closed at once and on_close is not called. */
	int (*on_open)(void *arg, struct floe_conn *c);
	/* Bytes arrived on c: p[0..n) is in the loop's shared buffer and valid only during
	 * the call, so the caller takes all of it (into its framer). To stop the next reads
	 * it calls floe_conn_pause (or floe_server_pause). */
	void (*on_data)(void *arg, struct floe_conn *c, const char *p, size_t n);
	/* c is closing (may be NULL): the last call for it (flush its framer here). */
	void (*on_close)(void *arg, struct floe_conn *c, enum floe_conn_close why);
	/* A datagram arrived (datagram listeners); d->p is in the shared buffer. */
	void (*on_datagram)(void *arg, const struct floe_dgram *d);
};

/* Defaults for zero fields. */
#define FLOE_SERVER_HANDSHAKE_TIMEOUT_MS 10000
#define FLOE_SERVER_DGRAM_BATCH 64
/* After EMFILE (or ENFILE, ENOBUFS, ENOMEM) on accept, the listener rests this long
 * instead of being woken again at once by the connection it could not take. */
#define FLOE_SERVER_ACCEPT_BACKOFF_MS 100

struct floe_server_opts {
	/* Stream listeners: connections open at once (at least 1). Beyond it a new one is
	 * accepted and closed at once, counted (rejected), and logged once a minute. */
	unsigned max_connections;
	/* Stream: close a connection nothing arrived on for this long (0: never). A paused
	 * connection is not idle: its clock restarts when it resumes. */
	int64_t idle_timeout_ms;
	/* Stream: close a connection this long after its accept, whatever it sends (0:
	 * never). The idle timeout restarts on every byte, so a client trickling one byte
	 * per period would otherwise hold its slot for ever; for short requests, whose
	 * whole exchange has a natural bound. */
	int64_t deadline_ms;
	/* Stream: with every slot taken, close the connection accepted first (counted:
	 * evicted) and take the new one, instead of refusing the new one. For short
	 * requests, where the oldest open connection is the slowest: a slow or hostile
	 * client cannot keep a fresh one (a liveness probe) out. */
	bool evict_oldest;
	/* Stream: with every slot taken, close the connection that has sent nothing for
	 * longest, if that is at least this long (counted: evicted), and take the new one;
	 * a new connection is refused only when every one sent something more recently (0:
	 * never). For long-lived senders (syslog): a client that opens connections and
	 * leaves them (a port scan, a load balancer's health check, a sender that crashed
	 * behind a NAT) would otherwise keep every other sender out for idle_timeout. A
	 * paused connection (backpressure) is not idle. */
	int64_t evict_idle_ms;
	/* TLS: a handshake not complete this long after the accept fails. */
	int64_t handshake_timeout_ms;
	/* Required for a tls:// listener, borrowed. */
	struct floe_tls_server *tls;
	/* Datagram listeners: the most datagrams read in one round, so that one flooded
	 * socket does not starve the others on the loop. */
	unsigned dgram_batch;
};

/* The memory floe_server_init needs for max_connections, or 0 when that overflows. */
size_t floe_server_footprint(unsigned max_connections);

/* Serves l on loop (both borrowed, both outliving the server) in mem[0..len): the
 * caller's memory (aligned as malloc's, at least floe_server_footprint bytes, for a
 * datagram listener that of 0 connections), which holds the server until
 * floe_server_fini. The loop must have a shared buffer. Returns 0 with *out, or -EINVAL
 * (too little memory, no buffer, a TLS listener without opts->tls) or -errno. */
int floe_server_init(void *mem, size_t len, struct floe_loop *loop, struct floe_listener *l,
		     const struct floe_server_opts *o, const struct floe_server_cbs *cbs,
		     struct floe_server **out);
/* Closes every connection (on_close with FLOE_CLOSE_LOCAL) and stops watching the
 * listener; the memory and the listener are the caller's again. NULL is fine. */
void floe_server_fini(struct floe_server *s);

/* Closes every connection of s (on_close with FLOE_CLOSE_LOCAL); the listener stays. On
 * the loop's thread, or with the loop stopped. */
void floe_server_close_all(struct floe_server *s);

/* Stops (paused) or restarts accepting and reading every connection of s, or reading a
 * datagram listener: backpressure from a full pipeline. Stream senders then fill their
 * socket buffers and block; datagrams overflow in the kernel, which counts them. */
void floe_server_pause(struct floe_server *s, bool paused);

struct floe_server_stats {
	uint64_t accepted;	     /* connections accepted and kept */
	uint64_t rejected;	     /* closed at once: max_connections, or refused by on_open */
	uint64_t accept_errors;	     /* accept() failed with EMFILE and the like */
	uint64_t open;		     /* connections open now */
	uint64_t closed_idle;	     /* closed by idle_timeout */
	uint64_t closed_deadline;    /* closed by deadline_ms */
	uint64_t evicted;	     /* closed for a new connection (evict_oldest, evict_idle_ms) */
	uint64_t handshake_timeouts; /* TLS handshakes not finished in time */
	uint64_t handshake_failures; /* TLS handshakes that failed, timeouts included */
	uint64_t read_errors;	     /* connections closed on a read error */
	uint64_t bytes;		     /* handed to on_data */
};
void floe_server_stats(const struct floe_server *s, struct floe_server_stats *st);
struct floe_listener *floe_server_listener(const struct floe_server *s);

/* The caller's pointer for c (NULL until set). */
void floe_conn_set_data(struct floe_conn *c, void *data);
void *floe_conn_data(const struct floe_conn *c);
const union floe_sockaddr *floe_conn_peer(const struct floe_conn *c);
struct floe_server *floe_conn_server(const struct floe_conn *c);
/* The TLS session of c once its client has spoken (NULL for plain connections). */
struct floe_tls_session *floe_conn_tls(const struct floe_conn *c);

/* Stops reading c (its socket leaves the epoll set) until floe_conn_resume. */
void floe_conn_pause(struct floe_conn *c);
void floe_conn_resume(struct floe_conn *c);
bool floe_conn_paused(const struct floe_conn *c);
/* Writes p[0..n) to plain connection c, waiting for the socket to take it for at most
 * timeout_ms in all: for short replies (a status page), whose writer may block its loop
 * that long. Returns 0, -ETIMEDOUT, -ENOTSUP for a TLS connection, or -errno (a peer that
 * went away: -EPIPE, -ECONNRESET). The caller closes c after a failure. */
int floe_conn_write(struct floe_conn *c, const void *p, size_t n, int timeout_ms);
/* Closes c: on_close runs (with FLOE_CLOSE_LOCAL) now, or, from one of c's own callbacks,
 * as soon as that returns. */
void floe_conn_close(struct floe_conn *c);

#endif
