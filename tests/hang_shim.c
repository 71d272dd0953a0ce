/* A hung file system as a test wants it, preloaded (LD_PRELOAD) into floe; not part of
 * floe. While the file FLOE_TEST_HANG_FILE exists, fsync and fdatasync of a file or
 * directory under FLOE_TEST_HANG_DIR never return (they wait for the file to go, at most
 * an hour), as on a local warehouse on an NFS mount whose server went away; the first
 * such call creates FLOE_TEST_HANG_FILE.hung, so that the test knows a thread is stuck.
 * FLOE_TEST_MONO_FILE=PATH shifts CLOCK_MONOTONIC forward by the seconds PATH holds, so
 * that a test reaches bounds of minutes in a moment (tests/integration/
 * test_commit_stuck.sh). The wall clock is left as it is. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int (*real_clock_gettime)(clockid_t, struct timespec *);

/* The offset in seconds, read with open and read: no allocation, since a sanitizer's
 * allocator reads CLOCK_MONOTONIC itself (fopen's malloc from here deadlocked ASan's
 * allocator refill on its own lock). */
static long offset_s(void)
{
	const char *name = getenv("FLOE_TEST_MONO_FILE");
	if (!name)
		return 0;
	char buf[32];
	ssize_t n = -1;
	int fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

int clock_gettime(clockid_t c, struct timespec *ts)
{
	if (!real_clock_gettime)
		real_clock_gettime =
		    (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
	int rc = real_clock_gettime(c, ts);
	if (rc == 0 && c == CLOCK_MONOTONIC)
		ts->tv_sec += offset_s();
	return rc;
}

/* Waits while the trigger exists, if fd is under the hung directory. */
static void maybe_hang(int fd)
{
	const char *dir = getenv("FLOE_TEST_HANG_DIR"), *trig = getenv("FLOE_TEST_HANG_FILE");
	if (!dir || !trig || access(trig, F_OK) != 0)
		return;
	char link[64], path[4096];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return;
	path[n] = '\0';
	if (strncmp(path, dir, strlen(dir)) != 0)
		return;
	char mark[4200];
	snprintf(mark, sizeof(mark), "%s.hung", trig);
	int m = open(mark, O_WRONLY | O_CREAT, 0644);
	if (m >= 0)
		close(m);
	for (int i = 0; i < 36000 && access(trig, F_OK) == 0; i++)
		usleep(100000);
}

int fsync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	maybe_hang(fd);
	return real(fd);
}

int fdatasync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fdatasync");
	maybe_hang(fd);
	return real(fd);
}
