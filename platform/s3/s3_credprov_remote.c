/* The remote AWS credential providers: web identity (STS AssumeRoleWithWebIdentity), the
 * container endpoint (ECS/EKS) and EC2 instance metadata (IMDSv2). The credential
 * documents they answer with are read by formats/aws. Every buffer that held a secret is
 * wiped before free. */
#include "platform/s3/s3_credprov_impl.h"

#include "formats/aws/credentials.h"
#include "formats/aws/xml.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"
#include "platform/s3/s3.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- credentials from documents ------------------------------------------------------ */

/* GETs url and reads credentials from its JSON answer (into r, which the caller frees);
 * a failure's message in why names url. */
static int get_creds(struct floe_s3_credprov *p, const char *url, const char *const *hdrs,
		     struct floe_http_resp *r, struct floe_aws_credentials *c, int64_t *exp, struct floe_err *why)
{
	int status = 0;
	struct floe_err neterr;
	floe_err_clear(&neterr);
	int net = floe_s3_credprov_http(p, "GET", url, hdrs, NULL, true, &status, r, &neterr);
	int rc = floe_s3_credprov_answer_rc(net, status, url, &neterr, why);
	if (rc)
		return rc;
	struct floe_err e;
	floe_err_clear(&e);
	rc = floe_aws_cred_json(p->alloc, r->data ? r->data : "", r->len, c, exp, &e);
	if (rc == FLOE_ENOMEM)
		return rc;
	if (rc) {
		floe_s3_credprov_why(why, "%s: %s", url, e.msg);
		return -EINVAL;
	}
	return 0;
}

/* ---- web identity (STS) -------------------------------------------------------------- */

/* "Code: Message" of an STS or S3 error document into why. */
static void xml_error(const struct floe_http_resp *r, struct floe_err *why)
{
	char code[64] = "", msg[256] = "";
	const char *d = r->data ? r->data : "";
	if (floe_aws_xml_find(r->alloc, d, r->len, "Code", code, sizeof(code), NULL) != 0)
		code[0] = '\0';
	if (floe_aws_xml_find(r->alloc, d, r->len, "Message", msg, sizeof(msg), NULL) != 0)
		msg[0] = '\0';
	if (code[0])
		floe_s3_credprov_why(why, " (%s%s%s)", code, msg[0] ? ": " : "", msg);
}

static bool dns_label_chars(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

/* The STS endpoint's URL into url[0..cap): AWS_ENDPOINT_URL_STS (with a '/' path when it
 * has none), else the regional endpoint. */
static int sts_url(struct floe_s3_credprov *p, char *url, size_t cap, struct floe_err *why)
{
	const char *ep = floe_s3_credprov_opt_env(p->sts_endpoint, "AWS_ENDPOINT_URL_STS");
	if (ep) {
		size_t el = strlen(ep);
		bool has_path = strchr(strstr(ep, "://") ? strstr(ep, "://") + 3 : ep, '/') != NULL;
		if (snprintf(url, cap, "%s%s", ep, has_path || el == 0 ? "" : "/") >= (int)cap) {
			floe_s3_credprov_why(why, "STS endpoint too long");
			return -EINVAL;
		}
		return 0;
	}
	const char *region = floe_s3_credprov_opt_env(p->sts_region, "AWS_REGION");
	if (!region)
		region = floe_s3_credprov_opt_env(NULL, "AWS_DEFAULT_REGION");
	if (!region)
		region = "us-east-1";
	if (!dns_label_chars(region) || strlen(region) > 64) {
		floe_s3_credprov_why(why, "bad region for STS");
		return -EINVAL;
	}
	snprintf(url, cap, "https://sts.%s.amazonaws.com/", region);
	return 0;
}

/* The form body of AssumeRoleWithWebIdentity (owned; it holds the token: wipe it). */
static int sts_body(struct floe_s3_credprov *p, const char *arn, const char *session,
		    const char *token, char **out)
{
	int rc = FLOE_ENOMEM;
	char *e_arn = curl_easy_escape(NULL, arn, 0);
	char *e_sn = curl_easy_escape(NULL, session, 0);
	char *e_tok = curl_easy_escape(NULL, token, 0);
	if (!e_arn || !e_sn || !e_tok)
		goto out;
	static const char head[] = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=";
	size_t blen = sizeof(head) + strlen(e_arn) + strlen(e_sn) + strlen(e_tok) + 64;
	if (!(*out = floe_malloc(p->alloc, blen)))
		goto out;
	snprintf(*out, blen, "%s%s&RoleSessionName=%s&WebIdentityToken=%s", head, e_arn, e_sn,
		 e_tok);
	rc = 0;
out:
	if (e_tok) {
		floe_wipe(e_tok, strlen(e_tok));
		curl_free(e_tok);
	}
	curl_free(e_arn);
	curl_free(e_sn);
	return rc;
}

/* Posts body to STS at url and reads the credentials of its answer. */
static int sts_call(struct floe_s3_credprov *p, const char *url, const char *body,
		    struct floe_aws_credentials *c, int64_t *exp, struct floe_err *why)
{
	static const char *const hdrs[] = {
	    "Content-Type: application/x-www-form-urlencoded; charset=utf-8",
	    "Accept: application/xml", NULL};
	struct floe_http_resp r = {0};
	int status = 0, rc;
	struct floe_err neterr;
	floe_err_clear(&neterr);
	int net = floe_s3_credprov_http(p, "POST", url, hdrs, body, false, &status, &r, &neterr);
	if (net < 0) {
		rc = net;
	} else if (net != NET_OK) {
		floe_s3_credprov_why(why, "%s: %s", url, neterr.msg);
		rc = FLOE_S3_EUNAVAILABLE;
	} else if (status != 200) {
		floe_s3_credprov_why(why, "%s answered %d", url, status);
		xml_error(&r, why);
		char code[64] = "";
		(void)floe_aws_xml_find(p->alloc, r.data ? r.data : "", r.len, "Code", code,
					sizeof(code), NULL);
		rc = status >= 500 || status == 429 || strcmp(code, "IDPCommunicationError") == 0 ||
			     strcmp(code, "Throttling") == 0
			 ? FLOE_S3_EUNAVAILABLE
			 : -EACCES;
	} else {
		struct floe_err e;
		floe_err_clear(&e);
		rc = floe_aws_cred_sts(p->alloc, r.data ? r.data : "", r.len, c, exp, &e);
		if (rc && rc != FLOE_ENOMEM) {
			floe_s3_credprov_why(why, "%s: %s", url, e.msg);
			rc = -EINVAL;
		}
	}
	floe_http_resp_fini(&r);
	return rc;
}

int floe_s3_credprov_web_identity(struct floe_s3_credprov *p, int64_t now,
				  struct floe_aws_credentials *c, int64_t *exp, struct floe_err *why)
{
	const char *tf = floe_s3_credprov_opt_env(p->wi_token_file, "AWS_WEB_IDENTITY_TOKEN_FILE");
	const char *arn = floe_s3_credprov_opt_env(p->role_arn, "AWS_ROLE_ARN");
	if (!tf && !arn) {
		floe_s3_credprov_why(why,
				     "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not set");
		return SKIPPED;
	}
	if (!tf || !arn) {
		floe_s3_credprov_why(why, "%s is not set",
				     tf ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE");
		return -EINVAL;
	}
	char session[80], url[512];
	const char *sn = floe_s3_credprov_opt_env(p->role_session_name, "AWS_ROLE_SESSION_NAME");
	if (!sn) {
		snprintf(session, sizeof(session), "floe-%lld", (long long)now);
		sn = session;
	}
	int rc = sts_url(p, url, sizeof(url), why);
	if (rc)
		return rc;
	char *token = NULL, *body = NULL;
	if ((rc = floe_s3_credprov_read_token(p, tf, &token)) != 0) {
		floe_s3_credprov_why(why, "%s: %s", tf,
				     rc == -EINVAL ? "empty or not a token" : floe_strerror(rc));
		return rc == FLOE_ENOMEM ? rc : -EINVAL;
	}
	if ((rc = sts_body(p, arn, sn, token, &body)) == 0)
		rc = sts_call(p, url, body, c, exp, why);
	floe_wipe_free(p->alloc, body);
	floe_wipe_free(p->alloc, token);
	return rc;
}

/* http:// full URIs must stay on this host or go to the ECS/EKS agents (as the SDKs
 * require), so that a planted variable cannot send our token elsewhere in clear. */
static bool container_uri_ok(const char *u)
{
	if (strncasecmp(u, "https://", 8) == 0)
		return true;
	if (strncasecmp(u, "http://", 7) != 0)
		return false;
	const char *h = u + 7;
	size_t hl;
	if (*h == '[') {
		const char *e = strchr(h, ']');
		if (!e)
			return false;
		hl = (size_t)(e - h) + 1;
	} else {
		hl = strcspn(h, ":/?#");
	}
	static const char *const ok[] = {"localhost", "[::1]", "169.254.170.2", "169.254.170.23",
					 "[fd00:ec2::23]"};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (hl == strlen(ok[i]) && strncasecmp(h, ok[i], hl) == 0)
			return true;
	/* 127.0.0.0/8 */
	if (hl > 4 && memcmp(h, "127.", 4) == 0) {
		for (size_t i = 4; i < hl; i++)
			if (!((h[i] >= '0' && h[i] <= '9') || h[i] == '.'))
				return false;
		return true;
	}
	return false;
}

int floe_s3_credprov_container(struct floe_s3_credprov *p, int64_t now,
			       struct floe_aws_credentials *c, int64_t *exp, struct floe_err *why)
{
	(void)now;
	const char *rel =
	    floe_s3_credprov_opt_env(p->c_rel, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full =
	    floe_s3_credprov_opt_env(p->c_full, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	if (!rel && !full) {
		floe_s3_credprov_why(
		    why, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI are not set");
		return SKIPPED;
	}
	char url[2048];
	if (rel) {
		const char *host = p->c_host ? p->c_host : "http://169.254.170.2";
		if (snprintf(url, sizeof(url), "%s%s%s", host, rel[0] == '/' ? "" : "/", rel) >=
		    (int)sizeof(url)) {
			floe_s3_credprov_why(why, "relative URI too long");
			return -EINVAL;
		}
	} else {
		if (strlen(full) >= sizeof(url) || !container_uri_ok(full)) {
			floe_s3_credprov_why(
			    why, "%s: not https, nor http to a loopback or ECS/EKS agent address",
			    full);
			return -EINVAL;
		}
		snprintf(url, sizeof(url), "%s", full);
	}
	char *token = NULL, *auth = NULL;
	const char *tfile =
	    floe_s3_credprov_opt_env(p->c_token_file, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tval =
	    floe_s3_credprov_opt_env(p->c_token, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	int rc = 0;
	if (tfile) {
		rc = floe_s3_credprov_read_token(p, tfile, &token);
		if (rc) {
			floe_s3_credprov_why(why, "%s: %s", tfile,
					     rc == -EINVAL ? "empty or not a header value"
							   : floe_strerror(rc));
			return rc == FLOE_ENOMEM ? rc : -EINVAL;
		}
	} else if (tval) {
		if (!floe_s3_credprov_header_safe(tval, strlen(tval))) {
			floe_s3_credprov_why(
			    why, "AWS_CONTAINER_AUTHORIZATION_TOKEN is not a header value");
			return -EINVAL;
		}
		if (!(token = floe_strdup(p->alloc, tval)))
			return FLOE_ENOMEM;
	}
	struct floe_http_resp r = {0};
	const char *hdrs[3] = {"Accept: application/json", NULL, NULL};
	if (token) {
		size_t n = strlen(token) + sizeof("Authorization: ");
		if (!(auth = floe_malloc(p->alloc, n))) {
			rc = FLOE_ENOMEM;
			goto out;
		}
		snprintf(auth, n, "Authorization: %s", token);
		hdrs[1] = auth;
	}
	rc = get_creds(p, url, hdrs, &r, c, exp, why);
out:
	floe_http_resp_fini(&r);
	floe_wipe_free(p->alloc, auth);
	floe_wipe_free(p->alloc, token);
	return rc;
}

int floe_s3_credprov_imds(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
			  int64_t *exp, struct floe_err *why)
{
	(void)now;
	const char *dis = getenv("AWS_EC2_METADATA_DISABLED");
	if (p->imds_disabled || (dis && strcasecmp(dis, "true") == 0)) {
		floe_s3_credprov_why(why, "disabled by AWS_EC2_METADATA_DISABLED");
		return SKIPPED;
	}
	const char *ep =
	    floe_s3_credprov_opt_env(p->imds_endpoint, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (!ep)
		ep = "http://169.254.169.254";
	size_t el = strlen(ep);
	while (el > 0 && ep[el - 1] == '/')
		el--;
	if (el > 512) {
		floe_s3_credprov_why(why, "endpoint too long");
		return -EINVAL;
	}
	char url[1024], tokhdr[1200];
	struct floe_http_resp r = {0};
	int status = 0, rc = 0, net;
	struct floe_err neterr;
	floe_err_clear(&neterr);
	static const char *const put_hdrs[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600", NULL};
	snprintf(url, sizeof(url), "%.*s/latest/api/token", (int)el, ep);
	net = floe_s3_credprov_http(p, "PUT", url, put_hdrs, "", true, &status, &r, &neterr);
	if (net < 0)
		return net;
	if (net == NET_UNREACHABLE) {
		/* Most hosts are not EC2 instances: no answer means no IMDS. */
		floe_s3_credprov_why(why, "%s: no instance metadata service (%s)", url, neterr.msg);
		return SKIPPED;
	}
	if ((rc = floe_s3_credprov_answer_rc(net, status, url, &neterr, why)) != 0)
		goto out;
	size_t tl = floe_s3_credprov_trim_len(r.data ? r.data : "", r.len);
	if (tl > 1024 || !floe_s3_credprov_header_safe(r.data, tl)) {
		floe_s3_credprov_why(why, "%s: not a token", url);
		rc = -EINVAL;
		goto out;
	}
	snprintf(tokhdr, sizeof(tokhdr), "X-aws-ec2-metadata-token: %.*s", (int)tl, r.data);
	floe_http_resp_fini(&r);
	const char *get_hdrs[] = {tokhdr, NULL};

	snprintf(url, sizeof(url), "%.*s/latest/meta-data/iam/security-credentials/", (int)el, ep);
	net = floe_s3_credprov_http(p, "GET", url, get_hdrs, NULL, true, &status, &r, &neterr);
	if (net == NET_OK && status == 404) {
		floe_s3_credprov_why(why, "no IAM role is attached to this instance");
		rc = -ENOENT;
		goto out;
	}
	if ((rc = floe_s3_credprov_answer_rc(net, status, url, &neterr, why)) != 0)
		goto out;
	/* The first line names the role. */
	const char *d = r.data ? r.data : "";
	size_t rl = strcspn(d, "\r\n");
	rl = floe_s3_credprov_trim_len(d, rl);
	bool role_ok = rl > 0 && rl <= 128 && memchr(d, '\0', r.len) == NULL;
	for (size_t i = 0; role_ok && i < rl; i++)
		role_ok = (unsigned char)d[i] > 0x20 && d[i] != '/' && d[i] != '?' && d[i] != '#' &&
			  d[i] != '%' && d[i] != 0x7f;
	if (!role_ok) {
		floe_s3_credprov_why(why, "%s: not a role name", url);
		rc = -EINVAL;
		goto out;
	}
	snprintf(url, sizeof(url), "%.*s/latest/meta-data/iam/security-credentials/%.*s", (int)el,
		 ep, (int)rl, d);
	floe_http_resp_fini(&r);
	rc = get_creds(p, url, get_hdrs, &r, c, exp, why);
out:
	floe_wipe(tokhdr, sizeof(tokhdr));
	floe_http_resp_fini(&r);
	return rc;
}
