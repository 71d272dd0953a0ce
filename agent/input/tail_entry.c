/* The tail's file entries, below the rest of agent/input/tail*.c: hashing, reading at an
 * offset, the hash of the bytes before a position, the exclude globs, and the list of
 * entries. Every other tail file calls these; these call none of them. */
#include "tail_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/glob.h"

#include <string.h>

uint64_t floe_tail_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int64_t floe_tail_now(const struct floe_tail *t)
{
	return t->clock_ms(t->clock_ctx);
}

int64_t floe_tail_mono(const struct floe_tail *t)
{
	return t->mono_ms(t->clock_ctx);
}

/* Reads up to n bytes at off, fewer only at end of file. */
int floe_tail_read_full(int fd, uint8_t *p, size_t n, uint64_t off, size_t *got)
{
	size_t total = 0;
	while (total < n) {
		size_t g = 0;
		int rc = floe_fs_pread(fd, p + total, n - total, off + total, &g);
		if (rc)
			return rc;
		if (g == 0)
			break;
		total += g;
	}
	*got = total;
	return 0;
}

int floe_tail_prehash(const struct tfile *f, uint64_t *hash, uint32_t *len)
{
	size_t k = f->pos < FLOE_TAIL_PREHASH ? (size_t)f->pos : FLOE_TAIL_PREHASH;
	if (f->ph_ok && f->ph_pos == f->pos) {
		*hash = f->ph_hash;
		*len = f->ph_len;
		return 0;
	}
	if (f->buf && f->start >= k) {
		*hash = floe_tail_hash(f->buf + f->start - k, k);
		*len = (uint32_t)k;
		return 0;
	}
	*hash = 0;
	*len = 0;
	if (f->fd < 0)
		return 0;
	uint8_t tmp[FLOE_TAIL_PREHASH];
	size_t got = 0;
	int rc = floe_tail_read_full(f->fd, tmp, k, f->pos - k, &got);
	if (rc)
		return rc;
	if (got == k) {
		*hash = floe_tail_hash(tmp, k);
		*len = (uint32_t)k;
	}
	return 0;
}

/* Caches the pre-position hash before the buffer or the descriptor goes away. */
void floe_tail_cache_prehash(struct tfile *f)
{
	uint64_t h;
	uint32_t l;
	if (floe_tail_prehash(f, &h, &l) == 0 && (l > 0 || f->pos == 0)) {
		f->ph_hash = h;
		f->ph_len = l;
		f->ph_pos = f->pos;
		f->ph_ok = true;
	}
}

bool floe_tail_excluded(const struct floe_tail *t, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	for (size_t i = 0; i < t->nexclude; i++)
		if (floe_fnmatch(t->exclude[i], path) || floe_fnmatch(t->exclude[i], base))
			return true;
	return false;
}

void floe_tail_entry_free(struct floe_tail *t, struct tfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0) {
		floe_fs_close(f->fd);
		t->nopen--;
	}
	floe_free(t->a, f->buf);
	floe_free(t->a, f->path);
	if (f->real) {
		floe_free(t->a, f->real);
		t->nreal--;
	}
	floe_free(t->a, f);
}

int floe_tail_entry_push(struct floe_tail *t, struct tfile *f)
{
	if (t->nfiles == t->capfiles) {
		size_t cap = t->capfiles ? t->capfiles * 2 : 8;
		struct tfile **p = floe_realloc(t->a, t->files, cap * sizeof(*p));
		if (!p)
			return FLOE_ENOMEM;
		t->files = p;
		t->capfiles = cap;
	}
	/* Entries pushed are files first seen (restored ones are adopted whole): their
	 * position was chosen here. */
	f->unsaved = t->confirm_new;
	t->files[t->nfiles++] = f;
	return 0;
}

/* Removes the entries marked by a NULL slot. */
void floe_tail_compact(struct floe_tail *t)
{
	size_t j = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i])
			t->files[j++] = t->files[i];
	t->nfiles = j;
	if (t->rr >= j)
		t->rr = 0;
}
