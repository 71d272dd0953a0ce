/* The file tail as an input (input.h): a tail (tail.h) over the input's patterns, its
 * lines handed over as they are (the runner decodes them and joins them into records), its
 * watch the inputs' shared one. */
#include "agent/input/input_impl.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/input/preflight.h"
#include "agent/input/tail.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/watch.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct tail_input {
	struct floe_alloc *a;
	struct floe_input_shared *sh;
	size_t i;
	struct floe_tail *t;
	const struct floe_input_sink *sink; /* during a read */
};

static const struct floe_input_metric metrics[] = {
    FLOE_INPUT_M_LINES,
    FLOE_INPUT_M_BYTES,
    FLOE_INPUT_M_PARSE_FAILURES,
    FLOE_INPUT_M_TS_FAILURES,
    {"files_open", "floe_input_files_open", "Files followed with an open descriptor.",
     FLOE_INPUT_M_GAUGE},
    {"files_parked", "floe_input_files_parked", "Idle files closed, reopened on a change.",
     FLOE_INPUT_M_GAUGE},
    FLOE_INPUT_M_FILES_UNREADABLE,
    {"patterns_unmatched", "floe_input_patterns_unmatched", "Patterns matching no file.",
     FLOE_INPUT_M_GAUGE},
    {"files_skipped", "floe_input_files_skipped",
     "Matched files refused (a symlink out of bounds, the agent's own files, not a regular "
     "file).",
     FLOE_INPUT_M_GAUGE},
    {"long_lines_split", "floe_input_long_lines_split_total", "Lines over max_line_bytes, split.",
     0},
    {"long_lines_truncated", "floe_input_long_lines_truncated_total",
     "Lines over max_line_bytes, cut.", 0},
    {"truncations", "floe_input_truncations_total", "Files truncated while followed.", 0},
    {"rotated_closed", "floe_input_rotated_closed_total", "Rotated files closed once drained.",
     0},
    {"rotated_closed_early", "floe_input_rotated_closed_early_total",
     "Of those, files read to their end and closed before rotate_wait was over, to give "
     "their descriptor to a file waiting for one (max_open_files): what a writer appends "
     "to them afterwards is not read.",
     0},
    {"lag_bytes", "floe_input_lag_bytes", "Bytes written to the open files and not read yet.",
     FLOE_INPUT_M_GAUGE},
    {"files_draining", "floe_input_files_draining", "Rotated or deleted files still being read.",
     FLOE_INPUT_M_GAUGE},
    {"nul_bytes_skipped", "floe_input_nul_bytes_skipped_total",
     "NUL bytes skipped: no line holds one (a hole a power cut left, a sparse or binary "
     "file); a run of them ends the line before it.",
     0},
    {"files_lost", "floe_input_files_lost_total",
     "Files found that went away before a descriptor was free to read them (max_open_files, "
     "every one held by a file with bytes not read yet): their bytes were never read.",
     0},
    {"lost_bytes", "floe_input_lost_bytes_total", "The bytes those files held.", 0},
    {"dirs_polled", "floe_input_dirs_polled",
     "Directories of the tails looked at once a second, not watched: inotify's watch limit "
     "(fs.inotify.max_user_watches) was reached.",
     FLOE_INPUT_M_GAUGE},
};

/* The parse and timestamp failures are the runner's decoder's (FLOE_INPUT_M_PARSE, _TS). */
static void values(const void *self, uint64_t *v)
{
	const struct tail_input *ti = self;
	struct floe_tail_stats st;
	floe_tail_get_stats(ti->t, &st);
	uint64_t all[] = {st.lines,
			  st.bytes,
			  0,
			  0,
			  st.files_open,
			  st.files_parked,
			  st.files_unreadable,
			  st.patterns_unmatched,
			  st.files_skipped,
			  st.long_lines_split,
			  st.long_lines_truncated,
			  st.truncations,
			  st.rotated_closed,
			  st.rotated_closed_early,
			  st.lag_bytes,
			  st.files_draining,
			  st.nul_bytes_skipped,
			  st.files_lost,
			  st.lost_bytes,
			  ti->sh->watch ? (uint64_t)floe_watch_polled(ti->sh->watch) : 0};
	memcpy(v, all, sizeof(all));
}

static int64_t clock_ms(void *ctx)
{
	const struct floe_clock *c = ctx;
	return c->wall_us(c->ctx) / 1000;
}

static int64_t mono_ms(void *ctx)
{
	const struct floe_clock *c = ctx;
	return c->mono_us(c->ctx) / 1000;
}

/* The tail's options for input i: the configuration's, on the runner's clock. */
static void tail_options(const struct floe_input_shared *sh, size_t i,
			 struct floe_preflight_tail *out)
{
	floe_preflight_tail_options(sh->o.cfg, i, sh->o.fd_pct, out);
	out->o.clock_ms = clock_ms;
	out->o.mono_ms = mono_ms;
	out->o.clock_ctx = (void *)(uintptr_t)sh->o.clock; /* only ever read */
}

static int on_line(void *ctx, const struct floe_tail_line *l)
{
	struct tail_input *ti = ctx;
	struct floe_input_line line = {l->path, l->offset, l->data, l->len, l->end, l->file_id};
	return ti->sink->line(ti->sink->ctx, &line);
}

static int read_(void *self, size_t budget, const struct floe_input_sink *sink, size_t *got)
{
	struct tail_input *ti = self;
	ti->sink = sink;
	int rc = floe_tail_read(ti->t, budget, on_line, ti, got);
	ti->sink = NULL;
	return rc;
}

static int flush(void *self, const struct floe_input_sink *sink)
{
	struct tail_input *ti = self;
	ti->sink = sink;
	int rc = floe_tail_flush_partial(ti->t, on_line, ti);
	ti->sink = NULL;
	return rc;
}

static void free_(void *self)
{
	struct tail_input *ti = self;
	floe_tail_free(ti->t);
	floe_free(ti->a, ti);
}

static int scan(void *self)
{
	return floe_tail_scan(((struct tail_input *)self)->t);
}

static bool unmatched(const void *self)
{
	struct floe_tail_stats st;
	floe_tail_get_stats(((const struct tail_input *)self)->t, &st);
	return st.patterns_unmatched > 0;
}

static void notify(void *self, const struct floe_watch_event *ev)
{
	floe_tail_notify(((struct tail_input *)self)->t, ev);
}

static int positions(void *self, struct floe_buf *out)
{
	return floe_tail_positions(((struct tail_input *)self)->t, out);
}

static int restore(void *self, const uint8_t *blob, size_t len)
{
	return floe_tail_restore(((struct tail_input *)self)->t, blob, len);
}

static size_t unsaved(const void *self)
{
	return floe_tail_unsaved(((const struct tail_input *)self)->t);
}

static int positions_with_new(void *self, const uint8_t *base, size_t len, struct floe_buf *out)
{
	return floe_tail_positions_with_new(((struct tail_input *)self)->t, base, len, out);
}

static void confirm(void *self)
{
	floe_tail_confirm(((struct tail_input *)self)->t);
}

static void hold_clear(void *self)
{
	floe_tail_hold_clear(((struct tail_input *)self)->t);
}

/* A file the tail no longer follows has no position to hold back. */
static void hold_at(void *self, uint64_t file_id, uint64_t offset)
{
	(void)floe_tail_hold(((struct tail_input *)self)->t, file_id, offset);
}

/* With every directory watched by inotify, a change in them wakes the loop; else (polled
 * directories, all or those beyond inotify's watch limit) the idle loop looks at them
 * once a second. */
static void wake_info(const void *self, struct floe_input_wake *out)
{
	const struct floe_input_shared *sh = ((const struct tail_input *)self)->sh;
	out->wakes = sh->watch_added && floe_watch_polled(sh->watch) == 0;
}

static bool progress(const void *self, uint64_t *done, uint64_t *lag, uint64_t *lines)
{
	struct floe_tail_stats st;
	floe_tail_get_stats(((const struct tail_input *)self)->t, &st);
	*done = st.bytes;
	*lag = st.lag_bytes;
	*lines = st.lines;
	return true;
}

static bool healthy(const void *self, const char *name, char *why, size_t cap)
{
	struct floe_tail_stats st;
	floe_tail_get_stats(((const struct tail_input *)self)->t, &st);
	if (!st.files_unreadable)
		return true;
	snprintf(why, cap, "input %s: %" PRIu64 " matched files cannot be opened (permissions)\n",
		 name, st.files_unreadable);
	return false;
}

/* Appends to why at *n, bounded. */
#define ADD(...)                                                                               \
	do {                                                                                   \
		if (n < cap) {                                                                 \
			int k = snprintf(why + n, cap - n, __VA_ARGS__);                        \
			n += k > 0 ? (size_t)k : 0;                                            \
		}                                                                              \
	} while (0)

static bool explain_idle(const void *self, char *why, size_t cap)
{
	struct floe_tail_stats st;
	floe_tail_get_stats(((const struct tail_input *)self)->t, &st);
	uint64_t followed = st.files_open + st.files_parked;
	size_t n = 0;
	ADD("%" PRIu64 " files followed", followed);
	if (st.started_at_end)
		ADD(", %" PRIu64 " of them started at their end (start_at: end; "
		    "start_at: beginning reads files seen for the first time whole)",
		    st.started_at_end);
	else if (followed)
		ADD(", all read up to their end by an earlier run");
	if (st.patterns_unmatched)
		ADD(", %" PRIu64 " patterns matching no file", st.patterns_unmatched);
	if (st.files_unreadable)
		ADD(", %" PRIu64 " files unreadable", st.files_unreadable);
	if (st.files_skipped)
		ADD(", %" PRIu64 " files skipped (links or the agent's own files)", st.files_skipped);
	return true;
}

/* A tail of this input's files made again from its options, for a replay: files found
 * during the seal were read from 0, and its partial lines were complete when read. */
static int reread(void *self, const struct floe_input_span *span,
		  const struct floe_input_sink *sink)
{
	struct tail_input *ti = self;
	struct floe_preflight_tail to;
	tail_options(ti->sh, ti->i, &to);
	to.o.start_at_end = false;
	to.o.partial_idle = false;
	return floe_input_tail_reread(ti->a, &to.o, span, sink);
}

const struct floe_input_ops floe_input_tail_ops = {
    .kind = "tail",
    .lines = true,
    .quiet_skippable = true,
    .restores_unknown = true,
    .metrics = metrics,
    .nmetrics = FLOE_INPUT_NMETRICS(metrics),
    .recognise = floe_input_tail_recognise,
    .free = free_,
    .read = read_,
    .flush = flush,
    .scan = scan,
    .unmatched = unmatched,
    .notify = notify,
    .positions = positions,
    .restore = restore,
    .unsaved = unsaved,
    .positions_with_new = positions_with_new,
    .confirm = confirm,
    .hold_clear = hold_clear,
    .hold_at = hold_at,
    .wake_info = wake_info,
    .values = values,
    .progress = progress,
    .healthy = healthy,
    .explain_idle = explain_idle,
    .reread = reread,
};

/* A file's read buffer holds a chunk and the longest line, plus its CR/LF (the tail's
 * default read_chunk, which the configuration does not change). */
void floe_input_tail_need(const struct floe_config_input *in, uint64_t max_line,
			  struct floe_input_need *out)
{
	out->read = ((uint64_t)64 << 10) + max_line + 2;
	out->key = "max_line_bytes";
	out->longest = in->max_line_bytes;
	out->lines = true;
}

bool floe_input_tail_status(const struct floe_config_input *c, const char *name,
			    const struct floe_input_status *st, struct floe_buf *out)
{
	const void *o = st->obj;
	(void)floe_buf_printf(out, "input %s", name);
	for (size_t p = 0; c && p < c->npaths; p++)
		(void)floe_buf_printf(out, "%s%s", p ? ", " : " (", c->paths[p]);
	(void)floe_buf_printf(out,
			      "%s:\n  %" PRIu64 " lines, %" PRIu64 " bytes read; %" PRIu64
			      " bytes behind; %" PRIu64 " files open, %" PRIu64 " parked\n",
			      c && c->npaths ? ")" : "", st->num(o, "lines"), st->num(o, "bytes"),
			      st->num(o, "lag_bytes"), st->num(o, "files_open"),
			      st->num(o, "files_parked"));
	(void)floe_buf_printf(out,
			      "  %" PRIu64 " files unreadable, %" PRIu64
			      " patterns matching nothing, %" PRIu64 " parse failures, %" PRIu64
			      " long lines split, %" PRIu64 " truncated\n",
			      st->num(o, "files_unreadable"), st->num(o, "patterns_unmatched"),
			      st->num(o, "parse_failures"), st->num(o, "long_lines_split"),
			      st->num(o, "long_lines_truncated"));
	return st->num(o, "files_unreadable") > 0;
}

int floe_input_tail_make(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
			 void **self, const struct floe_input_ops **out, struct floe_err *err)
{
	const struct floe_config_input *in = &sh->o.cfg->inputs[i];
	struct tail_input *ti = floe_calloc(a, 1, sizeof(*ti));
	if (!ti)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	ti->a = a;
	ti->sh = sh;
	ti->i = i;
	struct floe_preflight_tail to;
	tail_options(sh, i, &to);
	to.o.confirm_new = true; /* the runner makes their positions durable first */
	int rc = floe_tail_new(a, &to.o, &ti->t);
	if (rc) {
		floe_free(a, ti);
		return floe_err_set(err, rc, "input %s (line %d): %s", in->name, in->line,
				    floe_strerror(rc));
	}
	/* One watch for every tail; without one (no inotify, no memory) the loop polls. */
	if (!sh->o.poll && !sh->watch && floe_watch_new(0, &sh->watch) != 0)
		sh->watch = NULL;
	if (sh->watch)
		floe_tail_set_watch(ti->t, sh->watch);
	*self = ti;
	*out = &floe_input_tail_ops;
	return 0;
}
