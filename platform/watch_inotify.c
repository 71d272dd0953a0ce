/* inotify backend of platform/watch (Linux). Directories the kernel will not watch any
 * more (inotify_init failed, or the per-user watch limit is reached) are polled through
 * watch_poll.c instead, so a caller never has to know which backend it got. */
#include "watch_impl.h"

#include "log.h"

#include "formats/base/crc.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define WATCH_MASK                                                                                 \
	(IN_MODIFY | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |        \
	 IN_MOVE_SELF)

int floe_watch_new(unsigned flags, struct floe_watch **out)
{
	struct floe_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = -1;
	if (!(flags & FLOE_WATCH_FORCE_POLL)) {
		w->fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
		if (w->fd >= 0 && !(w->buf = malloc(WATCH_BUF))) {
			close(w->fd);
			free(w);
			return -ENOMEM;
		}
	}
	*out = w;
	return 0;
}

static size_t path_slot(const struct floe_watch *w, const char *path)
{
	return (size_t)floe_crc32c(0, path, strlen(path)) & (w->nslots - 1);
}

static size_t wd_slot(const struct floe_watch *w, int wd)
{
	return (size_t)((uint32_t)wd * 2654435761u) & (w->nslots - 1);
}

/* Enters dirs[i] in the indexes (there is room: nslots >= 2 * capdirs). */
static void index_put(struct floe_watch *w, size_t i)
{
	const struct watch_dir *d = &w->dirs[i];
	size_t mask = w->nslots - 1;
	if (d->path[0]) {
		size_t s = path_slot(w, d->path);
		while (w->by_path[s])
			s = (s + 1) & mask;
		w->by_path[s] = i + 1;
	}
	if (d->wd >= 0) {
		size_t s = wd_slot(w, d->wd);
		while (w->by_wd[s])
			s = (s + 1) & mask;
		w->by_wd[s] = i + 1;
	}
}

static void index_rebuild(struct floe_watch *w)
{
	if (!w->nslots)
		return;
	memset(w->by_path, 0, w->nslots * sizeof(w->by_path[0]));
	memset(w->by_wd, 0, w->nslots * sizeof(w->by_wd[0]));
	for (size_t i = 0; i < w->ndirs; i++)
		index_put(w, i);
}

/* The index in dirs of the directory watched as path, or SIZE_MAX. */
static size_t find_path(const struct floe_watch *w, const char *path)
{
	if (!w->nslots || !path[0])
		return SIZE_MAX;
	size_t mask = w->nslots - 1;
	for (size_t s = path_slot(w, path); w->by_path[s]; s = (s + 1) & mask) {
		size_t i = w->by_path[s] - 1;
		if (i < w->ndirs && strcmp(w->dirs[i].path, path) == 0)
			return i;
	}
	return SIZE_MAX;
}

/* The index in dirs of the directory inotify watches as wd, or SIZE_MAX. */
static size_t find_wd(const struct floe_watch *w, int wd)
{
	if (!w->nslots || wd < 0)
		return SIZE_MAX;
	size_t mask = w->nslots - 1;
	for (size_t s = wd_slot(w, wd); w->by_wd[s]; s = (s + 1) & mask) {
		size_t i = w->by_wd[s] - 1;
		if (i < w->ndirs && w->dirs[i].wd == wd)
			return i;
	}
	return SIZE_MAX;
}

/* Makes room for one more directory: dirs and both indexes grow together, or nothing
 * changes (-ENOMEM). */
static int reserve(struct floe_watch *w)
{
	if (w->ndirs < w->capdirs)
		return 0;
	size_t cap = w->capdirs ? w->capdirs * 2 : 8;
	size_t nslots = cap * 2;
	size_t *bp = calloc(nslots, sizeof(*bp));
	size_t *bw = calloc(nslots, sizeof(*bw));
	struct watch_dir *p = bp && bw ? realloc(w->dirs, cap * sizeof(*p)) : NULL;
	if (!p) {
		free(bp);
		free(bw);
		return -ENOMEM;
	}
	free(w->by_path);
	free(w->by_wd);
	w->dirs = p;
	w->capdirs = cap;
	w->by_path = bp;
	w->by_wd = bw;
	w->nslots = nslots;
	index_rebuild(w);
	return 0;
}

void floe_watch_clear(struct floe_watch *w)
{
	for (size_t i = 0; i < w->ndirs; i++) {
		if (w->dirs[i].wd >= 0 && w->fd >= 0)
			inotify_rm_watch(w->fd, w->dirs[i].wd);
		free(w->dirs[i].path);
	}
	w->ndirs = w->npolled = 0;
	w->off = w->len = 0;
	w->poll_next = 0;
	index_rebuild(w);
}

void floe_watch_free(struct floe_watch *w)
{
	if (!w)
		return;
	floe_watch_clear(w);
	if (w->fd >= 0)
		close(w->fd);
	free(w->dirs);
	free(w->by_path);
	free(w->by_wd);
	free(w->buf);
	free(w);
}

/* Whether the inotify watch of dirs[i] still watches the directory named by its path.
 * A directory removed while a file in it is still open (a log being drained after its
 * directory went) gets no IN_DELETE_SELF until that file is closed, so its entry stays
 * meanwhile; a directory made again under the name is another inode. */
static bool still_there(const struct watch_dir *d)
{
	struct stat st;
	return d->wd < 0 || (stat(d->path, &st) == 0 && (uint64_t)st.st_ino == d->ino);
}

int floe_watch_add_dir(struct floe_watch *w, const char *dir)
{
	size_t i = find_path(w, dir);
	if (i != SIZE_MAX) {
		if (!w->dirs[i].maybe_gone || still_there(&w->dirs[i]))
			return 1;
		/* Gone or replaced: forget the old watch (its IN_IGNORED, when it comes, names
		 * no directory) and watch what has the name now, if anything. */
		inotify_rm_watch(w->fd, w->dirs[i].wd);
		free(w->dirs[i].path);
		memmove(&w->dirs[i], &w->dirs[i + 1], (w->ndirs - i - 1) * sizeof(w->dirs[0]));
		w->ndirs--;
		index_rebuild(w);
	}
	int rc = reserve(w);
	if (rc)
		return rc;
	struct watch_dir d = {0};
	d.wd = -1;
	if (!(d.path = strdup(dir)))
		return -ENOMEM;
	rc = floe_watch_poll_stat(&d); /* the directory must exist, in both modes */
	if (rc) {
		free(d.path);
		return rc;
	}
	d.changed = false;
	if (w->fd >= 0) {
		d.wd = inotify_add_watch(w->fd, dir, WATCH_MASK | IN_ONLYDIR);
		if (d.wd < 0 && errno != ENOSPC && errno != ENOMEM) {
			rc = -errno;
			free(d.path);
			return rc;
		}
		/* ENOSPC: the user's watch limit (fs.inotify.max_user_watches) is reached; this
		 * directory is polled instead, said once (floe_watch_polled counts them). */
		if (d.wd < 0 && !w->limit_logged) {
			w->limit_logged = true;
			floe_warn("watch: inotify's watch limit (fs.inotify.max_user_watches) is "
				  "reached: %s and the directories added after it are polled, their "
				  "files read once a second; raise the limit",
				  dir);
		}
	}
	if (d.wd < 0)
		w->npolled++;
	w->dirs[w->ndirs] = d;
	index_put(w, w->ndirs++);
	return 0;
}

int floe_watch_recheck(struct floe_watch *w)
{
	size_t j = 0, n = w->ndirs;
	for (size_t i = 0; i < n; i++) {
		struct watch_dir *d = &w->dirs[i];
		if (d->maybe_gone && !still_there(d)) {
			inotify_rm_watch(w->fd, d->wd);
			free(d->path);
			continue;
		}
		w->dirs[j++] = *d;
	}
	w->ndirs = j;
	if (j != n)
		index_rebuild(w);
	return (int)(n - j);
}

static int add_dir_of(struct floe_watch *w, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return floe_watch_add_dir(w, ".");
	if (slash == path)
		return floe_watch_add_dir(w, "/");
	size_t n = (size_t)(slash - path);
	char *d = malloc(n + 1);
	if (!d)
		return -ENOMEM;
	memcpy(d, path, n);
	d[n] = 0;
	int rc = floe_watch_add_dir(w, d);
	free(d);
	return rc;
}

int floe_watch_add_file_dirs(struct floe_watch *w, const char *path)
{
	int rc = add_dir_of(w, path);
	char *real = realpath(path, NULL);
	if (real) {
		if (strcmp(real, path) != 0)
			(void)add_dir_of(w, real);
		free(real);
	}
	return rc < 0 ? rc : 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads what the kernel has queued. 1 when something was read, 0 when nothing. */
static int drain_fd(struct floe_watch *w)
{
	if (w->off < w->len)
		return 1;
	w->off = w->len = 0;
	ssize_t n = read(w->fd, w->buf, WATCH_BUF);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	w->len = (size_t)n;
	return n > 0;
}

int floe_watch_wait(struct floe_watch *w, int timeout_ms)
{
	if (w->overflow || w->off < w->len)
		return 1;
	int64_t deadline = mono_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	for (;;) {
		if (w->npolled && floe_watch_poll_check(w))
			return 1;
		int64_t left = deadline - mono_ms();
		if (left <= 0)
			return 0;
		/* Polled directories are looked at every WATCH_POLL_MS. */
		int step = (int)(w->npolled && left > WATCH_POLL_MS ? WATCH_POLL_MS : left);
		if (w->fd >= 0 && w->npolled < w->ndirs) {
			struct pollfd p = {w->fd, POLLIN, 0};
			int r = poll(&p, 1, step);
			if (r < 0)
				return errno == EINTR ? 0 : -errno;
			if (r > 0) {
				int rc = drain_fd(w);
				if (rc)
					return rc;
			}
		} else if (floe_watch_poll_sleep(step)) {
			return 0; /* a signal: the caller looks at why */
		}
	}
}

int floe_watch_next(struct floe_watch *w, struct floe_watch_event *ev)
{
	if (w->overflow) {
		w->overflow = false;
		w->off = w->len = 0;
		*ev = (struct floe_watch_event){NULL, NULL, FLOE_WATCH_RESCAN};
		return 1;
	}
	while (w->off < w->len) {
		struct inotify_event ie;
		if (w->len - w->off < sizeof(ie)) {
			w->off = w->len;
			break;
		}
		memcpy(&ie, w->buf + w->off, sizeof(ie));
		const char *name = ie.len ? w->buf + w->off + sizeof(ie) : NULL;
		w->off += sizeof(ie) + ie.len;
		if (w->off > w->len)
			w->off = w->len;
		if (ie.mask & IN_Q_OVERFLOW) {
			/* Removals may be among the events lost. */
			for (size_t i = 0; i < w->ndirs; i++)
				w->dirs[i].maybe_gone = true;
			w->off = w->len = 0;
			*ev = (struct floe_watch_event){NULL, NULL, FLOE_WATCH_RESCAN};
			return 1;
		}
		size_t idx = find_wd(w, ie.wd);
		if (idx == SIZE_MAX)
			continue; /* a watch removed since */
		const char *dir = w->dirs[idx].path;
		if (ie.mask & (IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED)) {
			/* The directory itself went away: forget it (a later add_dir watches
			 * whatever has its name then) and rescan. */
			if (!(ie.mask & IN_IGNORED))
				inotify_rm_watch(w->fd, ie.wd);
			w->dirs[idx].wd = -2; /* never matches a live descriptor */
			w->dirs[idx].path[0] = '\0';
			*ev = (struct floe_watch_event){NULL, NULL, FLOE_WATCH_RESCAN};
			return 1;
		}
		if (ie.mask & (IN_DELETE | IN_MOVED_FROM))
			w->dirs[idx].maybe_gone = true;
		else if (ie.mask & (IN_CREATE | IN_MOVED_TO))
			w->dirs[idx].maybe_gone = false; /* it holds an entry now */
		if (!name || !*name)
			continue;
		unsigned kind = 0;
		if (ie.mask & IN_MODIFY)
			kind = FLOE_WATCH_MODIFIED;
		else if (ie.mask & (IN_CREATE | IN_MOVED_TO))
			kind = FLOE_WATCH_CREATED;
		else if (ie.mask & (IN_DELETE | IN_MOVED_FROM))
			kind = FLOE_WATCH_REMOVED;
		else
			continue;
		*ev = (struct floe_watch_event){dir, name, kind};
		return 1;
	}
	/* Directories removed by IN_IGNORED above are dropped now that no event names them. */
	size_t j = 0, n = w->ndirs;
	for (size_t i = 0; i < w->ndirs; i++) {
		if (w->dirs[i].wd == -2) {
			free(w->dirs[i].path);
			continue;
		}
		w->dirs[j++] = w->dirs[i];
	}
	w->ndirs = j;
	if (j != n)
		index_rebuild(w);
	return w->npolled ? floe_watch_poll_next(w, ev) : 0;
}

int floe_watch_fd(const struct floe_watch *w)
{
	return w->npolled == w->ndirs && w->ndirs ? -1 : w->fd;
}

bool floe_watch_polling(const struct floe_watch *w)
{
	return w->fd < 0 || (w->ndirs > 0 && w->npolled == w->ndirs);
}

int floe_watch_polled(const struct floe_watch *w)
{
	return (int)w->npolled;
}

int floe_watch_count(const struct floe_watch *w)
{
	return (int)w->ndirs;
}
