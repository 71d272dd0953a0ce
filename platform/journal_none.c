/* A build without libsystemd: no journal (platform/journal.h). */
#include "platform/journal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool floe_journal_supported(void)
{
	return false;
}

int floe_journal_open(const char *dir, struct floe_journal **out, char *err, size_t cap)
{
	(void)dir;
	(void)out;
	snprintf(err, cap, "this floe was built without the systemd journal (libsystemd)");
	return -ENOTSUP;
}

void floe_journal_close(struct floe_journal *j)
{
	(void)j;
}

int floe_journal_add_match(struct floe_journal *j, const char *m, size_t len)
{
	(void)j, (void)m, (void)len;
	return -ENOTSUP;
}

int floe_journal_seek_head(struct floe_journal *j)
{
	(void)j;
	return -ENOTSUP;
}

int floe_journal_seek_tail(struct floe_journal *j)
{
	(void)j;
	return -ENOTSUP;
}

int floe_journal_seek_after(struct floe_journal *j, const char *cursor)
{
	(void)j, (void)cursor;
	return -ENOTSUP;
}

int floe_journal_next(struct floe_journal *j)
{
	(void)j;
	return -ENOTSUP;
}

int floe_journal_field(struct floe_journal *j, const char *name, const void **p, size_t *len)
{
	(void)j, (void)name, (void)p, (void)len;
	return -ENOTSUP;
}

void floe_journal_fields_restart(struct floe_journal *j)
{
	(void)j;
}

int floe_journal_fields_next(struct floe_journal *j, const char **name, size_t *nlen,
			     const void **val, size_t *vlen)
{
	(void)j, (void)name, (void)nlen, (void)val, (void)vlen;
	return 0;
}

int floe_journal_realtime_us(struct floe_journal *j, int64_t *us)
{
	(void)j, (void)us;
	return -ENOTSUP;
}

int floe_journal_monotonic_us(struct floe_journal *j, uint64_t *us, char boot[33])
{
	(void)j, (void)us, (void)boot;
	return -ENOTSUP;
}

int floe_journal_cursor(struct floe_journal *j, char *buf, size_t cap)
{
	(void)j, (void)buf, (void)cap;
	return -ENOTSUP;
}

int floe_journal_fd(struct floe_journal *j)
{
	(void)j;
	return -ENOTSUP;
}

void floe_journal_process(struct floe_journal *j)
{
	(void)j;
}

int floe_journal_bad_files(const char *dir, void (*fn)(void *ctx, const char *path, int err),
			   void *ctx)
{
	(void)dir, (void)fn, (void)ctx;
	return -ENOTSUP;
}

void floe_journal_self(struct floe_journal_self *out)
{
	memset(out, 0, sizeof(*out));
}
