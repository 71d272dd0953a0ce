/* The journal through libsystemd (platform/journal.h), loaded when the first journal
 * input opens. Linking libsystemd puts it and its closure (libgcrypt, libgpg-error,
 * liblzma, liblz4, libcap: about 0.6 MiB of resident memory measured in an idle agent)
 * into every floe, also one that only tails files. So the functions below call
 * sd-journal through pointers that floe_journal_open resolves once (platform/dl.h); only
 * the headers of libsystemd are needed to build. A missing library or function fails
 * floe_journal_open with the loader's reason; the other functions take an open journal,
 * so they are reached only once the library is there. */
#include "platform/journal.h"

#include "formats/base/alloc.h"
#include "platform/dl.h"
#include "platform/fs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-journal.h>

struct floe_journal {
	sd_journal *j;
};

/* The soname of libsystemd since systemd 209, when sd-journal moved into it. */
#define LIBSYSTEMD "libsystemd.so.0"

static struct {
	__typeof__(sd_journal_open) *open;
	__typeof__(sd_journal_open_directory) *open_directory;
	__typeof__(sd_journal_open_files) *open_files;
	__typeof__(sd_journal_set_data_threshold) *set_data_threshold;
	__typeof__(sd_journal_close) *close;
	__typeof__(sd_journal_add_match) *add_match;
	__typeof__(sd_journal_seek_head) *seek_head;
	__typeof__(sd_journal_seek_tail) *seek_tail;
	__typeof__(sd_journal_seek_cursor) *seek_cursor;
	__typeof__(sd_journal_test_cursor) *test_cursor;
	__typeof__(sd_journal_previous) *previous;
	__typeof__(sd_journal_next) *next;
	__typeof__(sd_journal_get_data) *get_data;
	__typeof__(sd_journal_restart_data) *restart_data;
	__typeof__(sd_journal_enumerate_data) *enumerate_data;
	__typeof__(sd_journal_get_realtime_usec) *get_realtime_usec;
	__typeof__(sd_journal_get_monotonic_usec) *get_monotonic_usec;
	__typeof__(sd_journal_get_cursor) *get_cursor;
	__typeof__(sd_journal_get_fd) *get_fd;
	__typeof__(sd_journal_process) *process;
} sd;
static struct floe_dl_once lib = FLOE_DL_ONCE_INIT;

/* Resolves every function or none (sd stays zero, err says why). */
static int load(char *err, size_t cap)
{
	const struct floe_dl_sym syms[] = {
	    {"sd_journal_open", &sd.open},
	    {"sd_journal_open_directory", &sd.open_directory},
	    {"sd_journal_open_files", &sd.open_files},
	    {"sd_journal_set_data_threshold", &sd.set_data_threshold},
	    {"sd_journal_close", &sd.close},
	    {"sd_journal_add_match", &sd.add_match},
	    {"sd_journal_seek_head", &sd.seek_head},
	    {"sd_journal_seek_tail", &sd.seek_tail},
	    {"sd_journal_seek_cursor", &sd.seek_cursor},
	    {"sd_journal_test_cursor", &sd.test_cursor},
	    {"sd_journal_previous", &sd.previous},
	    {"sd_journal_next", &sd.next},
	    {"sd_journal_get_data", &sd.get_data},
	    {"sd_journal_restart_data", &sd.restart_data},
	    {"sd_journal_enumerate_data", &sd.enumerate_data},
	    {"sd_journal_get_realtime_usec", &sd.get_realtime_usec},
	    {"sd_journal_get_monotonic_usec", &sd.get_monotonic_usec},
	    {"sd_journal_get_cursor", &sd.get_cursor},
	    {"sd_journal_get_fd", &sd.get_fd},
	    {"sd_journal_process", &sd.process},
	};
	return floe_dl_load(LIBSYSTEMD, syms, sizeof(syms) / sizeof(syms[0]), err, cap);
}

bool floe_journal_supported(void)
{
	return true;
}

int floe_journal_open(const char *dir, struct floe_journal **out, char *err, size_t cap)
{
	char why[320];
	if (floe_dl_once(&lib, load, why, sizeof(why))) {
		snprintf(err, cap, "%s: the journal input needs libsystemd (Debian: the "
			 "libsystemd0 package)", why);
		return -ENOENT;
	}
	struct floe_journal *fj = floe_calloc(NULL, 1, sizeof(*fj));
	if (!fj) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	int rc = dir ? sd.open_directory(&fj->j, dir, 0)
		     : sd.open(&fj->j, SD_JOURNAL_LOCAL_ONLY);
	if (rc < 0) {
		snprintf(err, cap, "cannot open the journal%s%s: %s", dir ? " in " : "",
			 dir ? dir : "", strerror(-rc));
		floe_free(NULL, fj);
		return rc;
	}
	/* Fields up to 64 KiB whole; longer ones are cut by the library (its default). */
	(void)sd.set_data_threshold(fj->j, 64 * 1024);
	*out = fj;
	return 0;
}

void floe_journal_close(struct floe_journal *j)
{
	if (!j)
		return;
	sd.close(j->j);
	floe_free(NULL, j);
}

int floe_journal_add_match(struct floe_journal *j, const char *m, size_t len)
{
	const char *eq = memchr(m, '=', len);
	if (!eq || eq == m)
		return -EINVAL;
	return sd.add_match(j->j, m, len);
}

int floe_journal_seek_head(struct floe_journal *j)
{
	return sd.seek_head(j->j);
}

int floe_journal_seek_tail(struct floe_journal *j)
{
	/* After the tail, the next entry is the first one written from now on; stepping
	 * back once and forward again lands there (sd-journal's own idiom). */
	int rc = sd.seek_tail(j->j);
	if (rc >= 0 && sd.previous(j->j) < 0)
		rc = -EIO;
	return rc < 0 ? rc : 0;
}

int floe_journal_seek_after(struct floe_journal *j, const char *cursor)
{
	int rc = sd.seek_cursor(j->j, cursor);
	if (rc < 0)
		return rc;
	/* Seeking to a cursor places before its entry: step onto it, and if it is the very
	 * entry, the next call moves past it. If it is gone, step back so the entry after
	 * where it was comes next. */
	rc = sd.next(j->j);
	if (rc > 0 && sd.test_cursor(j->j, cursor) <= 0)
		(void)sd.previous(j->j);
	return rc < 0 ? rc : 0;
}

int floe_journal_next(struct floe_journal *j)
{
	int rc = sd.next(j->j);
	return rc < 0 ? rc : (rc > 0 ? 1 : 0);
}

int floe_journal_field(struct floe_journal *j, const char *name, const void **p, size_t *len)
{
	const void *d;
	size_t n;
	int rc = sd.get_data(j->j, name, &d, &n);
	if (rc == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	size_t skip = strlen(name) + 1; /* "NAME=" */
	if (n < skip)
		return 0;
	*p = (const char *)d + skip;
	*len = n - skip;
	return 1;
}

void floe_journal_fields_restart(struct floe_journal *j)
{
	sd.restart_data(j->j);
}

int floe_journal_fields_next(struct floe_journal *j, const char **name, size_t *nlen,
			     const void **val, size_t *vlen)
{
	const void *d;
	size_t n;
	for (;;) {
		int rc = sd.enumerate_data(j->j, &d, &n);
		if (rc <= 0)
			return rc;
		const char *eq = memchr(d, '=', n);
		if (!eq)
			continue; /* not a field */
		*name = d;
		*nlen = (size_t)(eq - (const char *)d);
		*val = eq + 1;
		*vlen = n - *nlen - 1;
		return 1;
	}
}

int floe_journal_realtime_us(struct floe_journal *j, int64_t *us)
{
	uint64_t t;
	int rc = sd.get_realtime_usec(j->j, &t);
	if (rc < 0)
		return rc;
	*us = (int64_t)t;
	return 0;
}

int floe_journal_monotonic_us(struct floe_journal *j, uint64_t *us, char boot[33])
{
	sd_id128_t id;
	int rc = sd.get_monotonic_usec(j->j, us, &id);
	if (rc < 0)
		return rc;
	for (int i = 0; i < 16; i++)
		snprintf(boot + 2 * i, 3, "%02x", id.bytes[i]);
	return 0;
}

int floe_journal_cursor(struct floe_journal *j, char *buf, size_t cap)
{
	char *c = NULL;
	int rc = sd.get_cursor(j->j, &c);
	if (rc < 0)
		return rc;
	size_t n = strlen(c);
	if (n + 1 > cap)
		rc = -ENOSPC;
	else
		memcpy(buf, c, n + 1);
	free(c);
	return rc < 0 ? rc : 0;
}

int floe_journal_fd(struct floe_journal *j)
{
	return sd.get_fd(j->j);
}

void floe_journal_process(struct floe_journal *j)
{
	(void)sd.process(j->j);
}

/* One directory's files for floe_journal_bad_files (and its subdirectories, once). */
struct bad_scan {
	const char *dir;
	bool descend;
	void (*fn)(void *ctx, const char *path, int err);
	void *ctx;
	int found;
};

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), k = strlen(tail);
	return n >= k && strcmp(s + n - k, tail) == 0;
}

static int scan_dir(const char *dir, bool descend, struct bad_scan *b);

static int on_file(void *ctx, const char *name)
{
	struct bad_scan *b = ctx;
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/%s", b->dir, name);
	if (n < 0 || (size_t)n >= sizeof(path) || name[0] == '.')
		return 0;
	if (!ends_with(name, ".journal") && !ends_with(name, ".journal~")) {
		struct floe_fs_stat st;
		if (b->descend && floe_fs_stat(path, &st) == 0 && !st.regular)
			(void)scan_dir(path, false, b);
		return 0;
	}
	const char *paths[] = {path, NULL};
	sd_journal *j = NULL;
	int rc = sd.open_files(&j, paths, 0);
	if (rc < 0) {
		b->found++;
		b->fn(b->ctx, path, rc);
	} else {
		sd.close(j);
	}
	return 0;
}

static int scan_dir(const char *dir, bool descend, struct bad_scan *b)
{
	const char *was = b->dir;
	bool was_descend = b->descend;
	b->dir = dir;
	b->descend = descend;
	int rc = floe_fs_list(NULL, dir, on_file, b);
	b->dir = was;
	b->descend = was_descend;
	return rc < 0 ? rc : 0;
}

int floe_journal_bad_files(const char *dir, void (*fn)(void *ctx, const char *path, int err),
			   void *ctx)
{
	if (floe_dl_once(&lib, load, NULL, 0))
		return -ENOENT;
	struct bad_scan b = {.fn = fn, .ctx = ctx};
	if (dir) {
		int rc = scan_dir(dir, false, &b);
		if (rc < 0)
			return rc;
	} else {
		(void)scan_dir("/var/log/journal", true, &b);
		(void)scan_dir("/run/log/journal", true, &b);
	}
	return b.found;
}

/* The first line of file into buf (its LF dropped); "" when it cannot be read. */
static void first_line(const char *file, char *buf, size_t cap)
{
	buf[0] = '\0';
	FILE *f = fopen(file, "re");
	if (!f)
		return;
	if (fgets(buf, (int)cap, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

static uint64_t clock_us(clockid_t c)
{
	struct timespec ts;
	if (clock_gettime(c, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* This boot's id (the kernel writes it with dashes, the journal without) and the
 * process's start on the monotonic clock. /proc/self/stat gives the start in clock
 * ticks since boot on the boot-time clock, which also counts suspended time: the age
 * it gives, taken from the monotonic clock's now, errs early after a suspend, and an
 * earlier start only takes in entries of a process that held this PID before. */
static void self_life(struct floe_journal_self *out)
{
	char line[64];
	first_line("/proc/sys/kernel/random/boot_id", line, sizeof(line));
	size_t n = 0;
	for (const char *p = line; *p && n < 32; p++)
		if (*p != '-')
			out->boot[n++] = *p;
	out->boot[n == 32 ? n : 0] = '\0';
	char stat[1024];
	first_line("/proc/self/stat", stat, sizeof(stat));
	const char *f = strrchr(stat, ')'); /* the name may hold spaces and parentheses */
	long tick = sysconf(_SC_CLK_TCK);
	unsigned long long start = 0;
	/* After ')': state is field 3, starttime field 22. */
	if (!f || tick <= 0 ||
	    sscanf(f + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
		   "%*d %*d %llu", &start) != 1) {
		out->boot[0] = '\0'; /* the life unknown: the PID alone decides */
		return;
	}
	uint64_t start_us = (uint64_t)start * (1000000u / (uint64_t)tick);
	uint64_t now = clock_us(CLOCK_BOOTTIME), mono = clock_us(CLOCK_MONOTONIC);
	uint64_t age = now > start_us ? now - start_us : 0;
	out->since_us = mono > age ? mono - age : 0;
}

void floe_journal_self(struct floe_journal_self *out)
{
	memset(out, 0, sizeof(*out));
	out->pid = (long)getpid();
	first_line("/proc/self/comm", out->comm, sizeof(out->comm));
	/* The unit is the last component of the process's cgroup when it names a service
	 * (cgroup v2: "0::/system.slice/floe.service"). */
	char line[512];
	first_line("/proc/self/cgroup", line, sizeof(line));
	const char *last = strrchr(line, '/');
	if (last && ends_with(last + 1, ".service"))
		snprintf(out->unit, sizeof(out->unit), "%s", last + 1);
	self_life(out);
}
