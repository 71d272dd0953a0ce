/* Tests of platform/tls through platform/server on 127.0.0.1, with mbedtls clients driven in
 * step with the loop and, where the binary exists, openssl s_client: data arrives over
 * TLS 1.2 (records larger than the shared buffer included), plain bytes on the TLS port
 * and clients without a (valid) certificate under mutual TLS fail, are counted and logged
 * once a minute per address while another connection keeps working; stalled handshakes
 * time out; a reload serves the new certificate to new sessions and keeps the old ones;
 * bad files are refused with their name; TLS 1.3 and 1.1 clients are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/listen.h"
#include "platform/loop.h"
#include "platform/server.h"
#include "platform/tls.h"

#include "tls_certs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>

static char dir[64];
static char rbuf[4096]; /* smaller than a TLS record: decrypted bytes wait in mbedtls */

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static char *at(const char *name)
{
	static char buf[8][128];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void copy(const char *from, const char *to)
{
	char cmd[400];
	snprintf(cmd, sizeof(cmd), "cp %s %s.tmp && mv %s.tmp %s", at(from), at(to), at(to),
		 at(to));
	assert_int_equal(system(cmd), 0);
}

/* One CA signs the server certificates a and b and a client certificate; another CA
 * signs a rogue client's. */
static int group_setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-tls-XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	struct test_key ca, a, b, cl, other, rogue;
	if (test_key_new(&ca, NULL) || test_key_new(&a, at("a.key")) ||
	    test_key_new(&b, at("b.key")) || test_key_new(&cl, at("client.key")) ||
	    test_key_new(&other, NULL) || test_key_new(&rogue, at("rogue.key")))
		return -1;
	const char *ca_dn = "CN=floe test CA", *other_dn = "CN=other CA";
	if (test_cert_write(at("ca.pem"), &ca, ca_dn, &ca, ca_dn, 1, 1) ||
	    test_cert_write(at("a.pem"), &a, "CN=a", &ca, ca_dn, 0, 2) ||
	    test_cert_write(at("b.pem"), &b, "CN=b", &ca, ca_dn, 0, 3) ||
	    test_cert_write(at("client.pem"), &cl, "CN=client", &ca, ca_dn, 0, 4) ||
	    test_cert_write(at("rogue.pem"), &rogue, "CN=rogue", &other, other_dn, 0, 5))
		return -1;
	test_key_free(&ca);
	test_key_free(&a);
	test_key_free(&b);
	test_key_free(&cl);
	test_key_free(&other);
	test_key_free(&rogue);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static int group_teardown(void **state)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int64_t fake_now = 1000000;
static int64_t fake_clock(void *arg)
{
	return fake_now;
}

struct rig {
	struct floe_loop *loop;
	struct floe_listener *l;
	struct floe_tls_server *tls;
	struct floe_server *srv;
	void *mem;
	char data[1 << 18];
	size_t len;
	int opens, closes;
	enum floe_conn_close why;
	struct floe_conn *last;
	bool pause_on_data;
};

static void on_data(void *arg, struct floe_conn *c, const char *p, size_t n)
{
	struct rig *r = arg;
	assert_true(r->len + n <= sizeof(r->data));
	memcpy(r->data + r->len, p, n);
	r->len += n;
	r->last = c;
	if (r->pause_on_data)
		floe_conn_pause(c);
}

static int on_open(void *arg, struct floe_conn *c)
{
	((struct rig *)arg)->opens++;
	return 0;
}

static void on_close(void *arg, struct floe_conn *c, enum floe_conn_close why)
{
	struct rig *r = arg;
	r->closes++;
	r->why = why;
}

/* A server on tls://127.0.0.1:0 with server.pem/server.key (copied from a) and, when
 * mutual, ca.pem for clients. */
static struct rig *rig_new(bool mutual)
{
	struct rig *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	copy("a.pem", "server.pem");
	copy("a.key", "server.key");
	struct floe_loop_opts lo = {
	    .clock_ms = fake_clock, .buffer = rbuf, .buffer_len = sizeof(rbuf)};
	assert_int_equal(floe_loop_new(&lo, &r->loop), 0);
	struct floe_listen_uri u;
	assert_int_equal(floe_listen_uri_parse("tls://127.0.0.1:0", 17, &u, NULL), 0);
	assert_int_equal(floe_listener_open(&u, NULL, &r->l, NULL), 0);
	char err[256] = "";
	struct floe_tls_opts to = {.cert_file = at("server.pem"),
				   .key_file = at("server.key"),
				   .ca_file = mutual ? at("ca.pem") : NULL,
				   .clock_ms = fake_clock};
	int rc = floe_tls_server_new(&to, &r->tls, err, sizeof(err));
	if (rc)
		fail_msg("tls: %s", err);
	struct floe_server_opts so = {
	    .max_connections = 8, .tls = r->tls, .handshake_timeout_ms = 10000};
	struct floe_server_cbs cbs = {
	    .arg = r, .on_open = on_open, .on_data = on_data, .on_close = on_close};
	size_t need = floe_server_footprint(so.max_connections);
	r->mem = malloc(need);
	assert_int_equal(floe_server_init(r->mem, need, r->loop, r->l, &so, &cbs, &r->srv), 0);
	return r;
}

static void rig_free(struct rig *r)
{
	floe_server_fini(r->srv);
	struct floe_tls_stats st;
	floe_tls_server_stats(r->tls, &st);
	assert_int_equal(st.sessions, 0);
	floe_tls_server_free(r->tls);
	floe_listener_close(r->l);
	floe_loop_free(r->loop);
	free(r->mem);
	free(r);
}

static void spin_until(struct rig *r, bool (*done)(struct rig *r, size_t), size_t arg)
{
	for (int i = 0; i < 400; i++) {
		if (done(r, arg))
			return;
		assert_true(floe_loop_run_once(r->loop, 20) >= 0);
	}
	fail_msg("the loop did not get there");
}

static bool has_bytes(struct rig *r, size_t n)
{
	return r->len >= n;
}
static bool has_closes(struct rig *r, size_t n)
{
	return (size_t)r->closes >= n;
}
static bool has_failures(struct rig *r, size_t n)
{
	struct floe_tls_stats st;
	floe_tls_server_stats(r->tls, &st);
	return st.handshake_failures >= n;
}

static int connect_port(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* An mbedtls client on a non-blocking socket, verifying the server against ca.pem. */
struct tcli {
	mbedtls_net_context net;
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_x509_crt ca, own;
	mbedtls_pk_context key;
};

static void tcli_open(struct tcli *c, struct rig *r, const char *cert, const char *key)
{
	memset(c, 0, sizeof(*c));
	mbedtls_net_init(&c->net);
	mbedtls_ssl_init(&c->ssl);
	mbedtls_ssl_config_init(&c->conf);
	mbedtls_x509_crt_init(&c->ca);
	mbedtls_x509_crt_init(&c->own);
	mbedtls_pk_init(&c->key);
	assert_int_equal(mbedtls_x509_crt_parse_file(&c->ca, at("ca.pem")), 0);
	assert_int_equal(mbedtls_ssl_config_defaults(&c->conf, MBEDTLS_SSL_IS_CLIENT,
						     MBEDTLS_SSL_TRANSPORT_STREAM,
						     MBEDTLS_SSL_PRESET_DEFAULT),
			 0);
	mbedtls_ssl_conf_rng(&c->conf, mbedtls_ctr_drbg_random, test_drbg());
	mbedtls_ssl_conf_ca_chain(&c->conf, &c->ca, NULL);
	mbedtls_ssl_conf_authmode(&c->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
	if (cert) {
		assert_int_equal(mbedtls_x509_crt_parse_file(&c->own, at(cert)), 0);
		assert_int_equal(mbedtls_pk_parse_keyfile(&c->key, at(key), NULL), 0);
		assert_int_equal(mbedtls_ssl_conf_own_cert(&c->conf, &c->own, &c->key), 0);
	}
	assert_int_equal(mbedtls_ssl_setup(&c->ssl, &c->conf), 0);
	c->net.fd = connect_port(floe_listener_port(r->l));
	assert_int_equal(mbedtls_net_set_nonblock(&c->net), 0);
	mbedtls_ssl_set_bio(&c->ssl, &c->net, mbedtls_net_send, mbedtls_net_recv, NULL);
}

/* Runs the client's handshake and the server's loop in turns. Returns mbedtls' result. */
static int tcli_handshake(struct tcli *c, struct rig *r)
{
	for (int i = 0; i < 400; i++) {
		int rc = mbedtls_ssl_handshake(&c->ssl);
		if (rc != MBEDTLS_ERR_SSL_WANT_READ && rc != MBEDTLS_ERR_SSL_WANT_WRITE)
			return rc;
		assert_true(floe_loop_run_once(r->loop, 5) >= 0);
	}
	fail_msg("handshake did not end");
	return -1;
}

static void tcli_send(struct tcli *c, struct rig *r, const char *p, size_t n)
{
	size_t off = 0;
	for (int i = 0; i < 100000 && off < n; i++) {
		int w = mbedtls_ssl_write(&c->ssl, (const unsigned char *)p + off, n - off);
		if (w > 0)
			off += (size_t)w;
		else if (w == MBEDTLS_ERR_SSL_WANT_WRITE || w == MBEDTLS_ERR_SSL_WANT_READ)
			assert_true(floe_loop_run_once(r->loop, 5) >= 0);
		else
			fail_msg("client write: -0x%x", -w);
	}
	assert_int_equal(off, n);
}

static void tcli_subject(struct tcli *c, char *out, size_t cap)
{
	const mbedtls_x509_crt *peer = mbedtls_ssl_get_peer_cert(&c->ssl);
	assert_non_null(peer);
	assert_true(mbedtls_x509_dn_gets(out, cap, &peer->subject) > 0);
}

static void tcli_close(struct tcli *c)
{
	mbedtls_ssl_close_notify(&c->ssl);
	mbedtls_net_free(&c->net);
	mbedtls_ssl_free(&c->ssl);
	mbedtls_ssl_config_free(&c->conf);
	mbedtls_x509_crt_free(&c->ca);
	mbedtls_x509_crt_free(&c->own);
	mbedtls_pk_free(&c->key);
}

/* Log lines go to a file while captured. */
static int saved_stderr = -1;
static void capture_start(void)
{
	fflush(stderr);
	saved_stderr = dup(2);
	int f = open(at("log"), O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	dup2(f, 2);
	close(f);
}

static char *capture_end(void)
{
	static char text[16384];
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	int f = open(at("log"), O_RDONLY | O_CLOEXEC);
	ssize_t n = read(f, text, sizeof(text) - 1);
	close(f);
	text[n > 0 ? n : 0] = '\0';
	return text;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static void test_roundtrip(void **state)
{
	struct rig *r = rig_new(false);
	struct tcli c;
	tcli_open(&c, r, NULL, NULL);
	assert_int_equal(tcli_handshake(&c, r), 0);
	assert_string_equal(mbedtls_ssl_get_version(&c.ssl), "TLSv1.2");
	const char *msg = "29 <13>1 - host app - - - hello";
	tcli_send(&c, r, msg, strlen(msg));
	spin_until(r, has_bytes, strlen(msg));
	assert_memory_equal(r->data, msg, strlen(msg));
	assert_non_null(floe_conn_tls(r->last));
	assert_string_equal(floe_tls_session_version(floe_conn_tls(r->last)), "TLSv1.2");
	assert_non_null(floe_tls_session_suite(floe_conn_tls(r->last)));
	/* 100 KiB in records of up to 16 KiB, through a 4 KiB shared buffer: what mbedtls
	 * holds after each read comes out through kicks, every byte in order. */
	static char big[100 * 1024];
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	r->len = 0;
	tcli_send(&c, r, big, sizeof(big));
	spin_until(r, has_bytes, sizeof(big));
	assert_memory_equal(r->data, big, sizeof(big));
	/* Paused with a record half read, then resumed: the rest still comes. */
	r->len = 0;
	r->pause_on_data = true;
	tcli_send(&c, r, big, 16000);
	spin_until(r, has_bytes, 1);
	assert_true(r->len < 16000);
	size_t before = r->len;
	for (int i = 0; i < 3; i++)
		floe_loop_run_once(r->loop, 0);
	assert_int_equal(r->len, before);
	r->pause_on_data = false;
	floe_conn_resume(r->last);
	spin_until(r, has_bytes, 16000);
	assert_memory_equal(r->data, big, 16000);
	tcli_close(&c);
	spin_until(r, has_closes, 1);
	assert_int_equal(r->why, FLOE_CLOSE_EOF);
	struct floe_tls_stats st;
	floe_tls_server_stats(r->tls, &st);
	assert_int_equal(st.handshakes, 1);
	assert_int_equal(st.handshake_failures, 0);
	rig_free(r);
}

/* Plain syslog bytes on the TLS port fail that connection's handshake, logged once per
 * address per minute and counted, while a TLS connection goes on. */
static void test_plain_bytes_on_tls_port(void **state)
{
	struct rig *r = rig_new(false);
	struct tcli good;
	tcli_open(&good, r, NULL, NULL);
	assert_int_equal(tcli_handshake(&good, r), 0);
	capture_start();
	for (int i = 0; i < 3; i++) {
		int p = connect_port(floe_listener_port(r->l));
		assert_int_equal(write(p, "<13>plain text\n", 15), 15);
		spin_until(r, has_failures, (size_t)i + 1);
		tcli_send(&good, r, "x", 1);
		close(p);
	}
	fake_now += FLOE_TLS_LOG_PERIOD_MS;
	int p = connect_port(floe_listener_port(r->l));
	assert_int_equal(write(p, "<13>plain text\n", 15), 15);
	spin_until(r, has_failures, 4);
	close(p);
	char *log = capture_end();
	spin_until(r, has_bytes, 3);
	assert_memory_equal(r->data, "xxx", 3);
	assert_int_equal(count_of(log, "tls: handshake with 127.0.0.1 failed"), 2);
	assert_int_equal(count_of(log, "plain syslog sent to a TLS port?"), 2);
	assert_int_equal(count_of(log, "(and 2 more from it not logged)"), 1);
	struct floe_tls_stats st;
	floe_tls_server_stats(r->tls, &st);
	assert_int_equal(st.handshake_failures, 4);
	assert_int_equal(st.failures_not_logged, 2);
	struct floe_server_stats ss;
	floe_server_stats(r->srv, &ss);
	assert_int_equal(ss.handshake_failures, 4);
	assert_int_equal(r->closes, 4);
	assert_int_equal(r->why, FLOE_CLOSE_HANDSHAKE);
	tcli_close(&good);
	rig_free(r);
}

/* Under mutual TLS a client without a certificate, or with one from another CA, fails;
 * one with a certificate from the CA gets in. */
static void test_mutual(void **state)
{
	struct rig *r = rig_new(true);
	struct tcli c;
	capture_start();
	tcli_open(&c, r, NULL, NULL);
	assert_true(tcli_handshake(&c, r) != 0);
	tcli_close(&c);
	spin_until(r, has_failures, 1);
	fake_now += FLOE_TLS_LOG_PERIOD_MS;
	tcli_open(&c, r, "rogue.pem", "rogue.key");
	assert_true(tcli_handshake(&c, r) != 0);
	tcli_close(&c);
	spin_until(r, has_failures, 2);
	char *log = capture_end();
	assert_int_equal(count_of(log, "tls: handshake with 127.0.0.1 failed"), 2);
	assert_non_null(strstr(log, "No client certification received"));
	assert_non_null(strstr(log, "not correctly signed by the trusted CA"));
	tcli_open(&c, r, "client.pem", "client.key");
	assert_int_equal(tcli_handshake(&c, r), 0);
	tcli_send(&c, r, "ok", 2);
	spin_until(r, has_bytes, 2);
	tcli_close(&c);
	spin_until(r, has_closes, 3);
	rig_free(r);
}

/* A client that connects and says nothing, or stops half way through its hello, is
 * dropped at the handshake deadline. */
static void test_handshake_timeout(void **state)
{
	struct rig *r = rig_new(false);
	int silent = connect_port(floe_listener_port(r->l));
	int half = connect_port(floe_listener_port(r->l));
	assert_int_equal(write(half, "\x16\x03\x01\x00\xff\x01", 6), 6);
	for (int i = 0; i < 20; i++)
		floe_loop_run_once(r->loop, 5);
	assert_int_equal(r->opens, 2);
	assert_int_equal(r->closes, 0);
	capture_start();
	fake_now += 10000;
	floe_loop_run_once(r->loop, 0);
	char *log = capture_end();
	assert_int_equal(r->closes, 2);
	assert_int_equal(r->why, FLOE_CLOSE_HANDSHAKE);
	assert_non_null(strstr(log, "handshake not complete in time"));
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.handshake_timeouts, 2);
	char b;
	assert_true(read(silent, &b, 1) <= 0);
	close(silent);
	close(half);
	rig_free(r);
}

/* A connection closed before its first byte (a port probe, a TCP health check) is no
 * failed handshake: not counted, not logged. */
static void test_probe_not_a_failure(void **state)
{
	struct rig *r = rig_new(false);
	capture_start();
	for (int i = 0; i < 3; i++)
		close(connect_port(floe_listener_port(r->l)));
	spin_until(r, has_closes, 3);
	char *log = capture_end();
	assert_int_equal(r->why, FLOE_CLOSE_EOF);
	assert_null(strstr(log, "handshake"));
	struct floe_tls_stats st;
	floe_tls_server_stats(r->tls, &st);
	assert_int_equal(st.handshake_failures, 0);
	rig_free(r);
}

/* A reload serves the new certificate to new sessions; a session made before goes on. A
 * reload from broken files changes nothing. */
static void test_reload(void **state)
{
	struct rig *r = rig_new(false);
	struct tcli old, neu;
	char subj[128];
	tcli_open(&old, r, NULL, NULL);
	assert_int_equal(tcli_handshake(&old, r), 0);
	tcli_subject(&old, subj, sizeof(subj));
	assert_string_equal(subj, "CN=a");
	copy("b.pem", "server.pem");
	copy("b.key", "server.key");
	char err[256] = "";
	assert_int_equal(floe_tls_server_reload(r->tls, err, sizeof(err)), 0);
	tcli_open(&neu, r, NULL, NULL);
	assert_int_equal(tcli_handshake(&neu, r), 0);
	tcli_subject(&neu, subj, sizeof(subj));
	assert_string_equal(subj, "CN=b");
	tcli_send(&old, r, "old", 3);
	spin_until(r, has_bytes, 3);
	tcli_send(&neu, r, "new", 3);
	spin_until(r, has_bytes, 6);
	assert_memory_equal(r->data, "oldnew", 6);
	/* A key that does not match: refused, b still served. */
	copy("a.key", "server.key");
	assert_true(floe_tls_server_reload(r->tls, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "the key does not match the certificate"));
	assert_non_null(strstr(err, "server.key"));
	struct tcli third;
	tcli_open(&third, r, NULL, NULL);
	assert_int_equal(tcli_handshake(&third, r), 0);
	tcli_subject(&third, subj, sizeof(subj));
	assert_string_equal(subj, "CN=b");
	struct floe_tls_stats st;
	floe_tls_server_stats(r->tls, &st);
	assert_int_equal(st.reloads, 1);
	assert_int_equal(st.reload_failures, 1);
	assert_int_equal(st.sessions, 3);
	tcli_close(&old);
	tcli_close(&neu);
	tcli_close(&third);
	spin_until(r, has_closes, 3);
	rig_free(r);
}

static void test_bad_files(void **state)
{
	struct floe_tls_server *s = NULL;
	char err[256];
	struct floe_tls_opts o = {.cert_file = at("missing.pem"), .key_file = at("a.key")};
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "missing.pem: No such file or directory"));
	o.cert_file = at("a.key");
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a.key: not a usable certificate"));
	o.cert_file = at("a.pem");
	o.key_file = at("a.pem");
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "a.pem: not a usable private key"));
	o.key_file = at("b.key");
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "the key does not match"));
	o.key_file = at("a.key");
	o.ca_file = at("a.key");
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a usable CA certificate"));
	o.ca_file = NULL;
	o.key_password = "env:FLOE_TEST_NO_SUCH_VARIABLE";
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "key_password"));
	o.key_password = NULL;
	o.key_file = NULL;
	assert_int_equal(floe_tls_server_new(&o, &s, err, sizeof(err)), -EINVAL);
	floe_tls_server_free(NULL);
}

/* openssl s_client, if installed: TLS 1.2 with and without a client certificate gets
 * through; TLS 1.3 only and TLS 1.1 only are refused (counted). */
static pid_t s_client(uint16_t port, const char *const extra[], int *in)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		char addr[32];
		snprintf(addr, sizeof(addr), "127.0.0.1:%u", (unsigned)port);
		const char *argv[16] = {"openssl", "s_client", "-connect",  addr,
					"-quiet",  "-CAfile",  at("ca.pem")};
		int n = 7;
		for (int i = 0; extra[i] && n < 15; i++)
			argv[n++] = extra[i];
		dup2(p[0], 0);
		int nul = open("/dev/null", O_WRONLY);
		dup2(nul, 1);
		dup2(nul, 2);
		close(p[1]);
		execvp("openssl", (char *const *)argv);
		_exit(127);
	}
	close(p[0]);
	*in = p[1];
	return pid;
}

static void test_openssl_s_client(void **state)
{
	if (system("command -v openssl >/dev/null 2>&1") != 0) {
		printf("openssl not installed: skipped\n");
		return;
	}
	for (int mutual = 0; mutual < 2; mutual++) {
		struct rig *r = rig_new(mutual);
		const char *none[] = {NULL};
		const char *cert[] = {"-cert", at("client.pem"), "-key", at("client.key"), NULL};
		int in;
		pid_t pid = s_client(floe_listener_port(r->l), mutual ? cert : none, &in);
		assert_int_equal(write(in, "<13>from s_client\n", 18), 18);
		spin_until(r, has_bytes, 18);
		assert_memory_equal(r->data, "<13>from s_client\n", 18);
		close(in);
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		capture_start();
		const char *v13[] = {"-tls1_3", NULL}, *v11[] = {"-tls1_1", NULL};
		pid = s_client(floe_listener_port(r->l), v13, &in);
		spin_until(r, has_failures, 1);
		close(in);
		waitpid(pid, NULL, 0);
		fake_now += FLOE_TLS_LOG_PERIOD_MS;
		pid = s_client(floe_listener_port(r->l), v11, &in);
		/* OpenSSL 3 may refuse TLS 1.1 itself before it sends a hello; either way no
		 * session is made. The loop runs until s_client is gone. */
		close(in);
		int i = 0;
		while (waitpid(pid, NULL, WNOHANG) == 0 && i++ < 2000)
			floe_loop_run_once(r->loop, 5);
		if (i > 2000) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			fail_msg("s_client -tls1_1 did not end");
		}
		char *log = capture_end();
		/* A TLS 1.3-only hello offers no suite this TLS 1.2 server has. */
		assert_non_null(strstr(log, "no ciphersuites in common"));
		struct floe_tls_stats st;
		floe_tls_server_stats(r->tls, &st);
		assert_int_equal(st.handshakes, 1);
		assert_true(st.handshake_failures >= 1);
		rig_free(r);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_roundtrip),
	    cmocka_unit_test(test_plain_bytes_on_tls_port),
	    cmocka_unit_test(test_mutual),
	    cmocka_unit_test(test_handshake_timeout),
	    cmocka_unit_test(test_probe_not_a_failure),
	    cmocka_unit_test(test_reload),
	    cmocka_unit_test(test_bad_files),
	    cmocka_unit_test(test_openssl_s_client),
	};
	return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
