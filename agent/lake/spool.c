/* Spool entries: data files plus a checksummed JSON entry file per seal. */
#include "spool.h"

#include "agent/state/blobfile.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/limits.h"
#include "formats/json/json.h"
#include "platform/fs.h"
#include "platform/log.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define XXH_STATIC_LINKING_ONLY /* XXH64_state_t on the stack */
#include <xxhash.h>

/* Version 2 added each file's XXH64 and the positions where the seal's rows start;
 * version 1 entries (no checksum, no start) are still read. */
#define ENTRY_VERSION 2
#define ENTRY_MAX_BYTES (64u << 20)
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
};

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
	struct cleanup_ctx c = {sp, NULL, 0};
	rc = floe_spool_list(sp, &c.seqs, &c.n);
	if (rc == 0) {
		sp->own.entries = c.n;
		rc = floe_fs_list(sp->alloc, dir, cleanup_one, &c);
	}
	floe_free(a, c.seqs);
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

static int encode_entry(const struct floe_spool *sp, const struct floe_spool_entry *e, struct floe_buf *b)
{
	int rc = 0;
	rc |= floe_buf_printf(b, "{\"version\":%d,\"seq\":%" PRIu64 ",\"created_us\":%" PRId64
				 ",\"replaced_utf8\":%" PRIu64 ",\"positions\":\"",
			      ENTRY_VERSION, e->seq, e->created_us, e->replaced_utf8);
	rc |= floe_hex_put(b, e->positions, e->positions_len);
	rc |= floe_buf_puts(b, "\",\"from\":\"");
	rc |= floe_hex_put(b, e->from, e->from_len);
	if (sp->spec.spec_id >= 0)
		rc |= floe_buf_printf(b, "\",\"spec\":%d,\"files\":[", (int)sp->spec.spec_id);
	else
		rc |= floe_buf_puts(b, "\",\"files\":[");
	for (size_t i = 0; i < e->nfiles && !rc; i++) {
		const struct floe_spool_file *f = &e->files[i];
		rc |= floe_buf_puts(b, i ? ",{\"name\":" : "{\"name\":");
		rc |= floe_json_write_str(b, f->name, strlen(f->name));
		rc |= floe_buf_printf(b, ",\"records\":%" PRId64 ",\"size\":%" PRId64 ",\"xxh64\":\"%016" PRIx64
					 "\",\"partition\":[",
				      f->records, f->size, f->xxh64);
		for (size_t k = 0; k < sp->spec.n; k++) {
			const struct floe_ice_part_value *v = &f->key.v[k];
			if (k)
				rc |= floe_buf_putc(b, ',');
			if (v->is_null)
				rc |= floe_buf_puts(b, "null");
			else if (v->s)
				rc |= floe_json_write_str(b, v->s, v->len);
			else
				rc |= floe_buf_printf(b, "%" PRId64, v->i);
		}
		rc |= floe_buf_puts(b, "],\"metrics\":[");
		for (size_t k = 0; k < f->nmetrics; k++) {
			const struct floe_ice_column_metrics *m = &f->metrics[k];
			rc |= floe_buf_printf(b, "%s{\"id\":%d,\"size\":%" PRId64 ",\"values\":%" PRId64
						 ",\"nulls\":%" PRId64,
					      k ? "," : "", (int)m->field_id, m->column_size, m->value_count,
					      m->null_count);
			if (m->has_bounds) {
				rc |= floe_buf_puts(b, ",\"lower\":\"");
				rc |= floe_hex_put(b, m->lower, m->lower_len);
				rc |= floe_buf_puts(b, "\",\"upper\":\"");
				rc |= floe_hex_put(b, m->upper, m->upper_len);
				rc |= floe_buf_putc(b, '"');
			}
			rc |= floe_buf_putc(b, '}');
		}
		rc |= floe_buf_puts(b, "],\"splits\":[");
		for (size_t k = 0; k < f->nsplits; k++)
			rc |= floe_buf_printf(b, "%s%" PRId64, k ? "," : "", f->splits[k]);
		rc |= floe_buf_puts(b, "]}");
	}
	rc |= floe_buf_puts(b, "]}");
	/* The buffer calls fail with distinct negative codes; any failure here means the
	 * buffer could not grow. */
	return rc ? FLOE_ENOMEM : 0;
}

uint64_t floe_spool_entry_rows(const struct floe_spool_entry *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nfiles; i++)
		n += (uint64_t)e->files[i].records;
	return n;
}

uint64_t floe_spool_entry_bytes(const struct floe_spool_entry *e)
{
	uint64_t n = 0;
	for (size_t i = 0; i < e->nfiles; i++)
		n += (uint64_t)e->files[i].size;
	return n;
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

int floe_spool_write_entry(struct floe_spool *sp, const struct floe_spool_entry *e)
{
	struct floe_buf b;
	bool fresh = false;
	floe_buf_init(&b, sp->alloc, ENTRY_MAX_BYTES);
	int rc = encode_entry(sp, e, &b);
	if (rc == 0) {
		char name[64], path[FLOE_PATH_MAX];
		snprintf(name, sizeof(name), "%020" PRIu64 ".entry", e->seq);
		rc = floe_spool_path(sp, name, path, sizeof(path));
		/* An entry rewritten in place (its files rebuilt) is not one more. */
		struct floe_fs_stat st;
		fresh = rc == 0 && floe_fs_stat(path, &st) != 0;
		if (rc == 0)
			rc = floe_blobfile_save(path, b.data, b.len);
	}
	floe_buf_fini(&b);
	if (rc == 0) {
		count_add(&sp->counts->bytes, floe_spool_entry_bytes(e));
		if (fresh)
			count_add(&sp->counts->entries, 1);
	}
	return rc;
}

/* The 16 hex digits of a version 2 file's "xxh64". */
static int decode_xxh64(const struct floe_json *jf, uint64_t *out)
{
	const char *hex;
	if (floe_json_get_str(jf, "xxh64", &hex) || strlen(hex) != 16)
		return FLOE_ECORRUPT;
	uint64_t v = 0;
	for (size_t i = 0; i < 16; i++) {
		int d = floe_hex_digit(hex[i]);
		if (d < 0)
			return FLOE_ECORRUPT;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return 0;
}

static int decode_file(struct floe_alloc *a, const struct floe_json *jf, int64_t version,
		       struct floe_spool_file *f)
{
	const char *name;
	const struct floe_json *part = floe_json_get(jf, "partition");
	const struct floe_json *metrics = floe_json_get(jf, "metrics");
	const struct floe_json *splits = floe_json_get(jf, "splits");
	if (floe_json_get_str(jf, "name", &name) || floe_json_get_int(jf, "records", &f->records) ||
	    floe_json_get_int(jf, "size", &f->size) || !floe_json_is(part, FLOE_JSON_ARRAY) ||
	    floe_json_len(part) > FLOE_PART_MAX ||
	    !floe_json_is(metrics, FLOE_JSON_ARRAY) || !floe_json_is(splits, FLOE_JSON_ARRAY) ||
	    strchr(name, '/') || f->size < 0)
		return FLOE_ECORRUPT;
	if (version >= 2) {
		if (decode_xxh64(jf, &f->xxh64))
			return FLOE_ECORRUPT;
		f->has_xxh64 = true;
	}
	if (!(f->name = floe_strdup(a, name)))
		return FLOE_ENOMEM;
	f->nparts = floe_json_len(part);
	for (size_t k = 0; k < f->nparts; k++) {
		const struct floe_json *v = floe_json_at(part, k);
		struct floe_ice_part_value *pv = &f->key.v[k];
		memset(pv, 0, sizeof(*pv));
		if (floe_json_is(v, FLOE_JSON_NULL)) {
			pv->is_null = true;
		} else if (floe_json_is(v, FLOE_JSON_STRING)) {
			const char *s;
			size_t len;
			floe_json_str(v, &s, &len);
			if (len >= FLOE_PART_STR_MAX)
				return FLOE_ECORRUPT;
			memcpy(f->key.str[k], s, len + 1);
			pv->s = f->key.str[k];
			pv->len = len;
		} else if (floe_json_int(v, &pv->i) != 0) {
			return FLOE_ECORRUPT;
		}
	}
	f->nmetrics = floe_json_len(metrics);
	f->metrics = floe_calloc(a, f->nmetrics ? f->nmetrics : 1, sizeof(*f->metrics));
	f->nsplits = floe_json_len(splits);
	f->splits = floe_calloc(a, f->nsplits ? f->nsplits : 1, sizeof(*f->splits));
	if (!f->metrics || !f->splits)
		return FLOE_ENOMEM;
	for (size_t k = 0; k < f->nmetrics; k++) {
		const struct floe_json *jm = floe_json_at(metrics, k);
		struct floe_ice_column_metrics *m = &f->metrics[k];
		int64_t id;
		const char *lo, *hi;
		if (floe_json_get_int(jm, "id", &id) || floe_json_get_int(jm, "size", &m->column_size) ||
		    floe_json_get_int(jm, "values", &m->value_count) ||
		    floe_json_get_int(jm, "nulls", &m->null_count))
			return FLOE_ECORRUPT;
		m->field_id = (int32_t)id;
		if (floe_json_get_str(jm, "lower", &lo) == 0 && floe_json_get_str(jm, "upper", &hi) == 0) {
			uint8_t *l, *u;
			int rc = floe_hex_decode(a, lo, strlen(lo), &l, &m->lower_len);
			if (rc)
				return rc;
			m->lower = l;
			if ((rc = floe_hex_decode(a, hi, strlen(hi), &u, &m->upper_len)))
				return rc;
			m->upper = u;
			m->has_bounds = true;
		}
	}
	for (size_t k = 0; k < f->nsplits; k++)
		if (floe_json_int(floe_json_at(splits, k), &f->splits[k]))
			return FLOE_ECORRUPT;
	return 0;
}

int floe_spool_entry_decode(struct floe_alloc *a, const struct floe_part_spec *spec, const char *text,
			    size_t len, struct floe_spool_entry **out)
{
	struct floe_json_doc *doc = NULL;
	struct floe_spool_entry *e = NULL;
	/* The entry names its spec (a file's values are as many as its fields): the
	 * commit reads them under that spec, whatever the spool's is now. */
	(void)spec;
	int rc = floe_json_parse(a, text, len, ENTRY_MAX_BYTES, &doc, NULL);
	if (rc) {
		rc = rc == FLOE_ENOMEM ? rc : FLOE_ECORRUPT;
		goto out;
	}
	const struct floe_json *root = floe_json_root(doc);
	const struct floe_json *files = floe_json_get(root, "files");
	int64_t version, eseq, created, replaced;
	const char *pos;
	if (floe_json_get_int(root, "version", &version) || version < 1 || version > ENTRY_VERSION ||
	    floe_json_get_int(root, "seq", &eseq) || eseq < 0 ||
	    floe_json_get_int(root, "created_us", &created) ||
	    floe_json_get_int(root, "replaced_utf8", &replaced) || replaced < 0 ||
	    floe_json_get_str(root, "positions", &pos) || !floe_json_is(files, FLOE_JSON_ARRAY)) {
		rc = FLOE_ECORRUPT;
		goto out;
	}
	rc = FLOE_ENOMEM;
	if (!(e = floe_calloc(a, 1, sizeof(*e))))
		goto out;
	e->seq = (uint64_t)eseq;
	e->created_us = created;
	int64_t spec_id = -1;
	if (floe_json_get(root, "spec") && (floe_json_get_int(root, "spec", &spec_id) || spec_id < 0 ||
					    spec_id > INT32_MAX)) {
		rc = FLOE_ECORRUPT;
		goto out;
	}
	e->spec_id = (int32_t)spec_id;
	e->replaced_utf8 = (uint64_t)replaced;
	if ((rc = floe_hex_decode(a, pos, strlen(pos), &e->positions, &e->positions_len))) {
		rc = rc == FLOE_EPARSE ? FLOE_ECORRUPT : rc;
		goto out;
	}
	if (version >= 2) {
		const char *from;
		rc = FLOE_ECORRUPT;
		if (floe_json_get_str(root, "from", &from))
			goto out;
		if ((rc = floe_hex_decode(a, from, strlen(from), &e->from, &e->from_len))) {
			rc = rc == FLOE_EPARSE ? FLOE_ECORRUPT : rc;
			goto out;
		}
	}
	rc = FLOE_ENOMEM;
	size_t nfiles = floe_json_len(files);
	if (!(e->files = floe_calloc(a, nfiles ? nfiles : 1, sizeof(*e->files))))
		goto out;
	e->nfiles = nfiles;
	for (size_t i = 0; i < e->nfiles; i++)
		if ((rc = decode_file(a, floe_json_at(files, i), version, &e->files[i])))
			goto out;
	rc = 0;
out:
	floe_json_doc_free(doc);
	if (rc) {
		floe_spool_entry_free(a, e);
		return rc;
	}
	*out = e;
	return 0;
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

void floe_spool_entry_fini(struct floe_alloc *a, struct floe_spool_entry *e)
{
	for (size_t i = 0; e->files && i < e->nfiles; i++) {
		struct floe_spool_file *f = &e->files[i];
		floe_free(a, f->name);
		for (size_t k = 0; f->metrics && k < f->nmetrics; k++) {
			floe_free(a, (void *)f->metrics[k].lower);
			floe_free(a, (void *)f->metrics[k].upper);
		}
		floe_free(a, f->metrics);
		floe_free(a, f->splits);
	}
	floe_free(a, e->files);
	floe_free(a, e->positions);
	floe_free(a, e->from);
	e->files = NULL;
	e->positions = NULL;
	e->from = NULL;
}

void floe_spool_entry_free(struct floe_alloc *a, struct floe_spool_entry *e)
{
	if (!e)
		return;
	floe_spool_entry_fini(a, e);
	floe_free(a, e);
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
