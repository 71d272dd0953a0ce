/* Tests of platform/httpd with real sockets on loopback: a published document is served
 * to GET (and its head to HEAD) with its status and type; a document never published is
 * 503, one over the buffer 500; unknown paths, other methods, malformed requests (a NUL
 * in the line among them), long lines and oversized requests get 404, 405, 400, 414 and
 * 431, each counted; a client that sends
 * nothing does not hold the others up, clients holding every slot are closed oldest
 * first for a new one, and one trickling a byte at a time is closed at the request's
 * deadline; every byte comes from the caller's allocator and
 * goes back at stop. The server runs a thread of its own (pthread_create inside
 * floe_httpd_start), so the emulated cross runs leave this test out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "formats/base/alloc.h"
#include "platform/httpd.h"
#include "platform/listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/select.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

static struct floe_alloc alloc;

static struct floe_httpd *start_with(size_t doc_cap, int64_t request_timeout_ms)
{
	static const char *const paths[] = {"/metrics", "/healthz"};
	struct floe_listen_uri u;
	assert_int_equal(floe_listen_uri_parse("tcp://127.0.0.1:0", 17, &u, NULL), 0);
	struct floe_httpd_opts o = {
	    .alloc = &alloc, .paths = paths, .npaths = 2, .doc_cap = doc_cap, .max_connections = 2};
	o.request_timeout_ms = request_timeout_ms;
	struct floe_httpd *h = NULL;
	const char *what = NULL;
	assert_int_equal(floe_httpd_start(&u, &o, &h, &what), 0);
	return h;
}

static struct floe_httpd *start(size_t doc_cap)
{
	return start_with(doc_cap, 0);
}

static int connect_to(struct floe_httpd *h)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct timeval tv = {.tv_sec = 5};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(floe_httpd_port(h))};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Sends req[0..len), reads the reply until the server closes (at most cap - 1 bytes). */
static size_t ask(struct floe_httpd *h, const char *req, size_t len, char *out, size_t cap)
{
	int fd = connect_to(h);
	assert_int_equal(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	size_t got = 0;
	ssize_t n;
	while (got + 1 < cap && (n = recv(fd, out + got, cap - 1 - got, 0)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
	return got;
}

static void status_of(struct floe_httpd *h, const char *req, const char *want)
{
	char out[4096];
	ask(h, req, strlen(req), out, sizeof(out));
	if (strncmp(out, want, strlen(want)) != 0)
		print_error("request %s: got %.60s\n", req, out);
	assert_memory_equal(out, want, strlen(want));
}

static void test_serve(void **state)
{
	(void)state;
	floe_alloc_init(&alloc, 0);
	struct floe_httpd *h = start(64);
	/* Nothing published yet: the server says it is starting. */
	status_of(h, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 503 ");
	assert_int_equal(floe_httpd_publish(h, 0, 200, "text/plain; version=0.0.4", "a 1\n", 4), 0);
	assert_int_equal(floe_httpd_publish(h, 1, 503, "text/plain", "spool full\n", 11), 0);
	char out[4096];
	const char *get = "GET /metrics?x=1 HTTP/1.1\r\nAccept: */*\r\n\r\n";
	ask(h, get, strlen(get), out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 200 OK\r\n"));
	assert_non_null(strstr(out, "Content-Type: text/plain; version=0.0.4\r\n"));
	assert_non_null(strstr(out, "Content-Length: 4\r\n"));
	assert_string_equal(strstr(out, "\r\n\r\n") + 4, "a 1\n");
	/* A bare LF ends lines too; HEAD has the head only. */
	const char *head = "HEAD /healthz HTTP/1.0\n\n";
	ask(h, head, strlen(head), out, sizeof(out));
	assert_non_null(strstr(out, "HTTP/1.1 503 Service Unavailable\r\n"));
	assert_non_null(strstr(out, "Content-Length: 11\r\n"));
	assert_string_equal(strstr(out, "\r\n\r\n") + 4, "");
	/* Too large for the buffer: 500 until a publish fits. */
	char big[65];
	memset(big, 'x', sizeof(big));
	assert_int_equal(floe_httpd_publish(h, 0, 200, "text/plain", big, sizeof(big)), -E2BIG);
	status_of(h, "GET /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 500 ");
	assert_int_equal(floe_httpd_publish(h, 0, 200, "text/plain", big, 64), 0);
	status_of(h, "GET /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 200 ");
	assert_int_equal(floe_httpd_publish(h, 2, 200, "text/plain", "", 0), -EINVAL);
	floe_httpd_stop(h);
	assert_int_equal(alloc.used, 0);
}

static void test_refusals(void **state)
{
	(void)state;
	floe_alloc_init(&alloc, 0);
	struct floe_httpd *h = start(64);
	floe_httpd_publish(h, 0, 200, "text/plain", "a\n", 2);
	status_of(h, "GET /nope HTTP/1.1\r\n\r\n", "HTTP/1.1 404 ");
	status_of(h, "POST /metrics HTTP/1.1\r\n\r\n", "HTTP/1.1 405 ");
	status_of(h, "GET /metrics\r\n\r\n", "HTTP/1.1 400 ");
	status_of(h, "GET /metrics SPDY/3\r\n\r\n", "HTTP/1.1 400 ");
	status_of(h, "\r\n\r\n", "HTTP/1.1 400 ");
	char out[4096];
	ask(h, "GET /metrics\0 HTTP/1.1\r\n\r\n", 27, out, sizeof(out));
	assert_memory_equal(out, "HTTP/1.1 400 ", 13);
	char req[FLOE_HTTPD_REQUEST_MAX + 64];
	int n = snprintf(req, sizeof(req), "GET /%0300d HTTP/1.1\r\n\r\n", 0);
	ask(h, req, (size_t)n, out, sizeof(out));
	assert_memory_equal(out, "HTTP/1.1 414 ", 13);
	/* Headers that never end within the limit: one byte over it, so that the server
	 * has read everything when it answers (unread bytes would make its close a reset). */
	memcpy(req, "GET /metrics HTTP/1.1\r\n", 23);
	memset(req + 23, 'h', sizeof(req) - 23);
	ask(h, req, FLOE_HTTPD_REQUEST_MAX + 1, out, sizeof(out));
	assert_memory_equal(out, "HTTP/1.1 431 ", 13);
	struct floe_httpd_stats st;
	floe_httpd_get_stats(h, &st);
	assert_int_equal(st.bad, 7);
	assert_int_equal(st.requests, 8);
	floe_httpd_stop(h);
	assert_int_equal(alloc.used, 0);
}

/* One of two connection slots held by a client that sends nothing: the other serves. */
static void test_silent_client(void **state)
{
	(void)state;
	floe_alloc_init(&alloc, 0);
	struct floe_httpd *h = start(64);
	floe_httpd_publish(h, 1, 200, "text/plain", "ok\n", 3);
	int idle = connect_to(h);
	status_of(h, "GET /healthz HTTP/1.1\r\n\r\n", "HTTP/1.1 200 ");
	status_of(h, "GET /healthz HTTP/1.1\r\n\r\n", "HTTP/1.1 200 ");
	close(idle);
	floe_httpd_stop(h);
	floe_httpd_stop(NULL);
	assert_int_equal(alloc.used, 0);
}

/* True once the server closed fd (end of stream or a reset) with no reply. */
static bool closed_unanswered(int fd)
{
	char b[64];
	ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK);
}

/* Every slot held by a client that sends half a request: a new connection (a liveness
 * probe) closes the oldest instead of being refused, and is answered. */
static void test_full_listener(void **state)
{
	(void)state;
	floe_alloc_init(&alloc, 0);
	struct floe_httpd *h = start(64);
	floe_httpd_publish(h, 1, 200, "text/plain", "ok\n", 3);
	int slow[2];
	for (int i = 0; i < 2; i++) {
		slow[i] = connect_to(h);
		assert_int_equal(send(slow[i], "GET /healthz", 12, MSG_NOSIGNAL), 12);
	}
	for (int i = 0; i < 3; i++)
		status_of(h, "GET /healthz HTTP/1.1\r\n\r\n", "HTTP/1.1 200 ");
	/* The first probe took the oldest slow client's slot: it was closed, unanswered
	 * (the blocking read sees the end, with a 5 s receive timeout as a backstop). */
	char b[16];
	assert_true(recv(slow[0], b, sizeof(b), 0) <= 0);
	struct floe_httpd_stats st;
	floe_httpd_get_stats(h, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.requests, 3);
	close(slow[0]);
	close(slow[1]);
	floe_httpd_stop(h);
	assert_int_equal(alloc.used, 0);
}

/* A client trickling a header byte every 20 ms, well within the idle timeout (10 s),
 * is closed once the whole request's deadline (200 ms here) has passed: it cannot hold
 * its slot by sending slowly. The client gives up after 25 s of trickling. */
static void test_trickling_client(void **state)
{
	(void)state;
	floe_alloc_init(&alloc, 0);
	struct floe_httpd *h = start_with(64, 200);
	floe_httpd_publish(h, 1, 200, "text/plain", "ok\n", 3);
	int fd = connect_to(h);
	bool closed = false;
	for (int i = 0; i < 1250 && !closed; i++) {
		if (send(fd, "X", 1, MSG_NOSIGNAL) != 1) {
			closed = true;
			break;
		}
		struct timeval tv = {.tv_usec = 20000};
		fd_set rd;
		FD_ZERO(&rd);
		FD_SET(fd, &rd);
		if (select(fd + 1, &rd, NULL, NULL, &tv) > 0)
			closed = closed_unanswered(fd);
	}
	assert_true(closed);
	close(fd);
	struct floe_httpd_stats st;
	floe_httpd_get_stats(h, &st);
	assert_int_equal(st.timed_out, 1);
	assert_int_equal(st.requests, 0);
	floe_httpd_stop(h);
	assert_int_equal(alloc.used, 0);
}

/* Bad options and a budget too small: refused, nothing kept. */
static void test_start_failures(void **state)
{
	(void)state;
	struct floe_listen_uri u;
	assert_int_equal(floe_listen_uri_parse("tcp://127.0.0.1:0", 17, &u, NULL), 0);
	static const char *const bad[] = {"metrics"};
	struct floe_httpd_opts o = {.alloc = &alloc, .paths = bad, .npaths = 1, .doc_cap = 64};
	struct floe_httpd *h = NULL;
	const char *what = NULL;
	floe_alloc_init(&alloc, 0);
	assert_int_equal(floe_httpd_start(&u, &o, &h, &what), -EINVAL);
	assert_int_equal(alloc.used, 0);
	static const char *const good[] = {"/metrics"};
	o.paths = good;
	floe_alloc_init(&alloc, 1024);
	o.doc_cap = 4096;
	assert_int_not_equal(floe_httpd_start(&u, &o, &h, &what), 0);
	assert_int_equal(alloc.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_serve),
	    cmocka_unit_test(test_refusals),
	    cmocka_unit_test(test_silent_client),
	    cmocka_unit_test(test_full_listener),
	    cmocka_unit_test(test_trickling_client),
	    cmocka_unit_test(test_start_failures),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
