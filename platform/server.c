/* A listener served on a loop: the accept path with its limits, connections read into the
 * loop's shared buffer (through TLS where the listener says so), per-connection timers
 * for idle connections and stalled handshakes, and datagrams in bounded batches. */
#include "server.h"

#include "log.h"
#include "loop.h"
#include "tls.h"

#include <errno.h>
#include <poll.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* Connections accepted in one round: the rest wait for the next, after the others. */
#define ACCEPT_BATCH 16
/* Limits, errors: one line a minute, with a count. */
#define LOG_PERIOD_MS 60000

/* A slot's life: FREE, then HANDSHAKE (TLS) or OPEN, then CLOSING during on_close. */
enum { SLOT_FREE, SLOT_HANDSHAKE, SLOT_OPEN, SLOT_CLOSING };

struct floe_conn {
	struct floe_io io;
	struct floe_timer timer; /* idle_timeout, or the handshake's deadline */
	struct floe_server *srv;
	struct floe_tls_session *tls;
	void *data;
	struct floe_conn *next_free;
	union floe_sockaddr peer;
	int64_t last_ms;   /* the last read, or when the timer's period began */
	int64_t opened_ms; /* the accept, for deadline_ms and evict_oldest */
	int fd;
	uint8_t state;
	bool paused, want_write, in_cb;
	int8_t close_pending; /* a reason, or -1 */
};

struct floe_server {
	struct floe_loop *loop;
	struct floe_listener *l;
	struct floe_tls_server *tls;
	struct floe_server_cbs cbs;
	struct floe_io io;
	struct floe_timer backoff; /* the listener's rest after EMFILE */
	bool stream, paused, resting, evict;
	unsigned max;
	int64_t idle_ms, handshake_ms, deadline_ms, evict_idle_ms;
	unsigned dgram_batch;
	struct floe_conn *free;
	int64_t limit_logged_ms, error_logged_ms;
	struct floe_server_stats st;
	struct floe_conn conns[];
};

size_t floe_server_footprint(unsigned max_connections)
{
	size_t n;
	if (__builtin_mul_overflow((size_t)max_connections, sizeof(struct floe_conn), &n) ||
	    __builtin_add_overflow(n, sizeof(struct floe_server), &n))
		return 0;
	return n;
}

/* --- connections ------------------------------------------------------------------ */

static bool conn_reading(const struct floe_conn *c)
{
	return !c->paused && !c->srv->paused;
}

/* Puts c's socket and timer in the state its flags say: out of the epoll set and no
 * timer while paused; otherwise waiting to read (or to write, for a TLS handshake or a
 * record mbedtls must send first) under the handshake deadline or the idle timeout. */
static void conn_sync(struct floe_conn *c, bool restart_clock)
{
	struct floe_server *s = c->srv;
	if (!conn_reading(c)) {
		floe_loop_io_set(s->loop, &c->io, 0);
		floe_loop_timer_disarm(s->loop, &c->timer);
		return;
	}
	floe_loop_io_set(s->loop, &c->io, c->want_write ? FLOE_IO_WRITE : FLOE_IO_READ);
	if (restart_clock)
		c->last_ms = floe_loop_now(s->loop);
	int64_t at = INT64_MAX;
	if (c->state == SLOT_HANDSHAKE)
		at = c->last_ms + s->handshake_ms;
	else if (s->idle_ms > 0)
		at = c->last_ms + s->idle_ms;
	if (s->deadline_ms > 0 && c->opened_ms + s->deadline_ms < at)
		at = c->opened_ms + s->deadline_ms;
	if (at != INT64_MAX)
		floe_loop_timer_arm(s->loop, &c->timer, at);
	else
		floe_loop_timer_disarm(s->loop, &c->timer);
}

/* Ends c and gives its slot back. notify is false for a connection on_open refused. */
static void conn_finish(struct floe_conn *c, enum floe_conn_close why, bool notify)
{
	struct floe_server *s = c->srv;
	floe_loop_io_del(s->loop, &c->io);
	floe_loop_timer_disarm(s->loop, &c->timer);
	/* Pause, resume and close are no-ops from on_close. */
	c->state = SLOT_CLOSING;
	if (notify && s->cbs.on_close)
		s->cbs.on_close(s->cbs.arg, c, why);
	floe_tls_session_free(c->tls);
	close(c->fd);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->srv = s;
	c->next_free = s->free;
	s->free = c;
	s->st.open--;
}

static bool conn_live(const struct floe_conn *c)
{
	return c->state == SLOT_HANDSHAKE || c->state == SLOT_OPEN;
}

static void conn_close(struct floe_conn *c, enum floe_conn_close why)
{
	if (!conn_live(c))
		return;
	if (c->in_cb) {
		if (c->close_pending < 0)
			c->close_pending = (int8_t)why;
		return;
	}
	conn_finish(c, why, true);
}

/* Runs on_data for c, then any close it asked for. Returns false when c is gone. */
static bool deliver(struct floe_conn *c, const char *p, size_t n)
{
	struct floe_server *s = c->srv;
	s->st.bytes += n;
	c->last_ms = floe_loop_now(s->loop);
	c->in_cb = true;
	s->cbs.on_data(s->cbs.arg, c, p, n);
	c->in_cb = false;
	if (c->close_pending >= 0) {
		conn_finish(c, (enum floe_conn_close)c->close_pending, true);
		return false;
	}
	return true;
}

static void read_plain(struct floe_conn *c)
{
	size_t cap;
	char *buf = floe_loop_buffer(c->srv->loop, &cap);
	ssize_t n;
	do
		n = read(c->fd, buf, cap);
	while (n < 0 && errno == EINTR);
	if (n > 0) {
		deliver(c, buf, (size_t)n);
	} else if (n == 0) {
		conn_close(c, FLOE_CLOSE_EOF);
	} else if (errno != EAGAIN && errno != EWOULDBLOCK) {
		c->srv->st.read_errors++;
		conn_close(c, FLOE_CLOSE_ERROR);
	}
}

/* Decrypts records into the shared buffer until it is full or the socket is drained, and
 * hands them over in one call. */
static void read_tls(struct floe_conn *c)
{
	size_t cap, off = 0, n = 0;
	char *buf = floe_loop_buffer(c->srv->loop, &cap);
	int rc = FLOE_TLS_WANT_READ;
	bool eof = false;
	while (off < cap) {
		rc = floe_tls_session_read(c->tls, buf + off, cap - off, &n);
		if (rc == 0 && n == 0)
			eof = true;
		if (rc || n == 0)
			break;
		off += n;
	}
	if (off > 0 && !deliver(c, buf, off))
		return;
	if (rc < 0) {
		c->srv->st.read_errors++;
		conn_close(c, FLOE_CLOSE_ERROR);
		return;
	}
	if (eof) {
		conn_close(c, FLOE_CLOSE_EOF);
		return;
	}
	bool ww = rc == FLOE_TLS_WANT_WRITE;
	if (ww != c->want_write) {
		c->want_write = ww;
		conn_sync(c, false);
	}
	/* Records mbedtls already holds raise no epoll event: come back next round. */
	if (conn_reading(c) && floe_tls_session_pending(c->tls))
		floe_loop_io_kick(c->srv->loop, &c->io);
}

/* Moves a TLS connection's handshake on. Returns true when it is complete. */
static bool handshake(struct floe_conn *c)
{
	struct floe_server *s = c->srv;
	if (!c->tls && floe_tls_session_new(s->tls, c->fd, &c->peer, &c->tls)) {
		s->st.read_errors++;
		conn_close(c, FLOE_CLOSE_ERROR);
		return false;
	}
	int rc = floe_tls_session_handshake(c->tls);
	if (rc == -ENOTCONN) {
		conn_close(c, FLOE_CLOSE_EOF);
		return false;
	}
	if (rc < 0) {
		s->st.handshake_failures++;
		conn_close(c, FLOE_CLOSE_HANDSHAKE);
		return false;
	}
	if (rc > 0) {
		bool ww = rc == FLOE_TLS_WANT_WRITE;
		if (ww != c->want_write) {
			c->want_write = ww;
			conn_sync(c, false);
		}
		return false;
	}
	c->state = SLOT_OPEN;
	c->want_write = false;
	conn_sync(c, true); /* from the handshake's deadline to the idle timeout */
	return true;
}

static void conn_cb(struct floe_io *io, unsigned events)
{
	struct floe_conn *c = io->arg;
	if (!conn_live(c) || !conn_reading(c))
		return;
	if (c->state == SLOT_HANDSHAKE && !handshake(c))
		return;
	if (c->tls)
		read_tls(c);
	else
		read_plain(c);
}

static void conn_timer(struct floe_timer *t)
{
	struct floe_conn *c = t->arg;
	struct floe_server *s = c->srv;
	int64_t now = floe_loop_now(s->loop);
	if (s->deadline_ms > 0 && now - c->opened_ms >= s->deadline_ms) {
		s->st.closed_deadline++;
		conn_close(c, FLOE_CLOSE_DEADLINE);
		return;
	}
	if (c->state == SLOT_HANDSHAKE) {
		s->st.handshake_timeouts++;
		s->st.handshake_failures++;
		floe_tls_server_note_failure(s->tls, &c->peer, "handshake not complete in time");
		conn_close(c, FLOE_CLOSE_HANDSHAKE);
		return;
	}
	/* Reads only note the time; the timer catches up here, lazily. */
	if (s->idle_ms == 0 || now - c->last_ms < s->idle_ms) {
		conn_sync(c, false);
		return;
	}
	s->st.closed_idle++;
	conn_close(c, FLOE_CLOSE_IDLE);
}

/* --- accepting -------------------------------------------------------------------- */

static void log_limited(struct floe_server *s, int64_t *last, const char *what, int err)
{
	int64_t now = floe_loop_now(s->loop);
	if (*last != INT64_MIN && now - *last < LOG_PERIOD_MS)
		return;
	*last = now;
	char uri[FLOE_LISTEN_URI_MAX];
	floe_listen_uri_format(floe_listener_uri(s->l), floe_listener_port(s->l), uri, sizeof(uri));
	if (err)
		floe_warn("%s: %s: %s (%llu so far; accepting again in %d ms)", uri, what,
			  strerror(-err), (unsigned long long)s->st.accept_errors,
			  FLOE_SERVER_ACCEPT_BACKOFF_MS);
	else
		floe_warn("%s: %s: max_connections (%u) reached (%llu refused so far)", uri, what,
			  s->max, (unsigned long long)s->st.rejected);
}

static void listener_sync(struct floe_server *s)
{
	floe_loop_io_set(s->loop, &s->io, s->paused || s->resting ? 0 : FLOE_IO_READ);
}

static void backoff_done(struct floe_timer *t)
{
	struct floe_server *s = t->arg;
	s->resting = false;
	listener_sync(s);
}

/* Makes room for a new connection in a full table: with evict_oldest, by closing the
 * connection accepted first; with evict_idle_ms, the open one that has sent nothing for
 * longest, if that is at least evict_idle_ms (a sender that left its connection gives its
 * slot to one that has something to send; a paused connection is not idle). */
static void make_room(struct floe_server *s)
{
	int64_t now = floe_loop_now(s->loop);
	struct floe_conn *pick = NULL;
	for (unsigned i = 0; i < s->max; i++) {
		struct floe_conn *c = &s->conns[i];
		if (!conn_live(c) || c->in_cb)
			continue;
		if (s->evict) {
			if (!pick || c->opened_ms < pick->opened_ms)
				pick = c;
		} else if (c->state == SLOT_OPEN && !c->paused &&
			   now - c->last_ms >= s->evict_idle_ms &&
			   (!pick || c->last_ms < pick->last_ms)) {
			pick = c;
		}
	}
	if (!pick)
		return;
	s->st.evicted++;
	conn_close(pick, FLOE_CLOSE_EVICTED);
}

/* Takes a new connection into a free slot. A full table closes it at once (unless
 * make_room finds one): the sender learns now (a reset) and retries with its own
 * backoff, where a connection left in the backlog would look established to it and
 * fill kernel buffers that may never be read. Counted, and logged once a minute. */
static void take(struct floe_server *s, int fd, const union floe_sockaddr *peer)
{
	if (!s->free && (s->evict || s->evict_idle_ms > 0))
		make_room(s);
	struct floe_conn *c = s->free;
	if (!c) {
		close(fd);
		s->st.rejected++;
		log_limited(s, &s->limit_logged_ms, "connection refused", 0);
		return;
	}
	s->free = c->next_free;
	c->next_free = NULL;
	c->fd = fd;
	c->peer = *peer;
	c->opened_ms = floe_loop_now(s->loop);
	c->state = s->tls ? SLOT_HANDSHAKE : SLOT_OPEN;
	c->close_pending = -1;
	c->io.cb = conn_cb;
	c->io.arg = c;
	c->timer.cb = conn_timer;
	c->timer.arg = c;
	s->st.open++;
	if (floe_loop_io_add(s->loop, &c->io, fd, 0)) {
		s->st.accept_errors++;
		conn_finish(c, FLOE_CLOSE_LOCAL, false);
		return;
	}
	c->in_cb = true;
	int refuse = s->cbs.on_open ? s->cbs.on_open(s->cbs.arg, c) : 0;
	c->in_cb = false;
	if (refuse) {
		/* on_close only follows an on_open that kept c. */
		s->st.rejected++;
		conn_finish(c, FLOE_CLOSE_LOCAL, false);
		return;
	}
	s->st.accepted++;
	if (c->close_pending >= 0) {
		conn_finish(c, (enum floe_conn_close)c->close_pending, true);
		return;
	}
	conn_sync(c, true);
}

static void accept_cb(struct floe_io *io, unsigned events)
{
	struct floe_server *s = io->arg;
	for (int i = 0; i < ACCEPT_BATCH && !s->paused; i++) {
		int fd;
		union floe_sockaddr peer;
		int rc = floe_listener_accept(s->l, &fd, &peer);
		if (rc == 0)
			return;
		if (rc < 0) {
			/* Out of descriptors or memory: the pending connection would wake
			 * the loop again at once. Rest the listener a while. */
			s->st.accept_errors++;
			log_limited(s, &s->error_logged_ms, "accept", rc);
			s->resting = true;
			listener_sync(s);
			floe_loop_timer_arm(s->loop, &s->backoff,
					    floe_loop_now(s->loop) + FLOE_SERVER_ACCEPT_BACKOFF_MS);
			return;
		}
		take(s, fd, &peer);
	}
}

static void dgram_cb(struct floe_io *io, unsigned events)
{
	struct floe_server *s = io->arg;
	size_t cap;
	char *buf = floe_loop_buffer(s->loop, &cap);
	for (unsigned i = 0; i < s->dgram_batch && !s->paused; i++) {
		struct floe_dgram d;
		int rc = floe_listener_recv(s->l, buf, cap, &d);
		if (rc == 0)
			return;
		if (rc < 0) {
			/* A pending socket error (ICMP on a connected socket): reading it
			 * clears it; the next round reads on. */
			s->st.read_errors++;
			return;
		}
		s->cbs.on_datagram(s->cbs.arg, &d);
	}
}

/* --- the server ------------------------------------------------------------------- */

int floe_server_init(void *mem, size_t len, struct floe_loop *loop, struct floe_listener *l,
		     const struct floe_server_opts *o, const struct floe_server_cbs *cbs,
		     struct floe_server **out)
{
	bool stream = floe_listen_is_stream(floe_listener_transport(l));
	bool tls = floe_listener_transport(l) == FLOE_LISTEN_TLS;
	unsigned max = stream ? o->max_connections : 0;
	size_t need = floe_server_footprint(max), cap;
	floe_loop_buffer(loop, &cap);
	if (!mem || (uintptr_t)mem % alignof(max_align_t) || need == 0 || len < need || cap == 0 ||
	    (stream && (max == 0 || !cbs->on_data)) || (!stream && !cbs->on_datagram) ||
	    (tls && !o->tls))
		return -EINVAL;
	struct floe_server *s = mem;
	memset(s, 0, need);
	s->loop = loop;
	s->l = l;
	s->tls = tls ? o->tls : NULL;
	s->cbs = *cbs;
	s->stream = stream;
	s->max = max;
	s->idle_ms = o->idle_timeout_ms > 0 ? o->idle_timeout_ms : 0;
	s->deadline_ms = o->deadline_ms > 0 ? o->deadline_ms : 0;
	s->evict = o->evict_oldest;
	s->evict_idle_ms = o->evict_idle_ms > 0 ? o->evict_idle_ms : 0;
	s->handshake_ms = o->handshake_timeout_ms > 0 ? o->handshake_timeout_ms
						      : FLOE_SERVER_HANDSHAKE_TIMEOUT_MS;
	s->dgram_batch = o->dgram_batch ? o->dgram_batch : FLOE_SERVER_DGRAM_BATCH;
	s->limit_logged_ms = s->error_logged_ms = INT64_MIN;
	for (unsigned i = max; i-- > 0;) {
		s->conns[i].fd = -1;
		s->conns[i].srv = s;
		s->conns[i].next_free = s->free;
		s->free = &s->conns[i];
	}
	s->io.cb = stream ? accept_cb : dgram_cb;
	s->io.arg = s;
	s->backoff.cb = backoff_done;
	s->backoff.arg = s;
	int rc = floe_loop_io_add(loop, &s->io, floe_listener_fd(l), FLOE_IO_READ);
	if (rc)
		return rc;
	*out = s;
	return 0;
}

void floe_server_fini(struct floe_server *s)
{
	if (!s)
		return;
	for (unsigned i = 0; i < s->max; i++)
		if (conn_live(&s->conns[i]))
			conn_finish(&s->conns[i], FLOE_CLOSE_LOCAL, true);
	floe_loop_io_del(s->loop, &s->io);
	floe_loop_timer_disarm(s->loop, &s->backoff);
}

void floe_server_close_all(struct floe_server *s)
{
	for (unsigned i = 0; i < s->max; i++)
		conn_close(&s->conns[i], FLOE_CLOSE_LOCAL);
}

void floe_server_pause(struct floe_server *s, bool paused)
{
	if (s->paused == paused)
		return;
	s->paused = paused;
	listener_sync(s);
	for (unsigned i = 0; i < s->max; i++) {
		struct floe_conn *c = &s->conns[i];
		if (!conn_live(c) || c->paused)
			continue;
		conn_sync(c, true);
		if (!paused && c->tls && floe_tls_session_pending(c->tls))
			floe_loop_io_kick(s->loop, &c->io);
	}
}

void floe_server_stats(const struct floe_server *s, struct floe_server_stats *st)
{
	*st = s->st;
}

struct floe_listener *floe_server_listener(const struct floe_server *s)
{
	return s->l;
}

void floe_conn_set_data(struct floe_conn *c, void *data)
{
	c->data = data;
}

void *floe_conn_data(const struct floe_conn *c)
{
	return c->data;
}

const union floe_sockaddr *floe_conn_peer(const struct floe_conn *c)
{
	return &c->peer;
}

struct floe_server *floe_conn_server(const struct floe_conn *c)
{
	return c->srv;
}

struct floe_tls_session *floe_conn_tls(const struct floe_conn *c)
{
	return c->tls;
}

void floe_conn_pause(struct floe_conn *c)
{
	if (!conn_live(c) || c->paused)
		return;
	c->paused = true;
	conn_sync(c, false);
}

void floe_conn_resume(struct floe_conn *c)
{
	if (!conn_live(c) || !c->paused)
		return;
	c->paused = false;
	conn_sync(c, true);
	if (conn_reading(c) && c->tls && floe_tls_session_pending(c->tls))
		floe_loop_io_kick(c->srv->loop, &c->io);
}

bool floe_conn_paused(const struct floe_conn *c)
{
	return c->paused;
}

void floe_conn_close(struct floe_conn *c)
{
	conn_close(c, FLOE_CLOSE_LOCAL);
}

/* Milliseconds on CLOCK_MONOTONIC, for floe_conn_write's deadline. */
static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int floe_conn_write(struct floe_conn *c, const void *p, size_t n, int timeout_ms)
{
	if (c->tls)
		return -ENOTSUP;
	const char *b = p;
	int64_t deadline = mono_ms() + timeout_ms;
	while (n > 0) {
		ssize_t w = send(c->fd, b, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			b += w;
			n -= (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno != EAGAIN && errno != EWOULDBLOCK)
			return -errno;
		int64_t left = deadline - mono_ms();
		if (left <= 0)
			return -ETIMEDOUT;
		struct pollfd pfd = {.fd = c->fd, .events = POLLOUT};
		if (poll(&pfd, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
	}
	return 0;
}
