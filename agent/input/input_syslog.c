/* The syslog input as an input (input.h): its listeners (syslog_in.h) on the shared
 * receiver thread, and each message mapped to a record: the header's fields in their
 * columns, structured data (and what went wrong) in attrs, the message part as the
 * message. */
#include "agent/input/input_impl.h"
#include "agent/input/preflight.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/input/syslog_handover.h"
#include "agent/input/syslog_in.h"
#include "agent/parse/fields.h"
#include "agent/parse/syslog.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct syslog_input {
	struct floe_alloc *a;
	struct floe_input_shared *sh;
	const struct floe_config_input *cfg;
	size_t index; /* in the configuration */
	struct floe_syslog_in *in;
	const struct floe_input_sink *sink; /* during a read */
	/* What in's counters said when this configuration took it over from the previous
	 * one (a reload): those are the previous runner's, which the process's totals hold. */
	uint64_t base[FLOE_INPUT_METRICS_MAX];
	struct floe_env_zone zone; /* zone: local (the records are made on one thread) */
};

static const struct floe_input_metric metrics[] = {
    FLOE_INPUT_M_LINES,
    FLOE_INPUT_M_BYTES,
    FLOE_INPUT_M_PARSE_FAILURES,
    FLOE_INPUT_M_TS_FAILURES,
    {"truncated", "floe_syslog_truncated_total", "Messages cut at max_message_bytes.", 0},
    {"bad_length", "floe_syslog_bad_length_total",
     "Octet counts that were none (the frame read as text).", 0},
    {"at_close", "floe_syslog_at_close_total",
     "Frames a closing connection (or the stop) left half sent, kept.", 0},
    {"dropped", "floe_syslog_dropped_total", "Messages that found no room in the queue.", 0},
    {"lost_at_stop", "floe_syslog_lost_at_stop_total",
     "Messages received but still queued when the agent stopped (not committed).", 0},
    {"kernel_drops", "floe_syslog_kernel_drops_total",
     "Datagrams the kernel dropped, the socket's receive buffer full.", 0},
    {"connections", "floe_syslog_connections_total", "Stream connections accepted.", 0},
    {"rejected", "floe_syslog_connections_rejected_total",
     "Connections refused: max_connections, or no memory.", 0},
    {"open", "floe_syslog_connections_open", "Stream connections open.", FLOE_INPUT_M_GAUGE},
    {"closed_idle", "floe_syslog_connections_idle_closed_total",
     "Connections closed by idle_timeout.", 0},
    {"evicted", "floe_syslog_connections_evicted_total",
     "Connections silent a minute, closed for a new sender with every slot taken.", 0},
    {"handshake_failures", "floe_syslog_handshake_failures_total",
     "TLS handshakes that failed.", 0},
    {"read_errors", "floe_syslog_read_errors_total", "Connections closed on a read error.", 0},
    {"paused", "floe_syslog_paused_total", "Times the queue ran low and reading stopped.", 0},
};

static void values(const void *self, uint64_t *v)
{
	const struct syslog_input *s = self;
	struct floe_syslog_in_stats st;
	floe_syslog_in_stats(s->in, &st);
	uint64_t all[] = {st.messages,	  st.bytes,	   st.parse_failures, st.ts_failures,
			  st.truncated,	  st.bad_length,   st.at_close,	      st.dropped,
			  st.lost_at_stop, st.kernel_drops, st.connections,    st.rejected,
			  st.open,	  st.closed_idle,  st.evicted,	      st.handshake_failures,
			  st.read_errors, st.paused};
	for (size_t k = 0; k < FLOE_INPUT_NMETRICS(metrics); k++)
		if (!(metrics[k].flags & FLOE_INPUT_M_GAUGE))
			all[k] -= s->base[k];
	memcpy(v, all, sizeof(all));
}

/* A message without a syslog header, or one that broke its grammar, is kept whole with
 * facility and severity null, `syslog.error` saying why, and counted (a parse failure; a
 * timestamp alone that did not parse is a ts failure). */
static void message_record(struct syslog_input *s, const struct floe_syslog_in_msg *m,
			   struct floe_record *rec)
{
	bool local = s->cfg->syslog.zone_offset_s == FLOE_ZONE_LOCAL;
	struct floe_syslog_opts o = {
	    .received_us = m->received_us,
	    .zone_off_s = local ? 0 : s->cfg->syslog.zone_offset_s,
	    .zone = local ? &s->zone.fn : NULL,
	    .no_hostname = m->local,
	};
	struct floe_syslog_msg sm;
	struct floe_fields *f = s->sh->sysfields;
	floe_fields_reset(f);
	int rc = floe_syslog_parse(m->data, m->len, &o, &sm, f);
	if (rc == 0 && sm.format == FLOE_SYSLOG_PLAIN) {
		sm.error = "no syslog header (PRI or timestamp)";
		sm.error_off = 0;
	}
	floe_syslog_in_count_parse(s->in, sm.error != NULL, sm.ts_error != NULL);
	if (sm.error || sm.ts_error)
		(void)floe_syslog_error_attrs(&sm, f);
	if (m->truncated)
		(void)floe_fields_add(f, "syslog.truncated", 16, "true", 4);
	memset(rec, 0, sizeof(*rec));
	rec->received_at = m->received_us;
	rec->ts = sm.has_ts ? sm.ts_us : m->received_us;
	if (s->cfg->syslog.host_from == FLOE_SYSLOG_HOST_MESSAGE && sm.host.p && sm.host.len)
		rec->host = sm.host;
	else if (m->peer_len)
		rec->host = (struct floe_str){m->peer, m->peer_len};
	else
		rec->host = (struct floe_str){s->sh->o.host, s->sh->o.host_len};
	rec->source = (struct floe_str){m->source, m->source_len};
	rec->has_facility = sm.has_facility;
	rec->facility = sm.facility;
	rec->has_severity = sm.has_severity;
	rec->severity = sm.severity;
	rec->app = sm.app;
	rec->proc_id = sm.proc_id;
	rec->msg_id = sm.msg_id;
	rec->message = sm.message;
	floe_fields_to_record(f, rec);
}

static int on_message(void *ctx, const struct floe_syslog_in_msg *m)
{
	struct syslog_input *s = ctx;
	struct floe_record rec;
	message_record(s, m, &rec);
	return s->sink->record(s->sink->ctx, &rec);
}

static int read_(void *self, size_t budget, const struct floe_input_sink *sink, size_t *got)
{
	struct syslog_input *s = self;
	s->sink = sink;
	int rc = floe_syslog_in_read(s->in, budget, on_message, s, got);
	s->sink = NULL;
	return rc;
}

bool floe_input_syslog_recognise(const uint8_t *blob, size_t len)
{
	uint64_t taken;
	return floe_syslog_in_blob_taken(blob, len, &taken) == 0;
}

/* Whether the configuration expected next lists this input unchanged: it is then kept
 * whole (not closed, nothing abandoned) for that configuration to take over. */
static bool kept_whole(const struct syslog_input *s)
{
	return s->sh->o.keep && floe_syslog_handover_keeps(s->sh->o.keep->syslog, s->cfg, s->index);
}

/* Into the keep: in (with its key) for the next configuration. False without memory. */
static bool keep_put(struct floe_input_keep *k, const struct syslog_input *s)
{
	char key[FLOE_SYSLOG_KEY_MAX];
	size_t n = floe_syslog_handover_input_key(s->cfg, s->index, key, sizeof(key));
	struct kept_syslog *more = n ? floe_realloc(NULL, k->ins, (k->nins + 1) * sizeof(*k->ins)) : NULL;
	if (!more)
		return false;
	k->ins = more;
	if (!(more[k->nins].key = floe_strndup(NULL, key, n)))
		return false;
	more[k->nins++].in = s->in;
	return true;
}

/* The kept input cfg, index lists unchanged, now the caller's, or NULL. */
static struct floe_syslog_in *keep_take(struct floe_input_keep *k, const struct floe_config_input *cfg,
					size_t index)
{
	char key[FLOE_SYSLOG_KEY_MAX];
	size_t n = k ? floe_syslog_handover_input_key(cfg, index, key, sizeof(key)) : 0;
	for (size_t i = 0; n && i < k->nins; i++) {
		if (strcmp(k->ins[i].key, key) != 0)
			continue;
		struct floe_syslog_in *in = k->ins[i].in;
		floe_free(NULL, k->ins[i].key);
		k->ins[i] = k->ins[--k->nins];
		return in;
	}
	return NULL;
}

void floe_input_syslog_keep_drop(struct floe_input_keep *k, const struct floe_config *cfg)
{
	char key[FLOE_SYSLOG_KEY_MAX];
	for (size_t i = 0; k && i < k->nins;) {
		const struct kept_syslog *e = &k->ins[i];
		bool wanted = false;
		for (size_t j = 0; cfg && j < cfg->ninputs && !wanted; j++) {
			size_t n = floe_syslog_handover_input_key(&cfg->inputs[j], j, key, sizeof(key));
			wanted = n && strcmp(e->key, key) == 0;
		}
		if (wanted) {
			i++;
			continue;
		}
		/* A configuration that did not start took it over, and the one that runs
		 * instead lists it otherwise: what it received and nobody took is lost. */
		uint64_t lost = floe_syslog_in_abandon(e->in);
		if (lost)
			floe_warn("syslog: %" PRIu64 " messages received before the reload are lost: "
				  "their input changed",
				  lost);
		floe_syslog_in_free(e->in);
		floe_free(NULL, e->key);
		k->ins[i] = k->ins[--k->nins];
	}
	if (k && !cfg && !k->nins && k->rx) {
		floe_syslog_rx_free(k->rx);
		k->rx = NULL;
	}
}

bool floe_input_syslog_keep_rx(struct floe_input_shared *sh)
{
	struct floe_input_keep *k = sh->o.keep;
	if (!k || !k->nins || !sh->rx || k->rx)
		return false;
	k->rx = sh->rx;
	sh->rx = NULL;
	return true;
}

static void free_(void *self)
{
	struct syslog_input *s = self;
	if (!kept_whole(s) || !keep_put(s->sh->o.keep, s)) {
		if (kept_whole(s))
			floe_error("%s: no memory to keep it open across the reload: closed",
				   s->cfg->name);
		floe_syslog_in_free(s->in);
	}
	floe_free(s->a, s);
}

static int positions(void *self, struct floe_buf *out)
{
	return floe_syslog_in_positions(((struct syslog_input *)self)->in, out);
}

static int restore(void *self, const uint8_t *blob, size_t len)
{
	return floe_syslog_in_restore(((struct syslog_input *)self)->in, blob, len);
}

static void hold(void *self, bool on)
{
	floe_syslog_in_hold(((struct syslog_input *)self)->in, on);
}

static bool held(const void *self)
{
	return floe_syslog_in_held(((const struct syslog_input *)self)->in);
}

static bool pending(const void *self)
{
	return floe_syslog_in_pending(((const struct syslog_input *)self)->in);
}

static uint64_t received(const void *self)
{
	return floe_syslog_in_received(((const struct syslog_input *)self)->in);
}

/* The receiver wakes the loop for the next message; just after reading, a short nap
 * without asking it to, so that a busy sender (100 k datagrams a second) costs a few
 * hundred wake-ups a second, not one per message: the queue holds what comes meanwhile. */
static void wake_info(const void *self, struct floe_input_wake *out)
{
	(void)self;
	out->wakes = true;
	out->on_loop = true;
	out->nap_ms = 2;
}

static bool arm_wake(void *self)
{
	return floe_syslog_in_arm_wake(((struct syslog_input *)self)->in);
}

static void reload(void *self)
{
	floe_syslog_in_reload(((struct syslog_input *)self)->in);
}

/* An input kept whole is neither closed nor abandoned at the end of its configuration's
 * run: its connections stay open and its queue goes on into the next configuration. */
static void close_(void *self)
{
	if (!kept_whole(self))
		floe_syslog_in_close(((struct syslog_input *)self)->in);
}

static uint64_t abandon(void *self)
{
	return kept_whole(self) ? 0 : floe_syslog_in_abandon(((struct syslog_input *)self)->in);
}

/* Nothing to read again when it took no message between the entry's start and end;
 * otherwise those messages are gone (nobody can send them again): logged, FLOE_ENOTFOUND. */
static int reread(void *self, const struct floe_input_span *span,
		  const struct floe_input_sink *sink)
{
	(void)self;
	(void)sink;
	uint64_t a = 0, b = 0;
	if (floe_syslog_in_blob_taken(span->from, span->from_len, &a) ||
	    floe_syslog_in_blob_taken(span->to, span->to_len, &b))
		return FLOE_ENOTFOUND;
	if (a == b)
		return 0;
	floe_error("runner: spool entry %" PRIu64 ": input %s: %" PRIu64 " syslog messages "
		   "received over the network cannot be read again",
		   span->seq, span->name, b - a);
	return FLOE_ENOTFOUND;
}

/* Unhealthy while an address it listens on could not be taken: its senders reach no one
 * there (or another process), which may be for good (a port rsyslog holds). */
static bool healthy(const void *self, const char *name, char *why, size_t cap)
{
	const struct syslog_input *s = self;
	char w[1024];
	if (!floe_syslog_in_waiting(s->in, w, sizeof(w)))
		return true;
	snprintf(why, cap, "input %s: %s\n", name, w);
	return false;
}

const struct floe_input_ops floe_input_syslog_ops = {
    .kind = "syslog",
    .metrics = metrics,
    .nmetrics = FLOE_INPUT_NMETRICS(metrics),
    .healthy = healthy,
    .recognise = floe_input_syslog_recognise,
    .free = free_,
    .read = read_,
    .positions = positions,
    .restore = restore,
    .hold = hold,
    .held = held,
    .pending = pending,
    .received = received,
    .wake_info = wake_info,
    .arm_wake = arm_wake,
    .reload = reload,
    .close = close_,
    .abandon = abandon,
    .values = values,
    .reread = reread,
};

/* The queue, the listeners' tables, a framer per connection, the receiver's read buffer
 * (shared by every syslog input) and one frame in progress; the structured data is a
 * part of the message. */
void floe_input_syslog_need(const struct floe_config_input *in, uint64_t max_line,
			    struct floe_input_need *out)
{
	(void)max_line;
	out->read = floe_syslog_in_footprint(in) + FLOE_SYSLOG_READ_BYTES +
		    in->syslog.max_message_bytes;
	out->key = "max_message_bytes";
	out->longest = in->syslog.max_message_bytes;
	out->attrs = true;
}

bool floe_input_syslog_status(const struct floe_config_input *c, const char *name,
			      const struct floe_input_status *st, struct floe_buf *out)
{
	const void *o = st->obj;
	(void)floe_buf_printf(out, "input %s (syslog", name);
	for (size_t k = 0; k < c->syslog.nlisten; k++)
		(void)floe_buf_printf(out, "%s%s", k ? ", " : " ", c->syslog.listen[k]);
	(void)floe_buf_printf(out,
			      "):\n  %" PRIu64 " messages, %" PRIu64 " bytes received; %" PRIu64
			      " connections open, %" PRIu64 " accepted, %" PRIu64 " refused\n",
			      st->num(o, "lines"), st->num(o, "bytes"), st->num(o, "open"),
			      st->num(o, "connections"), st->num(o, "rejected"));
	(void)floe_buf_printf(out,
			      "  %" PRIu64 " datagrams the kernel dropped, %" PRIu64
			      " messages cut, %" PRIu64 " half frames kept, %" PRIu64
			      " TLS handshakes failed, %" PRIu64 " dropped\n",
			      st->num(o, "kernel_drops"), st->num(o, "truncated"),
			      st->num(o, "at_close"), st->num(o, "handshake_failures"),
			      st->num(o, "dropped"));
	return false;
}

/* The receiver thread and the structured data's scratch, shared by every syslog input:
 * made with the first, sized for the longest message of them all. */
static int share(struct floe_alloc *a, struct floe_input_shared *sh, struct floe_err *err)
{
	if (sh->rx)
		return 0;
	uint64_t longest = 0;
	for (size_t i = 0; i < sh->o.cfg->ninputs; i++) {
		const struct floe_config_input *in = &sh->o.cfg->inputs[i];
		if (in->type == FLOE_INPUT_SYSLOG && in->syslog.max_message_bytes > longest)
			longest = in->syslog.max_message_bytes;
	}
	if (floe_fields_new(a, 64, (size_t)longest, &sh->sysfields) != 0)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	struct floe_input_keep *k = sh->o.keep;
	if (k && k->rx) {
		/* A reload: the receiver the kept inputs are on, without those this
		 * configuration does not list (they would hold their addresses). */
		floe_input_syslog_keep_drop(k, sh->o.cfg);
		sh->rx = k->rx;
		k->rx = NULL;
		return 0;
	}
	return floe_syslog_rx_new(a, k ? k->syslog : NULL, &sh->rx, err);
}

int floe_input_syslog_make(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
			   void **self, const struct floe_input_ops **out, struct floe_err *err)
{
	int rc = share(a, sh, err);
	if (rc)
		return rc;
	struct syslog_input *s = floe_calloc(a, 1, sizeof(*s));
	if (!s)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	s->a = a;
	s->sh = sh;
	s->cfg = &sh->o.cfg->inputs[i];
	floe_env_zone_local(&s->zone);
	s->index = i;
	char name[32];
	snprintf(name, sizeof(name), "input %s", s->cfg->name);
	if ((s->in = keep_take(sh->o.keep, s->cfg, i))) {
		/* The previous configuration's, unchanged: its connections and queue go on. */
		floe_syslog_in_adopt(s->in, s->cfg, sh->o.loop, sh->o.clock);
		uint64_t v[FLOE_INPUT_METRICS_MAX];
		values(s, v);
		memcpy(s->base, v, sizeof(s->base));
		floe_info("%s: kept open across the reload, its connections and queue with it", name);
	} else if ((rc = floe_syslog_in_new(a, s->cfg, name,
					    floe_preflight_max_connections(s->cfg, sh->o.fd_pct),
					    sh->rx, sh->o.loop, sh->o.clock, &s->in, err))) {
		floe_free(a, s);
		return rc;
	}
	*self = s;
	*out = &floe_input_syslog_ops;
	return 0;
}
