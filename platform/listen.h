/* Listening sockets for the syslog input. A listen URI (udp://, tcp://, tls://, unix:// for
 * datagrams like /dev/log, unix+stream://) is read by a pure parser; a listener is the
 * socket made from one: non-blocking and close-on-exec, its receive buffer sized, the
 * kernel's drop counter read on datagram sockets, unix socket files created with the
 * configured mode and owner and removed on close. Connections are server.h's business. */
#ifndef FLOE_PLATFORM_LISTEN_H
#define FLOE_PLATFORM_LISTEN_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

enum floe_listen_transport {
	FLOE_LISTEN_UDP = 0,
	FLOE_LISTEN_TCP = 1,
	FLOE_LISTEN_TLS = 2,	     /* TCP carrying TLS (RFC 5425) */
	FLOE_LISTEN_UNIX = 3,	     /* unix datagram socket (/dev/log style) */
	FLOE_LISTEN_UNIX_STREAM = 4, /* unix stream socket */
};

/* The longest host name (RFC 1035) and unix socket path (sun_path holds 108 bytes with the
 * terminating NUL) a URI may carry. */
#define FLOE_LISTEN_HOST_MAX 253
#define FLOE_LISTEN_PATH_MAX 107
/* A formatted URI always fits in this many bytes (scheme, brackets, port, NUL). */
#define FLOE_LISTEN_URI_MAX (FLOE_LISTEN_HOST_MAX + 32)

/* A parsed listen URI: plain data, no resources. */
struct floe_listen_uri {
	enum floe_listen_transport transport;
	/* inet: a host name, an IPv4 literal, or an IPv6 literal written in brackets (kept
	 * here without them, zone included: "fe80::1%eth0"); "" for unix sockets. */
	char host[FLOE_LISTEN_HOST_MAX + 1];
	bool host_v6;  /* the host was an IPv6 literal in brackets */
	uint16_t port; /* 0 asks the kernel for a free port (tests); floe_listener_port tells it */
	char path[FLOE_LISTEN_PATH_MAX + 1]; /* unix: the absolute path; "" otherwise */
};

/* Why a URI was refused: a static message and the byte offset where it went wrong. */
struct floe_listen_uri_error {
	size_t off;
	const char *msg;
};

/* Parses s[0..len) (no NUL needed; a NUL inside is an error):
 *   udp://HOST:PORT  tcp://HOST:PORT  tls://HOST:PORT
 *   unix:///absolute/path  unix+stream:///absolute/path
 * HOST is a name (letters, digits, '-', '_' and dots, labels of 1..63), an IPv4 literal,
 * or an IPv6 literal in brackets, optionally with a zone ("[fe80::1%eth0]", or "%25" as
 * RFC 6874 writes it). PORT is 0..65535 in decimal without a leading zero. The scheme is
 * case-insensitive; nothing may follow the port (no path, query or user information).
 * The unix path is taken as written (no percent-decoding), must be absolute and must not
 * end in '/'. Pure: no I/O, no name resolution. Returns 0 with *u filled, or -EINVAL with
 * *e (may be NULL) set and *u unspecified. */
int floe_listen_uri_parse(const char *s, size_t len, struct floe_listen_uri *u,
			  struct floe_listen_uri_error *e);

/* Writes u as a URI into out[0..cap) (NUL-terminated), with port in place of u->port
 * (the bound port of a listener opened on port 0, say). Returns the length, or -ENOSPC
 * when it does not fit (FLOE_LISTEN_URI_MAX bytes always do). */
int floe_listen_uri_format(const struct floe_listen_uri *u, uint16_t port, char *out, size_t cap);

/* "udp", "tcp", "tls", "unix" or "unix+stream". */
const char *floe_listen_scheme(enum floe_listen_transport t);
/* True for the connection-oriented transports (tcp, tls, unix+stream). */
bool floe_listen_is_stream(enum floe_listen_transport t);

/* A peer's address, small enough to keep per connection: AF_INET, AF_INET6, or AF_UNIX
 * (whose path is not kept: senders on unix sockets are rarely bound to one). */
union floe_sockaddr {
	struct sockaddr sa;
	struct sockaddr_in in;
	struct sockaddr_in6 in6;
};

/* Writes the address of a without the port ("192.0.2.1", "2001:db8::1", "unix") into
 * out[0..cap), NUL-terminated; with_port adds it ("192.0.2.1:514", "[2001:db8::1]:514").
 * Returns the length, or -ENOSPC. 64 bytes are always enough. */
int floe_sockaddr_format(const union floe_sockaddr *a, bool with_port, char *out, size_t cap);

/* How a listener is made. Zero-initialised means the defaults. */
struct floe_listen_opts {
	/* SO_RCVBUF in bytes (0 leaves the kernel default). Linux doubles what it is given
	 * and caps it at net.core.rmem_max unless floe has CAP_NET_ADMIN
	 * (SO_RCVBUFFORCE is tried first); floe_listener_rcvbuf tells what it got. Stream
	 * listeners pass it on to the connections they accept. */
	int rcvbuf;
	int backlog; /* stream: listen() backlog, 0 = SOMAXCONN */
	/* An IPv6 listener (on [::] in particular) also takes IPv4 peers, as mapped
	 * addresses. Off by default, whatever net.ipv6.bindv6only says: IPV6_V6ONLY is
	 * then set, so "udp://0.0.0.0:514" and "udp://[::]:514" can be listed together
	 * and a listener's family is the one its URI names. */
	bool dual_stack;
	/* unix sockets: the socket file's permission bits (chmod), 0 leaves what the umask
	 * gave; owner and group by name or numeric id (chown), NULL leaves them. */
	unsigned mode;
	const char *owner;
	const char *group;
};

struct floe_listener;

/* Opens a listener for u (copied). A host name is resolved (getaddrinfo, blocking) and its
 * first address used. A unix socket path that exists is replaced only if it is a socket
 * nobody listens on (a connect() is refused); a live socket or any other file is left
 * alone (-EADDRINUSE, -EEXIST). Returns 0 with *out (owned: floe_listener_close), or
 * -errno with *what (may be NULL) set to a static description of the step that failed
 * ("bind", "unknown user", ...). */
int floe_listener_open(const struct floe_listen_uri *u, const struct floe_listen_opts *o,
		       struct floe_listener **out, const char **what);
/* Closes the socket and, for a unix socket, removes its file if it is still the one this
 * listener created (same device and inode). NULL is fine. */
void floe_listener_close(struct floe_listener *l);

int floe_listener_fd(const struct floe_listener *l);
enum floe_listen_transport floe_listener_transport(const struct floe_listener *l);
/* The URI it was opened from (borrowed, valid while l lives); port is as written. */
const struct floe_listen_uri *floe_listener_uri(const struct floe_listener *l);
/* The port bound (for port 0, the one the kernel chose); 0 for unix sockets. */
uint16_t floe_listener_port(const struct floe_listener *l);
/* SO_RCVBUF as the kernel reports it (twice what was granted: Linux counts its own
 * bookkeeping in it). */
int floe_listener_rcvbuf(const struct floe_listener *l);

/* Accepts one connection on a stream listener without blocking: returns 1 with *fd
 * (non-blocking, close-on-exec, owned by the caller) and *peer (may be NULL), 0 when none
 * is waiting, or -errno. Errors about one aborted connection (ECONNABORTED, EPROTO, a
 * network error accept(2) passes on) are skipped here; what is left (-EMFILE, -ENFILE,
 * -ENOBUFS, -ENOMEM) means "not now": the caller should stop accepting for a while. */
int floe_listener_accept(struct floe_listener *l, int *fd, union floe_sockaddr *peer);

/* One datagram, as floe_listener_recv hands it over. */
struct floe_dgram {
	const char *p; /* into the caller's buffer */
	size_t len;
	/* The datagram was longer than the buffer: the kernel cut it and dropped the rest. */
	bool truncated;
	union floe_sockaddr peer; /* family AF_UNIX for any sender on a unix socket */
};

/* Receives one datagram into buf[0..cap) without blocking (recvmsg): returns 1 with *d,
 * 0 when none is waiting, or -errno. The kernel's drop counter rides on each datagram
 * (SO_RXQ_OVFL) and what it rose by is added to the listener's stats. */
int floe_listener_recv(struct floe_listener *l, char *buf, size_t cap, struct floe_dgram *d);

/* Counters of a datagram listener since it was opened. */
struct floe_listener_stats {
	uint64_t datagrams; /* received */
	uint64_t bytes;	    /* received (as delivered, after any truncation) */
	uint64_t truncated; /* longer than the buffer */
	/* Dropped by the kernel because the socket buffer was full. The counter arrives
	 * with the next datagram queued after the drops; floe_listener_sync_drops reads it
	 * at once (SO_MEMINFO), for a final count at shutdown or a metrics scrape. */
	uint64_t kernel_drops;
};

/* True for a datagram listener whose kernel drops are counted (SO_RXQ_OVFL could be set:
 * always on Linux, not under qemu-user). A caller warns when it is false, so that a
 * loss the count cannot show is not silent either. */
bool floe_listener_counts_drops(const struct floe_listener *l);

/* Reads the kernel's drop counter of a datagram listener now and adds what it rose by.
 * Returns 0 or -errno (-ENOPROTOOPT on kernels before 4.12). */
int floe_listener_sync_drops(struct floe_listener *l);
void floe_listener_stats(const struct floe_listener *l, struct floe_listener_stats *st);

#endif
