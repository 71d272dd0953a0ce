/* Listening-layer benchmark (loopback, figures only): the loop reads on this thread, a
 * client thread (or process) sends.
 *   tcp   N messages of 200 bytes, octet-counted, over one TCP connection, framed by
 *         agent/parse/framing and parsed by floe_syslog_parse as the agent would: msg/s.
 *   tls   the same over TLS 1.2 (ECDHE-ECDSA, P-256, AES-GCM as negotiated).
 *   udp   200-byte datagrams at RATE/s for SECONDS into a socket_receive_buffer of
 *         RCVBUF: sent, received, dropped by the kernel (SO_RXQ_OVFL), lost.
 *   idle  IDLE TCP connections held open by a child process: this process's RSS growth
 *         and the server's fixed table; then 100 TLS sessions: mbedtls' heap per session.
 *
 * usage: bench_listen [N [SECONDS [RATE [IDLE [RCVBUF]]]]]
 *        defaults 1000000 2 100000 1000 4194304 (the UDP figure is SECONDS=10) */
#include "../unit/platform/tls_certs.h"

#include "agent/parse/framing.h"
#include "agent/parse/syslog.h"
#include "platform/fs.h"
#include "platform/listen.h"
#include "platform/loop.h"
#include "platform/server.h"
#include "platform/tls.h"

#include <inttypes.h>
#include <malloc.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/ssl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG_LEN 200
static char rbuf[64 * 1024];
static char dir[64];

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU seconds of the calling thread (the receiver): a figure the machine's load does
 * not change much, where wall-clock rates do. */
static double thread_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
	       ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) / 1e6;
}

static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &v) == 1)
			break;
	if (f)
		fclose(f);
	return v;
}

/* A 200-byte RFC 5424 message, numbered. */
static void make_msg(char *out, uint64_t i)
{
	int n = snprintf(out, MSG_LEN + 1,
			 "<134>1 2026-12-03T12:00:00.000000Z edge-017 bench 4242 ID%04d "
			 "[meta sequenceId=\"%012" PRIu64 "\"] ",
			 (int)(i % 10000), i);
	memset(out + n, 'm', (size_t)(MSG_LEN - n));
}

/* --- the receiving side --------------------------------------------------------------- */

struct recv_side {
	struct floe_framer *fr;
	struct floe_syslog_opts so;
	uint64_t frames, parsed_ok, datagrams;
	bool closed;
	double t_first;
};

static void count_msg(struct recv_side *rs, const char *p, size_t n)
{
	struct floe_syslog_msg m;
	if (floe_syslog_parse(p, n, &rs->so, &m, NULL) == 0)
		rs->parsed_ok++;
}

static void on_data(void *arg, struct floe_conn *c, const char *p, size_t n)
{
	struct recv_side *rs = arg;
	if (rs->t_first == 0)
		rs->t_first = now_s();
	while (n > 0) {
		struct floe_frame f;
		size_t used;
		if (floe_framer_push(rs->fr, p, n, &used, &f)) {
			rs->frames++;
			count_msg(rs, f.p, f.len);
		}
		p += used;
		n -= used;
	}
}

static void on_close(void *arg, struct floe_conn *c, enum floe_conn_close why)
{
	((struct recv_side *)arg)->closed = true;
}

static void on_datagram(void *arg, const struct floe_dgram *d)
{
	struct recv_side *rs = arg;
	rs->datagrams++;
	count_msg(rs, d->p, d->len);
}

struct rig {
	struct floe_loop *loop;
	struct floe_listener *l;
	struct floe_server *srv;
	void *mem;
	struct recv_side rs;
};

static int rig_open(struct rig *r, const char *uri, unsigned maxc, int rcvbuf,
		    struct floe_tls_server *tls)
{
	memset(r, 0, sizeof(*r));
	struct floe_loop_opts lo = {.buffer = rbuf, .buffer_len = sizeof(rbuf)};
	struct floe_listen_uri u;
	struct floe_listen_opts o = {.rcvbuf = rcvbuf};
	const char *what = "";
	if (floe_loop_new(&lo, &r->loop) || floe_listen_uri_parse(uri, strlen(uri), &u, NULL) ||
	    floe_listener_open(&u, &o, &r->l, &what)) {
		fprintf(stderr, "%s: cannot listen (%s)\n", uri, what);
		return 1;
	}
	if (floe_framer_new(NULL, 8192, &r->rs.fr))
		return 1;
	r->rs.so.received_us = INT64_C(1796300000000000);
	struct floe_server_opts so = {.max_connections = maxc, .tls = tls};
	struct floe_server_cbs cbs = {
	    .arg = &r->rs, .on_data = on_data, .on_close = on_close, .on_datagram = on_datagram};
	size_t need = floe_server_footprint(maxc);
	r->mem = malloc(need);
	return !r->rs.fr || floe_server_init(r->mem, need, r->loop, r->l, &so, &cbs, &r->srv);
}

static void rig_close(struct rig *r)
{
	floe_server_fini(r->srv);
	floe_listener_close(r->l);
	floe_loop_free(r->loop);
	floe_framer_free(r->rs.fr);
	free(r->mem);
}

/* --- senders -------------------------------------------------------------------------- */

struct sender {
	uint16_t port;
	uint64_t n;
	bool tls;
	int rate;
	double seconds;
	uint64_t sent;
	atomic_bool done;
};

static int connect_port(int type, uint16_t port)
{
	int fd = socket(AF_INET, type | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		perror("connect");
		exit(1);
	}
	return fd;
}

/* Octet-counted frames in 64 KiB writes, plain or through a blocking mbedtls client. */
static void *stream_sender(void *arg)
{
	struct sender *s = arg;
	static char out[64 * 1024 + 512];
	int fd = connect_port(SOCK_STREAM, s->port);
	mbedtls_ssl_context ssl;
	mbedtls_ssl_config conf;
	mbedtls_net_context net = {.fd = fd};
	if (s->tls) {
		mbedtls_ssl_init(&ssl);
		mbedtls_ssl_config_init(&conf);
		mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT,
					    MBEDTLS_SSL_TRANSPORT_STREAM,
					    MBEDTLS_SSL_PRESET_DEFAULT);
		mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
		mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, test_drbg());
		mbedtls_ssl_setup(&ssl, &conf);
		mbedtls_ssl_set_bio(&ssl, &net, mbedtls_net_send, mbedtls_net_recv, NULL);
		if (mbedtls_ssl_handshake(&ssl)) {
			fprintf(stderr, "tls client: handshake failed\n");
			exit(1);
		}
	}
	size_t len = 0;
	char msg[MSG_LEN + 1];
	for (uint64_t i = 0; i < s->n; i++) {
		make_msg(msg, i);
		len += (size_t)sprintf(out + len, "%d ", MSG_LEN);
		memcpy(out + len, msg, MSG_LEN);
		len += MSG_LEN;
		if (len < 64 * 1024 && i + 1 < s->n)
			continue;
		for (size_t off = 0; off < len;) {
			int w = s->tls
				    ? mbedtls_ssl_write(&ssl, (unsigned char *)out + off, len - off)
				    : (int)write(fd, out + off, len - off);
			if (w <= 0) {
				fprintf(stderr, "sender: write failed\n");
				exit(1);
			}
			off += (size_t)w;
		}
		len = 0;
	}
	if (s->tls) {
		mbedtls_ssl_close_notify(&ssl);
		mbedtls_ssl_free(&ssl);
		mbedtls_ssl_config_free(&conf);
	}
	close(fd);
	atomic_store(&s->done, true);
	return NULL;
}

/* Paced: rate/1000 datagrams every millisecond, on an absolute schedule. */
static void *udp_sender(void *arg)
{
	struct sender *s = arg;
	int fd = connect_port(SOCK_DGRAM, s->port);
	char msg[MSG_LEN + 1];
	struct timespec next;
	clock_gettime(CLOCK_MONOTONIC, &next);
	uint64_t total = (uint64_t)((double)s->rate * s->seconds),
		 per_ms = (uint64_t)s->rate / 1000;
	while (s->sent < total) {
		for (uint64_t k = 0; k < per_ms && s->sent < total; k++) {
			make_msg(msg, s->sent);
			if (send(fd, msg, MSG_LEN, 0) == MSG_LEN)
				s->sent++;
		}
		next.tv_nsec += 1000000;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	close(fd);
	atomic_store(&s->done, true);
	return NULL;
}

/* --- runs ----------------------------------------------------------------------------- */

static int stream_run(const char *name, uint64_t n, struct floe_tls_server *tls)
{
	struct rig r;
	if (rig_open(&r, tls ? "tls://127.0.0.1:0" : "tcp://127.0.0.1:0", 4, 0, tls))
		return 1;
	struct sender s = {.port = floe_listener_port(r.l), .n = n, .tls = tls != NULL};
	atomic_init(&s.done, false);
	pthread_t th;
	double cpu0 = thread_cpu_s();
	pthread_create(&th, NULL, stream_sender, &s);
	while (!r.rs.closed)
		floe_loop_run_once(r.loop, 100);
	double secs = now_s() - r.rs.t_first, cpu = thread_cpu_s() - cpu0;
	pthread_join(th, NULL);
	printf("%-4s %8" PRIu64 " msgs of %d B  %10.0f msg/s  %7.1f MB/s  receiver CPU %.2f s "
	       "(%.0f msg per CPU s)  framed %" PRIu64 ", parsed %" PRIu64 "\n",
	       name, n, MSG_LEN, (double)r.rs.frames / secs,
	       (double)r.rs.frames * MSG_LEN / secs / 1e6, cpu, (double)r.rs.frames / cpu,
	       r.rs.frames, r.rs.parsed_ok);
	int bad = r.rs.frames != n || r.rs.parsed_ok != n;
	rig_close(&r);
	return bad;
}

static int udp_run(double seconds, int rate, int rcvbuf)
{
	struct rig r;
	if (rig_open(&r, "udp://127.0.0.1:0", 0, rcvbuf, NULL))
		return 1;
	struct sender s = {.port = floe_listener_port(r.l), .rate = rate, .seconds = seconds};
	atomic_init(&s.done, false);
	pthread_t th;
	double cpu0 = thread_cpu_s();
	pthread_create(&th, NULL, udp_sender, &s);
	/* Until the sender is done and then 200 ms without a datagram. */
	while (!atomic_load(&s.done) || floe_loop_run_once(r.loop, 200) > 0)
		floe_loop_run_once(r.loop, 100);
	pthread_join(th, NULL);
	floe_listener_sync_drops(r.l);
	struct floe_listener_stats st;
	floe_listener_stats(r.l, &st);
	uint64_t lost = s.sent - st.datagrams;
	double cpu = thread_cpu_s() - cpu0;
	printf("udp  %8" PRIu64
	       " sent at %d/s for %.0f s, rcvbuf %d (kernel: %d)  received %" PRIu64
	       "  kernel drops %" PRIu64 "  lost %" PRIu64 " (%.3f %%)  receiver CPU %.2f s\n",
	       s.sent, rate, seconds, rcvbuf, floe_listener_rcvbuf(r.l), st.datagrams,
	       st.kernel_drops, lost, s.sent ? 100.0 * (double)lost / (double)s.sent : 0.0, cpu);
	int bad = lost != st.kernel_drops;
	if (bad)
		fprintf(stderr, "udp: %" PRIu64 " lost but the kernel counted %" PRIu64 "\n", lost,
			st.kernel_drops);
	rig_close(&r);
	return bad;
}

/* A child process opens n connections (TLS handshakes when tls) and holds them until
 * its stdin closes; the parent serves them and measures itself. */
static pid_t hold_connections(uint16_t port, unsigned n, bool tls, int *ctl)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid != 0) {
		close(p[0]);
		*ctl = p[1];
		return pid;
	}
	close(p[1]);
	static mbedtls_ssl_context ssl[128];
	static mbedtls_net_context net[128];
	mbedtls_ssl_config conf;
	mbedtls_ssl_config_init(&conf);
	mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
				    MBEDTLS_SSL_PRESET_DEFAULT);
	mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, test_drbg());
	for (unsigned i = 0; i < n; i++) {
		int fd = connect_port(SOCK_STREAM, port);
		if (tls && i < 128) {
			net[i].fd = fd;
			mbedtls_ssl_init(&ssl[i]);
			mbedtls_ssl_setup(&ssl[i], &conf);
			mbedtls_ssl_set_bio(&ssl[i], &net[i], mbedtls_net_send, mbedtls_net_recv,
					    NULL);
			if (mbedtls_ssl_handshake(&ssl[i]))
				_exit(1);
		}
	}
	char b;
	while (read(p[0], &b, 1) > 0)
		;
	_exit(0);
}

static int idle_run(unsigned n, struct floe_tls_server *tls)
{
	uint64_t lim = 0;
	floe_fs_raise_nofile((uint64_t)n + 64, &lim);
	if (lim < (uint64_t)n + 64) {
		fprintf(stderr, "idle: RLIMIT_NOFILE %" PRIu64 " is too low for %u\n", lim, n);
		return 1;
	}
	for (int pass = 0; pass < 2; pass++) {
		unsigned count = pass == 0 ? n : 100;
		struct rig r;
		if (rig_open(&r, pass ? "tls://127.0.0.1:0" : "tcp://127.0.0.1:0", count, 0,
			     pass ? tls : NULL))
			return 1;
		long rss0 = rss_kib();
		size_t heap0 = mallinfo2().uordblks;
		int ctl = -1;
		pid_t pid = hold_connections(floe_listener_port(r.l), count, pass == 1, &ctl);
		struct floe_server_stats st = {0};
		struct floe_tls_stats ts0, ts = {0};
		floe_tls_server_stats(tls, &ts0);
		for (int i = 0; i < 3000; i++) {
			floe_loop_run_once(r.loop, 10);
			floe_server_stats(r.srv, &st);
			floe_tls_server_stats(tls, &ts);
			if (st.open == count && (!pass || ts.handshakes - ts0.handshakes == count))
				break;
		}
		long rss1 = rss_kib();
		size_t heap1 = mallinfo2().uordblks;
		if (pass == 0)
			printf(
			    "idle %u TCP connections open: RSS +%ld KiB (%ld -> %ld), server table "
			    "%zu KiB (%zu B a connection), heap +%zu B\n",
			    (unsigned)st.open, rss1 - rss0, rss0, rss1,
			    floe_server_footprint(count) / 1024,
			    floe_server_footprint(count) / count, heap1 - heap0);
		else
			printf(
			    "tls  %u idle TLS sessions: mbedtls heap %zu B a session (bound used "
			    "for budgets: FLOE_TLS_SESSION_BYTES = %u)\n",
			    (unsigned)ts.sessions, (heap1 - heap0) / count, FLOE_TLS_SESSION_BYTES);
		close(ctl);
		waitpid(pid, NULL, 0);
		while (st.open > 0 && floe_loop_run_once(r.loop, 100) >= 0)
			floe_server_stats(r.srv, &st);
		rig_close(&r);
	}
	return 0;
}

static struct floe_tls_server *make_tls(void)
{
	strcpy(dir, "/tmp/floe-bench-listen-XXXXXX");
	if (!mkdtemp(dir))
		return NULL;
	char cert[96], key[96];
	snprintf(cert, sizeof(cert), "%s/cert.pem", dir);
	snprintf(key, sizeof(key), "%s/key.pem", dir);
	struct test_key k;
	if (test_key_new(&k, key) || test_cert_write(cert, &k, "CN=bench", &k, "CN=bench", 0, 1))
		return NULL;
	test_key_free(&k);
	struct floe_tls_server *s = NULL;
	char err[256];
	struct floe_tls_opts o = {.cert_file = cert, .key_file = key};
	if (floe_tls_server_new(&o, &s, err, sizeof(err))) {
		fprintf(stderr, "tls: %s\n", err);
		return NULL;
	}
	unlink(cert);
	unlink(key);
	rmdir(dir);
	return s;
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	double seconds = argc > 2 ? atof(argv[2]) : 2;
	int rate = argc > 3 ? atoi(argv[3]) : 100000;
	unsigned idle = argc > 4 ? (unsigned)atoi(argv[4]) : 1000;
	int rcvbuf = argc > 5 ? atoi(argv[5]) : 4 << 20;
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct floe_tls_server *tls = make_tls();
	if (!tls)
		return 1;
	double load[1] = {0};
	getloadavg(load, 1);
	printf("load average %.2f on %ld CPUs\n", load[0], sysconf(_SC_NPROCESSORS_ONLN));
	int bad = stream_run("tcp", n, NULL);
	bad |= stream_run("tls", n, tls);
	bad |= udp_run(seconds, rate, rcvbuf);
	bad |= idle_run(idle, tls);
	floe_tls_server_free(tls);
	return bad;
}
