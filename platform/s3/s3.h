/* An S3 client on libcurl with floe's own SigV4: objects (put from memory or a file,
 * conditional create, get, head, delete), ListObjectsV2, multipart uploads, retries with
 * exponential backoff and full jitter on transient errors only, and clock-skew correction.
 * Each client owns a libcurl multi handle (its keep-alive connection cache) and runs one
 * request at a time on it; every operation is prepare → perform → classify internally. */
#ifndef FLOE_PLATFORM_S3_H
#define FLOE_PLATFORM_S3_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "formats/base/error.h" /* FLOE_S3_E*: the client's codes */

struct floe_alloc;
#include "platform/s3/s3_credentials.h"
#include "platform/s3/s3_credprov.h"
#include "platform/s3/sigv4.h"

/* A credential provider that produced nothing fails a request with FLOE_S3_EAUTH (or
 * FLOE_S3_EUNAVAILABLE when STS or a metadata endpoint could not be reached);
 * floe_s3_credprov_error says why. */

/* Randomness and sleeping are injected so that tests run instantly and deterministically. */
typedef uint64_t (*floe_s3_random_fn)(void *ctx);
typedef void (*floe_s3_sleep_fn)(void *ctx, int64_t ms);
/* Wall clock in unix seconds (for x-amz-date); injected for tests. */
typedef int64_t (*floe_s3_now_fn)(void *ctx);
/* Milliseconds since a stop was requested, or -1 when none was (floe_signal_stop_age_ms
 * by default); injected for tests. */
typedef int64_t (*floe_s3_stop_fn)(void *ctx);

/* A request to be signed: its method, the URL it goes to (encoded as sent), the bucket's
 * region and the headers it carries (host, x-amz-date, x-amz-content-sha256, the
 * request's own). */
struct floe_s3_to_sign {
	const char *method;
	const char *url;
	const char *region;
	const struct floe_sigv4_header *headers;
	size_t nheaders;
	int64_t now; /* seconds, the client's corrected clock (the one in x-amz-date) */
	/* A POST's body held in memory (DeleteObjects: the keys it deletes), for a remote
	 * signer that authorizes by it; NULL otherwise. */
	const char *body;
	size_t body_len;
};
/* Adds a header the signature needs to the request (copied). */
typedef int (*floe_s3_sign_add_fn)(void *add_ctx, const char *name, const char *value);
/* Signs in: adds, through add, the headers that make it authorized (Authorization, a
 * session token). 0, or an error the request fails with, unsent (FLOE_S3_EAUTH for a
 * signature refused or keys missing; the S3 client's codes for a signer away). */
typedef int (*floe_s3_sign_fn)(void *ctx, const struct floe_s3_to_sign *in, floe_s3_sign_add_fn add,
			       void *add_ctx);

struct floe_s3_options {
	/* Where every allocation of the client comes from, response bodies and listing pages
	 * included: the agent's budget (borrowed; it must outlive the client; NULL:
	 * unbudgeted). */
	struct floe_alloc *alloc;
	/* "https://s3.eu-west-1.amazonaws.com" or "http://127.0.0.1:17480"; no path. http://
	 * is only used when written here explicitly. */
	const char *endpoint;
	const char *region; /* e.g. "us-east-1" */
	const char *bucket;
	bool path_style; /* http://host/bucket/key instead of http://bucket.host/key */
	struct floe_aws_credentials credentials; /* borrowed; copied by floe_s3_new */
	/* If not NULL, asked for credentials before every signing (so refreshed temporary
	 * credentials are always used; credentials above may then be empty). The client takes
	 * a reference (floe_s3_credprov_ref) and drops it in floe_s3_free. A 403 ExpiredToken
	 * makes it forget its cache and the request is tried once more. */
	struct floe_s3_credprov *credprov;
	/* The one seam where a request is authorized. NULL: SigV4 with the credentials (or
	 * the provider's) above. Otherwise called before every attempt instead (a catalog's
	 * remote signer): credentials are then not needed. */
	floe_s3_sign_fn sign_fn;
	void *sign_ctx;
	const char *ca_file;			/* NULL: the system's CA bundle */
	const char *ca_path;			/* NULL: none */
	int64_t connect_timeout_ms;		/* 0: 10 s */
	int64_t stall_timeout_ms;   /* abort when no byte moves for this long; 0: 30 s */
	/* Every attempt has a total deadline (connect, send, wait, receive) of
	 * request_timeout_ms plus one second per min_rate bytes it has moved so far (see
	 * s3_limits.h for the numbers). An attempt over it is cut, logged and retried like a
	 * timeout. request_timeout_ms 0: 30 s, negative: no deadline; min_rate 0: 4 KiB/s. */
	int64_t request_timeout_ms;
	int64_t min_rate;
	/* After a stop request, attempts in flight are cut and none is started or retried
	 * once stop_grace_ms have passed since the stop (0: 2 s); they fail with
	 * FLOE_S3_ESTOPPED. */
	int64_t stop_grace_ms;
	floe_s3_stop_fn stop_fn; /* NULL: floe_signal_stop_age_ms */
	void *stop_ctx;		 /* passed to stop_fn */
	int max_retries; /* retries after the first attempt; 0: default 5; negative: none */
	/* No retry is started once the time spent on an operation (requests plus backoff)
	 * would pass this; 0: 5 minutes. */
	int64_t retry_budget_ms;
	int64_t backoff_base_ms;     /* 0: 100 ms */
	int64_t backoff_cap_ms;	     /* 0: 20 s */
	int64_t multipart_threshold; /* put_file uses multipart above this; 0: 64 MiB */
	int64_t part_size;	     /* 0: 16 MiB; at least 5 MiB except in tests */
	bool unsigned_payload;	     /* send UNSIGNED-PAYLOAD instead of hashing bodies */
	bool quote_if_match;	     /* send If-Match ETags quoted (AWS) instead of bare (RGW) */
	/* curl's CONNECT_TO rule "HOST:PORT:CONNECT-HOST:CONNECT-PORT" (empty parts = any): pins
	 * the address connected to without changing Host or TLS names. NULL: none. */
	const char *connect_to;
	floe_s3_random_fn random_fn; /* NULL: kernel CSPRNG */
	floe_s3_sleep_fn sleep_fn;   /* NULL: nanosleep */
	floe_s3_now_fn now_fn;	     /* NULL: CLOCK_REALTIME */
	void *fn_ctx;		     /* passed to the three functions above */
};

struct floe_s3;

/* Creates a client; copies everything it needs from o (but o->alloc, which it borrows).
 * *out is owned by the caller (floe_s3_free). -EINVAL names no field: bad endpoint,
 * missing bucket/region/keys; FLOE_ENOMEM. */
int floe_s3_new(const struct floe_s3_options *o, struct floe_s3 **out);
void floe_s3_free(struct floe_s3 *s3);

/* Replaces the credentials; copied. With a provider they last until the next request,
 * which asks the provider again. */
int floe_s3_set_credentials(struct floe_s3 *s3, const struct floe_aws_credentials *c);

/* Sets the retries after a request's first attempt, as max_retries in the options (0:
 * the default, 5; negative: none): the agent's start-up asks a store once, so that a dead
 * endpoint does not keep its inputs closed through a round of backoffs. */
void floe_s3_set_max_retries(struct floe_s3 *s3, int max_retries);

/* What the last request saw: HTTP status (0 if none), S3 error code from the body ("" if
 * none), the Location header of a redirect ("" if none), attempts made, and the clock
 * offset (server - local, seconds) now applied. The strings stay valid until the next
 * request. */
int floe_s3_last_status(const struct floe_s3 *s3);
const char *floe_s3_last_error_code(const struct floe_s3 *s3);
/* The last failure as a sentence for the operator: the request and its URL, then curl's
 * reason ("Could not connect to server: Failed to connect to 127.0.0.1 port 9 ...") or
 * the status and S3 error code ("HTTP 404 NoSuchBucket"). "" after a success or an
 * expected answer (a 404 to an existence check). */
const char *floe_s3_last_error(const struct floe_s3 *s3);
const char *floe_s3_last_location(const struct floe_s3 *s3);
int floe_s3_last_attempts(const struct floe_s3 *s3);
int64_t floe_s3_clock_offset(const struct floe_s3 *s3);
/* How many ms are left of the wait the store last asked for (Retry-After, at most
 * FLOE_HTTP_RETRY_AFTER_MAX_S) when the request it answered gave up: the caller's next
 * request should not come sooner. 0: none asked, or a request succeeded since. */
int64_t floe_s3_retry_after_ms(const struct floe_s3 *s3);

struct floe_s3_object_info {
	int64_t size;
	char etag[128]; /* as the server sent it, quotes included; "" if none */
};

struct floe_s3_put_options {
	bool if_none_match;   /* If-None-Match: * (create only). Never retried blindly. */
	const char *if_match; /* ETag (quotes are stripped or kept per quote_if_match) */
	const char *content_type;
};

/* PUT key with data[0..len) (borrowed). po and info may be NULL; info gets the ETag.
 * Conditional puts: 412 → FLOE_S3_EPRECONDITION, 409 → FLOE_S3_ECONFLICT, and a 5xx or a
 * connection cut after sending → FLOE_S3_EAMBIGUOUS (no retry). */
int floe_s3_put(struct floe_s3 *s3, const char *key, const void *data, size_t len,
		const struct floe_s3_put_options *po, struct floe_s3_object_info *info);
/* PUT key from the file at path, streamed; multipart above the threshold (conditions are
 * then refused with -EINVAL, since RGW ignores them on multipart completion). */
int floe_s3_put_file(struct floe_s3 *s3, const char *key, const char *path,
		     const struct floe_s3_put_options *po, struct floe_s3_object_info *info);

/* GET key into a new buffer (*data, from the client's allocator, owned by the caller:
 * floe_free(alloc, *data); one NUL byte after *len). -ENOENT if absent, -EFBIG over max
 * bytes, FLOE_ENOMEM when the allocator refuses the body. On failure *data is
 * untouched. */
int floe_s3_get(struct floe_s3 *s3, const char *key, size_t max, void **data, size_t *len);
/* As floe_s3_get for bytes [off, off+n) (Range request). */
int floe_s3_get_range(struct floe_s3 *s3, const char *key, int64_t off, int64_t n, void **data,
		      size_t *len);
/* HEAD key: size and ETag. -ENOENT if absent. */
int floe_s3_head(struct floe_s3 *s3, const char *key, struct floe_s3_object_info *info);
/* DELETE key; deleting an absent key succeeds (S3 semantics). */
int floe_s3_delete(struct floe_s3 *s3, const char *key);
/* DeleteObjects (s3_delete.c): deletes keys[0..n) in requests of up to
 * FLOE_S3_DELETE_MAX keys (POST ?delete, quiet, with Content-MD5). 0 when every request
 * was answered, with each key the server could not delete reported to on_error(ctx,
 * key, code, message) (may be NULL; a non-zero return stops and is returned) and counted
 * in *failed (may be NULL); absent keys count as deleted. -ENOTSUP when the server does
 * not implement the call (501 or NotImplemented): the caller deletes one key at a time.
 * Otherwise a request's error (keys of earlier requests are gone, later ones not). */
#define FLOE_S3_DELETE_MAX 1000
int floe_s3_delete_objects(struct floe_s3 *s3, const char *const *keys, size_t n,
			   int (*on_error)(void *ctx, const char *key, const char *code, const char *message),
			   void *ctx, size_t *failed);

/* ListObjectsV2 of every key starting with prefix (NULL/"" = all), following continuation
 * tokens. fn is called per key (borrowed string, valid during the call) with its size; a
 * non-zero return stops the listing and is returned. A server that repeats a continuation
 * token (in any cycle), sends a truncated page without one, or sends more than
 * FLOE_S3_LIST_MAX_PAGES pages fails the listing with FLOE_S3_ELOOP (logged with the
 * bucket and prefix). */
#define FLOE_S3_LIST_MAX_PAGES 100000 /* 100 million keys of 1000-key pages */
typedef int (*floe_s3_list_fn)(void *ctx, const char *key, int64_t size);
int floe_s3_list(struct floe_s3 *s3, const char *prefix, floe_s3_list_fn fn, void *ctx);

/* Multipart upload primitives (floe_s3_put_file uses them above the threshold). */
struct floe_s3_part {
	int number;	/* 1..10000 */
	char etag[128]; /* as returned by upload_part */
};
/* Starts an upload; upload_id gets the id (NUL-terminated, at most cap-1 bytes). */
int floe_s3_multipart_create(struct floe_s3 *s3, const char *key, char *upload_id, size_t cap);
/* Uploads bytes [off, off+len) of the open file fd as part number; fills part. */
int floe_s3_multipart_upload_part(struct floe_s3 *s3, const char *key, const char *upload_id,
				  int number, int fd, int64_t off, int64_t len,
				  struct floe_s3_part *part);
/* Completes with parts[0..n) in ascending number order. The response may be a 200 that
 * carries an <Error>: that is reported as an error. */
int floe_s3_multipart_complete(struct floe_s3 *s3, const char *key, const char *upload_id,
			       const struct floe_s3_part *parts, size_t n);
/* Aborts; an unknown upload (404 NoSuchUpload) counts as done. */
int floe_s3_multipart_abort(struct floe_s3 *s3, const char *key, const char *upload_id);
/* Lists in-progress uploads under prefix (ListMultipartUploads, all pages): fn gets key,
 * upload id and the Initiated timestamp text (ISO 8601), borrowed for the call. */
typedef int (*floe_s3_upload_fn)(void *ctx, const char *key, const char *upload_id,
				 const char *initiated);
int floe_s3_multipart_list(struct floe_s3 *s3, const char *prefix, floe_s3_upload_fn fn, void *ctx);

/* Aborts the in-progress multipart uploads under prefix that were initiated more than
 * older_than_s seconds ago (by the server-corrected clock): parts left by a crashed run.
 * Uploads whose Initiated time cannot be read are left alone. Keep older_than_s well above
 * the longest upload any live writer sharing the prefix can take (hours, not minutes).
 * Every stale upload is tried; *aborted (if not NULL) gets how many were aborted. Returns
 * 0, the listing's error, or the first abort's error. */
int floe_s3_abort_stale_uploads(struct floe_s3 *s3, const char *prefix, int64_t older_than_s,
				size_t *aborted);

#endif
