/* File tailing: the tail object and the reading of lines. Each open file has a bounded
 * buffer holding the bytes read but not yet delivered; buf[start] is the byte at file
 * offset pos, so the position always means "every byte before it was delivered as a
 * line" (or was a NUL byte, skipped), and the bytes before buf[start] are kept (up to FLOE_TAIL_PREHASH) to hash the
 * bytes before the position without reading the file again. Discovery and rotation are
 * in tail_files.c, the positions blob in tail_positions.c, the path rules in
 * tail_paths.c, and what they all share about an entry in tail_entry.c: this file calls
 * them, none of them calls this one. */
#include "tail_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/clock.h"
#include "platform/fs.h"
#include "platform/glob.h"
#include "platform/log.h"

#include <inttypes.h>
#include <string.h>

#define DEFAULT_CHUNK ((size_t)64 * 1024)
#define DEFAULT_MAX_LINE ((size_t)64 * 1024)
#define DEFAULT_ROTATE_WAIT_MS 5000
#define DEFAULT_MAX_OPEN 256
#define DEFAULT_FORGET_MS ((int64_t)24 * 3600 * 1000)

static int64_t system_ms(void *ctx)
{
	(void)ctx;
	return floe_clock_now_us() / 1000;
}

static int64_t system_mono_ms(void *ctx)
{
	(void)ctx;
	return floe_clock_mono_ns() / 1000000;
}

static void free_strings(struct floe_alloc *a, char **v, size_t n)
{
	if (!v)
		return;
	for (size_t i = 0; i < n; i++)
		floe_free(a, v[i]);
	floe_free(a, v);
}

/* Copies src[0..n) (n > 0) into *out: 0, FLOE_EINVAL (a NULL string) or FLOE_ENOMEM. */
static int copy_strings(struct floe_alloc *a, const char *const *src, size_t n, char ***out)
{
	char **v = floe_calloc(a, n, sizeof(*v));
	if (!v)
		return FLOE_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		int rc = !src[i] ? FLOE_EINVAL : !(v[i] = floe_strdup(a, src[i])) ? FLOE_ENOMEM : 0;
		if (rc) {
			free_strings(a, v, n);
			return rc;
		}
	}
	*out = v;
	return 0;
}

int floe_tail_new(struct floe_alloc *a, const struct floe_tail_options *o, struct floe_tail **out)
{
	if (!o || (o->npaths && !o->paths) || (o->nexclude && !o->exclude) ||
	    o->rotate_wait_ms < 0 || o->forget_after_ms < 0 || o->partial_line_ms < 0 ||
	    o->max_open_files > FLOE_TAIL_MAX_OPEN)
		return FLOE_EINVAL;
	struct floe_tail *t = floe_calloc(a, 1, sizeof(*t));
	if (!t)
		return FLOE_ENOMEM;
	t->a = a;
	t->start_at_end = o->start_at_end;
	t->max_line = o->max_line_bytes ? o->max_line_bytes : DEFAULT_MAX_LINE;
	t->chunk = o->read_chunk ? o->read_chunk : DEFAULT_CHUNK;
	t->rotate_wait = o->rotate_wait_ms ? o->rotate_wait_ms : DEFAULT_ROTATE_WAIT_MS;
	t->forget_after = o->forget_after_ms ? o->forget_after_ms : DEFAULT_FORGET_MS;
	t->max_open = o->max_open_files ? o->max_open_files : DEFAULT_MAX_OPEN;
	t->clock_ms = o->clock_ms ? o->clock_ms : system_ms;
	t->mono_ms = o->mono_ms ? o->mono_ms : system_mono_ms;
	t->clock_ctx = o->clock_ctx;
	t->confirm_new = o->confirm_new;
	t->partial_idle = o->partial_idle;
	t->partial_ms = o->partial_line_ms < 0 ? 0 : o->partial_line_ms;
	/* +2: a line of exactly max_line bytes plus its CR LF fits whole; + PREHASH: the
	 * bytes before the position kept in front. */
	if (__builtin_add_overflow(t->max_line, t->chunk, &t->bufcap) ||
	    __builtin_add_overflow(t->bufcap, (size_t)2 + FLOE_TAIL_PREHASH, &t->bufcap)) {
		floe_free(a, t);
		return FLOE_EINVAL;
	}
	int rc = 0;
	if (o->npaths && (rc = copy_strings(a, o->paths, o->npaths, &t->paths)))
		goto out;
	t->npaths = o->npaths;
	if (o->nexclude && (rc = copy_strings(a, o->exclude, o->nexclude, &t->exclude)))
		goto out;
	t->nexclude = o->nexclude;
	rc = floe_tail_paths_init(t, o);
out:
	if (rc) {
		floe_tail_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

void floe_tail_free(struct floe_tail *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nfiles; i++)
		floe_tail_entry_free(t, t->files[i]);
	floe_free(t->a, t->files);
	floe_tail_paths_fini(t);
	free_strings(t->a, t->paths, t->npaths);
	free_strings(t->a, t->exclude, t->nexclude);
	floe_free(t->a, t);
}

/* --- reading -------------------------------------------------------------------------- */

/* Finds the next line in the held bytes: *len = bytes to show, *consume = bytes the line
 * takes in the file. Returns false when only a partial line is held. Lines longer than
 * max_line are cut into max_line pieces (*split). */
__attribute__((always_inline)) static inline bool next_line(const struct floe_tail *t,
							    const struct tfile *f, size_t *len,
							    size_t *consume, bool *split)
{
	const uint8_t *p = f->buf + f->start;
	size_t w = f->len < t->max_line + 2 ? f->len : t->max_line + 2;
	const uint8_t *nl = memchr(p, '\n', w);
	/* A NUL byte ends the line before it (skip_nuls drops the run that follows). */
	const uint8_t *nul = f->nul ? memchr(p, 0, nl ? (size_t)(nl - p) : w) : NULL;
	if (nul) {
		size_t content = (size_t)(nul - p);
		if (content && p[content - 1] == '\r')
			content--;
		*len = content;
		*consume = (size_t)(nul - p);
		*split = false;
		return true;
	}
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

/* A run of NUL bytes at the head of f's held bytes is no line and part of none: where a
 * power cut came before a file's blocks were written, the file holds zeros up to where
 * its writer went on after the restart, and a sparse or binary file (lastlog, wtmp) holds
 * runs of them. The run is consumed unseen, counted, and said once per file; the line
 * before it ended at its first NUL (next_line), the text after it starts a new one.
 * The run at the head here, out of line. */
__attribute__((noinline)) static bool skip_nuls_run(struct floe_tail *t, struct tfile *f,
						    size_t *progress)
{
	size_t n = 1;
	while (n < f->len && f->buf[f->start + n] == 0)
		n++;
	if (!f->nul_said) {
		f->nul_said = true;
		floe_warn("%s: %s: NUL bytes from offset %" PRIu64 " skipped (a hole in the file: "
			  "a power cut before its blocks were written, or a sparse or binary file); "
			  "they end the line before them, and are counted in nul_bytes_skipped",
			  t->name, f->path, f->pos);
	}
	f->start += n;
	f->len -= n;
	f->pos += n;
	t->st.bytes += n;
	t->st.nul_bytes_skipped += n;
	*progress += n;
	f->unterminated = false; /* a line flushed before the run ended at it */
	if (f->len == 0)
		f->nul = false;
	return true;
}

/* Consumes a run of NUL bytes at the head of f's held bytes: whether there was one. The
 * test in line: a file with no NUL read (f->nul) has none, line after line. */
static inline bool skip_nuls(struct floe_tail *t, struct tfile *f, size_t *progress)
{
	if (!f->nul || f->len == 0 || f->buf[f->start] != 0)
		return false;
	return skip_nuls_run(t, f, progress);
}

/* Calls fn for the line at the head of f's held bytes and consumes it unless fn fails.
 * Returns fn's result (a positive one meaning stop). Inline, as next_line is: a call
 * each a line, with a dozen registers to save, cost more than their code. */
__attribute__((always_inline)) static inline int deliver(struct floe_tail *t, struct tfile *f,
							 size_t len, size_t consume, bool split,
							 floe_tail_line_fn fn, void *ctx,
							 size_t *progress)
{
	if (!f->id)
		f->id = ++t->last_id;
	struct floe_tail_line line = {f->path, f->pos, (const char *)f->buf + f->start, len,
				      f->pos + consume, f->id};
	/* With truncate_long, the pieces after a long line's first are consumed unseen. */
	bool drop = t->truncate_long && f->in_long;
	int rc = drop ? 0 : fn(ctx, &line);
	if (rc < 0)
		return rc;
	f->start += consume;
	f->len -= consume;
	f->pos += consume;
	if (f->len == 0)
		f->nul = false;
	t->st.lines += !drop;
	t->st.bytes += consume;
	if (split && !f->in_long) {
		if (t->truncate_long)
			t->st.long_lines_truncated++;
		else
			t->st.long_lines_split++;
	}
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
	if (f->len == 0 || !swallow_terminator(t, f, progress))
		return 0;
	while (f->len && *progress < max_bytes) {
		if (skip_nuls(t, f, progress))
			continue;
		if (!next_line(t, f, &len, &consume, &split))
			break;
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
	if (f->len == 0)
		return 0;
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
		if (skip_nuls(t, f, progress))
			continue;
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
		bool partial =
		    consume == f->len && !split && f->buf[f->start + consume - 1] != '\n';
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

/* Whether f's held partial line may be delivered: always without partial_idle (the
 * caller flushes), else only once the file holds nothing after it and has not been
 * modified for partial_ms. A writer whose buffer flushed half a line is still writing
 * it; a file untouched for that long is finished. */
static bool partial_due(const struct floe_tail *t, struct tfile *f)
{
	if (!t->partial_idle)
		return true;
	struct floe_fs_stat st;
	if (f->fd < 0 || floe_fs_fstat(f->fd, &st) != 0 || st.size != f->pos + f->len)
		return false;
	/* The modification time is a wall time: the file's age is the wall clock's. */
	int64_t age = floe_tail_now(t) - st.mtime_us / 1000;
	if (age >= 0)
		return age >= t->partial_ms;
	/* Modified in the future: the wall clock stepped back since (or the writer's runs
	 * ahead, over a network file system), and it may take a year to pass that time
	 * again. A negative age is no age: the line is due once the file has stayed as it is
	 * (size, modification time) for partial_ms on the monotonic clock. */
	int64_t now = floe_tail_mono(t);
	if (!f->still_known || f->still_size != st.size || f->still_mtime != st.mtime_us) {
		f->still_known = true;
		f->still_size = st.size;
		f->still_mtime = st.mtime_us;
		f->still_since = now;
	}
	return now - f->still_since >= t->partial_ms;
}

/* Reads once into f's buffer. Sets f->done at end of file (or at stop_at when closing);
 * resets a truncated file. */
static int fill(struct floe_tail *t, struct tfile *f)
{
	/* A file's buffer starts at one read chunk and grows only while a line longer than
	 * that is held, so that a hundred files read in turns cost a hundred chunks, not a
	 * hundred maximal lines. Without memory the file waits (backpressure), it does not
	 * fail the read. */
	if (!f->buf) {
		size_t init = t->chunk + FLOE_TAIL_PREHASH + 256;
		if (init > t->bufcap)
			init = t->bufcap;
		if (!(f->buf = floe_malloc(t->a, init))) {
			f->starved = true;
			return 0;
		}
		f->cap = init;
		f->start = f->len = 0;
	}
	/* Keep up to FLOE_TAIL_PREHASH bytes before the position in front of the held ones. */
	size_t keep = f->start < FLOE_TAIL_PREHASH ? f->start : FLOE_TAIL_PREHASH;
	if (f->start > keep) {
		memmove(f->buf, f->buf + f->start - keep, keep + f->len);
		f->start = keep;
	}
	/* next_line cuts any run of max_line + 2 bytes, so a buffer of bufcap bytes always has
	 * a chunk free; a smaller one grows when a partial line leaves less than a chunk. */
	size_t room = f->cap - f->start - f->len;
	if (room < t->chunk && f->cap < t->bufcap) {
		size_t ncap = f->cap * 2;
		if (ncap > t->bufcap || ncap < f->cap)
			ncap = t->bufcap;
		uint8_t *nb = floe_realloc(t->a, f->buf, ncap);
		if (nb) {
			f->buf = nb;
			f->cap = ncap;
			room = f->cap - f->start - f->len;
		} else if (room == 0) {
			f->starved = true;
			return 0;
		}
	}
	size_t want = room < t->chunk ? room : t->chunk, got = 0;
	uint64_t at = f->pos + f->len;
	if (f->closing) {
		uint64_t left = f->stop_at > at ? f->stop_at - at : 0;
		if (left < want)
			want = (size_t)left;
	}
	int rc = want ? floe_fs_pread(f->fd, f->buf + f->start + f->len, want, at, &got) : 0;
	if (rc)
		return rc;
	if (got) {
		if (memchr(f->buf + f->start + f->len, 0, got))
			f->nul = true;
		f->len += got;
		f->at_eof = false;
		if (at + got > f->read_to) {
			f->read_to = at + got;
			t->fresh = true;
		}
		return floe_tail_refresh_fingerprint(f, f->pos + f->len);
	}
	if (!f->closing) {
		struct floe_fs_stat st;
		if ((rc = floe_fs_fstat(f->fd, &st)) != 0)
			return rc;
		if (st.size < at) {
			if ((rc = floe_tail_follow_copy(t, f)) != 0)
				return rc;
			floe_tail_reset_file(t, f, true);
			return 0;
		}
	}
	f->done = true;
	if (!f->at_eof) {
		f->at_eof = true;
		f->idle_since = floe_tail_mono(t);
	}
	if (f->len == 0) {
		/* Nothing held: give the buffer back while the file is idle. */
		floe_tail_cache_prehash(f);
		floe_free(t->a, f->buf);
		f->buf = NULL;
		f->cap = 0;
		f->start = 0;
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
	if ((rc = fill(t, f)) != 0 || f->starved)
		return rc;
	if (f->done) {
		/* A closing file will not be read any further: its partial line is complete. So
		 * is that of a file idle for partial_line_ms. */
		bool idle = t->partial_idle && f->len && partial_due(t, f);
		return f->closing || idle ? emit_all(t, f, fn, ctx, progress) : 0;
	}
	return emit_lines(t, f, max_bytes, fn, ctx, progress);
}

/* Starts closing the files that have drained for rotate_wait: they are read up to their
 * size now, however much a writer still appends. */
static void start_closing(struct floe_tail *t, int64_t now)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		if (f->fd < 0 || !f->draining || f->closing ||
		    now - f->drain_since < t->rotate_wait)
			continue;
		struct floe_fs_stat st;
		f->closing = true;
		f->stop_at = floe_fs_fstat(f->fd, &st) == 0 ? st.size : f->pos + f->len;
	}
}

/* Closes the files that are drained, keeping their positions by identity unless they
 * were deleted. */
static void close_drained(struct floe_tail *t, int64_t now)
{
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		if (f->fd < 0 || !f->closing || !f->done || f->len != 0)
			continue;
		struct floe_fs_stat st;
		bool deleted = floe_fs_fstat(f->fd, &st) == 0 && st.nlink == 0;
		t->st.rotated_closed++;
		if (deleted) {
			floe_tail_entry_free(t, f);
			t->files[i] = NULL;
			continue;
		}
		floe_tail_close_entry(t, f);
		f->present = false;
		f->gone = true;
		f->gone_since = now;
	}
	floe_tail_compact(t);
}

/* With many files read in turns, a buffer that holds only a short partial line once its
 * file is at its end for this read call is given back: nothing before f->pos depends on
 * it, and the next read call reads those bytes again (from the page cache). Memory then
 * follows the files being read at the moment, not the number of files with a line in
 * progress. Only a file that is done may let go: one still being read would read the same
 * bytes again in its next turn, and never reach its end. */
#define RELEASE_FILES 8
#define RELEASE_BYTES (16u << 10)

static void release_partial(struct floe_tail *t, struct tfile *f)
{
	if (!f->buf || !f->done || f->len > RELEASE_BYTES || f->closing)
		return;
	floe_tail_cache_prehash(f);
	floe_free(t->a, f->buf);
	f->buf = NULL;
	f->cap = 0;
	f->start = f->len = 0;
}

int floe_tail_read(struct floe_tail *t, size_t max_bytes, floe_tail_line_fn fn, void *ctx,
		   size_t *progress)
{
	*progress = 0;
	if (max_bytes == 0)
		return 0;
	int rc = 0;
	if (t->scan_wanted && (rc = floe_tail_scan(t)) != 0)
		return rc;
	int64_t now = floe_tail_mono(t);
	start_closing(t, now);
	for (size_t i = 0; i < t->nfiles; i++)
		t->files[i]->done = t->files[i]->starved = false;
	size_t opened;
	if ((rc = floe_tail_open_wanted(t, &opened)) != 0)
		return rc;
	size_t first = 0;
	for (;;) {
		size_t n = t->nfiles;
		if (n == 0)
			break;
		first = t->rr % n;
		bool more = true;
		int idle = 0;
		while (more) {
			more = false;
			size_t before = *progress;
			t->fresh = false;
			for (size_t k = 0; k < n; k++) {
				size_t i = (first + k) % n;
				struct tfile *f = t->files[i];
				if (f->fd < 0 || f->done || f->starved || f->unsaved)
					continue;
				rc = turn(t, f, max_bytes, fn, ctx, progress);
				if (rc >= 0 && t->nfiles > RELEASE_FILES)
					release_partial(t, f);
				if (rc < 0) {
					t->rr = i; /* the refused line comes first next time */
					goto out;
				}
				if (rc > 0 || *progress >= max_bytes) {
					rc = 0;
					t->rr = i + 1;
					goto out;
				}
				if (!f->done && !f->starved)
					more = true;
			}
			/* Passes that deliver nothing and read no byte not read before would
			 * only be repeated: after two of them the read call ends, whatever state
			 * a file is in, so that no file can keep it (and the agent's loop, and
			 * its stop signal) waiting. */
			idle = *progress == before && !t->fresh ? idle + 1 : 0;
			if (idle >= 2)
				more = false;
		}
		/* Every open file is at its end: close the drained ones and make room for the
		 * files waiting for a descriptor, and read those too. */
		t->rr = first;
		close_drained(t, now);
		if ((rc = floe_tail_open_wanted(t, &opened)) != 0 || opened == 0)
			break;
	}
out:
	close_drained(t, now);
	return rc;
}

int floe_tail_flush_partial(struct floe_tail *t, floe_tail_line_fn fn, void *ctx)
{
	size_t progress = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		struct tfile *f = t->files[i];
		/* A partial line whose buffer was given back (release_partial) is read again
		 * first: exactly the bytes that were held. Without memory for it, the file
		 * keeps its line for a later read (its position does not move). */
		while (f->fd >= 0 && f->pos + f->len < f->read_to) {
			uint64_t had = f->pos + f->len;
			int rc = fill(t, f);
			if (rc)
				return rc;
			if (f->starved || f->pos + f->len == had)
				break; /* no memory, or the file shrank */
		}
		if (f->starved || f->pos + f->len < f->read_to || !partial_due(t, f))
			continue;
		int rc = emit_all(t, f, fn, ctx, &progress);
		if (rc)
			return rc < 0 ? rc : 1;
	}
	return 0;
}

void floe_tail_get_stats(const struct floe_tail *t, struct floe_tail_stats *out)
{
	*out = t->st;
	out->files_open = t->nopen;
	out->files_parked = out->files_unreadable = 0;
	out->lag_bytes = out->files_draining = 0;
	for (size_t i = 0; i < t->nfiles; i++) {
		const struct tfile *f = t->files[i];
		struct floe_fs_stat st;
		out->files_parked += f->fd < 0 && f->present;
		out->files_unreadable += f->denied;
		if (f->fd < 0)
			continue;
		out->files_draining += f->draining;
		if (floe_fs_fstat(f->fd, &st) == 0 && st.size > f->pos)
			out->lag_bytes += st.size - f->pos;
	}
}
