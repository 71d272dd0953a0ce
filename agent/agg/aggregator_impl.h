/* The aggregator's state, shared by aggregator.c (windows, groups, reading an event),
 * aggregator_batch.c (adding a batch of read events), aggregator_emit.c (a closed
 * window's rows) and aggregator_state.c (the open windows' image). aggregator.c calls the
 * others, never the other way; aggregator_state.c calls floe_agg_settle. Internal to
 * agent/agg/. */
#ifndef FLOE_AGG_AGGREGATOR_IMPL_H
#define FLOE_AGG_AGGREGATOR_IMPL_H

#include "agent/agg/aggregator.h"
#include "agent/agg/ddsketch.h"
#include "agent/agg/hll.h"
#include "agent/agg/pool.h"
#include "agent/agg/spacesaving.h"
#include "agent/config/config.h"
#include "agent/schema/aggtable.h"
#include "agent/schema/convert.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* n rounded up to a multiple of 8: sketches and group records are laid out 8-aligned. */
#define FLOE_AGG_ROUND8(n) (((n) + 7u) & ~(uint64_t)7u)

struct floe_regex;

/* A group's header, at the start of its stride: the hash of its key and the key's
 * encoded bytes after it (per group_by field: 0 for null; 1, a 4-byte length and the
 * bytes for a string; 2 and 8 bytes for an integer). */
struct agg_group {
	uint64_t hash;
	uint32_t keylen;
	uint32_t used; /* 1 once the group took its first event in this window */
};

/* sum, min, max, avg: how many values and their sum, minimum or maximum. */
struct agg_num {
	uint64_t n;
	double v;
};

/* What a field's value is (struct agg_fval). */
enum agg_fkind {
	AGG_F_TEXT, /* s, len */
	AGG_F_INT,  /* i: an integer, a timestamp's µs */
	AGG_F_DBL   /* d */
};

/* A field's value in the record being added: its text, or a typed value whose text (s
 * NULL until then) is made only when a sketch, a string key or a filter asks for it
 * (fval_text). */
struct agg_fval {
	const char *s;
	size_t len;
	enum agg_fkind kind;
	union {
		int64_t i;
		double d;
	};
	char num[32]; /* the typed value as text */
};

/* A field reference as the aggregator reads it: the reference, the attribute slot it
 * was found in last (records of one input carry their attributes in one order), and
 * whether the configured typed columns (floe_agg_new's cols) hold it: such a field is
 * read from the record's typed values first, its attribute text being only the fallback
 * (a value that did not convert, a record read before the columns were learnt). col is
 * the record plan's column that takes it (-1: none), resolved once per plan
 * (floe_agg_resolve), so that reading it is an indexed load. */
struct agg_field {
	struct floe_field_ref ref;
	size_t attr;
	size_t type_at; /* col's: where its type is in a plan (offsetof col[col].type) */
	int32_t col;
	bool typed;
	enum floe_col_type type; /* typed: the column's configured type */
};

/* One event's value in a value column (struct agg_vcol), read (values_read) before it is
 * added: ok 1 with a value (d for numbers, hash for distinct), 0 without, -1 not a number
 * (counted when added, by each metric of the column). key is the DDSketch bucket of d,
 * computed when the batch is added (by the column's one quantiles metric). */
struct agg_mval {
	union {
		double d;      /* numbers */
		uint64_t hash; /* distinct */
	};
	int32_t key;
	int8_t ok;
};

/* Events read and added as one batch (aggregator_batch.c): rows are read one by one
 * (their window, key and values taken from the record), and added once the batch is
 * full (or its keys' room): their groups found in one loop, then group by group, each
 * metric over the group's values in one loop while the group's sketches sit in cache. */
/* A quantiles metric's table of the bucket keys of small whole numbers (agg_metric's
 * int_keys): 16 KiB, counted in the plan. */
#define FLOE_AGG_INT_KEYS 4096u

#ifndef FLOE_AGG_BATCH
#define FLOE_AGG_BATCH 4096u
#endif

/* The batch: pend_cap rows. Metric i's value of row j is vals[i * pend_cap + j]; the
 * rest is the partition by group that floe_agg_settle makes (local group ids in order
 * of first appearance, their rows in event order). */
struct agg_batch {
	struct agg_window **win; /* per row: its window */
	uint32_t *koff, *klen;	 /* per row: its key in keys (klen UINT32_MAX: overflow) */
	uint64_t *khash;	 /* per row: the key's hash (floe_agg_settle) */
	uint8_t *keys;		 /* the rows' keys, one after the other */
	uint32_t keys_cap, keys_used;
	uint8_t **grp;	     /* per row: its group (floe_agg_settle) */
	struct agg_mval *vals; /* per metric, per row */
	uint32_t *gid;	     /* per row: its group's local id */
	uint32_t *order;     /* rows by group, in event order within a group */
	uint32_t *start;     /* per local id + 1: where its rows start in order */
	uint8_t **ids;	     /* per local id: the group */
	uint32_t *slot_of;   /* per local id: its slot in the map */
	uint8_t **map;	     /* map_cap slots of a group pointer (NULL: free) */
	uint32_t *map_id;    /* their local ids */
	uint32_t map_cap;    /* a power of two, at least twice pend_cap */
};

/* What a value column holds for a row. */
enum agg_vkind {
	AGG_V_PRESENT, /* whether the field has a value: count of a field */
	AGG_V_TEXT,    /* the same, the value's text made for the row's add: top_k */
	AGG_V_NUMBER,  /* the value as a number: sum, min, max, avg, quantiles */
	AGG_V_HASH     /* the hash of the value's text: distinct */
};

/* How the fast read (aggregator.c's key_fast, values_fast) takes a field from a
 * record's typed values: a group key or a value column whose field a configured typed
 * column takes, of a type read without its text (an integer, a string; a number as a
 * double). */
enum agg_fop {
	AGG_FOP_INT,	  /* key: a long column's integer as an int key (its range checked) */
	AGG_FOP_LONG,	  /* key: an integer as a long key, or an int column's as an int key */
	AGG_FOP_STR,	  /* key: a string's bytes */
	AGG_FOP_PRESENT,  /* value: present */
	AGG_FOP_NUM_INT,  /* value: an integer as a number */
	AGG_FOP_NUM_DBL,  /* value: a float or double as a number */
	AGG_FOP_HASH_INT, /* value: the hash of an integer's decimal text */
	AGG_FOP_HASH_STR  /* value: the hash of a string */
};

/* A field of the fast read: the plan's column and its type, resolved once per plan (its
 * from_sig covers the columns' types). */
struct agg_fast {
	size_t at; /* the column's value in a record's typed values: its byte offset */
	int32_t col;
	enum floe_col_type type;
	enum agg_fop op;
};

/* One value column of the batch: what the metrics of one field that take the same kind
 * of value read from each event, read once for all of them (sum and quantiles of one
 * field share their numbers). Two quantiles metrics of a field do not share a column:
 * each keeps its own DDSketch buckets in it (agg_mval.key). count without a field reads
 * nothing, and has no column. */
struct agg_vcol {
	struct agg_metric *src; /* the first metric of the field: its f is read into its cur */
	struct agg_mval *vals;	/* per row */
	enum agg_vkind kind;
	bool reads;  /* the field's first column: it reads the field from the record */
	bool keyed;  /* a quantiles metric keeps its buckets in it */
	struct agg_fast fast; /* its field in the fast read */
};

/* One metric: what it reads, where its state sits in a group, and its columns. */
struct agg_metric {
	const struct floe_config_metric *cfg;
	struct agg_field f; /* unused for count without a field */
	bool has_field;
	/* The metric whose value this one takes: itself, or an earlier one reading the same
	 * field (sum and quantiles of one value), so that the value is read and parsed once
	 * per event, not once per metric. Only src's cur* members are used. */
	struct agg_metric *src;
	struct agg_fval cur; /* the record being added: the field's value, */
	bool cur_has;	     /* whether it has one, */
	int8_t cur_num;	     /* 0 not parsed yet, 1 a number (cur_d), -1 not a number */
	double cur_d;
	struct agg_mval *vals; /* its value column's rows (NULL: count without a field) */
	size_t off; /* of its state in a group */
	struct floe_dds_config dds;
	/* quantiles: the bucket keys of the whole numbers below FLOE_AGG_INT_KEYS
	 * (floe_dds_int_keys), looked up where a value is one, in place of its logarithm. */
	int32_t *int_keys;
	uint8_t *sketch_buf; /* distinct, quantiles: a serialised sketch */
	size_t sketch_cap;
	struct floe_ss_item *items; /* top_k: k of each */
	const char **keys;
	size_t *key_lens;
	int64_t *ivals;
};

/* One window slot of the ring: a window's groups while it is open. */
struct agg_window {
	int64_t start; /* µs */
	bool open;
	uint32_t ngroups; /* taken, the overflow group excluded */
	uint64_t late;
	uint8_t *groups; /* max_groups + 1 strides; the last is the overflow group */
	uint32_t *index; /* cap slots: group + 1, or 0 */
	struct floe_agg_pool pool; /* the memory its groups' sketches grow into */
};

struct floe_aggregator {
	struct floe_alloc *a;
	const struct floe_config_agg *cfg;
	struct floe_agg_plan plan;
	struct floe_aggtable *table;
	struct floe_regex *re;		   /* where.matches */
	struct agg_field where;		   /* where.field */
	struct agg_field keys[8];	   /* group_by */
	enum floe_aggcol_type key_type[8]; /* their columns' types */
	struct agg_metric *metrics;	 /* cfg->nmetrics */
	struct agg_vcol *vcols;		 /* nvcols (at most cfg->nmetrics) */
	uint32_t nvcols;
	size_t stride, key_cap, cap;	 /* group bytes, key bytes, index slots (2^k) */
	int64_t window_us, slide_us, lateness_us, idle_us, future_us;
	struct agg_window *win; /* plan.windows */
	uint32_t nwin;		/* windows an event goes in: window_us / slide_us */
	uint8_t *slab;
	/* The slide step of the latest event time seen: [step_lo, step_hi), whose newest
	 * window starts at step_lo and sits in slot step_slot, so that the next events of
	 * that step find their windows without a division. */
	int64_t step_lo, step_hi;
	uint32_t step_slot;
	/* At or below the end of every open window (INT64_MIN: not known): a watermark below
	 * it closes nothing, which an event then sees without looking at the windows. */
	int64_t next_close;
	bool seen;		   /* a record was taken */
	int64_t max_ts;		   /* newest event time taken */
	int64_t closed_until;	   /* windows ending at or before this are closed */
	int64_t last_received;	   /* processing time of the newest record */
	/* The newest record with a time of its own (ts not its received_at): its event time
	 * and when it was read (timed_at INT64_MIN: none). A record without one is
	 * aggregated from there (event_time, aggregator.c). */
	int64_t timed_ts, timed_at;
	/* The caller's clock at its last floe_agg_clock or floe_agg_tick (INT64_MIN: none
	 * yet); a reading further back than clock_step_us is the wall clock stepping. */
	int64_t now;
	int64_t clock_step_us;
	uint64_t clock_steps; /* not in the image's stats: its layout stays the build's */
	uint64_t pending_late;	   /* late events with no open window to be counted in */
	uint32_t load_lost;	   /* floe_agg_load_lost */
	struct floe_pq_value *row; /* the row being emitted */
	size_t ncols;
	struct floe_agg_stats stats;
	struct floe_agg_growth grow; /* what the windows' pools grow from */
	uint8_t *img; /* the headers of the open windows' image (aggregator_state.c) */
	/* The from_sig of the record plan the fields' col were resolved against (0: none
	 * yet; a plan whose from_sig is 0 is resolved at every record). */
	uint64_t plan_sig;
	/* Whether every group key and value column of that plan is read by the fast read
	 * (fkey, the columns' fast), and the typed values a record needs for it. */
	bool fast;
	size_t fast_cols;
	struct agg_fast fkey[8];
	/* Events read and not yet added (floe_agg_settle). pend_cap is FLOE_AGG_BATCH, or
	 * nwin when a top_k metric reads the record's text as it is added; there is room
	 * for one event's rows and key whenever floe_agg_add is called. */
	struct agg_batch b;
	uint32_t npend, pend_cap;
	size_t img_cap;
};

static inline struct agg_group *agg_group_at(const struct floe_aggregator *g,
					     const struct agg_window *w, size_t i)
{
	return (struct agg_group *)(void *)(w->groups + i * g->stride);
}

static inline int64_t agg_floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

/* The ring slot of the window starting at start. */
static inline struct agg_window *agg_slot_of(const struct floe_aggregator *g, int64_t start)
{
	int64_t k = agg_floor_div(start, g->slide_us) % (int64_t)g->plan.windows;
	return &g->win[k < 0 ? k + (int64_t)g->plan.windows : k];
}

/* aggregator_batch.c */
/* The batch's bytes for nmetrics metrics, rows rows and keys of up to key_cap bytes (for
 * the plan). */
uint64_t floe_agg_batch_bytes(size_t nmetrics, uint32_t rows, size_t key_cap);
/* Allocates g's batch of g->pend_cap rows (start-up only), and frees it. */
int floe_agg_batch_init(struct floe_aggregator *g);
void floe_agg_batch_fini(struct floe_aggregator *g);
/* Adds the events read and not yet added to their groups: when the batch is full,
 * before a window is emitted, and before the image is saved. */
void floe_agg_settle(struct floe_aggregator *g);

/* aggregator_state.c */
/* Reserves the image's header buffer (start-up only). */
int floe_agg_state_init(struct floe_aggregator *g);

/* aggregator_emit.c */
/* Sets up the row buffers and the per-metric emission buffers (start-up only). */
int floe_agg_emit_init(struct floe_aggregator *g);
/* Emits the rows of window w (every taken group, then the overflow group if it took
 * events), partial as given. Returns 0 or emit's error. */
int floe_agg_emit_window(struct floe_aggregator *g, const struct agg_window *w, bool partial,
			 floe_agg_emit_fn emit, void *arg);

#endif
