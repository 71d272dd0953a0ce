/* Files of a tail: opening (checked against the saved identity), parking idle files to
 * bound descriptors, discovery by glob with rotation handling (renames, replacements,
 * copytruncate copies, files rotated out of the globs), and watch events. */
#include "tail_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/fs.h"
#include "platform/glob.h"
#include "platform/log.h"
#include "platform/path.h"
#include "platform/watch.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PATH_CAP FLOE_PATH_MAX

static bool pattern_match(const struct floe_tail *t, const char *path);

/* --- opening and closing -------------------------------------------------------------- */

void floe_tail_reset_file(struct floe_tail *t, struct tfile *f, bool truncated)
{
	f->pos = 0;
	f->read_to = 0;
	t->fresh = true; /* a new generation to read: not a repeated pass */
	/* A new generation is a new file for whoever groups its lines: a new id. Holds go
	 * too (the held lines' bytes are gone, or went with a copytruncate copy). */
	f->id = 0;
	f->held = false;
	f->start = f->len = 0;
	f->in_long = false;
	f->unterminated = false;
	f->nul = false;
	f->ph_ok = false;
	f->fp_len = 0;
	f->fp_hash = floe_tail_hash(NULL, 0);
	t->st.resets++;
	if (truncated)
		t->st.truncations++;
	else
		t->st.generations++;
}

/* Closes f's descriptor and drops its buffer (the bytes held after pos are read again if
 * it is reopened), keeping its position, fingerprint and pre-position hash. */
void floe_tail_close_entry(struct floe_tail *t, struct tfile *f)
{
	floe_tail_cache_prehash(f);
	floe_free(t->a, f->buf);
	f->buf = NULL;
	f->cap = 0;
	f->start = f->len = 0;
	f->nul = false;
	if (f->fd >= 0) {
		floe_fs_close(f->fd);
		t->nopen--;
	}
	f->fd = -1;
	f->done = f->at_eof = false;
	f->draining = f->closing = false;
}

/* The rotated (draining) file drained longest whose every byte has been read: nothing
 * held, and its size now no more than its position (fstat: a writer that appended to it
 * since the last read keeps it). SIZE_MAX when none. */
static size_t drained_one(struct floe_tail *t)
{
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		struct floe_fs_stat st;
		if (!f || f->fd < 0 || !f->draining || f->len != 0 ||
		    (best != SIZE_MAX && f->drain_since >= t->files[best]->drain_since))
			continue;
		if (floe_fs_fstat(f->fd, &st) == 0 && st.size <= f->pos)
			best = i;
	}
	return best;
}

/* Closes the open file idle longest to free a descriptor: one found at end of file by
 * the read call in progress (so nothing it holds is unread), not draining. Failing that,
 * a rotated file read to its end gives its descriptor up before its rotate_wait is over:
 * the bytes of a file waiting for one are known and unread, and would be lost if it went
 * away meanwhile (files_lost), while a writer that still appends to the old file may
 * never do so. Closed as close_drained closes it: a deleted one's entry is freed (its
 * slot left NULL for the caller to compact), since a new file may get its inode at once.
 * False when none can go. */
static bool park_one(struct floe_tail *t)
{
	struct tfile *best = NULL;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		if (f && f->fd >= 0 && f->done && f->at_eof && !f->draining &&
		    (!best || f->idle_since < best->idle_since))
			best = f;
	}
	if (best) {
		floe_tail_close_entry(t, best);
		return true;
	}
	size_t i = drained_one(t);
	if (i == SIZE_MAX)
		return false;
	struct tfile *f = t->files[i];
	struct floe_fs_stat st;
	bool deleted = floe_fs_fstat(f->fd, &st) == 0 && st.nlink == 0;
	t->st.rotated_closed++;
	t->st.rotated_closed_early++;
	if (deleted) {
		floe_tail_entry_free(t, f);
		t->files[i] = NULL;
		return true;
	}
	floe_tail_close_entry(t, f);
	f->present = false;
	f->gone = true;
	f->gone_since = floe_tail_mono(t);
	return true;
}

/* Opens a closed entry whose identity the last scan (or a restore) gave. A file with a
 * known fingerprint is checked as on resume; a mismatch starts a new generation. */
static int open_entry(struct floe_tail *t, struct tfile *f)
{
	f->want_open = false;
	int fd = -1;
	int orc = floe_fs_open_read(f->path, &fd);
	floe_tail_note_open(t, f, orc);
	if (orc != 0)
		return 0; /* vanished since the scan, or unreadable: the next one sorts it out */
	struct floe_fs_stat st;
	uint8_t head[FLOE_TAIL_FINGERPRINT];
	size_t n = 0;
	if (floe_fs_fstat(fd, &st) != 0 || !st.regular || st.dev != f->dev || st.ino != f->ino) {
		floe_fs_close(fd);
		return 0; /* the name now holds another file: the next scan sees it */
	}
	int rc = floe_tail_read_full(
	    fd, head, st.size < sizeof(head) ? (size_t)st.size : sizeof(head), 0, &n);
	if (rc) {
		floe_fs_close(fd);
		return rc;
	}
	f->fd = fd;
	t->nopen++;
	if (f->copy) {
		/* A candidate copy of a truncated file: continue it only if it holds exactly
		 * what was delivered before the position; never read it from 0. */
		bool same = f->fp_len <= n && floe_tail_hash(head, f->fp_len) == f->fp_hash &&
			    st.size >= f->pos;
		if (same && f->ph_ok && f->ph_len > 0) {
			uint8_t tmp[FLOE_TAIL_PREHASH];
			size_t got = 0;
			if ((rc = floe_tail_read_full(fd, tmp, f->ph_len, f->pos - f->ph_len,
						      &got)) != 0)
				return rc;
			same = got == f->ph_len && floe_tail_hash(tmp, got) == f->ph_hash;
		}
		f->copy = false;
		if (!same) {
			floe_fs_close(fd);
			f->fd = -1;
			t->nopen--;
			f->orphan = false;
			f->gone = true;
			f->gone_since =
			    floe_tail_mono(t) - t->forget_after; /* forgotten at the next scan */
			return 0;
		}
		t->st.copies_followed++;
	} else if (f->has_fp) {
		bool same = f->fp_len <= n && floe_tail_hash(head, f->fp_len) == f->fp_hash;
		if (same && st.size < f->pos) {
			floe_tail_reset_file(t, f, true); /* truncated while closed */
		} else if (!same) {
			floe_tail_reset_file(t, f, false);
		} else if (f->ph_ok && f->ph_pos == f->pos && f->ph_len > 0) {
			/* Same beginning, long enough: the bytes before the position must be the
			 * ones delivered (else the inode was reused for a file with the same
			 * first bytes). */
			uint8_t tmp[FLOE_TAIL_PREHASH];
			size_t got = 0;
			if ((rc = floe_tail_read_full(fd, tmp, f->ph_len, f->pos - f->ph_len,
						      &got)) != 0)
				return rc;
			if (got != f->ph_len || floe_tail_hash(tmp, got) != f->ph_hash)
				floe_tail_reset_file(t, f, false);
		}
		if (f->present && f->idle_since != 0)
			t->st.reopens++; /* parked before (a restored entry has no idle time) */
	}
	f->has_fp = true;
	f->fp_len = (uint32_t)n;
	f->fp_hash = floe_tail_hash(head, n);
	f->gone = false;
	f->done = f->at_eof = false;
	f->idle_since = floe_tail_mono(t);
	if (f->orphan) {
		f->orphan = false;
		f->draining = true;
		f->drain_since = floe_tail_mono(t);
	}
	return 0;
}

/* Opens the entries that want it, within max_open_files (closing idle ones to make room).
 * *opened = how many were. */
int floe_tail_open_wanted(struct floe_tail *t, size_t *opened)
{
	*opened = 0;
	int rc = 0;
	for (size_t i = 0; i < t->nfiles && rc == 0; i++) {
		struct tfile *f = t->files[i];
		if (!f || f->fd >= 0 || !f->want_open)
			continue;
		if (t->nopen >= t->max_open && !park_one(t))
			break;
		if ((rc = open_entry(t, f)) == 0)
			*opened += f->fd >= 0;
	}
	/* park_one frees a deleted file's entry: its slot goes. */
	floe_tail_compact(t);
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

static struct tfile *find_by_path(struct floe_tail *t, const char *path)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (strcmp(t->files[i]->path, path) == 0)
			return t->files[i];
	return NULL;
}

static struct tfile *find_by_real(struct floe_tail *t, const char *real)
{
	for (size_t i = 0; i < t->nfiles; i++)
		if (t->files[i]->real && strcmp(t->files[i]->real, real) == 0)
			return t->files[i];
	return NULL;
}

/* Extends the fingerprint while the file is shorter than FLOE_TAIL_FINGERPRINT, so that
 * small files get a fingerprint as telling as big ones once they grow. known = bytes known
 * to exist. */
int floe_tail_refresh_fingerprint(struct tfile *f, uint64_t known)
{
	if (f->fp_len >= FLOE_TAIL_FINGERPRINT || known <= f->fp_len)
		return 0;
	uint8_t head[FLOE_TAIL_FINGERPRINT];
	size_t want = known < FLOE_TAIL_FINGERPRINT ? (size_t)known : FLOE_TAIL_FINGERPRINT,
	       got = 0;
	int rc = floe_tail_read_full(f->fd, head, want, 0, &got);
	if (rc)
		return rc;
	f->fp_len = (uint32_t)got;
	f->fp_hash = floe_tail_hash(head, got);
	return 0;
}

/* Looks, in f's directory, for a copy of f made just before it was truncated in place
 * (logrotate's copytruncate): a file outside the globs, not excluded, not followed, at
 * least f->pos long. It becomes an entry that continues from f's position once its first
 * bytes and the bytes before the position are checked to be f's (open_entry), so the lines
 * written between our last read and the truncation are not lost. */
struct copy_search {
	struct floe_tail *t;
	const struct tfile *f;
	char dir[PATH_CAP];
	char found[PATH_CAP];
	struct floe_fs_stat st;
};

static int on_copy(void *ctx, const char *name)
{
	struct copy_search *c = ctx;
	char p[PATH_CAP];
	int n = snprintf(p, sizeof(p), "%s/%s", c->dir, name);
	if (n < 0 || (size_t)n >= sizeof(p) || floe_tail_excluded(c->t, p) ||
	    pattern_match(c->t, p))
		return 0;
	struct floe_fs_stat st;
	if (floe_fs_stat(p, &st) != 0 || !st.regular || st.size < c->f->pos ||
	    st.size <= c->f->fp_len || find_by_id(c->t, st.dev, st.ino))
		return 0;
	memcpy(c->found, p, (size_t)n + 1);
	c->st = st;
	return 1;
}

static int dir_of(const char *path, char *out, size_t cap)
{
	const char *slash = strrchr(path, '/');
	if (!slash) {
		strcpy(out, ".");
	} else if (slash == path) {
		strcpy(out, "/");
	} else {
		size_t dl = (size_t)(slash - path);
		if (dl >= cap)
			return FLOE_ELIMIT;
		memcpy(out, path, dl);
		out[dl] = 0;
	}
	return 0;
}

int floe_tail_follow_copy(struct floe_tail *t, struct tfile *f)
{
	if (!f->has_fp || f->pos == 0)
		return 0;
	uint64_t ph;
	uint32_t phl;
	if (floe_tail_prehash(f, &ph, &phl) != 0)
		return 0;
	struct copy_search c;
	c.t = t;
	c.f = f;
	if (dir_of(f->path, c.dir, sizeof(c.dir)) != 0 || floe_fs_list(t->a, c.dir, on_copy, &c) != 1)
		return 0;
	struct tfile *g = floe_calloc(t->a, 1, sizeof(*g));
	if (!g || !(g->path = floe_strdup(t->a, c.found))) {
		floe_free(t->a, g);
		return FLOE_ENOMEM;
	}
	g->fd = -1;
	g->dev = c.st.dev;
	g->ino = c.st.ino;
	g->pos = f->pos;
	g->fp_len = f->fp_len;
	g->fp_hash = f->fp_hash;
	g->ph_hash = ph;
	g->ph_len = phl;
	g->ph_pos = f->pos;
	g->ph_ok = true;
	g->unterminated = f->unterminated;
	g->in_long = f->in_long;
	/* The copy continues f's lines from f's position: it takes f's id, so lines grouped
	 * but not yet saved stay grouped, and their hold applies to the copy (f gets a new
	 * id when it is reset). */
	g->id = f->id;
	g->has_fp = g->copy = g->orphan = g->want_open = true;
	int rc = floe_tail_entry_push(t, g);
	if (rc)
		floe_tail_entry_free(t, g);
	return rc;
}

/* An open file whose beginning no longer hashes to its fingerprint, or whose bytes before
 * the position differ from those delivered, was truncated and rewritten in place
 * (copytruncate): start over. */
static int check_content(struct floe_tail *t, struct tfile *f)
{
	uint8_t head[FLOE_TAIL_FINGERPRINT];
	size_t got = 0;
	int rc = floe_tail_read_full(f->fd, head, f->fp_len, 0, &got);
	if (rc)
		return rc;
	if (got != f->fp_len || floe_tail_hash(head, got) != f->fp_hash) {
		if ((rc = floe_tail_follow_copy(t, f)) != 0)
			return rc;
		floe_tail_reset_file(t, f, false);
		return 0;
	}
	size_t k = f->pos < FLOE_TAIL_PREHASH ? (size_t)f->pos : FLOE_TAIL_PREHASH;
	if (!f->buf || f->start < k || f->pos <= f->fp_len)
		return 0; /* nothing to compare against, or already covered */
	if ((rc = floe_tail_read_full(f->fd, head, k, f->pos - k, &got)) != 0)
		return rc;
	if (got != k || memcmp(head, f->buf + f->start - k, k) != 0) {
		if ((rc = floe_tail_follow_copy(t, f)) != 0)
			return rc;
		floe_tail_reset_file(t, f, false);
	}
	return 0;
}

/* Learns f's real path (struct tfile.real) once per name: a realpath per new file, none
 * per scan. */
static int note_real(struct floe_tail *t, struct tfile *f)
{
	char real[PATH_CAP];
	if (f->real_known || floe_path_real(f->path, real, sizeof(real)) != 0)
		return 0; /* known, or gone: tried again when a scan finds it */
	if (strcmp(real, f->path) != 0) {
		if (!(f->real = floe_strdup(t->a, real)))
			return FLOE_ENOMEM;
		t->nreal++;
	}
	f->real_known = true;
	return 0;
}

/* f's name changed: its real path is learnt again. */
static void forget_real(struct floe_tail *t, struct tfile *f)
{
	if (f->real) {
		floe_free(t->a, f->real);
		f->real = NULL;
		t->nreal--;
	}
	f->real_known = false;
}

static int new_entry(struct floe_tail *t, const char *path, const struct floe_fs_stat *st,
		     uint64_t pos)
{
	struct tfile *f = floe_calloc(t->a, 1, sizeof(*f));
	if (!f || !(f->path = floe_strdup(t->a, path))) {
		floe_free(t->a, f);
		return FLOE_ENOMEM;
	}
	f->fd = -1;
	f->dev = st->dev;
	f->ino = st->ino;
	f->pos = pos;
	f->size_seen = st->size;
	f->fp_hash = floe_tail_hash(NULL, 0);
	f->present = f->seen = f->want_open = true;
	int rc = floe_tail_entry_push(t, f);
	if (rc) {
		floe_tail_entry_free(t, f);
		return rc;
	}
	if (t->watch)
		(void)floe_watch_add_file_dirs(t->watch, path);
	return note_real(t, f);
}

/* Follows the file st found at path. */
static int follow(struct floe_tail *t, const char *path, const struct floe_fs_stat *st)
{
	struct tfile *f = find_by_id(t, st->dev, st->ino);
	if (!f) {
		/* A new file. One appearing under a name we followed before is a new
		 * generation at that name: from 0, whatever start_at_end says. */
		struct tfile *old = find_by_path(t, path);
		uint64_t pos = 0;
		if (old && old->has_fp && old->fd < 0) {
			/* A saved position at this name was for another file. */
			t->st.generations++;
			t->st.resets++;
		} else if (!t->scanned && t->start_at_end) {
			pos = st->size;
			t->st.started_at_end += pos > 0;
		}
		return new_entry(t, path, st, pos);
	}
	if (f->seen)
		return 0; /* a second name (hard link, overlapping globs) for a file we follow */
	f->seen = true;
	f->size_seen = st->size;
	if (strcmp(f->path, path) != 0) {
		/* Renamed within the globs (app.log -> app.log.1): keep following it. */
		char *p = floe_strdup(t->a, path);
		if (!p)
			return FLOE_ENOMEM;
		floe_free(t->a, f->path);
		f->path = p;
		forget_real(t, f);
	}
	int rc = note_real(t, f);
	if (rc)
		return rc;
	if (f->fd >= 0) {
		f->draining = f->closing = false;
		f->present = true;
		return check_content(t, f);
	}
	if (!f->present || st->size != f->pos || !f->has_fp)
		f->want_open = true;
	f->present = true;
	f->gone = false;
	f->orphan = false;
	return 0;
}

struct found {
	char *path;
	struct floe_fs_stat st;
};

struct scan {
	struct floe_tail *t;
	struct found *v;
	size_t n, cap;
	size_t pattern; /* the pattern being expanded */
};

static int on_path(void *ctx, const char *path)
{
	struct scan *sc = ctx;
	if (floe_tail_excluded(sc->t, path))
		return 0;
	struct floe_fs_stat st;
	if (floe_fs_stat(path, &st) != 0)
		return 0; /* gone since the glob */
	if (!st.regular) {
		/* A directory is what a wide glob (/var/log/ and a star) meets; a FIFO, a
		 * socket or a device is a log source floe cannot follow: the operator is told. */
		if (!st.dir)
			floe_tail_note_special(sc->t, path);
		return 0;
	}
	if (!floe_tail_path_allowed(sc->t, sc->pattern, path, &st))
		return 0;
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

/* Looks for f's identity among the other names of its directory (a file rotated out of
 * the globs: app.log -> app.log.1 with the pattern app.log). */
struct relocate {
	struct floe_tail *t;
	struct tfile *f;
	char dir[PATH_CAP];
	char found[PATH_CAP];
};

static int on_sibling(void *ctx, const char *name)
{
	struct relocate *r = ctx;
	char p[PATH_CAP];
	int n = snprintf(p, sizeof(p), "%s/%s", r->dir, name);
	if (n < 0 || (size_t)n >= sizeof(p) || floe_tail_excluded(r->t, p))
		return 0;
	struct floe_fs_stat st;
	if (floe_fs_stat(p, &st) != 0 || !st.regular || st.dev != r->f->dev || st.ino != r->f->ino)
		return 0;
	memcpy(r->found, p, (size_t)n + 1);
	return 1;
}

static int relocate(struct floe_tail *t, struct tfile *f, bool *moved)
{
	*moved = false;
	struct relocate r;
	r.t = t;
	r.f = f;
	/* Beside its name, then beside its target's (a file behind a link is rotated in the
	 * target's directory: kubelet's 0.log -> 0.log.<time> behind
	 * /var/log/containers/x.log). */
	char now_real[PATH_CAP];
	const char *where[2] = {f->path, f->real};
	if (!f->real_known && floe_path_real(f->path, now_real, sizeof(now_real)) == 0 &&
	    strcmp(now_real, f->path) != 0)
		where[1] = now_real; /* restored, never found by a scan: where the link leads now */
	int found = 0;
	for (int k = 0; k < 2 && found != 1; k++)
		if (where[k] && dir_of(where[k], r.dir, sizeof(r.dir)) == 0)
			found = floe_fs_list(t->a, r.dir, on_sibling, &r);
	if (found != 1)
		return 0;
	char *p = floe_strdup(t->a, r.found);
	if (!p)
		return FLOE_ENOMEM;
	floe_free(t->a, f->path);
	f->path = p;
	forget_real(t, f);
	*moved = true;
	return note_real(t, f);
}

/* Expands every pattern and follows what it finds: files known by identity first, then
 * new ones (a file renamed while we were away claims its saved position before a new
 * file at its old name is judged, whatever the glob order). */
static int glob_and_follow(struct floe_tail *t)
{
	struct scan sc = {t, NULL, 0, 0, 0};
	int rc = 0;
	floe_tail_paths_begin(t);
	for (size_t i = 0; i < t->npaths && rc == 0; i++) {
		sc.pattern = i;
		rc = floe_glob(t->paths[i], on_path, &sc);
	}
	if (rc == 0)
		floe_tail_paths_end(t);
	for (int pass = 0; pass < 2 && rc == 0; pass++) {
		for (size_t i = 0; i < sc.n && rc == 0; i++) {
			struct found *r = &sc.v[i];
			if (!r->path || (pass == 0 && !find_by_id(t, r->st.dev, r->st.ino)))
				continue;
			rc = follow(t, r->path, &r->st);
			floe_free(t->a, r->path);
			r->path = NULL;
		}
	}
	for (size_t i = 0; i < sc.n; i++)
		floe_free(t->a, sc.v[i].path);
	floe_free(t->a, sc.v);
	return rc;
}

/* A file found and gone before it could be opened, with bytes: counted, and logged at
 * most once a minute (a burst of short-lived files is one line). */
static void note_lost(struct floe_tail *t, const struct tfile *f, int64_t now)
{
	t->st.files_lost++;
	t->st.lost_bytes += f->size_seen - f->pos;
	if (t->lost_said && now - t->lost_said < 60000) {
		t->lost_unsaid++;
		return;
	}
	floe_warn("%s: %s went away before a descriptor was free to read it: %" PRIu64
		  " bytes never read (max_open_files %zu, every descriptor held by a file being "
		  "read)%s",
		  t->name, f->path, f->size_seen - f->pos, t->max_open,
		  t->lost_unsaid ? "; more such files since the last line: see files_lost" : "");
	t->lost_said = now ? now : 1;
	t->lost_unsaid = 0;
}

/* What the globs did not find: open files drain, a file that just disappeared is looked
 * for under another name, positions of files gone longer than forget_after go (and the
 * oldest ones beyond FLOE_TAIL_MAX_STALE). */
static int sweep_unseen(struct floe_tail *t, int64_t now)
{
	int rc = 0;
	size_t gone = 0;
	for (size_t i = 0; i < t->nfiles && rc == 0; i++) {
		struct tfile *f = t->files[i];
		if (f->seen)
			continue;
		if (f->fd >= 0) {
			if (!f->draining) {
				f->draining = true;
				f->drain_since = now;
			}
			continue;
		}
		if (f->orphan)
			continue; /* found by identity outside the globs, waiting for a descriptor
				   */
		if (f->present || !f->gone) {
			/* Just disappeared (a parked file rotated, or a restored position matched
			 * nowhere): look for it under another name in its directory, to read what
			 * was appended before the rotation. */
			f->present = false;
			f->want_open = false;
			bool moved = false;
			if (!f->has_fp) {
				/* Never opened: nothing to keep. If it held bytes it went unread
				 * (no descriptor was free for it in time): counted and said. */
				if (f->size_seen > f->pos && !f->denied)
					note_lost(t, f, now);
				floe_tail_entry_free(t, f);
				t->files[i] = NULL;
				continue;
			}
			if ((rc = relocate(t, f, &moved)) != 0)
				break;
			if (moved) {
				f->orphan = f->want_open = true;
				continue;
			}
			f->gone = true;
			f->gone_since = now;
		}
		if (now - f->gone_since >= t->forget_after) {
			floe_tail_entry_free(t, f);
			t->files[i] = NULL;
			continue;
		}
		gone++;
	}
	/* At the cap, the entries gone longest go first. */
	while (gone > FLOE_TAIL_MAX_STALE) {
		size_t old = SIZE_MAX;
		for (size_t i = 0; i < t->nfiles; i++) {
			struct tfile *f = t->files[i];
			if (f && f->fd < 0 && !f->present && !f->orphan &&
			    (old == SIZE_MAX || f->gone_since < t->files[old]->gone_since))
				old = i;
		}
		floe_tail_entry_free(t, t->files[old]);
		t->files[old] = NULL;
		gone--;
	}
	floe_tail_compact(t);
	return rc;
}

int floe_tail_scan(struct floe_tail *t)
{
	int64_t now = floe_tail_mono(t);
	for (size_t i = 0; i < t->nfiles; i++) {
		t->files[i]->seen = false;
		t->files[i]->done = false; /* may have grown since: not a file to park now */
	}
	t->scan_wanted = false;
	/* Globbing every directory level again costs an opendir, a getdents and a stat per
	 * directory (4,000 of each in a pod log tree), and what it would find is an event
	 * of the level above, which is watched: only after such an event, events lost, or
	 * a watched directory gone without one (floe_watch_recheck). */
	if (t->watch && (t->watch_wanted || now - t->watched_at >= TAIL_WATCH_REFRESH_MS ||
			 floe_watch_recheck(t->watch) > 0)) {
		t->watch_wanted = false;
		t->watched_at = now;
		floe_tail_watch_patterns(t);
	}
	int rc = glob_and_follow(t);
	if (rc == 0)
		rc = sweep_unseen(t, now);
	if (rc)
		return rc;
	t->scanned = true;
	size_t opened;
	return floe_tail_open_wanted(t, &opened);
}

static bool pattern_match(const struct floe_tail *t, const char *path)
{
	for (size_t i = 0; i < t->npaths; i++)
		if (floe_fnmatch(t->paths[i], path))
			return !floe_tail_excluded(t, path);
	return false;
}

void floe_tail_set_watch(struct floe_tail *t, struct floe_watch *w)
{
	t->watch = w;
	if (!w)
		return;
	t->watched_at = floe_tail_mono(t);
	t->watch_wanted = false;
	floe_tail_watch_patterns(t);
	for (size_t i = 0; i < t->nfiles; i++)
		(void)floe_watch_add_file_dirs(w, t->files[i]->path);
}

void floe_tail_notify(struct floe_tail *t, const struct floe_watch_event *ev)
{
	if (ev->kind == FLOE_WATCH_RESCAN || !ev->dir || !ev->name) {
		t->scan_wanted = t->watch_wanted = true;
		return;
	}
	char p[PATH_CAP];
	int n = snprintf(p, sizeof(p), "%s/%s", ev->dir, ev->name);
	if (n < 0 || (size_t)n >= sizeof(p))
		return;
	if (ev->kind == FLOE_WATCH_MODIFIED) {
		/* Writes to open files are read anyway: only closed ones need a lookup. */
		if (t->nopen == t->nfiles)
			return;
		struct tfile *f = find_by_path(t, p);
		if (f && f->fd < 0 && f->present)
			f->want_open = true;
		for (size_t i = 0; !f && t->nreal && i < t->nfiles; i++) {
			struct tfile *g = t->files[i];
			if (g->real && g->fd < 0 && g->present && strcmp(g->real, p) == 0)
				g->want_open = true;
		}
		return;
	}
	/* A directory on a pattern's way (a container's, a log directory made again) is
	 * watched by the scan, which finds what was written in it meanwhile. A file that
	 * appears or goes at a link's target (the target rotated behind the link) is seen
	 * through the link by the scan. */
	if (floe_tail_on_pattern_path(t, p))
		t->scan_wanted = t->watch_wanted = true;
	else if (find_by_path(t, p) || pattern_match(t, p) || (t->nreal && find_by_real(t, p)))
		t->scan_wanted = true;
}
