/* The runner's state, split by concern, and what its files share. Internal: nothing
 * outside agent/run/ includes it. The inputs are agent/input/input.h's objects, one array
 * whatever their types: no file here knows a kind of input. The files call one another
 * one way:
 *   runner.c (start-up, the objects' lives) -> settings.c, runner_state.c,
 *                                               runner_record.c, runner_status.c
 *   runner_loop.c (the run loop, commits on  -> runner_read.c, runner_seal.c,
 *     the interval, the end of a run)           runner_handoff.c, runner_state.c,
 *                                               runner_status.c, runner_agg.c
 *   runner_read.c (the loop's input side:    -> runner_seal.c, runner_record.c,
 *     read passes, drains, flushes)             runner_state.c
 *   runner_seal.c (seals, the deferred       -> runner_record.c, runner_state.c,
 *     records after them)                       runner_handoff.c, runner_agg.c
 *   runner_handoff.c (the main thread's side -> runner_commit.c, runner_replay.c,
 *     of commits, spool limit, metrics)         runner_state.c, runner_agg.c,
 *                                               runner_counters.c
 *   runner_commit.c (the committer thread)   -> the table outputs (lake/output.h) only
 *   runner_replay.c (rebuilding an entry)    -> runner_record.c, settings.c, span.c
 *   runner_state.c (positions, checkpoint,   -> runner_agg.c, span.c
 *     recovery)
 *   runner_record.c (records into the batch) -> runner_agg.c
 *   runner_status.c (the HTTP status pages)  -> runner_counters.c
 *   runner_counters.c (the counters gathered) -> runner_agg.c, counters.c
 *   runner_agg.c (the aggregations), settings.c and span.c call no other file of the
 *   runner. */
#ifndef FLOE_RUNNER_IMPL_H
#define FLOE_RUNNER_IMPL_H

#include "agent/run/runner.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/input/input.h"
#include "agent/lake/output.h"
#include "agent/schema/columns.h"
#include "agent/lake/table.h"
#include "agent/pipeline/decode.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "agent/state/identity.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/parquet/writer.h"
#include "platform/beat.h"
#include "platform/listen.h"
#include "platform/loop.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct floe_assemble_options;
struct floe_counter_totals;
struct floe_httpd;
struct run_status;
struct floe_assemble_rec;
struct floe_buf;
struct floe_spool_entry;

#define READ_BUDGET (1u << 20)      /* bytes per read pass before checking timers */
#define POSITIONS_MAX (64u << 20)
#define COMMIT_MAX_ENTRIES 256      /* spool entries per snapshot */
#define IDLE_SLEEP_MS 200
/* After IDLE_TURNS idle waits in a row, with no record assembler whose timeouts need the
 * finer pace, the wait grows to this: an idle agent wakes once a second, not five times
 * (anything that arrives wakes it at once: inotify, the committer, the syslog receiver,
 * the journal). */
#define IDLE_LONG_MS 1000
#define IDLE_TURNS 5
#define RESCAN_MS 2000
/* The rescan's pace once the inputs were idle for IDLE_TURNS waits and inotify watches
 * their directories: files created or renamed there make the next read scan at once, so
 * the periodic scan is left for what no watch sees (a new directory a wildcard matches).
 * 30 s rather than 10: with 10 idle files the 10 s passes cost 2.3-2.4 ms of CPU a
 * minute, the 30 s ones 1.3-1.4 (tests/bench/idle.sh, side by side, twice). */
#define RESCAN_IDLE_MS 30000
/* The idle rescan's pace while a pattern matches nothing (a directory not there yet: a
 * service's log directory before it is installed). */
#define RESCAN_UNMATCHED_MS 10000
/* While idle with inotify, the tails are still all read at least this often (and a
 * rotated file is closed this late at most after its rotate_wait). */
#define QUIET_FULL_MS 30000
/* The longest idle wait (runner_loop.c's idle_wait sleeps until the next deadline). */
#define IDLE_MAX_MS 60000
/* With agent.http.listen, the longest idle wait: the pages are published after each
 * wait, so a scrape's last-commit age and /healthz are at most this old. */
#define STATUS_IDLE_MAX_MS 5000
/* 2: the checkpoint names its installation and records what it committed; 1 (a floe
 * without installation ids) is still read. */
#define CHECKPOINT_VERSION 2
/* Records an assembler may emit while the batch refuses them: a push completes at most 4
 * (see floe_assemble_push), a poll or flush step at most 2 per state. */
#define DEFER_MAX 8
#define ATTRS_MAX 80 /* the decoder's fields (64) plus the runtime's stream */

/* Settings taken from the configuration once, at start-up (settings.c); read-only after. */
struct run_settings {
	const struct floe_config *cfg; /* borrowed: outlives the runner */
	char state_dir[FLOE_PATH_MAX];
	char checkpoint_path[FLOE_PATH_MAX];
	char metrics_path[FLOE_PATH_MAX];
	char spool_dir[FLOE_PATH_MAX];
	char pq_created_by[64];
	/* The writers' options; pq.bloom points at bloom, pq.created_by at pq_created_by,
	 * sort_by into cfg. The page offload is set when the compression threads start. */
	struct floe_batch_options batch;
	struct floe_pq_bloom_column bloom[FLOE_LOG_NCOLS];
	uint64_t spool_max; /* spool.max_bytes */
	bool drop_oldest;   /* spool.policy: drop_oldest (else block) */
	int64_t commit_interval_us;
	unsigned fd_pct; /* the share of its max_open_files each input may hold */
};

/* What the runner is given from outside: runner.h's options with the defaults filled in,
 * and whether a new configuration takes over (the run then ends as at a stop). */
struct run_env {
	struct floe_runner_options o;
	bool reloading;
	bool made; /* floe_runner_new finished: the counters are folded into o.carry at the end */
};

/* The inputs (agent/input/input.h), one array whatever their types, with what they share;
 * per input that reads lines, its decoder and its assembler (NULL: each line is a
 * record); and what the read pass in progress is about. */
struct run_inputs {
	size_t n; /* inputs opened so far (all of them once the runner is made) */
	struct floe_input **all;
	struct floe_input_shared *shared;
	struct floe_decoder **decoders; /* NULL for an input that hands over records */
	struct floe_assemble **asm_;
	struct floe_route **routes; /* per input; NULL: every record goes to logs */
	struct floe_input_sink sink; /* the runner's callbacks (runner_record.c) */
	bool watch_fired; /* the watch had events since the last full read pass */
	size_t cur;	  /* the input whose lines or records the sink receives */
	int64_t read_us;  /* receive time of the lines being read */
	int64_t mono_us;  /* monotonic time of the read pass (assemblers' timeouts) */
};

/* An assembled record the batch could not take yet (it needs a seal first), copied: the
 * assembler's buffers move on. Its file is held at its offset until it is added. */
struct deferred {
	size_t input;
	uint64_t file_id;
	char *path; /* owned */
	char *msg;  /* owned */
	size_t len;
	int64_t offset, received_at;
	bool has_ts;
	int64_t ts_us;
	char stream[16];
	size_t stream_len;
};

/* The batch being built: its sequence, what asks for a seal, the records waiting for
 * one, and the input positions where it starts. */
struct run_batch {
	bool seal_needed;		  /* the batch asked to be sealed */
	bool line_refused;		  /* the batch could not take the current line */
	int add_error;			  /* why adding failed, for the read loop's message */
	const char *seal_why;		  /* why the runner asked for the seal (NULL: the batch) */
	/* Input bytes read since the last seal, and how many the file system of state_dir
	 * can take into the next seal (floe_runner_update_room). */
	uint64_t unsealed_bytes, room;
	struct deferred defer[DEFER_MAX]; /* FIFO of records waiting for a seal */
	size_t ndefer;
	/* The input positions where the batch being built starts (those of the last seal, or
	 * of the start-up): its entry records them, so that a damaged file's rows can be read
	 * again. Owned, from alloc; NULL until the first read pass. */
	uint8_t *from;
	size_t from_len;
};

#define STORE_ERROR_MAX 512

/* What a commit on the committer thread did, for the main thread (runner_commit.c fills
 * it, runner_handoff.c takes it): counters to add, the result, and the table's record of
 * this installation's commits afterwards. */
struct commit_report {
	int rc; /* 0, or why the logs table's commit failed (logged by the committer) */
	/* What the logs table's output and the aggregate tables' outputs did (their
	 * counters, and the logs table's entry to rebuild from its inputs, if any). */
	struct floe_output_report raw, aggs;
	int64_t committed_seq, committed_version; /* -1, 0: the table was not read */
	int64_t committed_snapseq; /* its last-sequence-number then (0: not read) */
	char table_uuid[64];
	int agg_rc; /* 0, or why committing the aggregate tables failed (logged) */
	/* The raw table whose damaged entry raw.rebuild names (the first that had one; one
	 * that another table also had comes at the next commit, which stops before it). */
	size_t rebuild_table;
	uint64_t attempts, conflicts; /* the table's totals afterwards */
	int64_t duration_us;	      /* of this commit, from its start to the report */
	/* The store could not be reached or refused for now (floe_warehouse_waited_out),
	 * and why, for /healthz; false after a commit that reached it. */
	bool store_down;
	char store_error[STORE_ERROR_MAX];
	/* What is left of the wait the store asked for (an S3 429 or 503 with Retry-After)
	 * when the commit gave up: the next one does not come sooner. 0: none. */
	int64_t retry_after_us;
	/* Whether a raw table's typed columns' plan was learnt at the committer's first
	 * contact with a table the start could not reach (run_table.cols_learnt holds it):
	 * for the main thread's batch. */
	bool cols_learnt;
};

/* Commit durations for /metrics (floe_commit_duration_seconds), in these upper bounds. */
#define COMMIT_BUCKETS 10
static const double commit_bucket_s[COMMIT_BUCKETS] = {0.05, 0.1, 0.25, 0.5, 1,
							 2.5,  5,   10,	  30,  60};
struct commit_hist {
	uint64_t count[COMMIT_BUCKETS + 1]; /* the last: above every bound */
	uint64_t n;
	double sum_s;
	uint64_t attempts, conflicts;
};

/* runner.h's carry: the counters of the runners that ended, and what the inputs keep
 * open between two runners (agent/input/input.h's keep). */
struct floe_runner_carry {
	struct floe_alloc alloc; /* the process's budget: limit set by each runner */
	bool alloc_ready;
	struct floe_counter_totals *totals;
	struct commit_hist hist;
	struct floe_input_keep *inputs;
	const struct floe_config *next; /* expected next (floe_runner_carry_expect), borrowed */
	/* The status listener kept open across a reload (agent.http.listen unchanged), with
	 * its documents' capacity; NULL: none kept. */
	struct floe_httpd *httpd;
	size_t httpd_cap;
	char httpd_listen[FLOE_LISTEN_URI_MAX + 8]; /* its agent.http.listen */
	/* runner_status.c's, for the process: the status listeners' counters of the runners
	 * that ended, when the first runner started and the last commit (monotonic and
	 * wall; 0: none yet), so that a reload resets no age and no counter of /metrics. */
	struct {
		uint64_t requests, evicted, timed_out;
		int64_t started_us, last_commit_us, last_commit_wall_us;
	} status;
};

/* The committer: one thread that uploads and commits sealed entries, so that the main
 * thread never waits on the warehouse's network while it reads. The main thread lends it
 * the entries sealed so far (a lease: every entry up to seq lease), one commit at a time;
 * until the report comes back it touches none of them (no drop_oldest, no rebuild), and
 * the committer touches no other. The report comes back through rep and done, and
 * floe_loop_wake wakes the main thread's loop. Memory: the table, the store and the
 * committer's handle on the spool allocate from the runner's one budget (its counters are
 * atomic), as they did when commits ran on the main thread. A fixed share of its own
 * would either take a megabyte from the reading side's minimum (8 MiB holds the defaults
 * with 0.3 MiB to spare) or, as a table's metadata grows with its history, fail every
 * commit once it outgrew the share; shared, a commit in flight only leaves the batch less
 * room (an earlier seal, at worst a cut line, both counted). */
/* The main thread's watch over the committer's heartbeat (runner_stall.c). */
struct run_stall {
	uint64_t seen;	   /* the heartbeat's count when last seen to change */
	int64_t seen_ns;   /* when (CLOCK_MONOTONIC, ns) */
	int64_t bound_ns;  /* no step for this long with a commit in flight: stuck */
	int64_t exit_ns;   /* and for this long: the process exits */
	bool stalled;	   /* stuck now: logged, shown, the watchdog not fed */
};

struct run_committer {
	struct floe_worker *thread; /* one thread */
	/* The committer's heartbeat (platform/beat.h), attached while a commit runs: the
	 * committer writes it, the main thread reads it. */
	struct floe_beat beat;
	struct run_stall stall; /* the main thread's */
	/* Every table output, the logs table's first, then the aggregations' in the
	 * configuration's order: the committer's one loop and the spool limit go over them. */
	struct floe_output **outs;
	size_t nouts;
	void *task;		    /* the commit in flight (the worker's handle), or NULL */
	int done;		    /* atomic: rep is filled (release by the committer) */
	struct commit_report rep;
	struct floe_loop *wake; /* the main thread's loop (borrowed) */
	/* The committer's own: the last commit's result, so that a store that stays away is
	 * logged once when it goes and once when it comes back, not at every retry. */
	int last_rc;
	/* Set at start-up for a table opened later (the store was away, or the table was
	 * behind): the newest commit of this installation the checkpoint recorded, the
	 * table's metadata version and last-sequence-number then (0: not recorded), and the
	 * table it was made to ("": none). A table found behind it lost commits. */
	int64_t expect_committed, expect_version, expect_snapseq;
	char expect_uuid[64];
};

/* Where sealed batches go, and the threads that compress their pages. */
struct run_lake {
	struct floe_store *store;
	/* The REST catalog every table of the run is in (lake.catalog.type rest), or NULL. */
	struct floe_catalog_rest *catalog;
	/* The main thread's copy of the last report's store state, for /healthz and metrics. */
	bool store_down;
	char store_error[STORE_ERROR_MAX];
	/* Why the last commit failed when the store did answer ("" after one that did not
	 * fail): /healthz names it beside the failure count, so a failure the store is not to
	 * blame for (a permission, a damaged file) is told without the device's log. */
	char commit_error[STORE_ERROR_MAX];
	/* A table this agent committed to is missing from the warehouse (FLOE_EGONE): its
	 * commits wait for it, for metrics. */
	bool table_missing;
	/* Page compression threads (agent.compress_threads) and the writers' way to them;
	 * pool is NULL when pages compress on the main thread. */
	struct floe_worker *pool;
	struct floe_pq_offload offload;
	bool blocked; /* the spool is full: inputs wait (policy block) */
	bool disk_low; /* state_dir's file system is (nearly) full: inputs wait for commits */
	uint64_t disk_avail; /* its free bytes when last asked */
	/* Entries and their data bytes in the spools of tables this configuration does not
	 * name, as found at the start (spool_left.h): nothing commits them until the table
	 * is configured again. */
	uint64_t left_entries, left_bytes;
};

/* A raw table: logs (index 0) and each tables.<name> after it, as
 * floe_config_table_at numbers them. Every one is made, filled, sealed, lent, committed
 * and recovered by the same code; records reach one by their input's table and route
 * rules (floe_runner_route). Index 0's seals number the checkpoint's. */
struct run_table {
	const struct floe_config_table *cfg; /* borrowed from the configuration */
	/* Its output: its spool (the one below), its table (NULL while the store has not
	 * been reached since the start: the committer opens it at its first contact,
	 * floe_runner_open_table; the committer's after start-up) and the lease. */
	struct floe_output *out;
	struct floe_spool *spool;
	struct floe_batch *batch;
	/* The partition spec the batch and the spool write: the table's, or the
	 * configuration's while the table is not open (the table must then have the same). */
	struct floe_part_spec spec;
	uint64_t next_seq; /* sequence of the batch being built */
	int64_t interval_us; /* its commit_interval */
	int64_t lent_us;     /* when its entries were last lent (monotonic), or the start */
	struct floe_batch_options opt; /* its writers' (set.batch for logs) */
	struct floe_pq_bloom_column bloom[FLOE_LOG_NCOLS];
	char what[96];		      /* "the logs table", "table access", for the log */
	char spool_dir[FLOE_PATH_MAX]; /* state_dir/spool, state_dir/tables/<name> */
	struct floe_runner *opener;    /* the runner (the output's open callback's) */
	/* What the last commit did to it: the committer's between a lend and the report
	 * (floe_committer_task resets and fills it), then the main thread's to fold. */
	struct floe_output_report rep;
	/* Start-up: its last entry the checkpoint records (-1: no record, k = 0: unused). */
	int64_t ck_sealed;
	/* Its typed columns (run/colplan.h), each table its own plan: the main thread's
	 * (the decoders of the inputs that write only here take it, the records of routed
	 * inputs are converted under it once routed, the batch writes it) and the writers'
	 * columns made from it: set at start-up, and once more when a plan learnt later
	 * (cols_next, pending) is taken at a seal, so that a file has one set of columns;
	 * the values that did not convert in the runner, per column. */
	struct floe_colplan cols;
	struct floe_pq_column pqcols[FLOE_LOG_MAX_COLS];
	size_t npqcols;
	bool cols_pending;
	struct floe_colplan cols_next;
	uint64_t conv_failures[FLOE_COLS_MAX];
	/* The committer's: the columns the table's commits evolve its schema with (the
	 * table borrows it), the main thread's plan at start-up, the committer's after it;
	 * and a plan learnt at first contact, for the report (com.rep.cols_learnt). */
	struct floe_colplan com_cols;
	bool cols_learnt;
	struct floe_colplan cols_learnt_plan;
};

/* This installation and what the checkpoint holds, to rewrite it after a commit: the last
 * seal's sequence and positions (owned, from alloc), and the newest commit of this
 * installation the table was seen to hold (its commit-seq, -1 for none, and the table's
 * metadata version then). A table found behind that record lost commits. */
struct run_checkpoint {
	struct floe_identity id; /* state_dir/installation */
	uint64_t seq;
	uint64_t sub; /* rowless seals since seal seq (runner_agg.c); 0 = seq's own positions */
	uint8_t *pos;
	size_t pos_len;
	int64_t committed_seq, committed_version;
	int64_t committed_snapseq; /* the table's last-sequence-number then (0: unknown) */
	char table_uuid[64]; /* the table that record is about ("" before any) */
};

/* Per-record scratch: the decoded attrs with the runtime's stream added; and for a
 * record no decoder made (syslog, the journal), its typed values and the attrs no typed
 * column took (floe_colplan_take), with the values that did not convert, per column. */
struct run_scratch {
	const char *akeys[ATTRS_MAX], *avals[ATTRS_MAX];
	size_t aklens[ATTRS_MAX], avlens[ATTRS_MAX];
	const char *tkeys[ATTRS_MAX], *tvals[ATTRS_MAX];
	size_t tklens[ATTRS_MAX], tvlens[ATTRS_MAX];
	struct floe_pq_value typed[FLOE_COLS_MAX];
};

struct floe_runner {
	/* agent.memory_limit, shared by both threads; the runner struct itself is outside.
	 * The process's (the carry's) when it has one: what an input keeps across a reload
	 * was allocated from it and goes on being counted; else own_alloc. */
	struct floe_alloc *alloc;
	struct floe_alloc own_alloc;
	struct run_settings set;
	/* The host column of the records that carry none of their own: the host name, read
	 * at the start and again before every read pass (floe_runner_check_host), so that
	 * the rows read after a provisioning script or DHCP renamed the host carry the new
	 * name, not the boot's until a restart; agent.id when there is none at the start.
	 * Main thread; records hold it only while they are handed over. */
	struct {
		char name[256];
		size_t len;
	} host;
	struct run_env env;
	struct run_inputs in;
	struct run_batch b;
	struct run_table *raw; /* the raw tables, nraw of them (logs first) */
	size_t nraw;
	/* Per raw table, their commits (main thread); nraw more after them: the documents'
	 * snapshot, to which the counters of earlier configurations are added. */
	struct floe_table_counters *tabctr;
	struct run_lake lake;
	struct run_committer com;
	/* The main thread's event loop: the tails' watch, the committer's wake-ups. */
	struct floe_loop *loop;
	struct run_checkpoint ck;
	struct run_scratch scratch;
	struct floe_runner_stats stats;
	struct run_aggs *aggs; /* the aggregations (runner_agg.c); NULL: none */
	struct run_status *status; /* runner_status.c: agent.http.listen; NULL: off */
	struct commit_hist hist;   /* commit latencies, attempts, conflicts (/metrics) */
	/* runner_status.c: the progress line of a run --once on a terminal
	 * (floe_runner_show_progress); on: shown, start_us: when it began, drawn_us: the
	 * last drawing (monotonic). */
	struct {
		bool on;
		int64_t start_us, drawn_us;
	} progress;
};

/* Binds to the logs table (creating it if absent) after checking that the store
 * arbitrates creates: at start-up (main thread), or later on the committer thread when the
 * store was away at the start (later: the table must have the partition spec the spool
 * was written with, and hold this installation's recorded commits). */
int floe_runner_open_table(struct floe_runner *r, size_t k, bool later, struct floe_table **out,
			   struct floe_err *err);
/* The options every table of the run is opened with (the logs table and each aggregate
 * table): where it lives (the store, and so the catalog), who writes it, its properties,
 * the clock and randomness; the caller adds its name, spec and schema. One place, so
 * that another catalog is added once for every table. */
static inline struct floe_table_options floe_run_table_options(const struct floe_runner *r,
							       const char *name,
							       const struct floe_part_spec *spec,
							       const struct floe_table_props *props,
							       const char *spool_dir, const char *what,
							       char existed_at[FLOE_PATH_MAX])
{
	const struct floe_config *cfg = r->set.cfg;
	/* The spool's record of its last commit says the table held commits: a table gone
	 * missing from a local warehouse (a mount not up) is then waited for, not created
	 * again (unless lake.recreate_tables). An object store has no mount to miss. */
	uint64_t recorded = 0;
	if (!cfg->lake.recreate_tables && cfg->lake.catalog == FLOE_CATALOG_FILESYSTEM)
		floe_output_recorded(r->alloc, spool_dir, what, &recorded, existed_at, FLOE_PATH_MAX);
	return (struct floe_table_options){
	    .existed_at = recorded > 0 ? existed_at : NULL,
	    .renewed = r->ck.id.renewed,
	    .store = r->lake.store,
	    .catalog = r->lake.catalog,
	    .namespace = cfg->lake.namespace,
	    .name = name,
	    .spec = spec,
	    .agent_id = cfg->agent.id,
	    .installation_id = r->ck.id.installation,
	    .legacy_agent_id = r->ck.id.legacy_agent_id[0] ? r->ck.id.legacy_agent_id : NULL,
	    .replaces = cfg->agent.replaces,
	    .home = r->ck.id.home[0] ? r->ck.id.home : NULL,
	    /* Every table floe writes gets the configured properties: without any, an
	     * aggregate table would never merge its manifests, expire its snapshots or
	     * delete its old metadata, and grow for as long as the device runs. */
	    .props = props,
	    .clock = r->env.o.clock,
	    .rand = r->env.o.rand,
	};
}

/* The logs table, NULL while it is not open. */
static inline struct floe_table *floe_run_table(const struct floe_runner *r)
{
	return r->raw && r->raw[0].out ? floe_output_table(r->raw[0].out) : NULL;
}

/* Errors after which the agent must stop rather than retry the commit later: another
 * installation under this agent id, an object in the warehouse where floe would have to
 * replace it. A table whose history went back or has a gap, or that is behind this
 * agent's record, holds back only its own commits (FLOE_EBEHIND, lake/output.h). */
static inline bool floe_runner_fatal(int rc)
{
	return rc == FLOE_EIDENTITY || rc == FLOE_EEXIST;
}

/* The injected clock and stop, for the runner's files. */
static inline int64_t floe_run_wall_us(const struct floe_runner *r)
{
	return r->env.o.clock->wall_us(r->env.o.clock->ctx);
}
static inline int64_t floe_run_mono_us(const struct floe_runner *r)
{
	return r->env.o.clock->mono_us(r->env.o.clock->ctx);
}
static inline bool floe_run_stopping(const struct floe_runner *r)
{
	return r->env.reloading || r->env.o.stop(r->env.o.stop_ctx);
}

/* runner_agg.c: the aggregations, their tables and spools (nothing without any). */
struct run_aggs;
int floe_run_aggs_open(struct floe_runner *r, struct floe_err *err);
void floe_run_aggs_free(struct floe_runner *r);
/* Feeds rec (added to the batch from input) to the aggregations that take from it. */
int floe_run_aggs_record(struct floe_runner *r, size_t input, const struct floe_record *rec);
/* Closes idle windows (at a stop: flushes every open one, partial) when the batch is
 * empty and seals what closed into the aggregations' spools with the open windows' image
 * (as the last seal's), for the next commit to take. Main thread. */
int floe_run_aggs_close(struct floe_runner *r, bool stop);
/* Aggregation i's table output (i < the configuration's naggs): its spool, table and
 * commits, which the committer's loop takes with the logs table's. */
struct floe_output *floe_run_aggs_output(const struct floe_runner *r, size_t i);
/* With floe_runner_commit_start: lends the committer every aggregate entry sealed so far. */
void floe_run_aggs_lend(struct floe_runner *r);
/* Before raw entry seq is written: seals the aggregations' closed windows and writes the
 * image of their open windows as seal seq's (see runner_agg.c). An error stops the seal. */
int floe_run_aggs_seal(struct floe_runner *r, uint64_t seq);
/* The aggregations' late events over all of them: late (some window's late_events),
 * those dropped, those too far ahead of the clock, and the clock's steps back (main
 * thread). */
void floe_run_aggs_late(const struct floe_runner *r, uint64_t *late, uint64_t *dropped,
			uint64_t *future, uint64_t *steps);
/* The aggregations' values that were not numbers (unparsable), over all of them (main
 * thread). */
uint64_t floe_run_aggs_unparsable(const struct floe_runner *r);
/* The aggregations' sketch memory over all of them: sketches made coarse, bytes their
 * sketches hold in the open windows' pools, and of that the chunks grown beyond the
 * reservation (main thread). */
void floe_run_aggs_pool(const struct floe_runner *r, uint64_t *coarse, uint64_t *bytes,
			uint64_t *grown);
/* Whether the aggregations took events of a raw: false input since the last seal. */
bool floe_run_aggs_unsealed(const struct floe_runner *r);
/* A seal with no raw rows after raw seal seq: seals the closed windows and writes the open
 * windows' image as seal seq's next rowless one, *sub (1, 2, ...), for the checkpoint. */
int floe_run_aggs_seal_rowless(struct floe_runner *r, uint64_t seq, uint64_t *sub);
/* Start-up, once the positions of seal seq are restored: restores the aggregations' open
 * windows saved at that seal and drops aggregate entries sealed after them. An image that
 * cannot be used is logged as lost (the aggregation starts empty); other errors fail. */
int floe_run_aggs_restore(struct floe_runner *r, uint64_t seq, uint64_t sub, struct floe_err *err);
/* runner_status.c: the listener of agent.http.listen (none when unset), started once the
 * runner is made and stopped before it is freed; publish renders /metrics and /healthz
 * from the main loop, at most once a second unless now, and draws the progress line when
 * it is on (floe_runner_show_progress). */
int floe_runner_status_start(struct floe_runner *r, struct floe_err *err);
void floe_runner_status_publish(struct floe_runner *r, bool now);
void floe_runner_status_stop(struct floe_runner *r);
/* Stops the status listener c kept for a runner that never came (NULL is fine). */
void floe_run_status_release(struct floe_runner_carry *c);

/* settings.c */
/* Fills s from cfg (borrowed; s points into it): paths under state_dir, the host, the
 * writers' options, the spool policy, the descriptor share (raising the process's limit
 * if it can). FLOE_EINVAL with err for a state_dir that cannot be made absolute. */
int floe_run_settings_init(struct run_settings *s, const struct floe_config *cfg,
			   struct floe_err *err);
void floe_run_batch_options(const struct run_settings *s, const struct floe_config_table *t,
			    struct floe_pq_bloom_column *bloom, struct floe_batch_options *b);
/* The assembler options of input i. */
void floe_run_assemble_options(const struct run_settings *s, size_t i,
			       struct floe_assemble_options *out);

/* runner_record.c */
/* Adds rec (borrowed; its message may be cut) to the batch as entry seq's: floe_batch_add's
 * result, except that a record the budget cannot take even in an empty batch is cut to
 * what fits or dropped (counted, logged), and running out of memory with rows in the
 * batch is 2 (seal, then add again). */
int floe_runner_batch_add(struct floe_runner *r, size_t k, struct floe_record *rec, uint64_t seq);
/* The raw table (r->raw's index) input's record rec goes to: the first of the input's
 * route rules that matches it, else the input's table. */
size_t floe_runner_route(struct floe_runner *r, size_t input, const struct floe_record *rec);

/* Decodes record a of input i (borrowed) and adds it to raw table k's batch as entry
 * seq's, as floe_runner_batch_add, if it goes to table k; 4 (not added) if it goes to
 * another. Counts no line (rebuilding an entry of table k). */
int floe_runner_add_record(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			   int64_t received_at, size_t k, uint64_t seq);
/* The same for a record the input mapped itself. */
int floe_runner_add_to(struct floe_runner *r, size_t input, struct floe_record *rec, size_t k,
		       uint64_t seq);
/* Reads the host name again (before each read pass: one uname(2), against the pass's
 * reads); a new one is logged and goes into the host column from the next record on
 * (r->host). */
void floe_runner_check_host(struct floe_runner *r);
/* The sink's line callback (ctx: the runner): a line of input r->in.cur into the batch,
 * or into its assembler. A negative return leaves the line in the input (to be read
 * again after a seal, r->b.line_refused), 1 asks the input to stop for a seal. */
int floe_runner_on_line(void *ctx, const struct floe_input_line *line);
/* The sink's record callback (ctx: the runner): a record input r->in.cur mapped itself,
 * into the batch, with floe_runner_on_line's returns. */
int floe_runner_on_input_record(void *ctx, struct floe_record *rec);
/* The assemblers' record callback (ctx: the runner): into the batch, or kept for after
 * the seal when the batch refuses it. */
int floe_runner_on_record(void *ctx, const struct floe_assemble_rec *a);
/* Adds the records kept for after the seal, in order, until the batch refuses one
 * again. */
int floe_runner_add_deferred(struct floe_runner *r);
/* Frees the records kept for after the seal. */
void floe_runner_drop_deferred(struct floe_runner *r);

/* runner_seal.c */
/* The next batch starts at positions p (copied; without memory for the copy its entry
 * records no start, and a damaged file of it could not be rebuilt). */
void floe_runner_set_from(struct floe_runner *r, const uint8_t *p, size_t len);
/* Seals the batch into the next spool entry (or, with no raw row but events of raw:
 * false inputs, the positions into the checkpoint). why says what closes it (NULL: the
 * batch's own reason, else the memory budget): logged. */
int floe_runner_seal(struct floe_runner *r, const char *why);
/* Seals while asked to and puts the waiting records in the next batch. */
int floe_runner_settle(struct floe_runner *r);

/* runner_read.c: the loop's input side. */
/* One read pass over every input (quiet: leaving out those the watch saw no change of).
 * *progress gets the bytes consumed (and 1 for more to read at once). */
int floe_runner_read_inputs(struct floe_runner *r, size_t *progress, bool quiet);
/* Timeouts of every assembler; with end = true (--once), everything they hold. */
int floe_runner_poll_assemblers(struct floe_runner *r, bool end);
/* --once at the end of input: what each input holds back (a partial last line, what a
 * receiver took in), then what the assemblers still hold. */
int floe_runner_flush_inputs(struct floe_runner *r);
/* At a stop: the last of what inputs with a thread took in, their connections closed. */
int floe_runner_drain_inputs(struct floe_runner *r);
/* The end of a run: what inputs took in and the last read could not take dies with the
 * process: counted (in the metrics written next) and logged. */
void floe_runner_abandon_inputs(struct floe_runner *r);
/* run --once that read no line says why, input by input. */
void floe_runner_explain_nothing_read(const struct floe_runner *r);
/* Hands the watch's events to the inputs (r->in.watch_fired when there were some). */
void floe_runner_take_watch_events(struct floe_runner *r);
/* Whether an input looks for a source it does not find (no watch sees one appear). */
bool floe_runner_inputs_unmatched(const struct floe_runner *r);
/* Rescans every input; with report, the first failure is logged and returned. */
int floe_runner_scan_inputs(struct floe_runner *r, bool report);
/* SIGHUP: the inputs' certificates again. */
void floe_runner_reload_inputs(struct floe_runner *r);
/* How the inputs wake the idle loop, over all of them; with arm, each is asked to wake
 * it for what comes next (pending: something waits already). */
struct run_wake {
	bool on_loop;	 /* some input has descriptors or a thread on the loop */
	bool drain_loop; /* some input's descriptor events are taken before each read */
	bool all_wake;	 /* whatever arrives at any input wakes the loop */
	bool assembling; /* some input assembles records (their timeouts) */
	bool pending;
	int nap_ms; /* the longest nap an input asks for after reading */
};
void floe_runner_inputs_wake(struct floe_runner *r, bool arm, struct run_wake *w);

/* runner_replay.c */
/* Rebuilds damaged spool entry e (borrowed) of raw table k from its inputs: reads again
 * the bytes its start and end positions enclose, if every input still holds them
 * unchanged, and keeps the records routed to table k, into a new entry with the same seq
 * and positions, after moving the damaged files to quarantine. Table k's batch must be
 * empty. Returns 0 (rebuilt: load it again), FLOE_ENOTFOUND (the
 * bytes are gone or changed: the rows are lost; logged with the files and byte ranges),
 * or an error (nothing changed; try again later). */
int floe_runner_reread(struct floe_runner *r, size_t k, const struct floe_spool_entry *e);

/* runner_state.c */
int floe_runner_collect_positions(struct floe_runner *r, struct floe_buf *out);
/* Writes the checkpoint: last_seq, sub (the rowless seals since it) and pos (borrowed;
 * pos may be r->ck.pos, else it is copied there) with the installation and the committed
 * record. */
int floe_runner_save_checkpoint(struct floe_runner *r, uint64_t last_seq, uint64_t sub,
				const uint8_t *pos, size_t len);
/* Makes the positions the tails chose for files seen for the first time durable (the
 * checkpoint, with every other position as the last seal left it), then lets the tails
 * read those files. nothing_read (start-up): the positions now are all durable ones, and
 * the checkpoint is written whenever it lacks an input, so that later merges have a base.
 * A failure is logged and returned (as a failed checkpoint write at a seal). */
int floe_runner_save_new_positions(struct floe_runner *r, bool nothing_read);
/* Records that the table now holds this installation's commits up to seq, at metadata
 * version, in the table uuid names (the committer's report), rewriting the checkpoint
 * when that is news (a failure is logged). The main thread is the checkpoint's only
 * writer. */
void floe_runner_note_committed(struct floe_runner *r, int64_t seq, int64_t version,
				int64_t snapseq, const char *uuid);
/* The logs table t against the checkpoint's record of this installation's commits
 * (com.expect_*): 0, or FLOE_EBEHIND with err saying what was lost. A table of another
 * table-uuid, or one whose last-sequence-number reached the recorded one (it moved on:
 * another engine's snapshot expiry took the commit-seqs), is not behind. */
int floe_runner_check_behind(const struct floe_runner *r, const struct floe_table *t,
			     struct floe_err *err);
/* Start-up: see runner_state.c. err gets a message naming the file at fault. */
int floe_runner_recover(struct floe_runner *r, struct floe_err *err);

/* runner_commit.c: the committer thread's side. */
/* The worker task of one commit (arg: the runner): one loop over the outputs
 * (r->com.outs, the logs table's first), each committing the entries lent to it
 * (floe_output_commit); fills r->com.rep, publishes it and wakes the main loop. Touches
 * nothing else of the runner. */
void floe_committer_task(void *arg);

/* runner_handoff.c: the main thread's side of commits. */
/* Lends the committer every entry sealed so far and starts a commit (none may be in
 * flight). Returns 0, or an error (nothing started). */
/* all: every raw table's entries; else those of the tables whose commit_interval has
 * passed since they were last lent (floe_runner_table_due). */
int floe_runner_commit_start(struct floe_runner *r, bool all);
/* Whether raw table k's commit_interval has passed since its entries were last lent. */
bool floe_runner_table_due(const struct floe_runner *r, size_t k);
/* True while a commit is in flight. */
bool floe_runner_committing(const struct floe_runner *r);
/* runner_stall.c: the committer's bounds from the configuration (at the runner's start);
 * a commit handed over (resets the watch); a look at the committer from the main thread,
 * true while it is stuck (logs it once, and exits the process after the longer bound);
 * whether it was stuck at the last look; and the wait for the commit in flight to end
 * (r->com.task set; NULL on return), which looks at it every second meanwhile. */
void floe_run_stall_init(struct floe_runner *r);
void floe_run_stall_reset(struct floe_runner *r);
bool floe_run_stall_check(struct floe_runner *r);
void floe_run_stall_wait(struct floe_runner *r);
static inline bool floe_run_stalled(const struct floe_runner *r)
{
	return r->com.stall.stalled;
}
/* Takes the report of the commit in flight if it is done (with wait: once it is): adds
 * its counters, records what the table holds in the checkpoint, resumes inputs a full
 * spool held, writes metrics.json. Returns 1 with *rc (the commit's result) and *damaged
 * (an entry to rebuild, 0 for none), or 0 when there is no report (yet). */
int floe_runner_commit_take(struct floe_runner *r, bool wait, int *rc, uint64_t *damaged);
/* Rebuilds damaged entry seq of the raw table the last report named (rebuild_table) from
 * its inputs (floe_runner_reread; the batch must be empty), or counts its rows lost and
 * moves it to quarantine when its bytes are gone.
 * Returns 0 (either way: commit again), or an error (the entry stays). */
int floe_runner_rebuild(struct floe_runner *r, uint64_t seq);
void floe_runner_write_metrics(struct floe_runner *r);
/* A typed columns' plan the committer learnt for a raw table (its cols_pending) becomes
 * its batch's and its decoders' when its batch is empty (after a seal, or before its
 * first row). */
void floe_runner_take_columns(struct floe_runner *r);
/* The counters (counters.h's table, gathered by runner_counters.c) appended to b: as
 * metrics.json, or as /metrics's families (prom). */
int floe_run_counters_render(struct floe_runner *r, bool prom, struct floe_buf *b);
/* At the end of a runner that was made: its counters (and commit latencies) into the
 * process's carry, if any, for the next runner's documents to count on from. */
void floe_run_counters_fold(struct floe_runner *r);
int floe_runner_enforce_spool_limit(struct floe_runner *r);
/* Rows in every raw table's batch. */
static inline uint64_t floe_runner_rows(const struct floe_runner *r)
{
	uint64_t n = 0;
	for (size_t k = 0; k < r->nraw; k++)
		n += floe_batch_rows(r->raw[k].batch);
	return n;
}
/* What counts against spool.max_bytes: the data bytes of every output's spool. */
static inline uint64_t floe_runner_spool_bytes(const struct floe_runner *r)
{
	uint64_t n = 0;
	for (size_t i = 0; i < r->com.nouts; i++)
		n += floe_output_bytes(r->com.outs[i]);
	return n;
}
/* The entries waiting in every output's spool. */
static inline size_t floe_runner_spool_entries(const struct floe_runner *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->com.nouts; i++)
		n += floe_output_entries(r->com.outs[i]);
	return n;
}
/* The outputs whose table is behind the record of its commits (floe_output_behind):
 * their number, and with names, what they commit to, comma-separated, into names (cap
 * bytes). runner_counters.c. */
uint64_t floe_runner_tables_behind(const struct floe_runner *r, char *names, size_t cap);
/* Asks state_dir's file system for its free space: sets r->b.room (input bytes the next
 * seal may take, half of what is free beyond a reserve) and r->lake.disk_low. Returns
 * whether the disk is low. */
bool floe_runner_update_room(struct floe_runner *r);

#endif
