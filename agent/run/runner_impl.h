/* The runner's state, shared by its three files: runner.c (start-up and the run loop),
 * runner_state.c (checkpoints, input positions, recovery) and runner_commit.c (commits,
 * the spool limit, metrics). Internal: nothing outside agent/pipeline/runner*.c includes it. */
#ifndef FLOE_RUNNER_IMPL_H
#define FLOE_RUNNER_IMPL_H

#include "agent/run/runner.h"

#include "agent/input/preflight.h"

#include "agent/lake/spool.h"
#include "agent/state/identity.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/parquet/writer.h"
#include "agent/schema/record.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_assemble_options;
struct floe_assemble_rec;
struct floe_buf;
struct floe_spool_entry;
struct floe_tail_options;

#define READ_BUDGET (1u << 20)      /* bytes per read pass before checking timers */
#define READ_CHUNK (64u << 10)      /* bytes per read() of a tailed file */
#define POSITIONS_MAX (64u << 20)
#define COMMIT_MAX_ENTRIES 256      /* spool entries per snapshot */
#define IDLE_SLEEP_MS 200
#define RESCAN_MS 2000
/* 2: the checkpoint names its installation and records what it committed; 1 (a floe
 * without installation ids) is still read. */
#define CHECKPOINT_VERSION 2
/* Records an assembler may emit while the batch refuses them: a push completes at most 4
 * (see floe_assemble_push), a poll or flush step at most 2 per state. */
#define DEFER_MAX 8
#define ATTRS_MAX 80 /* the decoder's fields (64) plus the runtime's stream */

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

struct floe_runner {
	const struct floe_config *cfg;
	struct floe_alloc alloc;
	char host[256];
	size_t host_len; /* the host column of every record: fixed for the process */
	char state_dir[4096];
	char checkpoint_path[4200];
	struct floe_identity id; /* this installation (state_dir/installation) */
	/* What the checkpoint holds, to rewrite it after a commit: the last seal's sequence
	 * and positions (owned, from alloc), and the newest commit of this installation the
	 * table was seen to hold (its commit-seq, -1 for none, and the table's metadata
	 * version then). A table found behind that record lost commits. */
	uint64_t ck_seq;
	uint8_t *ck_pos;
	size_t ck_pos_len;
	int64_t ck_committed_seq, ck_committed_version;
	char ck_table_uuid[64]; /* the table that record is about ("" before any) */
	struct floe_store *store;
	struct floe_table *table;
	struct floe_spool *spool;
	struct floe_batch *batch;
	/* Page compression threads (agent.compress_threads) and the writers' way to them;
	 * pool is NULL when pages compress on the main thread. */
	struct floe_worker *pool;
	struct floe_pq_offload offload;
	struct floe_tail **tails;
	struct floe_decoder **decoders; /* one per input, like tails */
	struct floe_assemble **asm_;    /* one per input; NULL: each line is a record */
	struct deferred defer[DEFER_MAX]; /* FIFO of records waiting for a seal */
	size_t ndefer;
	int64_t mono_us;                /* monotonic time of the read pass (timeouts) */
	const char *akeys[ATTRS_MAX], *avals[ATTRS_MAX];
	size_t aklens[ATTRS_MAX], avlens[ATTRS_MAX];
	struct floe_watch *watch;       /* NULL: fixed idle sleeps */
	size_t ntails;
	size_t cur_input;               /* the input whose lines on_line receives */
	uint64_t next_seq;      /* sequence of the batch being built */
	int64_t read_us;        /* receive time of the lines being read */
	bool seal_needed;       /* the batch asked to be sealed */
	bool line_refused;      /* the batch could not take the current line */
	int add_error;
	struct floe_runner_stats stats;
	char pq_created_by[64];
	uint64_t spool_max;     /* spool.max_bytes */
	bool drop_oldest;       /* spool.policy: drop_oldest (else block) */
	bool blocked;           /* the spool is full: inputs wait (policy block) */
	char metrics_path[4200];
	struct floe_pq_bloom_column bloom[FLOE_LOG_NCOLS];
	size_t nbloom;
	/* The input positions where the batch being built starts (those of the last seal, or
	 * of the start-up): its entry records them, so that a damaged file's rows can be read
	 * again. Owned, from alloc; NULL until the first read pass. */
	uint8_t *from;
	size_t from_len;
	unsigned fd_pct; /* the share of its max_open_files each input may hold */
};

/* Errors after which the agent must stop rather than retry the commit later: another
 * installation under this agent id, a table whose history went back or has a gap, an
 * object in the warehouse where floe would have to replace it. */
static inline bool floe_runner_fatal(int rc)
{
	return rc == FLOE_EIDENTITY || rc == FLOE_EREGRESS || rc == FLOE_EEXIST;
}

/* runner.c */
/* The tail and assembler options of input i, as the runner makes them. */
void floe_runner_tail_options(const struct floe_runner *r, size_t i, struct floe_preflight_tail *out);
void floe_runner_assemble_options(const struct floe_runner *r, size_t i, struct floe_assemble_options *out);
/* runner_record.c */
/* Adds rec (borrowed; its message may be cut) to the batch as entry seq's: floe_batch_add's
 * result, except that a record the budget cannot take even in an empty batch is cut to
 * what fits or dropped (counted, logged), and running out of memory with rows in the
 * batch is 2 (seal, then add again). */
int floe_runner_batch_add(struct floe_runner *r, struct floe_record *rec, uint64_t seq);
/* Decodes record a of input i (borrowed) and adds it to the batch as entry seq's, as
 * floe_runner_batch_add. Counts no line. */
int floe_runner_add_record(struct floe_runner *r, size_t input, const struct floe_assemble_rec *a,
			   int64_t received_at, uint64_t seq);
/* runner_replay.c */
/* Rebuilds damaged spool entry e (borrowed) from its inputs: reads again the bytes its
 * start and end positions enclose, if every input still holds them unchanged, into a new
 * entry with the same seq and positions, after moving the damaged files to quarantine.
 * The batch must be empty. Returns 0 (rebuilt: load it again), FLOE_ENOTFOUND (the
 * bytes are gone or changed: the rows are lost; logged with the files and byte ranges),
 * or an error (nothing changed; try again later). */
int floe_runner_reread(struct floe_runner *r, const struct floe_spool_entry *e);
/* runner_state.c */
int floe_runner_collect_positions(struct floe_runner *r, struct floe_buf *out);
/* Writes the checkpoint: last_seq and pos (borrowed; pos may be r->ck_pos, else it is
 * copied there) with the installation and the committed record. */
int floe_runner_save_checkpoint(struct floe_runner *r, uint64_t last_seq, const uint8_t *pos, size_t len);
/* Records that the table now holds this installation's commits up to its current
 * committed seq, rewriting the checkpoint when that is news (a failure is logged). */
void floe_runner_note_committed(struct floe_runner *r);
/* Start-up: see runner_state.c. why gets a message naming the file at fault. */
int floe_runner_recover(struct floe_runner *r, char *why, size_t cap);
/* runner_commit.c */
void floe_runner_write_metrics(struct floe_runner *r);
int floe_runner_enforce_spool_limit(struct floe_runner *r);
int floe_runner_commit(struct floe_runner *r);

#endif
