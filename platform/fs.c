/* POSIX file system layer: durable replace/create, reads, directories, a streaming writer
 * and read access for tailing. Durability-relevant system calls go through `sys`, which
 * tests override with floe_fs_set_faults, and each durable operation is reported to the
 * recorder (fs_record.h) for the power-cut tests. Only the state lock's file is not: a
 * flock does not outlive a reboot, and the PID it holds is advice for a message. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64 /* 32-bit targets (armhf) must handle files over 2 GiB */
#endif
#include "fs.h"

#include "clock.h"
#include "fs_record.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

static ssize_t real_write(int fd, const void *p, size_t n)
{
	return write(fd, p, n);
}
static int real_fsync(int fd)
{
	return fsync(fd);
}
static int real_rename(const char *from, const char *to)
{
	return rename(from, to);
}
static int real_link(const char *from, const char *to)
{
	return link(from, to);
}
static ssize_t real_pread(int fd, void *p, size_t n, int64_t off)
{
	return pread(fd, p, n, (off_t)off);
}

static int real_open_read(const char *path)
{
	return open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
}

static const struct floe_fs_faults real_sys = {
    real_write, real_fsync, real_rename, real_link, real_pread, real_open_read,
};
static struct floe_fs_faults sys = {
    real_write, real_fsync, real_rename, real_link, real_pread, real_open_read,
};

void floe_fs_set_faults(const struct floe_fs_faults *f)
{
	sys = real_sys;
	if (!f)
		return;
	if (f->write)
		sys.write = f->write;
	if (f->fsync)
		sys.fsync = f->fsync;
	if (f->rename)
		sys.rename = f->rename;
	if (f->link)
		sys.link = f->link;
	if (f->open_read)
		sys.open_read = f->open_read;
	if (f->pread)
		sys.pread = f->pread;
}

/* Writes all of p[0..n) to fd, retrying short writes and EINTR. A write that returns 0
 * would loop forever, so it is reported as ENOSPC. *count (when not NULL) grows by what
 * each write wrote, also when a later one fails. */
static int write_all(int fd, const void *p, size_t n, uint64_t *count)
{
	const char *c = p;
	while (n > 0) {
		ssize_t w = sys.write(fd, c, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (w == 0)
			return -ENOSPC;
		floe_fs_rec_write(fd, c, (unsigned long)w);
		c += w;
		n -= (size_t)w;
		if (count)
			*count += (uint64_t)w;
	}
	return 0;
}

/* fsync(2) of fd, at the call site named site: a build with FLOE_FS_RECORD leaves out
 * the sites the environment's FLOE_TEST_SKIP_FSYNC names, so that the power-cut tests
 * can show each one is needed (fs_record.h). */
static int fsync_fd(int fd, const char *site)
{
	if (floe_fs_rec_skip_fsync(site))
		return 0;
	for (;;) {
		if (sys.fsync(fd) == 0) {
			floe_fs_rec_fsync(fd);
			return 0;
		}
		if (errno != EINTR)
			return -errno;
	}
}

/* Returns a new string with the directory part of path ("." when there is none). */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/* Returns a new, unique temp name next to path: "<dir>/.<base>.tmp.<pid>.<random>". Being
 * hidden keeps directory listings (metadata dirs, spools) from picking it up. */
static char *temp_name(const char *path)
{
	uint8_t r[8];
	if (floe_random_bytes(r, sizeof(r)) != 0) {
		/* Fall back to the clock: the pid already separates processes. */
		int64_t t = floe_clock_mono_ns();
		memcpy(r, &t, sizeof(r));
	}
	uint64_t rnd;
	memcpy(&rnd, r, sizeof(rnd));
	const char *slash = strrchr(path, '/');
	int dirlen = slash ? (int)(slash - path + 1) : 0;
	const char *base = slash ? slash + 1 : path;
	char *out = NULL;
	if (asprintf(&out, "%.*s.%s.tmp.%ld.%016llx", dirlen, path, base, (long)getpid(),
		     (unsigned long long)rnd) < 0)
		return NULL;
	return out;
}

/* Syncs the directory dir for the fsync site named site (fsync_fd). */
static int fsync_dir_at(const char *dir, const char *site)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = fsync_fd(fd, site);
	/* Some file systems cannot fsync a directory; their metadata is then as durable as
	 * it gets, which is no reason to fail the caller. */
	if (rc == -EINVAL)
		rc = 0;
	if (rc == 0 && !floe_fs_rec_skip_fsync(site))
		floe_fs_rec_path("fsyncdir", dir, NULL);
	close(fd);
	return rc;
}

int floe_fs_fsync_dir(const char *dir)
{
	return fsync_dir_at(dir, "dir");
}

static int fsync_dir_of(const char *path, const char *site)
{
	char *dir = dir_of(path);
	if (!dir)
		return -ENOMEM;
	int rc = fsync_dir_at(dir, site);
	free(dir);
	return rc;
}

/* Removes a temp file a failed step leaves (recorded like any unlink). */
static void unlink_tmp(const char *tmp)
{
	if (unlink(tmp) == 0)
		floe_fs_rec_path("unlink", tmp, NULL);
}

/* Creates a new temp file next to path holding data, fsynced and closed. *tmp_out is the
 * owned name on success. */
static int write_temp(const char *path, const struct floe_fs_piece *pieces, size_t npieces,
		      char **tmp_out)
{
	char *tmp = temp_name(path);
	if (!tmp)
		return -ENOMEM;
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0) {
		int rc = -errno;
		free(tmp);
		return rc;
	}
	floe_fs_rec_create(fd, tmp);
	int rc = 0;
	for (size_t i = 0; i < npieces && rc == 0; i++)
		rc = write_all(fd, pieces[i].p, pieces[i].n, NULL);
	if (rc == 0)
		rc = fsync_fd(fd, "temp-file");
	floe_fs_rec_close(fd);
	if (close(fd) != 0 && rc == 0)
		rc = -errno;
	if (rc != 0) {
		unlink_tmp(tmp);
		free(tmp);
		return rc;
	}
	*tmp_out = tmp;
	return 0;
}

int floe_fs_write_atomic(const char *path, const void *data, size_t len)
{
	struct floe_fs_piece one = {data, len};
	return floe_fs_write_atomicv(path, &one, 1);
}

/* Puts the temp file tmp (owned: freed here) at path, then syncs path's directory. With
 * replace, over what is there (rename); without, only where nothing is: link() fails
 * with EEXIST if path exists, atomically, and never replaces it. */
static int publish(char *tmp, const char *path, bool replace)
{
	int rc = 0;
	if (replace) {
		if (sys.rename(tmp, path) != 0) {
			rc = -errno;
			unlink_tmp(tmp);
		} else {
			floe_fs_rec_path("rename", tmp, path);
		}
	} else {
		if (sys.link(tmp, path) != 0)
			rc = -errno;
		else
			floe_fs_rec_path("link", tmp, path);
		unlink_tmp(tmp);
	}
	free(tmp);
	return rc ? rc : fsync_dir_of(path, "publish-dir");
}

int floe_fs_write_atomicv(const char *path, const struct floe_fs_piece *pieces, size_t n)
{
	char *tmp = NULL;
	int rc = write_temp(path, pieces, n, &tmp);
	return rc ? rc : publish(tmp, path, true);
}

int floe_fs_create_excl(const char *path, const void *data, size_t len)
{
	char *tmp = NULL;
	struct floe_fs_piece one = {data, len};
	int rc = write_temp(path, &one, 1, &tmp);
	return rc ? rc : publish(tmp, path, false);
}

int floe_fs_read_file(struct floe_alloc *a, const char *path, size_t max, void **data,
		      size_t *len)
{
	if (max > SIZE_MAX - 2)
		max = SIZE_MAX - 2; /* room for the probe byte and the NUL */
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int rc = 0;
	char *buf = NULL;
	size_t n = 0;
	struct stat st;
	if (fstat(fd, &st) != 0) {
		rc = -errno;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL;
		goto out;
	}
	if ((uint64_t)st.st_size > max) {
		rc = -EFBIG;
		goto out;
	}
	/* The file may grow while we read: read until EOF, but never past max. */
	size_t cap = (size_t)st.st_size + 1;
	buf = floe_malloc(a, cap + 1);
	if (!buf) {
		rc = FLOE_ENOMEM;
		goto out;
	}
	for (;;) {
		if (n == cap) {
			if (cap > max) {
				rc = -EFBIG;
				goto out;
			}
			size_t ncap = cap > max / 2 ? max + 1 : cap * 2;
			char *p = floe_realloc(a, buf, ncap + 1);
			if (!p) {
				rc = FLOE_ENOMEM;
				goto out;
			}
			buf = p;
			cap = ncap;
		}
		ssize_t r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	if (n > max) {
		rc = -EFBIG;
		goto out;
	}
	buf[n] = 0;
	*data = buf;
	*len = n;
	buf = NULL;
out:
	floe_free(a, buf);
	close(fd);
	return rc;
}

int floe_fs_mkdirs(const char *path)
{
	char *p = strdup(path);
	if (!p)
		return -ENOMEM;
	int rc = 0;
	size_t n = strlen(p);
	/* Walk the components left to right, creating each; "a//b" and a trailing '/' are
	 * fine. */
	for (size_t i = 1; i <= n; i++) {
		if (p[i] != '/' && p[i] != 0)
			continue;
		if (p[i - 1] == '/')
			continue;
		char c = p[i];
		p[i] = 0;
		if (mkdir(p, 0755) == 0) {
			floe_fs_rec_path("mkdir", p, NULL);
			/* The new entry is durable only once its parent is synced: without it a
			 * power cut may take the directory away with every file synced into it
			 * (a table, while the checkpoint says its lines are committed). */
			if ((rc = fsync_dir_of(p, "mkdir-dir")) != 0)
				break;
		} else if (errno != EEXIST) {
			rc = -errno;
			break;
		}
		p[i] = c;
	}
	if (rc == 0) {
		struct stat st;
		if (stat(path, &st) != 0)
			rc = -errno;
		else if (!S_ISDIR(st.st_mode))
			rc = -ENOTDIR;
	}
	free(p);
	return rc;
}

int floe_fs_exists(const char *path)
{
	struct stat st;
	if (stat(path, &st) == 0)
		return 1;
	if (errno == ENOENT || errno == ENOTDIR)
		return 0;
	return -errno;
}

int floe_fs_unlink(const char *path)
{
	if (unlink(path) != 0)
		return -errno;
	floe_fs_rec_path("unlink", path, NULL);
	return 0;
}

int floe_fs_rename(const char *from, const char *to)
{
	if (sys.rename(from, to) != 0)
		return -errno;
	floe_fs_rec_path("rename", from, to);
	char *a = dir_of(from), *b = dir_of(to);
	int rc = -ENOMEM;
	if (a && b) {
		rc = fsync_dir_at(b, "rename-dir");
		if (rc == 0 && strcmp(a, b) != 0)
			rc = fsync_dir_at(a, "rename-dir");
	}
	free(a);
	free(b);
	return rc;
}

/* Copies from into a new, fsynced temp file next to to; *tmp_out is its owned name. */
static int copy_to_temp(const char *from, const char *to, char **tmp_out)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	int rc = 0, dst = -1;
	char *tmp = temp_name(to);
	char *buf = malloc(64 * 1024);
	if (!tmp || !buf) {
		rc = -ENOMEM;
		goto out;
	}
	dst = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (dst < 0) {
		rc = -errno;
		goto out;
	}
	floe_fs_rec_create(dst, tmp);
	for (;;) {
		ssize_t r = read(in, buf, 64 * 1024);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			rc = -errno;
			goto out;
		}
		if (r == 0)
			break;
		rc = write_all(dst, buf, (size_t)r, NULL);
		if (rc)
			goto out;
	}
	rc = fsync_fd(dst, "copy-file");
	floe_fs_rec_close(dst);
	if (close(dst) != 0 && rc == 0)
		rc = -errno;
	dst = -1;
out:
	if (dst >= 0) {
		floe_fs_rec_close(dst);
		close(dst);
	}
	if (rc && tmp)
		unlink_tmp(tmp);
	if (rc) {
		free(tmp);
		tmp = NULL;
	}
	*tmp_out = tmp;
	free(buf);
	close(in);
	return rc;
}

int floe_fs_copy(const char *from, const char *to)
{
	char *tmp = NULL;
	int rc = copy_to_temp(from, to, &tmp);
	return rc ? rc : publish(tmp, to, true);
}

int floe_fs_copy_excl(const char *from, const char *to)
{
	char *tmp = NULL;
	int rc = copy_to_temp(from, to, &tmp);
	return rc ? rc : publish(tmp, to, false);
}

static int cmp_names(const void *a, const void *b)
{
	/* strcmp compares as unsigned char: bytewise order. */
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int floe_fs_list(struct floe_alloc *a, const char *dir, int (*fn)(void *ctx, const char *name),
		 void *ctx)
{
	DIR *d = opendir(dir);
	if (!d)
		return -errno;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;
	for (;;) {
		errno = 0;
		struct dirent *e = readdir(d);
		if (!e) {
			rc = -errno;
			break;
		}
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			size_t ncap = cap ? cap * 2 : 32;
			char **p = floe_realloc(a, names, ncap * sizeof(*names));
			if (!p) {
				rc = FLOE_ENOMEM;
				break;
			}
			names = p;
			cap = ncap;
		}
		if (!(names[n] = floe_strdup(a, e->d_name))) {
			rc = FLOE_ENOMEM;
			break;
		}
		n++;
	}
	closedir(d);
	if (rc == 0) {
		if (n > 1)
			qsort(names, n, sizeof(*names), cmp_names);
		for (size_t i = 0; i < n && rc == 0; i++)
			rc = fn(ctx, names[i]);
	}
	for (size_t i = 0; i < n; i++)
		floe_free(a, names[i]);
	floe_free(a, names);
	return rc;
}

struct floe_file {
	int fd;
	uint64_t size;
};

int floe_file_create(const char *path, struct floe_file **out)
{
	struct floe_file *f = malloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0644);
	if (f->fd < 0) {
		int rc = -errno;
		free(f);
		return rc;
	}
	floe_fs_rec_create(f->fd, path);
	f->size = 0;
	*out = f;
	return 0;
}

int floe_file_write(struct floe_file *f, const void *p, size_t n)
{
	/* A failed write may have written a prefix; count only what is known to be there. */
	return write_all(f->fd, p, n, &f->size);
}

int floe_file_sync(struct floe_file *f)
{
	return fsync_fd(f->fd, "file");
}

int floe_file_close(struct floe_file *f)
{
	if (!f)
		return 0;
	/* close() is not retried on EINTR: on Linux the descriptor is gone either way. */
	floe_fs_rec_close(f->fd);
	int rc = close(f->fd) == 0 ? 0 : -errno;
	free(f);
	return rc;
}

uint64_t floe_file_size(const struct floe_file *f)
{
	return f->size;
}

static void fill_stat(const struct stat *s, struct floe_fs_stat *st)
{
	st->dev = (uint64_t)s->st_dev;
	st->ino = (uint64_t)s->st_ino;
	st->size = s->st_size > 0 ? (uint64_t)s->st_size : 0;
	st->nlink = (uint64_t)s->st_nlink;
	st->regular = S_ISREG(s->st_mode);
	st->dir = S_ISDIR(s->st_mode);
	st->mtime_us = (int64_t)s->st_mtim.tv_sec * 1000000 + s->st_mtim.tv_nsec / 1000;
}

int floe_fs_stat(const char *path, struct floe_fs_stat *st)
{
	struct stat s;
	if (stat(path, &s) != 0)
		return -errno;
	fill_stat(&s, st);
	return 0;
}

int floe_fs_open_read(const char *path, int *fd)
{
	int f = sys.open_read(path);
	if (f < 0)
		return -errno;
	*fd = f;
	return 0;
}

int floe_fs_fstat(int fd, struct floe_fs_stat *st)
{
	struct stat s;
	if (fstat(fd, &s) != 0)
		return -errno;
	fill_stat(&s, st);
	return 0;
}

int floe_fs_pread(int fd, void *p, size_t n, uint64_t off, size_t *got)
{
	if (off > INT64_MAX)
		return -EINVAL;
	for (;;) {
		ssize_t r = sys.pread(fd, p, n, (int64_t)off);
		if (r >= 0) {
			*got = (size_t)r;
			return 0;
		}
		if (errno != EINTR)
			return -errno;
	}
}

int floe_fs_close(int fd)
{
	return close(fd) == 0 ? 0 : -errno;
}

/* The holder's process id as floe_fs_lock wrote it, 0 when the file holds none. */
static long lock_holder(int fd)
{
	char b[24];
	ssize_t n = pread(fd, b, sizeof(b) - 1, 0);
	if (n <= 0)
		return 0;
	b[n] = '\0';
	char *end = NULL;
	long pid = strtol(b, &end, 10);
	return end != b && pid > 0 ? pid : 0;
}

int floe_fs_lock(const char *path, int *fd, long *holder)
{
	*holder = 0;
	int f = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	/* A lock file another user made may be read-only to us: a shared open description
	 * locks as well, only the id cannot be written. */
	bool ro = f < 0 && errno == EACCES;
	if (ro)
		f = open(path, O_RDONLY | O_CLOEXEC);
	if (f < 0)
		return -errno;
	/* flock, not fcntl: a process's fcntl locks vanish when it closes any descriptor
	 * of the file, and flock locks belong to this description alone. */
	while (flock(f, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;
		if (e == EINTR)
			continue;
		if (e == EWOULDBLOCK)
			*holder = lock_holder(f);
		close(f);
		return -e;
	}
	char b[24];
	int n = snprintf(b, sizeof(b), "%ld\n", (long)getpid());
	if (!ro && (ftruncate(f, 0) != 0 || pwrite(f, b, (size_t)n, 0) != n)) {
		int e = errno ? errno : EIO;
		close(f);
		return -e;
	}
	*fd = f;
	return 0;
}

void floe_fs_unlock(int fd)
{
	if (fd >= 0)
		close(fd);
}

int floe_fs_space(const char *path, uint64_t *avail, uint64_t *total)
{
	struct statvfs v;
	if (statvfs(path, &v) != 0)
		return -errno;
	*avail = (uint64_t)v.f_bavail * v.f_frsize;
	*total = (uint64_t)v.f_blocks * v.f_frsize;
	return 0;
}

int floe_fs_nofile_limit(uint64_t *soft, uint64_t *hard)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -errno;
	*soft = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	*hard = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_max;
	return 0;
}

int floe_fs_raise_nofile(uint64_t want, uint64_t *now)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return -errno;
	if (rl.rlim_cur != RLIM_INFINITY && (uint64_t)rl.rlim_cur < want) {
		rlim_t to = (rlim_t)want;
		if (rl.rlim_max != RLIM_INFINITY && to > rl.rlim_max)
			to = rl.rlim_max;
		if (to > rl.rlim_cur) {
			struct rlimit nl = {to, rl.rlim_max};
			if (setrlimit(RLIMIT_NOFILE, &nl) == 0)
				rl.rlim_cur = to;
		}
	}
	*now = rl.rlim_cur == RLIM_INFINITY ? UINT64_MAX : (uint64_t)rl.rlim_cur;
	return 0;
}
