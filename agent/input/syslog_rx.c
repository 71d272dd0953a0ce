/* The syslog input's receiver thread (syslog_impl.h): listeners and their servers on
 * its own event loop, a framer per stream connection, and the messages framed into each
 * input's queue. The runner's thread drains the queues (syslog_in.c).
 *
 * Memory, all from the budget: each input's queue (FLOE_SYSLOG_QUEUE_BYTES), each stream
 * listener's table of max_connections slots (platform/server.h, about 200 bytes a slot),
 * a framer per open connection (0.3 KiB idle; its buffer grows only while a frame is in
 * progress and is given back when it is over), the loop's read buffer, and the stash:
 * when the queue runs out of room in the middle of a stream chunk, what is left of the
 * chunk is kept there (at most one read, FLOE_SYSLOG_READ_BYTES) and every listener of
 * the input is paused until the runner has drained the queue and the stash went in. So
 * a chunk is never split from its connection's order, and nothing waits anywhere but in
 * the kernel.
 *
 * Pausing happens before the queue is full: when it has less room than the largest entry
 * a read can make twice over, so that a datagram, a closing connection's last frame and
 * a source entry always fit.
 *
 * The runner asks for things through atomics and floe_loop_wake (hold, resume, reload);
 * on_wake applies them here, on this thread, which alone touches the servers, the TLS
 * server and the framers. */
#include "agent/input/syslog_impl.h"

#include "agent/config/config.h"
#include "agent/input/syslog_handover.h"
#include "agent/env/env.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/log.h"
#include "platform/server.h"
#include "platform/tls.h"
#include "platform/worker.h"

#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* How often the servers' and listeners' counters are copied for the runner. */
#define STATS_MS 1000
/* A listen address that cannot be taken is tried again this often (syslog_in.h). */
#define BIND_RETRY_MS 5000
/* A connection silent this long gives its slot to a new sender when every slot is taken. */
#define SYSLOG_EVICT_IDLE_MS 60000

/* The receiver's state passes to the runner's thread once the receiver stopped (its
 * task waited for): the closes and the last counters run there. Returns the role to
 * give back with floe_owner_leave. */
static unsigned take_over(const struct floe_syslog_rx *rx)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	assert(!rx || !rx->task); /* floe_syslog_rx_stop came first */
	return floe_owner_enter(FLOE_ROLE_MAIN | FLOE_ROLE_SYSLOG_RX);
}

static int64_t wall_us(const struct floe_syslog_in *in)
{
	return in->clock->wall_us(in->clock->ctx);
}

static void sync_pause(struct floe_syslog_in *in)
{
	bool p = sl_load(&in->ctl_hold) || sl_load(&in->full);
	if (p != in->paused_now) {
		in->paused_now = p;
		for (size_t i = 0; i < in->nlst; i++)
			if (in->lst[i].srv)
				floe_server_pause(in->lst[i].srv, p);
	}
	sl_store(&in->held, sl_load(&in->ctl_hold));
}

static void set_full(struct floe_syslog_in *in)
{
	if (sl_load(&in->full))
		return;
	sl_store(&in->full, 1);
	sl_add(&in->c.paused, 1);
	sync_pause(in);
}

/* Writes a source entry when the listener, the peer or the time changed. */
static bool put_src(struct floe_syslog_in *in, uint16_t listener, const union floe_sockaddr *peer,
		    int64_t now)
{
	if (in->have_src && in->src_listener == listener && in->src.received_us / 1000 == now / 1000 &&
	    memcmp(&in->src.peer, peer, sizeof(*peer)) == 0)
		return true;
	struct sq_src s;
	memset(&s, 0, sizeof(s));
	s.received_us = now;
	s.peer = *peer;
	if (!sq_put(&in->q, SQ_SRC, 0, listener, &s, sizeof(s)))
		return false;
	in->have_src = true;
	in->src_listener = listener;
	in->src = s;
	return true;
}

static bool put_msg(struct floe_syslog_in *in, const char *p, size_t len, unsigned flags)
{
	if (len > in->cfg->syslog.max_message_bytes) {
		len = (size_t)in->cfg->syslog.max_message_bytes;
		flags |= FLOE_FRAME_TRUNCATED;
	}
	return sq_put(&in->q, SQ_MSG, (uint8_t)flags, 0, p, len);
}

/* After messages went in: the runner's loop is woken if it is about to sleep (the
 * exchange pairs with floe_syslog_in_arm_wake's store and check, both sequentially
 * consistent, so that no message waits for the runner's idle timeout), and reading
 * stops when room runs low. */
static void check_room(struct floe_syslog_in *in)
{
	if (__atomic_exchange_n(&in->want_wake, 0, __ATOMIC_SEQ_CST))
		floe_loop_wake(in->notify);
	if (sq_room(&in->q) < in->low)
		set_full(in);
}

/* Frames p[0..n) of connection c (of listener l) into the queue. Returns the bytes
 * consumed: fewer than n when the queue ran out of room (the caller stashes the rest). */
static size_t frame_into(struct sl_lst *l, struct floe_conn *c, const char *p, size_t n, int64_t now)
{
	struct floe_syslog_in *in = l->in;
	struct floe_framer *fr = floe_conn_data(c);
	size_t at = 0;
	while (at < n) {
		/* Room for a source entry and the longest frame this chunk can end. */
		if (sq_room(&in->q) < sq_entry_size(sizeof(struct sq_src)) +
					  sq_entry_size((size_t)in->cfg->syslog.max_message_bytes))
			break;
		if (!put_src(in, l->index, floe_conn_peer(c), now))
			break;
		struct floe_frame f;
		size_t used;
		int got = floe_framer_push(fr, p + at, n - at, &used, &f);
		at += used;
		if (got && !put_msg(in, f.p, f.len, f.flags))
			sl_add(&in->c.dropped, 1); /* cannot happen: the room was checked */
	}
	floe_framer_trim(fr);
	return at;
}

static void on_data(void *arg, struct floe_conn *c, const char *p, size_t n)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	struct sl_lst *l = arg;
	struct floe_syslog_in *in = l->in;
	sl_add(&in->c.rx_bytes, n);
	int64_t now = wall_us(in);
	size_t used = in->stash_len ? 0 : frame_into(l, c, p, n, now);
	if (used < n) {
		/* Only one chunk can wait: every listener stops until it is in. */
		if (in->stash_len) {
			sl_add(&in->c.dropped, 1); /* cannot happen: the listeners were paused */
			floe_error("%s: a second read while the queue was full: %zu bytes dropped",
				   in->name, n);
		} else {
			memcpy(in->stash, p + used, n - used);
			in->stash_len = n - used;
			in->stash_off = 0;
			in->stash_conn = c;
		}
		set_full(in);
		return;
	}
	check_room(in);
}

static int on_open(void *arg, struct floe_conn *c)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	struct sl_lst *l = arg;
	struct floe_framer *fr = NULL;
	if (floe_framer_new(l->in->a, (size_t)l->in->cfg->syslog.max_message_bytes, &fr)) {
		l->in->framer_refused++;
		return -1;
	}
	floe_conn_set_data(c, fr);
	if (l->in->paused_now)
		floe_conn_pause(c);
	return 0;
}

static void add_framer_stats(struct floe_syslog_in *in, const struct floe_framer *fr)
{
	struct floe_framer_stats fs;
	floe_framer_stats(fr, &fs);
	in->fst.truncated += fs.truncated;
	in->fst.bad_length += fs.bad_length;
	in->fst.flushed_at_close += fs.flushed_at_close;
	in->fst.truncated_memory += fs.truncated_memory;
}

static void on_close(void *arg, struct floe_conn *c, enum floe_conn_close why)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	(void)why;
	struct sl_lst *l = arg;
	struct floe_syslog_in *in = l->in;
	struct floe_framer *fr = floe_conn_data(c);
	if (!fr)
		return;
	int64_t now = wall_us(in);
	if (in->stash_conn == c) {
		/* Closed with bytes waiting (the input is being freed): in, as far as room goes. */
		in->stash_off += frame_into(l, c, in->stash + in->stash_off,
					    in->stash_len - in->stash_off, now);
		if (in->stash_off < in->stash_len)
			sl_add(&in->c.dropped, 1);
		in->stash_len = in->stash_off = 0;
		in->stash_conn = NULL;
	}
	struct floe_frame f;
	if (floe_framer_close(fr, &f) &&
	    (!put_src(in, l->index, floe_conn_peer(c), now) || !put_msg(in, f.p, f.len, f.flags)))
		sl_add(&in->c.dropped, 1);
	add_framer_stats(in, fr);
	floe_framer_free(fr);
	floe_conn_set_data(c, NULL);
	check_room(in);
}

static void on_datagram(void *arg, const struct floe_dgram *d)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	struct sl_lst *l = arg;
	struct floe_syslog_in *in = l->in;
	sl_add(&in->c.rx_bytes, d->len);
	if (d->len == 0)
		return;
	int64_t now = wall_us(in);
	/* A datagram is one message; trailing LF, CR and NUL bytes are the parser's. */
	unsigned flags = d->truncated || d->len > in->cfg->syslog.max_message_bytes
			     ? FLOE_FRAME_TRUNCATED
			     : 0;
	if (!put_src(in, l->index, &d->peer, now) || !put_msg(in, d->p, d->len, flags))
		sl_add(&in->c.dropped, 1); /* cannot happen: reading stops while there is less room */
	if (flags)
		in->dgram_truncated++;
	check_room(in);
}

/* ---- listeners ----------------------------------------------------------------------- */

static struct floe_listen_opts listen_opts(const struct floe_config_input *c)
{
	return (struct floe_listen_opts){
	    .rcvbuf = c->syslog.receive_buffer > INT32_MAX / 2 ? INT32_MAX / 2
							    : (int)c->syslog.receive_buffer,
	    .mode = c->syslog.socket_mode,
	    .owner = c->syslog.socket_owner,
	    .group = c->syslog.socket_group,
	};
}

/* What keeps an address from being taken for now, not for good: another process holds
 * it (rsyslog, a previous agent still stopping), it is not on an interface yet (a static
 * address before the network is up at boot), a privileged port or a socket's directory
 * not made yet. The input waits for it; the other inputs read meanwhile. */
static bool bind_waits(int rc)
{
	return rc == -EADDRINUSE || rc == -EADDRNOTAVAIL || rc == -EACCES || rc == -ENOENT;
}

/* The server over l's listener (open, or kept from the previous configuration). */
static int start_server(struct floe_syslog_in *in, struct sl_lst *l, bool kept,
			struct floe_err *err)
{
	const struct floe_config_input *c = in->cfg;
	floe_listen_uri_format(&l->u, floe_listener_port(l->l), l->uri, sizeof(l->uri));
	bool stream = floe_listen_is_stream(l->u.transport);
	size_t mem = floe_server_footprint(stream ? in->max_conns : 0);
	if (stream && in->max_conns < c->syslog.max_connections)
		floe_warn("%s: %s: at most %u connections at once, not max_connections' %u: "
			  "the process's descriptor limit (RLIMIT_NOFILE) holds no more",
			  in->name, l->uri, in->max_conns, c->syslog.max_connections);
	/* With every slot taken, a connection silent for a minute gives its slot to a new
	 * sender: one that opens connections and leaves them (a port scan, a balancer's
	 * health check, a sender gone behind a NAT) would otherwise keep every other sender
	 * out for idle_timeout. A sender that was only quiet reconnects when it has more. */
	struct floe_server_opts so = {
	    .max_connections = in->max_conns,
	    .idle_timeout_ms = (int64_t)c->syslog.idle_timeout_ms,
	    .evict_idle_ms = SYSLOG_EVICT_IDLE_MS,
	    .tls = in->tls,
	};
	struct floe_server_cbs cbs = {.arg = l,
				      .on_open = on_open,
				      .on_data = on_data,
				      .on_close = on_close,
				      .on_datagram = on_datagram};
	int rc = floe_server_init(l->mem, mem, in->rx->loop, l->l, &so, &cbs, &l->srv);
	if (rc)
		return floe_err_set(err, rc, "%s: %s: %s", in->name, l->uri, strerror(-rc));
	/* Taken late, while the input is held: its server holds too. */
	if (in->paused_now)
		floe_server_pause(l->srv, true);
	if (kept) {
		floe_info("%s: listening on %s (kept open across the reload)", in->name, l->uri);
		return 0;
	}
	if (!stream && !floe_listener_counts_drops(l->l))
		floe_warn("%s: %s: this kernel does not count the datagrams it drops "
			  "(SO_RXQ_OVFL): a full receive buffer loses messages uncounted",
			  in->name, l->uri);
	int got = floe_listener_rcvbuf(l->l) / 2;
	if (c->syslog.receive_buffer && got >= 0 && (uint64_t)got < c->syslog.receive_buffer)
		floe_info("%s: %s: receive buffer %d bytes, not the %" PRIu64
			  " configured (net.core.rmem_max caps it without CAP_NET_ADMIN)",
			  in->name, l->uri, got, c->syslog.receive_buffer);
	floe_info("%s: listening on %s", in->name, l->uri);
	return 0;
}

static int open_listener(struct floe_syslog_in *in, size_t i, struct floe_err *err)
{
	const struct floe_config_input *c = in->cfg;
	struct sl_lst *l = &in->lst[i];
	l->in = in;
	l->index = (uint16_t)i;
	const char *s = c->syslog.listen[i];
	if (floe_listen_uri_parse(s, strlen(s), &l->u, NULL))
		return floe_err_set(err, FLOE_EINVAL, "%s: listen '%s': not a listen URI", in->name,
				    s);
	bool stream = floe_listen_is_stream(l->u.transport);
	size_t mem = floe_server_footprint(stream ? in->max_conns : 0);
	if (!mem || !(l->mem = floe_malloc(in->a, mem)))
		return floe_err_set(err, FLOE_ENOMEM,
				    "%s: %s: no memory for %u connections in agent.memory_limit",
				    in->name, s, in->max_conns);
	struct floe_listen_opts lo = listen_opts(c);
	const char *what = NULL;
	int rc = 0;
	/* The previous configuration's socket, if it kept one like this open (a reload). */
	if (l->u.transport == FLOE_LISTEN_TLS && sl_load(&in->tls_waiting)) {
		/* Opened once the TLS files are read (retry_listeners). */
		l->l = NULL;
		snprintf(l->uri, sizeof(l->uri), "%s", s);
		sl_store(&l->waiting, 1);
		sl_store(&l->bind_err, 0);
		return 0;
	}
	bool kept = (l->l = floe_syslog_handover_take(in->rx->handover, c, s)) != NULL;
	if (kept) {
		struct floe_listener_stats ls;
		floe_listener_stats(l->l, &ls);
		l->drops_before = ls.kernel_drops;
	} else if ((rc = floe_listener_open(&l->u, &lo, &l->l, &what)) && bind_waits(rc)) {
		/* The receiver tries again (retry_listeners); /healthz says so meanwhile. */
		l->l = NULL;
		snprintf(l->uri, sizeof(l->uri), "%s", s);
		sl_store(&l->waiting, 1);
		sl_store(&l->bind_err, rc);
		l->retry_ms = 0;
		floe_error("%s: listen %s: %s: %s: nothing is received there until it can be "
			   "taken, tried again every %d s; the other inputs read meanwhile",
			   in->name, s, what ? what : "cannot open", strerror(-rc),
			   BIND_RETRY_MS / 1000);
		return 0;
	} else if (rc) {
		return floe_err_set(err, rc, "%s: listen %s: %s: %s", in->name, s,
				    what ? what : "cannot open", strerror(-rc));
	}
	return start_server(in, l, kept, err);
}

static bool retry_tls(struct floe_syslog_in *in, int64_t now_ms);

/* On the receiver's thread, once a second: the addresses that could not be taken yet. */
static void retry_listeners(struct floe_syslog_in *in, int64_t now_ms)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	bool tls = retry_tls(in, now_ms);
	for (size_t i = 0; i < in->nlst; i++) {
		struct sl_lst *l = &in->lst[i];
		if (!sl_load(&l->waiting) || (l->u.transport == FLOE_LISTEN_TLS && !tls))
			continue;
		if (!l->retry_ms)
			l->retry_ms = now_ms + BIND_RETRY_MS;
		if (now_ms < l->retry_ms)
			continue;
		l->retry_ms = now_ms + BIND_RETRY_MS;
		struct floe_listen_opts lo = listen_opts(in->cfg);
		const char *what = NULL;
		int rc = floe_listener_open(&l->u, &lo, &l->l, &what);
		if (rc) {
			l->l = NULL;
			sl_store(&l->bind_err, rc);
			continue;
		}
		struct floe_err e = {0};
		if (start_server(in, l, false, &e)) {
			floe_error("%s (tried again in %d s)", e.msg, BIND_RETRY_MS / 1000);
			floe_listener_close(l->l);
			l->l = NULL;
			l->srv = NULL;
			continue;
		}
		sl_store(&l->waiting, 0);
	}
}

bool floe_syslog_in_waiting(const struct floe_syslog_in *in, char *why, size_t cap)
{
	for (size_t i = 0; i < in->nlst; i++) {
		const struct sl_lst *l = &in->lst[i];
		if (!sl_load(&l->waiting))
			continue;
		int e = sl_load(&l->bind_err);
		if (l->u.transport == FLOE_LISTEN_TLS && sl_load(&in->tls_waiting))
			snprintf(why, cap,
				 "listen %s: tls: %s: nothing is received there (the files are read "
				 "again every %d s)",
				 in->cfg->syslog.listen[i], in->tls_why, BIND_RETRY_MS / 1000);
		else
			snprintf(why, cap,
				 "listen %s: %s: nothing is received there (tried again every %d s)",
				 in->cfg->syslog.listen[i], e ? strerror(-e) : "waiting",
				 BIND_RETRY_MS / 1000);
		return true;
	}
	return false;
}

static struct floe_tls_opts tls_opts(const struct floe_config_input *c)
{
	return (struct floe_tls_opts){
	    .cert_file = c->syslog.tls.cert,
	    .key_file = c->syslog.tls.key,
	    .key_password = c->syslog.tls.key_password,
	    .ca_file = c->syslog.tls.ca,
	};
}

static int open_tls(struct floe_syslog_in *in, struct floe_err *err)
{
	const struct floe_config_input *c = in->cfg;
	if (!c->syslog.tls.cert)
		return 0;
	struct floe_tls_opts o = tls_opts(c);
	char why[384] = "";
	/* A library that cannot be loaded is the host's fault, not the configuration's:
	 * its code keeps the exit status at 1 (runtime), not 2. */
	int rc = floe_tls_lib_load(why, sizeof(why));
	if (rc)
		return floe_err_set(err, rc, "%s: tls: %s", in->name, why);
	rc = floe_tls_server_new(&o, &in->tls, why, sizeof(why));
	if (rc == -ENOENT || rc == -EACCES) {
		/* Files that may come (an ACME client at boot, a mount): the tls:// listeners
		 * wait for them, the input's others and the other inputs read meanwhile. */
		in->tls = NULL;
		snprintf(in->tls_why, sizeof(in->tls_why), "%s", why);
		sl_store(&in->tls_waiting, 1);
		floe_error("%s: tls: %s: its tls:// listeners wait for the files, read again every "
			   "%d s",
			   in->name, why, BIND_RETRY_MS / 1000);
		return 0;
	}
	if (rc)
		return floe_err_set(err, FLOE_EINVAL, "%s: tls: %s", in->name, why);
	return 0;
}

/* On the receiver's thread: the TLS files again, when they were missing. Returns whether
 * the TLS server is there. */
static bool retry_tls(struct floe_syslog_in *in, int64_t now_ms)
{
	if (!sl_load(&in->tls_waiting))
		return true;
	if (!in->tls_retry_ms)
		in->tls_retry_ms = now_ms + BIND_RETRY_MS;
	if (now_ms < in->tls_retry_ms)
		return false;
	in->tls_retry_ms = now_ms + BIND_RETRY_MS;
	const struct floe_config_input *c = in->cfg;
	struct floe_tls_opts o = tls_opts(c);
	char why[384] = "";
	int rc = floe_tls_server_new(&o, &in->tls, why, sizeof(why));
	if (rc) {
		in->tls = NULL;
		/* Files there but wrong (a key that does not match, a half-written PEM) are
		 * said once a minute, not at every try. */
		if (rc != -ENOENT && rc != -EACCES && (now_ms / 1000) % 60 < BIND_RETRY_MS / 1000)
			floe_error("%s: tls: %s (read again in %d s)", in->name, why, BIND_RETRY_MS / 1000);
		return false;
	}
	floe_info("%s: tls: the certificate and key are read now", in->name);
	sl_store(&in->tls_waiting, 0);
	return true;
}


/* Whether listener l is wanted open by the configuration that takes over next. */
static bool handed_over(const struct sl_lst *l)
{
	const struct floe_syslog_in *in = l->in;
	return l->l && in->rx && floe_syslog_handover_expecting(in->rx->handover) &&
	       floe_syslog_handover_wanted(in->rx->handover, in->cfg, in->cfg->syslog.listen[l->index]);
}

/* At the input's free: l's socket goes to the handover when the next configuration
 * wants it (true: not to be closed). */
static bool kept_open(struct sl_lst *l)
{
	if (!handed_over(l))
		return false;
	if (floe_syslog_handover_put(l->in->rx->handover, l->in->cfg,
				     l->in->cfg->syslog.listen[l->index], l->l))
		return true;
	floe_warn("%s: %s: no memory to keep it open across the reload: closed, and opened "
		  "again by the new configuration",
		  l->in->name, l->uri);
	return false;
}

int floe_syslog_in_new(struct floe_alloc *a, const struct floe_config_input *cfg,
		       const char *name, unsigned max_connections, struct floe_syslog_rx *rx,
		       struct floe_loop *notify, const struct floe_clock *clock,
		       struct floe_syslog_in **out, struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_syslog_in *in = floe_calloc(a, 1, sizeof(*in));
	if (!in)
		return floe_err_set(err, FLOE_ENOMEM, "%s: %s", name, floe_strerror(FLOE_ENOMEM));
	in->a = a;
	in->cfg = cfg;
	in->max_conns = max_connections < cfg->syslog.max_connections
				? max_connections
				: cfg->syslog.max_connections;
	snprintf(in->name, sizeof(in->name), "%s", name);
	in->rx = rx;
	in->notify = notify;
	in->clock = clock;
	/* Room for two of the largest reads' worth of entries and a source entry each. */
	in->low = 2 * (sq_entry_size(sizeof(struct sq_src)) +
		       sq_entry_size((size_t)cfg->syslog.max_message_bytes));
	size_t qcap = floe_syslog_in_queue_bytes(cfg);
	if (qcap < 4 * in->low)
		qcap = 4 * in->low;
	int rc = sq_init(&in->q, a, qcap);
	if (rc == 0 && !(in->stash = floe_malloc(a, FLOE_SYSLOG_READ_BYTES)))
		rc = FLOE_ENOMEM;
	if (rc == 0 && !(in->lst = floe_calloc(a, cfg->syslog.nlisten, sizeof(*in->lst))))
		rc = FLOE_ENOMEM;
	if (rc) {
		floe_syslog_in_free(in);
		return floe_err_set(err, rc,
				    "%s: no memory for the message queue in agent.memory_limit",
				    name);
	}
	rc = open_tls(in, err);
	for (size_t i = 0; rc == 0 && i < cfg->syslog.nlisten; i++) {
		rc = open_listener(in, i, err);
		in->nlst = i + 1;
	}
	if (rc) {
		floe_syslog_in_free(in);
		return rc;
	}
	in->next = rx->ins;
	rx->ins = in;
	*out = in;
	return 0;
}

void floe_syslog_in_adopt(struct floe_syslog_in *in, const struct floe_config_input *cfg,
			  struct floe_loop *notify, const struct floe_clock *clock)
{
	unsigned prev = take_over(in->rx);
	in->cfg = cfg;
	in->notify = notify;
	in->clock = clock;
	/* The stop held it (its sockets paused, the kernel keeping what comes): the next
	 * configuration reads on, unless the queue is still too full. */
	in->hold_asked = false;
	sl_store(&in->ctl_hold, 0);
	sync_pause(in);
	floe_owner_leave(prev);
}

void floe_syslog_in_free(struct floe_syslog_in *in)
{
	if (!in)
		return;
	unsigned prev = take_over(in->rx);
	for (struct floe_syslog_in **p = in->rx ? &in->rx->ins : NULL; p && *p; p = &(*p)->next)
		if (*p == in) {
			*p = in->next;
			break;
		}
	for (size_t i = 0; i < in->nlst; i++) {
		floe_server_fini(in->lst[i].srv);
		if (!kept_open(&in->lst[i]))
			floe_listener_close(in->lst[i].l);
		floe_free(in->a, in->lst[i].mem);
	}
	floe_tls_server_free(in->tls);
	floe_free(in->a, in->lst);
	floe_free(in->a, in->stash);
	sq_fini(&in->q, in->a);
	floe_free(in->a, in);
	floe_owner_leave(prev);
}

/* ---- the receiver's control and counters ------------------------------------------------- */

/* Frames the stash into the queue as far as it goes; true when it is all in. */
static bool drain_stash(struct floe_syslog_in *in)
{
	if (!in->stash_len)
		return true;
	struct floe_server *srv = floe_conn_server(in->stash_conn);
	struct sl_lst *l = NULL;
	for (size_t i = 0; i < in->nlst && !l; i++)
		if (in->lst[i].srv == srv)
			l = &in->lst[i];
	if (l)
		in->stash_off += frame_into(l, in->stash_conn, in->stash + in->stash_off,
					    in->stash_len - in->stash_off, in->src.received_us);
	if (l && in->stash_off < in->stash_len)
		return false;
	in->stash_len = in->stash_off = 0;
	in->stash_conn = NULL;
	return true;
}

/* Copies the servers' and listeners' counters for the runner. */
static void snapshot(struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	uint64_t acc = 0, rej = 0, open = 0, idle = 0, ev = 0, hs = 0, rd = 0, kd = 0;
	for (size_t i = 0; i < in->nlst; i++) {
		struct floe_server_stats ss;
		if (!in->lst[i].srv)
			continue;
		floe_server_stats(in->lst[i].srv, &ss);
		acc += ss.accepted;
		rej += ss.rejected;
		open += ss.open;
		idle += ss.closed_idle;
		ev += ss.evicted;
		hs += ss.handshake_failures;
		rd += ss.read_errors;
		if (!floe_listen_is_stream(floe_listener_transport(in->lst[i].l))) {
			struct floe_listener_stats ls;
			(void)floe_listener_sync_drops(in->lst[i].l);
			floe_listener_stats(in->lst[i].l, &ls);
			kd += ls.kernel_drops - in->lst[i].drops_before;
		}
	}
	sl_set(&in->c.connections, acc);
	sl_set(&in->c.open, open);
	sl_set(&in->c.closed_idle, idle);
	sl_set(&in->c.evicted, ev);
	sl_set(&in->c.handshake_failures, hs);
	sl_set(&in->c.read_errors, rd);
	sl_set(&in->c.kernel_drops, kd);
	/* rejected also counts framers the budget refused (on_open); a live connection's
	 * framer adds its counts when it closes. */
	sl_set(&in->c.rejected, rej + in->framer_refused);
	sl_set(&in->c.truncated, in->dgram_truncated + in->fst.truncated);
	sl_set(&in->c.bad_length, in->fst.bad_length);
	sl_set(&in->c.at_close, in->fst.flushed_at_close);
}

/* The most datagrams read at the close: a sender still flooding the socket does not
 * hold the stop up. */
#define CLOSE_DGRAMS_MAX 1000000

/* At the close: the datagrams the socket still holds (the receiver was held for a full
 * spool, or stopped) go into the queue as far as it has room; those past it are read and
 * counted as lost at the stop, so that none dies unseen in the kernel's buffer. */
static void close_datagrams(struct sl_lst *l)
{
	struct floe_syslog_in *in = l->in;
	size_t cap;
	char *buf = floe_loop_buffer(in->rx->loop, &cap);
	const size_t need = sq_entry_size(sizeof(struct sq_src)) +
			    sq_entry_size((size_t)in->cfg->syslog.max_message_bytes);
	for (unsigned i = 0; i < CLOSE_DGRAMS_MAX; i++) {
		struct floe_dgram d;
		if (floe_listener_recv(l->l, buf, cap, &d) <= 0)
			break;
		if (sq_room(&in->q) >= need)
			on_datagram(l, &d);
		else if (d.len)
			in->lost_at_stop++;
	}
}

void floe_syslog_in_close(struct floe_syslog_in *in)
{
	unsigned prev = take_over(in->rx);
	for (size_t i = 0; i < in->nlst; i++) {
		if (!in->lst[i].srv)
			continue;
		if (floe_listen_is_stream(floe_listener_transport(in->lst[i].l)))
			floe_server_close_all(in->lst[i].srv);
		else if (!handed_over(&in->lst[i]))
			close_datagrams(&in->lst[i]);
	}
	snapshot(in);
	floe_owner_leave(prev);
}

/* What the runner asked for, on this thread: a hold, room again, the TLS files. */
static void control(struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	if (sl_load(&in->full) && drain_stash(in) && sq_room(&in->q) >= 2 * in->low) {
		sl_store(&in->full, 0);
		check_room(in); /* the stash's messages may wait for a sleeping runner */
	}
	sync_pause(in);
	if (__atomic_exchange_n(&in->ctl_reload, 0, __ATOMIC_ACQ_REL) && in->tls) {
		char why[256] = "";
		if (floe_tls_server_reload(in->tls, why, sizeof(why)))
			floe_error("%s: SIGHUP: the TLS certificate and key were not reloaded (the "
				   "old ones stay): %s",
				   in->name, why);
		else
			floe_info("%s: SIGHUP: TLS certificate and key reloaded", in->name);
	}
	snapshot(in);
}

static void on_wake(void *arg)
{
	struct floe_syslog_rx *rx = arg;
	for (struct floe_syslog_in *in = rx->ins; in; in = in->next)
		control(in);
}

static void on_stats(struct floe_timer *t)
{
	FLOE_OWNER(FLOE_ROLE_SYSLOG_RX);
	struct floe_syslog_rx *rx = t->arg;
	for (struct floe_syslog_in *in = rx->ins; in; in = in->next) {
		retry_listeners(in, floe_loop_now(rx->loop));
		snapshot(in);
	}
	floe_loop_timer_arm(rx->loop, t, floe_loop_now(rx->loop) + STATS_MS);
}

int floe_syslog_rx_new(struct floe_alloc *a, struct floe_syslog_handover *handover,
		       struct floe_syslog_rx **out, struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	struct floe_syslog_rx *rx = floe_calloc(a, 1, sizeof(*rx));
	if (!rx || !(rx->buf = floe_malloc(a, FLOE_SYSLOG_READ_BYTES))) {
		floe_free(a, rx);
		return floe_err_set(err, FLOE_ENOMEM, "syslog: no memory for the receive buffer");
	}
	rx->a = a;
	rx->handover = handover;
	struct floe_loop_opts lo = {.on_wake = on_wake,
				    .wake_arg = rx,
				    .buffer = rx->buf,
				    .buffer_len = FLOE_SYSLOG_READ_BYTES};
	int rc = floe_loop_new(&lo, &rx->loop);
	if (rc) {
		floe_syslog_rx_free(rx);
		return floe_err_set(err, rc, "syslog: cannot make the receiver's loop: %s",
				    floe_strerror(rc));
	}
	rx->stats_timer.cb = on_stats;
	rx->stats_timer.arg = rx;
	*out = rx;
	return 0;
}

static void run_loop(void *arg)
{
	struct floe_syslog_rx *rx = arg;
	/* The listeners, their servers, the TLS server, the framers and the stash are this
	 * thread's from here until the stop (syslog_impl.h). */
	unsigned prev = floe_owner_enter(FLOE_ROLE_SYSLOG_RX);
	(void)floe_loop_run(rx->loop);
	floe_owner_leave(prev);
}

int floe_syslog_rx_start(struct floe_syslog_rx *rx, struct floe_err *err)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	floe_loop_timer_arm(rx->loop, &rx->stats_timer, floe_loop_now(rx->loop) + STATS_MS);
	/* A receiver kept across a reload has its thread already (stopped, not freed), and
	 * its loop the stop it was given. */
	floe_loop_resume(rx->loop);
	int rc = rx->thread ? 0 : floe_worker_new(1, &rx->thread);
	if (rc == 0)
		rc = floe_worker_submit(rx->thread, run_loop, rx, &rx->task);
	if (rc)
		return floe_err_set(err, rc, "syslog: cannot start the receiver thread: %s",
				    floe_strerror(rc));
	return 0;
}

void floe_syslog_rx_stop(struct floe_syslog_rx *rx)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (!rx || !rx->task)
		return;
	floe_loop_stop(rx->loop);
	floe_worker_wait(rx->thread, rx->task);
	rx->task = NULL;
	/* The last counters, now that nothing else runs on the loop. */
	unsigned prev = take_over(rx);
	for (struct floe_syslog_in *in = rx->ins; in; in = in->next)
		snapshot(in);
	floe_owner_leave(prev);
}

void floe_syslog_rx_free(struct floe_syslog_rx *rx)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (!rx)
		return;
	floe_syslog_rx_stop(rx);
	floe_worker_free(rx->thread);
	if (rx->loop)
		floe_loop_timer_disarm(rx->loop, &rx->stats_timer);
	floe_loop_free(rx->loop);
	floe_free(rx->a, rx->buf);
	floe_free(rx->a, rx);
}

size_t floe_syslog_in_queue_bytes(const struct floe_config_input *cfg)
{
	for (size_t i = 0; i < cfg->syslog.nlisten; i++) {
		struct floe_listen_uri u;
		const char *s = cfg->syslog.listen[i];
		if (floe_listen_uri_parse(s, strlen(s), &u, NULL) == 0 &&
		    !floe_listen_is_stream(u.transport))
			return FLOE_SYSLOG_DGRAM_QUEUE_BYTES;
	}
	return FLOE_SYSLOG_QUEUE_BYTES;
}

uint64_t floe_syslog_in_footprint(const struct floe_config_input *cfg)
{
	uint64_t low = 2 * (sq_entry_size(sizeof(struct sq_src)) +
			    sq_entry_size((size_t)cfg->syslog.max_message_bytes));
	uint64_t qb = floe_syslog_in_queue_bytes(cfg);
	uint64_t q = qb > 4 * low ? qb : 4 * low;
	uint64_t n = q + FLOE_SYSLOG_READ_BYTES + sizeof(struct floe_syslog_in);
	for (size_t i = 0; i < cfg->syslog.nlisten; i++)
		n += floe_server_footprint(cfg->syslog.max_connections) +
		     (uint64_t)cfg->syslog.max_connections * floe_framer_idle_footprint();
	return n;
}
