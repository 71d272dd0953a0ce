/* The inputs' table of operations, for the kinds' files (input_tail.c, input_syslog.c,
 * input_journal.c) and input.c, which dispatches to them. Internal to agent/input/. An
 * operation a kind does not have is NULL: input.c then does what an input without it
 * means (nothing to hold, no new sources, no thread). */
#ifndef FLOE_INPUT_IMPL_H
#define FLOE_INPUT_IMPL_H

#include "agent/input/input.h"
#include "platform/loop.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_config_input;
struct floe_syslog_rx;
struct floe_syslog_handover;
struct floe_watch;
struct floe_watch_event;
struct floe_fields;

struct floe_input_ops {
	const char *kind; /* "tail": the type as configured and in metrics.json */
	bool lines;	  /* hands over lines, not records */
	bool quiet_skippable;
	bool restores_unknown; /* a blob of no kind is restored (and judged) as its own */
	const struct floe_input_metric *metrics;
	size_t nmetrics;
	/* Whether blob is a position blob of this kind. */
	bool (*recognise)(const uint8_t *blob, size_t len);
	void (*free)(void *self);
	int (*read)(void *self, size_t budget, const struct floe_input_sink *sink, size_t *got);
	int (*flush)(void *self, const struct floe_input_sink *sink);
	int (*scan)(void *self);
	bool (*unmatched)(const void *self);
	void (*notify)(void *self, const struct floe_watch_event *ev);
	int (*positions)(void *self, struct floe_buf *out);
	int (*restore)(void *self, const uint8_t *blob, size_t len);
	size_t (*unsaved)(const void *self);
	int (*positions_with_new)(void *self, const uint8_t *base, size_t len, struct floe_buf *out);
	void (*confirm)(void *self);
	void (*hold_clear)(void *self);
	void (*hold_at)(void *self, uint64_t file_id, uint64_t offset);
	void (*hold)(void *self, bool hold);
	bool (*held)(const void *self);
	bool (*pending)(const void *self);
	uint64_t (*received)(const void *self);
	void (*wake_info)(const void *self, struct floe_input_wake *out);
	bool (*arm_wake)(void *self);
	void (*reload)(void *self);
	void (*close)(void *self);
	uint64_t (*abandon)(void *self);
	void (*values)(const void *self, uint64_t *values);
	bool (*progress)(const void *self, uint64_t *done, uint64_t *lag, uint64_t *lines);
	bool (*healthy)(const void *self, const char *name, char *why, size_t cap);
	bool (*explain_idle)(const void *self, char *why, size_t cap);
	int (*reread)(void *self, const struct floe_input_span *span,
		      const struct floe_input_sink *sink);
};

/* What input.c keeps for the kinds: the configuration, the clock and loop, and the
 * resources that inputs of one kind share (NULL until a kind makes them). */
struct floe_input_shared {
	struct floe_alloc *a;
	struct floe_input_shared_options o;
	struct floe_watch *watch;      /* the tails' (NULL: polled) */
	bool watch_added, watch_ready; /* on the loop; its descriptor is ready */
	struct floe_io watch_io;       /* the watch's registration on the loop */
	struct floe_syslog_rx *rx;     /* the syslog inputs' receiver thread */
	struct floe_fields *sysfields; /* a syslog message's structured data */
};

/* input.h's keep: per kind, what it keeps open across a reload. */
struct floe_input_keep {
	/* The syslog listeners kept alone, and which configuration is expected next. */
	struct floe_syslog_handover *syslog;
	/* Whole syslog inputs the next configuration lists unchanged (input_syslog.c), each
	 * with its key (floe_syslog_handover_input_key), and the receiver they are on. */
	struct floe_syslog_rx *rx;
	struct kept_syslog {
		struct floe_syslog_in *in;
		char *key;
	} *ins;
	size_t nins;
};
/* input_syslog.c's side of the keep. At the shared resources' free: the receiver goes
 * to the keep when whole inputs on it were kept (true), else it is the caller's to free. */
bool floe_input_syslog_keep_rx(struct floe_input_shared *sh);
/* Frees the whole inputs kept that cfg does not list unchanged (NULL: all of them, and
 * then the receiver). The receiver must be stopped. */
void floe_input_syslog_keep_drop(struct floe_input_keep *k, const struct floe_config *cfg);

/* The counters inputs of several kinds have, one text each: a Prometheus family is
 * named and helped once whichever inputs have it. */
#define FLOE_INPUT_M_LINES {"lines", "floe_input_lines_total", "Lines read (messages, entries).", 0}
#define FLOE_INPUT_M_BYTES {"bytes", "floe_input_bytes_total", "Bytes read.", 0}
#define FLOE_INPUT_M_PARSE_FAILURES                                                            \
	{"parse_failures", "floe_input_parse_failures_total",                                  \
	 "Lines the input's parser rejected (kept as plain lines).", FLOE_INPUT_M_PARSE}
#define FLOE_INPUT_M_TS_FAILURES                                                               \
	{"ts_failures", "floe_input_ts_failures_total",                                        \
	 "Lines whose timestamp was absent or did not parse (receive time used).",            \
	 FLOE_INPUT_M_TS}
#define FLOE_INPUT_M_FILES_UNREADABLE                                                          \
	{"files_unreadable", "floe_input_files_unreadable",                                    \
	 "Matched files (a journal's: its files) that cannot be opened.", FLOE_INPUT_M_GAUGE}
#define FLOE_INPUT_NMETRICS(t) (sizeof(t) / sizeof((t)[0]))

/* A kind's constructor: input i of sh's configuration into *self, with its operations. */
typedef int (*floe_input_make_fn)(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
				  void **self, const struct floe_input_ops **ops,
				  struct floe_err *err);
int floe_input_tail_make(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
			 void **self, const struct floe_input_ops **ops, struct floe_err *err);
int floe_input_syslog_make(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
			   void **self, const struct floe_input_ops **ops, struct floe_err *err);
int floe_input_journal_make(struct floe_alloc *a, struct floe_input_shared *sh, size_t i,
			    void **self, const struct floe_input_ops **ops, struct floe_err *err);
/* A replay of a tail's span (input_tail_replay.c): a tail made from o (borrowed) reads
 * again what the seal took between span's positions into sink. */
struct floe_tail_options;
int floe_input_tail_reread(struct floe_alloc *a, const struct floe_tail_options *o,
			   const struct floe_input_span *span, const struct floe_input_sink *sink);
/* Each kind's operations. */
extern const struct floe_input_ops floe_input_tail_ops, floe_input_syslog_ops,
    floe_input_journal_ops;
/* floe_input_need of each kind. */
void floe_input_tail_need(const struct floe_config_input *in, uint64_t max_line,
			  struct floe_input_need *out);
void floe_input_syslog_need(const struct floe_config_input *in, uint64_t max_line,
			    struct floe_input_need *out);
void floe_input_journal_need(const struct floe_config_input *in, uint64_t max_line,
			     struct floe_input_need *out);
/* floe_input_status_text of each kind. */
bool floe_input_tail_status(const struct floe_config_input *c, const char *name,
			    const struct floe_input_status *st, struct floe_buf *out);
bool floe_input_syslog_status(const struct floe_config_input *c, const char *name,
			      const struct floe_input_status *st, struct floe_buf *out);
bool floe_input_journal_status(const struct floe_config_input *c, const char *name,
			       const struct floe_input_status *st, struct floe_buf *out);
/* Whether blob is a position blob of the kind (one of another kind: a changed type). */
bool floe_input_tail_recognise(const uint8_t *blob, size_t len);
bool floe_input_syslog_recognise(const uint8_t *blob, size_t len);
bool floe_input_journal_recognise(const uint8_t *blob, size_t len);

#endif
