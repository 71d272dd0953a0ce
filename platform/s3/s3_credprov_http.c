/* The remote credential providers' HTTP helper, on a curl easy handle of the provider's
 * own (bounded answers, short timeouts and no proxy for the metadata endpoints), and the
 * reading of tokens that go into request headers. Every buffer that held a secret is wiped
 * before free. */
#include "platform/s3/s3_credprov_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include "platform/fs.h"
#include "platform/http.h"
#include "platform/s3/s3.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RESP_MAX (64 * 1024)	   /* credential documents are small */
#define TOKEN_FILE_MAX (64 * 1024) /* a web identity JWT or a container token */

/* ---- tokens -------------------------------------------------------------------------- */

size_t floe_s3_credprov_trim_len(const char *s, size_t n)
{
	while (n > 0 &&
	       (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

bool floe_s3_credprov_header_safe(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return n > 0;
}

int floe_s3_credprov_read_token(struct floe_s3_credprov *p, const char *path, char **out)
{
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(p->alloc, path, TOKEN_FILE_MAX, &data, &len);
	if (rc)
		return rc;
	size_t n = floe_s3_credprov_trim_len(data, len);
	rc = -EINVAL;
	if (floe_s3_credprov_header_safe(data, n)) {
		*out = floe_strndup(p->alloc, data, n);
		rc = *out ? 0 : FLOE_ENOMEM;
	}
	floe_wipe_free(p->alloc, data);
	return rc;
}

/* ---- HTTP ---------------------------------------------------------------------------- */

static bool stopped(const void *limits)
{
	return floe_s3_limits_stopped(limits);
}

int floe_s3_credprov_http(struct floe_s3_credprov *p, const char *method, const char *url,
			  const char *const *headers, const char *body, bool metadata, int *status,
			  struct floe_http_resp *r, struct floe_err *neterr)
{
	if (floe_s3_limits_stopped(&p->limits))
		return FLOE_S3_ESTOPPED;
	struct floe_http_req rq = {
	    .method = method,
	    .url = url,
	    .headers = headers,
	    .body = body,
	    .body_len = body ? strlen(body) : 0,
	    .connect_ms = metadata ? p->md_connect_ms : p->sts_connect_ms,
	    .timeout_ms = metadata ? p->md_timeout_ms : p->sts_timeout_ms,
	    .no_proxy = metadata, /* link-local agents are never proxied */
	    .ca_file = p->ca_file,
	    .max = RESP_MAX,
	    .stopped = stopped,
	    .stop_ctx = &p->limits,
	};
	char why[CURL_ERROR_SIZE + 64] = "";
	int net = floe_http_run(p->http, &rq, r, why, sizeof(why));
	*status = r->status;
	if (net == -ECANCELED)
		return FLOE_S3_ESTOPPED;
	if (net < 0)
		return net;
	if (net == FLOE_HTTP_ANSWERED)
		return NET_OK;
	floe_s3_credprov_why(neterr, "%s", why);
	return net == FLOE_HTTP_UNREACHABLE || r->timed_out ? NET_UNREACHABLE : NET_FAILED;
}

int floe_s3_credprov_answer_rc(int net, int status, const char *url,
			       const struct floe_err *neterr, struct floe_err *why)
{
	if (net < 0)
		return net;
	if (net != NET_OK) {
		floe_s3_credprov_why(why, "%s: %s", url, neterr->msg);
		return FLOE_S3_EUNAVAILABLE;
	}
	if (status == 200)
		return 0;
	floe_s3_credprov_why(why, "%s answered %d", url, status);
	return status >= 500 || status == 429 ? FLOE_S3_EUNAVAILABLE : -EACCES;
}
