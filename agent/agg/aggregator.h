/* The streaming aggregator: one per entry of `aggregations:`. Records go in,
 * rows of the aggregate table (agent/schema/aggtable.h) come out when their window
 * closes. floe_agg_new reserves per open window a group table of max_groups groups plus
 * the __overflow__ group, each group holding its key and every metric's state (small
 * sketches included) at a fixed stride, a pool the sketches grow into, and the buffers
 * rows are made in. On the per-event path only a window's pool allocates, in chunks,
 * when floe_agg_set_growth gave it a ceiling (a `where: matches` filter runs the C
 * library's regexec, which may too).
 *
 * Time is the records' ts (event time, µs). Windows start at multiples of slide from
 * the epoch and last window; an event lands in window/slide windows. The watermark is the
 * newest ts seen minus allowed_lateness; a window closes (its rows are emitted, in
 * window order) once the watermark reaches its end. An event whose windows have all
 * closed is late: it is counted in the late_events of the oldest open window and, with
 * late: oldest_open, aggregated there; with late: drop it is not aggregated. With
 * hopping windows an event some of whose windows are still open is added to those and
 * is not late. Windows also close when no event came for idle_timeout of processing
 * time (the records' received_at, and floe_agg_tick's clock).
 *
 * The wall clock can step back (a device without a real-time clock, one running ahead
 * that NTP corrects, a date set by hand): event times read from it, and from logs
 * stamped by it, then fall behind the watermark by the step, and every event until the
 * clock caught up again (a year, for a year's step) would be late. The caller tells the
 * aggregator its clock (floe_agg_clock, floe_agg_tick); a reading behind the previous
 * one by more than allowed_lateness (and at least FLOE_AGG_CLOCK_STEP_MIN_US) is a step:
 * the open windows are emitted as they are (partial, as at a stop) and the watermark
 * starts again from the next event, so that no event is late for the step. Records
 * received before the step and added after it carry the old clock's times: one dated
 * beyond the new clock by more than max_future_skew is handled as too far ahead. */
#ifndef FLOE_AGG_AGGREGATOR_H
#define FLOE_AGG_AGGREGATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_aggtable;
struct floe_colplan;
struct floe_config_agg;
struct floe_err;
struct floe_pq_value;
struct floe_record;

/* The smallest step back of the clock that floe_agg_clock takes for one (µs). */
#define FLOE_AGG_CLOCK_STEP_MIN_US 1000000

/* Windows open at once: at most this many (window + allowed_lateness over slide). */
#define FLOE_AGG_MAX_WINDOWS 256
/* The group every key goes to once a window has max_groups groups (or whose key values
 * exceed max_key_bytes): its string key columns hold this, its other key columns null. */
#define FLOE_AGG_OVERFLOW "__overflow__"

/* What an aggregation reserves, from its configuration alone. */
struct floe_agg_plan {
	uint32_t windows;     /* window slots: windows open at once */
	uint64_t group_bytes; /* one group: key, counters, small sketches, and its share of
			       * the window's pool */
	uint64_t groups;      /* per window: max_groups + 1 (the overflow group) */
	uint64_t total;	      /* everything floe_agg_new reserves */
	uint64_t pool;	      /* per window: bytes its sketches grow into (pool.h) */
};

/* Computes the plan of c. FLOE_ELIMIT with the reason in err (may be NULL) when more
 * than FLOE_AGG_MAX_WINDOWS windows would be open at once or the size overflows. */
int floe_agg_plan(const struct floe_config_agg *c, struct floe_agg_plan *out, struct floe_err *err);

struct floe_config;
/* The aggregations' rule for `floe check` and start-up (agg_check.c): every aggregation
 * has a plan, and together they reserve at most a quarter of agent.memory_limit, and no
 * more than what rest (the bytes the rest of the agent needs, run/memory.h) leaves of it.
 * FLOE_EFORMAT with one line "file:line:column: message" in err (may be NULL) naming the
 * aggregation, its figures and what would fit. */
int floe_agg_check(const struct floe_config *c, uint64_t rest, struct floe_err *err);

/* What aggregation i of c may grow its window pools by at run time (floe_agg_set_growth):
 * the part of the aggregations' share of agent.memory_limit (floe_agg_check's, with the
 * same rest) that their reservations leave, split in proportion to their reserved pools.
 * 0 when nothing is left or a plan fails. */
uint64_t floe_agg_growth(const struct floe_config *c, uint64_t rest, size_t i);

/* Counters of one aggregator since it was made. */
struct floe_agg_stats {
	uint64_t events;   /* records taken (after where) */
	uint64_t filtered; /* records `where` left out */
	uint64_t late;	   /* late events (in some row's late_events) */
	uint64_t late_dropped;
	uint64_t future;     /* events too far ahead of the clock (counted in late too) */
	uint64_t unparsable; /* metric values that were not numbers: not aggregated; and
			      * integer keys whose text was not one: null */
	uint64_t overflowed; /* events aggregated in an __overflow__ group */
	uint64_t coarse;     /* sketches made coarser: their window's pool could not grow */
	uint64_t pool_bytes; /* now: bytes the open windows' sketches hold in their pools */
	uint64_t pool_grown; /* now: bytes of chunks the pools hold beyond their reservation */
	uint64_t windows;    /* windows emitted */
	uint64_t rows;	     /* rows emitted */
};

/* Receives one row of the aggregate table (ncols values, borrowed until the call
 * returns). partial is in the row. A negative return stops the emission and is
 * returned by the call that emitted. */
typedef int (*floe_agg_emit_fn)(void *arg, const struct floe_pq_value *row, size_t ncols);

struct floe_aggregator;

/* Makes the aggregator of c (borrowed: must outlive it) with all its memory from a.
 * cols (borrowed during the call; NULL: none) are the typed columns the configuration
 * gives the records (agent/schema/columns.h; their configured types, ids unused): a
 * field one of them takes is read from the record's typed values (numbers without
 * parsing text), and a group key from an int or long column is that integer, hashed as
 * such and written in an int or long key column. A record that carries the field as
 * text instead (read before the columns were learnt, or a value that did not convert)
 * is read from its text, converted to the key's type (a key that does not convert is
 * null, counted in unparsable). Which typed value of a record a field is, is resolved
 * against the record's typed_plan once per plan (its from_sig), not per record.
 * Errors: FLOE_ELIMIT (see floe_agg_plan), FLOE_EINVAL (a regex that does not compile),
 * FLOE_ENOMEM, with err (may be NULL) saying which. */
int floe_agg_new(struct floe_alloc *a, const struct floe_config_agg *c,
		 const struct floe_colplan *cols, struct floe_aggregator **out,
		 struct floe_err *err);
void floe_agg_free(struct floe_aggregator *g);

/* The columns c's aggregator would write, without its groups' memory (to compare them
 * with an existing table's schema before an aggregator is made). *out is owned by the
 * caller: floe_aggtable_free. Errors as floe_agg_new's. */
int floe_agg_table_of(struct floe_alloc *a, const struct floe_config_agg *c,
		      const struct floe_colplan *cols, struct floe_aggtable **out,
		      struct floe_err *err);

/* Lets g's window pools grow by up to ceiling bytes together at run time, in chunks from
 * the allocator g was made with, given back as their windows close (0, the default: they
 * hold only what floe_agg_new reserved). A chunk the allocator refuses makes the sketch
 * that asked coarse, counted, as the ceiling does. */
void floe_agg_set_growth(struct floe_aggregator *g, uint64_t ceiling);

/* The aggregate table's columns (borrowed from g). */
const struct floe_aggtable *floe_agg_table(const struct floe_aggregator *g);
const struct floe_agg_stats *floe_agg_stats(const struct floe_aggregator *g);
/* Whether the aggregation takes records of input i (its `from`). */
bool floe_agg_takes(const struct floe_aggregator *g, size_t input);

/* Aggregates one record (borrowed during the call); windows the record's time closes
 * are emitted first. Returns 0 or emit's error. */
int floe_agg_add(struct floe_aggregator *g, const struct floe_record *r, floe_agg_emit_fn emit,
		 void *arg);
/* The caller's wall clock (µs, the clock the records' received_at is read from), before
 * the records read at that time are added: at least once per reading of the clock that
 * stamps them. A reading behind the previous one (or, after a restore, behind the newest
 * record's received_at) by more than the step threshold (above) is a step back: the
 * open windows are emitted with partial = true and the watermark starts again, counted
 * in floe_agg_clock_steps. Returns 0 or emit's error. */
int floe_agg_clock(struct floe_aggregator *g, int64_t now_us, floe_agg_emit_fn emit, void *arg);
/* Steps back of the clock that floe_agg_clock (or floe_agg_tick) saw, since g was made. */
uint64_t floe_agg_clock_steps(const struct floe_aggregator *g);
/* The clock steps are measured from: the last reading, after a restore the newest
 * record's received_at, INT64_MIN before either. */
int64_t floe_agg_clock_now(const struct floe_aggregator *g);
/* floe_agg_clock(now_us), then closes every open window when no record came for
 * idle_timeout before now_us (processing time, as the records' received_at). Returns 0
 * or emit's error. */
int floe_agg_tick(struct floe_aggregator *g, int64_t now_us, floe_agg_emit_fn emit, void *arg);
/* Emits every open window with partial = true and empties them (at a stop). They do not
 * count as closed: events of theirs that come later (after a restart restored the
 * image) open them again, for another row. */
int floe_agg_flush(struct floe_aggregator *g, floe_agg_emit_fn emit, void *arg);

/* The open windows' image (aggregator_state.c): what a restart needs to go on exactly
 * where this aggregator is, so that the caller can write it beside the input positions
 * its events came from. It holds the counters, the watermark and every open window's
 * groups: header, key and counters verbatim, the sketches with their counted part only
 * (an HLL's mode, precision and coupons or registers, as (index, value) pairs while fewer
 * than a fifth are set; a DDSketch's header and pairs, or buckets from the first to the
 * last counted; SpaceSaving whole; sketches are laid out anew on load), in this
 * build's memory layout: it is read back only by the same build of floe with the same
 * aggregation (fingerprints of the layout and of the configuration say so), never
 * exchanged. Its first 24 bytes, the preamble, are the same in every version from 5 on:
 * any later build reads from them how many open windows an image it cannot restore held,
 * and its tag. The last 8 bytes are an XXH64 of the rest. */
/* Takes the next n bytes of an image (borrowed during the call): 0, or a negative code. */
typedef int (*floe_agg_write_fn)(void *ctx, const void *p, size_t n);
/* Writes g's image, with tag (the caller's: any number restored with it), through write,
 * in pieces of up to 16 KiB (larger ones for a group's SpaceSaving or dense HLL come
 * whole). Allocates nothing. Returns 0 or write's error. */
int floe_agg_save(struct floe_aggregator *g, uint64_t tag, floe_agg_write_fn write, void *ctx);
/* Reads exactly n bytes into p (0), or fails (a negative code). */
typedef int (*floe_agg_read_fn)(void *ctx, void *p, size_t n);
/* Restores an image written from floe_agg_save's pieces into g, which must be new (no
 * record added), reading it through read; *tag gets its tag. On failure g is left new:
 * FLOE_EFORMAT when the image is of another aggregation, build or version (*tag is set
 * all the same when the image's preamble was read), FLOE_ECORRUPT when it is damaged
 * (err, may be NULL, says what), or read's error. */
int floe_agg_load(struct floe_aggregator *g, floe_agg_read_fn read, void *ctx, uint64_t *tag,
		  struct floe_err *err);
/* How many open windows the image the last floe_agg_load refused held (its preamble's
 * count, which every build from image version 4 on reads, of any version or layout; 1
 * for what is not such an image): the windows lost, for the caller to count. 0 after a
 * load that restored, or that read no image. */
uint32_t floe_agg_load_lost(const struct floe_aggregator *g);

#endif
