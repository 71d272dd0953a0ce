/* The inputs as one kind of object: what the runner reads from, whatever the input is (a
 * tailed file set, syslog listeners, the journal). Each input is an opaque object behind
 * a table of operations (input_impl.h), made by one constructor of one shape from its
 * configuration; the runner holds an array of them and never asks which kind one is.
 *
 * An input hands over either lines (a file's bytes up to an LF, with the offsets that
 * make its position: the runner decodes them and joins them into records with the
 * input's parser and multiline settings) or records it mapped itself (a syslog message,
 * a journal entry). Its position is an opaque blob: the runner keeps it with each seal and
 * gives it back at a restart. What the inputs share (the tails' directory watch, the
 * syslog receiver thread) is a floe_input_shared, made first and freed last. */
#ifndef FLOE_INPUT_INPUT_H
#define FLOE_INPUT_INPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_clock;
struct floe_config;
struct floe_err;
struct floe_loop;
struct floe_input;
struct floe_record;
struct floe_input_keep;

/* A line as an input that reads lines hands it over; valid during the call only. */
struct floe_input_line {
	const char *path; /* the file it comes from */
	uint64_t offset;  /* of its first byte */
	const char *data; /* without its LF (and a CR before it) */
	size_t len;
	uint64_t end;	  /* just past its LF (offset + len for a piece without one) */
	uint64_t file_id; /* the file within this input (never 0): the key of a hold */
};

/* Where an input's lines or records go. Each callback returns 0 (taken), 1 (taken, and
 * the runner asks the input to stop now for a seal), or a negative code: not taken; the
 * read stops and returns it, and the same line or record comes first at the next read.
 * A record is borrowed for the call (the callee may shorten its message). */
struct floe_input_sink {
	int (*line)(void *ctx, const struct floe_input_line *line);
	int (*record)(void *ctx, struct floe_record *rec);
	void *ctx;
};

/* What the inputs of one runner share, and the runner's side of their event loop. */
struct floe_input_shared_options {
	const struct floe_config *cfg; /* borrowed: outlives the inputs */
	const struct floe_clock *clock; /* borrowed */
	struct floe_loop *loop;	 /* the runner's main loop (borrowed) */
	bool poll;		 /* no directory watch: files are looked at on each read */
	unsigned fd_pct;	 /* the share of its max_open_files (max_connections) each tail
				  * (syslog listener) may hold */
	const char *host;	 /* the host column when an input has none of its own */
	size_t host_len;
	/* What inputs keep open across a reload (below; borrowed, NULL: nothing): taken by
	 * the inputs that list it, and given to it at their free when the configuration
	 * expected next lists it too. */
	struct floe_input_keep *keep;
};
/* What the inputs keep open from one configuration to the next at a reload, so that a
 * reload loses nothing the sources send meanwhile: the syslog listeners whose address,
 * socket options and TLS files did not change (input/syslog_handover.h). Owned by the
 * process, outside the memory budget; main thread. */
int floe_input_keep_new(struct floe_input_keep **out);
/* Closes what no input took. NULL is fine. */
void floe_input_keep_free(struct floe_input_keep *k);
/* next (borrowed until the next call; NULL: none) takes over once the running inputs
 * are freed: what it lists the same way is kept open at their free. */
void floe_input_keep_expect(struct floe_input_keep *k, const struct floe_config *next);
/* The next configuration's inputs are open: closes what none of them took. */
void floe_input_keep_close_rest(struct floe_input_keep *k);

struct floe_input_shared;
int floe_input_shared_new(struct floe_alloc *a, const struct floe_input_shared_options *o,
			  struct floe_input_shared **out, struct floe_err *err);
/* Once every input is made: starts what reads on a thread of its own (the syslog
 * receiver) and puts the directory watch on the loop. */
int floe_input_shared_start(struct floe_input_shared *sh, struct floe_err *err);
/* At the end of a run, before floe_input_close: stops the threads that read for inputs. */
void floe_input_shared_stop(struct floe_input_shared *sh);
/* After every input is freed. NULL is fine. */
void floe_input_shared_free(struct floe_input_shared *sh);
/* Whether the directory watch is on the loop (a change in a tailed directory wakes it). */
bool floe_input_shared_watched(const struct floe_input_shared *sh);
/* The host column from now on for records without their own (borrowed, as o->host);
 * the runner's, when the host name changed. Main thread, between read passes. */
void floe_input_shared_set_host(struct floe_input_shared *sh, const char *host, size_t len);
/* Whether the inputs have a directory watch at all (else files are polled). */
bool floe_input_shared_has_watch(const struct floe_input_shared *sh);
/* Hands the watch's events to the inputs in[0..n): a short wait when the loop saw its
 * descriptor ready, else a look. Returns whether there were events. */
bool floe_input_shared_take_events(struct floe_input_shared *sh, struct floe_input *const *in,
				   size_t n);

/* What an input of configuration in needs of the memory budget, known before it is made
 * (the memory rule of `floe check`), with max_line taken for its max_line_bytes: its own
 * buffers (read), the longest record it makes itself, whether its records carry
 * attributes whatever the parser, whether it hands over lines (which the runner may
 * join into longer records), and the key of inputs[] that bounds its records. */
struct floe_config_input;
struct floe_input_need {
	uint64_t read, longest;
	bool attrs, lines;
	const char *key; /* "max_line_bytes" */
};
void floe_input_need(const struct floe_config_input *in, uint64_t max_line,
		     struct floe_input_need *out);

/* `floe status`'s lines about an input of configuration c (NULL: one metrics.json has
 * and the configuration no longer: a tail's lines), named name, from its counters as
 * metrics.json recorded them (num(obj, key), 0 when absent), appended to out. Returns
 * whether the input cannot do its work (files it cannot open), as /healthz says. */
struct floe_input_status {
	uint64_t (*num)(const void *obj, const char *key);
	const void *obj;
};
bool floe_input_status_text(const struct floe_config_input *c, const char *name,
			    const struct floe_input_status *st, struct floe_buf *out);

/* Input i of the configuration, of whatever type it has: 0 with *out (owned), or an error
 * with err naming the input. */
int floe_input_new(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
		   struct floe_input **out, struct floe_err *err);
void floe_input_free(struct floe_input *in);

/* The input's type as the configuration and metrics.json name it ("tail"). */
const char *floe_input_kind(const struct floe_input *in);
/* Whether it hands over lines (decoded and assembled by the runner), not records. */
bool floe_input_reads_lines(const struct floe_input *in);

/* Hands over what the input has, up to about budget bytes (*got: bytes consumed), to
 * sink. Returns 0, or a sink's or the input's error. */
int floe_input_read(struct floe_input *in, size_t budget, const struct floe_input_sink *sink,
		    size_t *got);
/* The end of input (run --once, a replay): what it holds back for now (a partial last
 * line) goes to sink. 1: there is more (call again after a seal), 0: done, or an error. */
int floe_input_flush(struct floe_input *in, const struct floe_input_sink *sink);
/* Looks for new sources (files matching the patterns). */
int floe_input_scan(struct floe_input *in);
/* Whether a read may be left out while the directory watch saw nothing (its sources are
 * files the watch covers). */
bool floe_input_quiet_skippable(const struct floe_input *in);
/* Whether it has a source it looks for and does not find (a pattern matching nothing),
 * which no watch sees appear. */
bool floe_input_unmatched(const struct floe_input *in);

/* Positions: appends the input's blob to out. */
int floe_input_positions(struct floe_input *in, struct floe_buf *out);
/* Restores from blob. A blob of another type of input (the configuration changed the
 * input's type) is left alone: *other is set, and 0. */
int floe_input_restore(struct floe_input *in, const uint8_t *blob, size_t len, bool *other);
/* Sources seen for the first time whose position is not durable yet, and are not read
 * before floe_input_confirm. */
size_t floe_input_unsaved(const struct floe_input *in);
/* base (the last durable blob, may be empty) with the new sources' positions added. */
int floe_input_positions_with_new(struct floe_input *in, const uint8_t *base, size_t len,
				  struct floe_buf *out);
void floe_input_confirm(struct floe_input *in);
/* Holds back a position (lines the runner has not put in a batch yet): positions stop at
 * the first held offset of a file until the holds are cleared. */
void floe_input_hold_clear(struct floe_input *in);
void floe_input_hold_at(struct floe_input *in, uint64_t file_id, uint64_t offset);

/* Stops taking input (a full spool, a stop: senders then wait) or takes it again; it
 * takes effect soon: floe_input_held says when. */
void floe_input_hold(struct floe_input *in, bool hold);
bool floe_input_held(const struct floe_input *in);
/* Whether input taken in by a thread waits to be read. */
bool floe_input_pending(const struct floe_input *in);
/* Bytes taken in so far by a thread (a stop reads until they stop coming); 0 without. */
uint64_t floe_input_received(const struct floe_input *in);
/* Whether it takes input in on a thread of its own (which then needs draining at a
 * stop). */
bool floe_input_takes_in(const struct floe_input *in);

/* How the input wakes the runner's idle loop. */
struct floe_input_wake {
	bool wakes;	 /* whatever arrives wakes the loop (else it is polled, 1 s) */
	bool on_loop;	 /* it has descriptors or a thread on the runner's loop */
	bool drain_loop; /* the loop's events are taken before each read (its descriptor) */
	int nap_ms;	 /* after a read that took something: a short wait before the next */
};
void floe_input_wake_info(const struct floe_input *in, struct floe_input_wake *out);
/* The runner is about to sleep: true when input already waits (do not sleep), else the
 * next arrival wakes the loop. */
bool floe_input_arm_wake(struct floe_input *in);

/* SIGHUP: certificates again. */
void floe_input_reload(struct floe_input *in);
/* At the end of a run, after floe_input_shared_stop: the connections close as their
 * peers' would (what was half sent is kept for a last read). */
void floe_input_close(struct floe_input *in);
/* After the last read: what was taken in and not read is let go, counted; returns how
 * much. */
uint64_t floe_input_abandon(struct floe_input *in);

/* The input's counters: its kind's table (the metrics.json key, the Prometheus family,
 * the help) and their values now. FLOE_INPUT_M_PARSE and _TS mark the counts of
 * rejected lines and timestamps, to which the runner adds its decoder's. */
enum { FLOE_INPUT_M_GAUGE = 1, FLOE_INPUT_M_PARSE = 2, FLOE_INPUT_M_TS = 4 };
struct floe_input_metric {
	const char *json, *prom, *help;
	unsigned flags;
};
#define FLOE_INPUT_METRICS_MAX 32
size_t floe_input_metrics(const struct floe_input *in, const struct floe_input_metric **table);
void floe_input_metric_values(const struct floe_input *in, uint64_t *values);
/* The counters table of the k-th kind of input there is (for tests of what renders
 * them): its size, 0 past the last kind. */
size_t floe_input_kind_metrics(size_t k, const char **kind, const struct floe_input_metric **table);
/* For the progress line: the bytes read, those still to read, lines read (false: the
 * input has no bytes waiting to be read, a listener). */
bool floe_input_progress(const struct floe_input *in, uint64_t *done, uint64_t *lag,
			 uint64_t *lines);
/* /healthz: false with why (cap bytes, a line) when the input cannot do its work. */
bool floe_input_healthy(const struct floe_input *in, const char *name, char *why, size_t cap);
/* run --once that read nothing: why, for this input (false: nothing to say). */
bool floe_input_explain_idle(const struct floe_input *in, char *why, size_t cap);

/* A damaged seal's part of this input, read again: what it handed over between the
 * positions from and to (its blobs), as lines or records, into sink, after no more than
 * the bytes the seal took. 0, FLOE_ENOTFOUND (what it handed over is gone or changed:
 * logged with seq and name), or an error. stop is asked between reads. */
struct floe_input_span {
	const uint8_t *from, *to;
	size_t from_len, to_len;
	uint64_t seq;	  /* the entry, for the log */
	const char *name; /* the input, for the log */
	bool (*stop)(void *ctx);
	void *stop_ctx;
};
int floe_input_reread(struct floe_input *in, const struct floe_input_span *span,
		      const struct floe_input_sink *sink);

#endif
