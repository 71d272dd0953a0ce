/* The journal input as an input (input.h): its reader (journal_in.h) with its descriptor
 * on the runner's loop, each entry mapped to a record (its fields are the columns' already,
 * journal_in.c chose them). */
#include "agent/input/input_impl.h"

#include "agent/config/config.h"
#include "agent/input/journal_in.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct journal_input {
	struct floe_alloc *a;
	struct floe_input_shared *sh;
	struct floe_journal_in *in;
	const struct floe_config_input *cfg;
	const struct floe_input_sink *sink; /* during a read */
};

static const struct floe_input_metric metrics[] = {
    FLOE_INPUT_M_LINES,
    FLOE_INPUT_M_BYTES,
    FLOE_INPUT_M_FILES_UNREADABLE,
    {"truncated", "floe_journal_truncated_total",
     "Entries whose fields were cut (over 160 KiB together).", 0},
    {"resets", "floe_journal_resets_total", "Saved cursors not valid here: read from start_at.",
     0},
    {"own_skipped", "floe_journal_own_entries_skipped_total",
     "The agent's own journal entries left out (include_own: false).", 0},
    {"read_errors", "floe_journal_read_errors_total",
     "Journal reads that failed (a damaged file): logged and counted, not a health problem.",
     0},
};

static void values(const void *self, uint64_t *v)
{
	struct floe_journal_in_stats st;
	floe_journal_in_stats(((const struct journal_input *)self)->in, &st);
	uint64_t all[] = {st.entries,	  st.bytes,	  st.files_unreadable, st.truncated,
			  st.resets, st.own_skipped, st.read_errors};
	memcpy(v, all, sizeof(all));
}

static int on_entry(void *ctx, const struct floe_journal_in_msg *m)
{
	struct journal_input *j = ctx;
	struct floe_record rec;
	memset(&rec, 0, sizeof(rec));
	rec.ts = m->ts_us;
	rec.received_at = m->received_us;
	rec.host = m->host.p ? m->host : (struct floe_str){j->sh->o.host, j->sh->o.host_len};
	rec.source = m->source;
	rec.has_facility = m->has_facility;
	rec.facility = m->facility;
	rec.has_severity = m->has_severity;
	rec.severity = m->severity;
	rec.app = m->app;
	rec.proc_id = m->proc_id;
	rec.msg_id = m->msg_id;
	rec.message = m->message.p ? m->message : (struct floe_str){"", 0};
	rec.nattrs = m->nattrs;
	rec.attr_keys = m->attr_keys;
	rec.attr_key_lens = m->attr_key_lens;
	rec.attr_vals = m->attr_vals;
	rec.attr_val_lens = m->attr_val_lens;
	return j->sink->record(j->sink->ctx, &rec);
}

static int read_(void *self, size_t budget, const struct floe_input_sink *sink, size_t *got)
{
	struct journal_input *j = self;
	j->sink = sink;
	int rc = floe_journal_in_read(j->in, budget, on_entry, j, got);
	j->sink = NULL;
	return rc;
}

bool floe_input_journal_recognise(const uint8_t *blob, size_t len)
{
	const char *c;
	size_t n;
	return floe_journal_in_blob_cursor(blob, len, &c, &n) == 0;
}

static void free_(void *self)
{
	struct journal_input *j = self;
	floe_journal_in_free(j->in);
	floe_free(j->a, j);
}

static int positions(void *self, struct floe_buf *out)
{
	return floe_journal_in_positions(((struct journal_input *)self)->in, out);
}

static int restore(void *self, const uint8_t *blob, size_t len)
{
	return floe_journal_in_restore(((struct journal_input *)self)->in, blob, len);
}

/* Its descriptor is on the loop, but whether it tells of every change (or
 * sd_journal_get_timeout asks for polling) is not known here: the idle loop keeps the
 * 1 s pace, and takes the loop's events before each read. */
static void wake_info(const void *self, struct floe_input_wake *out)
{
	(void)self;
	out->on_loop = true;
	out->drain_loop = true;
}

/* Nothing when the cursor did not move. Reading the journal again between two cursors is
 * not done yet: those entries are counted lost, logged with both cursors (journalctl
 * --after-cursor shows them). */
static int reread(void *self, const struct floe_input_span *span,
		  const struct floe_input_sink *sink)
{
	(void)self;
	(void)sink;
	const char *a, *b;
	size_t al, bl;
	if (floe_journal_in_blob_cursor(span->from, span->from_len, &a, &al) ||
	    floe_journal_in_blob_cursor(span->to, span->to_len, &b, &bl))
		return FLOE_ENOTFOUND;
	if (al == bl && memcmp(a, b, al) == 0)
		return 0;
	floe_error("runner: spool entry %" PRIu64 ": input %s: the journal entries after cursor "
		   "'%.*s' up to '%.*s' are not read again",
		   span->seq, span->name, (int)al, a, (int)bl, b);
	return FLOE_ENOTFOUND;
}

/* Unhealthy while its directory is missing: nothing is read, and that may be for good
 * (a typo in directory:). */
static bool healthy(const void *self, const char *name, char *why, size_t cap)
{
	const struct journal_input *j = self;
	if (!floe_journal_in_waiting(j->in))
		return true;
	snprintf(why, cap, "input %s: the journal directory %s does not exist: nothing is read\n",
		 name, j->cfg->journal.directory);
	return false;
}

const struct floe_input_ops floe_input_journal_ops = {
    .kind = "journal",
    .healthy = healthy,
    .metrics = metrics,
    .nmetrics = FLOE_INPUT_NMETRICS(metrics),
    .recognise = floe_input_journal_recognise,
    .free = free_,
    .read = read_,
    .positions = positions,
    .restore = restore,
    .wake_info = wake_info,
    .values = values,
    .reread = reread,
};

/* The fields' scratch and the library's; an entry is at most sd-journal's field
 * threshold (platform/journal_sd.c). */
void floe_input_journal_need(const struct floe_config_input *in, uint64_t max_line,
			     struct floe_input_need *out)
{
	(void)in;
	(void)max_line;
	out->read = 160 * 1024 + 64 * 1024;
	out->key = "max_line_bytes";
	out->longest = 64 * 1024;
	out->attrs = true;
}

/* A damaged journal file is counted, not a health problem. */
bool floe_input_journal_status(const struct floe_config_input *c, const char *name,
			       const struct floe_input_status *st, struct floe_buf *out)
{
	const void *o = st->obj;
	(void)floe_buf_printf(out,
			      "input %s (journal%s%s):\n  %" PRIu64 " entries, %" PRIu64
			      " message bytes read; %" PRIu64 " cursor resets, %" PRIu64
			      " fields cut\n",
			      name, c->journal.directory ? " in " : "",
			      c->journal.directory ? c->journal.directory : "", st->num(o, "lines"),
			      st->num(o, "bytes"), st->num(o, "resets"), st->num(o, "truncated"));
	return false;
}

int floe_input_journal_make(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
			    void **self, const struct floe_input_ops **out, struct floe_err *err)
{
	struct journal_input *j = floe_calloc(a, 1, sizeof(*j));
	if (!j)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	j->a = a;
	j->sh = sh;
	j->cfg = &sh->o.cfg->inputs[i];
	char name[32];
	snprintf(name, sizeof(name), "input %s", sh->o.cfg->inputs[i].name);
	int rc = floe_journal_in_new(a, &sh->o.cfg->inputs[i], name, sh->o.loop, &j->in, err);
	if (rc) {
		floe_free(a, j);
		return rc;
	}
	*self = j;
	*out = &floe_input_journal_ops;
	return 0;
}
