/* The runner: one agent's pipeline from its inputs to its table. It recovers on start
 * (commits left in the spool, input positions from the newest durable seal), then loops:
 * read lines, add them to the batch, seal the batch into the spool, commit the spool to
 * the table on the commit interval, and advance the checkpoint only after a seal is
 * durable. With once set it reads what is there, commits it and returns. */
#ifndef FLOE_RUNNER_H
#define FLOE_RUNNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_clock;
struct floe_config;
struct floe_err;
struct floe_rand;
struct floe_runner;
struct floe_runner_carry;

/* What the runner takes from outside; a NULL options pointer, or a NULL member, means the
 * system's. Borrowed: it must outlive the runner. Tests drive a run with a fake clock. */
struct floe_runner_options {
	/* Receive times, seal times, the commit interval, timeouts, idle waits (the clock's
	 * sleep), and the tails' clock: agent/env/env.h. */
	const struct floe_clock *clock;
	/* A new installation id, snapshot ids, UUIDs and back-off jitter. */
	const struct floe_rand *rand;
	/* Whether to stop now: seal, commit and return (NULL: once SIGINT or SIGTERM came,
	 * floe_signal_stop_requested). */
	bool (*stop)(void *ctx);
	void *stop_ctx;
	/* Wait for lines with the clock's sleep alone, not with inotify (tests). */
	bool poll;
	/* SIGHUP: whether a new configuration takes over (NULL: none ever does; TLS
	 * certificates are reloaded either way). Returning true ends the run as a stop
	 * would (seal, commit, return 0), for the caller to start a runner on the new one;
	 * false keeps this one running (the caller logged why). */
	bool (*reload)(void *ctx);
	void *reload_ctx;
	/* What the process keeps from one runner to the next (NULL: nothing, a process that
	 * never reloads). Borrowed. */
	struct floe_runner_carry *carry;
	/* Set when this configuration is the last good one, running because the file's
	 * could not be used (agent/cli/last_good.h): what /healthz answers (503) while it
	 * runs, with config_fallback 1. Borrowed for the runner's life. */
	const char *config_note;
};

/* What a process that reloads keeps across its runners, one configuration's each: the
 * counters so far, so that none goes down at a reload (metrics.json and /metrics
 * count for the process), and the syslog listeners the next configuration lists the
 * same way (address, socket options, TLS files), handed over open, so that a reload
 * never refuses a connection nor leaves a datagram without a socket. Made before the
 * first runner, given to each in its options, freed after the last (closing the
 * listeners nobody took). Outside the memory budget: it outlives every runner's. */
int floe_runner_carry_new(struct floe_runner_carry **out);
void floe_runner_carry_free(struct floe_runner_carry *c);
/* A reload was accepted: next (borrowed until the next runner is made) takes over once
 * the running runner ends; the listeners it keeps stay open when that runner frees its
 * inputs. The next floe_runner_new takes them and closes those it did not want. */
void floe_runner_carry_expect(struct floe_runner_carry *c, const struct floe_config *next);

struct floe_runner_stats {
	uint64_t lines;
	uint64_t seals;
	uint64_t commits;
	uint64_t commit_failures;
	uint64_t rows_committed;
	uint64_t replaced_utf8;
	uint64_t dropped_entries;  /* spool policy drop_oldest */
	uint64_t dropped_rows;
	uint64_t dropped_bytes;
	uint64_t quarantined;      /* corrupt spool entries set aside */
	uint64_t blocked_ms;       /* time the inputs waited for a full spool */
	uint64_t parse_failures;   /* lines the input's parser rejected (kept as plain lines) */
	uint64_t ts_failures;      /* lines without a parsable timestamp (receive time used) */
	/* Spool entries whose data files failed their check (size, XXH64) before upload;
	 * of those, the ones rebuilt from their inputs and the ones lost with their rows
	 * (their input no longer held the bytes). */
	uint64_t spool_damaged;
	uint64_t spool_reread_entries;
	uint64_t spool_reread_rows;
	uint64_t spool_lost_entries;
	uint64_t spool_lost_rows;
	/* State files that failed their checksum and were set aside to quarantine/: the
	 * checkpoint (reading resumes from the newest spool entry, or start_at), an
	 * aggregation's open windows (lost; the aggregation starts empty), the installation
	 * file or its copy (made again from the other, or from the checkpoint). */
	uint64_t state_damaged;
	/* New installation ids made in place of a damaged one that nothing else named. */
	uint64_t installation_renewed;
	/* Open windows of aggregations that a restart could not restore (floe_agg_load_lost). */
	uint64_t agg_windows_lost;
	/* Lines the memory budget could not take whole even in an empty batch: cut to what
	 * fits (and the bytes cut off), or dropped when nothing fit. */
	uint64_t lines_truncated_memory;
	uint64_t bytes_truncated_memory;
	uint64_t lines_dropped_memory;
	/* Times a thread was found making no progress for its bound (runner_stall.c). */
	uint64_t thread_stalls;
};

/* The exit code of a process whose committer thread made no progress for the longer
 * bound (runner_stall.c): the supervisor restarts it, and the start recovers. */
#define FLOE_RUNNER_EXIT_STUCK 4

/* Opens the table, the spool and the inputs, and recovers (see runner_state.c). cfg and
 * opt (may be NULL) are borrowed and must outlive the runner. 0 and *out, or an error with
 * err (may be NULL) holding the code and a message for the operator. */
int floe_runner_new(const struct floe_config *cfg, const struct floe_runner_options *opt,
		    struct floe_runner **out, struct floe_err *err);
void floe_runner_free(struct floe_runner *r);
/* Runs until a stop (or, with once, until the inputs are drained and committed). */
int floe_runner_run(struct floe_runner *r, bool once);
void floe_runner_get_stats(const struct floe_runner *r, struct floe_runner_stats *out);
/* Shows a progress line on stderr while floe_runner_run runs (bytes and lines read, the
 * rate, the time left), drawn once a second from the second second on: for a run --once
 * on a terminal (platform/log.h's status line; the caller clears it after the run). */
void floe_runner_show_progress(struct floe_runner *r);

#endif
