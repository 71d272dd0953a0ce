/* AWS Signature Version 4 for S3-style requests: canonical request, string to sign,
 * signing key and the Authorization header value. Pure functions over strings: the caller
 * injects the time (as an x-amz-date string) and chooses which headers are signed. */
#ifndef FLOE_PLATFORM_SIGV4_H
#define FLOE_PLATFORM_SIGV4_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

/* A header to sign: name in any case (it is lower-cased), value as sent (it is trimmed and
 * runs of spaces are folded for signing). Duplicate names are joined with ',' in the order
 * given, as SigV4 requires. */
struct floe_sigv4_header {
	const char *name;
	const char *value;
};

/* A query parameter, NOT yet encoded: the signer encodes name and value by SigV4 rules
 * (every byte except A-Za-z0-9-._~ as %XX, so '/' becomes %2F) and sorts them. An empty or
 * NULL value gives "name=". */
struct floe_sigv4_param {
	const char *name;
	const char *value;
};

struct floe_sigv4_request {
	const char *method; /* "GET", "PUT", ... */
	/* The path as raw bytes (not encoded), starting with '/'; encoded once (S3 rules: no
	 * double encoding, no dot-segment normalisation; '/' kept). NULL or "" means "/". */
	const char *path;
	const struct floe_sigv4_param *query;
	size_t n_query;
	/* Every header to sign, including host and x-amz-date (and, for S3,
	 * x-amz-content-sha256 and x-amz-security-token). */
	const struct floe_sigv4_header *headers;
	size_t n_headers;
	/* Hex SHA-256 of the body, or "UNSIGNED-PAYLOAD". */
	const char *payload_hash;
	/* "YYYYMMDDTHHMMSSZ" (16 characters), the same value as the x-amz-date header. */
	const char *amz_date;
};

struct floe_sigv4_key {
	const char *access_key_id;
	const char *secret_access_key;
	const char *region;  /* e.g. "us-east-1" */
	const char *service; /* "s3" */
};

/* Everything the signer computed; the strings are owned (from alloc), released with
 * floe_sigv4_result_fini. */
struct floe_sigv4_result {
	char *canonical_request;
	char *string_to_sign;
	char *signed_headers; /* "host;x-amz-content-sha256;x-amz-date" */
	/* "AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=..." */
	char *authorization;
	char signature[65];
	struct floe_alloc *alloc;
};

/* Signs req with key into *out (zeroed first), allocating from a (NULL: unbudgeted).
 * Returns 0, -EINVAL on a malformed amz_date, method or header name, FLOE_ENOMEM. On
 * failure *out holds nothing to free. */
int floe_sigv4_sign(struct floe_alloc *a, const struct floe_sigv4_request *req,
		    const struct floe_sigv4_key *key, struct floe_sigv4_result *out);
void floe_sigv4_result_fini(struct floe_sigv4_result *r);

/* Appends the SigV4 URI encoding of p[0..n) to out[0..cap) at *pos: every byte outside
 * A-Za-z0-9-._~ as %XX (upper-case hex), '/' kept when keep_slash. Returns 0, or -ENOSPC
 * (nothing useful written) when it does not fit. Used for both signing and the URL. */
int floe_sigv4_uri_encode(const char *p, size_t n, int keep_slash, char *out, size_t cap,
			  size_t *pos);
/* Length of the encoding of p[0..n) (an upper bound is 3*n). */
size_t floe_sigv4_uri_encoded_len(const char *p, size_t n, int keep_slash);

/* Formats unix seconds (UTC) as "YYYYMMDDTHHMMSSZ" into out[17]; valid for years 0..9999
 * whatever the width of time_t (armhf). -EINVAL out of range. */
int floe_sigv4_format_date(int64_t unix_s, char out[17]);
/* Parses an HTTP date "Sun, 06 Nov 1994 08:49:37 GMT" (IMF-fixdate) from p[0..n) into
 * unix seconds. -EINVAL if it is not in that form. */
int floe_sigv4_parse_http_date(const char *p, size_t n, int64_t *unix_s);
/* Parses a Retry-After value from p[0..n): delay seconds (up to nine digits) into
 * *after_s, or an HTTP date into *at (unix seconds). Each is left alone when the value is
 * not of its form, so an unreadable value asks for no wait. */
void floe_sigv4_parse_retry_after(const char *p, size_t n, int64_t *after_s, int64_t *at);

#endif
