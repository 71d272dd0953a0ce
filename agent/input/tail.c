/* File tailing over platform/fs and platform/glob. Each open file has a bounded buffer
 * holding the bytes read but not yet delivered; buf[start] is the byte at file offset pos,
 * so the position always means "every byte before it was delivered as a line". */
#include "tail.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/fs.h"
#include "platform/glob.h"

#include <errno.h>
#include <string.h>

#define DEFAULT_CHUNK ((size_t)64 * 1024)
#define DEFAULT_MAX_LINE ((size_t)64 * 1024)
#define POS_MAGIC "FLTP"
#define POS_VERSION 2
#define POS_MAX_PATH 4096
/* u32 path length + u64 dev + u64 ino + u64 offset + u32 fp length + u64 fp hash
 * + u32 flags */
#define POS_ENTRY_FIXED (4 + 8 + 8 + 8 + 4 + 8 + 4)
/* Flag: the last line delivered ended without its LF (a partial line flushed at the end
 * of `floe run --once`); an LF that arrives next ends that line and is not a line. */
#define POS_UNTERMINATED 1u

struct tfile {
	char *path; /* owned; the name the file was last seen under */
	int fd;
	uint64_t dev, ino;
	uint64_t pos;	  /* every byte before pos was delivered */
	uint64_t fp_hash; /* hash of the first fp_len bytes */
	uint32_t fp_len;
	uint8_t *buf;	   /* NULL while nothing is held; else t->bufcap bytes */
	size_t start, len; /* held bytes: buf[start .. start+len) = file [pos .. pos+len) */
	bool seen;	   /* found by the scan in progress */
	bool draining;	   /* replaced at its path or gone from the globs: read to the end */
	bool drained_eof;  /* reached end of file since it started draining */
	bool closing;	   /* draining and found at end after a scan: close at the next end */
	bool done;	   /* at end of file for the read call in progress */
	bool in_long;	   /* the last piece delivered was a split of a long line */
	bool unterminated; /* the last line delivered was flushed without its LF */
};

/* A position not attached to an open file: restored and not matched yet, or kept for a
 * file that is gone. */
struct saved {
	char *path;
	uint64_t dev, ino, pos, fp_hash;
	uint32_t fp_len;
	uint32_t flags;
};

struct floe_tail {
	struct floe_alloc *a;
	char **paths, **exclude;
	size_t npaths, nexclude;
	bool start_at_end;
	size_t max_line, chunk, bufcap;
	struct tfile **files;
	size_t nfiles, capfiles;
	struct saved *saved;
	size_t nsaved, capsaved;
	size_t rr;    /* file the next read call starts with */
	bool scanned; /* a scan has run: later discoveries start at 0 */
	struct floe_tail_stats st;
};

/* FNV-1a, 64 bits: the fingerprint only has to tell two files' beginnings apart. */
static uint64_t fp_hash(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

/* Reads up to n bytes at off, fewer only at end of file. */
static int read_full(int fd, uint8_t *p, size_t n, uint64_t off, size_t *got)
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

static bool excluded(const struct floe_tail *t, const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	for (size_t i = 0; i < t->nexclude; i++)
		if (floe_fnmatch(t->exclude[i], path) || floe_fnmatch(t->exclude[i], base))
			return true;
	return false;
}

static void free_strings(struct floe_alloc *a, char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		floe_free(a, v[i]);
	floe_free(a, v);
}

static char **copy_strings(struct floe_alloc *a, const char *const *src, size_t n, int *err)
{
	if (n == 0)
		return NULL;
	char **v = floe_calloc(a, n, sizeof(*v));
	if (!v) {
		*err = FLOE_ENOMEM;
		return NULL;
	}
	for (size_t i = 0; i < n; i++) {
		if (!src[i]) {
			*err = FLOE_EINVAL;
			free_strings(a, v, n);
			return NULL;
		}
		if (!(v[i] = floe_strdup(a, src[i]))) {
			*err = FLOE_ENOMEM;
			free_strings(a, v, n);
			return NULL;
		}
	}
	return v;
}

struct floe_tail *floe_tail_new(struct floe_alloc *a, const struct floe_tail_options *o, int *err)
{
	*err = FLOE_EINVAL;
	if (!o || (o->npaths && !o->paths) || (o->nexclude && !o->exclude))
		return NULL;
	struct floe_tail *t = floe_calloc(a, 1, sizeof(*t));
	if (!t) {
		*err = FLOE_ENOMEM;
		return NULL;
	}
	t->a = a;
	t->start_at_end = o->start_at_end;
	t->max_line = o->max_line_bytes ? o->max_line_bytes : DEFAULT_MAX_LINE;
	t->chunk = o->read_chunk ? o->read_chunk : DEFAULT_CHUNK;
	/* +2: a line of exactly max_line bytes plus its CR LF fits whole. */
	if (__builtin_add_overflow(t->max_line, t->chunk, &t->bufcap) ||
	    __builtin_add_overflow(t->bufcap, (size_t)2, &t->bufcap)) {
		floe_free(a, t);
		return NULL;
	}
	if (o->npaths && !(t->paths = copy_strings(a, o->paths, o->npaths, err)))
		goto fail;
	t->npaths = o->npaths;
	if (o->nexclude && !(t->exclude = copy_strings(a, o->exclude, o->nexclude, err)))
		goto fail;
	t->nexclude = o->nexclude;
	*err = 0;
	return t;
fail:
	floe_tail_free(t);
	return NULL;
}

static void tfile_free(struct floe_tail *t, struct tfile *f)
{
	if (!f)
		return;
	if (f->fd >= 0)
		floe_fs_close(f->fd);
	floe_free(t->a, f->buf);
	floe_free(t->a, f->path);
	floe_free(t->a, f);
}

static void saved_free_all(struct floe_alloc *a, struct saved *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		floe_free(a, s[i].path);
	floe_free(a, s);
}

void floe_tail_free(struct floe_tail *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfiles; i++)
		tfile_free(t, t->files[i]);
	floe_free(t->a, t->files);
	saved_free_all(t->a, t->saved, t->nsaved);
	free_strings(t->a, t->paths, t->npaths);
	free_strings(t->a, t->exclude, t->nexclude);
	floe_free(t->a, t);
}

/* --- saved positions ------------------------------------------------------------------ */

static void saved_remove(struct floe_tail *t, size_t i)
{
	floe_free(t->a, t->saved[i].path);
	memmove(&t->saved[i], &t->saved[i + 1], (t->nsaved - i - 1) * sizeof(*t->saved));
	t->nsaved--;
}

/* Keeps the position of a file that is being closed (takes s->path). At the cap the
 * oldest entry goes: a file gone for that long is not coming back. */
static int saved_push(struct floe_tail *t, const struct saved *s)
{
	if (t->nsaved >= FLOE_TAIL_MAX_STALE)
		saved_remove(t, 0);
	if (t->nsaved == t->capsaved) {
		size_t cap = t->capsaved ? t->capsaved * 2 : 16;
		struct saved *p = floe_realloc(t->a, t->saved, cap * sizeof(*p));
		if (!p)
			return FLOE_ENOMEM;
		t->saved = p;
		t->capsaved = cap;
	}
	t->saved[t->nsaved++] = *s;
	return 0;
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

int floe_tail_restore(struct floe_tail *t, const uint8_t *blob, size_t len)
{
	if (t->scanned)
		return FLOE_EINVAL;
	if (len < 12 || memcmp(blob, POS_MAGIC, 4) != 0 || get_le32(blob + 4) != POS_VERSION)
		return FLOE_ECORRUPT;
	uint32_t count = get_le32(blob + 8);
	size_t off = 12;
	/* Every entry takes at least POS_ENTRY_FIXED + 1 bytes, which bounds the count by the
	 * input before anything is allocated. */
	if (count > (len - off) / (POS_ENTRY_FIXED + 1))
		return FLOE_ECORRUPT;
	struct saved *s = NULL;
	size_t n = 0;
	int rc = 0;
	if (count && !(s = floe_calloc(t->a, count, sizeof(*s))))
		return FLOE_ENOMEM;
	for (; n < count; n++) {
		if (len - off < 4) {
			rc = FLOE_ECORRUPT;
			goto fail;
		}
		uint32_t plen = get_le32(blob + off);
		off += 4;
		if (plen == 0 || plen > POS_MAX_PATH ||
		    len - off < (size_t)plen + POS_ENTRY_FIXED - 4 || memchr(blob + off, 0, plen)) {
			rc = FLOE_ECORRUPT;
			goto fail;
		}
		if (!(s[n].path = floe_strndup(t->a, (const char *)blob + off, plen))) {
			rc = FLOE_ENOMEM;
			goto fail;
		}
		off += plen;
		s[n].dev = get_le64(blob + off);
		s[n].ino = get_le64(blob + off + 8);
		s[n].pos = get_le64(blob + off + 16);
		s[n].fp_len = get_le32(blob + off + 24);
		s[n].fp_hash = get_le64(blob + off + 28);
		s[n].flags = get_le32(blob + off + 36);
		off += POS_ENTRY_FIXED - 4;
		if (s[n].fp_len > FLOE_TAIL_FINGERPRINT || s[n].pos > INT64_MAX ||
		    (s[n].flags & ~POS_UNTERMINATED)) {
			n++; /* the path is owned now */
			rc = FLOE_ECORRUPT;
			goto fail;
		}
	}
	if (off != len) {
		rc = FLOE_ECORRUPT;
		goto fail;
	}
	saved_free_all(t->a, t->saved, t->nsaved);
	t->saved = s;
	t->nsaved = t->capsaved = count;
	return 0;
fail:
	saved_free_all(t->a, s, n);
	return rc;
}

/* Paths that restore accepts; others (never produced by glob in practice) are left out
 * rather than written into a blob that could not be read back. */
static bool storable(const char *path)
{
	size_t n = strlen(path);
	return n > 0 && n <= POS_MAX_PATH;
}

static const char *entry_path(const struct floe_tail *t, size_t i)
{
	return i < t->nfiles ? t->files[i]->path : t->saved[i - t->nfiles].path;
}

int floe_tail_positions(const struct floe_tail *t, struct floe_buf *out)
{
	size_t mark = out->len, total = t->nfiles + t->nsaved;
	uint64_t count = 0;
	for (size_t i = 0; i < total; i++)
		count += storable(entry_path(t, i));
	int rc = FLOE_ELIMIT;
	if (count > UINT32_MAX)
		goto fail;
	rc = floe_buf_append(out, POS_MAGIC, 4);
	if (!rc)
		rc = floe_buf_put_le32(out, POS_VERSION);
	if (!rc)
		rc = floe_buf_put_le32(out, (uint32_t)count);
	for (size_t i = 0; i < total && !rc; i++) {
		struct saved s;
		if (i < t->nfiles) {
			const struct tfile *f = t->files[i];
			s = (struct saved){f->path, f->dev, f->ino, f->pos, f->fp_hash, f->fp_len,
					   f->unterminated ? POS_UNTERMINATED : 0};
		} else {
			s = t->saved[i - t->nfiles];
		}
		if (!storable(s.path))
			continue;
		size_t plen = strlen(s.path);
		rc = floe_buf_put_le32(out, (uint32_t)plen);
		if (!rc)
			rc = floe_buf_append(out, s.path, plen);
		if (!rc)
			rc = floe_buf_put_le64(out, s.dev);
		if (!rc)
			rc = floe_buf_put_le64(out, s.ino);
		if (!rc)
			rc = floe_buf_put_le64(out, s.pos);
		if (!rc)
			rc = floe_buf_put_le32(out, s.fp_len);
		if (!rc)
			rc = floe_buf_put_le64(out, s.fp_hash);
		if (!rc)
			rc = floe_buf_put_le32(out, s.flags);
	}
	if (!rc)
		return 0;
fail:
	out->len = mark;
	return rc;
}

/* --- discovery ------------------------------------------------------------------------ */

static struct tfile *find_by_id(struct floe_tail *t, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i]->dev == dev && t->files[i]->ino == ino)
			return t->files[i];
	return NULL;
}

static void reset_file(struct floe_tail *t, struct tfile *f)
{
	f->pos = 0;
	f->start = f->len = 0;
	f->in_long = false;
	f->unterminated = false;
	f->fp_len = 0;
	f->fp_hash = fp_hash(NULL, 0);
	t->st.resets++;
}

/* Extends the fingerprint while the file is shorter than FLOE_TAIL_FINGERPRINT, so that
 * small files get a fingerprint as telling as big ones once they grow. known = bytes known
 * to exist. */
static int refresh_fingerprint(struct tfile *f, uint64_t known)
{
	if (f->fp_len >= FLOE_TAIL_FINGERPRINT || known <= f->fp_len)
		return 0;
	uint8_t head[FLOE_TAIL_FINGERPRINT];
	size_t want = known < FLOE_TAIL_FINGERPRINT ? (size_t)known : FLOE_TAIL_FINGERPRINT,
	       got = 0;
	int rc = read_full(f->fd, head, want, 0, &got);
	if (rc)
		return rc;
	f->fp_len = (uint32_t)got;
	f->fp_hash = fp_hash(head, got);
	return 0;
}

/* A known file whose beginning no longer hashes to its fingerprint was truncated and
 * rewritten in place (copytruncate): start over. */
static int check_fingerprint(struct floe_tail *t, struct tfile *f)
{
	uint8_t head[FLOE_TAIL_FINGERPRINT];
	size_t got = 0;
	int rc = read_full(f->fd, head, f->fp_len, 0, &got);
	if (rc)
		return rc;
	if (got == f->fp_len && fp_hash(head, got) == f->fp_hash)
		return 0;
	reset_file(t, f);
	return 0;
}

static int open_new(struct floe_tail *t, const char *path)
{
	if (t->nfiles >= FLOE_TAIL_MAX_OPEN)
		return 0; /* picked up by a later scan, once others are closed */
	int fd = -1, rc = floe_fs_open_read(path, &fd);
	if (rc)
		return 0; /* vanished or unreadable since the glob: not an error of the scan */
	struct floe_fs_stat st;
	struct tfile *f = NULL;
	if (floe_fs_fstat(fd, &st) != 0 || !st.regular || find_by_id(t, st.dev, st.ino)) {
		floe_fs_close(fd);
		return 0;
	}
	uint8_t head[FLOE_TAIL_FINGERPRINT];
	size_t n = 0;
	rc = read_full(fd, head, st.size < sizeof(head) ? (size_t)st.size : sizeof(head), 0, &n);
	if (rc)
		goto fail;
	if (t->nfiles == t->capfiles) {
		size_t cap = t->capfiles ? t->capfiles * 2 : 8;
		struct tfile **p = floe_realloc(t->a, t->files, cap * sizeof(*p));
		if (!p) {
			rc = FLOE_ENOMEM;
			goto fail;
		}
		t->files = p;
		t->capfiles = cap;
	}
	f = floe_calloc(t->a, 1, sizeof(*f));
	if (!f || !(f->path = floe_strdup(t->a, path))) {
		rc = FLOE_ENOMEM;
		goto fail;
	}
	f->fd = fd;
	f->dev = st.dev;
	f->ino = st.ino;
	f->fp_len = (uint32_t)n;
	f->fp_hash = fp_hash(head, n);
	f->seen = true;

	/* A saved position follows the file's identity, whatever its name is now (it may
	 * have been rotated while floe was down). */
	size_t i;
	for (i = 0; i < t->nsaved; i++) {
		const struct saved *s = &t->saved[i];
		if (s->dev == st.dev && s->ino == st.ino && s->fp_len <= n &&
		    fp_hash(head, s->fp_len) == s->fp_hash)
			break;
	}
	if (i < t->nsaved) {
		if (st.size < t->saved[i].pos) {
			t->st.resets++; /* truncated while we were away */
		} else {
			f->pos = t->saved[i].pos;
			f->unterminated = (t->saved[i].flags & POS_UNTERMINATED) != 0;
		}
		saved_remove(t, i);
	} else {
		/* A position saved under this name belongs to an older generation. */
		for (i = 0; i < t->nsaved; i++)
			if (strcmp(t->saved[i].path, path) == 0)
				break;
		if (i < t->nsaved) {
			saved_remove(t, i);
			t->st.resets++;
		} else if (!t->scanned && t->start_at_end) {
			f->pos = st.size;
		}
	}
	t->files[t->nfiles++] = f;
	return 0;
fail:
	if (f)
		floe_free(t->a, f->path);
	floe_free(t->a, f);
	floe_fs_close(fd);
	return rc;
}

/* Follows the file st found at path. */
static int follow(struct floe_tail *t, const char *path, const struct floe_fs_stat *st)
{
	struct tfile *f = find_by_id(t, st->dev, st->ino);
	if (!f)
		return open_new(t, path);
	if (f->seen)
		return 0; /* a second name (hard link, overlapping globs) for a file we follow */
	f->seen = true;
	if (strcmp(f->path, path) != 0) {
		/* Renamed within the globs (app.log -> app.log.1): keep following it. */
		char *p = floe_strdup(t->a, path);
		if (!p)
			return FLOE_ENOMEM;
		floe_free(t->a, f->path);
		f->path = p;
	}
	f->draining = f->closing = f->drained_eof = false;
	return check_fingerprint(t, f);
}

struct found {
	char *path;
	struct floe_fs_stat st;
};

struct scan {
	struct floe_tail *t;
	struct found *v;
	size_t n, cap;
};

static int on_path(void *ctx, const char *path)
{
	struct scan *sc = ctx;
	if (excluded(sc->t, path))
		return 0;
	struct floe_fs_stat st;
	if (floe_fs_stat(path, &st) != 0 || !st.regular)
		return 0; /* gone since the glob, or not a file we can tail */
	if (sc->n == sc->cap) {
		size_t cap = sc->cap ? sc->cap * 2 : 16;
		struct found *p = floe_realloc(sc->t->a, sc->v, cap * sizeof(*p));
		if (!p)
			return FLOE_ENOMEM;
		sc->v = p;
		sc->cap = cap;
	}
	if (!(sc->v[sc->n].path = floe_strdup(sc->t->a, path)))
		return FLOE_ENOMEM;
	sc->v[sc->n++].st = st;
	return 0;
}

static bool known_id(const struct floe_tail *t, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i]->dev == dev && t->files[i]->ino == ino)
			return true;
	for (size_t i = 0; i < t->nsaved; i++)
		if (t->saved[i].dev == dev && t->saved[i].ino == ino)
			return true;
	return false;
}

int floe_tail_scan(struct floe_tail *t)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		f->seen = false;
		/* A file that was already draining and has been at its end since: nothing more
		 * is coming, close it at its next end (a whole scan interval of grace for a
		 * writer that still had it open). */
		if (f->draining && f->drained_eof)
			f->closing = true;
	}
	struct scan sc = {t, NULL, 0, 0};
	int rc = 0;
	for (size_t i = 0; i < t->npaths && rc == 0; i++)
		rc = floe_glob(t->paths[i], on_path, &sc);
	/* Files we know by identity first, then new ones: a file renamed while we were away
	 * claims its saved position before a new file at its old name is judged, whatever the
	 * glob order. */
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (size_t i = 0; i < sc.n && rc == 0; i++) {
			struct found *r = &sc.v[i];
			if (!r->path || (pass == 0 && !known_id(t, r->st.dev, r->st.ino)))
				continue;
			rc = follow(t, r->path, &r->st);
			floe_free(t->a, r->path);
			r->path = NULL;
		}
	}
	for (size_t i = 0; i < sc.n; i++)
		floe_free(t->a, sc.v[i].path);
	floe_free(t->a, sc.v);
	if (rc)
		return rc;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		if (!f->seen && !f->draining) {
			f->draining = true;
			f->drained_eof = false;
		}
	}
	t->scanned = true;
	return 0;
}

/* --- reading -------------------------------------------------------------------------- */

/* Finds the next line in the held bytes: *len = bytes to show, *consume = bytes the line
 * takes in the file. Returns false when only a partial line is held. Lines longer than
 * max_line are cut into max_line pieces (*split). */
static bool next_line(const struct floe_tail *t, const struct tfile *f, size_t *len,
		      size_t *consume, bool *split)
{
	const uint8_t *p = f->buf + f->start;
	size_t w = f->len < t->max_line + 2 ? f->len : t->max_line + 2;
	const uint8_t *nl = memchr(p, '\n', w);
	if (nl) {
		size_t idx = (size_t)(nl - p), content = idx;
		if (content && p[content - 1] == '\r')
			content--;
		if (content <= t->max_line) {
			*len = content;
			*consume = idx + 1;
			*split = false;
			return true;
		}
	} else if (f->len < t->max_line + 2) {
		return false;
	}
	*len = *consume = t->max_line;
	*split = true;
	return true;
}

/* Calls fn for the line at the head of f's held bytes and consumes it unless fn fails.
 * Returns fn's result (a positive one meaning stop). */
static int deliver(struct floe_tail *t, struct tfile *f, size_t len, size_t consume, bool split,
		   floe_tail_line_fn fn, void *ctx, size_t *progress)
{
	struct floe_tail_line line = {f->path, f->pos, (const char *)f->buf + f->start, len};
	int rc = fn(ctx, &line);
	if (rc < 0)
		return rc;
	f->start += consume;
	f->len -= consume;
	f->pos += consume;
	if (f->len == 0)
		f->start = 0;
	t->st.lines++;
	t->st.bytes += consume;
	if (split && !f->in_long)
		t->st.long_lines_split++;
	f->in_long = split;
	f->unterminated = false;
	*progress += consume;
	return rc;
}

/* After a line flushed without its LF: an LF (or CRLF) that arrives next ends that line
 * and is consumed without delivering an empty line. Returns false while it cannot tell
 * yet (a lone CR held at the end of the data). */
static bool swallow_terminator(struct floe_tail *t, struct tfile *f, size_t *progress)
{
	if (!f->unterminated || f->len == 0)
		return true;
	const uint8_t *p = f->buf + f->start;
	size_t n = 0;
	if (p[0] == '\n')
		n = 1;
	else if (p[0] == '\r' && f->len >= 2 && p[1] == '\n')
		n = 2;
	else if (p[0] == '\r' && f->len == 1)
		return false;
	f->unterminated = false;
	if (n) {
		f->start += n;
		f->len -= n;
		f->pos += n;
		if (f->len == 0)
			f->start = 0;
		t->st.bytes += n;
		*progress += n;
	}
	return true;
}

/* Delivers f's complete held lines while the budget lasts. */
static int emit_lines(struct floe_tail *t, struct tfile *f, size_t max_bytes, floe_tail_line_fn fn,
		      void *ctx, size_t *progress)
{
	size_t len, consume;
	bool split;
	if (!swallow_terminator(t, f, progress))
		return 0;
	while (f->len && *progress < max_bytes && next_line(t, f, &len, &consume, &split)) {
		int rc = deliver(t, f, len, consume, split, fn, ctx, progress);
		if (rc)
			return rc;
	}
	return 0;
}

/* Delivers everything f holds, the trailing partial line included. */
static int emit_all(struct floe_tail *t, struct tfile *f, floe_tail_line_fn fn, void *ctx,
		    size_t *progress)
{
	/* A lone CR after an unterminated line ends it too: nothing more will come now. */
	if (!swallow_terminator(t, f, progress)) {
		f->unterminated = false;
		f->start++;
		f->len--;
		f->pos++;
		*progress += 1;
	}
	while (f->len) {
		size_t len, consume;
		bool split;
		if (!next_line(t, f, &len, &consume, &split)) {
			/* The partial line: at most max_line + 1 bytes, as next_line splits from
			 * max_line + 2 on. */
			const uint8_t *p = f->buf + f->start;
			consume = f->len;
			len = consume;
			if (p[len - 1] == '\r')
				len--;
			split = len > t->max_line;
			if (split)
				len = consume = t->max_line;
		}
		bool partial = consume == f->len && !split && f->buf[f->start + consume - 1] != '\n';
		int rc = deliver(t, f, len, consume, split, fn, ctx, progress);
		if (rc < 0)
			return rc;
		if (partial)
			f->unterminated = true;
		if (rc)
			return rc;
	}
	return 0;
}

/* Reads once into f's buffer. Sets f->done at end of file; resets a truncated file. */
static int fill(struct floe_tail *t, struct tfile *f)
{
	if (!f->buf && !(f->buf = floe_malloc(t->a, t->bufcap)))
		return FLOE_ENOMEM;
	if (f->start) {
		memmove(f->buf, f->buf + f->start, f->len);
		f->start = 0;
	}
	/* next_line cuts any run of max_line + 2 bytes, so at least chunk bytes are free. */
	size_t room = t->bufcap - f->len;
	size_t want = room < t->chunk ? room : t->chunk, got = 0;
	int rc = floe_fs_pread(f->fd, f->buf + f->len, want, f->pos + f->len, &got);
	if (rc)
		return rc;
	if (got) {
		f->len += got;
		return refresh_fingerprint(f, f->pos + f->len);
	}
	struct floe_fs_stat st;
	if ((rc = floe_fs_fstat(f->fd, &st)) != 0)
		return rc;
	if (st.size < f->pos + f->len) {
		reset_file(t, f);
		return 0;
	}
	f->done = true;
	if (f->draining)
		f->drained_eof = true;
	if (f->len == 0) {
		/* Nothing held: give the buffer back while the file is idle. */
		floe_free(t->a, f->buf);
		f->buf = NULL;
	}
	return 0;
}

/* One round-robin turn: deliver held lines, read once, deliver again. */
static int turn(struct floe_tail *t, struct tfile *f, size_t max_bytes, floe_tail_line_fn fn,
		void *ctx, size_t *progress)
{
	int rc = emit_lines(t, f, max_bytes, fn, ctx, progress);
	if (rc || *progress >= max_bytes)
		return rc;
	if ((rc = fill(t, f)) != 0)
		return rc;
	if (f->done) {
		/* A closing file will not grow any more: its partial line is complete. */
		return f->closing ? emit_all(t, f, fn, ctx, progress) : 0;
	}
	return emit_lines(t, f, max_bytes, fn, ctx, progress);
}

/* Closes the files that are drained, keeping their positions. */
static void close_drained(struct floe_tail *t)
{
	size_t j = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		if (f->closing && f->done && f->len == 0) {
			/* Keep the final position in case the file shows up in the globs again,
			 * unless it is deleted: then no one will ever see it again. */
			struct floe_fs_stat st;
			bool deleted = floe_fs_fstat(f->fd, &st) == 0 && st.nlink == 0;
			struct saved s = {f->path, f->dev, f->ino, f->pos, f->fp_hash, f->fp_len,
					  f->unterminated ? POS_UNTERMINATED : 0};
			if (!deleted && saved_push(t, &s) == 0)
				f->path = NULL;
			tfile_free(t, f);
			continue;
		}
		t->files[j++] = f;
	}
	t->nfiles = j;
}

int floe_tail_read(struct floe_tail *t, size_t max_bytes, floe_tail_line_fn fn, void *ctx,
		   size_t *progress)
{
	*progress = 0;
	size_t n = t->nfiles;
	if (n == 0 || max_bytes == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		t->files[i]->done = false;
	size_t first = t->rr % n;
	int rc = 0;
	bool more = true;
	while (more) {
		more = false;
		for (size_t k = 0; k < n; k++) {
			size_t i = (first + k) % n;
			struct tfile *f = t->files[i];
			if (f->done)
				continue;
			rc = turn(t, f, max_bytes, fn, ctx, progress);
			if (rc < 0) {
				t->rr = i; /* the refused line comes first next time */
				goto out;
			}
			if (rc > 0 || *progress >= max_bytes) {
				rc = 0;
				t->rr = i + 1;
				goto out;
			}
			if (!f->done)
				more = true;
		}
	}
	t->rr = first;
out:
	close_drained(t);
	return rc;
}

int floe_tail_flush_partial(struct floe_tail *t, floe_tail_line_fn fn, void *ctx)
{
	size_t progress = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		int rc = emit_all(t, t->files[i], fn, ctx, &progress);
		if (rc)
			return rc < 0 ? rc : 0;
	}
	return 0;
}

void floe_tail_get_stats(const struct floe_tail *t, struct floe_tail_stats *out)
{
	*out = t->st;
	out->files_open = t->nfiles;
}
