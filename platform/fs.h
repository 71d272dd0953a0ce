/* File system access for the rest of floe: durable whole-file replacement and exclusive
 * creation, small-file reads, directory helpers, a streaming writer and plain read access
 * for tailing. Every function returns 0 (or a documented count/flag) or -errno. The
 * system calls that matter for durability go through a table that tests can override
 * (floe_fs_set_faults) to inject EIO, ENOSPC or short writes. */
#ifndef FLOE_PLATFORM_FS_H
#define FLOE_PLATFORM_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct floe_alloc;

/* Replaces path with exactly data[0..len): writes a temp file in the same directory,
 * fsyncs it, renames it over path and fsyncs the directory. On failure path is untouched
 * and the temp file is removed. */
int floe_fs_write_atomic(const char *path, const void *data, size_t len);
/* As floe_fs_write_atomic, with the content given as n pieces written in order (a header
 * and a payload without first copying them together). */
struct floe_fs_piece {
	const void *p;
	size_t n;
};
int floe_fs_write_atomicv(const char *path, const struct floe_fs_piece *pieces, size_t n);

/* Creates path with exactly data[0..len), or fails with -EEXIST when path exists, also
 * when several processes race for it: the content goes to a unique temp file which is
 * fsynced and then link()ed to path, so readers never see a partial file. */
int floe_fs_create_excl(const char *path, const void *data, size_t len);

/* Reads a whole file into a new buffer from a (*data, owned by the caller, free with
 * floe_free(a, *data); it has one extra NUL byte after *len bytes). -EFBIG when the file
 * holds more than max bytes, -ENOENT when absent, FLOE_ENOMEM when a refuses the memory
 * (the agent's budget counts what it reads). On failure *data is left untouched. */
int floe_fs_read_file(struct floe_alloc *a, const char *path, size_t max, void **data,
		      size_t *len);

/* mkdir -p with mode 0755; existing directories are fine. */
int floe_fs_mkdirs(const char *path);
/* fsyncs a directory so that entries created, renamed or removed in it are durable. */
int floe_fs_fsync_dir(const char *dir);
/* 1 if path exists, 0 if not, -errno when that cannot be told. */
int floe_fs_exists(const char *path);
/* Removes a file; an absent file is -ENOENT. */
int floe_fs_unlink(const char *path);
/* rename(2), then fsyncs the directories of both names. */
int floe_fs_rename(const char *from, const char *to);
/* Copies from into to durably (temp file in to's directory, fsync, rename, fsync dir),
 * for moves across file systems. from is left in place. */
int floe_fs_copy(const char *from, const char *to);
/* As floe_fs_copy, but creates to only if it does not exist (-EEXIST otherwise, also when
 * several processes race for it): the copy is link()ed into place, never renamed over. */
int floe_fs_copy_excl(const char *from, const char *to);
/* Calls fn(ctx, name) for each entry of dir except "." and "..", in bytewise name order
 * (the names are held in memory from a meanwhile). A non-zero return of fn stops the walk
 * and is returned. */
int floe_fs_list(struct floe_alloc *a, const char *dir, int (*fn)(void *ctx, const char *name),
		 void *ctx);

/* A file written sequentially (spool fragments, exports). */
struct floe_file;
/* Creates or truncates path (mode 0644). *out is owned by the caller: floe_file_close. */
int floe_file_create(const char *path, struct floe_file **out);
/* Writes all of p[0..n), retrying short writes and EINTR. */
int floe_file_write(struct floe_file *f, const void *p, size_t n);
int floe_file_sync(struct floe_file *f);
/* Closes and frees f (NULL is fine); returns the error of close(2), if any. */
int floe_file_close(struct floe_file *f);
/* Bytes written so far. */
uint64_t floe_file_size(const struct floe_file *f);

/* Read access for tailing: plain descriptors, so that the caller controls how many are
 * open. */
struct floe_fs_stat {
	uint64_t dev;
	uint64_t ino;
	uint64_t size;
	uint64_t nlink; /* 0 once an open file has been deleted */
	bool regular;	/* a regular file (not a FIFO, device or directory) */
	bool dir;	/* a directory */
	int64_t mtime_us; /* last modification, µs since the epoch */
};
/* stat(2) of path (following symlinks). */
int floe_fs_stat(const char *path, struct floe_fs_stat *st);
/* Opens path read-only, close-on-exec and non-blocking (a FIFO never blocks the caller).
 * *fd is owned by the caller: floe_fs_close. */
int floe_fs_open_read(const char *path, int *fd);
int floe_fs_fstat(int fd, struct floe_fs_stat *st);
/* Reads up to n bytes at offset off; *got = 0 at end of file. Retries EINTR. */
int floe_fs_pread(int fd, void *p, size_t n, uint64_t off, size_t *got);
int floe_fs_close(int fd);
/* Takes the exclusive lock on path (created with mode 0644 if absent) for as long as *fd
 * stays open, and writes this process's id into it. The kernel drops the lock when the
 * process dies, so a lock is never stale. -EWOULDBLOCK when another open description
 * holds it: *holder is then the id written in the file (0 if it cannot be read). *fd is
 * owned by the caller: floe_fs_unlock. */
int floe_fs_lock(const char *path, int *fd, long *holder);
/* Releases a lock of floe_fs_lock (closes fd; -1 is fine). */
void floe_fs_unlock(int fd);
/* The bytes an unprivileged writer may still use (*avail) and the size (*total) of the
 * file system that holds path. */
int floe_fs_space(const char *path, uint64_t *avail, uint64_t *total);
/* The process's limit on open descriptors (RLIMIT_NOFILE): *soft now, *hard the most it
 * may be raised to. */
int floe_fs_nofile_limit(uint64_t *soft, uint64_t *hard);
/* Raises the soft limit on open descriptors towards want (never above the hard limit,
 * never lowers it); *now gets the limit in force afterwards. */
int floe_fs_raise_nofile(uint64_t want, uint64_t *now);

/* Test hook (SQLite os_unix style): the system calls fs.c makes for writes, fsync,
 * rename, link, pread and opening files to read. A NULL member, or f == NULL, means the real call. The hooks
 * follow the system call convention (return -1 and set errno). Process-wide and not
 * thread-safe: for tests only. The table is copied. */
struct floe_fs_faults {
	ssize_t (*write)(int fd, const void *p, size_t n);
	int (*fsync)(int fd);
	int (*rename)(const char *from, const char *to);
	int (*link)(const char *from, const char *to);
	ssize_t (*pread)(int fd, void *p, size_t n, int64_t off);
	int (*open_read)(const char *path); /* floe_fs_open_read's open(2) */
};
void floe_fs_set_faults(const struct floe_fs_faults *f);

#endif
