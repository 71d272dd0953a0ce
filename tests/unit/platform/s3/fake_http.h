/* A fake HTTP/1.1 server for the platform tests, run in a forked child on 127.0.0.1
 * (ephemeral port): it answers scripted responses and records every request so that the
 * test can check what floe actually sent. Included by test_s3.c and test_s3_credprov.c
 * (test code only; each test program is one translation unit). */
#ifndef FLOE_TEST_FAKE_HTTP_H
#define FLOE_TEST_FAKE_HTTP_H

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define T0 INT64_C(1440938160) /* 2015-08-30 12:36:00 UTC, our fake "now" */

struct canned {
	int status;
	const char *headers; /* extra "Name: value\r\n" lines */
	const char *body;
	bool drop;   /* close the connection without answering */
	bool stall;  /* never answer: hold the connection until the client hangs up */
	int drip_ms; /* send the body one byte every drip_ms milliseconds */
};

#define R(s, h, b)                                                                                 \
	{                                                                                          \
		(s), (h), (b), false, false, 0                                                     \
	}
#define DROP                                                                                       \
	{                                                                                          \
		0, NULL, NULL, true, false, 0                                                      \
	}
#define STALL                                                                                      \
	{                                                                                          \
		0, NULL, NULL, false, true, 0                                                      \
	}
#define DRIP(s, b, ms)                                                                             \
	{                                                                                          \
		(s), NULL, (b), false, false, (ms)                                                 \
	}

struct server {
	pid_t pid;
	int port;
	char log[64];
};

/* ---- the child ---------------------------------------------------------------------- */

static bool read_request(int fd, char *buf, size_t cap, size_t *head_len, size_t *total)
{
	size_t len = 0;
	char *end = NULL;
	while (!(end = memmem(buf, len, "\r\n\r\n", 4))) {
		if (len == cap)
			return false;
		ssize_t n = read(fd, buf + len, cap - len);
		if (n <= 0)
			return false;
		len += (size_t)n;
	}
	*head_len = (size_t)(end - buf) + 4;
	size_t clen = 0;
	for (char *p = buf; p < buf + *head_len; p = strstr(p, "\r\n") + 2)
		if (strncasecmp(p, "content-length:", 15) == 0)
			clen = strtoul(p + 15, NULL, 10);
	if (memmem(buf, *head_len, "Expect: 100-continue", 20) && len == *head_len) {
		const char *cont = "HTTP/1.1 100 Continue\r\n\r\n";
		if (write(fd, cont, strlen(cont)) < 0)
			return false;
	}
	while (len < *head_len + clen) {
		if (len == cap)
			return false;
		ssize_t n = read(fd, buf + len, cap - len);
		if (n <= 0)
			return false;
		len += (size_t)n;
	}
	*total = *head_len + clen;
	return true;
}

/* Holds a connection without answering until the client closes it (or 15 s pass). */
static void hold(int fd)
{
	char tmp[4096];
	struct pollfd p = {.fd = fd, .events = POLLIN};
	for (int i = 0; i < 150 && poll(&p, 1, 100) >= 0; i++)
		if ((p.revents & POLLIN) && read(fd, tmp, sizeof(tmp)) <= 0)
			return;
}

/* Sends the body a byte at a time, drip_ms apart; false once the client has gone. */
static bool drip(int fd, const char *body, int drip_ms)
{
	for (size_t i = 0; body[i]; i++) {
		if (write(fd, body + i, 1) != 1)
			return false;
		usleep((useconds_t)drip_ms * 1000);
	}
	return true;
}

/* Sends the scripted answer; false when the connection is to be closed. */
static bool respond(int fd, const struct canned *c)
{
	if (c->drop)
		return false;
	if (c->stall) {
		hold(fd);
		return false;
	}
	const char *body = c->body ? c->body : "";
	char head[1024];
	bool has_len = c->headers && strstr(c->headers, "Content-Length");
	int hl = snprintf(head, sizeof(head), "HTTP/1.1 %d Fake\r\n%s", c->status,
			  c->headers ? c->headers : "");
	if (!has_len)
		hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "Content-Length: %zu\r\n",
			       strlen(body));
	hl += snprintf(head + hl, sizeof(head) - (size_t)hl, "\r\n");
	if (c->drip_ms)
		return write(fd, head, (size_t)hl) == hl && drip(fd, body, c->drip_ms);
	return write(fd, head, (size_t)hl) == hl &&
	       write(fd, body, strlen(body)) == (ssize_t)strlen(body);
}

static void child(int lfd, const char *log_path, const struct canned *script, size_t n)
{
	alarm(20);		  /* never outlive a broken test */
	signal(SIGPIPE, SIG_IGN); /* a client that cut a drip: write fails instead */
	FILE *log = fopen(log_path, "w");
	size_t cap = 8 << 20;
	char *buf = malloc(cap);
	size_t i = 0;
	if (!log || !buf)
		_exit(2);
	/* Several connections may be open (curl keeps one alive and opens fresh ones for
	 * conditional writes): poll them all and serve whichever sends a request. */
	struct pollfd fds[16];
	size_t nfds = 1;
	fds[0] = (struct pollfd){.fd = lfd, .events = POLLIN};
	while (i < n) {
		if (poll(fds, nfds, -1) < 0)
			_exit(3);
		if ((fds[0].revents & POLLIN) && nfds < 16) {
			int fd = accept(lfd, NULL, NULL);
			if (fd < 0)
				_exit(3);
			fds[nfds++] = (struct pollfd){.fd = fd, .events = POLLIN};
		}
		for (size_t k = 1; k < nfds && i < n; k++) {
			if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			int fd = fds[k].fd;
			size_t head_len, total;
			bool keep = read_request(fd, buf, cap, &head_len, &total);
			if (keep) {
				fprintf(log, "REQ %zu %zu\n", head_len, total - head_len);
				fwrite(buf, 1, total, log);
				fflush(log);
				keep = respond(fd, &script[i++]);
			}
			if (!keep) {
				close(fd);
				fds[k--] = fds[--nfds];
			}
		}
	}
	fclose(log);
	_exit(0);
}

static void server_start(struct server *sv, const struct canned *script, size_t n)
{
	int lfd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(lfd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(lfd, 8), 0);
	socklen_t al = sizeof(a);
	assert_int_equal(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	sv->port = ntohs(a.sin_port);
	static int serial;
	snprintf(sv->log, sizeof(sv->log), "/tmp/floe-test-http-%d-%d.log", (int)getpid(), serial++);
	fflush(NULL);
	sv->pid = fork();
	assert_true(sv->pid >= 0);
	if (sv->pid == 0)
		child(lfd, sv->log, script, n);
	close(lfd);
}

/* ---- what the server saw ------------------------------------------------------------- */

struct seen {
	char method[16];
	char target[2048];
	char head[8192];
	char *body;
	size_t body_len;
};

/* Waits for the child (which exits after its last scripted answer) and reads its log. */
static size_t server_finish(struct server *sv, struct seen *out, size_t max)
{
	int st = 0;
	assert_int_equal(waitpid(sv->pid, &st, 0), sv->pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	FILE *f = fopen(sv->log, "r");
	assert_non_null(f);
	size_t n = 0;
	size_t hl, bl;
	while (n < max && fscanf(f, "REQ %zu %zu\n", &hl, &bl) == 2) {
		struct seen *s = &out[n++];
		assert_true(hl < sizeof(s->head));
		assert_int_equal(fread(s->head, 1, hl, f), hl);
		s->head[hl] = '\0';
		s->body = malloc(bl + 1);
		assert_int_equal(fread(s->body, 1, bl, f), bl);
		s->body[bl] = '\0';
		s->body_len = bl;
		assert_int_equal(sscanf(s->head, "%15s %2047s", s->method, s->target), 2);
	}
	fclose(f);
	unlink(sv->log);
	return n;
}

static void seen_free(struct seen *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].body);
}

/* Value of header name (case-insensitive) into out; false if absent. */
static bool header(const struct seen *s, const char *name, char *out, size_t cap)
{
	size_t nl = strlen(name);
	for (const char *p = strstr(s->head, "\r\n") + 2; *p && strncmp(p, "\r\n", 2) != 0;
	     p = strstr(p, "\r\n") + 2) {
		if (strncasecmp(p, name, nl) == 0 && p[nl] == ':') {
			const char *v = p + nl + 1;
			while (*v == ' ')
				v++;
			size_t vl = (size_t)(strstr(v, "\r\n") - v);
			assert_true(vl < cap);
			memcpy(out, v, vl);
			out[vl] = '\0';
			return true;
		}
	}
	return false;
}

#endif
