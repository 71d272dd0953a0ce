/* The inputs' one interface (input.h): the constructor that picks the kind by the
 * configured type, the dispatch to each kind's operations, what an operation a kind does
 * not have means, and what the inputs share (the tails' watch, the syslog receiver). A new
 * kind of input is a file with its operations and constructor, and a line in kinds[]. */
#include "agent/input/input_impl.h"

#include "agent/config/config.h"
#include "agent/input/syslog_handover.h"
#include "agent/input/syslog_in.h"
#include "agent/input/tail.h"
#include "agent/parse/fields.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/loop.h"
#include "platform/watch.h"

#include <string.h>

struct floe_input {
	struct floe_alloc *a;
	const struct floe_input_ops *ops;
	void *self;
};

/* Each configured type's constructor, and the recognisers of every kind's blobs. */
static const struct {
	int type;
	floe_input_make_fn make;
	bool (*recognise)(const uint8_t *blob, size_t len);
	void (*need)(const struct floe_config_input *in, uint64_t max_line,
		     struct floe_input_need *out);
	bool (*status)(const struct floe_config_input *c, const char *name,
		       const struct floe_input_status *st, struct floe_buf *out);
	const struct floe_input_ops *ops;
} kinds[] = {
    {FLOE_INPUT_TAIL, floe_input_tail_make, floe_input_tail_recognise, floe_input_tail_need,
     floe_input_tail_status, &floe_input_tail_ops},
    {FLOE_INPUT_SYSLOG, floe_input_syslog_make, floe_input_syslog_recognise,
     floe_input_syslog_need, floe_input_syslog_status, &floe_input_syslog_ops},
    {FLOE_INPUT_JOURNAL, floe_input_journal_make, floe_input_journal_recognise,
     floe_input_journal_need, floe_input_journal_status, &floe_input_journal_ops},
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

bool floe_input_status_text(const struct floe_config_input *c, const char *name,
			    const struct floe_input_status *st, struct floe_buf *out)
{
	for (size_t k = 0; c && k < NKINDS; k++)
		if (kinds[k].type == (int)c->type)
			return kinds[k].status(c, name, st, out);
	return floe_input_tail_status(c, name, st, out);
}

size_t floe_input_kind_metrics(size_t k, const char **kind, const struct floe_input_metric **table)
{
	if (k >= NKINDS)
		return 0;
	*kind = kinds[k].ops->kind;
	*table = kinds[k].ops->metrics;
	return kinds[k].ops->nmetrics;
}

void floe_input_need(const struct floe_config_input *in, uint64_t max_line,
		     struct floe_input_need *out)
{
	memset(out, 0, sizeof(*out));
	out->key = "max_line_bytes";
	for (size_t k = 0; k < NKINDS; k++)
		if (kinds[k].type == (int)in->type)
			kinds[k].need(in, max_line, out);
}

int floe_input_keep_new(struct floe_input_keep **out)
{
	struct floe_input_keep *k = floe_calloc(NULL, 1, sizeof(*k));
	if (!k || floe_syslog_handover_new(&k->syslog)) {
		floe_free(NULL, k);
		return FLOE_ENOMEM;
	}
	*out = k;
	return 0;
}

void floe_input_keep_free(struct floe_input_keep *k)
{
	if (!k)
		return;
	floe_input_syslog_keep_drop(k, NULL);
	floe_syslog_handover_free(k->syslog);
	floe_free(NULL, k->ins);
	floe_free(NULL, k);
}

void floe_input_keep_expect(struct floe_input_keep *k, const struct floe_config *next)
{
	if (k)
		floe_syslog_handover_expect(k->syslog, next);
}

void floe_input_keep_close_rest(struct floe_input_keep *k)
{
	if (!k)
		return;
	floe_input_syslog_keep_drop(k, NULL);
	floe_syslog_handover_close_rest(k->syslog);
}

int floe_input_shared_new(struct floe_alloc *a, const struct floe_input_shared_options *o,
			  struct floe_input_shared **out, struct floe_err *err)
{
	struct floe_input_shared *sh = floe_calloc(a, 1, sizeof(*sh));
	if (!sh)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	sh->a = a;
	sh->o = *o;
	*out = sh;
	return 0;
}

static void watch_ready(struct floe_io *io, unsigned events)
{
	(void)events;
	struct floe_input_shared *sh = io->arg;
	sh->watch_ready = true;
}

int floe_input_shared_start(struct floe_input_shared *sh, struct floe_err *err)
{
	if (sh->watch && floe_watch_fd(sh->watch) >= 0) {
		sh->watch_io.cb = watch_ready;
		sh->watch_io.arg = sh;
		int rc = floe_loop_io_add(sh->o.loop, &sh->watch_io, floe_watch_fd(sh->watch),
					  FLOE_IO_READ);
		if (rc)
			return floe_err_set(err, rc, "cannot watch the inputs' directories: %s",
					    floe_strerror(rc));
		sh->watch_added = true;
	}
	return sh->rx ? floe_syslog_rx_start(sh->rx, err) : 0;
}

void floe_input_shared_stop(struct floe_input_shared *sh)
{
	if (sh)
		floe_syslog_rx_stop(sh->rx);
}

void floe_input_shared_free(struct floe_input_shared *sh)
{
	if (!sh)
		return;
	if (sh->watch_added)
		floe_loop_io_del(sh->o.loop, &sh->watch_io);
	floe_syslog_rx_stop(sh->rx);
	if (!floe_input_syslog_keep_rx(sh))
		floe_syslog_rx_free(sh->rx);
	floe_fields_free(sh->sysfields);
	floe_watch_free(sh->watch);
	floe_free(sh->a, sh);
}

bool floe_input_shared_watched(const struct floe_input_shared *sh)
{
	/* A directory polled (inotify's watch limit reached) raises no event: its files'
	 * appends were read only by the full pass, every 30 s when idle. */
	return sh->watch_added && floe_watch_polled(sh->watch) == 0;
}

void floe_input_shared_set_host(struct floe_input_shared *sh, const char *host, size_t len)
{
	sh->o.host = host;
	sh->o.host_len = len;
}

bool floe_input_shared_has_watch(const struct floe_input_shared *sh)
{
	return sh->watch != NULL;
}

bool floe_input_shared_take_events(struct floe_input_shared *sh, struct floe_input *const *in,
				   size_t n)
{
	struct floe_watch_event ev;
	/* Only a ready inotify descriptor is worth a wait (1 ms: its events come in a
	 * burst); otherwise a look without sleeping (the polling backend's directories). */
	int wait_ms = sh->watch_ready ? 1 : 0;
	sh->watch_ready = false;
	if (!sh->watch || floe_watch_wait(sh->watch, wait_ms) <= 0)
		return false;
	while (floe_watch_next(sh->watch, &ev) > 0)
		for (size_t i = 0; i < n; i++)
			if (in[i]->ops->notify)
				in[i]->ops->notify(in[i]->self, &ev);
	return true;
}

int floe_input_new(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
		   struct floe_input **out, struct floe_err *err)
{
	const struct floe_config_input *c = &sh->o.cfg->inputs[i];
	floe_input_make_fn make = NULL;
	for (size_t k = 0; k < NKINDS; k++)
		if (kinds[k].type == (int)c->type)
			make = kinds[k].make;
	if (!make)
		return floe_err_set(err, FLOE_EINVAL, "input %s (line %d): no such input type",
				    c->name, c->line);
	struct floe_input *in = floe_calloc(a, 1, sizeof(*in));
	if (!in)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	in->a = a;
	int rc = make(a, sh, i, &in->self, &in->ops, err);
	if (rc) {
		floe_free(a, in);
		return rc;
	}
	*out = in;
	return 0;
}

void floe_input_free(struct floe_input *in)
{
	if (!in)
		return;
	in->ops->free(in->self);
	floe_free(in->a, in);
}

const char *floe_input_kind(const struct floe_input *in)
{
	return in->ops->kind;
}

bool floe_input_reads_lines(const struct floe_input *in)
{
	return in->ops->lines;
}

int floe_input_read(struct floe_input *in, size_t budget, const struct floe_input_sink *sink,
		    size_t *got)
{
	*got = 0;
	return in->ops->read(in->self, budget, sink, got);
}

int floe_input_flush(struct floe_input *in, const struct floe_input_sink *sink)
{
	return in->ops->flush ? in->ops->flush(in->self, sink) : 0;
}

int floe_input_scan(struct floe_input *in)
{
	return in->ops->scan ? in->ops->scan(in->self) : 0;
}

bool floe_input_quiet_skippable(const struct floe_input *in)
{
	return in->ops->quiet_skippable;
}

bool floe_input_unmatched(const struct floe_input *in)
{
	return in->ops->unmatched && in->ops->unmatched(in->self);
}

int floe_input_positions(struct floe_input *in, struct floe_buf *out)
{
	return in->ops->positions(in->self, out);
}

int floe_input_restore(struct floe_input *in, const uint8_t *blob, size_t len, bool *other)
{
	*other = false;
	if (!in->ops->recognise(blob, len)) {
		/* Another kind's blob: the input changed its type, and starts afresh. A blob of
		 * no kind is restored by a kind that judges any other blob its own (a tail: its
		 * damage is then reported), and is another's for the rest. */
		bool known = false;
		for (size_t k = 0; k < NKINDS && !known; k++)
			known = kinds[k].recognise(blob, len);
		if (known || !in->ops->restores_unknown) {
			*other = true;
			return 0;
		}
	}
	return in->ops->restore(in->self, blob, len);
}

size_t floe_input_unsaved(const struct floe_input *in)
{
	return in->ops->unsaved ? in->ops->unsaved(in->self) : 0;
}

int floe_input_positions_with_new(struct floe_input *in, const uint8_t *base, size_t len,
				  struct floe_buf *out)
{
	if (in->ops->positions_with_new)
		return in->ops->positions_with_new(in->self, base, len, out);
	return base ? floe_buf_append(out, base, len) : 0;
}

void floe_input_confirm(struct floe_input *in)
{
	if (in->ops->confirm)
		in->ops->confirm(in->self);
}

void floe_input_hold_clear(struct floe_input *in)
{
	if (in->ops->hold_clear)
		in->ops->hold_clear(in->self);
}

void floe_input_hold_at(struct floe_input *in, uint64_t file_id, uint64_t offset)
{
	if (in->ops->hold_at)
		in->ops->hold_at(in->self, file_id, offset);
}

void floe_input_hold(struct floe_input *in, bool hold)
{
	if (in->ops->hold)
		in->ops->hold(in->self, hold);
}

bool floe_input_held(const struct floe_input *in)
{
	return !in->ops->held || in->ops->held(in->self);
}

bool floe_input_pending(const struct floe_input *in)
{
	return in->ops->pending && in->ops->pending(in->self);
}

uint64_t floe_input_received(const struct floe_input *in)
{
	return in->ops->received ? in->ops->received(in->self) : 0;
}

bool floe_input_takes_in(const struct floe_input *in)
{
	return in->ops->received != NULL;
}

void floe_input_wake_info(const struct floe_input *in, struct floe_input_wake *out)
{
	memset(out, 0, sizeof(*out));
	in->ops->wake_info(in->self, out);
}

bool floe_input_arm_wake(struct floe_input *in)
{
	return in->ops->arm_wake && in->ops->arm_wake(in->self);
}

void floe_input_reload(struct floe_input *in)
{
	if (in->ops->reload)
		in->ops->reload(in->self);
}

void floe_input_close(struct floe_input *in)
{
	if (in->ops->close)
		in->ops->close(in->self);
}

uint64_t floe_input_abandon(struct floe_input *in)
{
	return in->ops->abandon ? in->ops->abandon(in->self) : 0;
}

size_t floe_input_metrics(const struct floe_input *in, const struct floe_input_metric **table)
{
	*table = in->ops->metrics;
	return in->ops->nmetrics;
}

void floe_input_metric_values(const struct floe_input *in, uint64_t *values)
{
	memset(values, 0, in->ops->nmetrics * sizeof(*values));
	in->ops->values(in->self, values);
}

bool floe_input_progress(const struct floe_input *in, uint64_t *done, uint64_t *lag,
			 uint64_t *lines)
{
	return in->ops->progress && in->ops->progress(in->self, done, lag, lines);
}

bool floe_input_healthy(const struct floe_input *in, const char *name, char *why, size_t cap)
{
	return !in->ops->healthy || in->ops->healthy(in->self, name, why, cap);
}

bool floe_input_explain_idle(const struct floe_input *in, char *why, size_t cap)
{
	return in->ops->explain_idle && in->ops->explain_idle(in->self, why, cap);
}

int floe_input_reread(struct floe_input *in, const struct floe_input_span *span,
		      const struct floe_input_sink *sink)
{
	return in->ops->reread(in->self, span, sink);
}
