/* TLS server over mbedtls 2.28. The certificate, key and CA live in a reference-counted
 * credential set with its own mbedtls_ssl_config: a session keeps the set it started
 * with, so a reload swaps the server's current set and the old one goes with its last
 * session. Sessions do their I/O on a non-blocking socket through two small callbacks. */
#include "tls.h"

#include "clock.h"
#include "fs.h"
#include "log.h"
#include "secret.h"
#include "tls_lib.h"

#include "formats/base/alloc.h"
#include "formats/base/wipe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

/* Peers remembered for the failure log's rate limit; more distinct addresses within a
 * period push out the oldest, and the global cap below still holds. */
#define LOG_PEERS 64
#define LOG_LINES_PER_PERIOD 30
/* Private keys larger than this are no keys; certificate files (a CA bundle) are capped
 * too, as every file floe reads is. */
#define KEY_FILE_MAX (64 * 1024)
#define CERT_FILE_MAX (4 * 1024 * 1024)

struct creds {
	unsigned refs;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt chain, ca;
	mbedtls_pk_context key;
};

struct log_peer {
	union floe_sockaddr addr; /* port zeroed: the address is the key */
	int64_t last_ms;
	uint64_t quiet; /* failures not logged since last_ms */
	bool used;
};

struct floe_tls_server {
	char *cert_file, *key_file, *key_password, *ca_file;
	int64_t (*clock_ms)(void *arg);
	void *clock_arg;
	mbedtls_entropy_context entropy;
	mbedtls_ctr_drbg_context drbg;
	struct creds *cur;
	struct floe_tls_stats st;
	struct log_peer peers[LOG_PEERS];
	int64_t period_start;
	unsigned period_lines;
};

struct floe_tls_session {
	mbedtls_ssl_context ssl;
	struct floe_tls_server *srv;
	struct creds *creds;
	union floe_sockaddr peer;
	int fd;
	int sys_errno;	/* the last socket error, for the failure's reason */
	int first_byte; /* the first byte the peer sent, -1 before it */
	bool handshake_done;
};

/* mbedtls' TLS and X.509 functions (platform/tls_lib.h): floe_tls_server_new loads them,
 * and everything below that calls them has a server. */
static const struct floe_tls_lib *lib(void)
{
	return floe_tls_lib_get();
}

static int64_t mono_ms(void *arg)
{
	return floe_clock_mono_ns() / 1000000;
}

static void creds_put(struct creds *c)
{
	if (!c || --c->refs > 0)
		return;
	lib()->ssl_config_free(&c->conf);
	lib()->x509_crt_free(&c->chain);
	lib()->x509_crt_free(&c->ca);
	mbedtls_pk_free(&c->key); /* zeroises the key material */
	free(c);
}

static void say(char *err, size_t cap, const char *file, const char *what, int mbed)
{
	char m[160] = "";
	if (mbed)
		mbedtls_strerror(mbed, m, sizeof(m));
	if (err && cap)
		snprintf(err, cap, "%s: %s%s%s", file, what, mbed ? ": " : "", m);
}

/* Reads and parses the private key, wiping every copy of its bytes (and the password's)
 * before returning. */
static int load_key(struct floe_tls_server *s, mbedtls_pk_context *key, char *err, size_t cap)
{
	void *data = NULL;
	size_t len = 0;
	char *pw = NULL;
	int rc = floe_fs_read_file(NULL, s->key_file, KEY_FILE_MAX, &data, &len);
	if (rc) {
		say(err, cap, s->key_file, strerror(-rc), 0);
		return rc;
	}
	if (s->key_password && (rc = floe_secret_resolve(NULL, s->key_password, &pw))) {
		say(err, cap, s->key_file, "cannot resolve key_password", 0);
		goto out;
	}
	/* floe_fs_read_file leaves a NUL after the bytes, which PEM parsing wants counted. */
	bool pem = len > 10 && memmem(data, len, "-----BEGIN", 10) != NULL;
	rc = mbedtls_pk_parse_key(key, data, pem ? len + 1 : len, (const unsigned char *)pw,
				  pw ? strlen(pw) : 0);
	if (rc) {
		say(err, cap, s->key_file, "not a usable private key", rc);
		rc = -EINVAL;
	}
out:
	if (data)
		floe_wipe(data, len + 1);
	floe_free(NULL, data);
	floe_secret_free(NULL, pw);
	return rc;
}

/* Parses the PEM certificates of a file into crt (a chain: the first one, then the
 * certificates that sign it). */
static int load_certs(const char *file, mbedtls_x509_crt *crt, const char *what, char *err,
		      size_t cap)
{
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(NULL, file, CERT_FILE_MAX, &data, &len);
	if (rc) {
		say(err, cap, file, strerror(-rc), 0);
		return rc;
	}
	/* The NUL floe_fs_read_file leaves after the bytes is part of a PEM buffer. */
	int bad = lib()->x509_crt_parse(crt, data, len + 1);
	floe_free(NULL, data);
	if (bad < 0) {
		say(err, cap, file, what, bad);
		return -EINVAL;
	}
	if (bad > 0) {
		char m[96];
		snprintf(m, sizeof(m), "%s: %d of its certificates could not be parsed", what, bad);
		say(err, cap, file, m, 0);
		return -EINVAL;
	}
	return 0;
}

/* Builds the TLS configuration of a credential set. */
static int creds_configure(struct floe_tls_server *s, struct creds *c, char *err, size_t cap)
{
	int rc =
	    lib()->ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_SERVER,
					MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	if (rc) {
		say(err, cap, s->cert_file, "TLS configuration", rc);
		return -EINVAL;
	}
	/* RFC 5425 asks for TLS 1.2 or later; this mbedtls has nothing later. */
	lib()->ssl_conf_min_version(&c->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
				     MBEDTLS_SSL_MINOR_VERSION_3);
	lib()->ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, &s->drbg);
	if ((rc = lib()->ssl_conf_own_cert(&c->conf, &c->chain, &c->key))) {
		say(err, cap, s->cert_file, "TLS configuration", rc);
		return -EINVAL;
	}
	if (s->ca_file) {
		lib()->ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
		lib()->ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	} else {
		lib()->ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_NONE);
	}
	return 0;
}

static int creds_load(struct floe_tls_server *s, struct creds **out, char *err, size_t cap)
{
	struct creds *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->refs = 1;
	lib()->ssl_config_init(&c->conf);
	lib()->x509_crt_init(&c->chain);
	lib()->x509_crt_init(&c->ca);
	mbedtls_pk_init(&c->key);
	int rc = load_certs(s->cert_file, &c->chain, "not a usable certificate (PEM)", err, cap);
	if (rc || (rc = load_key(s, &c->key, err, cap)))
		goto err;
	if (mbedtls_pk_check_pair(&c->chain.pk, &c->key)) {
		say(err, cap, s->key_file, "the key does not match the certificate", 0);
		rc = -EINVAL;
		goto err;
	}
	if (s->ca_file &&
	    (rc = load_certs(s->ca_file, &c->ca, "not a usable CA certificate (PEM)", err, cap)))
		goto err;
	if ((rc = creds_configure(s, c, err, cap)))
		goto err;
	*out = c;
	return 0;
err:
	creds_put(c);
	return rc;
}

static char *dup_or_null(const char *s, bool *fail)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*fail = true;
	return d;
}

int floe_tls_server_new(const struct floe_tls_opts *o, struct floe_tls_server **out, char *err,
			size_t cap)
{
	if (!o->cert_file || !o->key_file) {
		say(err, cap, "tls", "a certificate and a key are required", 0);
		return -EINVAL;
	}
	int rc = floe_tls_lib_load(err, cap);
	if (rc)
		return rc;
	struct floe_tls_server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	bool fail = false;
	s->cert_file = dup_or_null(o->cert_file, &fail);
	s->key_file = dup_or_null(o->key_file, &fail);
	s->key_password = dup_or_null(o->key_password, &fail);
	s->ca_file = dup_or_null(o->ca_file, &fail);
	s->clock_ms = o->clock_ms ? o->clock_ms : mono_ms;
	s->clock_arg = o->clock_arg;
	mbedtls_entropy_init(&s->entropy);
	mbedtls_ctr_drbg_init(&s->drbg);
	if (fail) {
		rc = -ENOMEM;
		goto err;
	}
	static const unsigned char pers[] = "floe tls server";
	if ((rc = mbedtls_ctr_drbg_seed(&s->drbg, mbedtls_entropy_func, &s->entropy, pers,
					sizeof(pers) - 1))) {
		say(err, cap, "tls", "seeding the random generator", rc);
		rc = -EIO;
		goto err;
	}
	if ((rc = creds_load(s, &s->cur, err, cap)))
		goto err;
	*out = s;
	return 0;
err:
	floe_tls_server_free(s);
	return rc;
}

void floe_tls_server_free(struct floe_tls_server *s)
{
	if (!s)
		return;
	creds_put(s->cur);
	mbedtls_ctr_drbg_free(&s->drbg);
	mbedtls_entropy_free(&s->entropy);
	free(s->cert_file);
	free(s->key_file);
	free(s->key_password);
	free(s->ca_file);
	free(s);
}

int floe_tls_server_reload(struct floe_tls_server *s, char *err, size_t cap)
{
	struct creds *c = NULL;
	int rc = creds_load(s, &c, err, cap);
	if (rc) {
		s->st.reload_failures++;
		return rc;
	}
	creds_put(s->cur);
	s->cur = c;
	s->st.reloads++;
	return 0;
}

void floe_tls_server_stats(const struct floe_tls_server *s, struct floe_tls_stats *st)
{
	*st = s->st;
}

/* --- the failure log -------------------------------------------------------------- */

static struct log_peer *log_slot(struct floe_tls_server *s, const union floe_sockaddr *a)
{
	struct log_peer *oldest = &s->peers[0];
	for (size_t i = 0; i < LOG_PEERS; i++) {
		struct log_peer *p = &s->peers[i];
		if (p->used && memcmp(&p->addr, a, sizeof(*a)) == 0)
			return p;
		if (!p->used || (oldest->used && p->last_ms < oldest->last_ms))
			oldest = p;
	}
	memset(oldest, 0, sizeof(*oldest));
	oldest->addr = *a;
	oldest->last_ms = INT64_MIN;
	oldest->used = true;
	return oldest;
}

void floe_tls_server_note_failure(struct floe_tls_server *s, const union floe_sockaddr *peer,
				  const char *why)
{
	union floe_sockaddr key = *peer;
	if (key.sa.sa_family == AF_INET)
		key.in.sin_port = 0;
	else if (key.sa.sa_family == AF_INET6)
		key.in6.sin6_port = 0;
	int64_t now = s->clock_ms(s->clock_arg);
	s->st.handshake_failures++;
	if (now - s->period_start >= FLOE_TLS_LOG_PERIOD_MS) {
		s->period_start = now;
		s->period_lines = 0;
	}
	struct log_peer *p = log_slot(s, &key);
	if ((p->last_ms != INT64_MIN && now - p->last_ms < FLOE_TLS_LOG_PERIOD_MS) ||
	    s->period_lines >= LOG_LINES_PER_PERIOD) {
		p->quiet++;
		s->st.failures_not_logged++;
		return;
	}
	char addr[64];
	floe_sockaddr_format(&key, false, addr, sizeof(addr));
	if (p->quiet)
		floe_warn("tls: handshake with %s failed: %s (and %llu more from it not logged)",
			  addr, why, (unsigned long long)p->quiet);
	else
		floe_warn("tls: handshake with %s failed: %s", addr, why);
	p->last_ms = now;
	p->quiet = 0;
	s->period_lines++;
}

/* --- sessions --------------------------------------------------------------------- */

static int bio_send(void *ctx, const unsigned char *p, size_t n)
{
	struct floe_tls_session *t = ctx;
	for (;;) {
		ssize_t w = send(t->fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w >= 0)
			return (int)w;
		if (errno == EINTR)
			continue;
		t->sys_errno = errno;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return MBEDTLS_ERR_SSL_WANT_WRITE;
		return errno == EPIPE || errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET
							     : MBEDTLS_ERR_NET_SEND_FAILED;
	}
}

static int bio_recv(void *ctx, unsigned char *p, size_t n)
{
	struct floe_tls_session *t = ctx;
	for (;;) {
		ssize_t r = recv(t->fd, p, n, MSG_DONTWAIT);
		if (r > 0 && t->first_byte < 0)
			t->first_byte = p[0];
		if (r >= 0)
			return (int)r;
		if (errno == EINTR)
			continue;
		t->sys_errno = errno;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return MBEDTLS_ERR_SSL_WANT_READ;
		return errno == ECONNRESET ? MBEDTLS_ERR_NET_CONN_RESET
					   : MBEDTLS_ERR_NET_RECV_FAILED;
	}
}

int floe_tls_session_new(struct floe_tls_server *s, int fd, const union floe_sockaddr *peer,
			 struct floe_tls_session **out)
{
	struct floe_tls_session *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	lib()->ssl_init(&t->ssl);
	if (lib()->ssl_setup(&t->ssl, &s->cur->conf)) {
		lib()->ssl_free(&t->ssl);
		free(t);
		return -ENOMEM;
	}
	t->srv = s;
	t->creds = s->cur;
	t->creds->refs++;
	t->peer = *peer;
	t->fd = fd;
	t->first_byte = -1;
	lib()->ssl_set_bio(&t->ssl, t, bio_send, bio_recv, NULL);
	s->st.sessions++;
	*out = t;
	return 0;
}

void floe_tls_session_free(struct floe_tls_session *t)
{
	if (!t)
		return;
	/* Best effort, one try: a peer that does not read is not waited for. */
	if (t->handshake_done)
		lib()->ssl_close_notify(&t->ssl);
	lib()->ssl_free(&t->ssl);
	t->srv->st.sessions--;
	creds_put(t->creds);
	free(t);
}

/* Why a handshake failed, in words for the log. */
static void failure_reason(struct floe_tls_session *t, int rc, char *out, size_t cap)
{
	char m[128];
	if (rc == MBEDTLS_ERR_NET_CONN_RESET || rc == MBEDTLS_ERR_NET_RECV_FAILED ||
	    rc == MBEDTLS_ERR_NET_SEND_FAILED || rc == MBEDTLS_ERR_SSL_CONN_EOF) {
		snprintf(out, cap, "%s",
			 rc == MBEDTLS_ERR_SSL_CONN_EOF ? "the peer closed the connection"
			 : t->sys_errno			? strerror(t->sys_errno)
							: "connection error");
		return;
	}
	mbedtls_strerror(rc, m, sizeof(m));
	uint32_t flags = lib()->ssl_get_verify_result(&t->ssl);
	char v[160] = "";
	if (flags && flags != (uint32_t)-1) {
		lib()->x509_crt_verify_info(v, sizeof(v), "", flags);
		size_t k = strlen(v);
		while (k && (v[k - 1] == '\n' || v[k - 1] == ' '))
			v[--k] = '\0';
	}
	/* A syslog frame starts with '<' or a digit; a TLS record with 0x16. */
	bool plain = t->first_byte == '<' || (t->first_byte >= '0' && t->first_byte <= '9');
	snprintf(out, cap, "%s%s%s%s", m, *v ? " (" : "", v, *v ? ")" : "");
	if (plain) {
		size_t k = strlen(out);
		snprintf(out + k, cap - k, " (plain syslog sent to a TLS port?)");
	}
}

int floe_tls_session_handshake(struct floe_tls_session *t)
{
	if (t->handshake_done)
		return 0;
	int rc = lib()->ssl_handshake(&t->ssl);
	if (rc == 0) {
		t->handshake_done = true;
		t->srv->st.handshakes++;
		return 0;
	}
	if (rc == MBEDTLS_ERR_SSL_WANT_READ)
		return FLOE_TLS_WANT_READ;
	if (rc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return FLOE_TLS_WANT_WRITE;
	/* Closed before a single byte: a port probe or a TCP health check, not a client
	 * that failed to speak TLS. */
	if (rc == MBEDTLS_ERR_SSL_CONN_EOF && t->first_byte < 0)
		return -ENOTCONN;
	char why[320];
	failure_reason(t, rc, why, sizeof(why));
	floe_tls_server_note_failure(t->srv, &t->peer, why);
	return rc == MBEDTLS_ERR_NET_CONN_RESET ? -ECONNRESET : -EPROTO;
}

int floe_tls_session_read(struct floe_tls_session *t, char *buf, size_t cap, size_t *n)
{
	*n = 0;
	int rc = lib()->ssl_read(&t->ssl, (unsigned char *)buf, cap);
	if (rc > 0) {
		*n = (size_t)rc;
		return 0;
	}
	if (rc == 0 || rc == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || rc == MBEDTLS_ERR_SSL_CONN_EOF)
		return 0;
	if (rc == MBEDTLS_ERR_SSL_WANT_READ)
		return FLOE_TLS_WANT_READ;
	if (rc == MBEDTLS_ERR_SSL_WANT_WRITE)
		return FLOE_TLS_WANT_WRITE;
	return rc == MBEDTLS_ERR_NET_CONN_RESET ? -ECONNRESET : -EPROTO;
}

bool floe_tls_session_pending(const struct floe_tls_session *t)
{
	return lib()->ssl_check_pending(&t->ssl) != 0;
}

const char *floe_tls_session_version(const struct floe_tls_session *t)
{
	return lib()->ssl_get_version(&t->ssl);
}

const char *floe_tls_session_suite(const struct floe_tls_session *t)
{
	return lib()->ssl_get_ciphersuite(&t->ssl);
}
