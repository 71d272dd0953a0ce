/* The syslog input's runner side (syslog_impl.h): the queue drained into the batch, the
 * source of each message as a column, holds and reloads asked of the receiver thread,
 * the position (a count of messages taken) and the counters. */
#include "agent/input/syslog_impl.h"

#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/loop.h"

#include <stdio.h>
#include <string.h>

#define BLOB_MAGIC "FSYS"
#define BLOB_VERSION 1
#define BLOB_LEN 16

/* ---- the drain side -------------------------------------------------------------------- */

/* The source column and peer of the messages after source entry s of listener k. */
static void set_source(struct floe_syslog_in *in, uint16_t k, const struct sq_src *s)
{
	in->cur = *s;
	in->cur_listener = k;
	const struct floe_listen_uri *u = k < in->nlst ? &in->lst[k].u : NULL;
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
		    in->cur_listener < in->nlst ? &in->lst[in->cur_listener].u : NULL;
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
		in->messages++;
		in->bytes += h->len;
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
	FLOE_OWNER(FLOE_ROLE_MAIN);
	*got = 0;
	int rc = drain_queue(in, budget, fn, ctx, got);
	/* A receiver stopped for room goes on once the runner made some. */
	if (sl_load(&in->full))
		floe_loop_wake(in->rx->loop);
	return rc < 0 ? rc : 0;
}

void floe_syslog_in_hold(struct floe_syslog_in *in, bool hold)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	if (in->hold_asked == hold)
		return;
	in->hold_asked = hold;
	sl_store(&in->ctl_hold, hold);
	floe_loop_wake(in->rx->loop);
}

bool floe_syslog_in_held(const struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	return sl_load(&in->held) == (int)in->hold_asked;
}

bool floe_syslog_in_pending(const struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	return !sq_empty(&in->q) || sl_load(&in->full);
}

bool floe_syslog_in_arm_wake(struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	__atomic_store_n(&in->want_wake, 1, __ATOMIC_SEQ_CST);
	return !sq_empty(&in->q);
}

uint64_t floe_syslog_in_received(const struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	return sl_get(&in->c.rx_bytes);
}

/* ---- positions, reload, stats ---------------------------------------------------------- */

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int floe_syslog_in_positions(const struct floe_syslog_in *in, struct floe_buf *out)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
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
	FLOE_OWNER(FLOE_ROLE_MAIN);
	uint64_t v;
	int rc = floe_syslog_in_blob_taken(blob, len, &v);
	if (rc == 0)
		in->taken = v;
	return rc;
}

void floe_syslog_in_reload(struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	__atomic_store_n(&in->ctl_reload, 1, __ATOMIC_RELEASE);
	floe_loop_wake(in->rx->loop);
}

void floe_syslog_in_stats(const struct floe_syslog_in *in, struct floe_syslog_in_stats *st)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	memset(st, 0, sizeof(*st));
	st->messages = in->messages;
	st->bytes = in->bytes;
	st->truncated = sl_get(&in->c.truncated);
	st->bad_length = sl_get(&in->c.bad_length);
	st->at_close = sl_get(&in->c.at_close);
	st->dropped = sl_get(&in->c.dropped);
	st->kernel_drops = sl_get(&in->c.kernel_drops);
	st->connections = sl_get(&in->c.connections);
	st->rejected = sl_get(&in->c.rejected);
	st->open = sl_get(&in->c.open);
	st->closed_idle = sl_get(&in->c.closed_idle);
	st->evicted = sl_get(&in->c.evicted);
	st->handshake_failures = sl_get(&in->c.handshake_failures);
	st->read_errors = sl_get(&in->c.read_errors);
	st->paused = sl_get(&in->c.paused);
	st->parse_failures = in->parse_failures;
	st->ts_failures = in->ts_failures;
	st->lost_at_stop = in->lost_at_stop;
}

void floe_syslog_in_count_parse(struct floe_syslog_in *in, bool failed, bool ts_failed)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	in->parse_failures += failed;
	in->ts_failures += ts_failed;
}

uint64_t floe_syslog_in_abandon(struct floe_syslog_in *in)
{
	FLOE_OWNER(FLOE_ROLE_MAIN);
	uint64_t n = 0;
	const char *p;
	const struct sq_hdr *h;
	while ((h = sq_peek(&in->q, &p))) {
		n += h->kind == SQ_MSG;
		sq_pop(&in->q);
	}
	in->lost_at_stop += n;
	return n;
}
