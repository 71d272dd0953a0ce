/* File tailing: discovers files by glob, follows each by identity (device, inode, a
 * fingerprint of its first bytes and a hash of the bytes before its position), reads
 * complete lines with their exact byte offsets and keeps, per file, the position before
 * which every byte was delivered, across rotations (rename, copytruncate, delete) and
 * restarts. No threads: the caller decides when to scan and when to read; time comes from
 * an injectable clock; a platform/watch object may tell it when to look. */
#ifndef FLOE_INPUT_TAIL_H
#define FLOE_INPUT_TAIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_buf;
struct floe_watch;
struct floe_watch_event;

struct floe_tail_options {
	const char *const *paths; /* glob patterns (glob(3) in platform) */
	size_t npaths;
	const char *const *exclude; /* fnmatch patterns on full path and basename */
	size_t nexclude;
	bool start_at_end;     /* for files discovered at the first scan without a saved position */
	size_t max_line_bytes; /* a longer line is split at this size (each piece emitted as its own
				  line with its own offset) and counted; 0 = 64 KiB */
	size_t read_chunk;     /* bytes per read() (0 = 64 KiB) */
	/* Added with rotation handling; 0 means the default for each. */
	int64_t rotate_wait_ms;	 /* a file replaced at its path, deleted or gone from the globs is
				    still read for this long, then read up to its size at that
				    moment, its partial line delivered, and closed (5000) */
	size_t max_open_files;	 /* descriptors held at most: idle files are closed and reopened
				    by identity when they grow (256) */
	int64_t forget_after_ms; /* the position of a file that disappeared is kept this long
				    (24 h), in case it comes back (and across restarts) */
	/* Wall-clock milliseconds (NULL: the system clock): compared with files' modification
	 * times, and the time a file went as the positions blob keeps it across restarts. */
	int64_t (*clock_ms)(void *ctx);
	/* Monotonic milliseconds (NULL: the system's monotonic clock), for every interval
	 * measured while the tail runs (rotate_wait, forget_after, idle order): the wall clock
	 * can step by hours or years (no RTC, NTP arriving, a date set by hand), and an
	 * interval on it would then hold a rotated file open for as long as it stepped back,
	 * or close it at once when it stepped forward. Both clocks take clock_ctx. */
	int64_t (*mono_ms)(void *ctx);
	void *clock_ctx;
	/* Which matched paths may lead elsewhere through a symbolic link (the file itself or
	 * a directory matched by a wildcard): see enum floe_tail_symlinks. */
	enum floe_tail_symlinks {
		/* The file's real path must lie under the real path of its pattern's root (the
		 * pattern's directories before the first wildcard): links within the watched
		 * tree are followed, a link out of it is not. The default. */
		FLOE_TAIL_SYMLINKS_WITHIN_ROOT = 0,
		FLOE_TAIL_SYMLINKS_FOLLOW, /* any link is followed */
		FLOE_TAIL_SYMLINKS_NONE,   /* a path that goes through a link below the root is skipped */
	} symlinks;
	/* Directories never read from, whatever the globs say (the agent's own state and
	 * warehouse): a file whose real path lies under one of them is skipped. */
	const char *const *skip_dirs;
	size_t nskip_dirs;
	bool truncate_long;  /* a line longer than max_line_bytes keeps its first piece only
				(the rest is consumed and counted) instead of being split */
	const char *name;    /* names this input in log messages ("input 1"); NULL: "tail" */
	/* A file first seen (no saved position) is not read until floe_tail_confirm says that
	 * the position chosen for it is durable (floe_tail_positions_with_new), so that a
	 * restart never chooses again (start_at: end would skip what came in between). */
	bool confirm_new;
	/* The last line of a file, not ended by an LF yet: with partial_idle it is delivered,
	 * by floe_tail_read and floe_tail_flush_partial alike, once the file holds nothing
	 * after it and was last modified partial_line_ms ago or earlier (a writer may still be
	 * writing it: its stdio buffer flushed half a line). Without partial_idle only
	 * floe_tail_flush_partial delivers it, at once. */
	bool partial_idle;
	int64_t partial_line_ms;
};

struct floe_tail_line {
	const char *path; /* the file's path (valid during the callback) */
	uint64_t offset;  /* offset of the line's first byte in the file */
	const char *data; /* without the LF and without a trailing CR; valid during
			     the callback only */
	size_t len;
	uint64_t end;	  /* offset just past the line's CR/LF (offset + len for a split
			     piece or a partial line flushed without its LF) */
	uint64_t file_id; /* the followed file (never 0; unique within this tail object, not
			     across restarts): the key for floe_tail_hold */
};

/* fn returns 0 = line consumed, continue; 1 = line consumed, stop reading now; <0 = error,
 * line NOT consumed, stop (the error is returned by the reading call, and the same line is
 * delivered again by the next one). */
typedef int (*floe_tail_line_fn)(void *ctx, const struct floe_tail_line *line);

/* Upper bound of max_open_files. */
#define FLOE_TAIL_MAX_OPEN 65536
/* Positions of files no longer present kept at most (oldest dropped first), whatever
 * forget_after says: each rotation leaves one behind. */
#define FLOE_TAIL_MAX_STALE 1024
/* Bytes of a file's beginning hashed into its fingerprint. */
#define FLOE_TAIL_FINGERPRINT 1024
/* Bytes before the position hashed to recognize a file on resume. */
#define FLOE_TAIL_PREHASH 256

struct floe_tail;

/* Creates a tail over the options (copied; o may be freed afterwards): 0 and *out (owned),
 * or FLOE_ENOMEM / FLOE_EINVAL (*out untouched). Memory comes from a (borrowed, may be
 * NULL): per open file a read buffer of at most read_chunk + max_line_bytes + 2 bytes,
 * held only while the file has unconsumed bytes. Nothing is opened before floe_tail_scan. */
int floe_tail_new(struct floe_alloc *a, const struct floe_tail_options *o, struct floe_tail **out);
/* Closes every file and frees t (NULL is fine). */
void floe_tail_free(struct floe_tail *t);

/* Restores positions saved by floe_tail_positions (before the first scan; FLOE_EINVAL
 * after). blob is borrowed. Corrupt blob → FLOE_ECORRUPT, and t is left as it was. */
int floe_tail_restore(struct floe_tail *t, const uint8_t *blob, size_t len);

/* Expands the globs and follows what it finds; also runs by itself inside floe_tail_read
 * when a watch event asked for it (see floe_tail_notify). A file is known by (dev, inode);
 * its saved position is trusted only if the file still starts with the fingerprinted bytes
 * (hash of its first up-to-1-KiB, with their length), is at least that long and holds the
 * same up-to-256 bytes just before it: otherwise it is a new generation read from 0
 * (counted in generations; a file only shorter than the position counts in truncations).
 * Saved positions follow the identity whatever the file's name is now; a saved file not
 * matched by the globs is also looked for, by identity, in its old directory (restart
 * during a rotation) and then drained. New files at the first scan without a saved
 * position start at end if start_at_end, else 0; files appearing later start at 0.
 * Known files: one whose beginning no longer matches (copytruncate) is reset to 0 and
 * counted; one whose path now names another file (rename rotation), that was deleted or
 * that left the globs keeps being read through its descriptor for rotate_wait, then is
 * read up to its size at that moment, its partial line delivered, and closed (its
 * position kept for forget_after unless it was deleted). A symlink is followed to its
 * target; re-pointed, the new target is a new file. At most max_open_files descriptors
 * are held: files at end of file are closed (parked) to make room for others and reopened,
 * and checked as on resume, when a scan or a watch event shows a change. Known race: lines
 * appended to a parked file just before it is rotated out of the globs are read only if
 * the file is found again by identity in its directory; data written to a copytruncate'd
 * file between the copy and the truncation is lost, and lines written after the
 * truncation but before floe notices are delivered from the first differing offset (see
 * tests/integration/test_rotation.sh). */
int floe_tail_scan(struct floe_tail *t);

/* Reads complete lines from all open files, round robin, calling fn for each, until
 * max_bytes have been consumed in this call overall (checked before each line, so the last
 * line may overshoot), every file is at its end, or fn stops. The last incomplete line of
 * a file is held back (not emitted, not counted in the position) until its LF arrives.
 * A file found shorter than its read position (truncated) is reset to 0 and counted.
 * Also, first: scans if a watch event asked for it, starts closing the files that drained
 * for rotate_wait, and opens the files waiting for a descriptor; when every open file is
 * at its end, files at end of file are closed to open waiting ones (within
 * max_open_files), which are read in the same call. Drained files are closed at the end.
 * *progress = bytes consumed (line bytes plus their CR/LF). Returns 0, fn's error, or a
 * read error. */
int floe_tail_read(struct floe_tail *t, size_t max_bytes, floe_tail_line_fn fn, void *ctx,
		   size_t *progress);

/* Emits every byte each file holds that was read but not delivered: complete lines, then
 * the held partial line as a line (used at the end of `floe run --once`); with
 * partial_idle, only the partial lines of files idle as that option says. Reads nothing.
 * Returns 0, fn's error, or 1 when fn asked to stop (call it again for the rest). */
int floe_tail_flush_partial(struct floe_tail *t, floe_tail_line_fn fn, void *ctx);

/* Appends every file's identity and position (the offset just after the last line fn
 * consumed) to out: a versioned binary blob. Entries for files no longer present are kept
 * for forget_after (up to FLOE_TAIL_MAX_STALE; a drained file that was deleted leaves
 * none). May read up to 256 bytes of a file (the pre-position hash). On failure
 * (FLOE_ELIMIT, FLOE_ENOMEM) out is as it was. Layout, little-endian: "FLTP" | u32 version
 * (3) | u32 count | count × { u32 path length | path | u64 dev | u64 inode | u64 offset |
 * u32 fingerprint length | u64 fingerprint | u32 flags (1 = the last line was delivered
 * without its LF) | u32 pre-hash length | u64 pre-hash (FNV-1a of the bytes just before
 * the offset) | u64 gone since (wall-clock ms; 0 = present) }. floe_tail_restore also
 * reads version 2 (the same without the last three fields). */
int floe_tail_positions(const struct floe_tail *t, struct floe_buf *out);

/* Files first seen whose position is not durable yet (confirm_new): not read until
 * floe_tail_confirm. */
size_t floe_tail_unsaved(const struct floe_tail *t);
/* base (borrowed), a blob of floe_tail_positions' format (len 0: none), with the entries of
 * the unsaved files added (replacing an entry of the same identity), appended to out: what
 * was durable plus the positions chosen since, without moving any other file's position.
 * FLOE_ECORRUPT for a bad base; on failure out is as it was. */
int floe_tail_positions_with_new(const struct floe_tail *t, const uint8_t *base, size_t len,
				 struct floe_buf *out);
/* The unsaved files' positions are durable now: they may be read. */
void floe_tail_confirm(struct floe_tail *t);

/* Holding positions back. A consumer that keeps lines of its own before they become
 * durable (multiline grouping, container partial lines) tells the tail where its oldest
 * kept line starts: floe_tail_positions then saves min(position, hold) for that file, with
 * the pre-position hash of the bytes before the hold and no "unterminated" flag (a hold is
 * a line start), so a restart reads those lines again. floe_tail_hold lowers the file's
 * hold to offset (the lowest of several calls wins) and returns 0, or -ENOENT when no
 * followed file has that id (it is gone: nothing to save for it). floe_tail_hold_clear
 * drops every hold; the intended use is clear, then hold each kept line's file, then
 * floe_tail_positions. */
int floe_tail_hold(struct floe_tail *t, uint64_t file_id, uint64_t offset);
void floe_tail_hold_clear(struct floe_tail *t);

/* Counters: lines, bytes, split long lines, files reset (truncation/new generation),
 * descriptors open; then truncations and new generations (both also in resets), NUL
 * bytes skipped (no line holds one: a run of them ends the line before it), files
 * currently closed but followed (parked), reopens of parked files, rotated files closed
 * after draining, and copies continued. */
struct floe_tail_stats {
	uint64_t lines, bytes, long_lines_split, resets, files_open;
	uint64_t truncations, generations, nul_bytes_skipped, files_parked, reopens,
	    rotated_closed;
	uint64_t copies_followed; /* copytruncate copies continued from the old position */
	uint64_t long_lines_truncated; /* lines cut to max_line_bytes (truncate_long) */
	uint64_t started_at_end;       /* files with bytes, first seen at start-up and read from
					  their end (start_at_end) */
	/* Files found by a scan that went away before a descriptor was free to open them
	 * (max_open_files, every one held by a file with bytes not read yet), and the bytes
	 * they held that were never read. */
	uint64_t files_lost, lost_bytes;
	/* Of rotated_closed, the files closed before their rotate_wait was over, read to
	 * their end, for a file waiting for a descriptor (max_open_files). */
	uint64_t rotated_closed_early;
	/* The state at the last scan (gauges), each also logged once when it changes: */
	uint64_t files_unreadable;  /* matched files that cannot be opened (permissions) */
	uint64_t patterns_unmatched; /* patterns matching no file (their directory may be missing) */
	uint64_t files_skipped;	     /* matched files refused: a symlink out of bounds, the
					agent's own state or warehouse, or its own stdout or
					stderr */
	/* Now, from the open files (one fstat each): bytes written to them and not yet
	 * delivered (how far behind the input is), and files still drained after a rotation
	 * or deletion. Parked files are at their end. */
	uint64_t lag_bytes, files_draining;
};
void floe_tail_get_stats(const struct floe_tail *t, struct floe_tail_stats *out);

/* Registers w (borrowed; it must outlive t or be detached with NULL) to be told about the
 * directories t reads: the literal directory of each pattern, and the directories of the
 * files found (and of their symlink targets), at each scan. */
void floe_tail_set_watch(struct floe_tail *t, struct floe_watch *w);
/* Hands t one event from floe_watch_next (borrowed): a change to a parked file makes it
 * reopened at the next read; a file created, renamed or removed where the globs match, or
 * a rescan event, makes the next floe_tail_read scan first. Cheap; no system call. Several
 * tails may be handed the same event. */
void floe_tail_notify(struct floe_tail *t, const struct floe_watch_event *ev);

#endif
