/* Store dispatch and URI <-> key mapping shared by every backend. */
#include "store.h"

#include "formats/base/alloc.h"
#include "platform/beat.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int floe_store_get(struct floe_store *s, const char *key, size_t max, void **data, size_t *len)
{
	floe_beat("store: reading an object");
	return s->ops->get(s, key, max, data, len);
}

void floe_store_free_data(struct floe_store *s, void *data)
{
	floe_free(s->alloc, data);
}

int floe_store_read_at(struct floe_store *s, const char *key, uint64_t off, void *buf, size_t len)
{
	if (!s->ops->read_at)
		return -ENOTSUP;
	floe_beat("store: reading part of an object");
	return s->ops->read_at(s, key, off, buf, len);
}

int floe_store_put(struct floe_store *s, const char *key, const void *data, size_t len)
{
	floe_beat("store: writing an object");
	return s->ops->put(s, key, data, len);
}

int floe_store_put_if_absent(struct floe_store *s, const char *key, const void *data, size_t len)
{
	floe_beat("store: writing an object if absent");
	return s->ops->put_if_absent(s, key, data, len);
}

int floe_store_put_file(struct floe_store *s, const char *key, const char *path)
{
	floe_beat("store: writing a file");
	return s->ops->put_file(s, key, path);
}

int floe_store_put_file_if_absent(struct floe_store *s, const char *key, const char *path)
{
	floe_beat("store: writing a file if absent");
	return s->ops->put_file_if_absent(s, key, path);
}

int floe_store_size(struct floe_store *s, const char *key, int64_t *size)
{
	floe_beat("store: asking an object's size");
	return s->ops->size(s, key, size);
}

int floe_store_exists(struct floe_store *s, const char *key)
{
	floe_beat("store: asking whether an object exists");
	return s->ops->exists(s, key);
}

int floe_store_remove(struct floe_store *s, const char *key)
{
	floe_beat("store: removing an object");
	return s->ops->remove(s, key);
}

int floe_store_remove_many(struct floe_store *s, const char *const *keys, size_t n, size_t *removed)
{
	*removed = 0;
	floe_beat("store: removing objects");
	if (s->ops->remove_many)
		return s->ops->remove_many(s, keys, n, removed);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((rc = s->ops->remove(s, keys[i])) == 0)
			(*removed)++;
	return rc;
}

int floe_store_list(struct floe_store *s, const char *prefix, int (*fn)(void *ctx, const char *key),
		    void *ctx)
{
	floe_beat("store: listing objects");
	return s->ops->list(s, prefix, fn, ctx);
}

int floe_store_uri(const struct floe_store *s, const char *key, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/%s", s->uri, key);
	return n < 0 || (size_t)n >= cap ? -ENAMETOOLONG : 0;
}

int floe_store_key(const struct floe_store *s, const char *uri, char *out, size_t cap)
{
	size_t n = strlen(s->uri);
	const char *rest = NULL;
	if (strncmp(uri, s->uri, n) == 0 && (uri[n] == '/' || uri[n] == '\0')) {
		rest = uri + n + (uri[n] == '/');
	} else if (strncmp(s->uri, "file:///", 8) == 0 && strncmp(uri, "file:/", 6) == 0 &&
		   uri[6] != '/' && strncmp(uri + 5, s->uri + 7, n - 7) == 0 && uri[5 + n - 7] == '/') {
		/* Java writes local paths as file:/abs (one slash). */
		rest = uri + 5 + (n - 7) + 1;
	}
	if (!rest)
		return -EXDEV;
	size_t len = strlen(rest);
	if (len + 1 > cap)
		return -ENAMETOOLONG;
	memcpy(out, rest, len + 1);
	return 0;
}

void floe_store_free(struct floe_store *s)
{
	if (s)
		s->ops->destroy(s);
}

int floe_store_probe_conditional(struct floe_store *s, const char *probe_key)
{
	static const char body[] = "floe conditional-create probe";
	floe_store_remove(s, probe_key);
	int rc = floe_store_put_if_absent(s, probe_key, body, sizeof(body) - 1);
	/* The key is there (a store that denies DELETE kept it from an earlier probe): the
	 * store refused to create it again, which is the arbitration sought (a store that
	 * ignores If-None-Match takes the create). */
	if (rc == -EEXIST)
		return 0;
	if (rc)
		return rc;
	rc = floe_store_put_if_absent(s, probe_key, "other", 5);
	floe_store_remove(s, probe_key);
	if (rc == -EEXIST)
		return 0;
	return rc ? rc : -ENOTSUP;
}
