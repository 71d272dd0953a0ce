/* The S3 client's default signer (floe_s3_options.sign_fn NULL): SigV4 with the
 * client's keys, apart from the request path so that the seam stays one call there. */
#include "platform/s3/s3_request.h"

#include "formats/base/error.h"
#include "platform/s3/sigv4.h"

#include <errno.h>

/* The default signer: SigV4 with the client's keys, asked of the provider before every
 * signing (it answers from its cache, and refreshes temporary credentials that are about
 * to expire, so none can be missed). */
int floe_s3_sign_sigv4(void *ctx, const struct floe_s3_to_sign *in, floe_s3_sign_add_fn add, void *add_ctx)
{
	const struct floe_s3_sigv4_ctx *x = ctx;
	struct floe_s3 *s3 = x->s3;
	struct floe_sigv4_result sig = {0};
	char amz_date[17];
	int rc = floe_sigv4_format_date(in->now, amz_date) ? -EINVAL : 0;
	if (rc == 0 && s3->credprov)
		rc = floe_s3_credprov_get(s3->credprov, in->now, &s3->cred, NULL, NULL);
	if (rc)
		return rc;
	if (!s3->cred.access_key_id || !s3->cred.secret_access_key)
		return FLOE_S3_EAUTH;
	struct floe_sigv4_header h[8];
	size_t nh = 0;
	for (size_t i = 0; i < in->nheaders && nh < 7; i++)
		h[nh++] = in->headers[i];
	if (s3->cred.session_token)
		h[nh++] = (struct floe_sigv4_header){"x-amz-security-token", s3->cred.session_token};
	struct floe_sigv4_request sr = {.method = in->method,
					.path = x->path,
					.query = x->rq->q,
					.n_query = x->rq->nq,
					.headers = h,
					.n_headers = nh,
					.payload_hash = x->payload_hash,
					.amz_date = amz_date};
	struct floe_sigv4_key key = {s3->cred.access_key_id, s3->cred.secret_access_key, s3->region, "s3"};
	if ((rc = floe_sigv4_sign(s3->o.alloc, &sr, &key, &sig)) == 0 && s3->cred.session_token)
		rc = add(add_ctx, "x-amz-security-token", s3->cred.session_token);
	if (rc == 0)
		rc = add(add_ctx, "Authorization", sig.authorization);
	floe_sigv4_result_fini(&sig);
	return rc;
}
