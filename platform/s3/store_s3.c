/* The S3 store: keys live under an optional prefix in one bucket. put_if_absent and
 * put_file_if_absent are conditional PUTs (If-None-Match: *); when the outcome is
 * ambiguous (a 5xx or a cut connection after the request may have been applied) the
 * object is read back: if it holds exactly our bytes (a file: has its size, under a key
 * only its writer uses) the create was ours, otherwise another writer won. */
#include "platform/s3/store_s3.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "platform/log.h"
#include "platform/s3/s3.h"
#include "platform/signal.h"
#include "platform/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define CONDITIONAL_TRIES 5

struct s3store {
	struct floe_store base;
	struct floe_s3 *s3;
	char prefix[1024]; /* key prefix in the bucket, no leading or trailing slash */
	/* Files above this go up in parts (floe_s3_put_file): the client's threshold, kept
	 * here to know which uploads can carry If-None-Match. */
	int64_t multipart_threshold;
	bool no_batch; /* the server refused DeleteObjects once: DELETE each key */
};

static int full_key(const struct s3store *s, const char *key, char *out, size_t cap)
{
	int n = s->prefix[0] ? snprintf(out, cap, "%s/%s", s->prefix, key) : snprintf(out, cap, "%s", key);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* S3 errors keep their own codes; a missing object is -ENOENT as for local files. */
static int s_get(struct floe_store *st, const char *key, size_t max, void **data, size_t *len)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, key, k, sizeof(k));
	return rc ? rc : floe_s3_get(s->s3, k, max, data, len);
}

static int s_read_at(struct floe_store *st, const char *key, uint64_t off, void *buf, size_t len)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	void *data = NULL;
	size_t got = 0;
	if (off > INT64_MAX || len > INT64_MAX - off)
		return -EINVAL;
	int rc = full_key(s, key, k, sizeof(k));
	if (rc == 0)
		rc = floe_s3_get_range(s->s3, k, (int64_t)off, (int64_t)len, &data, &got);
	if (rc == 0 && got != len)
		rc = -EIO; /* the object is shorter than the range (or the server ignored it) */
	if (rc == 0)
		memcpy(buf, data, len);
	floe_free(st->alloc, data);
	return rc;
}

static int s_put(struct floe_store *st, const char *key, const void *data, size_t len)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, key, k, sizeof(k));
	return rc ? rc : floe_s3_put(s->s3, k, data, len, NULL, NULL);
}


/* Is the object at k exactly data? 1 yes, 0 no (or absent: *absent set), <0 error. */
static int holds(struct s3store *s, const char *k, const void *data, size_t len, int *absent)
{
	void *got = NULL;
	size_t glen = 0;
	*absent = 0;
	int rc = floe_s3_get(s->s3, k, len + 1, &got, &glen);
	if (rc == -ENOENT) {
		*absent = 1;
		return 0;
	}
	if (rc == -EFBIG)
		return 0;
	if (rc)
		return rc;
	int same = glen == len && memcmp(got, data, len) == 0;
	floe_free(s->base.alloc, got);
	return same;
}

/* A first create answered 412: another writer won, unless the key does not exist, in which
 * case the store refuses every conditional create (a gateway that answers 412 to any
 * If-None-Match, say) and "File exists" would send the operator the wrong way. */
static int refused_or_exists(struct s3store *s, const char *k)
{
	struct floe_s3_object_info info;
	int rc = floe_s3_head(s->s3, k, &info);
	if (rc == -ENOENT) {
		floe_error(
		    "s3: PUT %s/%s with If-None-Match: * was answered 412 Precondition Failed "
		    "although the key does not exist: the store refuses conditional creates, "
		    "so it cannot arbitrate commits",
		    s->base.uri, k + (s->prefix[0] ? strlen(s->prefix) + 1 : 0));
		return FLOE_S3_EREFUSED;
	}
	return rc == 0 ? -EEXIST : rc;
}

static int s_put_if_absent(struct floe_store *st, const char *key, const void *data, size_t len)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, key, k, sizeof(k));
	if (rc)
		return rc;
	struct floe_s3_put_options po = {.if_none_match = true};
	bool sent_before = false;
	for (int i = 0; i < CONDITIONAL_TRIES; i++) {
		rc = floe_s3_put(s->s3, k, data, len, &po, NULL);
		if (rc == 0)
			return 0;
		if (rc == FLOE_S3_EPRECONDITION && !sent_before)
			return refused_or_exists(s, k);
		if (rc == FLOE_S3_EPRECONDITION || rc == FLOE_S3_EAMBIGUOUS) {
			/* After an ambiguous attempt a 412 may be our own earlier write: the
			 * object's bytes decide. */
			int absent;
			int same = holds(s, k, data, len, &absent);
			if (same < 0)
				return same;
			if (same)
				return 0;
			if (!absent)
				return -EEXIST;
			sent_before = true; /* not applied: try again */
			continue;
		}
		if (rc == FLOE_S3_ECONFLICT) {
			/* 409: a concurrent conditional write is in progress; let it finish
			 * (unless the agent is stopping). */
			floe_signal_sleep_ms(50u << i);
			if (floe_signal_stop_requested())
				return rc;
			continue;
		}
		return rc;
	}
	return rc;
}

static int s_put_file(struct floe_store *st, const char *key, const char *path)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, key, k, sizeof(k));
	return rc ? rc : floe_s3_put_file(s->s3, k, path, NULL, NULL);
}

/* After a conditional PUT of a file whose outcome is unknown: 1 when an object of the
 * file's size is at k (the create landed: the key is the caller's own), 0 when absent,
 * -EEXIST when another object is there, or an error. */
static int file_landed(struct s3store *s, const char *k, int64_t size)
{
	struct floe_s3_object_info info;
	int rc = floe_s3_head(s->s3, k, &info);
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	return info.size == size ? 1 : -EEXIST;
}

static int s_put_file_if_absent(struct floe_store *st, const char *key, const char *path)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	struct stat fst;
	int rc = full_key(s, key, k, sizeof(k));
	if (rc)
		return rc;
	if (stat(path, &fst) != 0)
		return -errno;
	int64_t size = (int64_t)fst.st_size;
	if (size > s->multipart_threshold) {
		/* No condition can guard a multipart completion on every store: check first.
		 * Only this installation writes this key, so nothing can come in between. */
		struct floe_s3_object_info info;
		rc = floe_s3_head(s->s3, k, &info);
		if (rc == 0)
			return -EEXIST;
		if (rc != -ENOENT)
			return rc;
		return floe_s3_put_file(s->s3, k, path, NULL, NULL);
	}
	struct floe_s3_put_options po = {.if_none_match = true};
	bool sent_before = false;
	for (int i = 0; i < CONDITIONAL_TRIES; i++) {
		rc = floe_s3_put_file(s->s3, k, path, &po, NULL);
		if (rc == 0)
			return 0;
		if (rc == FLOE_S3_EPRECONDITION && !sent_before)
			return -EEXIST;
		if (rc == FLOE_S3_EPRECONDITION || rc == FLOE_S3_EAMBIGUOUS) {
			int landed = file_landed(s, k, size);
			if (landed < 0)
				return landed;
			if (landed)
				return 0;
			sent_before = true; /* not applied: try again */
			continue;
		}
		if (rc == FLOE_S3_ECONFLICT) {
			floe_signal_sleep_ms(50u << i);
			continue;
		}
		return rc;
	}
	return rc;
}

static int s_size(struct floe_store *st, const char *key, int64_t *size)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	struct floe_s3_object_info info;
	int rc = full_key(s, key, k, sizeof(k));
	if (rc || (rc = floe_s3_head(s->s3, k, &info)))
		return rc;
	*size = info.size;
	return 0;
}

static int s_exists(struct floe_store *st, const char *key)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	struct floe_s3_object_info info;
	int rc = full_key(s, key, k, sizeof(k));
	if (rc)
		return rc;
	rc = floe_s3_head(s->s3, k, &info);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

static int s_remove(struct floe_store *st, const char *key)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, key, k, sizeof(k));
	if (rc)
		return rc;
	rc = floe_s3_delete(s->s3, k);
	return rc == -ENOENT ? 0 : rc;
}

struct delete_ctx {
	const struct s3store *s;
	size_t failed;
};

static int delete_failed(void *ctx, const char *key, const char *code, const char *message)
{
	struct delete_ctx *d = ctx;
	d->failed++;
	floe_warn("store: deleting %s (key %s) failed: %s%s%s", d->s->base.uri, key, code, message[0] ? ": " : "",
		  message);
	return 0;
}

/* DeleteObjects for up to FLOE_S3_DELETE_MAX keys at a time, their full keys in one
 * buffer; a server without it gets a DELETE per key from then on. */
static int s_remove_many(struct floe_store *st, const char *const *keys, size_t n, size_t *removed)
{
	struct s3store *s = (struct s3store *)st;
	const char *full[FLOE_S3_DELETE_MAX];
	char *buf = s->no_batch ? NULL : floe_malloc(st->alloc, (size_t)FLOE_S3_DELETE_MAX * 2048);
	int rc = s->no_batch || buf ? 0 : FLOE_ENOMEM;
	size_t i = 0;
	while (rc == 0 && !s->no_batch && i < n) {
		size_t k = n - i < FLOE_S3_DELETE_MAX ? n - i : FLOE_S3_DELETE_MAX;
		for (size_t j = 0; j < k && rc == 0; j++) {
			full[j] = buf + j * 2048;
			rc = full_key(s, keys[i + j], buf + j * 2048, 2048);
		}
		struct delete_ctx d = {s, 0};
		if (rc == 0)
			rc = floe_s3_delete_objects(s->s3, full, k, delete_failed, &d, NULL);
		if (rc == -ENOTSUP) {
			floe_info("store: %s does not implement DeleteObjects; deleting one key at a time", st->uri);
			s->no_batch = true;
			rc = 0;
		} else if (rc == 0) {
			*removed += k - d.failed;
			i += k;
		}
	}
	floe_free(st->alloc, buf);
	for (; rc == 0 && i < n; i++) {
		int one = s_remove(st, keys[i]);
		if (one)
			floe_warn("store: deleting %s/%s failed: %s", st->uri, keys[i], floe_strerror(one));
		else
			(*removed)++;
	}
	return rc;
}

struct list_ctx {
	size_t strip;
	int (*fn)(void *ctx, const char *key);
	void *ctx;
};

static int list_one(void *ctx, const char *key, int64_t size)
{
	struct list_ctx *c = ctx;
	(void)size;
	if (strlen(key) < c->strip)
		return 0;
	return c->fn(c->ctx, key + c->strip);
}

static int s_list(struct floe_store *st, const char *prefix, int (*fn)(void *ctx, const char *key),
		  void *ctx)
{
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, prefix, k, sizeof(k));
	if (rc)
		return rc;
	struct list_ctx c = {s->prefix[0] ? strlen(s->prefix) + 1 : 0, fn, ctx};
	return floe_s3_list(s->s3, k, list_one, &c);
}

static void s_destroy(struct floe_store *st)
{
	struct s3store *s = (struct s3store *)st;
	floe_s3_free(s->s3);
	floe_free(st->alloc, s);
}

static const struct floe_store_ops s3_ops = FLOE_STORE_OPS(s);

int floe_store_s3_abort_stale_uploads(struct floe_store *st, const char *prefix,
				      int64_t older_than_s, size_t *aborted)
{
	if (!st || st->ops != &s3_ops || !prefix)
		return -EINVAL;
	struct s3store *s = (struct s3store *)st;
	char k[2048];
	int rc = full_key(s, prefix, k, sizeof(k));
	return rc ? rc : floe_s3_abort_stale_uploads(s->s3, k, older_than_s, aborted);
}

int floe_store_s3_set_max_retries(struct floe_store *st, int max_retries)
{
	if (!st || st->ops != &s3_ops)
		return -EINVAL;
	floe_s3_set_max_retries(((struct s3store *)st)->s3, max_retries);
	return 0;
}

const char *floe_store_s3_last_error(const struct floe_store *st)
{
	if (!st || st->ops != &s3_ops)
		return "";
	return floe_s3_last_error(((const struct s3store *)st)->s3);
}

int64_t floe_store_s3_retry_after_ms(const struct floe_store *st)
{
	if (!st || st->ops != &s3_ops)
		return 0;
	return floe_s3_retry_after_ms(((const struct s3store *)st)->s3);
}

int floe_store_s3_new(const struct floe_s3_options *o, const char *prefix, struct floe_store **out)
{
	struct s3store *s = floe_calloc(o->alloc, 1, sizeof(*s));
	if (!s)
		return FLOE_ENOMEM;
	s->base.alloc = o->alloc;
	while (*prefix == '/')
		prefix++;
	size_t n = strlen(prefix);
	while (n > 0 && prefix[n - 1] == '/')
		n--;
	int rc = -ENAMETOOLONG;
	if (n >= sizeof(s->prefix))
		goto out;
	memcpy(s->prefix, prefix, n);
	s->prefix[n] = '\0';
	int len = snprintf(s->base.uri, sizeof(s->base.uri), "s3://%s%s%s", o->bucket, n ? "/" : "", s->prefix);
	if (len < 0 || (size_t)len >= sizeof(s->base.uri))
		goto out;
	if ((rc = floe_s3_new(o, &s->s3)))
		goto out;
	/* floe_s3_new's default when the option is 0. */
	s->multipart_threshold = o->multipart_threshold > 0 ? o->multipart_threshold : INT64_C(64) << 20;
	s->base.ops = &s3_ops;
	*out = &s->base;
	return 0;
out:
	floe_free(o->alloc, s);
	return rc;
}
