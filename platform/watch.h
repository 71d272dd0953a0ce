/* File watching for tailing: tells the caller that something changed in the directories
 * it watches (a file grew, appeared, was renamed or removed), so that it can sleep until
 * then instead of polling. Two backends behind one API: inotify (watch_inotify.c), and
 * periodic stat() of the directories (watch_poll.c), used when inotify cannot be set up or
 * its watch limit is reached. Events are hints: a caller keeps a periodic rescan. */
#ifndef FLOE_PLATFORM_WATCH_H
#define FLOE_PLATFORM_WATCH_H

#include <stdbool.h>

struct floe_watch;

/* Event kinds (one per event). */
#define FLOE_WATCH_MODIFIED 1u /* dir/name was written to or truncated */
#define FLOE_WATCH_CREATED 2u  /* dir/name appeared (created, or renamed to that name) */
#define FLOE_WATCH_REMOVED 4u  /* dir/name went away (deleted, or renamed from that name) */
#define FLOE_WATCH_RESCAN                                                                          \
	8u /* look again at everything in dir (dir NULL: everywhere):                              \
	      events were lost, the directory itself moved, or a polled                            \
	      directory changed */

struct floe_watch_event {
	const char *dir;  /* as given to floe_watch_add_dir; NULL for a global rescan */
	const char *name; /* entry name in dir; NULL with FLOE_WATCH_RESCAN */
	unsigned kind;
};

/* Flag for floe_watch_new: use the polling backend even where inotify works. */
#define FLOE_WATCH_FORCE_POLL 1u

/* Creates a watch (*out, owned by the caller: floe_watch_free). Falls back to polling
 * when inotify_init fails. Returns 0 or -errno (-ENOMEM). */
int floe_watch_new(unsigned flags, struct floe_watch **out);
/* Frees w and closes its descriptor (NULL is fine). */
void floe_watch_free(struct floe_watch *w);

/* Watches directory dir (copied). Returns 0 when added, 1 when already watched, -errno
 * when dir cannot be watched (-ENOENT, -ENOTDIR, ...). When the inotify watch limit is
 * reached the directory is polled instead (still 0). */
int floe_watch_add_dir(struct floe_watch *w, const char *dir);
/* Watches the directory of path and, when path is (or goes through) a symlink, the
 * directory of its target too: appends to the target show up there. Errors are those of
 * floe_watch_add_dir for the first directory. */
int floe_watch_add_file_dirs(struct floe_watch *w, const char *path);
/* Forgets the directories that went without an event: those an entry was removed from
 * (the only way one can be emptied, and so removed) whose inode is no longer at their
 * path, as when a directory is removed while a file of it is still open (no
 * IN_DELETE_SELF until that file is closed). A stat per such directory, none for the
 * others. Returns how many were forgotten: the caller then watches what has their names
 * now, or their nearest ancestors. */
int floe_watch_recheck(struct floe_watch *w);
/* Forgets every directory (watches are added again by the next add_dir calls). */
void floe_watch_clear(struct floe_watch *w);

/* Sleeps until something changed in a watched directory or timeout_ms passed (a signal
 * ends the wait early, as a timeout). Returns 1 when events are ready for
 * floe_watch_next, 0 on timeout, or -errno. With the polling backend, appends to files
 * are not seen: only entries created, renamed or removed (as FLOE_WATCH_RESCAN). */
int floe_watch_wait(struct floe_watch *w, int timeout_ms);
/* Takes the next ready event: 1 and *ev (its strings valid until the next call on w), or
 * 0 when none is left. */
int floe_watch_next(struct floe_watch *w, struct floe_watch_event *ev);

/* The descriptor that becomes readable when events are ready (for an epoll set), or -1
 * with the polling backend (then call floe_watch_wait with a timeout). */
int floe_watch_fd(const struct floe_watch *w);
/* True when no directory uses inotify (the polling backend, or every watch failed). */
bool floe_watch_polling(const struct floe_watch *w);
/* Number of directories polled rather than watched by inotify (every one with the
 * polling backend; beyond inotify's watch limit with the other). */
int floe_watch_polled(const struct floe_watch *w);
/* Number of directories watched (both backends). */
int floe_watch_count(const struct floe_watch *w);

#endif
