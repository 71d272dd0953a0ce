/* Private to platform/watch_*.c: the watch object shared by the inotify backend and the
 * polling fallback, and the polling functions the inotify backend delegates to. */
#ifndef FLOE_PLATFORM_WATCH_IMPL_H
#define FLOE_PLATFORM_WATCH_IMPL_H

#include "watch.h"

#include <stddef.h>
#include <stdint.h>

struct watch_dir {
	char *path;
	int wd;		  /* inotify watch descriptor, or -1 when polled */
	int64_t mtime_ns; /* polled: last seen mtime and ctime */
	int64_t ctime_ns;
	uint64_t ino;
	bool changed; /* polled: changed since the last floe_watch_next sweep */
	/* An entry was removed from it since an entry was last created in it (or events were
	 * lost): it may be empty, and an empty directory removed while a file of it is still
	 * open gives no IN_DELETE_SELF, so floe_watch_add_dir checks its inode by a stat.
	 * Without a removal it cannot have gone in silence, and no stat is needed. */
	bool maybe_gone;
};

#define WATCH_BUF 65536
/* Polled directories are looked at this often while waiting. */
#define WATCH_POLL_MS 250

struct floe_watch {
	int fd; /* inotify descriptor, -1 for the polling backend */
	struct watch_dir *dirs;
	size_t ndirs, capdirs;
	/* Two open-addressing indexes of dirs, by path and by inotify descriptor: slot values
	 * are an index + 1, 0 empty; nslots is a power of two, at least twice capdirs. A hit is
	 * checked against dirs[] (a stale slot, left by a directory forgotten since, fails the
	 * check); removals rebuild both. With thousands of directories (a pod per directory)
	 * every rescan adds each again and every event looks its directory up. */
	size_t *by_path, *by_wd;
	size_t nslots;
	size_t npolled;
	bool limit_logged; /* the inotify watch limit's warning was given */
	/* Raw inotify events read and not yet handed out: buf[off .. len). */
	char *buf;
	size_t off, len;
	bool overflow;	  /* a global rescan is due */
	size_t poll_next; /* next polled directory to report */
};

/* Polling backend. */
int floe_watch_poll_stat(struct watch_dir *d);
/* Stats every polled directory; returns true when one changed (marked changed). */
bool floe_watch_poll_check(struct floe_watch *w);
/* Sleeps ms; true when a signal ended it early. */
bool floe_watch_poll_sleep(int ms);
/* Hands out the next changed polled directory as a rescan event. */
int floe_watch_poll_next(struct floe_watch *w, struct floe_watch_event *ev);

#endif
