/* File tailing: discovers files by glob, follows each by identity (device, inode and a
 * fingerprint of its first bytes), reads complete lines with their exact byte offsets and
 * keeps, per file, the position before which every byte was delivered. Positions are
 * saved as a versioned blob (see floe_tail_positions) and restored after a restart. No
 * threads, no clock: the caller decides when to scan and when to read. */
#ifndef FLOE_INPUT_TAIL_H
#define FLOE_INPUT_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;

struct floe_tail_options {
	const char *const *paths; /* glob patterns (glob(3) in platform) */
	size_t npaths;
	const char *const *exclude; /* fnmatch patterns on full path and basename */
	size_t nexclude;
	bool start_at_end;     /* for files discovered at the first scan without a saved position */
	size_t max_line_bytes; /* a longer line is split at this size (each piece emitted as its own
				  line with its own offset) and counted; 0 = 64 KiB */
	size_t read_chunk;     /* bytes per read() (0 = 64 KiB) */
};

struct floe_tail_line {
	const char *path; /* the file's path (valid during the callback) */
	uint64_t offset;  /* offset of the line's first byte in the file */
	const char *data; /* without the LF and without a trailing CR; valid during
			     the callback only */
	size_t len;
};

/* fn returns 0 = line consumed, continue; 1 = line consumed, stop reading now; <0 = error,
 * line NOT consumed, stop (the error is returned by the reading call, and the same line is
 * delivered again by the next one). */
typedef int (*floe_tail_line_fn)(void *ctx, const struct floe_tail_line *line);

/* Files opened at once at most; further files wait for a later scan. */
#define FLOE_TAIL_MAX_OPEN 1024
/* Positions of files no longer present kept at most (oldest dropped first): each
 * rotation leaves one behind. */
#define FLOE_TAIL_MAX_STALE 256
/* Bytes of a file's beginning hashed into its fingerprint. */
#define FLOE_TAIL_FINGERPRINT 1024

struct floe_tail;

/* Creates a tail over the options (copied; o may be freed afterwards). Memory comes from
 * a (borrowed, may be NULL): per open file a read buffer of at most read_chunk +
 * max_line_bytes + 2 bytes, held only while the file has unconsumed bytes. Returns NULL
 * and *err (FLOE_ENOMEM, FLOE_EINVAL) on failure. Nothing is opened before floe_tail_scan. */
struct floe_tail *floe_tail_new(struct floe_alloc *a, const struct floe_tail_options *o, int *err);
/* Closes every file and frees t (NULL is fine). */
void floe_tail_free(struct floe_tail *t);

/* Restores positions saved by floe_tail_positions (before the first scan; FLOE_EINVAL
 * after). blob is borrowed. Corrupt blob → FLOE_ECORRUPT, and t is left as it was. */
int floe_tail_restore(struct floe_tail *t, const uint8_t *blob, size_t len);

/* Expands the globs; opens files not yet known. A file with a saved position resumes there
 * if its identity matches ((dev, inode) and a fingerprint = hash of its first up-to-1-KiB
 * bytes, recorded with its length), whatever its path now is; otherwise (or if the file is
 * now shorter than the saved offset) it is treated as a new file read from 0, and counted
 * as a reset. New files at the first scan without saved position start at end if
 * start_at_end, else 0; files appearing at later scans start at 0.
 * Known files: one whose beginning no longer matches its fingerprint (copytruncate) is
 * reset to 0 and counted; one whose path now names another file (rename rotation) or that
 * vanished from the globs keeps being read through its open descriptor until it has been
 * found at end of file after a later scan, then its held partial line is emitted and it is
 * closed (the new file at the path is read from 0). */
int floe_tail_scan(struct floe_tail *t);

/* Reads complete lines from all open files, round robin, calling fn for each, until
 * max_bytes have been consumed in this call overall (checked before each line, so the last
 * line may overshoot), every file is at its end, or fn stops. The last incomplete line of
 * a file is held back (not emitted, not counted in the position) until its LF arrives.
 * A file found shorter than its read position (truncated) is reset to 0 and counted.
 * *progress = bytes consumed (line bytes plus their CR/LF). Returns 0, fn's error, or a
 * read error. */
int floe_tail_read(struct floe_tail *t, size_t max_bytes, floe_tail_line_fn fn, void *ctx,
		   size_t *progress);

/* Emits every byte each file holds that was read but not delivered: complete lines, then
 * the held partial line as a line (used at the end of `floe run --once`). Reads nothing. */
int floe_tail_flush_partial(struct floe_tail *t, floe_tail_line_fn fn, void *ctx);

/* Appends every file's identity and position (the offset just after the last line fn
 * consumed) to out: a versioned binary blob. Entries for files no longer present are kept
 * (up to FLOE_TAIL_MAX_STALE; a drained file that was deleted leaves none). On failure
 * (FLOE_ELIMIT, FLOE_ENOMEM) out is as it was. Layout, little-endian: "FLTP" | u32 version (1) |
 * u32 count | count × { u32 path length | path | u64 dev | u64 inode | u64 offset | u32 fingerprint
 * length | u64 fingerprint }. */
int floe_tail_positions(const struct floe_tail *t, struct floe_buf *out);

/* Counters: lines, bytes, split long lines, files reset (truncation/new generation). */
struct floe_tail_stats {
	uint64_t lines, bytes, long_lines_split, resets, files_open;
};
void floe_tail_get_stats(const struct floe_tail *t, struct floe_tail_stats *out);

#endif
