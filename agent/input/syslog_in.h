/* The syslog input (inputs[].type: syslog): its listeners on the receiver thread's
 * event loop, a framer per stream connection (RFC 6587), and a queue of received
 * messages that the runner drains into the batch the way it reads a tail's lines.
 *
 * Why a queue: the server hands over bytes as they are read and must take all of them,
 * while the batch may refuse a record until it is sealed. The queue (one block from the
 * budget, FLOE_SYSLOG_QUEUE_BYTES) holds complete messages between the two; when it runs
 * low the input stops reading its sockets (floe_server_pause), so stream senders block
 * and datagrams wait in the kernel's receive buffer, whose drops the kernel counts and
 * floe reports. Nothing is ever dropped silently: a message that finds no room (a
 * connection closing while the queue is full) is counted.
 *
 * Positions: a syslog message cannot be read again, so the input's "position" is the
 * count of messages it handed over (floe_syslog_in_taken). The runner records it like a
 * tail's offsets; an entry whose count moved cannot be rebuilt from its input. */
#ifndef FLOE_SYSLOG_IN_H
#define FLOE_SYSLOG_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_clock;
struct floe_config_input;
struct floe_err;
struct floe_loop;
struct floe_syslog_in;

/* The queue of received messages, per input. */
#define FLOE_SYSLOG_QUEUE_BYTES (1u << 20)
/* ... and of an input with a datagram listener (udp://, unix://), whose senders cannot
 * be paused: the queue is what carries them over a busy moment of the runner's thread
 * (a seal, a CPU taken by others). 4 MiB hold 160 ms of 100,000 messages of 256 bytes a
 * second, the kernel's receive buffer some more. */
#define FLOE_SYSLOG_DGRAM_QUEUE_BYTES (4u << 20)
/* The queue of input cfg. */
size_t floe_syslog_in_queue_bytes(const struct floe_config_input *cfg);
/* The read buffer the runner's loop must share with its readers: the longest datagram
 * (65,507 bytes of UDP payload) and then some; also each stream read. */
#define FLOE_SYSLOG_READ_BYTES (64u * 1024u + 1u)

/* One message as the input hands it over; everything is valid during the call only. */
struct floe_syslog_in_msg {
	const char *data; /* the frame or datagram */
	size_t len;
	const char *source; /* "syslog+udp://192.0.2.1", "syslog+unix:///dev/log" */
	size_t source_len;
	const char *peer; /* the sender's address ("192.0.2.1"); "" on unix sockets */
	size_t peer_len;
	bool local;	   /* a unix socket: BSD messages carry no HOSTNAME there */
	bool truncated;	   /* cut at max_message_bytes (or by the budget), counted */
	int64_t received_us;
};

/* Returns 0 (consumed, go on), 1 (consumed, stop now) or < 0 (not consumed: the message
 * stays first in the queue and the error is returned by floe_syslog_in_read). */
typedef int (*floe_syslog_in_fn)(void *ctx, const struct floe_syslog_in_msg *m);

struct floe_syslog_in_stats {
	uint64_t messages;	   /* handed over */
	uint64_t bytes;		   /* of those messages */
	uint64_t truncated;	   /* over max_message_bytes (or the budget): cut, counted */
	uint64_t bad_length;	   /* octet counts that were none (read as text) */
	uint64_t at_close;	   /* frames a closing connection left half sent, kept */
	uint64_t dropped;	   /* found no room in the queue (a close while it was full) */
	uint64_t kernel_drops;	   /* datagrams the kernel dropped, its receive buffer full */
	uint64_t connections;	   /* accepted */
	uint64_t rejected;	   /* over max_connections, or no memory for their framer */
	uint64_t open;		   /* connections open now */
	uint64_t closed_idle;	   /* closed by idle_timeout */
	uint64_t evicted;	   /* idle a minute, closed for a new sender, every slot taken */
	uint64_t handshake_failures; /* TLS */
	uint64_t read_errors;
	uint64_t paused;	   /* times the queue ran low and reading stopped */
	uint64_t parse_failures;   /* no syslog header, or a broken one: kept whole */
	uint64_t ts_failures;	   /* a timestamp that did not parse: receive time used */
	uint64_t lost_at_stop;	   /* still queued when the input was abandoned at a stop */
};

/* The receiver: one thread reading every syslog input's sockets into their queues, so
 * that sealing, fsync and encoding on the runner's thread never leave a socket unread
 * (a UDP socket's buffer holds well under a second of a busy sender). Made first, the
 * inputs open their listeners on it, then it starts; stopped before the inputs are
 * freed, freed last. Its read buffer (FLOE_SYSLOG_READ_BYTES) comes from a's budget.
 * With handover (borrowed, may be NULL: syslog_handover.h), its inputs take the
 * listeners a previous configuration kept open, and keep theirs open for the next. */
struct floe_syslog_rx;
struct floe_syslog_handover;
int floe_syslog_rx_new(struct floe_alloc *a, struct floe_syslog_handover *handover,
		       struct floe_syslog_rx **out, struct floe_err *err);
int floe_syslog_rx_start(struct floe_syslog_rx *rx, struct floe_err *err);
void floe_syslog_rx_stop(struct floe_syslog_rx *rx);
void floe_syslog_rx_free(struct floe_syslog_rx *rx);

/* Opens every listener of input cfg (borrowed; it must outlive the input) on rx (not yet
 * started), with the queue, the servers and the framers in a's budget; notify (the
 * runner's loop) is woken when messages wait for a runner that was about to sleep.
 * name names the input in log lines ("input 2"). Returns 0 with *out, or an error with
 * err naming the listener and the step that failed (a port in use, a certificate that
 * does not load). */
int floe_syslog_in_new(struct floe_alloc *a, const struct floe_config_input *cfg,
		       const char *name, unsigned max_connections, struct floe_syslog_rx *rx,
		       struct floe_loop *notify, const struct floe_clock *clock,
		       struct floe_syslog_in **out, struct floe_err *err);
/* A kept input (input_syslog.c: a reload whose configuration lists it unchanged) goes
 * on under the next configuration: cfg (borrowed, the same settings), the next runner's
 * loop and clock. The receiver must be stopped; what the input holds (connections,
 * queue, counters, position) stays. */
void floe_syslog_in_adopt(struct floe_syslog_in *in, const struct floe_config_input *cfg,
			  struct floe_loop *notify, const struct floe_clock *clock);
/* Closes the listeners (removing unix socket files), or hands those the next
 * configuration keeps to the receiver's handover, and frees in, after
 * floe_syslog_rx_stop. NULL is fine. */
void floe_syslog_in_free(struct floe_syslog_in *in);
/* Whether a listen address of in could not be taken yet (another process holds it, it is
 * not on an interface yet, ...): the input then runs without it, and the receiver tries
 * it again every few seconds. Says which and why in why. */
bool floe_syslog_in_waiting(const struct floe_syslog_in *in, char *why, size_t cap);

/* Hands queued messages to fn, oldest first, until the queue is empty, fn stops, or
 * about budget bytes went; then reads what a full queue left of a stream's bytes and
 * resumes the listeners once there is room. *got gets the bytes handed over. Returns 0
 * or fn's error. */
int floe_syslog_in_read(struct floe_syslog_in *in, size_t budget, floe_syslog_in_fn fn, void *ctx,
			size_t *got);
/* Asks the receiver to stop (true) or resume reading the sockets: a full spool, or a
 * stop. It takes effect soon, not at once: floe_syslog_in_held says when. */
void floe_syslog_in_hold(struct floe_syslog_in *in, bool hold);
/* Whether the receiver applied the hold last asked for. */
bool floe_syslog_in_held(const struct floe_syslog_in *in);
/* True when messages wait in the queue (or a chunk waits for room in it). */
bool floe_syslog_in_pending(const struct floe_syslog_in *in);
/* The runner is about to sleep: true when messages already wait (do not sleep), else the
 * next message wakes the runner's loop. */
bool floe_syslog_in_arm_wake(struct floe_syslog_in *in);
/* Bytes the receiver read so far (a stop waits until they stop coming). */
uint64_t floe_syslog_in_received(const struct floe_syslog_in *in);

/* The count of messages handed over and consumed, as a position blob (appended to out),
 * and restoring it from one (a blob of another kind is FLOE_ECORRUPT). */
int floe_syslog_in_positions(const struct floe_syslog_in *in, struct floe_buf *out);
int floe_syslog_in_restore(struct floe_syslog_in *in, const uint8_t *blob, size_t len);
/* Reads a position blob: 0 with *taken, FLOE_ECORRUPT when it is not one of ours. */
int floe_syslog_in_blob_taken(const uint8_t *blob, size_t len, uint64_t *taken);

/* Asks the receiver to reload the TLS certificate and key (SIGHUP); connections keep
 * their sessions; the outcome is logged. */
void floe_syslog_in_reload(struct floe_syslog_in *in);

void floe_syslog_in_stats(const struct floe_syslog_in *in, struct floe_syslog_in_stats *st);
/* The runner's verdict on a message it took: its header (failed) or its timestamp alone
 * (ts_failed) did not parse. Counted with the input's other counters. */
void floe_syslog_in_count_parse(struct floe_syslog_in *in, bool failed, bool ts_failed);
/* At the end of a run, with the receiver stopped (floe_syslog_rx_stop): closes every
 * connection of in as its peer's close would, so that a frame half sent goes into the
 * queue (kept, counted at_close) for a last read, and reads what datagram sockets still
 * hold, except those of listeners handed over open (their datagrams wait in the kernel
 * for the next configuration's receiver). */
void floe_syslog_in_close(struct floe_syslog_in *in);
/* At the end of a run, with the receiver stopped and the last read done: what is still
 * queued will not be committed; it is counted (lost_at_stop) and let go. Returns how
 * many messages that was. */
uint64_t floe_syslog_in_abandon(struct floe_syslog_in *in);

/* The bytes of the budget an input of cfg needs at most besides its framers' partial
 * frames: queue, servers, idle framers of max_connections (memory.c). */
uint64_t floe_syslog_in_footprint(const struct floe_config_input *cfg);

#endif
