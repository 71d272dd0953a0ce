/* The journal through libsystemd (platform/journal.h). */
#include "platform/journal.h"

#include "formats/base/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-journal.h>

struct floe_journal {
	sd_journal *j;
};

bool floe_journal_supported(void)
{
	return true;
}

int floe_journal_open(const char *dir, struct floe_journal **out, char *err, size_t cap)
{
	struct floe_journal *fj = floe_calloc(NULL, 1, sizeof(*fj));
	if (!fj) {
		snprintf(err, cap, "out of memory");
		return -ENOMEM;
	}
	int rc = dir ? sd_journal_open_directory(&fj->j, dir, 0)
		     : sd_journal_open(&fj->j, SD_JOURNAL_LOCAL_ONLY);
	if (rc < 0) {
		snprintf(err, cap, "cannot open the journal%s%s: %s", dir ? " in " : "",
			 dir ? dir : "", strerror(-rc));
		floe_free(NULL, fj);
		return rc;
	}
	/* Fields up to 64 KiB whole; longer ones are cut by the library (its default). */
	(void)sd_journal_set_data_threshold(fj->j, 64 * 1024);
	*out = fj;
	return 0;
}

void floe_journal_close(struct floe_journal *j)
{
	if (!j)
		return;
	sd_journal_close(j->j);
	floe_free(NULL, j);
}

int floe_journal_add_match(struct floe_journal *j, const char *m, size_t len)
{
	const char *eq = memchr(m, '=', len);
	if (!eq || eq == m)
		return -EINVAL;
	return sd_journal_add_match(j->j, m, len);
}

int floe_journal_seek_head(struct floe_journal *j)
{
	return sd_journal_seek_head(j->j);
}

int floe_journal_seek_tail(struct floe_journal *j)
{
	/* After the tail, the next entry is the first one written from now on; stepping
	 * back once and forward again lands there (sd-journal's own idiom). */
	int rc = sd_journal_seek_tail(j->j);
	if (rc >= 0 && sd_journal_previous(j->j) < 0)
		rc = -EIO;
	return rc < 0 ? rc : 0;
}

int floe_journal_seek_after(struct floe_journal *j, const char *cursor)
{
	int rc = sd_journal_seek_cursor(j->j, cursor);
	if (rc < 0)
		return rc;
	/* Seeking to a cursor places before its entry: step onto it, and if it is the very
	 * entry, the next call moves past it. If it is gone, step back so the entry after
	 * where it was comes next. */
	rc = sd_journal_next(j->j);
	if (rc > 0 && sd_journal_test_cursor(j->j, cursor) <= 0)
		(void)sd_journal_previous(j->j);
	return rc < 0 ? rc : 0;
}

int floe_journal_next(struct floe_journal *j)
{
	int rc = sd_journal_next(j->j);
	return rc < 0 ? rc : (rc > 0 ? 1 : 0);
}

int floe_journal_field(struct floe_journal *j, const char *name, const void **p, size_t *len)
{
	const void *d;
	size_t n;
	int rc = sd_journal_get_data(j->j, name, &d, &n);
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
	sd_journal_restart_data(j->j);
}

int floe_journal_fields_next(struct floe_journal *j, const char **name, size_t *nlen,
			     const void **val, size_t *vlen)
{
	const void *d;
	size_t n;
	for (;;) {
		int rc = sd_journal_enumerate_data(j->j, &d, &n);
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
	int rc = sd_journal_get_realtime_usec(j->j, &t);
	if (rc < 0)
		return rc;
	*us = (int64_t)t;
	return 0;
}

int floe_journal_cursor(struct floe_journal *j, char *buf, size_t cap)
{
	char *c = NULL;
	int rc = sd_journal_get_cursor(j->j, &c);
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
	return sd_journal_get_fd(j->j);
}

void floe_journal_process(struct floe_journal *j)
{
	(void)sd_journal_process(j->j);
}
