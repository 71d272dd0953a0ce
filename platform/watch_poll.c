/* Polling backend of platform/watch: a directory changed when its mtime, ctime or inode
 * changed (entries created, renamed or removed). Appends to files inside do not change a
 * directory, so callers keep reading open files on every pass. */
#include "watch_impl.h"

#include <errno.h>
#include <poll.h>
#include <sys/stat.h>

int floe_watch_poll_stat(struct watch_dir *d)
{
	struct stat st;
	if (stat(d->path, &st) != 0)
		return -errno;
	int64_t m = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	int64_t c = (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec;
	if (m != d->mtime_ns || c != d->ctime_ns || (uint64_t)st.st_ino != d->ino)
		d->changed = true;
	d->mtime_ns = m;
	d->ctime_ns = c;
	d->ino = (uint64_t)st.st_ino;
	return 0;
}

bool floe_watch_poll_check(struct floe_watch *w)
{
	bool any = false;
	for (size_t i = 0; i < w->ndirs; i++) {
		struct watch_dir *d = &w->dirs[i];
		if (d->wd >= 0)
			continue;
		/* A directory that vanished counts as a change once: its files are gone. */
		if (floe_watch_poll_stat(d) != 0 && d->ino != 0) {
			d->ino = 0;
			d->changed = true;
		}
		any |= d->changed;
	}
	return any;
}

bool floe_watch_poll_sleep(int ms)
{
	return ms > 0 && poll(NULL, 0, ms) < 0 && errno == EINTR;
}

int floe_watch_poll_next(struct floe_watch *w, struct floe_watch_event *ev)
{
	for (; w->poll_next < w->ndirs; w->poll_next++) {
		struct watch_dir *d = &w->dirs[w->poll_next];
		if (d->wd < 0 && d->changed) {
			d->changed = false;
			*ev = (struct floe_watch_event){d->path, NULL, FLOE_WATCH_RESCAN};
			w->poll_next++;
			return 1;
		}
	}
	w->poll_next = 0;
	return 0;
}
