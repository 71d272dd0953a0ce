/* SigV4 request signing for a REST catalog on an AWS endpoint (lake.catalog.sigv4-enabled:
 * AWS Glue's or S3 Tables' Iceberg endpoints): every request is signed with the keys
 * lake.s3 finds (its own, else the environment, the shared file, ...), for the configured
 * signing name and region, the body's SHA-256 included. The signer is the S3 client's
 * (platform/s3/sigv4.h); this adds what a catalog request needs around it: the host and
 * path of its URL (the path as sent, encoded once more, as SigV4 wants for every service
 * but S3), its one query parameter, and the headers to send. */
#ifndef FLOE_CATALOG_REST_SIGN_H
#define FLOE_CATALOG_REST_SIGN_H

#include <stddef.h>
#include <stdint.h>

struct floe_alloc;
struct floe_config;
struct floe_err;
struct floe_rest_signer;

/* A signer for cfg's catalog (cfg borrowed); *out NULL when signing is off. The keys are
 * looked for now, as the S3 warehouse's are: none is a configuration error (FLOE_EINVAL). */
int floe_rest_signer_new(struct floe_alloc *a, const struct floe_config *cfg, struct floe_rest_signer **out,
			 struct floe_err *err);
void floe_rest_signer_free(struct floe_rest_signer *s);

/* The header lines that sign one request ("Name: value"; the token's only with temporary
 * keys, else ""). They hold a session token: floe_rest_signed_wipe after the request. */
struct floe_rest_signed {
	char host[320], date[32], sha[96], token[8192], authorization[640];
};

/* Signs method url (scheme://host[:port]/path, the path percent-encoded as sent, no query)
 * with the query parameter qname=qvalue (raw; qname NULL: none) and the body at unix time
 * now_s into *out. The S3 client's codes when the keys cannot be had (FLOE_S3_EAUTH,
 * FLOE_S3_EUNAVAILABLE, ...), FLOE_ELIMIT for a URL or token past the buffers. */
int floe_rest_signer_sign(struct floe_rest_signer *s, int64_t now_s, const char *method, const char *url,
			  const char *qname, const char *qvalue, const void *body, size_t body_len,
			  struct floe_rest_signed *out, struct floe_err *err);
void floe_rest_signed_wipe(struct floe_rest_signed *h);

#endif
