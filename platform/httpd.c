/* The status pages' HTTP server (httpd.h): a thread running an event loop with one
 * stream server on it, a request reader per connection slot, and documents copied in by
 * the caller under a mutex and copied out into the reply buffer under it. */
#include "httpd.h"

#include "listen.h"
#include "loop.h"
#include "owner.h"
#include "server.h"

#include "formats/base/alloc.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define READ_BUFFER 4096
#define REPLY_HEAD 256 /* the status line and headers of a reply */

struct doc {
	char path[FLOE_HTTPD_PATH_MAX];
	char *body; /* doc_cap bytes */
	size_t len;
	int status; /* 0: never published */
	bool too_big;
	char ctype[64];
	int64_t at_ms; /* monotonic, when it was published */
};

/* A connection slot: its request reader. */
struct req {
	bool used;
	struct floe_httpd_req r;
};

struct floe_httpd {
	struct floe_alloc *a;
	struct floe_listener *l;
	struct floe_loop *loop;
	struct floe_server *srv;
	void *srv_mem;
	char *rbuf;
	struct req *reqs;
	unsigned max_conn;
	int write_timeout_ms;
	int64_t max_age_ms;
	pthread_t thread;
	bool running;
	pthread_mutex_t mu; /* the documents and the stats */
	struct doc docs[FLOE_HTTPD_DOCS_MAX];
	size_t ndocs, doc_cap;
	char *reply; /* REPLY_HEAD + doc_cap: the thread's own */
	struct floe_httpd_stats st;
};

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static const char *reason(int status)
{
	switch (status) {
	case 200:
		return "OK";
	case 400:
		return "Bad Request";
	case 404:
		return "Not Found";
	case 405:
		return "Method Not Allowed";
	case 414:
		return "URI Too Long";
	case 431:
		return "Request Header Fields Too Large";
	case 500:
		return "Internal Server Error";
	case 503:
		return "Service Unavailable";
	default:
		return "Status";
	}
}

/* Writes the reply (status line, headers, and the body unless head) and closes c. The
 * body is in h->reply after REPLY_HEAD bytes. */
static void reply(struct floe_httpd *h, struct floe_conn *c, int status, const char *ctype,
		  size_t body_len, bool head)
{
	char hdr[REPLY_HEAD];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
			 status, reason(status), ctype, body_len);
	if (n < 0 || (size_t)n >= sizeof(hdr))
		n = 0;
	/* The head goes right before the body, so that one write sends both. */
	char *start = h->reply + REPLY_HEAD - (size_t)n;
	memcpy(start, hdr, (size_t)n);
	int rc = floe_conn_write(c, start, (size_t)n + (head ? 0 : body_len), h->write_timeout_ms);
	pthread_mutex_lock(&h->mu);
	h->st.requests++;
	if (rc)
		h->st.write_errors++;
	if (status >= 400 && status != 404 && status < 500)
		h->st.bad++;
	pthread_mutex_unlock(&h->mu);
	floe_conn_close(c);
}

/* A short text body for an error or an unpublished document. */
static void reply_text(struct floe_httpd *h, struct floe_conn *c, int status, bool head,
		       const char *text)
{
	size_t len = strlen(text);
	if (len > h->doc_cap)
		len = h->doc_cap;
	memcpy(h->reply + REPLY_HEAD, text, len);
	reply(h, c, status, "text/plain; charset=utf-8", len, head);
}

/* The request line is complete: answers it. */
static void serve(struct floe_httpd *h, struct floe_conn *c, struct req *q)
{
	char target[FLOE_HTTPD_LINE_MAX];
	bool head = false;
	int bad = floe_httpd_req_target(&q->r, &head, target, sizeof(target));
	if (bad == 405) {
		reply_text(h, c, 405, false, "only GET and HEAD\n");
		return;
	}
	if (bad) {
		reply_text(h, c, 400, false, "bad request\n");
		return;
	}
	size_t i = 0;
	while (i < h->ndocs && strcmp(h->docs[i].path, target) != 0)
		i++;
	if (i == h->ndocs) {
		reply_text(h, c, 404, head, "not found\n");
		return;
	}
	struct doc *d = &h->docs[i];
	char ctype[64], text[96];
	int status;
	size_t len = 0;
	pthread_mutex_lock(&h->mu);
	int64_t age = mono_ms() - d->at_ms;
	status = d->status;
	if (status && !d->too_big && !(h->max_age_ms > 0 && age > h->max_age_ms)) {
		memcpy(h->reply + REPLY_HEAD, d->body, d->len);
		len = d->len;
		memcpy(ctype, d->ctype, sizeof(ctype));
	}
	bool too_big = d->too_big;
	pthread_mutex_unlock(&h->mu);
	if (status == 0) {
		reply_text(h, c, 503, head, "starting: nothing published yet\n");
	} else if (too_big) {
		reply_text(h, c, 500, head, "the document is larger than the server's buffer\n");
	} else if (h->max_age_ms > 0 && age > h->max_age_ms) {
		snprintf(text, sizeof(text), "stale: not updated for %lld s\n",
			 (long long)(age / 1000));
		reply_text(h, c, 503, head, text);
	} else {
		reply(h, c, status, ctype, len, head);
	}
}

int floe_httpd_req_feed(struct floe_httpd_req *q, const char *p, size_t n, size_t *used)
{
	size_t i = 0;
	int rc = 0;
	while (i < n && rc == 0) {
		char ch = p[i++];
		if (++q->total > FLOE_HTTPD_REQUEST_MAX) {
			rc = 431;
		} else if (!q->line_done) {
			if (ch == '\n') {
				q->line_done = true;
				if (q->line_len && q->line[q->line_len - 1] == '\r')
					q->line_len--;
				q->line[q->line_len] = '\0';
			} else if ((unsigned char)ch < 0x20 && ch != '\r' && ch != '\t') {
				rc = 400; /* a NUL or another control byte in the request line */
			} else if (q->line_len + 1 >= sizeof(q->line)) {
				rc = 414;
			} else {
				q->line[q->line_len++] = ch;
			}
		}
		/* "\r\n\r\n" or "\n\n" (a bare LF ends a line too). */
		if (rc == 0 && ch == '\n')
			q->crlf = q->crlf >= 1 ? 2 : 1;
		else if (rc == 0 && ch != '\r')
			q->crlf = 0;
		if (rc == 0 && q->crlf == 2)
			rc = 1;
	}
	if (used)
		*used = i;
	return rc;
}

int floe_httpd_req_target(const struct floe_httpd_req *q, bool *head, char *target, size_t cap)
{
	char method[8], path[FLOE_HTTPD_LINE_MAX], version[16];
	if (!q->line_done || cap == 0)
		return 400;
	/* Each field fits its buffer: the line is shorter than path, %7s and %15s stop
	 * at the widths (a longer method or version is then malformed below). */
	char rest;
	int k = sscanf(q->line, "%7s %255s %15s %c", method, path, version, &rest);
	if (k != 3 || strncmp(version, "HTTP/1.", 7) != 0 || strlen(version) != 8 || path[0] != '/')
		return 400;
	*head = strcmp(method, "HEAD") == 0;
	if (!*head && strcmp(method, "GET") != 0)
		return 405;
	path[strcspn(path, "?#")] = '\0';
	if (strlen(path) >= cap)
		return 400;
	memcpy(target, path, strlen(path) + 1);
	return 0;
}

/* Takes the bytes of a request: the request line, then everything up to the blank line
 * that ends the headers, which are ignored. Bytes after it are ignored too. */
static void on_data(void *arg, struct floe_conn *c, const char *p, size_t n)
{
	FLOE_OWNER(FLOE_ROLE_HTTPD);
	struct floe_httpd *h = arg;
	struct req *q = floe_conn_data(c);
	if (!q || q->r.done)
		return; /* answered: the rest of what the client sends is ignored */
	int rc = floe_httpd_req_feed(&q->r, p, n, NULL);
	if (rc == 0)
		return;
	q->r.done = true;
	if (rc == 1)
		serve(h, c, q);
	else if (rc == 400)
		reply_text(h, c, 400, false, "bad request\n");
	else if (rc == 414)
		reply_text(h, c, 414, false, "request line too long\n");
	else
		reply_text(h, c, 431, false, "request too large\n");
}

static int on_open(void *arg, struct floe_conn *c)
{
	FLOE_OWNER(FLOE_ROLE_HTTPD);
	struct floe_httpd *h = arg;
	for (unsigned i = 0; i < h->max_conn; i++) {
		if (!h->reqs[i].used) {
			memset(&h->reqs[i], 0, sizeof(h->reqs[i]));
			h->reqs[i].used = true;
			floe_conn_set_data(c, &h->reqs[i]);
			return 0;
		}
	}
	return -1;
}

static void on_close(void *arg, struct floe_conn *c, enum floe_conn_close why)
{
	FLOE_OWNER(FLOE_ROLE_HTTPD);
	struct floe_httpd *h = arg;
	struct req *q = floe_conn_data(c);
	if (q)
		q->used = false;
	if (why == FLOE_CLOSE_DEADLINE || why == FLOE_CLOSE_IDLE || why == FLOE_CLOSE_EVICTED) {
		pthread_mutex_lock(&h->mu);
		if (why == FLOE_CLOSE_EVICTED)
			h->st.evicted++;
		else
			h->st.timed_out++;
		pthread_mutex_unlock(&h->mu);
	}
}

static void *thread_main(void *arg)
{
	struct floe_httpd *h = arg;
	/* The connections, the request slots and the reply buffer are this thread's; the
	 * documents and the stats are shared under mu. */
	floe_owner_enter(FLOE_ROLE_HTTPD);
	floe_loop_run(h->loop);
	return NULL;
}

/* Starts the thread with every signal blocked in it: signals are the main thread's. */
static int start_thread(struct floe_httpd *h)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	int rc = pthread_create(&h->thread, NULL, thread_main, h);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc)
		return -rc;
	h->running = true;
	return 0;
}

/* The documents and the buffers, from the caller's allocator. */
static int make_docs(struct floe_httpd *h, const struct floe_httpd_opts *o)
{
	if (o->npaths == 0 || o->npaths > FLOE_HTTPD_DOCS_MAX || o->doc_cap == 0 ||
	    o->doc_cap > SIZE_MAX / 2)
		return -EINVAL;
	h->ndocs = o->npaths;
	h->doc_cap = o->doc_cap;
	for (size_t i = 0; i < o->npaths; i++) {
		size_t pl = strlen(o->paths[i]);
		if (pl == 0 || pl >= FLOE_HTTPD_PATH_MAX || o->paths[i][0] != '/')
			return -EINVAL;
		memcpy(h->docs[i].path, o->paths[i], pl + 1);
		if (!(h->docs[i].body = floe_malloc(h->a, o->doc_cap)))
			return -ENOMEM;
	}
	if (!(h->reply = floe_malloc(h->a, REPLY_HEAD + o->doc_cap)) ||
	    !(h->rbuf = floe_malloc(h->a, READ_BUFFER)) ||
	    !(h->reqs = floe_calloc(h->a, h->max_conn, sizeof(*h->reqs))))
		return -ENOMEM;
	return 0;
}

int floe_httpd_start(const struct floe_listen_uri *u, const struct floe_httpd_opts *o,
		     struct floe_httpd **out, const char **what)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	const char *step = "memory";
	struct floe_httpd *h = floe_calloc(o->alloc, 1, sizeof(*h));
	if (!h) {
		if (what)
			*what = step;
		return -ENOMEM;
	}
	h->a = o->alloc;
	h->max_conn = o->max_connections ? o->max_connections : 8;
	h->write_timeout_ms = o->write_timeout_ms ? o->write_timeout_ms : 2000;
	h->max_age_ms = o->max_age_ms;
	pthread_mutex_init(&h->mu, NULL);
	int rc = u->transport == FLOE_LISTEN_TCP ? make_docs(h, o) : -EINVAL;
	if (rc == 0) {
		step = "event loop";
		struct floe_loop_opts lo = {.buffer = h->rbuf, .buffer_len = READ_BUFFER};
		rc = floe_loop_new(&lo, &h->loop);
	}
	if (rc == 0)
		rc = floe_listener_open(u, NULL, &h->l, &step);
	size_t need = floe_server_footprint(h->max_conn);
	if (rc == 0 && !(h->srv_mem = floe_malloc(h->a, need)))
		rc = -ENOMEM;
	if (rc == 0) {
		step = "server";
		struct floe_server_opts so = {
		    .max_connections = h->max_conn,
		    .idle_timeout_ms = o->idle_timeout_ms ? o->idle_timeout_ms : 10000,
		    .deadline_ms = o->request_timeout_ms ? o->request_timeout_ms : 5000,
		    .evict_oldest = true,
		};
		struct floe_server_cbs cbs = {
		    .arg = h, .on_open = on_open, .on_data = on_data, .on_close = on_close};
		rc = floe_server_init(h->srv_mem, need, h->loop, h->l, &so, &cbs, &h->srv);
	}
	if (rc == 0) {
		step = "thread";
		rc = start_thread(h);
	}
	if (rc) {
		if (what)
			*what = step;
		floe_httpd_stop(h);
		return rc;
	}
	*out = h;
	return 0;
}

void floe_httpd_stop(struct floe_httpd *h)
{
	if (!h)
		return;
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (h->running) {
		floe_loop_stop(h->loop);
		pthread_join(h->thread, NULL);
	}
	/* The thread is gone: its connections are this one's to close (on_close). */
	unsigned prev = floe_owner_enter(FLOE_ROLE_MAIN | FLOE_ROLE_HTTPD);
	floe_server_fini(h->srv);
	floe_owner_leave(prev);
	floe_listener_close(h->l);
	floe_loop_free(h->loop);
	for (size_t i = 0; i < FLOE_HTTPD_DOCS_MAX; i++)
		floe_free(h->a, h->docs[i].body);
	floe_free(h->a, h->srv_mem);
	floe_free(h->a, h->reply);
	floe_free(h->a, h->rbuf);
	floe_free(h->a, h->reqs);
	pthread_mutex_destroy(&h->mu);
	floe_free(h->a, h);
}

uint16_t floe_httpd_port(const struct floe_httpd *h)
{
	return floe_listener_port(h->l);
}

int floe_httpd_publish(struct floe_httpd *h, size_t i, int status, const char *content_type,
		       const char *body, size_t len)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (i >= h->ndocs || status < 100 || status > 599 || strlen(content_type) >= 64)
		return -EINVAL;
	struct doc *d = &h->docs[i];
	pthread_mutex_lock(&h->mu);
	d->status = status;
	d->at_ms = mono_ms();
	d->too_big = len > h->doc_cap;
	if (!d->too_big) {
		memcpy(d->body, body, len);
		d->len = len;
		strcpy(d->ctype, content_type);
	}
	pthread_mutex_unlock(&h->mu);
	return d->too_big ? -E2BIG : 0;
}

void floe_httpd_get_stats(struct floe_httpd *h, struct floe_httpd_stats *out)
{
	pthread_mutex_lock(&h->mu);
	*out = h->st;
	pthread_mutex_unlock(&h->mu);
}
