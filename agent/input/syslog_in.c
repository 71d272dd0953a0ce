/* The syslog input: listeners and their servers on the runner's loop, a framer per stream
 * connection, and the queue the runner drains (syslog_in.h).
 *
 * Memory, all from the budget: the queue (FLOE_SYSLOG_QUEUE_BYTES), each stream
 * listener's table of max_connections slots (platform/server.h, about 200 bytes a slot),
 * a framer per open connection (0.3 KiB idle; its buffer grows only while a frame is in
 * progress and is given back when it is over), and the stash: when the queue runs out of
 * room in the middle of a stream chunk, what is left of the chunk is kept there (at most
 * one read, FLOE_SYSLOG_READ_BYTES) and every listener of the input is paused until the
 * runner has drained the queue and the stash went in. So a chunk is never split from its
 * connection's order, and nothing waits anywhere but in the kernel.
 *
 * Pausing happens before the queue is full: when it has less room than the largest entry
 * a read can make twice over, so that a datagram, a closing connection's last frame and
 * a source entry always fit. */
#include "agent/input/syslog_in.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/input/syslog_queue.h"
#include "agent/parse/framing.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/listen.h"
#include "platform/log.h"
#include "platform/loop.h"
#include "platform/server.h"
#include "platform/tls.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define BLOB_MAGIC "FSYS"
#define BLOB_VERSION 1
#define BLOB_LEN 16

struct lst {
	struct floe_syslog_in *in;
	uint16_t index;
	struct floe_listener *l;
	struct floe_server *srv;
	void *mem; /* the server's memory */
	char uri[FLOE_LISTEN_URI_MAX];
};

struct floe_syslog_in {
	struct floe_alloc *a;
	const struct floe_config_input *cfg;
	char name[32];
	struct floe_loop *loop;
	const struct floe_clock *clock;
	struct floe_tls_server *tls;
	struct lst *lst;
	size_t nlst;
	struct sq q;
	size_t low; /* pause reading below this much room */
	/* The last source entry written (so the next one is written only on a change). */
	bool have_src;
	uint16_t src_listener;
	struct sq_src src;
	/* What a full queue left of a stream chunk, and whose it is. */
	char *stash;
	size_t stash_len, stash_off;
	struct floe_conn *stash_conn;
	bool held, full; /* paused by the runner; paused for room */
	/* The drain side: the source of the messages being handed over. */
	uint16_t cur_listener;
	struct sq_src cur;
	char cur_source[FLOE_LISTEN_URI_MAX + 16];
	size_t cur_source_len, cur_peer_off, cur_peer_len;
	uint64_t taken;
	struct floe_syslog_in_stats st;
	struct floe_framer_stats fst; /* of framers freed so far */
};

static void sync_pause(struct floe_syslog_in *in)
{
	bool p = in->held || in->full;
	for (size_t i = 0; i < in->nlst; i++)
		floe_server_pause(in->lst[i].srv, p);
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

static void check_room(struct floe_syslog_in *in)
{
	if (!in->full && sq_room(&in->q) < in->low) {
		in->full = true;
		in->st.paused++;
		sync_pause(in);
	}
}

/* Frames p[0..n) of connection c (of listener l) into the queue. Returns the bytes
 * consumed: fewer than n when the queue ran out of room (the caller stashes the rest). */
static size_t frame_into(struct lst *l, struct floe_conn *c, const char *p, size_t n, int64_t now)
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
			in->st.dropped++; /* cannot happen: the room was checked */
	}
	floe_framer_trim(fr);
	return at;
}

static void on_data(void *arg, struct floe_conn *c, const char *p, size_t n)
{
	struct lst *l = arg;
	struct floe_syslog_in *in = l->in;
	int64_t now = in->clock->wall_us(in->clock->ctx);
	size_t used = in->stash_len ? 0 : frame_into(l, c, p, n, now);
	if (used < n) {
		/* Only one chunk can wait: every listener stops until it is in. */
		if (in->stash_len) {
			in->st.dropped++; /* cannot happen: the listeners were paused */
			floe_error("%s: a second read while the queue was full: %zu bytes dropped",
				   in->name, n);
		} else {
			memcpy(in->stash, p + used, n - used);
			in->stash_len = n - used;
			in->stash_off = 0;
			in->stash_conn = c;
		}
		if (!in->full) {
			in->full = true;
			in->st.paused++;
			sync_pause(in);
		}
		return;
	}
	check_room(in);
}

static int on_open(void *arg, struct floe_conn *c)
{
	struct lst *l = arg;
	struct floe_framer *fr = NULL;
	if (floe_framer_new(l->in->a, (size_t)l->in->cfg->syslog.max_message_bytes, &fr)) {
		l->in->st.rejected++;
		return -1;
	}
	floe_conn_set_data(c, fr);
	if (l->in->held || l->in->full)
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
	(void)why;
	struct lst *l = arg;
	struct floe_syslog_in *in = l->in;
	struct floe_framer *fr = floe_conn_data(c);
	if (!fr)
		return;
	int64_t now = in->clock->wall_us(in->clock->ctx);
	if (in->stash_conn == c) {
		/* Closed with bytes waiting (the input is being freed): in, as far as room goes. */
		in->stash_off += frame_into(l, c, in->stash + in->stash_off,
					    in->stash_len - in->stash_off, now);
		if (in->stash_off < in->stash_len)
			in->st.dropped++;
		in->stash_len = in->stash_off = 0;
		in->stash_conn = NULL;
	}
	struct floe_frame f;
	if (floe_framer_close(fr, &f) &&
	    (!put_src(in, l->index, floe_conn_peer(c), now) || !put_msg(in, f.p, f.len, f.flags)))
		in->st.dropped++;
	add_framer_stats(in, fr);
	floe_framer_free(fr);
	floe_conn_set_data(c, NULL);
	check_room(in);
}

static void on_datagram(void *arg, const struct floe_dgram *d)
{
	struct lst *l = arg;
	struct floe_syslog_in *in = l->in;
	if (d->len == 0)
		return;
	int64_t now = in->clock->wall_us(in->clock->ctx);
	/* A datagram is one message; trailing LF, CR and NUL bytes are the parser's. */
	unsigned flags = d->truncated || d->len > in->cfg->syslog.max_message_bytes
			     ? FLOE_FRAME_TRUNCATED
			     : 0;
	if (!put_src(in, l->index, &d->peer, now) || !put_msg(in, d->p, d->len, flags))
		in->st.dropped++; /* cannot happen: reading stops while there is less room */
	if (flags)
		in->st.truncated++;
	check_room(in);
}

/* ---- listeners ----------------------------------------------------------------------- */

static int open_listener(struct floe_syslog_in *in, size_t i, struct floe_err *err)
{
	const struct floe_config_input *c = in->cfg;
	struct lst *l = &in->lst[i];
	l->in = in;
	l->index = (uint16_t)i;
	const char *s = c->syslog.listen[i];
	struct floe_listen_uri u;
	if (floe_listen_uri_parse(s, strlen(s), &u, NULL))
		return floe_err_set(err, FLOE_EINVAL, "%s: listen '%s': not a listen URI", in->name,
				    s);
	struct floe_listen_opts lo = {
	    .rcvbuf = c->syslog.receive_buffer > INT32_MAX / 2 ? INT32_MAX / 2
							    : (int)c->syslog.receive_buffer,
	    .mode = c->syslog.socket_mode,
	    .owner = c->syslog.socket_owner,
	    .group = c->syslog.socket_group,
	};
	const char *what = NULL;
	int rc = floe_listener_open(&u, &lo, &l->l, &what);
	if (rc)
		return floe_err_set(err, rc, "%s: listen %s: %s: %s", in->name, s,
				    what ? what : "cannot open", strerror(-rc));
	floe_listen_uri_format(&u, floe_listener_port(l->l), l->uri, sizeof(l->uri));
	bool stream = floe_listen_is_stream(u.transport);
	size_t mem = floe_server_footprint(stream ? c->syslog.max_connections : 0);
	if (!mem || !(l->mem = floe_malloc(in->a, mem)))
		return floe_err_set(err, FLOE_ENOMEM,
				    "%s: %s: no memory for %u connections in agent.memory_limit",
				    in->name, l->uri, c->syslog.max_connections);
	struct floe_server_opts so = {
	    .max_connections = c->syslog.max_connections,
	    .idle_timeout_ms = (int64_t)c->syslog.idle_timeout_ms,
	    .tls = in->tls,
	};
	struct floe_server_cbs cbs = {.arg = l,
				      .on_open = on_open,
				      .on_data = on_data,
				      .on_close = on_close,
				      .on_datagram = on_datagram};
	if ((rc = floe_server_init(l->mem, mem, in->loop, l->l, &so, &cbs, &l->srv)))
		return floe_err_set(err, rc, "%s: %s: %s", in->name, l->uri, strerror(-rc));
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

static int open_tls(struct floe_syslog_in *in, struct floe_err *err)
{
	const struct floe_config_input *c = in->cfg;
	if (!c->syslog.tls.cert)
		return 0;
	struct floe_tls_opts o = {
	    .cert_file = c->syslog.tls.cert,
	    .key_file = c->syslog.tls.key,
	    .key_password = c->syslog.tls.key_password,
	    .ca_file = c->syslog.tls.ca,
	};
	char why[256] = "";
	int rc = floe_tls_server_new(&o, &in->tls, why, sizeof(why));
	if (rc)
		return floe_err_set(err, FLOE_EINVAL, "%s: tls: %s", in->name, why);
	return 0;
}

int floe_syslog_in_new(struct floe_alloc *a, const struct floe_config_input *cfg,
		       const char *name, struct floe_loop *loop, const struct floe_clock *clock,
		       struct floe_syslog_in **out, struct floe_err *err)
{
	size_t blen = 0;
	if (!floe_loop_buffer(loop, &blen) || blen < FLOE_SYSLOG_READ_BYTES)
		return floe_err_set(err, FLOE_EINVAL, "%s: the event loop has no read buffer", name);
	struct floe_syslog_in *in = floe_calloc(a, 1, sizeof(*in));
	if (!in)
		return floe_err_set(err, FLOE_ENOMEM, "%s: %s", name, floe_strerror(FLOE_ENOMEM));
	in->a = a;
	in->cfg = cfg;
	snprintf(in->name, sizeof(in->name), "%s", name);
	in->loop = loop;
	in->clock = clock;
	/* Room for two of the largest reads' worth of entries and a source entry each. */
	in->low = 2 * (sq_entry_size(sizeof(struct sq_src)) +
		       sq_entry_size((size_t)cfg->syslog.max_message_bytes));
	size_t qcap = FLOE_SYSLOG_QUEUE_BYTES;
	if (qcap < 4 * in->low)
		qcap = 4 * in->low;
	int rc = sq_init(&in->q, a, qcap);
	if (rc == 0 && !(in->stash = floe_malloc(a, blen)))
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
	*out = in;
	return 0;
}

void floe_syslog_in_free(struct floe_syslog_in *in)
{
	if (!in)
		return;
	for (size_t i = 0; i < in->nlst; i++) {
		floe_server_fini(in->lst[i].srv);
		floe_listener_close(in->lst[i].l);
		floe_free(in->a, in->lst[i].mem);
	}
	floe_tls_server_free(in->tls);
	floe_free(in->a, in->lst);
	floe_free(in->a, in->stash);
	sq_fini(&in->q, in->a);
	floe_free(in->a, in);
}

/* ---- the drain side -------------------------------------------------------------------- */

/* The source column and peer of the messages after source entry s of listener k. */
static void set_source(struct floe_syslog_in *in, uint16_t k, const struct sq_src *s)
{
	in->cur = *s;
	in->cur_listener = k;
	const struct floe_listen_uri *u = k < in->nlst ? floe_listener_uri(in->lst[k].l) : NULL;
	enum floe_listen_transport t = u ? u->transport : FLOE_LISTEN_UDP;
	int n = snprintf(in->cur_source, sizeof(in->cur_source), "syslog+%s://",
			 floe_listen_scheme(t));
	size_t off = n > 0 ? (size_t)n : 0;
	in->cur_peer_off = off;
	in->cur_peer_len = 0;
	if (u && (t == FLOE_LISTEN_UNIX || t == FLOE_LISTEN_UNIX_STREAM)) {
		n = snprintf(in->cur_source + off, sizeof(in->cur_source) - off, "%s", u->path);
	} else {
		n = floe_sockaddr_format(&s->peer, false, in->cur_source + off,
					 sizeof(in->cur_source) - off);
		in->cur_peer_len = n > 0 ? (size_t)n : 0;
	}
	in->cur_source_len = off + (n > 0 ? (size_t)n : 0);
	if (in->cur_source_len >= sizeof(in->cur_source))
		in->cur_source_len = sizeof(in->cur_source) - 1;
}

/* Frames the stash into the queue as far as it goes; true when it is all in. */
static bool drain_stash(struct floe_syslog_in *in)
{
	if (!in->stash_len)
		return true;
	struct floe_server *srv = floe_conn_server(in->stash_conn);
	struct lst *l = NULL;
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

/* Hands the queue's messages to fn until it is empty, fn stops or the budget went. */
static int drain_queue(struct floe_syslog_in *in, size_t budget, floe_syslog_in_fn fn, void *ctx,
		       size_t *got)
{
	const char *p;
	const struct sq_hdr *h;
	while (*got < budget && (h = sq_peek(&in->q, &p))) {
		if (h->kind == SQ_SRC) {
			struct sq_src s;
			memcpy(&s, p, sizeof(s));
			set_source(in, h->listener, &s);
			sq_pop(&in->q);
			continue;
		}
		const struct floe_listen_uri *u =
		    in->cur_listener < in->nlst ? floe_listener_uri(in->lst[in->cur_listener].l)
						: NULL;
		struct floe_syslog_in_msg m = {
		    .data = p,
		    .len = h->len,
		    .source = in->cur_source,
		    .source_len = in->cur_source_len,
		    .peer = in->cur_source + in->cur_peer_off,
		    .peer_len = in->cur_peer_len,
		    .local = u && u->transport == FLOE_LISTEN_UNIX,
		    .truncated = (h->flags & FLOE_FRAME_TRUNCATED) != 0,
		    .received_us = in->cur.received_us,
		};
		int r = fn(ctx, &m);
		if (r < 0)
			return r;
		in->st.messages++;
		in->st.bytes += h->len;
		in->taken++;
		*got += h->len + 1;
		sq_pop(&in->q);
		if (r == 1)
			return 1;
	}
	return 0;
}

int floe_syslog_in_read(struct floe_syslog_in *in, size_t budget, floe_syslog_in_fn fn, void *ctx,
			size_t *got)
{
	*got = 0;
	for (int round = 0; round < 2; round++) {
		int rc = drain_queue(in, budget, fn, ctx, got);
		if (rc < 0)
			return rc;
		/* The stash goes in once there is room, and reading resumes after it. */
		bool stash_in = drain_stash(in);
		if (stash_in && in->full && sq_room(&in->q) >= 2 * in->low) {
			in->full = false;
			sync_pause(in);
		}
		if (rc == 1 || !stash_in || *got >= budget)
			break;
	}
	return 0;
}

void floe_syslog_in_hold(struct floe_syslog_in *in, bool hold)
{
	if (in->held == hold)
		return;
	in->held = hold;
	sync_pause(in);
}

bool floe_syslog_in_pending(const struct floe_syslog_in *in)
{
	return in->q.fill > 0 || in->stash_len > 0;
}

/* ---- positions, reload, stats ---------------------------------------------------------- */

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int floe_syslog_in_positions(const struct floe_syslog_in *in, struct floe_buf *out)
{
	uint8_t b[BLOB_LEN];
	memcpy(b, BLOB_MAGIC, 4);
	put_le32(b + 4, BLOB_VERSION);
	put_le32(b + 8, (uint32_t)in->taken);
	put_le32(b + 12, (uint32_t)(in->taken >> 32));
	return floe_buf_append(out, b, sizeof(b));
}

int floe_syslog_in_blob_taken(const uint8_t *blob, size_t len, uint64_t *taken)
{
	if (len != BLOB_LEN || memcmp(blob, BLOB_MAGIC, 4) != 0)
		return FLOE_ECORRUPT;
	uint32_t ver = (uint32_t)blob[4] | (uint32_t)blob[5] << 8 | (uint32_t)blob[6] << 16 |
		       (uint32_t)blob[7] << 24;
	if (ver != BLOB_VERSION)
		return FLOE_ECORRUPT;
	uint64_t v = 0;
	for (int i = 15; i >= 8; i--)
		v = v << 8 | blob[i];
	*taken = v;
	return 0;
}

int floe_syslog_in_restore(struct floe_syslog_in *in, const uint8_t *blob, size_t len)
{
	uint64_t v;
	int rc = floe_syslog_in_blob_taken(blob, len, &v);
	if (rc == 0)
		in->taken = v;
	return rc;
}

int floe_syslog_in_reload(struct floe_syslog_in *in)
{
	if (!in->tls)
		return 0;
	char why[256] = "";
	int rc = floe_tls_server_reload(in->tls, why, sizeof(why));
	if (rc)
		floe_error("%s: SIGHUP: the TLS certificate and key were not reloaded (the old "
			   "ones stay): %s",
			   in->name, why);
	else
		floe_info("%s: SIGHUP: TLS certificate and key reloaded", in->name);
	return rc;
}

void floe_syslog_in_stats(struct floe_syslog_in *in, struct floe_syslog_in_stats *st)
{
	*st = in->st;
	st->truncated += in->fst.truncated;
	st->bad_length = in->fst.bad_length;
	st->at_close = in->fst.flushed_at_close;
	for (size_t i = 0; i < in->nlst; i++) {
		struct floe_server_stats ss;
		floe_server_stats(in->lst[i].srv, &ss);
		st->connections += ss.accepted;
		st->rejected += ss.rejected;
		st->open += ss.open;
		st->closed_idle += ss.closed_idle;
		st->handshake_failures += ss.handshake_failures;
		st->read_errors += ss.read_errors;
		if (!floe_listen_is_stream(floe_listener_transport(in->lst[i].l))) {
			struct floe_listener_stats ls;
			(void)floe_listener_sync_drops(in->lst[i].l);
			floe_listener_stats(in->lst[i].l, &ls);
			st->kernel_drops += ls.kernel_drops;
		}
	}
}

uint64_t floe_syslog_in_footprint(const struct floe_config_input *cfg)
{
	uint64_t low = 2 * (sq_entry_size(sizeof(struct sq_src)) +
			    sq_entry_size((size_t)cfg->syslog.max_message_bytes));
	uint64_t q = FLOE_SYSLOG_QUEUE_BYTES > 4 * low ? FLOE_SYSLOG_QUEUE_BYTES : 4 * low;
	uint64_t n = q + FLOE_SYSLOG_READ_BYTES + sizeof(struct floe_syslog_in);
	for (size_t i = 0; i < cfg->syslog.nlisten; i++)
		n += floe_server_footprint(cfg->syslog.max_connections) +
		     (uint64_t)cfg->syslog.max_connections * floe_framer_idle_footprint();
	return n;
}
