/* The tail positions blob: every followed file's identity, position, fingerprint and
 * pre-position hash, written by floe_tail_positions and read back (versions 2 and 3) by
 * floe_tail_restore. */
#include "tail_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <errno.h>
#include <string.h>

#define POS_MAGIC "FLTP"
#define POS_VERSION 3
#define POS_MAX_PATH 4096
/* u32 path length + u64 dev + u64 ino + u64 offset + u32 fp length + u64 fp hash
 * + u32 flags; version 3 adds u32 pre-hash length + u64 pre-hash + u64 gone since. */
#define POS_ENTRY_V2 (4 + 8 + 8 + 8 + 4 + 8 + 4)
#define POS_ENTRY_V3 (POS_ENTRY_V2 + 4 + 8 + 8)
/* Flag: the last line delivered ended without its LF (a partial line flushed at the end
 * of `floe run --once`); an LF that arrives next ends that line and is not a line. */
#define POS_UNTERMINATED 1u

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

/* The blob keeps the time a file went as a wall time (ms since the epoch, 0: present),
 * the only clock that survives a restart; the tail measures it on its monotonic clock.
 * Saved, it is the wall clock now less the age: a step of the wall clock while the file
 * was gone does not age it (at least 1: 0 would mean present). */
static uint64_t gone_wall(const struct floe_tail *t, const struct tfile *f)
{
	int64_t age = floe_tail_mono(t) - f->gone_since;
	int64_t at = floe_tail_now(t) - (age > 0 ? age : 0);
	return at > 0 ? (uint64_t)at : 1;
}

/* Read back, its age is the wall clock now less the time saved, within [0, forget_after]:
 * a time in the future (the clock stepped back since, or a device without a real-time
 * clock started at 1970 again) is taken as now, not as a negative age that would keep the
 * position for as long as the clock stepped back. A step forward while the agent was
 * stopped cannot be told from time passing: it ages the entry. */
static int64_t gone_mono(const struct floe_tail *t, int64_t wall)
{
	int64_t age;
	if (__builtin_sub_overflow(floe_tail_now(t), wall, &age) || age < 0)
		age = 0;
	if (age > t->forget_after)
		age = t->forget_after;
	return floe_tail_mono(t) - age;
}

/* Reads the entry at blob[*off..len) of a version 2 or 3 blob (fixed bytes after the
 * path) into *out (owned) and moves *off past it: 0, FLOE_ECORRUPT or FLOE_ENOMEM. */
static int read_entry(struct floe_tail *t, const uint8_t *blob, size_t len, size_t *off,
		      uint32_t version, struct tfile **out)
{
	size_t fixed = version == 2 ? POS_ENTRY_V2 : POS_ENTRY_V3;
	if (len - *off < 4)
		return FLOE_ECORRUPT;
	uint32_t plen = get_le32(blob + *off);
	*off += 4;
	if (plen == 0 || plen > POS_MAX_PATH || len - *off < (size_t)plen + fixed - 4 ||
	    memchr(blob + *off, 0, plen))
		return FLOE_ECORRUPT;
	struct tfile *f = floe_calloc(t->a, 1, sizeof(*f));
	if (!f || !(f->path = floe_strndup(t->a, (const char *)blob + *off, plen))) {
		floe_free(t->a, f);
		return FLOE_ENOMEM;
	}
	*off += plen;
	const uint8_t *p = blob + *off;
	f->fd = -1;
	f->has_fp = true;
	f->dev = get_le64(p);
	f->ino = get_le64(p + 8);
	f->pos = get_le64(p + 16);
	f->fp_len = get_le32(p + 24);
	f->fp_hash = get_le64(p + 28);
	uint32_t flags = get_le32(p + 36);
	f->unterminated = (flags & POS_UNTERMINATED) != 0;
	if (version >= 3) {
		f->ph_len = get_le32(p + 40);
		f->ph_hash = get_le64(p + 44);
		f->gone_since = (int64_t)get_le64(p + 52);
		f->ph_pos = f->pos;
		f->ph_ok = true;
	}
	*off += fixed - 4;
	*out = f; /* owned by the caller from here, valid or not */
	if (f->fp_len > FLOE_TAIL_FINGERPRINT || f->pos > INT64_MAX ||
	    (flags & ~POS_UNTERMINATED) || f->ph_len > FLOE_TAIL_PREHASH || f->ph_len > f->pos ||
	    f->gone_since < 0)
		return FLOE_ECORRUPT;
	return 0;
}

int floe_tail_restore(struct floe_tail *t, const uint8_t *blob, size_t len)
{
	if (t->scanned)
		return FLOE_EINVAL;
	if (len < 12 || memcmp(blob, POS_MAGIC, 4) != 0)
		return FLOE_ECORRUPT;
	uint32_t version = get_le32(blob + 4);
	if (version != 2 && version != 3)
		return FLOE_ECORRUPT;
	size_t fixed = version == 2 ? POS_ENTRY_V2 : POS_ENTRY_V3;
	uint32_t count = get_le32(blob + 8);
	size_t off = 12;
	/* Every entry takes at least fixed + 1 bytes, which bounds the count by the input
	 * before anything is allocated. */
	if (count > (len - off) / (fixed + 1))
		return FLOE_ECORRUPT;
	struct tfile **v = NULL;
	size_t n = 0;
	int rc = 0;
	if (count && !(v = floe_calloc(t->a, count, sizeof(*v))))
		return FLOE_ENOMEM;
	while (n < count && rc == 0) {
		rc = read_entry(t, blob, len, &off, version, &v[n]);
		n += v[n] != NULL;
	}
	if (rc == 0 && off != len)
		rc = FLOE_ECORRUPT;
	/* Reserve room for all of them first, so that adopting them cannot fail halfway. */
	if (rc == 0 && t->capfiles < t->nfiles + count) {
		struct tfile **p = floe_realloc(t->a, t->files, (t->nfiles + count) * sizeof(*p));
		if (p) {
			t->files = p;
			t->capfiles = t->nfiles + count;
		} else {
			rc = FLOE_ENOMEM;
		}
	}
	if (rc == 0) {
		/* Positions restored twice: the later blob replaces the earlier one. */
		for (size_t i = 0; i < t->nfiles; i++)
			floe_tail_entry_free(t, t->files[i]);
		t->nfiles = 0;
		for (size_t i = 0; i < count; i++) {
			struct tfile *f = v[i];
			f->gone = f->gone_since != 0;
			f->gone_since = f->gone ? gone_mono(t, f->gone_since) : 0;
			t->files[t->nfiles++] = f;
		}
		n = 0; /* adopted */
	}
	for (size_t i = 0; i < n; i++)
		floe_tail_entry_free(t, v[i]);
	floe_free(t->a, v);
	return rc;
}

/* Paths that restore accepts; others (never produced by glob in practice) are left out
 * rather than written into a blob that could not be read back. */
static bool storable(const char *path)
{
	size_t n = strlen(path);
	return n > 0 && n <= POS_MAX_PATH;
}

int floe_tail_hold(struct floe_tail *t, uint64_t file_id, uint64_t offset)
{
	for (size_t i = 0; file_id && i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		if (f->id != file_id)
			continue;
		if (!f->held || offset < f->hold)
			f->hold = offset;
		f->held = true;
		return 0;
	}
	return -ENOENT;
}

void floe_tail_hold_clear(struct floe_tail *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		t->files[i]->held = false;
}

/* The pre-position hash for a held position off < f->pos: from the buffer when it still
 * holds the bytes before off, else from the descriptor; none when the file is closed
 * (restore then only skips that check). */
static int prehash_at(const struct tfile *f, uint64_t off, uint64_t *hash, uint32_t *len)
{
	size_t k = off < FLOE_TAIL_PREHASH ? (size_t)off : FLOE_TAIL_PREHASH;
	uint64_t back = f->pos - off + k; /* bytes from the first hashed one up to pos */
	*hash = 0;
	*len = 0;
	if (f->buf && back <= f->start) {
		*hash = floe_tail_hash(f->buf + (f->start - back), k);
		*len = (uint32_t)k;
		return 0;
	}
	if (f->fd < 0)
		return 0;
	uint8_t tmp[FLOE_TAIL_PREHASH];
	size_t got = 0;
	int rc = floe_tail_read_full(f->fd, tmp, k, off - k, &got);
	if (rc == 0 && got == k) {
		*hash = floe_tail_hash(tmp, k);
		*len = (uint32_t)k;
	}
	return rc;
}

/* One entry of the blob, the fields of version 3. */
struct pos_entry {
	const char *path;
	uint64_t dev, ino, at;
	uint32_t fp_len, flags, ph_len;
	uint64_t fp_hash, ph_hash, gone_since;
};

static int put_entry(struct floe_buf *out, const struct pos_entry *e)
{
	size_t plen = strlen(e->path);
	int rc = floe_buf_put_le32(out, (uint32_t)plen);
	if (!rc)
		rc = floe_buf_append(out, e->path, plen);
	if (!rc)
		rc = floe_buf_put_le64(out, e->dev);
	if (!rc)
		rc = floe_buf_put_le64(out, e->ino);
	if (!rc)
		rc = floe_buf_put_le64(out, e->at);
	if (!rc)
		rc = floe_buf_put_le32(out, e->fp_len);
	if (!rc)
		rc = floe_buf_put_le64(out, e->fp_hash);
	if (!rc)
		rc = floe_buf_put_le32(out, e->flags);
	if (!rc)
		rc = floe_buf_put_le32(out, e->ph_len);
	if (!rc)
		rc = floe_buf_put_le64(out, e->ph_hash);
	if (!rc)
		rc = floe_buf_put_le64(out, e->gone_since);
	return rc;
}

/* f's entry as floe_tail_positions saves it now. */
static int file_entry(const struct floe_tail *t, const struct tfile *f, struct pos_entry *e)
{
	uint64_t ph = 0;
	uint32_t phl = 0;
	/* A held position is a line start before pos: lines after it are read again on
	 * restart, so nothing was delivered without its LF there. */
	bool held = f->held && f->hold < f->pos;
	uint64_t at = held ? f->hold : f->pos;
	if (held) {
		if (prehash_at(f, at, &ph, &phl) != 0) {
			ph = 0;
			phl = 0;
		}
	} else if (f->fd < 0) {
		if (f->ph_ok && f->ph_pos == f->pos) {
			ph = f->ph_hash;
			phl = f->ph_len;
		}
	} else if (floe_tail_prehash(f, &ph, &phl) != 0) {
		/* An unreadable file only loses the extra check on resume. */
		ph = 0;
		phl = 0;
	}
	*e = (struct pos_entry){
	    .path = f->path,
	    .dev = f->dev,
	    .ino = f->ino,
	    .at = at,
	    .fp_len = f->fp_len,
	    .fp_hash = f->fp_hash,
	    .flags = !held && f->unterminated ? POS_UNTERMINATED : 0,
	    .ph_len = phl,
	    .ph_hash = ph,
	    .gone_since = f->present || f->fd >= 0 || !f->gone ? 0 : gone_wall(t, f),
	};
	return 0;
}

static int put_head(struct floe_buf *out, uint64_t count)
{
	if (count > UINT32_MAX)
		return FLOE_ELIMIT;
	int rc = floe_buf_append(out, POS_MAGIC, 4);
	if (!rc)
		rc = floe_buf_put_le32(out, POS_VERSION);
	if (!rc)
		rc = floe_buf_put_le32(out, (uint32_t)count);
	return rc;
}

int floe_tail_positions(const struct floe_tail *t, struct floe_buf *out)
{
	size_t mark = out->len;
	uint64_t count = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		count += storable(t->files[i]->path);
	int rc = put_head(out, count);
	for (size_t i = 0; i < t->nfiles && !rc; i++) {
		struct pos_entry e;
		if (storable(t->files[i]->path) && (rc = file_entry(t, t->files[i], &e)) == 0)
			rc = put_entry(out, &e);
	}
	if (rc)
		out->len = mark;
	return rc;
}

size_t floe_tail_unsaved(const struct floe_tail *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nfiles; i++)
		n += t->files[i]->unsaved;
	return n;
}

void floe_tail_confirm(struct floe_tail *t)
{
	for (size_t i = 0; i < t->nfiles; i++)
		t->files[i]->unsaved = false;
}

static bool is_new(const struct tfile *f)
{
	return f->unsaved && storable(f->path);
}

/* Whether an unsaved file of t has the identity dev, ino. */
static bool replaced(const struct floe_tail *t, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (is_new(t->files[i]) && t->files[i]->dev == dev && t->files[i]->ino == ino)
			return true;
	return false;
}

/* Appends base's entries that no unsaved file replaces, counting them in *count. */
static int put_base(const struct floe_tail *t, const uint8_t *base, size_t len,
		    struct floe_buf *out, uint64_t *count)
{
	if (len < 12 || memcmp(base, POS_MAGIC, 4) != 0)
		return FLOE_ECORRUPT;
	uint32_t version = get_le32(base + 4), n = get_le32(base + 8);
	if (version != 2 && version != 3)
		return FLOE_ECORRUPT;
	size_t off = 12;
	int rc = 0;
	/* read_entry allocates through t's allocator only: the cast does not change t. */
	struct floe_tail *mt = (struct floe_tail *)t;
	for (uint32_t i = 0; i < n && rc == 0; i++) {
		struct tfile *f = NULL;
		if ((rc = read_entry(mt, base, len, &off, version, &f)) == 0 &&
		    !replaced(t, f->dev, f->ino)) {
			struct pos_entry e;
			file_entry(t, f, &e);
			e.gone_since = (uint64_t)f->gone_since; /* as saved: not restored here */
			rc = put_entry(out, &e);
			*count += 1;
		}
		if (f)
			floe_tail_entry_free(mt, f);
	}
	return rc == 0 && off != len ? FLOE_ECORRUPT : rc;
}

int floe_tail_positions_with_new(const struct floe_tail *t, const uint8_t *base, size_t len,
				 struct floe_buf *out)
{
	size_t mark = out->len;
	uint64_t count = 0;
	int rc = put_head(out, 0); /* the count is set at the end */
	if (rc == 0 && len)
		rc = put_base(t, base, len, out, &count);
	for (size_t i = 0; i < t->nfiles && rc == 0; i++) {
		struct pos_entry e;
		if (!is_new(t->files[i]) || (rc = file_entry(t, t->files[i], &e)) != 0)
			continue;
		rc = put_entry(out, &e);
		count++;
	}
	if (rc == 0 && count > UINT32_MAX)
		rc = FLOE_ELIMIT;
	if (rc) {
		out->len = mark;
		return rc;
	}
	uint8_t *c = out->data + mark + 8;
	for (int k = 0; k < 4; k++)
		c[k] = (uint8_t)(count >> (8 * k));
	return 0;
}
