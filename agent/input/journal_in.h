/* The journal input (inputs[].type: journal): the systemd journal read from a saved
 * cursor through platform/journal.h, each entry's fields mapped onto the record's columns
 * and an include list of others into attrs, filtered by matches. The cursor is this
 * input's position: it names the last entry handed over and consumed, and is saved with
 * the seal that made that entry durable, exactly like a file offset, so a restart goes on
 * after it and nothing is read twice or skipped. */
#ifndef FLOE_JOURNAL_IN_H
#define FLOE_JOURNAL_IN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/schema/record.h"

struct floe_alloc;
struct floe_buf;
struct floe_config_input;
struct floe_err;
struct floe_journal_in;
struct floe_loop;

/* The longest cursor kept (journald's are about 140 bytes). */
#define FLOE_JOURNAL_CURSOR_MAX 512
/* Fields of the include list kept per entry at most. */
#define FLOE_JOURNAL_ATTRS_MAX 64

/* One entry as the input hands it over; slices are valid during the call only. */
struct floe_journal_in_msg {
	int64_t ts_us;	    /* _SOURCE_REALTIME_TIMESTAMP, else the entry's time */
	int64_t received_us; /* the entry's time in the journal */
	struct floe_str host, app, proc_id, msg_id, message; /* p == NULL: absent */
	struct floe_str source; /* "journal:<_SYSTEMD_UNIT>" or "journal" */
	bool has_severity, has_facility;
	int32_t severity, facility;
	size_t nattrs;
	const char *const *attr_keys;
	const size_t *attr_key_lens;
	const char *const *attr_vals;
	const size_t *attr_val_lens;
};

/* fn returns 0 (consumed), 1 (consumed, stop now) or < 0 (not consumed: the same entry
 * comes first next time, and the error is floe_journal_in_read's). */
typedef int (*floe_journal_in_fn)(void *ctx, const struct floe_journal_in_msg *m);

struct floe_journal_in_stats {
	uint64_t entries, bytes; /* handed over (bytes: of MESSAGE) */
	uint64_t resets;	 /* the saved cursor was not valid here: read by start_at */
	uint64_t truncated;	 /* fields cut: an entry's fields over 160 KiB together */
	uint64_t own_skipped;	 /* floe's own entries left out (include_own: false) */
	uint64_t files_unreadable; /* journal files sd-journal cannot open (at start-up) */
	uint64_t read_errors;	 /* reads that failed (a damaged file), once per failure
				    however often it is retried: logged once too */
};

/* Opens the journal of input cfg (borrowed; it outlives the input), its matches added,
 * and watches its descriptor on loop (borrowed; may be NULL: then it is only polled).
 * Returns 0 with *out, or an error with err saying why (no libsystemd in this build, a
 * directory that is not there, a malformed match). */
int floe_journal_in_new(struct floe_alloc *a, const struct floe_config_input *cfg,
			const char *name, struct floe_loop *loop, struct floe_journal_in **out,
			struct floe_err *err);
void floe_journal_in_free(struct floe_journal_in *in);

/* Hands entries after the position to fn until there are none, fn stops or about budget
 * bytes went. *got gets the bytes. Returns 0 or fn's error. */
int floe_journal_in_read(struct floe_journal_in *in, size_t budget, floe_journal_in_fn fn,
			 void *ctx, size_t *got);

/* The position (the cursor of the last entry consumed; empty before any) as a blob
 * appended to out, restoring one (before the first read), and reading one. */
int floe_journal_in_positions(const struct floe_journal_in *in, struct floe_buf *out);
int floe_journal_in_restore(struct floe_journal_in *in, const uint8_t *blob, size_t len);
/* 0 with *cursor (into the blob, not NUL-terminated, *len may be 0), or FLOE_ECORRUPT. */
int floe_journal_in_blob_cursor(const uint8_t *blob, size_t len, const char **cursor,
				size_t *clen);

void floe_journal_in_stats(const struct floe_journal_in *in, struct floe_journal_in_stats *st);
/* Whether the input waits for its configured directory to exist (it opens it when it
 * does, trying every few seconds as it is read). */
bool floe_journal_in_waiting(const struct floe_journal_in *in);

#endif
