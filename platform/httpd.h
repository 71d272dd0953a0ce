/* A small HTTP/1.1 server for an agent's own pages (Prometheus' /metrics, /healthz): one
 * listener served by a thread of its own on an event loop (loop.h, server.h), answering
 * GET and HEAD with documents the caller publishes from its own thread. The caller never
 * waits for a client, and a slow or hostile client never touches the caller: a reply is
 * a copy of the document as it was when the request ended, written within a deadline,
 * then the connection closes.
 *
 * Memory: everything is taken from the caller's allocator at start (the documents, a
 * reply buffer, the server's connection table, the loop's read buffer) and given back at
 * stop; the thread allocates nothing. */
#ifndef FLOE_PLATFORM_HTTPD_H
#define FLOE_PLATFORM_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_listen_uri;
struct floe_httpd;

#define FLOE_HTTPD_DOCS_MAX 4
#define FLOE_HTTPD_PATH_MAX 64
/* The longest request line and the most request bytes a client may send: a request
 * line is a method, a path of ours and a version; the headers (a scraper's Accept and
 * User-Agent) are read and ignored. */
#define FLOE_HTTPD_LINE_MAX 256
#define FLOE_HTTPD_REQUEST_MAX 8192

struct floe_httpd_opts {
	struct floe_alloc *alloc; /* borrowed; used on the caller's thread only */
	/* The paths served (e.g. "/metrics"), each with a document of at most doc_cap
	 * bytes; 1..FLOE_HTTPD_DOCS_MAX of them. Copied. */
	const char *const *paths;
	size_t npaths;
	size_t doc_cap;
	/* A document not published for this long is answered with 503 and the age (the
	 * caller stopped publishing: stuck); 0: never. */
	int64_t max_age_ms;
	unsigned max_connections; /* 0: 8 */
	int64_t idle_timeout_ms;  /* a client that sends no complete request; 0: 10 s */
	/* The whole request must arrive within this of the accept, however it trickles in;
	 * 0: 5 s. With every slot taken, a new connection closes the oldest rather than
	 * being refused, so a liveness probe always gets through slow clients. */
	int64_t request_timeout_ms;
	int write_timeout_ms;	  /* a reply must be taken within this; 0: 2 s */
};

/* Opens a listener for u (a tcp:// URI; copied) and starts the thread serving it.
 * Returns 0 with *out (owned: floe_httpd_stop), or -errno with *what (may be NULL) set to
 * a static description of the step that failed ("bind", "thread", ...). */
int floe_httpd_start(const struct floe_listen_uri *u, const struct floe_httpd_opts *o,
		     struct floe_httpd **out, const char **what);
/* Stops and joins the thread, closes every connection and the listener, and gives the
 * memory back. NULL is fine. */
void floe_httpd_stop(struct floe_httpd *h);
/* The port bound (the one the kernel chose for port 0). */
uint16_t floe_httpd_port(const struct floe_httpd *h);
/* Publishes document i (the index of its path in the options): body[0..len) (copied)
 * served with status (200, 503, ...) and content_type (copied, at most 63 bytes). From
 * one thread at a time. Returns 0, -E2BIG (longer than doc_cap: the document is then
 * answered with 500 until a publish fits), or -EINVAL. */
int floe_httpd_publish(struct floe_httpd *h, size_t i, int status, const char *content_type,
		       const char *body, size_t len);

/* The request reader, pure, for the server and its fuzz target: a request as it
 * arrives, the request line kept (NUL-terminated once complete), the headers counted
 * and ignored. Zeroed to start. */
struct floe_httpd_req {
	bool line_done, done;
	char line[FLOE_HTTPD_LINE_MAX];
	size_t line_len, total;
	unsigned crlf; /* line ends seen in a row (CR ignored): 2 ends the request */
};
/* Feeds p[0..n) to q; *used (may be NULL) gets the bytes taken. Returns 0 (more is
 * needed), 1 (the request is complete: the rest of p is not taken), 400 (a control
 * byte in the request line), 414 (the request line reached FLOE_HTTPD_LINE_MAX) or 431
 * (more than FLOE_HTTPD_REQUEST_MAX bytes). */
int floe_httpd_req_feed(struct floe_httpd_req *q, const char *p, size_t n, size_t *used);
/* Reads q's complete request line "METHOD /PATH HTTP/1.x": *head for HEAD, the path
 * without query or fragment into target[0..cap). Returns 0, 405 for a method other than
 * GET and HEAD, or 400 for anything malformed. */
int floe_httpd_req_target(const struct floe_httpd_req *q, bool *head, char *target, size_t cap);

struct floe_httpd_stats {
	uint64_t requests; /* answered, whatever the status */
	uint64_t bad;	   /* malformed or oversized requests (400, 405, 414, 431) */
	uint64_t write_errors;
	uint64_t timed_out; /* closed without an answer: request_timeout_ms or idle */
	uint64_t evicted;   /* closed unanswered for a newer connection (listener full) */
};
void floe_httpd_get_stats(struct floe_httpd *h, struct floe_httpd_stats *out);

#endif
