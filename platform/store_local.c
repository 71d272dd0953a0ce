/* The local-directory store: keys are paths under the root. Writes go through a temp
 * file and rename (put) or link() (put_if_absent, put_file_if_absent), so readers never
 * see partial files and an exclusive create never replaces a file. */
#include "store.h"

#include "fs.h"
#include "log.h"
#include "path.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct local {
	struct floe_store base;
	char root[FLOE_PATH_MAX];
};

/* Rejects keys that would leave the root. */
static int key_path(const struct local *l, const char *key, char *out, size_t cap)
{
	if (key[0] == '/' || strstr(key, "..") != NULL)
		return -EINVAL;
	int n = snprintf(out, cap, "%s/%s", l->root, key);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

/* Creates the parent directories of path. */
static int make_parent(const char *path)
{
	char dir[FLOE_PATH_MAX];
	size_t n = strlen(path);
	if (n >= sizeof(dir))
		return -ENAMETOOLONG;
	memcpy(dir, path, n + 1);
	char *slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	return floe_fs_mkdirs(dir);
}

static int l_get(struct floe_store *s, const char *key, size_t max, void **data, size_t *len)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	return rc ? rc : floe_fs_read_file(s->alloc, path, max, data, len);
}

static int l_put(struct floe_store *s, const char *key, const void *data, size_t len)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc || (rc = make_parent(path)))
		return rc;
	return floe_fs_write_atomic(path, data, len);
}

static int l_put_if_absent(struct floe_store *s, const char *key, const void *data, size_t len)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc || (rc = make_parent(path)))
		return rc;
	return floe_fs_create_excl(path, data, len);
}

static int l_put_file(struct floe_store *s, const char *key, const char *from)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc || (rc = make_parent(path)))
		return rc;
	return floe_fs_copy(from, path);
}

static int l_put_file_if_absent(struct floe_store *s, const char *key, const char *from)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc || (rc = make_parent(path)))
		return rc;
	return floe_fs_copy_excl(from, path);
}

static int l_size(struct floe_store *s, const char *key, int64_t *size)
{
	char path[FLOE_PATH_MAX];
	struct floe_fs_stat st;
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc || (rc = floe_fs_stat(path, &st)))
		return rc == -ENOTDIR ? -ENOENT : rc;
	if (!st.regular)
		return -EISDIR;
	*size = (int64_t)st.size;
	return 0;
}

static int l_exists(struct floe_store *s, const char *key)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	return rc ? rc : floe_fs_exists(path);
}

static int l_remove(struct floe_store *s, const char *key)
{
	char path[FLOE_PATH_MAX];
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc)
		return rc;
	rc = floe_fs_unlink(path);
	return rc == -ENOENT ? 0 : rc;
}

struct list_ctx {
	const char *dirkey; /* key of the directory being listed, with a trailing slash or "" */
	const char *base;   /* prefix of the names within it */
	int (*fn)(void *ctx, const char *key);
	void *ctx;
};

static int list_one(void *ctx, const char *name)
{
	struct list_ctx *c = ctx;
	if (strncmp(name, c->base, strlen(c->base)) != 0)
		return 0;
	char key[FLOE_PATH_MAX];
	int n = snprintf(key, sizeof(key), "%s%s", c->dirkey, name);
	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;
	return c->fn(c->ctx, key);
}

/* Lists the directory that holds prefix (one level: floe lists metadata/ only). */
static int l_list(struct floe_store *s, const char *prefix, int (*fn)(void *ctx, const char *key),
		  void *ctx)
{
	struct local *l = (struct local *)s;
	char dirkey[FLOE_PATH_MAX], path[FLOE_PATH_MAX];
	const char *slash = strrchr(prefix, '/');
	size_t dlen = slash ? (size_t)(slash - prefix) + 1 : 0;
	if (dlen >= sizeof(dirkey))
		return -ENAMETOOLONG;
	memcpy(dirkey, prefix, dlen);
	dirkey[dlen] = '\0';
	int rc = key_path(l, dirkey, path, sizeof(path));
	if (rc)
		return rc;
	struct list_ctx c = {dirkey, prefix + dlen, fn, ctx};
	rc = floe_fs_list(s->alloc, path, list_one, &c);
	return rc == -ENOENT ? 0 : rc;
}

/* Opens the file per call: a reader asks for a few ranges per column chunk, and a
 * descriptor held between calls would have to be closed by someone. */
static int l_read_at(struct floe_store *s, const char *key, uint64_t off, void *buf, size_t len)
{
	char path[FLOE_PATH_MAX];
	int fd = -1;
	int rc = key_path((struct local *)s, key, path, sizeof(path));
	if (rc || (rc = floe_fs_open_read(path, &fd)))
		return rc == -ENOTDIR ? -ENOENT : rc;
	size_t done = 0;
	while (rc == 0 && done < len) {
		size_t got = 0;
		rc = floe_fs_pread(fd, (char *)buf + done, len - done, off + done, &got);
		if (rc == 0 && got == 0)
			rc = -EIO; /* the file is shorter than the range */
		done += got;
	}
	floe_fs_close(fd);
	return rc;
}

/* Files go one unlink each: nothing to batch on a local directory. A failure is logged
 * and the others still go. */
static int l_remove_many(struct floe_store *s, const char *const *keys, size_t n, size_t *removed)
{
	for (size_t i = 0; i < n; i++) {
		int rc = s->ops->remove(s, keys[i]);
		if (rc)
			floe_warn("store: deleting %s/%s failed: %s", s->uri, keys[i], floe_strerror(rc));
		else
			(*removed)++;
	}
	return 0;
}

static void l_destroy(struct floe_store *s)
{
	floe_free(s->alloc, s);
}

static const struct floe_store_ops local_ops = FLOE_STORE_OPS(l);

int floe_store_local_new(struct floe_alloc *a, const char *root, struct floe_store **out)
{
	struct local *l = floe_calloc(a, 1, sizeof(*l));
	if (!l)
		return FLOE_ENOMEM;
	l->base.alloc = a;
	int rc = floe_path_absolute(root, l->root, sizeof(l->root));
	if (rc == 0 && strlen(l->root) > 1 && l->root[strlen(l->root) - 1] == '/')
		l->root[strlen(l->root) - 1] = '\0';
	if (rc == 0 && snprintf(l->base.uri, sizeof(l->base.uri), "file://%s", l->root) >= (int)sizeof(l->base.uri))
		rc = -ENAMETOOLONG;
	if (rc) {
		floe_free(a, l);
		return rc;
	}
	l->base.ops = &local_ops;
	*out = &l->base;
	return 0;
}
