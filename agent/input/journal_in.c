/* The journal input (journal_in.h). Per entry it allocates nothing: each field is copied
 * into a fixed scratch block, because sd-journal's pointer to a field is valid only until
 * the next field is asked for (a compressed field is unpacked into one shared buffer). */
#include "agent/input/journal_in.h"

#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/journal.h"
#include "platform/log.h"
#include "platform/loop.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define BLOB_MAGIC "FJRN"
#define BLOB_VERSION 1
#define BLOB_HEAD 12

struct floe_journal_in {
	struct floe_alloc *a;
	const struct floe_config_input *cfg;
	char name[32];
	struct floe_journal *j;
	struct floe_loop *loop;
	struct floe_io io;
	bool io_added, changed;
	bool started, current; /* positioned; an entry is current and not consumed yet */
	char cursor[FLOE_JOURNAL_CURSOR_MAX]; /* of the last entry consumed */
	size_t cursor_len;
	/* The entry's attrs (the include list), pointing into the library's memory. */
	const char *akeys[FLOE_JOURNAL_ATTRS_MAX], *avals[FLOE_JOURNAL_ATTRS_MAX];
	size_t aklens[FLOE_JOURNAL_ATTRS_MAX], avlens[FLOE_JOURNAL_ATTRS_MAX];
	char source[FLOE_JOURNAL_CURSOR_MAX];
	char *scratch; /* SCRATCH bytes: the current entry's fields */
	size_t used;
	struct floe_journal_in_stats st;
	struct floe_journal_self self; /* pid 0: floe's own entries are read too */
	char self_pid[24];
	int last_error; /* of the read that failed last (logged once until a read works) */
	/* A configured directory that is not there yet (a volatile journal made persistent
	 * at boot, a mount not up, a host's journal a container gets later): the input waits
	 * for it, opening again at most every OPEN_RETRY_US, rather than stopping the agent. */
	bool waiting;
	int64_t next_open_us;
};

#define OPEN_RETRY_US (5 * 1000000LL)

/* The fields of one entry together: a MESSAGE of the library's 64 KiB threshold and the
 * rest. A field that finds no room is cut (counted). */
#define SCRATCH (160u * 1024u)

static void on_io(struct floe_io *io, unsigned events)
{
	(void)events;
	struct floe_journal_in *in = io->arg;
	in->changed = true;
}

static int open_journal(struct floe_journal_in *in, char *why, size_t cap);
static bool missing_dir(const struct floe_journal_in *in);

int floe_journal_in_new(struct floe_alloc *a, const struct floe_config_input *cfg,
			const char *name, struct floe_loop *loop, struct floe_journal_in **out,
			struct floe_err *err)
{
	struct floe_journal_in *in = floe_calloc(a, 1, sizeof(*in));
	if (!in)
		return floe_err_set(err, FLOE_ENOMEM, "%s: %s", name, floe_strerror(FLOE_ENOMEM));
	in->a = a;
	in->cfg = cfg;
	snprintf(in->name, sizeof(in->name), "%s", name);
	if (!(in->scratch = floe_malloc(a, SCRATCH))) {
		floe_free(a, in);
		return floe_err_set(err, FLOE_ENOMEM, "%s: %s", name, floe_strerror(FLOE_ENOMEM));
	}
	in->loop = loop;
	if (!cfg->journal.include_own) {
		floe_journal_self(&in->self);
		snprintf(in->self_pid, sizeof(in->self_pid), "%ld", in->self.pid);
	}
	char why[256] = "";
	int rc = open_journal(in, why, sizeof(why));
	if (rc && missing_dir(in)) {
		floe_warn("%s: the journal directory %s does not exist (yet): the input waits for "
			  "it, and reads it once it is there",
			  name, cfg->journal.directory);
		in->waiting = true;
		in->next_open_us = floe_clock_mono_ns() / 1000 + OPEN_RETRY_US;
		rc = 0;
	}
	if (rc) {
		floe_journal_in_free(in);
		return floe_err_set(err, rc, "%s: %s", name, why);
	}
	*out = in;
	return 0;
}

/* Whether the input's configured directory is missing: the open then waits for it. */
static bool missing_dir(const struct floe_journal_in *in)
{
	return in->cfg->journal.directory && floe_fs_exists(in->cfg->journal.directory) == 0;
}

/* Opens the journal with the input's matches and puts its descriptor on the loop. */
static int open_journal(struct floe_journal_in *in, char *why, size_t cap)
{
	const struct floe_config_input *cfg = in->cfg;
	int rc = floe_journal_open(cfg->journal.directory, &in->j, why, cap);
	for (size_t i = 0; rc == 0 && i < cfg->journal.nmatches; i++) {
		const char *m = cfg->journal.matches[i];
		if ((rc = floe_journal_add_match(in->j, m, strlen(m))))
			snprintf(why, cap, "match '%s': %s", m, strerror(-rc));
	}
	if (rc) {
		floe_journal_close(in->j);
		in->j = NULL;
		return rc;
	}
	int fd = floe_journal_fd(in->j);
	if (in->loop && fd >= 0) {
		in->io.cb = on_io;
		in->io.arg = in;
		in->io_added = floe_loop_io_add(in->loop, &in->io, fd, FLOE_IO_READ) == 0;
	}
	floe_info("%s: reading the journal%s%s", in->name, cfg->journal.directory ? " in " : "",
		  cfg->journal.directory ? cfg->journal.directory : "");
	return 0;
}

/* A waiting input tries its directory again when it is due; false while it still
 * waits. */
static bool opened(struct floe_journal_in *in)
{
	if (!in->waiting)
		return true;
	int64_t now = floe_clock_mono_ns() / 1000;
	if (now < in->next_open_us)
		return false;
	in->next_open_us = now + OPEN_RETRY_US;
	char why[256] = "";
	int rc = open_journal(in, why, sizeof(why));
	if (rc) {
		if (!missing_dir(in) && rc != in->last_error)
			floe_error("%s: the journal directory %s is there, but cannot be read: %s "
				   "(tried again)",
				   in->name, in->cfg->journal.directory, why);
		in->last_error = rc;
		return false;
	}
	in->last_error = 0;
	in->waiting = false;
	return true;
}

bool floe_journal_in_waiting(const struct floe_journal_in *in)
{
	return in->waiting;
}

void floe_journal_in_free(struct floe_journal_in *in)
{
	if (!in)
		return;
	if (in->io_added)
		floe_loop_io_del(in->loop, &in->io);
	floe_journal_close(in->j);
	floe_free(in->a, in->scratch);
	floe_free(in->a, in);
}

static void on_bad_file(void *ctx, const char *path, int err)
{
	struct floe_journal_in *in = ctx;
	bool perm = err == -EACCES || err == -EPERM;
	floe_warn("%s: the journal file %s cannot be read: %s (%s; the other files are read)",
		  in->name, path, strerror(-err),
		  perm ? "floe's user needs the adm or systemd-journal group"
		       : "a truncated or damaged file, which sd-journal leaves out");
}

/* The first read: after the saved cursor, or by start_at. The files sd-journal refused
 * are named first: it reads around them without a word. */
static int start(struct floe_journal_in *in)
{
	int rc = floe_journal_bad_files(in->cfg->journal.directory, on_bad_file, in);
	in->st.files_unreadable = rc > 0 ? (uint64_t)rc : 0;
	if (in->cursor_len) {
		rc = floe_journal_seek_after(in->j, in->cursor);
		if (rc < 0) {
			in->st.resets++;
			floe_warn("%s: the saved journal cursor is not valid here (%s): reading "
				  "from the %s",
				  in->name, strerror(-rc), in->cfg->start_at_end ? "end" : "beginning");
		}
	}
	if (!in->cursor_len || rc < 0)
		rc = in->cfg->start_at_end ? floe_journal_seek_tail(in->j)
					   : floe_journal_seek_head(in->j);
	if (rc < 0) {
		floe_error("%s: cannot position in the journal: %s", in->name, strerror(-rc));
		return rc;
	}
	in->started = true;
	return 0;
}

static struct floe_str field(struct floe_journal_in *in, const char *name)
{
	const void *p;
	size_t n;
	if (floe_journal_field(in->j, name, &p, &n) != 1)
		return (struct floe_str){NULL, 0};
	if (n > SCRATCH - in->used) {
		n = SCRATCH - in->used;
		in->st.truncated++;
	}
	char *at = in->scratch + in->used;
	memcpy(at, p, n);
	in->used += n;
	return (struct floe_str){at, n};
}

/* A small decimal field (PRIORITY, SYSLOG_FACILITY, timestamps): -1 when absent or not
 * a number. */
static int64_t number(struct floe_str s)
{
	if (!s.p || s.len == 0 || s.len > 18)
		return -1;
	int64_t v = 0;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return -1;
		v = v * 10 + (s.p[i] - '0');
	}
	return v;
}

static void attrs(struct floe_journal_in *in, struct floe_journal_in_msg *m)
{
	size_t n = 0;
	for (size_t i = 0; i < in->cfg->journal.nfields && n < FLOE_JOURNAL_ATTRS_MAX; i++) {
		const char *name = in->cfg->journal.fields[i];
		struct floe_str v = field(in, name);
		if (!v.p)
			continue;
		in->akeys[n] = name;
		in->aklens[n] = strlen(name);
		in->avals[n] = v.p;
		in->avlens[n] = v.len;
		n++;
	}
	m->nattrs = n;
	m->attr_keys = in->akeys;
	m->attr_key_lens = in->aklens;
	m->attr_vals = in->avals;
	m->attr_val_lens = in->avlens;
}

/* The current entry as a message, its fields copied into the scratch block. */
static void entry(struct floe_journal_in *in, struct floe_journal_in_msg *m)
{
	memset(m, 0, sizeof(*m));
	in->used = 0;
	int64_t t = 0;
	(void)floe_journal_realtime_us(in->j, &t);
	m->received_us = t;
	int64_t src = number(field(in, "_SOURCE_REALTIME_TIMESTAMP"));
	m->ts_us = src > 0 ? src : t;
	m->host = field(in, "_HOSTNAME");
	m->app = field(in, "SYSLOG_IDENTIFIER");
	if (!m->app.p)
		m->app = field(in, "_COMM");
	m->proc_id = field(in, "SYSLOG_PID");
	if (!m->proc_id.p)
		m->proc_id = field(in, "_PID");
	m->msg_id = field(in, "MESSAGE_ID");
	m->message = field(in, "MESSAGE");
	int64_t pri = number(field(in, "PRIORITY"));
	if (pri >= 0 && pri <= 7) {
		m->has_severity = true;
		m->severity = (int32_t)pri;
	}
	int64_t fac = number(field(in, "SYSLOG_FACILITY"));
	if (fac >= 0 && fac <= 23) {
		m->has_facility = true;
		m->facility = (int32_t)fac;
	}
	struct floe_str unit = field(in, "_SYSTEMD_UNIT");
	int n = unit.p ? snprintf(in->source, sizeof(in->source), "journal:%.*s",
				  (int)(unit.len < 256 ? unit.len : 256), unit.p)
		       : snprintf(in->source, sizeof(in->source), "journal");
	m->source = (struct floe_str){in->source, n > 0 ? (size_t)n : 0};
	attrs(in, m);
}

/* Whether field name of the current entry is value (a NUL-terminated string). */
static bool field_is(struct floe_journal_in *in, const char *name, const char *value)
{
	const void *p;
	size_t n;
	return value[0] && floe_journal_field(in->j, name, &p, &n) == 1 && n == strlen(value) &&
	       memcmp(p, value, n) == 0;
}

/* The current entry was logged by this process: its PID, in this boot, since the
 * process started. A PID alone is not enough: another boot's process, or one that held
 * the PID before this one, logged under it too, and those entries are not floe's. */
static bool by_self(struct floe_journal_in *in)
{
	if (!field_is(in, "_PID", in->self_pid))
		return false;
	if (!in->self.boot[0])
		return true; /* the life unknown (no /proc): the PID decides */
	uint64_t us;
	char boot[33];
	return floe_journal_monotonic_us(in->j, &us, boot) == 0 &&
	       strcmp(boot, in->self.boot) == 0 && us >= in->self.since_us;
}

/* The current entry is floe's own log (this process, its unit, or a program of its
 * name): read, it would be committed, and the commit would log the next one, for ever. */
static bool own(struct floe_journal_in *in)
{
	return in->self.pid && (by_self(in) || field_is(in, "_SYSTEMD_UNIT", in->self.unit) ||
				field_is(in, "SYSLOG_IDENTIFIER", in->self.comm));
}

int floe_journal_in_read(struct floe_journal_in *in, size_t budget, floe_journal_in_fn fn,
			 void *ctx, size_t *got)
{
	*got = 0;
	if (!opened(in))
		return 0; /* its directory is not there yet */
	if (!in->started && start(in) < 0)
		return 0; /* logged; tried again next time */
	if (in->changed) {
		in->changed = false;
		floe_journal_process(in->j);
	}
	while (*got < budget) {
		if (!in->current) {
			int rc = floe_journal_next(in->j);
			if (rc < 0) {
				/* Counted and logged once per failure, not at every pass that
				 * meets it again. */
				in->st.read_errors += rc != in->last_error;
				if (rc != in->last_error)
					floe_error("%s: reading the journal: %s (a damaged journal "
						   "file; tried again)",
						   in->name, strerror(-rc));
				in->last_error = rc;
				return 0;
			}
			in->last_error = 0;
			if (rc == 0)
				break;
			in->current = true;
		}
		if (own(in)) {
			in->current = false;
			in->st.own_skipped++;
			*got += 1; /* bounded by the budget too */
			if (floe_journal_cursor(in->j, in->cursor, sizeof(in->cursor)) == 0)
				in->cursor_len = strlen(in->cursor);
			continue;
		}
		struct floe_journal_in_msg m;
		entry(in, &m);
		int r = fn(ctx, &m);
		if (r < 0)
			return r;
		in->current = false;
		in->st.entries++;
		in->st.bytes += m.message.len;
		*got += m.message.len + 1;
		if (floe_journal_cursor(in->j, in->cursor, sizeof(in->cursor)) == 0)
			in->cursor_len = strlen(in->cursor);
		if (r == 1)
			break;
	}
	return 0;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int floe_journal_in_positions(const struct floe_journal_in *in, struct floe_buf *out)
{
	uint8_t h[BLOB_HEAD];
	memcpy(h, BLOB_MAGIC, 4);
	put_le32(h + 4, BLOB_VERSION);
	put_le32(h + 8, (uint32_t)in->cursor_len);
	int rc = floe_buf_append(out, h, sizeof(h));
	return rc ? rc : floe_buf_append(out, in->cursor, in->cursor_len);
}

int floe_journal_in_blob_cursor(const uint8_t *blob, size_t len, const char **cursor,
				size_t *clen)
{
	if (len < BLOB_HEAD || memcmp(blob, BLOB_MAGIC, 4) != 0 || le32(blob + 4) != BLOB_VERSION)
		return FLOE_ECORRUPT;
	uint32_t n = le32(blob + 8);
	if (n != len - BLOB_HEAD || n >= FLOE_JOURNAL_CURSOR_MAX || memchr(blob + BLOB_HEAD, 0, n))
		return FLOE_ECORRUPT;
	*cursor = (const char *)blob + BLOB_HEAD;
	*clen = n;
	return 0;
}

int floe_journal_in_restore(struct floe_journal_in *in, const uint8_t *blob, size_t len)
{
	const char *c;
	size_t n;
	int rc = floe_journal_in_blob_cursor(blob, len, &c, &n);
	if (rc)
		return rc;
	if (in->started)
		return FLOE_EINVAL;
	memcpy(in->cursor, c, n);
	in->cursor[n] = 0;
	in->cursor_len = n;
	return 0;
}

void floe_journal_in_stats(const struct floe_journal_in *in, struct floe_journal_in_stats *st)
{
	*st = in->st;
}
