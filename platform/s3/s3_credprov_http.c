/* The remote credential providers' HTTP helper, on a curl easy handle of the provider's
 * own (bounded answers, short timeouts and no proxy for the metadata endpoints), and the
 * reading of tokens that go into request headers. Every buffer that held a secret is wiped
 * before free. */
#include "platform/s3/s3_credprov_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include "platform/fs.h"
#include "platform/s3/s3.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
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

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	struct resp *r = ud;
	size_t n = size * nmemb;
	if (n > RESP_MAX - r->len) {
		r->too_big = true;
		return 0;
	}
	/* A new block rather than a realloc: copies of secrets must not linger in freed
	 * memory, and realloc would free the old block unwiped. */
	char *d = floe_malloc(r->alloc, r->len + n + 1);
	if (!d)
		return 0;
	if (r->len)
		memcpy(d, r->data, r->len);
	memcpy(d + r->len, src, n);
	d[r->len + n] = '\0';
	floe_wipe_free(r->alloc, r->data);
	r->data = d;
	r->len += n;
	return n;
}

void floe_s3_credprov_resp_fini(struct resp *r)
{
	floe_wipe_free(r->alloc, r->data);
	memset(r, 0, sizeof(*r));
}

/* Cuts a request in flight once the stop grace has passed. curl calls this at least once
 * a second, also while nothing moves. */
static int progress_cb(void *ud, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	return floe_s3_limits_stopped(ud) ? 1 : 0;
}

static long clamp_long(int64_t v)
{
	return v > LONG_MAX ? LONG_MAX : v < 0 ? 0 : (long)v;
}

int floe_s3_credprov_http(struct floe_s3_credprov *p, const char *method, const char *url,
			  const char *const *headers, const char *body, bool metadata, int *status,
			  struct resp *r, struct floe_err *neterr)
{
	struct curl_slist *hl = NULL;
	if (floe_s3_limits_stopped(&p->limits))
		return FLOE_S3_ESTOPPED;
	if (!r->data)
		r->alloc = p->alloc;
	for (size_t i = 0; headers && headers[i]; i++) {
		struct curl_slist *n = curl_slist_append(hl, headers[i]);
		if (!n) {
			curl_slist_free_all(hl);
			return FLOE_ENOMEM;
		}
		hl = n;
	}
	/* curl adds "Expect: 100-continue" to large POSTs; these bodies are small. */
	struct curl_slist *n = curl_slist_append(hl, "Expect:");
	if (!n) {
		curl_slist_free_all(hl);
		return FLOE_ENOMEM;
	}
	hl = n;
	CURL *c = p->curl;
	char errbuf[CURL_ERROR_SIZE] = "";
	curl_easy_reset(c);
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	curl_easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (p->ca_file)
		curl_easy_setopt(c, CURLOPT_CAINFO, p->ca_file);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS,
			 clamp_long(metadata ? p->md_connect_ms : p->sts_connect_ms));
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS,
			 clamp_long(metadata ? p->md_timeout_ms : p->sts_timeout_ms));
	if (metadata)
		curl_easy_setopt(c, CURLOPT_PROXY, ""); /* link-local agents are never proxied */
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, r);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(c, CURLOPT_XFERINFODATA, (void *)&p->limits);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	if (strcmp(method, body ? "POST" : "GET") != 0)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	CURLcode cc = curl_easy_perform(c);
	long st = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &st);
	/* The request may have carried a secret in a header or the body: curl keeps no copy
	 * after perform, but our list does. */
	for (struct curl_slist *h = hl; h; h = h->next)
		floe_wipe(h->data, strlen(h->data));
	curl_slist_free_all(hl);
	curl_easy_reset(c);
	*status = (int)st;
	if (cc == CURLE_OK)
		return NET_OK;
	if (cc == CURLE_ABORTED_BY_CALLBACK)
		return FLOE_S3_ESTOPPED;
	if (cc == CURLE_WRITE_ERROR && !r->too_big)
		return FLOE_ENOMEM;
	if (r->too_big) {
		floe_s3_credprov_why(neterr, "answer over %d bytes", RESP_MAX);
		return NET_FAILED;
	}
	floe_s3_credprov_why(neterr, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
	if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_OPERATION_TIMEDOUT ||
	    cc == CURLE_COULDNT_RESOLVE_HOST)
		return NET_UNREACHABLE;
	return NET_FAILED;
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
