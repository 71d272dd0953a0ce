/* A table output: one Iceberg table, the spool of sealed entries waiting for it, the lease
 * of those entries to the thread that commits them, and the whole commit protocol between
 * spool and table: list what is lent, drop what the table already holds, load each entry,
 * verify its data files, quarantine what is damaged, commit, remove. The logs table and
 * every aggregate table are outputs; the runner's committer runs one loop over them, and
 * the spool limit is applied over them all. Which catalog the table lives in (a local
 * directory, S3, and later REST) is the table's business, behind this interface.
 *
 * Threads: the main thread seals into the spool handle it passed in and owns the
 * output's spool-side calls (lend, drop_oldest, load, lose, forget_after); the committer
 * thread, between a lend and the main thread's taking of its report, owns the table and
 * calls floe_output_commit, which works through a handle of its own on the spool. The
 * two never touch the same entry: the lease says whose each entry is. */
#ifndef FLOE_OUTPUT_H
#define FLOE_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_err;
struct floe_spool;
struct floe_spool_entry;
struct floe_table;
struct floe_output;

struct floe_output_options {
	struct floe_alloc *alloc;    /* shared by both threads (its counters are atomic) */
	struct floe_spool *spool;    /* the main thread's handle (borrowed, outlives this) */
	const char *installation;    /* whose floe.commit-seq in the table counts (borrowed) */
	const char *what;	     /* for the log: "the logs table", "aggregate table x" */
	/* Damaged data files: rebuildable, the entry is handed back to be read again from
	 * its inputs (floe_output_report.rebuild); otherwise its rows are lost, counted, and
	 * it goes to quarantine at once. */
	bool rebuildable;
	/* Opens the table at the first contact when it was not open at the start (the store
	 * was away), on the committer thread; NULL: the table is always given. */
	int (*open)(void *ctx, struct floe_table **out, struct floe_err *err);
	void *open_ctx;
	/* Gives entry e, whose files carry provisional field ids (e->nprov), the table's ids
	 * (floe_spool_reid through sp), on the committer thread with the table open, before
	 * e is committed; called with open_ctx. 0: done (the output loads e again); an
	 * error keeps e in the spool and stops the table's commits at it (FLOE_ESCHEMA: a
	 * column that cannot live with the table's, err says which). NULL: such an entry is
	 * refused so. */
	int (*reid)(void *ctx, struct floe_spool *sp, const struct floe_spool_entry *e,
		    struct floe_err *err);
};

/* What one output's commit, or a main-thread step, did: added to, never reset here. */
struct floe_output_report {
	uint64_t commits, rows_committed, replaced_utf8;
	uint64_t files_committed; /* data files of the committed entries */
	uint64_t damaged;	       /* entries whose data files failed their check */
	uint64_t lost_entries, lost_rows; /* damaged and not rebuilt: counted, quarantined */
	uint64_t rebuild;	       /* a damaged entry to read again (0: none); commits stop before it */
};

/* What the spool limit dropped (policy drop_oldest). */
struct floe_output_drops {
	uint64_t entries, rows, bytes;
};

/* Makes an output over opt->spool and table (owned from here on; NULL: opened by
 * opt->open at the first commit). */
int floe_output_new(const struct floe_output_options *opt, struct floe_table *table,
		    struct floe_output **out);
/* Frees the output, its table and its spool handle (not opt->spool). */
void floe_output_free(struct floe_output *o);
/* What the output commits to, for the log ("the logs table", ...). */
const char *floe_output_what(const struct floe_output *o);
/* The table, NULL while it has not been opened. */
struct floe_table *floe_output_table(const struct floe_output *o);

/* Main thread, before handing a commit over: lends the committer every entry up to upto. */
void floe_output_lend(struct floe_output *o, uint64_t upto);
uint64_t floe_output_lease(const struct floe_output *o);

/* Committer thread: commits the lent entries in order, at most max_entries per snapshot,
 * removing those committed and those the table already holds (an earlier commit whose
 * outcome was unknown). An entry file that fails its own checksum goes to quarantine
 * (logged, counted by the spool); data files that fail their check are rebuilt or lost
 * as the options say. Returns 0 (rep says what happened); FLOE_EBEHIND when the table is
 * behind the record of its commits or its history went backwards (a stray or missing
 * metadata file): the table is let go (floe_output_set_behind, logged once) and only
 * its commits wait; or the table's or store's error (err says why; what is left stays
 * for the next commit). */
int floe_output_commit(struct floe_output *o, size_t max_entries, struct floe_output_report *rep,
		       struct floe_err *err);

/* Main thread: loads entry seq from the spool; an entry file that fails its checksum goes
 * to quarantine (logged) and FLOE_ECORRUPT is returned. */
int floe_output_load(struct floe_output *o, uint64_t seq, struct floe_spool_entry **out);
/* Main thread: e (loaded by floe_output_load, borrowed) is damaged and will not be
 * rebuilt: its rows are counted lost in rep, logged, and it goes to quarantine. */
int floe_output_lose(struct floe_output *o, const struct floe_spool_entry *e,
		     struct floe_output_report *rep);
/* Main thread: moves e's data files to quarantine (counted) but keeps its entry file,
 * for an entry being rebuilt from its inputs under the same seq, whose new entry file
 * then replaces it. */
int floe_output_rebuilding(struct floe_output *o, const struct floe_spool_entry *e);
/* Main thread: removes the entries the table holds (seq <= committed; start-up), with the
 * rows they had in rep->rows_committed. */
int floe_output_drop_landed(struct floe_output *o, int64_t committed,
			    struct floe_output_report *rep);
/* Main thread: removes the entries after seq (sealed by a seal that never became durable:
 * their rows will be made again). */
int floe_output_forget_after(struct floe_output *o, uint64_t seq);
/* Main thread, policy drop_oldest: drops the oldest entry that may go (never the spool's
 * newest, nor, with lent, one lent to a commit in flight), counted in d and logged.
 * Returns 1 (dropped one), 0 (none may go) or an error. */
int floe_output_drop_oldest(struct floe_output *o, bool lent, struct floe_output_drops *d);

/* The data bytes in the spool, and its entries set aside in quarantine. */
uint64_t floe_output_bytes(const struct floe_output *o);
/* The entries waiting in o's spool (counted in memory: no listing). */
size_t floe_output_entries(const struct floe_output *o);
uint64_t floe_output_quarantined(const struct floe_output *o);
/* The newest commit-seq of the installation known to be in the table: the table's own
 * record when it is open, else the output's record of its last commit (kept in the spool
 * directory); -1 for none. */
int64_t floe_output_committed(struct floe_output *o);
/* The record of the last commit kept in spool_dir (the output's, as above), for what
 * must know before the output exists whether its table ever held a commit: *seq, or 0
 * when none is recorded (no file, or not a number: logged), and the table's location
 * it was made at into location (cap bytes; may be NULL), "" when not recorded. */
void floe_output_recorded(struct floe_alloc *a, const char *spool_dir, const char *what,
			  uint64_t *seq, char *location, size_t cap);
/* Checks the table (when open) against the output's record of its last commit: a table
 * that holds fewer of this installation's commits than the record says, and whose
 * last-sequence-number is below the one recorded, lost commits (a metadata file
 * deleted, or the table restored from an older copy), and committing on would build on
 * the loss without a word. A record of another table (another table-uuid) or without a
 * uuid is no loss, nor a table that moved on past the record's last-sequence-number
 * (another engine's snapshot expiry dropped the commit-seqs). Returns 0, or
 * FLOE_EBEHIND with err saying so, the output then behind (floe_output_set_behind). Run
 * at start-up for every table open then, and by floe_output_commit on a table it opens. */
int floe_output_check_behind(struct floe_output *o, struct floe_err *err);
/* The table is behind a record of this installation's commits (why says which): only its
 * commits wait. Logs why once (again when it changes), lets the table go, so that every
 * floe_output_commit opens and checks it anew (and fails with FLOE_EBEHIND until it is
 * restored), and sets floe_output_behind. The thread that owns the table calls it. */
void floe_output_set_behind(struct floe_output *o, const struct floe_err *why);
/* floe_output_check_behind's test of table t (borrowed) against the record of the last
 * commit kept in spool_dir, for what has no output (floe check): 0, or FLOE_EBEHIND with
 * err saying what was lost. */
int floe_output_behind_record(struct floe_alloc *a, const char *spool_dir, const char *what,
			      const struct floe_table *t, const char *installation,
			      struct floe_err *err);
/* Whether the table was last found behind (any thread: for the metrics and status). */
bool floe_output_behind(const struct floe_output *o);
/* The highest sequence this output ever sealed or committed (the spool's newest entry,
 * or floe_output_committed): an output whose table is away seals on from there. */
uint64_t floe_output_last_seq(struct floe_output *o);

#endif
