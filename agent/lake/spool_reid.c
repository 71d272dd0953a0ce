/* Spool entries whose files carry provisional field ids get the table's: each data file
 * is rewritten under a new name with its footer's ids replaced (formats/parquet/
 * footer_ids.h: the bytes before the footer are copied as they are), then the entry
 * file is replaced by one that names the new files, with their sizes, checksums and
 * metrics under the new ids and without the provisional columns. */
#include "spool.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "formats/parquet/footer_ids.h"
#include "platform/fs.h"

#include <inttypes.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

#define COPY_CHUNK ((size_t)256 << 10)
#define FOOTER_MAX ((size_t)16 << 20)

/* A file being rewritten: the old one read, the new one written, both hashed. */
struct rewrite {
	struct floe_spool *sp;
	struct floe_alloc *a;
	const struct floe_pq_reid *map;
	size_t n;
	struct floe_err *err;
	uint8_t *chunk; /* COPY_CHUNK bytes */
	struct floe_buf tail;
};

/* Copies old bytes [0, len) of fd to f, hashing them into st. */
static int copy_prefix(struct rewrite *w, int fd, uint64_t len, struct floe_file *f,
		       XXH64_state_t *st)
{
	for (uint64_t off = 0; off < len;) {
		size_t want = len - off < COPY_CHUNK ? (size_t)(len - off) : COPY_CHUNK, got = 0;
		int rc = floe_fs_pread(fd, w->chunk, want, off, &got);
		if (rc == 0 && got != want)
			rc = FLOE_ECORRUPT; /* shorter than it was a moment ago */
		if (rc == 0)
			rc = floe_file_write(f, w->chunk, got);
		if (rc)
			return rc;
		XXH64_update(st, w->chunk, got);
		off += got;
	}
	return 0;
}

/* The new footer of the file open as fd (size bytes) into w->tail, and where the old one
 * starts. */
static int new_tail(struct rewrite *w, int fd, uint64_t size, const char *path, uint64_t *at)
{
	uint8_t frame[FLOE_PQ_TAIL];
	uint32_t len;
	size_t got = 0;
	struct floe_err e = {0};
	int rc = size < FLOE_PQ_TAIL
		     ? FLOE_ECORRUPT
		     : floe_fs_pread(fd, frame, sizeof(frame), size - FLOE_PQ_TAIL, &got);
	if (rc == 0 && got != sizeof(frame))
		rc = FLOE_ECORRUPT;
	if (rc == 0)
		rc = floe_pq_footer_span(frame, size, at, &len, &e);
	if (rc == 0 && len > FOOTER_MAX)
		rc = floe_err_set(&e, FLOE_ELIMIT, "a footer of %u bytes", len);
	uint8_t *footer = rc ? NULL : floe_malloc(w->a, len);
	if (rc == 0 && !footer)
		rc = FLOE_ENOMEM;
	if (rc == 0 && (rc = floe_fs_pread(fd, footer, len, *at, &got)) == 0 && got != len)
		rc = FLOE_ECORRUPT;
	struct floe_pq_reid map[FLOE_SPOOL_PROV_MAX];
	memcpy(map, w->map, w->n * sizeof(*map));
	floe_buf_reset(&w->tail);
	if (rc == 0)
		rc = floe_pq_footer_reid(footer, len, map, w->n, &w->tail, &e);
	floe_free(w->a, footer);
	if (rc)
		return floe_err_set(w->err, rc, "%s: %s", path, floe_err_text(&e, rc));
	return 0;
}

/* Writes the rewrite of spool file old as name (a temporary first, fsynced and renamed
 * into place), setting nf's size and XXH64. */
static int rewrite_file(struct rewrite *w, const struct floe_spool_file *old,
			struct floe_spool_file *nf)
{
	char from[FLOE_PATH_MAX], to[FLOE_PATH_MAX], tmp[FLOE_PATH_MAX];
	struct floe_fs_stat st;
	struct floe_file *f = NULL;
	uint64_t at = 0;
	int fd = -1;
	XXH64_state_t h;
	XXH64_reset(&h, 0);
	int rc = floe_spool_path(w->sp, old->name, from, sizeof(from));
	if (rc == 0)
		rc = floe_spool_path(w->sp, nf->name, to, sizeof(to));
	if (rc == 0)
		rc = floe_fmt(tmp, sizeof(tmp), "%s.tmp", to);
	if (rc)
		return floe_err_set(w->err, rc, "spool path too long for %s", nf->name);
	if ((rc = floe_fs_open_read(from, &fd)) == 0 && (rc = floe_fs_fstat(fd, &st)) == 0 &&
	    (rc = new_tail(w, fd, st.size, from, &at)) == 0 &&
	    (rc = floe_file_create(tmp, &f)) == 0 && (rc = copy_prefix(w, fd, at, f, &h)) == 0 &&
	    (rc = floe_file_write(f, w->tail.data, w->tail.len)) == 0)
		rc = floe_file_sync(f);
	if (fd >= 0)
		floe_fs_close(fd);
	int crc = f ? floe_file_close(f) : 0;
	rc = rc ? rc : crc;
	if (rc == 0)
		rc = floe_fs_rename(tmp, to);
	if (rc) {
		(void)floe_fs_unlink(tmp);
		if (!w->err->code)
			floe_err_set(w->err, rc, "rewriting %s: %s", from, floe_strerror(rc));
		return rc;
	}
	XXH64_update(&h, w->tail.data, w->tail.len);
	nf->size = (int64_t)(at + w->tail.len);
	nf->xxh64 = XXH64_digest(&h);
	nf->has_xxh64 = true;
	return 0;
}

/* nf: old's copy under a new name, with its metrics (bounds borrowed) under new ids. */
static int remap_file(struct rewrite *w, const struct floe_spool_file *old,
		      struct floe_spool_file *nf)
{
	size_t n = strlen(old->name), k = strlen(".parquet");
	*nf = *old;
	nf->name = NULL;
	nf->metrics = NULL;
	if (n <= k || strcmp(old->name + n - k, ".parquet") != 0 ||
	    !(nf->name = floe_malloc(w->a, n + strlen(FLOE_SPOOL_REID_SUFFIX))))
		return n <= k ? FLOE_ECORRUPT : FLOE_ENOMEM;
	memcpy(nf->name, old->name, n - k);
	strcpy(nf->name + n - k, FLOE_SPOOL_REID_SUFFIX);
	if (old->nmetrics &&
	    !(nf->metrics = floe_calloc(w->a, old->nmetrics, sizeof(*nf->metrics))))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < old->nmetrics; i++) {
		nf->metrics[i] = old->metrics[i];
		for (size_t m = 0; m < w->n; m++)
			if (old->metrics[i].field_id == w->map[m].from)
				nf->metrics[i].field_id = w->map[m].to;
	}
	return 0;
}

int floe_spool_reid(struct floe_spool *sp, const struct floe_spool_entry *e,
		    const struct floe_pq_reid *map, size_t n, struct floe_err *err)
{
	struct floe_alloc *a = floe_spool_alloc(sp);
	struct floe_err local;
	if (!err)
		err = &local;
	floe_err_clear(err);
	struct rewrite w = {sp, a, map, n, err, NULL, {0}};
	struct floe_spool_entry now = *e;
	now.prov = NULL;
	now.nprov = 0;
	now.files = floe_calloc(a, e->nfiles ? e->nfiles : 1, sizeof(*now.files));
	w.chunk = floe_malloc(a, COPY_CHUNK);
	floe_buf_init(&w.tail, a, FOOTER_MAX + FLOE_PQ_TAIL + 64);
	int rc = n > FLOE_SPOOL_PROV_MAX ? FLOE_ELIMIT : !now.files || !w.chunk ? FLOE_ENOMEM : 0;
	if (rc)
		floe_err_set(err, rc, "rewriting spool entry %" PRIu64 ": %s", e->seq,
			     floe_strerror(rc));
	size_t done = 0;
	for (; rc == 0 && done < e->nfiles; done++) {
		if ((rc = remap_file(&w, &e->files[done], &now.files[done])) != 0)
			floe_err_set(err, rc, "spool entry %" PRIu64 ": %s", e->seq,
				     floe_strerror(rc));
		else
			rc = rewrite_file(&w, &e->files[done], &now.files[done]);
	}
	/* The durability point: from here the entry names the new files. */
	if (rc == 0 && (rc = floe_spool_replace_entry(sp, e, &now)) != 0)
		floe_err_set(err, rc, "replacing spool entry %" PRIu64 ": %s", e->seq,
			     floe_strerror(rc));
	for (size_t i = 0; i < done && i < e->nfiles; i++) {
		char path[FLOE_PATH_MAX];
		/* A failure leaves no new file behind (floe_spool_open would remove it too). */
		if (rc && now.files[i].name &&
		    floe_spool_path(sp, now.files[i].name, path, sizeof(path)) == 0)
			(void)floe_fs_unlink(path);
		floe_free(a, now.files[i].name);
		floe_free(a, now.files[i].metrics);
	}
	floe_free(a, now.files);
	floe_free(a, w.chunk);
	floe_buf_fini(&w.tail);
	return rc;
}
