/* The recording of durable file-system operations (see fs_record.h). The log is written
 * with plain write(2) on its own descriptor, never through fs.c (it would record itself),
 * under one mutex, so operations from the main thread and the committer keep their order.
 * Each operation's record goes out in one write(2) to a log opened O_APPEND, so that two
 * processes recording into one log (`floe maintain` beside a running agent) never
 * interleave within a record.
 * A descriptor's path and write offset are kept from its create to its close, indexed by
 * the descriptor's number. */
#ifndef _FILE_OFFSET_BITS
#define _FILE_OFFSET_BITS 64
#endif
#include "fs_record.h"

#include "formats/base/hex.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Descriptors above this are not tracked (their writes are logged without a path, which
 * the generator refuses): floe keeps far fewer files open for writing. */
#define MAX_FDS 4096

struct tracked {
	char *path;
	uint64_t off;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static int log_fd = -1;
static struct tracked *fds;
static char *rec; /* the record being built, under mu */
static size_t rec_n, rec_cap;

/* Appends to the record being built; flush() writes it. */
static void put(const void *p, size_t n)
{
	if (rec_n + n > rec_cap) {
		size_t cap = rec_cap ? rec_cap : 4096;
		while (cap < rec_n + n)
			cap *= 2;
		char *r = realloc(rec, cap);
		if (!r)
			abort(); /* a test's own log: a lost record would make its states wrong */
		rec = r;
		rec_cap = cap;
	}
	memcpy(rec + rec_n, p, n);
	rec_n += n;
}

/* Writes the record built: one write(2), unless the kernel takes it in parts. */
static void flush(void)
{
	const char *c = rec;
	size_t n = rec_n;
	while (n > 0) {
		ssize_t w = write(log_fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			abort();
		c += w;
		n -= (size_t)w;
	}
	rec_n = 0;
}

/* path, escaped, after a space. */
static void put_path(const char *path)
{
	put(" ", 1);
	for (const unsigned char *s = (const unsigned char *)(path ? path : "?"); *s; s++) {
		if (*s <= ' ' || *s == '%' || *s == 0x7f) {
			char e[3] = {'%', floe_hex_char_upper(*s >> 4), floe_hex_char_upper(*s)};
			put(e, 3);
		} else {
			put(s, 1);
		}
	}
}

int floe_fs_record_start(const char *log_path)
{
	int rc = 0;
	pthread_mutex_lock(&mu);
	if (log_fd < 0) {
		fds = calloc(MAX_FDS, sizeof(*fds));
		log_fd = fds ? open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644) : -1;
		if (log_fd < 0) {
			rc = fds ? -errno : -ENOMEM;
			free(fds);
			fds = NULL;
		}
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

void floe_fs_record_stop(void)
{
	pthread_mutex_lock(&mu);
	if (log_fd >= 0) {
		close(log_fd);
		log_fd = -1;
		for (size_t i = 0; i < MAX_FDS; i++)
			free(fds[i].path);
		free(fds);
		fds = NULL;
		free(rec);
		rec = NULL;
		rec_n = rec_cap = 0;
	}
	pthread_mutex_unlock(&mu);
}

int floe_fs_record_from_env(void)
{
#ifdef FLOE_FS_RECORD
	const char *p = getenv("FLOE_FS_RECORD");
	return p && *p ? floe_fs_record_start(p) : 0;
#else
	return 0;
#endif
}

static void track(int fd, const char *path, const char *op)
{
	pthread_mutex_lock(&mu);
	if (log_fd >= 0) {
		if (fd >= 0 && fd < MAX_FDS) {
			free(fds[fd].path);
			fds[fd].path = strdup(path);
			fds[fd].off = 0;
		}
		put(op, strlen(op));
		put_path(path);
		put("\n", 1);
		flush();
	}
	pthread_mutex_unlock(&mu);
}

void floe_fs_rec_create(int fd, const char *path)
{
	track(fd, path, "create");
}

static const char *path_of(int fd)
{
	return fd >= 0 && fd < MAX_FDS && fds[fd].path ? fds[fd].path : "?";
}

void floe_fs_rec_write(int fd, const void *p, unsigned long n)
{
	char head[64];
	pthread_mutex_lock(&mu);
	if (log_fd >= 0) {
		uint64_t off = fd >= 0 && fd < MAX_FDS ? fds[fd].off : 0;
		put("write", 5);
		put_path(path_of(fd));
		int k = snprintf(head, sizeof(head), " %llu %lu\n", (unsigned long long)off, n);
		put(head, (size_t)k);
		put(p, n);
		put("\n", 1);
		flush();
		if (fd >= 0 && fd < MAX_FDS)
			fds[fd].off = off + n;
	}
	pthread_mutex_unlock(&mu);
}

static void fd_op(int fd, const char *op, bool forget)
{
	pthread_mutex_lock(&mu);
	if (log_fd >= 0 && fd >= 0 && fd < MAX_FDS && fds[fd].path) {
		put(op, strlen(op));
		put_path(fds[fd].path);
		put("\n", 1);
		flush();
		if (forget) {
			free(fds[fd].path);
			fds[fd].path = NULL;
		}
	}
	pthread_mutex_unlock(&mu);
}

void floe_fs_rec_fsync(int fd)
{
	fd_op(fd, "fsync", false);
}

void floe_fs_rec_close(int fd)
{
	fd_op(fd, "close", true);
}

void floe_fs_rec_path(const char *op, const char *path, const char *path2)
{
	pthread_mutex_lock(&mu);
	if (log_fd >= 0) {
		put(op, strlen(op));
		put_path(path);
		if (path2)
			put_path(path2);
		put("\n", 1);
		flush();
	}
	pthread_mutex_unlock(&mu);
}

bool floe_fs_rec_skip_fsync(const char *site)
{
#ifdef FLOE_FS_RECORD
	/* Read each time: no setenv runs in floe, and the list is short. */
	const char *list = getenv("FLOE_TEST_SKIP_FSYNC");
	size_t n = strlen(site);
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (len == n && memcmp(p, site, n) == 0)
			return true;
		p = end ? end + 1 : p + len;
	}
	return false;
#else
	(void)site;
	return false;
#endif
}
