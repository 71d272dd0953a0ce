/* A TLS server over mbedtls (RFC 5425 syslog): a server certificate and key from PEM files,
 * optional client-certificate verification against a CA (mutual TLS), non-blocking
 * sessions that the event loop drives, failed handshakes counted and logged at most once
 * a minute per peer address, and the certificate and key reloaded on request (SIGHUP)
 * without touching the sessions already established.
 *
 * TLS 1.2 only: Debian 12's mbedtls 2.28 is built without MBEDTLS_SSL_PROTO_TLS1_3
 * (/usr/include/mbedtls/config.h leaves MBEDTLS_SSL_PROTO_TLS1_3_EXPERIMENTAL commented
 * out and says "TLS 1.3 and DTLS 1.3 aren't yet supported in Mbed TLS"); TLS 1.0 and 1.1,
 * which that build still has, are refused. Everything here runs on one thread (the
 * loop's); nothing is shared with another. */
#ifndef FLOE_PLATFORM_TLS_H
#define FLOE_PLATFORM_TLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "platform/listen.h"

struct floe_tls_server;
struct floe_tls_session;

/* Heap that mbedtls 2.28 keeps per established session, measured (bench_listen prints
 * it): two record buffers of MBEDTLS_SSL_IN_CONTENT_LEN / _OUT_CONTENT_LEN (16 KiB each)
 * plus overhead, the cipher contexts and, under mutual TLS, the client's parsed
 * certificate. Debian's build has no MBEDTLS_PLATFORM_MEMORY, so these allocations cannot
 * be routed through a budget: a caller budgets max_connections times this bound. A
 * session is set up when a client's first bytes arrive, so a connection that never
 * speaks costs nothing here. */
#define FLOE_TLS_SESSION_BYTES (40u * 1024u)

/* Failed handshakes are logged at most once per peer address per this period. */
#define FLOE_TLS_LOG_PERIOD_MS 60000

struct floe_tls_opts {
	const char *cert_file; /* PEM: the server certificate, then any intermediates */
	const char *key_file;  /* PEM or DER private key matching it */
	/* A secret reference (env:NAME or file:/path, platform/secret.h) to the password
	 * of an encrypted key, or NULL. */
	const char *key_password;
	/* PEM: the CAs client certificates must chain to. Set, every client must present
	 * a valid certificate (mutual TLS); NULL, none is asked for. */
	const char *ca_file;
	/* Milliseconds for the failure log's rate limit (NULL: CLOCK_MONOTONIC). */
	int64_t (*clock_ms)(void *arg);
	void *clock_arg;
};

/* Loads libmbedtls and libmbedx509 once per process (thread-safe; later calls return the
 * first answer); floe_tls_server_new calls it first. A static build links them and
 * always returns 0. On failure err[0..cap) names the library, the loader's reason and
 * the Debian package ("cannot load libmbedtls.so.14 (...): tls:// listeners need it
 * (Debian: libmbedtls14)"). Returns 0 or -ENOENT. */
int floe_tls_lib_load(char *err, size_t cap);

/* Loads the certificate, key and CA (paths copied, read again by reload). Returns 0 with
 * *out (owned: floe_tls_server_free), or a negative code with a message in err[0..cap)
 * naming the file and what was wrong with it ("key does not match the certificate"). */
int floe_tls_server_new(const struct floe_tls_opts *o, struct floe_tls_server **out, char *err,
			size_t cap);
/* Frees s; every session made from it must have been freed. NULL is fine. */
void floe_tls_server_free(struct floe_tls_server *s);

/* Reads the files again. On success new sessions use the new certificate and key (and
 * CA) while established ones go on with what they were made with, freed with the last of
 * them. On failure nothing changes and err says why. Returns 0 or a negative code. */
int floe_tls_server_reload(struct floe_tls_server *s, char *err, size_t cap);

struct floe_tls_stats {
	uint64_t handshakes;	      /* completed */
	uint64_t handshake_failures;  /* failed, timed out included */
	uint64_t failures_not_logged; /* of those, not logged (rate limit) */
	uint64_t reloads, reload_failures;
	uint64_t sessions; /* alive now */
};
void floe_tls_server_stats(const struct floe_tls_server *s, struct floe_tls_stats *st);

/* Records a failed handshake with peer (why: a short static or formatted reason): counted,
 * and logged unless this address was logged less than FLOE_TLS_LOG_PERIOD_MS ago (the
 * next line says how many were not) or more than 30 lines went out in that period.
 * floe_tls_session_handshake calls it; the server calls it for handshake timeouts. */
void floe_tls_server_note_failure(struct floe_tls_server *s, const union floe_sockaddr *peer,
				  const char *why);

/* Return values of the session functions besides 0 and errors: the socket must become
 * readable (or writable) before the call can go on. */
#define FLOE_TLS_WANT_READ 1
#define FLOE_TLS_WANT_WRITE 2

/* A session on the connected socket fd (borrowed; non-blocking), with peer for the log.
 * Returns 0 with *out (owned: floe_tls_session_free) or -ENOMEM. */
int floe_tls_session_new(struct floe_tls_server *s, int fd, const union floe_sockaddr *peer,
			 struct floe_tls_session **out);
/* Sends a close_notify if the socket takes it at once, and frees t (the socket stays open).
 * NULL is fine. */
void floe_tls_session_free(struct floe_tls_session *t);

/* Moves the handshake on: 0 once it is complete, FLOE_TLS_WANT_READ/_WRITE, or -EPROTO
 * (-ECONNRESET when the peer went away) after recording the failure with
 * floe_tls_server_note_failure; -ENOTCONN, recorded nowhere, when the peer closed without
 * sending a byte (a port probe, a TCP health check). */
int floe_tls_session_handshake(struct floe_tls_session *t);
/* Reads decrypted bytes into buf[0..cap): 0 with *n > 0, or *n == 0 when the peer closed
 * (close_notify or end of stream); FLOE_TLS_WANT_READ/_WRITE; or -ECONNRESET, -EPROTO. */
int floe_tls_session_read(struct floe_tls_session *t, char *buf, size_t cap, size_t *n);
/* True when bytes are held inside mbedtls (a record read but not all taken): the socket
 * will not say so, the caller must read again without waiting (floe_loop_io_kick). */
bool floe_tls_session_pending(const struct floe_tls_session *t);
/* The negotiated protocol ("TLSv1.2") and suite, for logs and tests. */
const char *floe_tls_session_version(const struct floe_tls_session *t);
const char *floe_tls_session_suite(const struct floe_tls_session *t);

#endif
