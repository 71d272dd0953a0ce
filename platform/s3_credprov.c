/* The AWS credential provider chain (see s3_credprov.h): the six providers, the cache
 * with its refresh margin, and a small HTTP helper on a curl easy handle of its own for
 * STS and the metadata endpoints. Every buffer that held a secret is wiped before free. */
#include "platform/s3_credprov.h"

#include "platform/fs.h"
#include "platform/s3.h"
#include "platform/s3_cred_json.h"
#include "platform/s3_xml.h"

#include <curl/curl.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define RESP_MAX (64 * 1024)	   /* credential documents are small */
#define TOKEN_FILE_MAX (64 * 1024) /* a web identity JWT or a container token */
#define FIELD_MAX 8192		   /* session tokens run to a few KiB */
#define ERR_MAX 2048

/* What a provider's attempt came to, beyond 0 = credentials. */
enum { SKIPPED = 1 }; /* not configured here: tried nothing */

struct floe_s3_credprov {
	pthread_mutex_t mu;
	int refs;
	unsigned providers;
	struct floe_s3_credentials stat;
	char *shared_file, *profile;
	char *wi_token_file, *role_arn, *role_session_name, *sts_endpoint, *sts_region;
	char *c_full, *c_rel, *c_host, *c_token, *c_token_file;
	char *imds_endpoint;
	bool imds_disabled;
	char *ca_file;
	int64_t md_connect_ms, md_timeout_ms, sts_connect_ms, sts_timeout_ms, margin;
	CURL *curl;
	/* The cache. */
	struct floe_s3_credentials cur;
	bool have;
	int64_t expiration, refresh_at; /* 0: never */
	int source;			/* index into providers[] below, -1 none */
	char err[ERR_MAX];
};

/* ---- small helpers ------------------------------------------------------------------- */

static void wipe(void *p, size_t n)
{
	volatile unsigned char *v = p;
	for (size_t i = 0; i < n; i++)
		v[i] = 0;
}

static void wipe_str_free(char *s)
{
	if (s) {
		wipe(s, strlen(s));
		free(s);
	}
}

static int dup_opt(char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = strdup(src);
	return *dst ? 0 : -ENOMEM;
}

/* The option if given, else the environment variable if set and not empty. */
static const char *opt_env(const char *o, const char *env)
{
	if (o)
		return *o ? o : NULL;
	const char *v = getenv(env);
	return v && *v ? v : NULL;
}

/* Appends printf text to the error report (truncating). */
__attribute__((format(printf, 2, 3))) static void why(char *buf, const char *fmt, ...)
{
	size_t len = strlen(buf);
	if (len + 1 >= ERR_MAX)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + len, ERR_MAX - len, fmt, ap);
	va_end(ap);
}

/* Trailing whitespace and newlines off a token read from a file. */
static size_t trim_len(const char *s, size_t n)
{
	while (n > 0 &&
	       (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	return n;
}

/* A token fit for an HTTP header: printable, no CR/LF. */
static bool header_safe(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return false;
	return n > 0;
}

/* Reads a token file into a new NUL-terminated string (trailing newline dropped). */
static int read_token(const char *path, char **out)
{
	void *data = NULL;
	size_t len = 0;
	int rc = floe_fs_read_file(path, TOKEN_FILE_MAX, &data, &len);
	if (rc)
		return rc;
	size_t n = trim_len(data, len);
	rc = -EINVAL;
	if (header_safe(data, n)) {
		*out = malloc(n + 1);
		rc = *out ? 0 : -ENOMEM;
		if (*out) {
			memcpy(*out, data, n);
			(*out)[n] = '\0';
		}
	}
	wipe(data, len);
	floe_fs_free(data);
	return rc;
}

/* ---- HTTP ---------------------------------------------------------------------------- */

struct resp {
	char *data;
	size_t len;
	bool too_big;
};

static size_t write_cb(char *src, size_t size, size_t nmemb, void *ud)
{
	struct resp *r = ud;
	size_t n = size * nmemb;
	if (n > RESP_MAX - r->len) {
		r->too_big = true;
		return 0;
	}
	char *d = malloc(r->len + n + 1);
	if (!d)
		return 0;
	if (r->len)
		memcpy(d, r->data, r->len);
	memcpy(d + r->len, src, n);
	d[r->len + n] = '\0';
	if (r->data) {
		wipe(r->data, r->len); /* copies of secrets must not linger in freed memory */
		free(r->data);
	}
	r->data = d;
	r->len += n;
	return n;
}

static void resp_fini(struct resp *r)
{
	if (r->data) {
		wipe(r->data, r->len);
		free(r->data);
	}
	memset(r, 0, sizeof(*r));
}

static long clamp_long(int64_t v)
{
	return v > LONG_MAX ? LONG_MAX : v < 0 ? 0 : (long)v;
}

enum net { NET_OK, NET_UNREACHABLE, NET_FAILED };

/* One request: method on url with headers (NULL-terminated "Name: value" lines, which may
 * hold secrets: curl copies them into its request, we wipe ours) and an optional body.
 * metadata: short timeouts and no proxy. *status gets the HTTP status. Returns NET_OK
 * when an answer arrived, else NET_UNREACHABLE (connect failed or timed out) or
 * NET_FAILED (other transport error; the reason is appended to err). -ENOMEM. */
static int http(struct floe_s3_credprov *p, const char *method, const char *url,
		const char *const *headers, const char *body, bool metadata, int *status,
		struct resp *r, char *err)
{
	struct curl_slist *hl = NULL;
	for (size_t i = 0; headers && headers[i]; i++) {
		struct curl_slist *n = curl_slist_append(hl, headers[i]);
		if (!n) {
			curl_slist_free_all(hl);
			return -ENOMEM;
		}
		hl = n;
	}
	/* curl adds "Expect: 100-continue" to large POSTs; these bodies are small. */
	struct curl_slist *n = curl_slist_append(hl, "Expect:");
	if (!n) {
		curl_slist_free_all(hl);
		return -ENOMEM;
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
		wipe(h->data, strlen(h->data));
	curl_slist_free_all(hl);
	curl_easy_reset(c);
	*status = (int)st;
	if (cc == CURLE_OK)
		return NET_OK;
	if (cc == CURLE_WRITE_ERROR && !r->too_big)
		return -ENOMEM;
	if (r->too_big) {
		why(err, "answer over %d bytes", RESP_MAX);
		return NET_FAILED;
	}
	why(err, "%s", errbuf[0] ? errbuf : curl_easy_strerror(cc));
	if (cc == CURLE_COULDNT_CONNECT || cc == CURLE_OPERATION_TIMEDOUT ||
	    cc == CURLE_COULDNT_RESOLVE_HOST)
		return NET_UNREACHABLE;
	return NET_FAILED;
}

/* The outcome of http() as a provider's result: 0 for a 200 answer, else the reason is
 * appended to err and a transport failure, 5xx or 429 is FLOE_S3_EUNAVAILABLE (may pass),
 * another status -EACCES. */
static int answer_rc(int net, int status, const char *url, const char *neterr, char *err)
{
	if (net < 0)
		return net;
	if (net != NET_OK) {
		why(err, "%s: %s", url, neterr);
		return FLOE_S3_EUNAVAILABLE;
	}
	if (status == 200)
		return 0;
	why(err, "%s answered %d", url, status);
	return status >= 500 || status == 429 ? FLOE_S3_EUNAVAILABLE : -EACCES;
}

/* ---- credentials from documents ------------------------------------------------------ */

/* Fills c from four texts; keys must be non-empty, the token may be empty. */
static int make_creds(const char *ak, const char *sk, const char *tok,
		      struct floe_s3_credentials *c)
{
	memset(c, 0, sizeof(*c));
	c->access_key_id = strdup(ak);
	c->secret_access_key = strdup(sk);
	c->session_token = *tok ? strdup(tok) : NULL;
	if (!c->access_key_id || !c->secret_access_key || (*tok && !c->session_token)) {
		floe_s3_credentials_fini(c);
		return -ENOMEM;
	}
	return 0;
}

struct fields {
	char ak[256], sk[256], tok[FIELD_MAX], exp[64], code[64];
};

static void fields_free(struct fields *f)
{
	if (f) {
		wipe(f, sizeof(*f));
		free(f);
	}
}

/* Credentials from a container or IMDS JSON answer. Returns 0 or -EINVAL (why in err). */
static int from_json(const struct resp *r, struct floe_s3_credentials *c, int64_t *exp, char *err)
{
	struct fields *f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	const char *d = r->data ? r->data : "";
	size_t off = 0;
	int rc = floe_s3_cred_json_string(d, r->len, "AccessKeyId", f->ak, sizeof(f->ak), &off);
	if (rc == FLOE_S3_EPROTO) {
		why(err, "malformed JSON answer at byte %zu", off);
		rc = -EINVAL;
		goto out;
	}
	/* IMDS says whether the document holds credentials; the container agent does not. */
	if (floe_s3_cred_json_string(d, r->len, "Code", f->code, sizeof(f->code), NULL) == 0 &&
	    strcmp(f->code, "Success") != 0) {
		why(err, "answer has Code %s", f->code);
		rc = -EINVAL;
		goto out;
	}
	if (rc == 0)
		rc = floe_s3_cred_json_string(d, r->len, "SecretAccessKey", f->sk, sizeof(f->sk),
					      NULL);
	if (rc == 0 && !f->ak[0])
		rc = -ENOENT;
	if (rc == 0 && !f->sk[0])
		rc = -ENOENT;
	if (rc) {
		why(err, "answer lacks a usable AccessKeyId/SecretAccessKey");
		rc = -EINVAL;
		goto out;
	}
	rc = floe_s3_cred_json_string(d, r->len, "Token", f->tok, sizeof(f->tok), NULL);
	if (rc == -ENOENT)
		f->tok[0] = '\0';
	else if (rc) {
		why(err, "answer has an unusable Token");
		rc = -EINVAL;
		goto out;
	}
	*exp = 0;
	rc = floe_s3_cred_json_string(d, r->len, "Expiration", f->exp, sizeof(f->exp), NULL);
	if (rc == 0 && floe_s3_cred_parse_time(f->exp, strlen(f->exp), exp) != 0) {
		why(err, "answer has a bad Expiration");
		rc = -EINVAL;
		goto out;
	}
	if (rc != 0 && rc != -ENOENT) {
		why(err, "answer has an unusable Expiration");
		rc = -EINVAL;
		goto out;
	}
	rc = make_creds(f->ak, f->sk, f->tok, c);
out:
	fields_free(f);
	return rc;
}

/* ---- the providers ------------------------------------------------------------------- */

/* Each returns 0 with *c and *exp filled, SKIPPED (not configured; reason in err),
 * FLOE_S3_EUNAVAILABLE (a configured remote could not answer now), another negative
 * error (reason in err), or -ENOMEM. */
typedef int (*provider_fn)(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
			   int64_t *exp, char *err);

static int prov_static(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
		       int64_t *exp, char *err)
{
	(void)now;
	if (!p->stat.access_key_id) {
		why(err, "not configured");
		return SKIPPED;
	}
	*exp = 0;
	return make_creds(p->stat.access_key_id, p->stat.secret_access_key,
			  p->stat.session_token ? p->stat.session_token : "", c);
}

static int prov_env(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
		    int64_t *exp, char *err)
{
	(void)p;
	(void)now;
	int rc = floe_s3_credentials_from_env(c);
	if (rc == -ENOENT) {
		why(err, "AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set");
		return SKIPPED;
	}
	*exp = 0;
	return rc;
}

static int prov_shared(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
		       int64_t *exp, char *err)
{
	(void)now;
	const char *path = opt_env(p->shared_file, "AWS_SHARED_CREDENTIALS_FILE");
	const char *profile = opt_env(p->profile, "AWS_PROFILE");
	int rc = floe_s3_credentials_from_shared_file(path, profile, c);
	if (rc == 0) {
		*exp = 0;
		return 0;
	}
	const char *shown = path ? path : "~/.aws/credentials";
	if (rc == -ENOENT) {
		why(err, "%s: no such file, or no profile [%s] with both keys", shown,
		    profile ? profile : "default");
		/* A file that exists but lacks the profile is a configuration the user made:
		 * still not an error of the chain, as in the SDKs. */
		return SKIPPED;
	}
	why(err, "%s: %s", shown, rc == -EINVAL ? "syntax error" : strerror(-rc));
	return rc == -ENOMEM ? rc : -EINVAL;
}

/* "Code: Message" of an STS or S3 error document into err. */
static void xml_error(const struct resp *r, char *err)
{
	char code[64] = "", msg[256] = "";
	const char *d = r->data ? r->data : "";
	if (floe_s3_xml_find(d, r->len, "Code", code, sizeof(code)) != 0)
		code[0] = '\0';
	if (floe_s3_xml_find(d, r->len, "Message", msg, sizeof(msg)) != 0)
		msg[0] = '\0';
	if (code[0])
		why(err, " (%s%s%s)", code, msg[0] ? ": " : "", msg);
}

static bool dns_label_chars(const char *s)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '-'))
			return false;
	return true;
}

static int prov_web_identity(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
			     int64_t *exp, char *err)
{
	const char *tf = opt_env(p->wi_token_file, "AWS_WEB_IDENTITY_TOKEN_FILE");
	const char *arn = opt_env(p->role_arn, "AWS_ROLE_ARN");
	if (!tf && !arn) {
		why(err, "AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are not set");
		return SKIPPED;
	}
	if (!tf || !arn) {
		why(err, "%s is not set", tf ? "AWS_ROLE_ARN" : "AWS_WEB_IDENTITY_TOKEN_FILE");
		return -EINVAL;
	}
	char session[80], url[512];
	const char *sn = opt_env(p->role_session_name, "AWS_ROLE_SESSION_NAME");
	if (!sn) {
		snprintf(session, sizeof(session), "floe-%lld", (long long)now);
		sn = session;
	}
	const char *ep = opt_env(p->sts_endpoint, "AWS_ENDPOINT_URL_STS");
	if (ep) {
		size_t el = strlen(ep);
		bool has_path = strchr(strstr(ep, "://") ? strstr(ep, "://") + 3 : ep, '/') != NULL;
		if (snprintf(url, sizeof(url), "%s%s", ep, has_path || el == 0 ? "" : "/") >=
		    (int)sizeof(url)) {
			why(err, "STS endpoint too long");
			return -EINVAL;
		}
	} else {
		const char *region = opt_env(p->sts_region, "AWS_REGION");
		if (!region)
			region = opt_env(NULL, "AWS_DEFAULT_REGION");
		if (!region)
			region = "us-east-1";
		if (!dns_label_chars(region) || strlen(region) > 64) {
			why(err, "bad region for STS");
			return -EINVAL;
		}
		snprintf(url, sizeof(url), "https://sts.%s.amazonaws.com/", region);
	}
	char *token = NULL, *e_arn = NULL, *e_sn = NULL, *e_tok = NULL, *body = NULL;
	struct resp r = {0};
	struct fields *f = NULL;
	int rc = read_token(tf, &token);
	if (rc) {
		why(err, "%s: %s", tf, rc == -EINVAL ? "empty or not a token" : strerror(-rc));
		return rc == -ENOMEM ? rc : -EINVAL;
	}
	rc = -ENOMEM;
	e_arn = curl_easy_escape(p->curl, arn, 0);
	e_sn = curl_easy_escape(p->curl, sn, 0);
	e_tok = curl_easy_escape(p->curl, token, 0);
	if (!e_arn || !e_sn || !e_tok)
		goto out;
	static const char head[] = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=";
	size_t blen = sizeof(head) + strlen(e_arn) + strlen(e_sn) + strlen(e_tok) + 64;
	if (!(body = malloc(blen)))
		goto out;
	snprintf(body, blen, "%s%s&RoleSessionName=%s&WebIdentityToken=%s", head, e_arn, e_sn,
		 e_tok);
	static const char *const hdrs[] = {
	    "Content-Type: application/x-www-form-urlencoded; charset=utf-8",
	    "Accept: application/xml", NULL};
	int status = 0;
	char neterr[ERR_MAX] = "";
	int net = http(p, "POST", url, hdrs, body, false, &status, &r, neterr);
	if (net < 0) {
		rc = net;
		goto out;
	}
	if (net != NET_OK) {
		why(err, "%s: %s", url, neterr);
		rc = FLOE_S3_EUNAVAILABLE;
		goto out;
	}
	if (status != 200) {
		why(err, "%s answered %d", url, status);
		xml_error(&r, err);
		char code[64] = "";
		(void)floe_s3_xml_find(r.data ? r.data : "", r.len, "Code", code, sizeof(code));
		rc = status >= 500 || status == 429 || strcmp(code, "IDPCommunicationError") == 0 ||
			     strcmp(code, "Throttling") == 0
			 ? FLOE_S3_EUNAVAILABLE
			 : -EACCES;
		goto out;
	}
	if (!(f = calloc(1, sizeof(*f))))
		goto out;
	const char *d = r.data ? r.data : "";
	if (floe_s3_xml_find(d, r.len, "AccessKeyId", f->ak, sizeof(f->ak)) != 0 ||
	    floe_s3_xml_find(d, r.len, "SecretAccessKey", f->sk, sizeof(f->sk)) != 0 ||
	    floe_s3_xml_find(d, r.len, "SessionToken", f->tok, sizeof(f->tok)) != 0 ||
	    floe_s3_xml_find(d, r.len, "Expiration", f->exp, sizeof(f->exp)) != 0 || !f->ak[0] ||
	    !f->sk[0] || !f->tok[0] || floe_s3_cred_parse_time(f->exp, strlen(f->exp), exp) != 0) {
		why(err,
		    "%s: answer lacks usable Credentials (AccessKeyId, SecretAccessKey, "
		    "SessionToken, Expiration)",
		    url);
		rc = -EINVAL;
		goto out;
	}
	rc = make_creds(f->ak, f->sk, f->tok, c);
out:
	fields_free(f);
	resp_fini(&r);
	if (body) {
		wipe(body, strlen(body));
		free(body);
	}
	if (e_tok) {
		wipe(e_tok, strlen(e_tok));
		curl_free(e_tok);
	}
	curl_free(e_arn);
	curl_free(e_sn);
	wipe_str_free(token);
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

static int prov_container(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
			  int64_t *exp, char *err)
{
	(void)now;
	const char *rel = opt_env(p->c_rel, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI");
	const char *full = opt_env(p->c_full, "AWS_CONTAINER_CREDENTIALS_FULL_URI");
	if (!rel && !full) {
		why(err, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI are not set");
		return SKIPPED;
	}
	char url[2048];
	if (rel) {
		const char *host = p->c_host ? p->c_host : "http://169.254.170.2";
		if (snprintf(url, sizeof(url), "%s%s%s", host, rel[0] == '/' ? "" : "/", rel) >=
		    (int)sizeof(url)) {
			why(err, "relative URI too long");
			return -EINVAL;
		}
	} else {
		if (strlen(full) >= sizeof(url) || !container_uri_ok(full)) {
			why(err, "%s: not https, nor http to a loopback or ECS/EKS agent address",
			    full);
			return -EINVAL;
		}
		snprintf(url, sizeof(url), "%s", full);
	}
	char *token = NULL, *auth = NULL;
	const char *tfile = opt_env(p->c_token_file, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE");
	const char *tval = opt_env(p->c_token, "AWS_CONTAINER_AUTHORIZATION_TOKEN");
	int rc = 0;
	if (tfile) {
		rc = read_token(tfile, &token);
		if (rc) {
			why(err, "%s: %s", tfile,
			    rc == -EINVAL ? "empty or not a header value" : strerror(-rc));
			return rc == -ENOMEM ? rc : -EINVAL;
		}
	} else if (tval) {
		if (!header_safe(tval, strlen(tval))) {
			why(err, "AWS_CONTAINER_AUTHORIZATION_TOKEN is not a header value");
			return -EINVAL;
		}
		if (!(token = strdup(tval)))
			return -ENOMEM;
	}
	struct resp r = {0};
	const char *hdrs[3] = {"Accept: application/json", NULL, NULL};
	if (token) {
		size_t n = strlen(token) + sizeof("Authorization: ");
		if (!(auth = malloc(n))) {
			rc = -ENOMEM;
			goto out;
		}
		snprintf(auth, n, "Authorization: %s", token);
		hdrs[1] = auth;
	}
	int status = 0;
	char neterr[ERR_MAX] = "";
	int net = http(p, "GET", url, hdrs, NULL, true, &status, &r, neterr);
	if ((rc = answer_rc(net, status, url, neterr, err)) != 0)
		goto out;
	size_t mark = strlen(err);
	why(err, "%s: ", url);
	rc = from_json(&r, c, exp, err);
	if (rc == 0)
		err[mark] = '\0';
out:
	resp_fini(&r);
	wipe_str_free(auth);
	wipe_str_free(token);
	return rc;
}

static int prov_imds(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *c,
		     int64_t *exp, char *err)
{
	(void)now;
	const char *dis = getenv("AWS_EC2_METADATA_DISABLED");
	if (p->imds_disabled || (dis && strcasecmp(dis, "true") == 0)) {
		why(err, "disabled by AWS_EC2_METADATA_DISABLED");
		return SKIPPED;
	}
	const char *ep = opt_env(p->imds_endpoint, "AWS_EC2_METADATA_SERVICE_ENDPOINT");
	if (!ep)
		ep = "http://169.254.169.254";
	size_t el = strlen(ep);
	while (el > 0 && ep[el - 1] == '/')
		el--;
	if (el > 512) {
		why(err, "endpoint too long");
		return -EINVAL;
	}
	char url[1024], tokhdr[1200];
	struct resp r = {0};
	int status = 0, rc = 0, net;
	char neterr[ERR_MAX] = "";
	static const char *const put_hdrs[] = {"X-aws-ec2-metadata-token-ttl-seconds: 21600", NULL};
	snprintf(url, sizeof(url), "%.*s/latest/api/token", (int)el, ep);
	net = http(p, "PUT", url, put_hdrs, "", true, &status, &r, neterr);
	if (net < 0)
		return net;
	if (net == NET_UNREACHABLE) {
		/* Most hosts are not EC2 instances: no answer means no IMDS. */
		why(err, "%s: no instance metadata service (%s)", url, neterr);
		return SKIPPED;
	}
	if ((rc = answer_rc(net, status, url, neterr, err)) != 0)
		goto out;
	size_t tl = trim_len(r.data ? r.data : "", r.len);
	if (tl > 1024 || !header_safe(r.data, tl)) {
		why(err, "%s: not a token", url);
		rc = -EINVAL;
		goto out;
	}
	snprintf(tokhdr, sizeof(tokhdr), "X-aws-ec2-metadata-token: %.*s", (int)tl, r.data);
	resp_fini(&r);
	const char *get_hdrs[] = {tokhdr, NULL};

	snprintf(url, sizeof(url), "%.*s/latest/meta-data/iam/security-credentials/", (int)el, ep);
	net = http(p, "GET", url, get_hdrs, NULL, true, &status, &r, neterr);
	if (net == NET_OK && status == 404) {
		why(err, "no IAM role is attached to this instance");
		rc = -ENOENT;
		goto out;
	}
	if ((rc = answer_rc(net, status, url, neterr, err)) != 0)
		goto out;
	/* The first line names the role. */
	const char *d = r.data ? r.data : "";
	size_t rl = strcspn(d, "\r\n");
	rl = trim_len(d, rl);
	bool role_ok = rl > 0 && rl <= 128 && memchr(d, '\0', r.len) == NULL;
	for (size_t i = 0; role_ok && i < rl; i++)
		role_ok = (unsigned char)d[i] > 0x20 && d[i] != '/' && d[i] != '?' && d[i] != '#' &&
			  d[i] != '%' && d[i] != 0x7f;
	if (!role_ok) {
		why(err, "%s: not a role name", url);
		rc = -EINVAL;
		goto out;
	}
	snprintf(url, sizeof(url), "%.*s/latest/meta-data/iam/security-credentials/%.*s", (int)el,
		 ep, (int)rl, d);
	resp_fini(&r);
	net = http(p, "GET", url, get_hdrs, NULL, true, &status, &r, neterr);
	if ((rc = answer_rc(net, status, url, neterr, err)) != 0)
		goto out;
	size_t mark = strlen(err);
	why(err, "%s: ", url);
	rc = from_json(&r, c, exp, err);
	if (rc == 0)
		err[mark] = '\0';
out:
	wipe(tokhdr, sizeof(tokhdr));
	resp_fini(&r);
	return rc;
}

static const struct {
	unsigned bit;
	const char *name;
	provider_fn fn;
} providers[] = {
    {FLOE_S3_CREDPROV_STATIC, "static", prov_static},
    {FLOE_S3_CREDPROV_ENV, "env", prov_env},
    {FLOE_S3_CREDPROV_WEB_IDENTITY, "web-identity", prov_web_identity},
    {FLOE_S3_CREDPROV_SHARED_FILE, "shared-file", prov_shared},
    {FLOE_S3_CREDPROV_CONTAINER, "container", prov_container},
    {FLOE_S3_CREDPROV_IMDS, "imds", prov_imds},
};
#define NPROV (sizeof(providers) / sizeof(providers[0]))

/* ---- the chain ----------------------------------------------------------------------- */

int floe_s3_credprov_new(const struct floe_s3_credprov_options *o, struct floe_s3_credprov **out)
{
	if (!o || !out || (o->providers & ~(unsigned)FLOE_S3_CREDPROV_ALL))
		return -EINVAL;
	const struct floe_s3_credentials *sc = o->static_credentials;
	bool has_static = sc && sc->access_key_id && *sc->access_key_id && sc->secret_access_key &&
			  *sc->secret_access_key;
	if (sc && !has_static && (sc->access_key_id || sc->secret_access_key))
		return -EINVAL; /* one key without the other is a configuration mistake */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	struct floe_s3_credprov *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		free(p);
		return -ENOMEM;
	}
	p->refs = 1;
	p->source = -1;
	p->providers = o->providers ? o->providers : FLOE_S3_CREDPROV_ALL;
	p->imds_disabled = o->imds_disabled;
	p->md_connect_ms =
	    o->metadata_connect_timeout_ms > 0 ? o->metadata_connect_timeout_ms : 1000;
	p->md_timeout_ms = o->metadata_timeout_ms > 0 ? o->metadata_timeout_ms : 3000;
	p->sts_connect_ms = o->sts_connect_timeout_ms > 0 ? o->sts_connect_timeout_ms : 5000;
	p->sts_timeout_ms = o->sts_timeout_ms > 0 ? o->sts_timeout_ms : 15000;
	p->margin = o->refresh_margin_s > 0 ? o->refresh_margin_s : 300;
	int rc = 0;
	if (has_static)
		rc = make_creds(sc->access_key_id, sc->secret_access_key,
				sc->session_token ? sc->session_token : "", &p->stat);
	char **dst[] = {&p->shared_file,
			&p->profile,
			&p->wi_token_file,
			&p->role_arn,
			&p->role_session_name,
			&p->sts_endpoint,
			&p->sts_region,
			&p->c_full,
			&p->c_rel,
			&p->c_host,
			&p->c_token,
			&p->c_token_file,
			&p->imds_endpoint,
			&p->ca_file};
	const char *src[] = {o->shared_file,
			     o->profile,
			     o->web_identity_token_file,
			     o->role_arn,
			     o->role_session_name,
			     o->sts_endpoint,
			     o->sts_region,
			     o->container_full_uri,
			     o->container_relative_uri,
			     o->container_host,
			     o->container_auth_token,
			     o->container_auth_token_file,
			     o->imds_endpoint,
			     o->ca_file};
	for (size_t i = 0; rc == 0 && i < sizeof(src) / sizeof(src[0]); i++)
		rc = dup_opt(dst[i], src[i]);
	if (rc == 0 && !(p->curl = curl_easy_init()))
		rc = -EIO;
	if (rc) {
		floe_s3_credprov_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

struct floe_s3_credprov *floe_s3_credprov_ref(struct floe_s3_credprov *p)
{
	if (p)
		__atomic_add_fetch(&p->refs, 1, __ATOMIC_RELAXED);
	return p;
}

void floe_s3_credprov_free(struct floe_s3_credprov *p)
{
	if (!p || __atomic_sub_fetch(&p->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	floe_s3_credentials_fini(&p->stat);
	floe_s3_credentials_fini(&p->cur);
	free(p->shared_file);
	free(p->profile);
	free(p->wi_token_file);
	free(p->role_arn);
	free(p->role_session_name);
	free(p->sts_endpoint);
	free(p->sts_region);
	free(p->c_full);
	free(p->c_rel);
	free(p->c_host);
	wipe_str_free(p->c_token);
	free(p->c_token_file);
	free(p->imds_endpoint);
	free(p->ca_file);
	if (p->curl)
		curl_easy_cleanup(p->curl);
	pthread_mutex_destroy(&p->mu);
	free(p);
}

static int copy_out(const struct floe_s3_credentials *src, struct floe_s3_credentials *out)
{
	struct floe_s3_credentials c;
	int rc = make_creds(src->access_key_id, src->secret_access_key,
			    src->session_token ? src->session_token : "", &c);
	if (rc == 0) {
		floe_s3_credentials_fini(out);
		*out = c;
	}
	return rc;
}

/* Runs provider i; on success replaces the cache. *transient is set when it failed in a
 * way that may pass. The reason of a failure is appended to p->err. */
static int run_one(struct floe_s3_credprov *p, size_t i, int64_t now, bool *transient)
{
	struct floe_s3_credentials c = {0};
	int64_t exp = 0;
	char local[ERR_MAX] = "";
	int rc = providers[i].fn(p, now, &c, &exp, local);
	if (rc == 0) {
		floe_s3_credentials_fini(&p->cur);
		p->cur = c;
		p->have = true;
		p->source = (int)i;
		p->expiration = exp;
		/* Refresh a margin ahead, but never sooner than halfway through a short life,
		 * so that credentials issued for less than the margin are not fetched anew on
		 * every request. */
		if (exp == 0)
			p->refresh_at = 0;
		else if (exp - p->margin > now)
			p->refresh_at = exp - p->margin;
		else
			p->refresh_at = now + (exp > now ? (exp - now) / 2 : 0);
		return 0;
	}
	if (rc == FLOE_S3_EUNAVAILABLE)
		*transient = true;
	why(p->err, "%s%s: %s", p->err[0] ? "; " : "", providers[i].name,
	    rc == SKIPPED || local[0] ? local : strerror(rc < 0 ? -rc : EIO));
	return rc == SKIPPED ? -ENOENT : rc;
}

int floe_s3_credprov_get(struct floe_s3_credprov *p, int64_t now, struct floe_s3_credentials *out,
			 int64_t *expiration)
{
	if (!p || !out)
		return -EINVAL;
	pthread_mutex_lock(&p->mu);
	int rc = 0;
	if (p->have && (p->refresh_at == 0 || now < p->refresh_at))
		goto serve;
	p->err[0] = '\0';
	bool transient = false;
	int tried = -1;
	if (p->have && p->source >= 0) {
		/* Refresh from the provider that served last. */
		tried = p->source;
		rc = run_one(p, (size_t)tried, now, &transient);
		if (rc == -ENOMEM)
			goto out;
		/* On failure, credentials that have not yet expired are kept (the report stays
		 * readable), and the refresh is tried again at the next get. */
		if (rc == 0 || now < p->expiration)
			goto serve;
		p->have = false;
		floe_s3_credentials_fini(&p->cur);
	}
	rc = -ENOENT;
	for (size_t i = 0; i < NPROV && rc != 0; i++) {
		if (!(p->providers & providers[i].bit) || (int)i == tried)
			continue;
		rc = run_one(p, i, now, &transient);
		if (rc == -ENOMEM)
			goto out;
	}
	if (rc != 0) {
		rc = transient ? FLOE_S3_EUNAVAILABLE : FLOE_S3_EAUTH;
		goto out;
	}
	p->err[0] = '\0'; /* success: the reasons of providers skipped on the way are noise */
serve:
	rc = copy_out(&p->cur, out);
	if (rc == 0 && expiration)
		*expiration = p->expiration;
out:
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void floe_s3_credprov_invalidate(struct floe_s3_credprov *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->have = false;
	floe_s3_credentials_fini(&p->cur);
	pthread_mutex_unlock(&p->mu);
}

const char *floe_s3_credprov_source(struct floe_s3_credprov *p)
{
	pthread_mutex_lock(&p->mu);
	const char *s = p->have && p->source >= 0 ? providers[p->source].name : "";
	pthread_mutex_unlock(&p->mu);
	return s;
}

const char *floe_s3_credprov_error(struct floe_s3_credprov *p, char *out, size_t cap)
{
	if (!cap)
		return out;
	pthread_mutex_lock(&p->mu);
	snprintf(out, cap, "%s", p->err);
	pthread_mutex_unlock(&p->mu);
	return out;
}
