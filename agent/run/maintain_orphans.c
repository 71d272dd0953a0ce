/* The output files of interrupted `floe maintain` runs. A run that is killed, or fails
 * where it cannot know whether its replace landed, after it stored an output file and
 * before its replace committed, leaves a data file that no snapshot lists: the table is
 * exact without it, but the warehouse keeps its bytes forever. The next runs delete such
 * files, and only those:
 * - under the table's data/ prefix, named as compaction names its outputs
 *   (compact-<ms>-<run uuid>-<n>.parquet): an agent's files, and anything another
 *   engine wrote, are never candidates;
 * - older than maintain.min_age by the time in their name (when the file was named, just
 *   before it was stored). A run commits each replace soon after storing its files (at
 *   most OUTS_MAX files of target_file_size apart), far within the default hour, so a
 *   concurrent run's files in flight are always younger than that; a table maintained by
 *   several runs at once needs a min_age longer than the time a run takes to write its
 *   outputs and commit. A name without a time (older floe versions) is never a candidate;
 * - listed by no manifest of any snapshot of the metadata read after the listing (in
 *   any entry, deleted ones included: those still belong to retained snapshots, and
 *   expiry deletes them). A file committed after that read would have been stored
 *   within min_age of it, so it is too young to be a candidate.
 * Listing the data prefix costs one LIST request per 1000 files on S3; a local warehouse
 * lists a directory at a time, so partition directories (a name with '=' that is not a
 * data file) are listed in turn. Manifests are read only when there is a candidate,
 * which is rare. Any failure leaves every file. */
#include "agent/run/maintain.h"

#include "agent/config/config.h"
#include "agent/lake/table.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "platform/log.h"
#include "platform/store.h"

#include <stdlib.h>
#include <string.h>

struct candidates {
	struct floe_alloc *a;
	const struct floe_store *store;
	int64_t before_ms; /* named before this */
	char **uris;	   /* URIs of the candidates */
	size_t n, cap;
	char **dirs; /* prefixes to list: the data prefix, then partition directories */
	size_t ndirs, dcap;
	int err;
};

#define MAX_DIRS 1000000 /* partition directories listed at most */

/* Appends a string copy to a growing array. */
static int push(struct floe_alloc *a, char ***v, size_t *n, size_t *cap, const char *s)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		char **nv = c > SIZE_MAX / sizeof(*nv) ? NULL : floe_realloc(a, *v, c * sizeof(*nv));
		if (!nv)
			return FLOE_ENOMEM;
		*v = nv;
		*cap = c;
	}
	if (!((*v)[*n] = floe_strdup(a, s)))
		return FLOE_ENOMEM;
	(*n)++;
	return 0;
}

/* A local partition directory: a name=value entry that is not a data file. */
static bool partition_dir(const char *key)
{
	const char *b = strrchr(key, '/');
	b = b ? b + 1 : key;
	size_t n = strlen(b);
	return strchr(b, '=') && !(n > 8 && strcmp(b + n - 8, ".parquet") == 0);
}

/* The time in an output's name (compact-<ms>-<36-char uuid>-<n>.parquet), or -1. */
static int64_t named_ms(const char *key)
{
	const char *b = strrchr(key, '/');
	b = b ? b + 1 : key;
	if (strncmp(b, "compact-", 8) != 0)
		return -1;
	b += 8;
	int64_t ms = 0;
	size_t d = 0;
	for (; b[d] >= '0' && b[d] <= '9' && d < 15; d++)
		ms = ms * 10 + (b[d] - '0');
	if (d == 0 || b[d] != '-' || strlen(b + d + 1) < 38 || b[d + 37] != '-')
		return -1;
	const char *n = b + d + 38;
	size_t k = 0;
	while (n[k] >= '0' && n[k] <= '9')
		k++;
	return k && strcmp(n + k, ".parquet") == 0 ? ms : -1;
}

static int seen(void *ctx, const char *key)
{
	struct candidates *c = ctx;
	int64_t ms = named_ms(key);
	char s[FLOE_PATH_MAX + 16];
	int rc = 0;
	if (ms < 0 && partition_dir(key) && c->ndirs < MAX_DIRS) {
		if ((rc = floe_fmt(s, sizeof(s), "%s/", key)) == 0)
			rc = push(c->a, &c->dirs, &c->ndirs, &c->dcap, s);
	} else if (ms >= 0 && ms < c->before_ms) {
		if ((rc = floe_store_uri(c->store, key, s, sizeof(s))) == 0)
			rc = push(c->a, &c->uris, &c->n, &c->cap, s);
	}
	return c->err = rc;
}

static int cmp_str(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Deletes the candidates found[] says no manifest lists. */
static int remove_unlisted(struct candidates *c, struct floe_store *store, const bool *found, size_t *removed)
{
	char **keys = floe_calloc(c->a, c->n, sizeof(*keys));
	size_t nk = 0;
	int rc = keys ? 0 : FLOE_ENOMEM;
	for (size_t i = 0; rc == 0 && i < c->n; i++) {
		if (found[i])
			continue;
		char key[FLOE_PATH_MAX];
		if ((rc = floe_store_key(store, c->uris[i], key, sizeof(key))) == 0 && !(keys[nk] = floe_strdup(c->a, key)))
			rc = FLOE_ENOMEM;
		nk += rc == 0;
	}
	if (rc == 0 && nk)
		rc = floe_store_remove_many(store, (const char *const *)keys, nk, removed);
	for (size_t i = 0; keys && i < nk; i++)
		floe_free(c->a, keys[i]);
	floe_free(c->a, keys);
	return rc;
}

int floe_maintain_orphans(struct floe_alloc *a, const struct floe_maintain_options *o, const char *table_key,
			  size_t *removed, struct floe_err *err)
{
	struct candidates c = {.a = a, .store = o->store};
	char prefix[FLOE_PATH_MAX];
	bool *found = NULL;
	*removed = 0;
	c.before_ms = o->now_us / 1000 - (int64_t)o->cfg->maintain.min_age_ms;
	int rc = floe_fmt(prefix, sizeof(prefix), "%s%sdata/", table_key, table_key[0] ? "/" : "");
	if (rc == 0)
		rc = push(a, &c.dirs, &c.ndirs, &c.dcap, prefix);
	for (size_t i = 0; rc == 0 && i < c.ndirs; i++)
		if ((rc = floe_store_list(o->store, c.dirs[i], seen, &c)) == 0)
			rc = c.err;
	if (rc)
		floe_err_set(err, rc, "listing %s: %s", prefix, floe_strerror(rc));
	if (rc == 0 && c.n) {
		qsort(c.uris, c.n, sizeof(*c.uris), cmp_str);
		if (!(found = floe_calloc(a, c.n, sizeof(*found))))
			rc = floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
		if (rc == 0)
			rc = floe_table_listed(o->table, (const char *const *)c.uris, c.n, found, err);
		if (rc == 0 && (rc = remove_unlisted(&c, o->store, found, removed)))
			floe_err_set(err, rc, "deleting orphan output files: %s", floe_strerror(rc));
	}
	if (*removed)
		floe_info("maintain: deleted %zu output files of interrupted runs that no snapshot lists", *removed);
	for (size_t i = 0; i < c.n; i++)
		floe_free(a, c.uris[i]);
	floe_free(a, c.uris);
	for (size_t i = 0; i < c.ndirs; i++)
		floe_free(a, c.dirs[i]);
	floe_free(a, c.dirs);
	floe_free(a, found);
	return rc;
}
