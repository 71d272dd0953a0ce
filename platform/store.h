/* Object stores: where a warehouse's files live. One interface, two backends: a local
 * directory (store_local.c) and S3 (s3/store_s3.c, in the S3 client's library). Keys are relative to the warehouse
 * root ("default/logs/metadata/v1.metadata.json"); a key's URI is the store's URI prefix,
 * "/", and the key. Every write is all-or-nothing: readers never see a partial object. */
#ifndef FLOE_STORE_H
#define FLOE_STORE_H

#include "formats/base/limits.h"

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

struct floe_store;

struct floe_store_ops {
	int (*get)(struct floe_store *s, const char *key, size_t max, void **data, size_t *len);
	int (*put)(struct floe_store *s, const char *key, const void *data, size_t len);
	int (*put_if_absent)(struct floe_store *s, const char *key, const void *data, size_t len);
	int (*put_file)(struct floe_store *s, const char *key, const char *path);
	int (*put_file_if_absent)(struct floe_store *s, const char *key, const char *path);
	int (*exists)(struct floe_store *s, const char *key);
	int (*size)(struct floe_store *s, const char *key, int64_t *size);
	int (*remove)(struct floe_store *s, const char *key);
	int (*list)(struct floe_store *s, const char *prefix, int (*fn)(void *ctx, const char *key), void *ctx);
	void (*destroy)(struct floe_store *s);
	int (*read_at)(struct floe_store *s, const char *key, uint64_t off, void *buf, size_t len);
	int (*remove_many)(struct floe_store *s, const char *const *keys, size_t n, size_t *removed);
};

/* The table of a backend whose functions are named p_get, p_put, ... p_destroy. */
#define FLOE_STORE_OPS(p)                                                                          \
	{                                                                                          \
		.get = p##_get, .put = p##_put, .put_if_absent = p##_put_if_absent,              \
		.put_file = p##_put_file, .put_file_if_absent = p##_put_file_if_absent,          \
		.exists = p##_exists, .size = p##_size, .remove = p##_remove, .list = p##_list,  \
		.destroy = p##_destroy, .read_at = p##_read_at, .remove_many = p##_remove_many,   \
	}

/* Backends embed this as their first member. */
struct floe_store {
	const struct floe_store_ops *ops;
	char uri[FLOE_PATH_MAX]; /* "file:///abs/dir" or "s3://bucket/prefix", no trailing slash */
	/* Where the store's memory comes from, object bodies and listings included: the
	 * agent's budget (borrowed; NULL: unbudgeted). */
	struct floe_alloc *alloc;
};

/* A store over the local directory root, allocating from a; directories are created as
 * keys are written. */
int floe_store_local_new(struct floe_alloc *a, const char *root, struct floe_store **out);

/* Checks that the store arbitrates creates: a probe key created twice must fail the
 * second time (some S3 gateways ignore If-None-Match). 0 when it does (also when the key
 * was there already and the first create failed: a store that denies DELETE keeps it),
 * FLOE-independent -ENOTSUP when the second create succeeded, or the store's error. The
 * probe key is removed before and afterwards, as far as the store lets it. */
int floe_store_probe_conditional(struct floe_store *s, const char *probe_key);

/* Reads key into a new buffer from the store's allocator (free with
 * floe_store_free_data); -ENOENT when absent, -EFBIG over max, FLOE_ENOMEM when the
 * allocator refuses it (a large object counts against the agent's budget). */
int floe_store_get(struct floe_store *s, const char *key, size_t max, void **data, size_t *len);
void floe_store_free_data(struct floe_store *s, void *data);
/* Reads exactly len bytes of key at off into buf (a byte range: a Parquet reader's pages,
 * without the whole object in memory). -ENOENT when absent, -EIO when the object ends
 * before off + len, -ENOTSUP for a backend without ranges. */
int floe_store_read_at(struct floe_store *s, const char *key, uint64_t off, void *buf, size_t len);
/* Writes key (replacing it). */
int floe_store_put(struct floe_store *s, const char *key, const void *data, size_t len);
/* Creates key only if it does not exist: -EEXIST when it does (another writer won). A
 * racing create from any number of processes has exactly one winner. */
int floe_store_put_if_absent(struct floe_store *s, const char *key, const void *data, size_t len);
/* Uploads a local file as key (replacing it). */
int floe_store_put_file(struct floe_store *s, const char *key, const char *path);
/* Uploads a local file as key only if key does not exist: -EEXIST when it does. A local
 * directory links the copy into place; S3 sends If-None-Match: * on a single PUT. S3
 * multipart uploads (files above the multipart threshold) cannot be conditional on every
 * store (RGW ignores the condition on completion): for those the key is checked with a
 * HEAD first, so callers must only use keys no other writer can choose (floe's data file
 * names carry the installation id). When the outcome of a conditional PUT is unknown (a
 * 5xx or a cut connection), an object of the file's size at key counts as ours: the key
 * is our own. */
int floe_store_put_file_if_absent(struct floe_store *s, const char *key, const char *path);
/* 1 if key exists, 0 if not, or a negative error. */
int floe_store_exists(struct floe_store *s, const char *key);
/* The size of key's object in bytes; -ENOENT when absent. */
int floe_store_size(struct floe_store *s, const char *key, int64_t *size);
/* Deletes key; absent is fine. */
int floe_store_remove(struct floe_store *s, const char *key);
/* Deletes keys[0..n) (absent ones are fine) in as few requests as the backend can (S3:
 * DeleteObjects, 1000 keys a request, one DELETE each where the server lacks it); a key
 * that could not be deleted is logged. *removed gets how many are gone. Returns 0, or
 * the error that stopped it (keys after it may remain). */
int floe_store_remove_many(struct floe_store *s, const char *const *keys, size_t n, size_t *removed);
/* Calls fn for every key that starts with prefix, in byte order. */
int floe_store_list(struct floe_store *s, const char *prefix, int (*fn)(void *ctx, const char *key),
		    void *ctx);
/* The URI of key (out must hold the store URI + key + 2 bytes). -ENAMETOOLONG otherwise. */
int floe_store_uri(const struct floe_store *s, const char *key, char *out, size_t cap);
/* The key of a URI inside this store; -EXDEV for a URI outside it. The store's own URI
 * (a store opened at a table's location) is the key "". */
int floe_store_key(const struct floe_store *s, const char *uri, char *out, size_t cap);
void floe_store_free(struct floe_store *s);

#endif
