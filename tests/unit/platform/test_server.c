/* Tests of platform/server with real sockets: every plain transport (TCP over IPv4 and
 * IPv6, unix stream, UDP, unix datagram) delivers what a client sends; pausing a
 * connection or the whole server stops reading until resumed, and a paused sender's
 * writes block; idle connections close on an injected clock; max_connections refuses
 * and counts, and with evict_idle_ms a connection idle that long gives its slot to a
 * new one (never a paused one); EMFILE rests the listener instead of spinning; closes
 * from callbacks; no heap allocation per connection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/listen.h"
#include "platform/loop.h"
#include "platform/server.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static char dir[64];
static char rbuf[4096];

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(p);
}

static int setup(void **state)
{
	strcpy(dir, "/tmp/floe-test-server-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int64_t fake_now = 1000;
static bool use_fake;
static int64_t clock_ms(void *arg)
{
	if (use_fake)
		return fake_now;
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* What the callbacks saw. */
struct sink {
	char data[1 << 16];
	size_t len;
	int opens, closes, dgrams;
	enum floe_conn_close why;
	struct floe_conn *last;
	bool pause_on_data, close_on_data;
	int refuse;
	struct floe_server *srv;
};

static int on_open(void *arg, struct floe_conn *c)
{
	struct sink *k = arg;
	k->opens++;
	k->last = c;
	return k->refuse;
}

static void on_data(void *arg, struct floe_conn *c, const char *p, size_t n)
{
	struct sink *k = arg;
	assert_true(k->len + n <= sizeof(k->data));
	memcpy(k->data + k->len, p, n);
	k->len += n;
	k->last = c;
	if (k->pause_on_data)
		floe_conn_pause(c);
	if (k->close_on_data) {
		floe_conn_close(c);
		floe_conn_close(c); /* twice is fine */
	}
}

static void on_close(void *arg, struct floe_conn *c, enum floe_conn_close why)
{
	struct sink *k = arg;
	k->closes++;
	k->why = why;
	floe_conn_close(c); /* a no-op from on_close */
	floe_conn_resume(c);
}

static void on_datagram(void *arg, const struct floe_dgram *d)
{
	struct sink *k = arg;
	memcpy(k->data + k->len, d->p, d->len);
	k->len += d->len;
	k->dgrams++;
}

static struct floe_server_cbs cbs_of(struct sink *k)
{
	struct floe_server_cbs c = {.arg = k,
				    .on_open = on_open,
				    .on_data = on_data,
				    .on_close = on_close,
				    .on_datagram = on_datagram};
	return c;
}

struct rig {
	struct floe_loop *loop;
	struct floe_listener *l;
	struct floe_server *srv;
	void *mem;
	struct sink k;
};

static struct rig *rig_new(const char *uri, const struct floe_server_opts *o)
{
	struct rig *r = calloc(1, sizeof(*r));
	assert_non_null(r);
	struct floe_loop_opts lo = {
	    .clock_ms = clock_ms, .buffer = rbuf, .buffer_len = sizeof(rbuf)};
	assert_int_equal(floe_loop_new(&lo, &r->loop), 0);
	struct floe_listen_uri u;
	assert_int_equal(floe_listen_uri_parse(uri, strlen(uri), &u, NULL), 0);
	const char *what = NULL;
	int rc = floe_listener_open(&u, NULL, &r->l, &what);
	if (rc)
		fail_msg("%s: %s: %s", uri, what, strerror(-rc));
	size_t need = floe_server_footprint(o->max_connections);
	r->mem = malloc(need);
	struct floe_server_cbs cbs = cbs_of(&r->k);
	assert_int_equal(floe_server_init(r->mem, need, r->loop, r->l, o, &cbs, &r->srv), 0);
	r->k.srv = r->srv;
	return r;
}

static void rig_free(struct rig *r)
{
	floe_server_fini(r->srv);
	floe_listener_close(r->l);
	floe_loop_free(r->loop);
	free(r->mem);
	free(r);
}

/* Runs rounds until done(r) holds: each round waits for events (not for time), at most
 * 200 rounds of 50 ms. */
static void spin(struct rig *r, bool (*done)(struct rig *r, size_t arg), size_t arg)
{
	for (int i = 0; i < 200; i++) {
		if (done(r, arg))
			return;
		assert_true(floe_loop_run_once(r->loop, 50) >= 0);
	}
	fail_msg("the loop did not get there");
}

static bool has_bytes(struct rig *r, size_t n)
{
	return r->k.len >= n;
}
static bool has_closes(struct rig *r, size_t n)
{
	return (size_t)r->k.closes >= n;
}
static bool has_opens(struct rig *r, size_t n)
{
	return (size_t)r->k.opens >= n;
}
static bool has_rejects(struct rig *r, size_t n)
{
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	return st.rejected >= n;
}

static int client_inet(int family, uint16_t port)
{
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	union floe_sockaddr a = {0};
	socklen_t len = sizeof(a.in);
	if (family == AF_INET) {
		a.in.sin_family = AF_INET;
		a.in.sin_port = htons(port);
		a.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else {
		a.in6.sin6_family = AF_INET6;
		a.in6.sin6_port = htons(port);
		a.in6.sin6_addr = in6addr_loopback;
		len = sizeof(a.in6);
	}
	assert_int_equal(connect(fd, &a.sa, len), 0);
	return fd;
}

static int client_unix(const char *path, int type)
{
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
	struct sockaddr_un sun = {.sun_family = AF_UNIX};
	strcpy(sun.sun_path, path);
	assert_int_equal(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	return fd;
}

static void put(int fd, const char *s)
{
	assert_int_equal(write(fd, s, strlen(s)), (ssize_t)strlen(s));
}

static const struct floe_server_opts stream_opts = {.max_connections = 8};

static void stream_roundtrip(const char *uri, int fd_family, const char *path)
{
	struct rig *r = rig_new(uri, &stream_opts);
	int c = path ? client_unix(path, SOCK_STREAM)
		     : client_inet(fd_family, floe_listener_port(r->l));
	const char *msg = "13 <13>1 - - - -<14>second line\n";
	size_t n = strlen(msg);
	put(c, msg);
	close(c);
	spin(r, has_closes, 1);
	assert_int_equal(r->k.opens, 1);
	assert_int_equal(r->k.why, FLOE_CLOSE_EOF);
	assert_int_equal(r->k.len, n);
	assert_memory_equal(r->k.data, msg, n);
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.accepted, 1);
	assert_int_equal(st.open, 0);
	assert_int_equal(st.bytes, n);
	rig_free(r);
}

static void test_stream_transports(void **state)
{
	stream_roundtrip("tcp://127.0.0.1:0", AF_INET, NULL);
	stream_roundtrip("tcp://[::1]:0", AF_INET6, NULL);
	char uri[128], path[100];
	snprintf(path, sizeof(path), "%s/s.sock", dir);
	snprintf(uri, sizeof(uri), "unix+stream://%s", path);
	stream_roundtrip(uri, 0, path);
}

static void test_dgram_transports(void **state)
{
	struct floe_server_opts o = {0};
	struct rig *r = rig_new("udp://127.0.0.1:0", &o);
	int c = socket(AF_INET, SOCK_DGRAM, 0);
	union floe_sockaddr a = {0};
	a.in.sin_family = AF_INET;
	a.in.sin_port = htons(floe_listener_port(r->l));
	a.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(sendto(c, "<13>a", 5, 0, &a.sa, sizeof(a.in)), 5);
	assert_int_equal(sendto(c, "<13>b", 5, 0, &a.sa, sizeof(a.in)), 5);
	spin(r, has_bytes, 10);
	assert_int_equal(r->k.dgrams, 2);
	assert_memory_equal(r->k.data, "<13>a<13>b", 10);
	/* Paused, datagrams stay in the kernel; resumed, they come. */
	floe_server_pause(r->srv, true);
	assert_int_equal(sendto(c, "<13>c", 5, 0, &a.sa, sizeof(a.in)), 5);
	for (int i = 0; i < 3; i++)
		assert_int_equal(floe_loop_run_once(r->loop, 0), 0);
	floe_server_pause(r->srv, false);
	spin(r, has_bytes, 15);
	close(c);
	rig_free(r);

	char uri[128], path[100];
	snprintf(path, sizeof(path), "%s/log.sock", dir);
	snprintf(uri, sizeof(uri), "unix://%s", path);
	r = rig_new(uri, &o);
	c = client_unix(path, SOCK_DGRAM);
	put(c, "<13>Jun 14 15:16:01 sshd[1]: x");
	spin(r, has_bytes, 30);
	assert_int_equal(r->k.dgrams, 1);
	close(c);
	rig_free(r);
}

/* A paused connection is not read; its sender fills the socket buffers and then cannot
 * write more (it blocks, or gets EAGAIN): backpressure reaches it. */
static void test_pause_resume(void **state)
{
	struct rig *r = rig_new("tcp://127.0.0.1:0", &stream_opts);
	int c = client_inet(AF_INET, floe_listener_port(r->l));
	r->k.pause_on_data = true;
	put(c, "a");
	spin(r, has_bytes, 1);
	assert_true(floe_conn_paused(r->k.last));
	put(c, "b");
	for (int i = 0; i < 3; i++)
		assert_int_equal(floe_loop_run_once(r->loop, 0), 0);
	assert_int_equal(r->k.len, 1);
	fcntl(c, F_SETFL, O_NONBLOCK);
	static char chunk[65536];
	memset(chunk, 'x', sizeof(chunk));
	size_t queued = 0;
	for (int i = 0; i < 1000; i++) {
		ssize_t w = write(c, chunk, sizeof(chunk));
		if (w < 0) {
			assert_int_equal(errno, EAGAIN);
			break;
		}
		queued += (size_t)w;
	}
	assert_true(queued > 0 && queued < 1000 * sizeof(chunk));
	/* Resumed: everything queued arrives, in order. */
	r->k.pause_on_data = false;
	floe_conn_resume(r->k.last);
	r->k.len = 0;
	struct sink *k = &r->k;
	size_t total = 1 + queued;
	size_t seen = 0;
	for (int i = 0; i < 2000 && seen < total; i++) {
		assert_true(floe_loop_run_once(r->loop, 50) >= 0);
		seen += k->len;
		if (seen == k->len && k->len)
			assert_int_equal(k->data[0], 'b');
		k->len = 0;
	}
	assert_int_equal(seen, total);
	/* The whole server pauses too: no accept, no read. */
	floe_server_pause(r->srv, true);
	int c2 = client_inet(AF_INET, floe_listener_port(r->l));
	put(c, "z");
	for (int i = 0; i < 3; i++)
		assert_int_equal(floe_loop_run_once(r->loop, 0), 0);
	assert_int_equal(r->k.opens, 1);
	floe_server_pause(r->srv, false);
	spin(r, has_opens, 2);
	spin(r, has_bytes, 1);
	close(c);
	close(c2);
	spin(r, has_closes, 2);
	rig_free(r);
}

/* idle_timeout on the injected clock: reads push it back; a paused connection is never
 * idle; a silent one closes. */
static void test_idle_timeout(void **state)
{
	use_fake = true;
	fake_now = 1000;
	struct floe_server_opts o = {.max_connections = 4, .idle_timeout_ms = 5000};
	struct rig *r = rig_new("tcp://127.0.0.1:0", &o);
	int c = client_inet(AF_INET, floe_listener_port(r->l));
	spin(r, has_opens, 1);
	fake_now = 5999;
	assert_int_equal(floe_loop_run_once(r->loop, 0), 0);
	put(c, "x");
	spin(r, has_bytes, 1);
	fake_now = 10998; /* 4999 ms after the read */
	floe_loop_run_once(r->loop, 0);
	assert_int_equal(r->k.closes, 0);
	/* Paused for long: not idle. */
	floe_conn_pause(r->k.last);
	fake_now = 100000;
	floe_loop_run_once(r->loop, 0);
	assert_int_equal(r->k.closes, 0);
	floe_conn_resume(r->k.last);
	fake_now = 104999;
	floe_loop_run_once(r->loop, 0);
	assert_int_equal(r->k.closes, 0);
	fake_now = 105000;
	floe_loop_run_once(r->loop, 0);
	assert_int_equal(r->k.closes, 1);
	assert_int_equal(r->k.why, FLOE_CLOSE_IDLE);
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.closed_idle, 1);
	/* The client sees the close. */
	char b;
	assert_int_equal(read(c, &b, 1), 0);
	close(c);
	rig_free(r);
	use_fake = false;
}

/* Beyond max_connections a connection is accepted and closed at once, and counted; the
 * others keep working, and a freed slot takes the next one. */
static void test_max_connections(void **state)
{
	struct floe_server_opts o = {.max_connections = 2};
	struct rig *r = rig_new("tcp://127.0.0.1:0", &o);
	uint16_t port = floe_listener_port(r->l);
	int a = client_inet(AF_INET, port), b = client_inet(AF_INET, port);
	spin(r, has_opens, 2);
	int c = client_inet(AF_INET, port);
	spin(r, has_rejects, 1);
	char x;
	ssize_t n = read(c, &x, 1);
	assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
	close(c);
	put(a, "A");
	put(b, "B");
	spin(r, has_bytes, 2);
	close(a);
	spin(r, has_closes, 1);
	int d = client_inet(AF_INET, port);
	spin(r, has_opens, 3);
	put(d, "D");
	spin(r, has_bytes, 3);
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.accepted, 3);
	assert_int_equal(st.rejected, 1);
	assert_int_equal(st.open, 2);
	close(b);
	close(d);
	rig_free(r);
}

/* With evict_idle_ms and every slot taken, the connection that has sent nothing for
 * longest gives its slot to a new one, if it has been idle that long; otherwise the new
 * one is refused. A paused connection is never taken for idle. */
static void test_evict_idle(void **state)
{
	use_fake = true;
	fake_now = 1000;
	struct floe_server_opts o = {
	    .max_connections = 2, .idle_timeout_ms = 3600000, .evict_idle_ms = 60000};
	struct rig *r = rig_new("tcp://127.0.0.1:0", &o);
	uint16_t port = floe_listener_port(r->l);
	int a = client_inet(AF_INET, port), b = client_inet(AF_INET, port);
	spin(r, has_opens, 2);
	/* 29 s on: nobody idle for a minute, the new one is refused. */
	fake_now = 30000;
	int c = client_inet(AF_INET, port);
	spin(r, has_rejects, 1);
	close(c);
	fake_now = 50000;
	put(a, "A");
	spin(r, has_bytes, 1);
	/* 61 s after b's accept (it never sent), 12 s after a's byte: b goes. */
	fake_now = 62000;
	int d = client_inet(AF_INET, port);
	spin(r, has_opens, 3);
	spin(r, has_closes, 1);
	assert_int_equal(r->k.why, FLOE_CLOSE_EVICTED);
	char x;
	ssize_t n = read(b, &x, 1);
	assert_true(n == 0 || (n < 0 && errno == ECONNRESET));
	close(b);
	/* a and d both paused for long: neither is idle, the next one is refused. */
	floe_conn_pause(r->k.last); /* d's, by its accept */
	put(a, "B");
	spin(r, has_bytes, 2);
	floe_conn_pause(r->k.last); /* a's, by its byte */
	fake_now = 500000;
	int e = client_inet(AF_INET, port);
	spin(r, has_rejects, 2);
	close(e);
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.rejected, 2);
	assert_int_equal(st.open, 2);
	close(a);
	close(d);
	rig_free(r);
	use_fake = false;
}

/* Closing from on_data ends the connection after the callback; on_open refusing closes
 * it without an on_close. */
static void test_close_from_callbacks(void **state)
{
	struct rig *r = rig_new("tcp://127.0.0.1:0", &stream_opts);
	r->k.close_on_data = true;
	int c = client_inet(AF_INET, floe_listener_port(r->l));
	put(c, "bye");
	spin(r, has_closes, 1);
	assert_int_equal(r->k.why, FLOE_CLOSE_LOCAL);
	char x;
	assert_true(read(c, &x, 1) <= 0);
	close(c);
	r->k.refuse = -1;
	c = client_inet(AF_INET, floe_listener_port(r->l));
	spin(r, has_rejects, 1);
	assert_int_equal(r->k.closes, 1);
	close(c);
	/* fini closes what is open, with on_close. */
	r->k.refuse = 0;
	r->k.close_on_data = false;
	c = client_inet(AF_INET, floe_listener_port(r->l));
	spin(r, has_opens, 3);
	floe_server_fini(r->srv);
	assert_int_equal(r->k.closes, 2);
	r->srv = NULL;
	close(c);
	rig_free(r);
}

/* Out of descriptors, the listener rests for FLOE_SERVER_ACCEPT_BACKOFF_MS instead of
 * waking the loop again and again for the connection it cannot take. */
static void test_emfile_backoff(void **state)
{
	use_fake = true;
	fake_now = 1000;
	struct rig *r = rig_new("tcp://127.0.0.1:0", &stream_opts);
	struct rlimit old, low;
	assert_int_equal(getrlimit(RLIMIT_NOFILE, &old), 0);
	int c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int fill[256], nfill = 0;
	low = old;
	low.rlim_cur = (rlim_t)dup(0) + 1; /* the first free descriptor is the last allowed */
	close((int)low.rlim_cur - 1);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &low), 0);
	while (nfill < 256 && (fill[nfill] = dup(0)) >= 0)
		nfill++;
	assert_int_equal(errno, EMFILE);
	union floe_sockaddr a = {0};
	a.in.sin_family = AF_INET;
	a.in.sin_port = htons(floe_listener_port(r->l));
	a.in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(c, &a.sa, sizeof(a.in)), 0);
	assert_int_equal(floe_loop_run_once(r->loop, 1000), 1);
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.accept_errors, 1);
	/* Resting: the pending connection calls nothing. */
	for (int i = 0; i < 5; i++)
		assert_int_equal(floe_loop_run_once(r->loop, 0), 0);
	while (nfill > 0)
		close(fill[--nfill]);
	assert_int_equal(setrlimit(RLIMIT_NOFILE, &old), 0);
	fake_now += FLOE_SERVER_ACCEPT_BACKOFF_MS;
	spin(r, has_opens, 1);
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.accept_errors, 1);
	assert_int_equal(st.accepted, 1);
	close(c);
	rig_free(r);
	use_fake = false;
}

/* Connections cost their slot and socket: accepting and reading 100 of them takes
 * nothing from the heap. */
static void test_no_heap_per_connection(void **state)
{
	struct floe_server_opts o = {.max_connections = 100};
	struct rig *r = rig_new("tcp://127.0.0.1:0", &o);
	int c[100];
	c[0] = client_inet(AF_INET, floe_listener_port(r->l));
	put(c[0], "warm");
	spin(r, has_bytes, 4);
	struct mallinfo2 before = mallinfo2();
	for (int i = 1; i < 100; i++) {
		c[i] = client_inet(AF_INET, floe_listener_port(r->l));
		put(c[i], "x");
	}
	spin(r, has_bytes, 4 + 99);
	struct mallinfo2 after = mallinfo2();
	assert_int_equal(after.uordblks, before.uordblks);
	struct floe_server_stats st;
	floe_server_stats(r->srv, &st);
	assert_int_equal(st.open, 100);
	for (int i = 0; i < 100; i++)
		close(c[i]);
	spin(r, has_closes, 100);
	rig_free(r);
}

static void test_bad_init(void **state)
{
	struct floe_loop *loop = NULL;
	assert_int_equal(floe_loop_new(NULL, &loop), 0); /* no shared buffer */
	struct floe_listen_uri u;
	assert_int_equal(floe_listen_uri_parse("tls://127.0.0.1:0", 17, &u, NULL), 0);
	struct floe_listener *l = NULL;
	assert_int_equal(floe_listener_open(&u, NULL, &l, NULL), 0);
	struct sink k = {0};
	struct floe_server_cbs cbs = cbs_of(&k);
	struct floe_server_opts o = {.max_connections = 1};
	size_t need = floe_server_footprint(1);
	void *mem = malloc(need);
	struct floe_server *s = NULL;
	assert_int_equal(floe_server_init(mem, need, loop, l, &o, &cbs, &s), -EINVAL);
	floe_loop_free(loop);
	struct floe_loop_opts lo = {.buffer = rbuf, .buffer_len = sizeof(rbuf)};
	assert_int_equal(floe_loop_new(&lo, &loop), 0);
	/* A TLS listener needs a TLS server; too little memory; no connections. */
	assert_int_equal(floe_server_init(mem, need, loop, l, &o, &cbs, &s), -EINVAL);
	assert_int_equal(floe_server_footprint(UINT32_MAX) == 0 || sizeof(size_t) > 4, 1);
	floe_listener_close(l);
	assert_int_equal(floe_listen_uri_parse("tcp://127.0.0.1:0", 17, &u, NULL), 0);
	assert_int_equal(floe_listener_open(&u, NULL, &l, NULL), 0);
	assert_int_equal(floe_server_init(mem, need - 1, loop, l, &o, &cbs, &s), -EINVAL);
	o.max_connections = 0;
	assert_int_equal(floe_server_init(mem, need, loop, l, &o, &cbs, &s), -EINVAL);
	floe_listener_close(l);
	floe_loop_free(loop);
	free(mem);
	floe_server_fini(NULL);
}

int main(void)
{
#define T(f) cmocka_unit_test_setup_teardown(f, setup, teardown)
	const struct CMUnitTest tests[] = {
	    T(test_stream_transports),
	    T(test_dgram_transports),
	    cmocka_unit_test(test_pause_resume),
	    cmocka_unit_test(test_idle_timeout),
	    cmocka_unit_test(test_max_connections),
	    cmocka_unit_test(test_evict_idle),
	    cmocka_unit_test(test_close_from_callbacks),
	    cmocka_unit_test(test_emfile_backoff),
	    cmocka_unit_test(test_no_heap_per_connection),
	    cmocka_unit_test(test_bad_init),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
