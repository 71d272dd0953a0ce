/* Spool entries: data files plus a checksummed JSON entry file per seal. */
#include "spool.h"

#include "agent/state/blobfile.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

#define ENTRY_MAX_BYTES FLOE_SPOOL_ENTRY_MAX
#define VERIFY_CHUNK ((size_t)256 << 10)

/* What the handles of one spool share: the runner's main thread seals into it while its
 * committer thread removes from it, each through its own handle (floe_spool_share), so
 * the counters are updated atomically. */
struct spool_counts {
	uint64_t quarantined;
	uint64_t bytes; /* data bytes of the whole entries (their files' sizes) */
	/* Whole entries in the directory: counted at open, then on each entry file written
	 * anew, removed or moved to quarantine, so that the metrics need not list the
	 * directory (thousands of files after days offline) every second. */
	uint64_t entries;
};

struct floe_spool {
	struct floe_alloc *alloc;
	char dir[FLOE_PATH_MAX];
	struct floe_part_spec spec;
	struct spool_counts own;
	struct spool_counts *counts; /* &own, or the first handle's for a share */
	/* The columns this handle's entries carry under provisional ids. */
	struct floe_spool_prov prov[FLOE_SPOOL_PROV_MAX];
	size_t nprov;
};

static void count_add(uint64_t *c, uint64_t n)
{
	__atomic_add_fetch(c, n, __ATOMIC_RELAXED);
}

/* Subtracts n, stopping at 0 (a file whose size changed since it was counted). */
static void count_sub(uint64_t *c, uint64_t n)
{
	uint64_t v = __atomic_load_n(c, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(c, &v, v > n ? v - n : 0, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

int floe_spool_path(const struct floe_spool *sp, const char *name, char *out, size_t cap)
{
	return floe_fmt(out, cap, "%s/%s", sp->dir, name);
}

struct floe_alloc *floe_spool_alloc(const struct floe_spool *sp)
{
	return sp->alloc;
}

const char *floe_spool_dir(const struct floe_spool *sp)
{
	return sp->dir;
}

static int parse_seq(const char *name, const char *suffix, uint64_t *seq)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(name, &end, 10);
	if (errno || end == name || strcmp(end, suffix) != 0)
		return -1;
	*seq = v;
	return 0;
}

struct cleanup_ctx {
	struct floe_spool *sp;
	uint64_t *seqs;
	size_t n;
	/* Entries with rewritten files: which of their files are debris is told by the
	 * entry itself, once the listing is done. */
	uint64_t *redo;
	size_t nredo, redo_cap;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n > k && strcmp(s + n - k, suffix) == 0;
}

static int add_redo(struct cleanup_ctx *c, uint64_t seq)
{
	if (c->nredo && c->redo[c->nredo - 1] == seq)
		return 0;
	if (c->nredo == c->redo_cap) {
		size_t cap = c->redo_cap ? c->redo_cap * 2 : 8;
		uint64_t *p = floe_realloc(c->sp->alloc, c->redo, cap * sizeof(*p));
		if (!p)
			return FLOE_ENOMEM;
		c->redo = p;
		c->redo_cap = cap;
	}
	c->redo[c->nredo++] = seq;
	return 0;
}

static int has_seq(const struct cleanup_ctx *c, uint64_t seq)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->seqs[i] == seq)
			return 1;
	return 0;
}

static int cleanup_one(void *ctx, const char *name)
{
	struct cleanup_ctx *c = ctx;
	char path[FLOE_PATH_MAX];
	size_t len = strlen(name);
	int debris = 0;
	if (len > 4 && strcmp(name + len - 4, ".tmp") == 0) {
		debris = 1;
	} else if (len > 8 && strcmp(name + len - 8, ".parquet") == 0) {
		/* <seq>-<k>.parquet belongs to entry seq; without it, it is debris. */
		char *end;
		unsigned long long seq = strtoull(name, &end, 10);
		debris = end == name || *end != '-' || !has_seq(c, seq);
		struct floe_fs_stat st;
		if (!debris && ends_with(name, FLOE_SPOOL_REID_SUFFIX))
			return add_redo(c, seq); /* counted by settle_rewrite */
		if (!debris && floe_spool_path(c->sp, name, path, sizeof(path)) == 0 &&
		    floe_fs_stat(path, &st) == 0)
			count_add(&c->sp->counts->bytes, st.size);
	} else if (strncmp(name, ".", 1) == 0 || strcmp(name, "quarantine") == 0) {
		return 0;
	}
	if (debris) {
		if (floe_spool_path(c->sp, name, path, sizeof(path)))
			return 0;
		floe_debug("spool: removing debris %s", path);
		floe_fs_unlink(path);
	}
	return 0;
}

/* Unlinks spool file name (uncounting its size when counted) or counts it. */
static void settle_file(struct floe_spool *sp, const char *name, bool keep, bool counted)
{
	char path[FLOE_PATH_MAX];
	struct floe_fs_stat st;
	if (floe_spool_path(sp, name, path, sizeof(path)) || floe_fs_stat(path, &st))
		return;
	if (keep && !counted)
		count_add(&sp->counts->bytes, st.size);
	if (keep)
		return;
	floe_debug("spool: removing debris %s of a rewrite", path);
	if (floe_fs_unlink(path) == 0 && counted)
		count_sub(&sp->counts->bytes, st.size);
}

/* Entry seq has rewritten files (floe_spool_replace_entry): the entry names either its
 * old files or the new ones, and the others are debris of an interrupted rewrite. */
static int settle_rewrite(struct floe_spool *sp, uint64_t seq)
{
	struct floe_spool_entry *e = NULL;
	int rc = floe_spool_load(sp, seq, &e);
	if (rc)
		return rc == FLOE_ENOMEM ? rc : 0; /* the committer quarantines what fails */
	for (size_t i = 0; i < e->nfiles; i++) {
		char other[FLOE_PATH_MAX];
		const char *name = e->files[i].name;
		size_t n = strlen(name), k = strlen(FLOE_SPOOL_REID_SUFFIX);
		bool rewritten = ends_with(name, FLOE_SPOOL_REID_SUFFIX);
		/* <stem>.ids.parquet and <stem>.parquet name each other. */
		if (rewritten ? floe_fmt(other, sizeof(other), "%.*s.parquet", (int)(n - k), name)
			      : floe_fmt(other, sizeof(other), "%.*s" FLOE_SPOOL_REID_SUFFIX,
					 (int)(n - 8), name))
			continue;
		settle_file(sp, name, true, !rewritten);
		settle_file(sp, other, false, rewritten);
	}
	floe_spool_entry_free(sp->alloc, e);
	return floe_fs_fsync_dir(sp->dir);
}

int floe_spool_open(struct floe_alloc *a, const char *dir, const struct floe_part_spec *spec,
		    struct floe_spool **out)
{
	struct floe_spool *sp = floe_calloc(a, 1, sizeof(*sp));
	if (!sp)
		return FLOE_ENOMEM;
	sp->alloc = a;
	sp->spec = *spec;
	sp->counts = &sp->own;
	if (strlen(dir) >= sizeof(sp->dir)) {
		floe_free(a, sp);
		return -ENAMETOOLONG;
	}
	strcpy(sp->dir, dir);
	int rc = floe_fs_mkdirs(dir);
	if (rc) {
		floe_free(a, sp);
		return rc;
	}
	struct cleanup_ctx c = {sp, NULL, 0, NULL, 0, 0};
	rc = floe_spool_list(sp, &c.seqs, &c.n);
	if (rc == 0) {
		sp->own.entries = c.n;
		rc = floe_fs_list(sp->alloc, dir, cleanup_one, &c);
	}
	for (size_t i = 0; rc == 0 && i < c.nredo; i++)
		rc = settle_rewrite(sp, c.redo[i]);
	floe_free(a, c.seqs);
	floe_free(a, c.redo);
	if (rc) {
		floe_free(a, sp);
		return rc;
	}
	*out = sp;
	return 0;
}

int floe_spool_share(struct floe_spool *sp, struct floe_alloc *a, struct floe_spool **out)
{
	struct floe_spool *s = floe_malloc(a, sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	*s = *sp;
	s->alloc = a;
	s->counts = sp->counts;
	s->nprov = 0;
	*out = s;
	return 0;
}

void floe_spool_free(struct floe_spool *sp)
{
	if (sp)
		floe_free(sp->alloc, sp);
}

struct list_ctx {
	struct floe_alloc *alloc;
	uint64_t *seqs;
	size_t n, cap;
	int rc;
};

static int list_one(void *ctx, const char *name)
{
	struct list_ctx *l = ctx;
	uint64_t seq;
	if (parse_seq(name, ".entry", &seq) != 0)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		uint64_t *p = floe_realloc(l->alloc, l->seqs, cap * sizeof(*p));
		if (!p)
			return l->rc = FLOE_ENOMEM;
		l->seqs = p;
		l->cap = cap;
	}
	l->seqs[l->n++] = seq;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int floe_spool_list(struct floe_spool *sp, uint64_t **seqs, size_t *n)
{
	struct list_ctx l = {sp->alloc, NULL, 0, 0, 0};
	int rc = floe_fs_list(sp->alloc, sp->dir, list_one, &l);
	if (rc == 0)
		rc = l.rc;
	if (rc) {
		floe_free(sp->alloc, l.seqs);
		return rc;
	}
	if (l.n)
		qsort(l.seqs, l.n, sizeof(*l.seqs), cmp_u64);
	*seqs = l.seqs;
	*n = l.n;
	return 0;
}

uint64_t floe_spool_bytes(const struct floe_spool *sp)
{
	return __atomic_load_n(&sp->counts->bytes, __ATOMIC_RELAXED);
}

uint64_t floe_spool_entries(const struct floe_spool *sp)
{
	return __atomic_load_n(&sp->counts->entries, __ATOMIC_RELAXED);
}

uint64_t floe_spool_quarantined(const struct floe_spool *sp)
{
	return __atomic_load_n(&sp->counts->quarantined, __ATOMIC_RELAXED);
}

/* The XXH64 and length of the file at path, read in VERIFY_CHUNK pieces. */
static int hash_file(struct floe_spool *sp, const char *path, uint64_t *hash, uint64_t *len)
{
	int fd = -1;
	uint8_t *buf = floe_malloc(sp->alloc, VERIFY_CHUNK);
	if (!buf)
		return FLOE_ENOMEM;
	int rc = floe_fs_open_read(path, &fd);
	XXH64_state_t st;
	XXH64_reset(&st, 0);
	uint64_t off = 0;
	while (rc == 0) {
		size_t got = 0;
		if ((rc = floe_fs_pread(fd, buf, VERIFY_CHUNK, off, &got)) || got == 0)
			break;
		XXH64_update(&st, buf, got);
		off += got;
	}
	if (fd >= 0)
		floe_fs_close(fd);
	floe_free(sp->alloc, buf);
	*hash = XXH64_digest(&st);
	*len = off;
	return rc;
}

/* The cost, measured on x86-64: XXH64 runs at about 5 GB/s on one core, 0.2 s per GiB of
 * Parquet, paid once while the writer streams the file out and once more here, where the
 * file is also read again (from the page cache, as a rule). 1 GiB of log lines makes
 * about 270 MB of Parquet: some 0.05 s at the seals and 0.1 s at the commit, against
 * 7-9 s to read, encode and compress those lines. */
int floe_spool_verify(struct floe_spool *sp, const struct floe_spool_entry *e, struct floe_err *err)
{
	struct floe_err local;
	if (!err)
		err = &local; /* the log line says why in any case */
	for (size_t i = 0; i < e->nfiles; i++) {
		const struct floe_spool_file *f = &e->files[i];
		char path[FLOE_PATH_MAX];
		struct floe_fs_stat st;
		uint64_t hash = 0, len = 0;
		int rc = floe_spool_path(sp, f->name, path, sizeof(path));
		if (rc == 0)
			rc = floe_fs_stat(path, &st);
		if (rc == -ENOENT) {
			floe_err_set(err, FLOE_ECORRUPT, "%s is missing", path);
		} else if (rc) {
			return floe_err_set(err, rc, "%s: %s", path, floe_strerror(rc));
		} else if ((int64_t)st.size != f->size) {
			floe_err_set(err, FLOE_ECORRUPT,
				     "%s is %" PRIu64 " bytes, its entry records %" PRId64, path,
				     (uint64_t)st.size, f->size);
		} else if (!f->has_xxh64) {
			continue;
		} else if ((rc = hash_file(sp, path, &hash, &len))) {
			return floe_err_set(err, rc, "reading %s: %s", path, floe_strerror(rc));
		} else if (len != (uint64_t)f->size || hash != f->xxh64) {
			floe_err_set(err, FLOE_ECORRUPT,
				     "%s has XXH64 %016" PRIx64 " over %" PRIu64
				     " bytes, its entry records %016" PRIx64 " over %" PRId64,
				     path, hash, len, f->xxh64, f->size);
		} else {
			continue;
		}
		floe_warn("spool: entry %" PRIu64 " is damaged: %s", e->seq, err->msg);
		return FLOE_ECORRUPT;
	}
	return 0;
}

/* Writes e's entry file (atomically: replacing one of the same seq), with the provisional
 * columns pv[0..npv); *fresh (may be NULL): there was none of that seq before. */
static int save_entry(struct floe_spool *sp, const struct floe_spool_entry *e,
		      const struct floe_spool_prov *pv, size_t npv, bool *fresh)
{
	struct floe_buf b;
	floe_buf_init(&b, sp->alloc, ENTRY_MAX_BYTES);
	int rc = floe_spool_entry_encode(&sp->spec, e, pv, npv, &b);
	if (rc == 0) {
		char name[64], path[FLOE_PATH_MAX];
		snprintf(name, sizeof(name), "%020" PRIu64 ".entry", e->seq);
		rc = floe_spool_path(sp, name, path, sizeof(path));
		struct floe_fs_stat st;
		if (rc == 0 && fresh)
			*fresh = floe_fs_stat(path, &st) != 0;
		if (rc == 0)
			rc = floe_blobfile_save(path, b.data, b.len);
	}
	floe_buf_fini(&b);
	return rc;
}

int floe_spool_write_entry(struct floe_spool *sp, const struct floe_spool_entry *e)
{
	/* An entry rewritten in place (its files rebuilt) is not one more. */
	bool fresh = false;
	int rc = e->nprov ? save_entry(sp, e, e->prov, e->nprov, &fresh)
			  : save_entry(sp, e, sp->prov, sp->nprov, &fresh);
	if (rc == 0) {
		count_add(&sp->counts->bytes, floe_spool_entry_bytes(e));
		if (fresh)
			count_add(&sp->counts->entries, 1);
	}
	return rc;
}

int floe_spool_set_provisional(struct floe_spool *sp, const struct floe_spool_prov *cols, size_t n)
{
	if (n > FLOE_SPOOL_PROV_MAX)
		return FLOE_ELIMIT;
	if (n)
		memcpy(sp->prov, cols, n * sizeof(*cols));
	sp->nprov = n;
	return 0;
}

/* Whether e names a data file called name. */
static bool names_file(const struct floe_spool_entry *e, const char *name)
{
	for (size_t i = 0; i < e->nfiles; i++)
		if (strcmp(e->files[i].name, name) == 0)
			return true;
	return false;
}

int floe_spool_replace_entry(struct floe_spool *sp, const struct floe_spool_entry *old,
			     const struct floe_spool_entry *now)
{
	int rc = save_entry(sp, now, now->prov, now->nprov, NULL);
	if (rc)
		return rc;
	count_add(&sp->counts->bytes, floe_spool_entry_bytes(now));
	count_sub(&sp->counts->bytes, floe_spool_entry_bytes(old));
	/* Old files are debris from here on: one that cannot be removed now is left to
	 * floe_spool_open. */
	for (size_t i = 0; i < old->nfiles; i++) {
		char path[FLOE_PATH_MAX];
		if (!names_file(now, old->files[i].name) &&
		    floe_spool_path(sp, old->files[i].name, path, sizeof(path)) == 0)
			(void)floe_fs_unlink(path);
	}
	return floe_fs_fsync_dir(sp->dir);
}

int floe_spool_load(struct floe_spool *sp, uint64_t seq, struct floe_spool_entry **out)
{
	struct floe_alloc *a = sp->alloc;
	char name[64], path[FLOE_PATH_MAX];
	snprintf(name, sizeof(name), "%020" PRIu64 ".entry", seq);
	uint8_t *blob = NULL;
	size_t len = 0;
	int rc = floe_spool_path(sp, name, path, sizeof(path));
	if (rc == 0)
		rc = floe_blobfile_load(a, path, &blob, &len);
	if (rc)
		return rc;
	rc = floe_spool_entry_decode(a, &sp->spec, (const char *)blob, len, out);
	floe_free(a, blob);
	if (rc == 0 && (*out)->seq != seq) {
		floe_spool_entry_free(a, *out);
		*out = NULL;
		rc = FLOE_ECORRUPT;
	}
	return rc;
}

int floe_spool_remove(struct floe_spool *sp, const struct floe_spool_entry *e)
{
	char name[64], path[FLOE_PATH_MAX];
	snprintf(name, sizeof(name), "%020" PRIu64 ".entry", e->seq);
	int rc = floe_spool_path(sp, name, path, sizeof(path));
	if (rc == 0)
		rc = floe_fs_unlink(path);
	if (rc && rc != -ENOENT)
		return rc;
	if (rc == 0)
		count_sub(&sp->counts->entries, 1);
	for (size_t i = 0; i < e->nfiles; i++) {
		rc = floe_spool_path(sp, e->files[i].name, path, sizeof(path));
		if (rc == 0)
			rc = floe_fs_unlink(path);
		if (rc && rc != -ENOENT)
			return rc;
	}
	count_sub(&sp->counts->bytes, floe_spool_entry_bytes(e));
	return floe_fs_fsync_dir(sp->dir);
}

struct move_ctx {
	struct floe_spool *sp;
	const char *qdir;
	char prefix[32]; /* "<seq>-": the entry's data files */
};

static int move_data(void *ctx, const char *name)
{
	struct move_ctx *m = ctx;
	char from[FLOE_PATH_MAX], to[FLOE_PATH_MAX];
	struct floe_fs_stat st;
	if (strncmp(name, m->prefix, strlen(m->prefix)) != 0 ||
	    floe_spool_path(m->sp, name, from, sizeof(from)) || floe_fmt(to, sizeof(to), "%s/%s", m->qdir, name))
		return 0;
	if (floe_fs_stat(from, &st) == 0 && floe_fs_rename(from, to) == 0) {
		size_t len = strlen(name);
		/* Only whole files counted in bytes; temporaries never were. */
		if (len > 8 && strcmp(name + len - 8, ".parquet") == 0)
			count_sub(&m->sp->counts->bytes, st.size);
	}
	return 0;
}

/* Makes quarantine/ (its path into qdir) and names entry seq's file in the spool (from)
 * and in quarantine/ (to); each buffer FLOE_PATH_MAX bytes. */
static int quarantine_paths(struct floe_spool *sp, uint64_t seq, char *qdir, char *from, char *to)
{
	char name[64];
	if (floe_fmt(qdir, FLOE_PATH_MAX, "%s/quarantine", sp->dir))
		return FLOE_ELIMIT;
	int rc = floe_fs_mkdirs(qdir);
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "%020" PRIu64 ".entry", seq);
	if (floe_spool_path(sp, name, from, FLOE_PATH_MAX) || floe_fmt(to, FLOE_PATH_MAX, "%s/%s", qdir, name))
		return FLOE_ELIMIT;
	return 0;
}

int floe_spool_quarantine(struct floe_spool *sp, uint64_t seq)
{
	char qdir[FLOE_PATH_MAX], from[FLOE_PATH_MAX], to[FLOE_PATH_MAX];
	int rc = quarantine_paths(sp, seq, qdir, from, to);
	if (rc)
		return rc;
	count_add(&sp->counts->quarantined, 1);
	floe_warn("spool: entry %" PRIu64 " is corrupt or incomplete, moved to %s", seq, qdir);
	/* The entry first: once it is gone its data files are debris either way. */
	if ((rc = floe_fs_rename(from, to)))
		return rc;
	count_sub(&sp->counts->entries, 1);
	struct move_ctx m = {sp, qdir, ""};
	snprintf(m.prefix, sizeof(m.prefix), "%020" PRIu64 "-", seq);
	return floe_fs_list(sp->alloc, sp->dir, move_data, &m);
}

int floe_spool_quarantine_files(struct floe_spool *sp, const struct floe_spool_entry *e)
{
	char qdir[FLOE_PATH_MAX], from[FLOE_PATH_MAX], to[FLOE_PATH_MAX];
	int rc = quarantine_paths(sp, e->seq, qdir, from, to);
	if (rc)
		return rc;
	/* The entry file stays: it still names the seal's rows until its rebuilt entry
	 * replaces it. A copy goes with the data files, for whoever looks into them. */
	if ((rc = floe_fs_copy(from, to)))
		return rc;
	for (size_t i = 0; i < e->nfiles; i++) {
		struct floe_fs_stat st;
		if (floe_spool_path(sp, e->files[i].name, from, sizeof(from)) ||
		    floe_fmt(to, sizeof(to), "%s/%s", qdir, e->files[i].name))
			return FLOE_ELIMIT;
		if (floe_fs_stat(from, &st) != 0)
			continue; /* missing already */
		if ((rc = floe_fs_rename(from, to)))
			return rc;
		count_sub(&sp->counts->bytes, st.size);
	}
	count_add(&sp->counts->quarantined, 1);
	floe_warn("spool: the data files of entry %" PRIu64 " moved to %s", e->seq, qdir);
	return floe_fs_fsync_dir(sp->dir);
}
