/* SigV4 for a REST catalog's requests (catalog_rest_sign.h). */
#include "agent/lake/catalog_rest_sign.h"

#include "agent/config/config.h"
#include "agent/lake/warehouse.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#ifndef FLOE_NO_S3
#include "formats/aws/credentials.h"
#include "platform/s3/s3_credprov.h"
#include "platform/s3/sigv4.h"
#include "platform/sha.h"

struct floe_rest_signer {
	struct floe_alloc *a;
	const struct floe_config *cfg;
	struct floe_s3_credprov *prov;
	struct floe_aws_credentials cred;
};

int floe_rest_signer_new(struct floe_alloc *a, const struct floe_config *cfg, struct floe_rest_signer **out,
			 struct floe_err *err)
{
	*out = NULL;
	if (!cfg->lake.rest.sigv4)
		return 0;
	struct floe_rest_signer *s = floe_calloc(a, 1, sizeof(*s));
	if (!s)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	s->a = a;
	s->cfg = cfg;
	s->cred.alloc = a;
	int rc = floe_warehouse_credprov(a, cfg, &s->prov, err);
	if (rc) {
		floe_free(a, s);
		return rc;
	}
	*out = s;
	return 0;
}

void floe_rest_signer_free(struct floe_rest_signer *s)
{
	if (!s)
		return;
	floe_aws_credentials_fini(&s->cred);
	floe_s3_credprov_free(s->prov);
	floe_free(s->a, s);
}

int floe_rest_signer_sign(struct floe_rest_signer *s, int64_t now_s, const char *method, const char *url,
			  const char *qname, const char *qvalue, const void *body, size_t body_len,
			  struct floe_rest_signed *out, struct floe_err *err)
{
	memset(out, 0, sizeof(*out));
	const char *host = strstr(url, "://");
	host = host ? host + 3 : url;
	size_t hn = strcspn(host, "/");
	const char *path = host[hn] ? host + hn : "/";
	char hostv[sizeof(out->host)], date[17], sha[FLOE_SHA256_HEX_LEN + 1];
	if (hn >= sizeof(hostv) - 8)
		return floe_err_set(err, FLOE_ELIMIT, "the catalog's host name is too long to sign");
	memcpy(hostv, host, hn);
	hostv[hn] = '\0';
	int rc = floe_sigv4_format_date(now_s, date);
	if (rc == 0)
		rc = floe_sha256_hex(body ? body : "", body ? body_len : 0, sha);
	if (rc)
		return floe_err_set(err, rc, "SigV4: %s", floe_strerror(rc));
	/* Asked before every request: the provider answers from its cache and renews
	 * temporary keys before they expire. */
	struct floe_err why = {0};
	if ((rc = floe_s3_credprov_get(s->prov, now_s, &s->cred, NULL, &why)))
		return floe_err_set(err, rc, "no AWS credentials to sign the catalog's requests: %.600s",
				    why.msg[0] ? why.msg : floe_strerror(rc));
	struct floe_sigv4_header h[4] = {{"host", hostv}, {"x-amz-date", date}, {"x-amz-content-sha256", sha}};
	size_t nh = 3;
	if (s->cred.session_token && s->cred.session_token[0])
		h[nh++] = (struct floe_sigv4_header){"x-amz-security-token", s->cred.session_token};
	struct floe_sigv4_param q = {qname, qvalue};
	struct floe_sigv4_request sr = {.method = method,
					.path = path,
					.query = qname ? &q : NULL,
					.n_query = qname ? 1 : 0,
					.headers = h,
					.n_headers = nh,
					.payload_hash = sha,
					.amz_date = date};
	const char *region = s->cfg->lake.rest.signing_region ? s->cfg->lake.rest.signing_region
							       : s->cfg->lake.s3.region;
	struct floe_sigv4_key key = {s->cred.access_key_id, s->cred.secret_access_key,
				     region ? region : "us-east-1", s->cfg->lake.rest.signing_name};
	struct floe_sigv4_result sig = {0};
	if ((rc = floe_sigv4_sign(s->a, &sr, &key, &sig)))
		return floe_err_set(err, rc, "SigV4: %s", floe_strerror(rc));
	bool fits = floe_fmt(out->host, sizeof(out->host), "Host: %s", hostv) == 0 &&
		    floe_fmt(out->date, sizeof(out->date), "X-Amz-Date: %s", date) == 0 &&
		    floe_fmt(out->sha, sizeof(out->sha), "X-Amz-Content-SHA256: %s", sha) == 0 &&
		    floe_fmt(out->authorization, sizeof(out->authorization), "Authorization: %s",
			     sig.authorization) == 0 &&
		    (nh == 3 || floe_fmt(out->token, sizeof(out->token), "X-Amz-Security-Token: %s",
					 s->cred.session_token) == 0);
	floe_sigv4_result_fini(&sig);
	if (!fits) {
		floe_rest_signed_wipe(out);
		return floe_err_set(err, FLOE_ELIMIT, "SigV4: a signed header is too long");
	}
	return 0;
}

#else /* a build without S3 has no REST catalog (its configuration is refused) */

struct floe_rest_signer {
	int none;
};

int floe_rest_signer_new(struct floe_alloc *a, const struct floe_config *cfg, struct floe_rest_signer **out,
			 struct floe_err *err)
{
	(void)a;
	*out = NULL;
	return cfg->lake.rest.sigv4 ? floe_err_set(err, -ENOTSUP, "this build of floe has no SigV4 signer") : 0;
}

void floe_rest_signer_free(struct floe_rest_signer *s)
{
	(void)s;
}

int floe_rest_signer_sign(struct floe_rest_signer *s, int64_t now_s, const char *method, const char *url,
			  const char *qname, const char *qvalue, const void *body, size_t body_len,
			  struct floe_rest_signed *out, struct floe_err *err)
{
	(void)s, (void)now_s, (void)method, (void)url, (void)qname, (void)qvalue, (void)body, (void)body_len;
	memset(out, 0, sizeof(*out));
	return floe_err_set(err, -ENOTSUP, "this build of floe has no SigV4 signer");
}
#endif

void floe_rest_signed_wipe(struct floe_rest_signed *h)
{
	floe_wipe(h, sizeof(*h));
}
