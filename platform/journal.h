/* The systemd journal, read through libsystemd's sd-journal: a reader over the local
 * journal (or one directory of journal files, for tests and containers), filtered by
 * matches, positioned by cursors, with a descriptor the event loop watches for new
 * entries. Optional at build time (FLOE_JOURNAL, on when libsystemd is found): without
 * it floe_journal_open fails with -ENOTSUP. Everything runs on one thread. */
#ifndef FLOE_PLATFORM_JOURNAL_H
#define FLOE_PLATFORM_JOURNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_journal;

/* True when this build reads journals. */
bool floe_journal_supported(void);

/* Opens the local journal (dir NULL: the system's and the current user's files, as
 * `journalctl` shows them) or the journal files in dir. Returns 0 with *out, or -errno
 * with a message in err[0..cap). */
int floe_journal_open(const char *dir, struct floe_journal **out, char *err, size_t cap);
void floe_journal_close(struct floe_journal *j);

/* Adds a "FIELD=value" match: matches of the same field are ORed, of different fields
 * ANDed (sd_journal_add_match). Returns 0 or -errno (-EINVAL for a malformed one). */
int floe_journal_add_match(struct floe_journal *j, const char *m, size_t len);

/* Positions before the first entry, after the last one, or just after the entry cursor
 * names (when that entry is gone, at the first entry after where it was). 0 or -errno. */
int floe_journal_seek_head(struct floe_journal *j);
int floe_journal_seek_tail(struct floe_journal *j);
int floe_journal_seek_after(struct floe_journal *j, const char *cursor);

/* Moves to the next entry: 1, 0 at the end, or -errno. */
int floe_journal_next(struct floe_journal *j);
/* The current entry's field name (without "=") or NULL: *p, *len point into the
 * library's memory, valid until the next call on j. 1 found, 0 absent, -errno. */
int floe_journal_field(struct floe_journal *j, const char *name, const void **p, size_t *len);
/* Enumerates the current entry's fields: restart first, then each call gives one
 * "NAME=value" as name and value slices (1), until 0. */
void floe_journal_fields_restart(struct floe_journal *j);
int floe_journal_fields_next(struct floe_journal *j, const char **name, size_t *nlen,
			     const void **val, size_t *vlen);
/* The current entry's wall-clock time (µs since the epoch) and cursor (into buf,
 * NUL-terminated; -ENOSPC when it does not fit). */
int floe_journal_realtime_us(struct floe_journal *j, int64_t *us);
/* The current entry's monotonic time (µs since its boot) and that boot's id (32 lower-case
 * hex digits and a NUL into boot). 0 or -errno. */
int floe_journal_monotonic_us(struct floe_journal *j, uint64_t *us, char boot[33]);
int floe_journal_cursor(struct floe_journal *j, char *buf, size_t cap);

/* The journal files in dir (NULL: the system's directories, /var/log/journal and
 * /run/log/journal, and their subdirectories) that sd-journal cannot open (a truncated
 * file, a damaged header): sd-journal leaves them out of a reader without a word. fn gets
 * each one's path and -errno. Returns how many, or -errno when dir cannot be listed. */
int floe_journal_bad_files(const char *dir, void (*fn)(void *ctx, const char *path, int err),
			   void *ctx);

/* This process as journald records its log: its PID, its systemd unit ("" outside one)
 * and its name; and its life, since a PID is reused: an entry is this process's only if
 * it has this boot's id and a monotonic time at or after the process started. boot is ""
 * when it cannot be read. */
struct floe_journal_self {
	long pid;
	char unit[256];
	char comm[64];
	char boot[33];	   /* this boot's id as the journal writes _BOOT_ID */
	uint64_t since_us; /* the process's start on the monotonic clock, µs */
};
void floe_journal_self(struct floe_journal_self *out);

/* The descriptor to watch (readable when the journal changed), or -errno; after it was
 * readable, floe_journal_process takes the change in. */
int floe_journal_fd(struct floe_journal *j);
void floe_journal_process(struct floe_journal *j);

#endif
