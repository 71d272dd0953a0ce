/* Private to agent/input/tail*.c: the tail object and its per-file entries. The files call
 * one another one way only: tail.c (the object, reading) uses tail_files.c (discovery,
 * rotation), which uses tail_paths.c (path rules) and tail_watch.c (the directories
 * watched); those and tail_positions.c (the positions blob) use tail_entry.c, which uses
 * none of them. */
#ifndef FLOE_INPUT_TAIL_IMPL_H
#define FLOE_INPUT_TAIL_IMPL_H

#include "tail.h"

struct floe_fs_stat;

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One followed file. Open (fd >= 0), parked (closed, present in the globs), pending
 * (found, never opened: no fingerprint yet) or saved (restored and not matched yet, or
 * gone: kept by identity until forget_after). */
struct tfile {
	char *path; /* owned; the name the file was last seen under */
	/* Owned: the canonical path when it differs from path (a symbolic link on the way,
	 * as /var/log/containers/x.log -> /var/log/pods/.../0.log), else NULL. The watch
	 * reports the target's directory, so events name this path; and a file rotated
	 * behind the link is looked for beside its target. Known once real_known. */
	char *real;
	bool real_known;
	int fd;	    /* -1 when closed */
	uint64_t dev, ino;
	uint64_t pos;	  /* every byte before pos was delivered */
	uint64_t size_seen; /* the size the last scan that found the file saw */
	uint64_t id;	  /* floe_tail_line.file_id; 0 until the first line is delivered */
	uint64_t hold;	  /* when held: the saved position is min(pos, hold) */
	bool held;
	uint64_t fp_hash; /* hash of the first fp_len bytes */
	uint32_t fp_len;
	uint64_t ph_hash; /* hash of the ph_len bytes before ph_pos, when ph_ok */
	uint64_t ph_pos;
	uint32_t ph_len;
	bool ph_ok;
	uint8_t *buf;	   /* NULL while nothing is held; else cap bytes */
	size_t cap;	   /* grows from one chunk to t->bufcap while a long line needs it */
	bool starved;	   /* no memory for the buffer in this read call: skipped, retried */
	size_t start, len; /* held bytes: buf[start .. start+len) = file [pos .. pos+len);
			      buf[0 .. start) are the file bytes just before pos */
	uint64_t stop_at;  /* closing: the size at which reading stops */
	uint64_t read_to;  /* the end of the furthest read of this generation */
	/* Monotonic ms (floe_tail_mono); gone_since only when gone. The positions blob keeps
	 * gone_since as a wall time, converted by age when saved and restored. */
	int64_t drain_since, gone_since, idle_since;
	bool gone; /* disappeared at gone_since (its position kept until forget_after) */
	/* partial_due, for a file modified in the future: its size and modification time,
	 * and since when (monotonic ms) they are so. */
	bool still_known;
	uint64_t still_size;
	int64_t still_mtime, still_since;
	bool has_fp;	   /* fingerprint (and position) known: check them when opening */
	bool present;	   /* matched by the globs at the last scan */
	bool want_open;	   /* closed and known to have changed (or never opened) */
	bool orphan;	   /* found outside the globs by identity: drain it once opened */
	bool copy;	   /* a copytruncate copy, continued from the truncated file's
			      position if its content matches (dropped if not) */
	bool seen;	   /* found by the scan in progress */
	bool draining;	   /* replaced at its path or gone from the globs: read it out */
	bool closing;	   /* draining for rotate_wait: read up to stop_at, then close */
	bool done;	   /* at end of file for the read call in progress */
	bool at_eof;	   /* the last read found end of file (an idle candidate) */
	bool in_long;	   /* the last piece delivered was a split of a long line */
	bool unterminated; /* the last line delivered was flushed without its LF */
	bool nul;	   /* the held bytes may contain NUL bytes */
	bool nul_said;	   /* its NUL bytes skipped were logged */
	bool denied;	   /* the last open failed for want of permission (logged once) */
	bool unsaved;	   /* first seen, its position not durable yet (confirm_new) */
};

struct tpattern;

struct floe_tail {
	struct floe_alloc *a;
	char **paths, **exclude;
	size_t npaths, nexclude;
	bool start_at_end;
	size_t max_line, chunk, bufcap, max_open;
	int64_t rotate_wait, forget_after;
	int64_t (*clock_ms)(void *ctx); /* wall */
	int64_t (*mono_ms)(void *ctx);	/* intervals */
	void *clock_ctx;
	struct floe_watch *watch;
	struct tfile **files;
	size_t nfiles, capfiles;
	size_t nopen;
	size_t nreal;	  /* entries with a real path of their own (tfile.real) */
	size_t rr;	  /* file the next read call starts with */
	uint64_t last_id; /* the last file id given out */
	bool scanned;	  /* a scan has run: later discoveries start at 0 */
	bool scan_wanted; /* a watch event asked for a scan */
	/* The directories on the patterns' way are looked for again (tail_watch.c) at the
	 * next scan: a watch event named one, or events were lost; else only every
	 * TAIL_WATCH_REFRESH_MS (watched_at, monotonic ms). */
	bool watch_wanted;
	int64_t watched_at;
	bool fresh;	  /* the read pass in progress read bytes not read before */
	bool truncate_long;
	bool confirm_new;
	bool partial_idle;
	int64_t partial_ms;
	struct floe_tail_stats st;
	/* tail_paths.c: the path rules and the patterns' health. */
	char name[32];
	enum floe_tail_symlinks symlinks;
	struct tpattern *pats; /* one per pattern */
	char **skip, **skip_real; /* the agent's own directories, as given and canonical */
	size_t nskip;
	uint64_t *refused, *refused_next; /* hashes of refused paths: last scan, this one */
	size_t nrefused, nrefused_next;
	uint64_t refused_more, refused_more_logged;
	uint64_t own_dev[2], own_ino[2]; /* the agent's stdout and stderr, when regular files */
	bool own_ok[2];
	int64_t lost_said; /* monotonic ms of the last files_lost log line; lost_unsaid since */
	uint64_t lost_unsaid;
};

/* tail_entry.c: below every other tail file. */
/* FNV-1a, 64 bits. */
uint64_t floe_tail_hash(const uint8_t *p, size_t n);
/* The tail's wall clock, in milliseconds: only for what is a wall time (a file's mtime,
 * the positions blob); it may step. */
int64_t floe_tail_now(const struct floe_tail *t);
/* The tail's monotonic clock, in milliseconds: for every interval. */
int64_t floe_tail_mono(const struct floe_tail *t);
/* Reads up to n bytes at off, fewer only at end of file. */
int floe_tail_read_full(int fd, uint8_t *p, size_t n, uint64_t off, size_t *got);
/* Hash of the bytes just before f->pos (*len of them, up to FLOE_TAIL_PREHASH): from the
 * buffer when it still holds them, else read from the descriptor. 0 and *len 0 when not
 * available (closed and not cached). */
int floe_tail_prehash(const struct tfile *f, uint64_t *hash, uint32_t *len);
/* Caches the pre-position hash before the buffer or the descriptor goes away. */
void floe_tail_cache_prehash(struct tfile *f);
/* Whether path (or its basename) matches an exclude glob. */
bool floe_tail_excluded(const struct floe_tail *t, const char *path);
/* Frees an entry, closing its descriptor. */
void floe_tail_entry_free(struct floe_tail *t, struct tfile *f);
/* Appends an entry (takes it). */
int floe_tail_entry_push(struct floe_tail *t, struct tfile *f);
/* Removes the entries whose slot was set to NULL. */
void floe_tail_compact(struct floe_tail *t);

/* tail_paths.c */
int floe_tail_paths_init(struct floe_tail *t, const struct floe_tail_options *o);
void floe_tail_paths_fini(struct floe_tail *t);
/* Before a scan: resolves the roots and the agent's directories again. */
void floe_tail_paths_begin(struct floe_tail *t);
/* Whether the file at path, matched by pattern, may be read (counted and logged once
 * when not). */
bool floe_tail_path_allowed(struct floe_tail *t, size_t pattern, const char *path,
			    const struct floe_fs_stat *st);
/* The scan matched path, which is neither a regular file nor a directory (a FIFO, a
 * socket, a device): counted as skipped, logged once. */
void floe_tail_note_special(struct floe_tail *t, const char *path);
/* After a scan: each pattern's state, logged when it changed. */
void floe_tail_paths_end(struct floe_tail *t);
/* After opening f failed (rc < 0) or worked (0): logs a permission problem once, and
 * its end. */
void floe_tail_note_open(struct floe_tail *t, struct tfile *f, int rc);

/* tail_watch.c */
/* A scan looks for the directories to watch again at least this often (ms), events or
 * not: the rescan's pace before directories were watched. */
#define TAIL_WATCH_REFRESH_MS 30000
/* Watches each pattern's root (its nearest existing ancestor while it is missing) and the
 * directories its wildcard levels match now (no-op without a watch). */
void floe_tail_watch_patterns(struct floe_tail *t);
/* Whether path is a directory a pattern goes through (so one created there asks for a
 * scan). */
bool floe_tail_on_pattern_path(const struct floe_tail *t, const char *path);

/* tail_files.c */
/* Starts f over at 0 (a truncation, or a new generation), counted. */
void floe_tail_reset_file(struct floe_tail *t, struct tfile *f, bool truncated);
/* Before a truncated f is reset: continues its copytruncate copy, if there is one, from
 * f's position. */
int floe_tail_follow_copy(struct floe_tail *t, struct tfile *f);
/* Extends f's fingerprint while the file is shorter than FLOE_TAIL_FINGERPRINT. */
int floe_tail_refresh_fingerprint(struct tfile *f, uint64_t known);
/* Opens the entries waiting for a descriptor (closing idle ones to make room). */
int floe_tail_open_wanted(struct floe_tail *t, size_t *opened);
/* Closes f's descriptor and drops its buffer, keeping its position and identity. */
void floe_tail_close_entry(struct floe_tail *t, struct tfile *f);

#endif
