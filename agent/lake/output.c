/* The table output (output.h): one table's spool, lease and commit protocol, the same for
 * the logs table and every aggregate table, so that a damaged entry, a commit that landed
 * before a crash or a full spool are handled once, whatever the table.
 *
 * Why the output records its last commit (.last-commit in the spool directory): an output
 * numbers its entries on from the highest sequence it ever used, which after a commit
 * has emptied the spool only the table knows. A device that starts with the store away
 * cannot ask the table, so the number is kept beside the spool, written (atomically,
 * fsynced) after each commit and before the committed entries leave the spool. */
#include "agent/lake/output.h"

#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/iceberg/metadata.h"
#include "platform/crash.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct floe_output {
	struct floe_output_options opt;
	struct floe_table *table;
	struct floe_spool *cspool; /* the committer's handle */
	uint64_t lease;
	uint64_t committed; /* the newest commit-seq written to .last-commit */
	/* The table-uuid .last-commit names with it ("": none, as an older floe wrote it). */
	char committed_uuid[64];
	/* The table's last-sequence-number after that commit (0: not recorded), and the
	 * installation that committed it ("": not recorded). */
	int64_t committed_snapseq;
	char committed_by[40];
	/* Atomic: the table was found behind the record (floe_output_behind), and what was
	 * last logged about it, so that a retry that finds the same says nothing. */
	int behind;
	char behind_said[FLOE_ERR_MSG_MAX];
};

int floe_output_new(const struct floe_output_options *opt, struct floe_table *table,
		    struct floe_output **out)
{
	struct floe_output *o = floe_calloc(opt->alloc, 1, sizeof(*o));
	if (!o)
		return FLOE_ENOMEM;
	o->opt = *opt;
	int rc = floe_spool_share(opt->spool, opt->alloc, &o->cspool);
	if (rc) {
		floe_free(opt->alloc, o);
		return rc;
	}
	o->table = table;
	*out = o;
	return 0;
}

void floe_output_free(struct floe_output *o)
{
	if (!o)
		return;
	floe_spool_free(o->cspool);
	floe_table_free(o->table);
	floe_free(o->opt.alloc, o);
}

const char *floe_output_what(const struct floe_output *o)
{
	return o->opt.what;
}

struct floe_table *floe_output_table(const struct floe_output *o)
{
	return o->table;
}

void floe_output_lend(struct floe_output *o, uint64_t upto)
{
	o->lease = upto;
}

uint64_t floe_output_lease(const struct floe_output *o)
{
	return o->lease;
}

uint64_t floe_output_bytes(const struct floe_output *o)
{
	return floe_spool_bytes(o->opt.spool);
}

size_t floe_output_entries(const struct floe_output *o)
{
	return (size_t)floe_spool_entries(o->opt.spool);
}

uint64_t floe_output_quarantined(const struct floe_output *o)
{
	return floe_spool_quarantined(o->opt.spool);
}

/* ---- loading, losing, removing: one way for both threads' handles ------------------- */

static int load(struct floe_output *o, struct floe_spool *sp, uint64_t seq,
		struct floe_spool_entry **out)
{
	int rc = floe_spool_load(sp, seq, out);
	if (rc != FLOE_ECORRUPT)
		return rc;
	/* The entry file itself is damaged: what it held (rows, positions) is unknown, so
	 * nothing can be read again or counted but the entry itself, in quarantine. */
	int q = floe_spool_quarantine(sp, seq);
	if (q)
		floe_error("output: %s: spool entry %" PRIu64 " in %s is corrupt and could not be "
			   "moved to quarantine (%s): it stays, skipped",
			   o->opt.what, seq, floe_spool_dir(sp), floe_strerror(q));
	else
		floe_error("output: %s: spool entry %" PRIu64 " in %s is corrupt (its checksum "
			   "fails): moved to quarantine, its rows are unknown",
			   o->opt.what, seq, floe_spool_dir(sp));
	return FLOE_ECORRUPT;
}

int floe_output_load(struct floe_output *o, uint64_t seq, struct floe_spool_entry **out)
{
	return load(o, o->opt.spool, seq, out);
}

static int lose(struct floe_output *o, struct floe_spool *sp, const struct floe_spool_entry *e,
		struct floe_output_report *rep)
{
	uint64_t rows = floe_spool_entry_rows(e);
	rep->lost_entries++;
	rep->lost_rows += rows;
	floe_error("output: %s: spool entry %" PRIu64 " is damaged and cannot be made again: %" PRIu64
		   " rows LOST (its files go to quarantine)",
		   o->opt.what, e->seq, rows);
	return floe_spool_quarantine(sp, e->seq);
}

int floe_output_lose(struct floe_output *o, const struct floe_spool_entry *e,
		     struct floe_output_report *rep)
{
	return lose(o, o->opt.spool, e, rep);
}

int floe_output_rebuilding(struct floe_output *o, const struct floe_spool_entry *e)
{
	return floe_spool_quarantine_files(o->opt.spool, e);
}

/* Removes seqs[i] (<= committed: the table holds it), counting its rows as committed. */
static int drop_held(struct floe_output *o, struct floe_spool *sp, uint64_t seq,
		     struct floe_output_report *rep)
{
	struct floe_spool_entry *e = NULL;
	int rc = load(o, sp, seq, &e);
	if (rc == FLOE_ECORRUPT)
		return 0; /* quarantined: its rows are in the table anyway */
	if (rc == 0) {
		floe_info("output: %s: spool entry %" PRIu64 " is already in the table", o->opt.what,
			  seq);
		rep->rows_committed += floe_spool_entry_rows(e);
		rc = floe_spool_remove(sp, e);
	}
	floe_spool_entry_free(o->opt.alloc, e);
	return rc;
}

int floe_output_drop_landed(struct floe_output *o, int64_t committed,
			    struct floe_output_report *rep)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = committed < 0 ? 0 : floe_spool_list(o->opt.spool, &seqs, &n);
	for (size_t i = 0; rc == 0 && i < n && seqs[i] <= (uint64_t)committed; i++)
		rc = drop_held(o, o->opt.spool, seqs[i], rep);
	floe_free(o->opt.alloc, seqs);
	return rc;
}

int floe_output_forget_after(struct floe_output *o, uint64_t seq)
{
	uint64_t *seqs = NULL;
	size_t n = 0;
	int rc = floe_spool_list(o->opt.spool, &seqs, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		struct floe_spool_entry *e = NULL;
		if (seqs[i] <= seq)
			continue;
		floe_info("output: %s: removing spool entry %" PRIu64
			  ", sealed after the state it resumes from",
			  o->opt.what, seqs[i]);
		rc = load(o, o->opt.spool, seqs[i], &e);
		if (rc == 0)
			rc = floe_spool_remove(o->opt.spool, e);
		else if (rc == FLOE_ECORRUPT)
			rc = 0;
		floe_spool_entry_free(o->opt.alloc, e);
	}
	floe_free(o->opt.alloc, seqs);
	return rc;
}

/* ---- the spool limit --------------------------------------------------------------- */

int floe_output_drop_oldest(struct floe_output *o, bool lent, struct floe_output_drops *d)
{
	uint64_t *seqs = NULL;
	size_t n = 0, i = 0;
	int rc = floe_spool_list(o->opt.spool, &seqs, &n);
	while (rc == 0 && i + 1 < n && lent && seqs[i] <= o->lease)
		i++; /* the committer's until its report */
	uint64_t seq = rc == 0 && i + 1 < n ? seqs[i] : 0;
	floe_free(o->opt.alloc, seqs);
	if (rc || seq == 0)
		return rc;
	struct floe_spool_entry *e = NULL;
	if ((rc = load(o, o->opt.spool, seq, &e)) == FLOE_ECORRUPT)
		return 1; /* set aside: its bytes left the spool all the same */
	uint64_t rows = rc ? 0 : floe_spool_entry_rows(e), bytes = rc ? 0 : floe_spool_entry_bytes(e);
	if (rc == 0 && (rc = floe_spool_remove(o->opt.spool, e)) == 0) {
		d->entries++;
		d->rows += rows;
		d->bytes += bytes;
		floe_warn("output: spool over its limit: dropped entry %" PRIu64 " of %s (%" PRIu64
			  " rows, %" PRIu64 " bytes; policy drop_oldest)",
			  seq, o->opt.what, rows, bytes);
	}
	floe_spool_entry_free(o->opt.alloc, e);
	return rc ? rc : 1;
}

/* ---- the record of the last commit -------------------------------------------------- */

static int mark_path_in(const char *dir, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/.last-commit", dir);
	return n < 0 || (size_t)n >= cap ? FLOE_ELIMIT : 0;
}

static int mark_path(const struct floe_output *o, char *out, size_t cap)
{
	return mark_path_in(floe_spool_dir(o->opt.spool), out, cap);
}

/* Records seq as committed before its entries leave the spool (a failure is logged: the
 * table still holds the number while it answers). Five lines: the number; the table's
 * location (a table missing there later is waited for, floe_table_options.existed_at;
 * one in another warehouse is a new one); its uuid (which tells a table found behind the
 * record from another table of the same name); its last-sequence-number after the
 * commit (which only grows over a table's life: a table at or past it moved on, even
 * if another engine's expiry took this installation's commit-seqs from it); the
 * installation (an installation made anew after its state files were all damaged, and
 * told by agent.replaces which one it replaces, knows by it that this spool's entries
 * were numbered on from that one's). A reader takes what lines there are. */
static void mark_committed(struct floe_output *o, uint64_t seq)
{
	char path[FLOE_PATH_MAX],
	    text[48 + FLOE_PATH_MAX + sizeof(o->committed_uuid) + sizeof(o->committed_by)];
	const struct floe_ice_meta *m = o->table ? floe_table_meta(o->table) : NULL;
	const char *uuid = m ? floe_ice_meta_uuid(m) : NULL;
	int64_t snapseq = m ? floe_ice_meta_last_sequence(m) : 0;
	if (seq <= o->committed || mark_path(o, path, sizeof(path)))
		return;
	int n = snprintf(text, sizeof(text), "%" PRIu64 "\n%s\n%.63s\n%" PRId64 "\n%.39s\n", seq,
			 o->table ? floe_table_location(o->table) : "", uuid ? uuid : "", snapseq,
			 o->opt.installation ? o->opt.installation : "");
	if (n < 0 || (size_t)n >= sizeof(text))
		n = snprintf(text, sizeof(text), "%" PRIu64 "\n", seq);
	int rc = floe_fs_write_atomic(path, text, (size_t)n);
	if (rc) {
		floe_warn("output: %s: recording commit %" PRIu64 " in %s failed: %s", o->opt.what,
			  seq, path, floe_strerror(rc));
	} else {
		o->committed = seq;
		o->committed_snapseq = snapseq;
		snprintf(o->committed_by, sizeof(o->committed_by), "%s",
			 o->opt.installation ? o->opt.installation : "");
		snprintf(o->committed_uuid, sizeof(o->committed_uuid), "%s", uuid ? uuid : "");
	}
}

/* Line i (0-based) of the record after the number's, into out (cap bytes): "" when the
 * record has no such line or it does not fit. */
static void record_line(const char *rest, int i, char *out, size_t cap)
{
	if (!out || !cap)
		return;
	out[0] = '\0';
	for (; i > 0 && *rest; i--) {
		size_t n = strcspn(rest, "\n");
		rest += rest[n] ? n + 1 : n;
	}
	size_t n = strcspn(rest, "\n");
	if (n < cap && rest[n] == '\n')
		snprintf(out, cap, "%.*s", (int)n, rest);
}

static void read_record(struct floe_alloc *a, const char *spool_dir, const char *what, uint64_t *seq,
			char *location, size_t cap, char *uuid, size_t ucap, int64_t *snapseq,
			char by[40])
{
	char path[FLOE_PATH_MAX], num[24];
	void *text = NULL;
	size_t len = 0;
	*seq = 0;
	*snapseq = 0;
	record_line("", 0, location, cap);
	record_line("", 0, uuid, ucap);
	record_line("", 0, by, 40);
	if (mark_path_in(spool_dir, path, sizeof(path)) ||
	    floe_fs_read_file(a, path, 96 + FLOE_PATH_MAX + 64, &text, &len) != 0)
		return;
	char *end = NULL;
	unsigned long long v = strtoull(text, &end, 10);
	if (end == (char *)text || (*end != '\n' && *end != '\0')) {
		floe_warn("output: %s: %s does not hold a number: ignored", what, path);
	} else {
		*seq = v;
		/* A record without a location or a uuid (an older floe's) leaves "". */
		const char *rest = *end ? end + 1 : end;
		record_line(rest, 0, location, cap);
		record_line(rest, 1, uuid, ucap);
		record_line(rest, 2, num, sizeof(num));
		long long sn = strtoll(num, &end, 10);
		*snapseq = end != num && *end == '\0' && sn > 0 ? sn : 0;
		record_line(rest, 3, by, 40);
	}
	floe_free(a, text);
}

void floe_output_recorded(struct floe_alloc *a, const char *spool_dir, const char *what,
			  uint64_t *seq, char *location, size_t cap)
{
	int64_t snapseq;
	read_record(a, spool_dir, what, seq, location, cap, NULL, 0, &snapseq, NULL);
}

/* Reads the record of the last commit into o->committed and o->committed_uuid (absent:
 * nothing recorded). */
static void read_mark(struct floe_output *o)
{
	uint64_t v;
	int64_t snapseq;
	char uuid[sizeof(o->committed_uuid)], by[sizeof(o->committed_by)];
	read_record(o->opt.alloc, floe_spool_dir(o->opt.spool), o->opt.what, &v, NULL, 0, uuid,
		    sizeof(uuid), &snapseq, by);
	if (v && v >= o->committed) {
		o->committed = v;
		o->committed_snapseq = snapseq;
		snprintf(o->committed_by, sizeof(o->committed_by), "%s", by);
		snprintf(o->committed_uuid, sizeof(o->committed_uuid), "%s", uuid);
	}
}

bool floe_output_behind(const struct floe_output *o)
{
	return __atomic_load_n(&o->behind, __ATOMIC_ACQUIRE) != 0;
}

void floe_output_set_behind(struct floe_output *o, const struct floe_err *why)
{
	if (strcmp(o->behind_said, why->msg) != 0) {
		floe_error("output: %s: %s. Only this table's commits wait: its spool keeps the rows "
			   "(within spool.max_bytes), the other tables and the inputs go on, and the "
			   "table is read again at every commit (logged again when this changes)",
			   o->opt.what, why->msg);
		snprintf(o->behind_said, sizeof(o->behind_said), "%s", why->msg);
	}
	__atomic_store_n(&o->behind, 1, __ATOMIC_RELEASE);
	floe_table_free(o->table);
	o->table = NULL;
}

/* The table was opened and is not behind: commits go on (said once, when it was). */
static void not_behind(struct floe_output *o)
{
	if (!floe_output_behind(o))
		return;
	floe_warn("output: %s at %s is no longer behind this agent's record of its commits: its "
		  "commits resume", o->opt.what, floe_table_location(o->table));
	o->behind_said[0] = '\0';
	__atomic_store_n(&o->behind, 0, __ATOMIC_RELEASE);
}

/* The record's commit (committed, of table uuid, at its last-sequence-number snapseq;
 * kept at path) against table t: 0, or FLOE_EBEHIND with err saying what was lost. */
static int behind(const struct floe_table *t, const char *installation, uint64_t committed,
		  const char *rec_uuid, int64_t snapseq, const char *path, struct floe_err *err)
{
	const struct floe_ice_meta *m = floe_table_meta(t);
	const char *uuid = floe_ice_meta_uuid(m);
	int64_t held = floe_table_committed_seq(t, installation);
	int64_t last = floe_ice_meta_last_sequence(m);
	/* A record without a uuid (an older floe's), or of another table (made anew, or
	 * another warehouse): nothing of this table can be behind it. A table whose
	 * last-sequence-number reached the record's moved on: another engine's snapshot
	 * expiry removed this installation's commit-seqs with the snapshots, and nothing
	 * was lost. */
	if (!committed || !rec_uuid[0] || !uuid || strcmp(uuid, rec_uuid) != 0 ||
	    held >= (int64_t)committed || (snapseq > 0 && last >= snapseq))
		return 0;
	char has[48] = "none";
	if (held >= 0)
		snprintf(has, sizeof(has), "up to commit-seq %" PRId64, held);
	return floe_err_set(err, FLOE_EBEHIND,
			    "the table %s is behind this agent: installation %s committed up to "
			    "commit-seq %" PRIu64 " (recorded in %s), but the table holds its commits "
			    "%s and its last-sequence-number is %" PRId64 ": commits were lost from "
			    "the table (a metadata file deleted, or the table restored from an older "
			    "copy); their rows are not in it. Restore the table's metadata",
			    floe_table_location(t), installation, committed, path, has, last);
}

int floe_output_check_behind(struct floe_output *o, struct floe_err *err)
{
	if (!o->table)
		return 0;
	read_mark(o);
	char path[FLOE_PATH_MAX];
	if (mark_path(o, path, sizeof(path)))
		path[0] = '\0';
	int rc = behind(o->table, o->opt.installation, o->committed, o->committed_uuid,
			o->committed_snapseq, path, err);
	if (rc)
		floe_output_set_behind(o, err);
	else
		not_behind(o);
	return rc;
}

int floe_output_behind_record(struct floe_alloc *a, const char *spool_dir, const char *what,
			      const struct floe_table *t, const char *installation,
			      struct floe_err *err)
{
	uint64_t seq;
	int64_t snapseq;
	char uuid[64], path[FLOE_PATH_MAX];
	read_record(a, spool_dir, what, &seq, NULL, 0, uuid, sizeof(uuid), &snapseq, NULL);
	if (mark_path_in(spool_dir, path, sizeof(path)))
		path[0] = '\0';
	return behind(t, installation, seq, uuid, snapseq, path, err);
}

int64_t floe_output_committed(struct floe_output *o)
{
	read_mark(o);
	int64_t c = o->committed ? (int64_t)o->committed : -1;
	int64_t t = o->table ? floe_table_committed_seq(o->table, o->opt.installation) : -1;
	return t > c ? t : c;
}

uint64_t floe_output_last_seq(struct floe_output *o)
{
	int64_t c = floe_output_committed(o);
	uint64_t last = c > 0 ? (uint64_t)c : 0, *seqs = NULL;
	size_t n = 0;
	if (floe_spool_list(o->opt.spool, &seqs, &n) == 0 && n > 0 && seqs[n - 1] > last)
		last = seqs[n - 1];
	floe_free(o->opt.alloc, seqs);
	return last;
}

/* ---- the commit, on the committer thread -------------------------------------------- */

struct pass {
	struct floe_output *o;
	struct floe_output_report *rep;
	struct floe_err *err;
	struct floe_spool_entry **es;
	size_t k;
};

/* Commits p->es[0..k) as one snapshot, records it, and removes the entries. */
static int commit_some(struct pass *p)
{
	struct floe_output *o = p->o;
	int rc = p->k ? floe_table_commit(o->table, o->cspool, p->es, p->k, p->err) : 0;
	if (rc == 0 && p->k) {
		mark_committed(o, p->es[p->k - 1]->seq);
		floe_crashpoint("commit-before-spool-remove");
		p->rep->commits++;
	}
	for (size_t i = 0; i < p->k; i++) {
		if (rc == 0) {
			p->rep->rows_committed += floe_spool_entry_rows(p->es[i]);
			p->rep->files_committed += p->es[i]->nfiles;
			p->rep->replaced_utf8 += p->es[i]->replaced_utf8;
			int rm = floe_spool_remove(o->cspool, p->es[i]);
			if (rm)
				floe_warn("output: %s: removing committed spool entry %" PRIu64 ": %s",
					  o->opt.what, p->es[i]->seq, floe_strerror(rm));
		}
		floe_spool_entry_free(o->opt.alloc, p->es[i]);
	}
	p->k = 0;
	return rc;
}

/* An entry whose files carry provisional field ids is never committed as it is: its
 * files get the table's ids first, and the entry is loaded again. */
static int settle_ids(struct pass *p, struct floe_spool_entry **e)
{
	struct floe_output *o = p->o;
	uint64_t seq = (*e)->seq;
	int rc = o->opt.reid ? o->opt.reid(o->opt.open_ctx, o->cspool, *e, p->err)
			     : floe_err_set(p->err, FLOE_ESCHEMA,
					    "%s: spool entry %" PRIu64 " has files with provisional "
					    "field ids, which nothing here can give the table's",
					    o->opt.what, seq);
	if (rc)
		return rc;
	floe_spool_entry_free(o->opt.alloc, *e);
	*e = NULL;
	return load(o, o->cspool, seq, e);
}

/* Loads entry seq and checks its data files, immediately before they leave the spool.
 * Returns 0 (added to the pass), 1 (skipped: quarantined or lost), 2 (stop: to be
 * rebuilt first), or an error (the entry stays for a later try). */
static int take_one(struct pass *p, uint64_t seq)
{
	struct floe_output *o = p->o;
	struct floe_spool_entry *e = NULL;
	int rc = load(o, o->cspool, seq, &e);
	if (rc == FLOE_ECORRUPT)
		return 1;
	if (rc == 0 && (rc = floe_spool_verify(o->cspool, e, NULL)) == FLOE_ECORRUPT) {
		p->rep->damaged++;
		if (o->opt.rebuildable) {
			p->rep->rebuild = seq;
			rc = 2;
		} else {
			rc = lose(o, o->cspool, e, p->rep);
			rc = rc ? rc : 1;
		}
	}
	if (rc == 0 && e->nprov && (rc = settle_ids(p, &e)) == FLOE_ECORRUPT && !e)
		return 1; /* its new entry file fails its checksum: quarantined */
	if (rc) {
		floe_spool_entry_free(o->opt.alloc, e);
		return rc;
	}
	p->es[p->k++] = e;
	return 0;
}

/* The lent entries (those up to the lease; the spool also holds entries sealed since,
 * which are the main thread's), ascending, in *seqs (from the allocator). */
static int lent(struct floe_output *o, uint64_t **seqs, size_t *n)
{
	int rc = floe_spool_list(o->cspool, seqs, n);
	while (rc == 0 && *n > 0 && (*seqs)[*n - 1] > o->lease)
		(*n)--;
	return rc;
}

/* Commits seqs[0..n) (lent, none in the table yet) in order, max per snapshot, up to an
 * entry to rebuild. */
static int commit_all(struct pass *p, const uint64_t *seqs, size_t n, size_t max)
{
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		/* Tests damage a sealed file here, between seal and upload. */
		if (p->k == 0)
			floe_crashpoint("commit-before-upload");
		int t = take_one(p, seqs[i]);
		if (t == 2)
			break;
		if (t < 0)
			rc = t;
		else if (p->k == max)
			rc = commit_some(p);
	}
	int c = commit_some(p); /* what was taken before a stop, or the rest */
	return rc ? rc : c;
}

/* A table behind its record (FLOE_EBEHIND), or whose history went backwards
 * (FLOE_EREGRESS from lake/table_version.c: a stray or missing metadata file, err says
 * which), holds back only its own commits: the output lets it go and opens it again at
 * the next commit. Other codes pass. */
static int hold_back(struct floe_output *o, int rc, struct floe_err *err)
{
	if (rc != FLOE_EBEHIND && rc != FLOE_EREGRESS)
		return rc;
	struct floe_err own = {0};
	err = err ? err : &own;
	if (rc == FLOE_EREGRESS && !err->msg[0])
		floe_err_set(err, rc, "%s", floe_strerror(rc));
	floe_output_set_behind(o, err);
	return FLOE_EBEHIND;
}

int floe_output_commit(struct floe_output *o, size_t max_entries, struct floe_output_report *rep,
		       struct floe_err *err)
{
	uint64_t *seqs = NULL;
	size_t n = 0, held = 0;
	int rc = 0;
	if (!o->table) {
		rc = o->opt.open ? o->opt.open(o->opt.open_ctx, &o->table, err) : FLOE_EINVAL;
		/* A table reached for the first time since the start, or found behind before,
		 * is checked as a start checks it; one behind is let go again, so that the
		 * next try reads it anew. The opener may find it behind a record of its own. */
		if (rc == 0)
			rc = floe_output_check_behind(o, err);
		else
			rc = hold_back(o, rc, err);
	}
	if (rc == 0)
		rc = lent(o, &seqs, &n);
	if (rc || n == 0) {
		floe_free(o->opt.alloc, seqs);
		return rc;
	}
	struct pass p = {o, rep, err, floe_calloc(o->opt.alloc, max_entries, sizeof(*p.es)), 0};
	rc = p.es ? floe_table_refresh(o->table, err) : FLOE_ENOMEM;
	/* The record of the last commit counts too: it is written only once a commit landed,
	 * and an entry it covers is still here only if a crash came before its removal; the
	 * table alone may no longer say so after another engine's snapshot expiry. */
	int64_t committed = rc ? -1 : floe_table_committed_seq(o->table, o->opt.installation);
	if (rc == 0 && (int64_t)o->committed > committed)
		committed = (int64_t)o->committed;
	/* The installation this one replaces (agent.replaces, or the one this installation
	 * was before its state_dir was wiped: floe_table_replaced) committed
	 * this spool's entries up to its commit-seqs in the table, though a crash before its
	 * record left some here. Taken only while the record is its own: this spool's
	 * entries were then numbered on from its, so none of this installation's is below
	 * them (a state_dir made anew numbers from 1 and has no such record). */
	const char *replaced = rc == 0 ? floe_table_replaced(o->table) : NULL;
	if (replaced && strcmp(o->committed_by, replaced) == 0) {
		int64_t old = floe_table_committed_seq(o->table, replaced);
		committed = old > committed ? old : committed;
	}
	for (; rc == 0 && held < n && committed >= 0 && seqs[held] <= (uint64_t)committed; held++)
		rc = drop_held(o, o->cspool, seqs[held], rep);
	if (rc == 0)
		rc = commit_all(&p, seqs + held, n - held, max_entries);
	floe_free(o->opt.alloc, p.es);
	floe_free(o->opt.alloc, seqs);
	return hold_back(o, rc, err);
}
