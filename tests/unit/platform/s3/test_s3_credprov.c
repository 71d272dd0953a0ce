/* Tests of platform/s3_credprov (the AWS credential provider chain) and the S3 client's
 * use of a provider, against fake STS, container, instance metadata and S3 servers forked
 * on 127.0.0.1 (the fake server is the one of test_s3.c). Time is injected; nothing
 * sleeps. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "platform/s3/s3.h"
#include "platform/s3/s3_credprov.h"
#include "platform/s3/store_s3.h"
#include "platform/store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define T0 INT64_C(1440938160) /* 2015-08-30 12:36:00 UTC, our fake "now" */

#include "fake_http.h"

/* The provider's last failure as text, into out. */
static const char *prov_error(struct floe_s3_credprov *p, char *out, size_t cap)
{
	struct floe_err e;
	floe_s3_credprov_error(p, &e);
	snprintf(out, cap, "%.*s", (int)cap - 1, e.msg);
	return out;
}

/* ---- helpers ------------------------------------------------------------------------- */

static const char *const aws_vars[] = {"AWS_ACCESS_KEY_ID",
				       "AWS_SECRET_ACCESS_KEY",
				       "AWS_SESSION_TOKEN",
				       "AWS_SHARED_CREDENTIALS_FILE",
				       "AWS_PROFILE",
				       "AWS_WEB_IDENTITY_TOKEN_FILE",
				       "AWS_ROLE_ARN",
				       "AWS_ROLE_SESSION_NAME",
				       "AWS_ENDPOINT_URL_STS",
				       "AWS_REGION",
				       "AWS_DEFAULT_REGION",
				       "AWS_CONTAINER_CREDENTIALS_FULL_URI",
				       "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
				       "AWS_CONTAINER_AUTHORIZATION_TOKEN",
				       "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
				       "AWS_EC2_METADATA_SERVICE_ENDPOINT",
				       "AWS_EC2_METADATA_DISABLED"};

/* Each test starts from an environment without AWS variables (the runner's may have some). */
static int clean_env(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(aws_vars) / sizeof(aws_vars[0]); i++)
		unsetenv(aws_vars[i]);
	return 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void url_of(const struct server *sv, char *out, size_t cap)
{
	snprintf(out, cap, "http://127.0.0.1:%d", sv->port);
}

/* A loopback port nothing listens on (connections are refused at once). */
static int closed_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t al = sizeof(a);
	assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	close(fd);
	return ntohs(a.sin_port);
}

static void assert_creds(const struct floe_aws_credentials *c, const char *ak, const char *sk,
			 const char *tok)
{
	assert_string_equal(c->access_key_id, ak);
	assert_string_equal(c->secret_access_key, sk);
	if (tok)
		assert_string_equal(c->session_token, tok);
	else
		assert_null(c->session_token);
}

/* ---- web identity (STS) -------------------------------------------------------------- */

#define STS_OK(ak, exp)                                                                            \
	"<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">"  \
	"<AssumeRoleWithWebIdentityResult><SubjectFromWebIdentityToken>sub"                        \
	"</SubjectFromWebIdentityToken><Credentials><SessionToken>FwoG&amp;tok</SessionToken>"     \
	"<SecretAccessKey>sts/secret+key</SecretAccessKey><Expiration>" exp "</Expiration>"        \
	"<AccessKeyId>" ak "</AccessKeyId></Credentials></AssumeRoleWithWebIdentityResult>"        \
	"</AssumeRoleWithWebIdentityResponse>"

static const char token_path[] = "/tmp/floe-test-cred-token";

static struct floe_s3_credprov *web_identity_prov(const struct server *sv, char *url, size_t cap)
{
	url_of(sv, url, cap);
	write_file(token_path, "eyJhbGciOi.J9+/=tok\n");
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_WEB_IDENTITY,
					     .web_identity_token_file = token_path,
					     .role_arn = "arn:aws:iam::123456789012:role/floe",
					     .role_session_name = "floe test",
					     .sts_endpoint = url};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	return p;
}

static void test_web_identity(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, "Content-Type: text/xml\r\n", STS_OK("ASIASTS1", "2015-08-30T13:36:00Z")),
	    R(403, "Content-Type: text/xml\r\n",
	      "<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code>"
	      "<Message>Not authorized to perform sts:AssumeRoleWithWebIdentity</Message>"
	      "</Error></ErrorResponse>"),
	};
	struct server sv;
	server_start(&sv, script, 2);
	char url[64];
	struct floe_s3_credprov *p = web_identity_prov(&sv, url, sizeof(url));
	struct floe_aws_credentials c = {0};
	int64_t exp = 0;
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, &exp, NULL), 0);
	assert_creds(&c, "ASIASTS1", "sts/secret+key", "FwoG&tok");
	assert_int_equal(exp, T0 + 3600);
	assert_string_equal(floe_s3_credprov_source(p), "web-identity");
	/* After invalidation the chain runs again: STS refuses, and says why. */
	floe_s3_credprov_invalidate(p);
	struct floe_aws_credentials keep = c;
	struct floe_err e;
	floe_err_clear(&e);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, &e), FLOE_S3_EAUTH);
	assert_ptr_equal(c.access_key_id, keep.access_key_id); /* untouched on failure */
	char err[1024], want[256];
	prov_error(p, err, sizeof(err));
	snprintf(want, sizeof(want),
		 "web-identity: %s/ answered 403 (AccessDenied: Not authorized "
		 "to perform sts:AssumeRoleWithWebIdentity)",
		 url);
	assert_string_equal(err, want);
	assert_int_equal(e.code, FLOE_S3_EAUTH); /* get explains its failure the same way */
	assert_string_equal(e.msg, want);
	assert_null(strstr(err, "eyJ"));
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);

	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	for (int i = 0; i < 2; i++) {
		assert_string_equal(s[i].method, "POST");
		assert_string_equal(s[i].target, "/");
		char v[256];
		assert_true(header(&s[i], "Content-Type", v, sizeof(v)));
		assert_string_equal(v, "application/x-www-form-urlencoded; charset=utf-8");
		assert_false(header(&s[i], "Authorization", v, sizeof(v))); /* unsigned call */
		assert_string_equal(s[i].body,
				    "Action=AssumeRoleWithWebIdentity&Version=2011-06-15"
				    "&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Ffloe"
				    "&RoleSessionName=floe%20test"
				    "&WebIdentityToken=eyJhbGciOi.J9%2B%2F%3Dtok");
	}
	seen_free(s, 2);
	unlink(token_path);
}

/* Refresh 5 minutes ahead of Expiration, keep valid credentials when a refresh fails, and
 * report an unreachable STS as a transient failure once they have expired. */
static void test_refresh(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL, STS_OK("ASIAONE", "2015-08-30T13:36:00Z")),
	    R(200, NULL, STS_OK("ASIATWO", "2015-08-30T14:36:00Z")),
	};
	struct server sv;
	server_start(&sv, script, 2);
	char url[64];
	struct floe_s3_credprov *p = web_identity_prov(&sv, url, sizeof(url));
	struct floe_aws_credentials c = {0};
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), 0);
	assert_string_equal(c.access_key_id, "ASIAONE");
	/* 301 s before expiry: served from the cache (the server would not answer a third
	 * request, so a refresh now would fail the test at server_finish). */
	assert_int_equal(floe_s3_credprov_get(p, T0 + 3600 - 301, &c, NULL, NULL), 0);
	assert_string_equal(c.access_key_id, "ASIAONE");
	assert_int_equal(floe_s3_credprov_get(p, T0 + 3600 - 300, &c, NULL, NULL), 0);
	assert_string_equal(c.access_key_id, "ASIATWO");
	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	seen_free(s, 2);
	/* STS is gone now. Inside the margin the old credentials still serve... */
	int64_t exp = 0;
	assert_int_equal(floe_s3_credprov_get(p, T0 + 7200 - 10, &c, &exp, NULL), 0);
	assert_string_equal(c.access_key_id, "ASIATWO");
	assert_int_equal(exp, T0 + 7200);
	char err[512];
	assert_non_null(strstr(prov_error(p, err, sizeof(err)), "web-identity: "));
	/* ...past Expiration they do not, and trying later may help. */
	assert_int_equal(floe_s3_credprov_get(p, T0 + 7200, &c, NULL, NULL), FLOE_S3_EUNAVAILABLE);
	assert_string_equal(c.access_key_id, "ASIATWO");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
	unlink(token_path);
}

/* ---- container ------------------------------------------------------------------------ */

static void test_container(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, "Content-Type: application/json\r\n",
	      "{\"AccessKeyId\":\"ASIACONT\",\"SecretAccessKey\":\"c\\/s\",\"Token\":\"ctok\","
	      "\"Expiration\":\"2015-08-30T18:36:00Z\",\"RoleArn\":\"arn:aws:iam::1:role/r\"}"),
	    R(401, NULL, "{\"code\":\"Unauthorized\"}"),
	};
	struct server sv;
	server_start(&sv, script, 2);
	char url[64];
	url_of(&sv, url, sizeof(url));
	const char *tfile = "/tmp/floe-test-cred-ctoken";
	write_file(tfile, "Bearer abc.def\n");
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_CONTAINER,
					     .container_relative_uri = "/v2/credentials/1f2e-3d",
					     .container_host = url,
					     .container_auth_token_file = tfile};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct floe_aws_credentials c = {0};
	int64_t exp = 0;
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, &exp, NULL), 0);
	assert_creds(&c, "ASIACONT", "c/s", "ctok");
	assert_int_equal(exp, T0 + 6 * 3600);
	floe_s3_credprov_invalidate(p);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	char err[512], want[256];
	snprintf(want, sizeof(want), "container: %s/v2/credentials/1f2e-3d answered 401", url);
	assert_string_equal(prov_error(p, err, sizeof(err)), want);
	floe_s3_credprov_free(p);

	struct seen s[2];
	assert_int_equal(server_finish(&sv, s, 2), 2);
	char v[128];
	assert_string_equal(s[0].method, "GET");
	assert_string_equal(s[0].target, "/v2/credentials/1f2e-3d");
	assert_true(header(&s[0], "Authorization", v, sizeof(v)));
	assert_string_equal(v, "Bearer abc.def");
	seen_free(s, 2);
	unlink(tfile);

	/* A full URI over http must stay on loopback or go to an ECS/EKS agent. */
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://203.0.113.5/creds", 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "secret-token", 1);
	struct floe_s3_credprov_options o2 = {.providers = FLOE_S3_CREDPROV_CONTAINER};
	assert_int_equal(floe_s3_credprov_new(&o2, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	assert_string_equal(prov_error(p, err, sizeof(err)),
			    "container: http://203.0.113.5/creds: not https, nor http to a "
			    "loopback or ECS/EKS agent address");
	/* A token with a line break would forge headers. */
	setenv("AWS_CONTAINER_CREDENTIALS_FULL_URI", "http://127.0.0.1:1/creds", 1);
	setenv("AWS_CONTAINER_AUTHORIZATION_TOKEN", "a\r\nX-Evil: 1", 1);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	assert_non_null(strstr(prov_error(p, err, sizeof(err)), "not a header value"));
	floe_s3_credprov_free(p);
	floe_aws_credentials_fini(&c);
}

/* ---- IMDSv2 --------------------------------------------------------------------------- */

static void test_imds(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL, "AQAEAtok=="),
	    R(200, NULL, "floe-role\n"),
	    R(200, NULL,
	      "{\n  \"Code\" : \"Success\",\n  \"LastUpdated\" : \"2015-08-30T12:00:00Z\",\n"
	      "  \"Type\" : \"AWS-HMAC\",\n  \"AccessKeyId\" : \"ASIAIMDS\",\n"
	      "  \"SecretAccessKey\" : \"imds-secret\",\n  \"Token\" : \"itok\",\n"
	      "  \"Expiration\" : \"2015-08-30T18:00:00Z\"\n}"),
	};
	struct server sv;
	server_start(&sv, script, 3);
	char url[64];
	url_of(&sv, url, sizeof(url));
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_IMDS};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct floe_aws_credentials c = {0};
	int64_t exp = 0;
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, &exp, NULL), 0);
	assert_creds(&c, "ASIAIMDS", "imds-secret", "itok");
	assert_int_equal(exp, T0 - 36 * 60 + 6 * 3600);
	assert_string_equal(floe_s3_credprov_source(p), "imds");
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);

	struct seen s[3];
	assert_int_equal(server_finish(&sv, s, 3), 3);
	char v[128];
	assert_string_equal(s[0].method, "PUT");
	assert_string_equal(s[0].target, "/latest/api/token");
	assert_true(header(&s[0], "X-aws-ec2-metadata-token-ttl-seconds", v, sizeof(v)));
	assert_string_equal(v, "21600");
	assert_false(header(&s[0], "X-aws-ec2-metadata-token", v, sizeof(v)));
	assert_string_equal(s[1].method, "GET");
	assert_string_equal(s[1].target, "/latest/meta-data/iam/security-credentials/");
	assert_string_equal(s[2].method, "GET");
	assert_string_equal(s[2].target, "/latest/meta-data/iam/security-credentials/floe-role");
	for (int i = 1; i < 3; i++) {
		assert_true(header(&s[i], "X-aws-ec2-metadata-token", v, sizeof(v)));
		assert_string_equal(v, "AQAEAtok==");
	}
	seen_free(s, 3);

	/* Disabled by the environment: not even tried. */
	setenv("AWS_EC2_METADATA_DISABLED", "TRUE", 1);
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	char err[512];
	assert_string_equal(prov_error(p, err, sizeof(err)),
			    "imds: disabled by AWS_EC2_METADATA_DISABLED");
	floe_s3_credprov_free(p);
	unsetenv("AWS_EC2_METADATA_DISABLED");

	/* No metadata service at all (most hosts): skipped, not a transient failure. */
	snprintf(url, sizeof(url), "http://127.0.0.1:%d", closed_port());
	setenv("AWS_EC2_METADATA_SERVICE_ENDPOINT", url, 1);
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	assert_non_null(strstr(prov_error(p, err, sizeof(err)),
			       "/latest/api/token: no instance metadata service ("));
	floe_s3_credprov_free(p);
}

/* An instance without a role, and a document that does not say Success. */
static void test_imds_failures(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL, "tok"),
	    R(404, NULL, ""),
	    R(200, NULL, "tok"),
	    R(200, NULL, "r"),
	    R(200, NULL, "{\"Code\":\"AssumeRoleUnauthorizedAccess\",\"Message\":\"no\"}"),
	};
	struct server sv;
	server_start(&sv, script, 5);
	char url[64];
	url_of(&sv, url, sizeof(url));
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_IMDS,
					     .imds_endpoint = url};
	struct floe_s3_credprov *p = NULL;
	struct floe_aws_credentials c = {0};
	char err[512], want[256];
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	assert_string_equal(prov_error(p, err, sizeof(err)),
			    "imds: no IAM role is attached to this instance");
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	snprintf(want, sizeof(want),
		 "imds: %s/latest/meta-data/iam/security-credentials/r: answer has Code "
		 "AssumeRoleUnauthorizedAccess",
		 url);
	assert_string_equal(prov_error(p, err, sizeof(err)), want);
	floe_s3_credprov_free(p);
	struct seen s[5];
	assert_int_equal(server_finish(&sv, s, 5), 5);
	seen_free(s, 5);
}

/* ---- the chain ------------------------------------------------------------------------ */

static void test_chain_order(void **state)
{
	(void)state;
	const char *shared = "/tmp/floe-test-cred-shared";
	write_file(shared, "[default]\naws_access_key_id = AKIAFILE\naws_secret_access_key = fs\n");
	struct floe_aws_credentials stat = {"AKIASTATIC", "ss", NULL, NULL};
	/* Web identity and IMDS point at a port that refuses: reaching them would show. */
	char dead[64];
	snprintf(dead, sizeof(dead), "http://127.0.0.1:%d", closed_port());
	write_file(token_path, "tok");
	struct floe_s3_credprov_options o = {.static_credentials = &stat,
					     .shared_file = shared,
					     .web_identity_token_file = token_path,
					     .role_arn = "arn:aws:iam::1:role/r",
					     .sts_endpoint = dead,
					     .imds_endpoint = dead};
	setenv("AWS_ACCESS_KEY_ID", "AKIAENV", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "ENVSECRETxyz", 1);
	setenv("AWS_SESSION_TOKEN", "etok", 1);
	struct floe_s3_credprov *p = NULL;
	struct floe_aws_credentials c = {0};
	int64_t exp = -1;
	/* 1. static config beats everything. */
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, &exp, NULL), 0);
	assert_creds(&c, "AKIASTATIC", "ss", NULL);
	assert_int_equal(exp, 0);
	assert_string_equal(floe_s3_credprov_source(p), "static");
	floe_s3_credprov_free(p);
	/* 2. then the environment (before web identity, which would fail here). */
	o.static_credentials = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), 0);
	assert_creds(&c, "AKIAENV", "ENVSECRETxyz", "etok");
	floe_s3_credprov_free(p);
	/* 3. web identity comes before the shared file: its failure is reported, and being
	 * unreachable, the shared file is used. */
	unsetenv("AWS_ACCESS_KEY_ID");
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), 0);
	assert_creds(&c, "AKIAFILE", "fs", NULL);
	assert_string_equal(floe_s3_credprov_source(p), "shared-file");
	floe_s3_credprov_free(p);
	/* 4. nothing anywhere: every provider and its reason, in chain order. */
	o.shared_file = "/nonexistent/credentials";
	o.web_identity_token_file = NULL;
	o.role_arn = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EAUTH);
	char err[2048];
	prov_error(p, err, sizeof(err));
	const char *order[] = {"static: not configured",
			       "; env: AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set",
			       "; web-identity: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN are "
			       "not set",
			       "; shared-file: /nonexistent/credentials: no such file, or no "
			       "profile [default] with both keys",
			       "; container: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI "
			       "are not set",
			       "; imds: http://127.0.0.1:"};
	const char *at = err;
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		assert_ptr_equal(strstr(at, order[i]), at);
		at += strlen(order[i]);
	}
	assert_null(strstr(err, "ENVSECRET"));	  /* no secret in the report */
	assert_creds(&c, "AKIAFILE", "fs", NULL); /* untouched */
	floe_s3_credprov_free(p);
	/* 5. a configured web identity whose STS cannot be reached, and nothing after it:
	 * transient, so the caller retries later. */
	o.web_identity_token_file = token_path;
	o.role_arn = "arn:aws:iam::1:role/r";
	o.providers = FLOE_S3_CREDPROV_WEB_IDENTITY | FLOE_S3_CREDPROV_SHARED_FILE;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, NULL, NULL), FLOE_S3_EUNAVAILABLE);
	floe_s3_credprov_free(p);
	/* Options: one key without the other, unknown provider bits. */
	struct floe_aws_credentials half = {"AKIA", NULL, NULL, NULL};
	struct floe_s3_credprov_options bad = {.static_credentials = &half};
	assert_int_equal(floe_s3_credprov_new(&bad, &p), -EINVAL);
	struct floe_s3_credprov_options bits = {.providers = 1u << 9};
	assert_int_equal(floe_s3_credprov_new(&bits, &p), -EINVAL);
	floe_aws_credentials_fini(&c);
	unlink(shared);
	unlink(token_path);
}

/* ---- the S3 client with a provider ---------------------------------------------------- */

struct clock {
	int64_t now;
};

static int64_t fake_now(void *ctx)
{
	return ((struct clock *)ctx)->now;
}

static void no_sleep(void *ctx, int64_t ms)
{
	(void)ctx;
	(void)ms;
}

static uint64_t zero_random(void *ctx)
{
	(void)ctx;
	return 0;
}

static struct floe_s3 *s3_client(const struct server *sv, struct clock *clk,
				 struct floe_s3_credprov *p)
{
	char ep[64];
	url_of(sv, ep, sizeof(ep));
	struct floe_s3_options o = {.endpoint = ep,
				    .region = "us-east-1",
				    .bucket = "bkt",
				    .path_style = true,
				    .credprov = p,
				    .max_retries = 2,
				    .random_fn = zero_random,
				    .sleep_fn = no_sleep,
				    .now_fn = fake_now,
				    .fn_ctx = clk,
				    .connect_timeout_ms = 5000,
				    .stall_timeout_ms = 5000};
	struct floe_s3 *s3 = NULL;
	assert_int_equal(floe_s3_new(&o, &s3), 0);
	return s3;
}

#define CONT_JSON(ak, exp)                                                                         \
	"{\"AccessKeyId\":\"" ak "\",\"SecretAccessKey\":\"sk\",\"Token\":\"tok-" ak "\","         \
	"\"Expiration\":\"" exp "\"}"

/* Static keys replaced while the provider is in use (a catalog vends new ones): the next
 * get returns them, with their expiry; a replacement without both keys changes nothing. */
static void test_static_replaced(void **state)
{
	(void)state;
	struct floe_aws_credentials one = {"AKIAONE", "s1", "t1", NULL};
	struct floe_aws_credentials two = {"AKIATWO", "s2", NULL, NULL};
	struct floe_aws_credentials half = {"AKIAHALF", NULL, NULL, NULL};
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_STATIC, .static_credentials = &one};
	struct floe_s3_credprov *p = NULL;
	struct floe_aws_credentials c = {0};
	int64_t exp = -1;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	assert_int_equal(floe_s3_credprov_set_static(p, &one, T0 + 30), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0, &c, &exp, NULL), 0);
	assert_creds(&c, "AKIAONE", "s1", "t1");
	assert_int_equal(exp, T0 + 30);
	assert_int_equal(floe_s3_credprov_set_static(p, &two, T0 + 60), 0);
	assert_int_equal(floe_s3_credprov_get(p, T0 + 1, &c, &exp, NULL), 0);
	assert_creds(&c, "AKIATWO", "s2", NULL);
	assert_int_equal(exp, T0 + 60);
	assert_int_equal(floe_s3_credprov_set_static(p, &half, 0), -ENOENT);
	assert_int_equal(floe_s3_credprov_get(p, T0 + 2, &c, &exp, NULL), 0);
	assert_creds(&c, "AKIATWO", "s2", NULL);
	floe_aws_credentials_fini(&c);
	floe_s3_credprov_free(p);
}

static void test_client_refreshes(void **state)
{
	(void)state;
	struct canned creds[] = {
	    R(200, NULL, CONT_JSON("ASIAA", "2015-08-30T13:36:00Z")),
	    R(200, NULL, CONT_JSON("ASIAB", "2015-08-30T14:36:00Z")),
	    R(200, NULL, CONT_JSON("ASIAC", "2015-08-30T15:36:00Z")),
	};
	struct canned s3s[] = {
	    R(200, NULL, NULL),
	    R(200, NULL, NULL),
	    R(403, NULL,
	      "<Error><Code>ExpiredToken</Code><Message>The provided token has expired."
	      "</Message></Error>"),
	    R(200, NULL, NULL),
	};
	struct server cs, ss;
	server_start(&cs, creds, 3);
	server_start(&ss, s3s, 4);
	char url[64];
	url_of(&cs, url, sizeof(url));
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_CONTAINER,
					     .container_full_uri = url};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct clock clk = {T0};
	struct floe_s3 *s3 = s3_client(&ss, &clk, p);
	floe_s3_credprov_free(p); /* the client holds its own reference */
	assert_int_equal(floe_s3_put(s3, "k1", "x", 1, NULL, NULL), 0);
	clk.now = T0 + 3600 - 299; /* within 5 minutes of expiry: the next request refreshes */
	assert_int_equal(floe_s3_put(s3, "k2", "x", 1, NULL, NULL), 0);
	/* Revoked early: the 403 ExpiredToken makes the client fetch new ones once. */
	assert_int_equal(floe_s3_put(s3, "k3", "x", 1, NULL, NULL), 0);
	assert_int_equal(floe_s3_last_attempts(s3), 2);
	floe_s3_free(s3);

	struct seen s[4];
	assert_int_equal(server_finish(&ss, s, 4), 4);
	const char *want_ak[] = {"ASIAA", "ASIAB", "ASIAB", "ASIAC"};
	for (int i = 0; i < 4; i++) {
		char v[512], prefix[64], tok[64];
		assert_true(header(&s[i], "Authorization", v, sizeof(v)));
		snprintf(prefix, sizeof(prefix), "AWS4-HMAC-SHA256 Credential=%s/", want_ak[i]);
		assert_ptr_equal(strstr(v, prefix), v);
		assert_true(header(&s[i], "x-amz-security-token", v, sizeof(v)));
		snprintf(tok, sizeof(tok), "tok-%s", want_ak[i]);
		assert_string_equal(v, tok);
	}
	seen_free(s, 4);
	struct seen c3[3];
	assert_int_equal(server_finish(&cs, c3, 3), 3);
	seen_free(c3, 3);
}

/* A provider with nothing to give fails requests with FLOE_S3_EAUTH, before any is sent. */
static void test_client_without_credentials(void **state)
{
	(void)state;
	struct canned none[] = {R(200, NULL, NULL)};
	struct server ss;
	server_start(&ss, none, 1);
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_ENV};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct clock clk = {T0};
	struct floe_s3 *s3 = s3_client(&ss, &clk, p);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), FLOE_S3_EAUTH);
	char err[256];
	assert_string_equal(prov_error(p, err, sizeof(err)),
			    "env: AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set");
	/* The environment gains keys: the next request uses them. */
	setenv("AWS_ACCESS_KEY_ID", "AKIALATE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "late", 1);
	assert_int_equal(floe_s3_put(s3, "k", "x", 1, NULL, NULL), 0);
	floe_s3_free(s3);
	floe_s3_credprov_free(p);
	struct seen s[1];
	assert_int_equal(server_finish(&ss, s, 1), 1);
	char v[512];
	assert_true(header(&s[0], "Authorization", v, sizeof(v)));
	assert_non_null(strstr(v, "Credential=AKIALATE/"));
	seen_free(s, 1);
}

/* ---- stale multipart uploads ---------------------------------------------------------- */

static void test_abort_stale_uploads(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL,
	      "<ListMultipartUploadsResult><Bucket>bkt</Bucket><IsTruncated>true</IsTruncated>"
	      "<NextKeyMarker>data/b.parquet</NextKeyMarker>"
	      "<NextUploadIdMarker>new1</NextUploadIdMarker>"
	      "<Upload><Key>data/a.parquet</Key><UploadId>old1</UploadId>"
	      "<Initiated>2015-08-30T10:00:00.000Z</Initiated></Upload>"
	      "<Upload><Key>data/b.parquet</Key><UploadId>new1</UploadId>"
	      "<Initiated>2015-08-30T12:00:00.000Z</Initiated></Upload>"
	      "</ListMultipartUploadsResult>"),
	    R(200, NULL,
	      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
	      "<Upload><Key>data/c.parquet</Key><UploadId>odd</UploadId>"
	      "<Initiated>yesterday</Initiated></Upload>"
	      "<Upload><Key>data/d e.parquet</Key><UploadId>old/2</UploadId>"
	      "<Initiated>2015-08-30T11:35:59Z</Initiated></Upload>"
	      "</ListMultipartUploadsResult>"),
	    R(204, NULL, NULL),
	    R(404, NULL, "<Error><Code>NoSuchUpload</Code></Error>"), /* gone already: fine */
	};
	struct server sv;
	server_start(&sv, script, 4);
	struct floe_aws_credentials stat = {"AKIATEST", "s", NULL, NULL};
	struct floe_s3_credprov_options o = {.providers = FLOE_S3_CREDPROV_STATIC,
					     .static_credentials = &stat};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&o, &p), 0);
	struct clock clk = {T0};
	struct floe_s3 *s3 = s3_client(&sv, &clk, p);
	floe_s3_credprov_free(p);
	size_t aborted = 99;
	/* Older than an hour: 10:00 and 11:35:59 (now is 12:36:00); 12:00 is too young. */
	assert_int_equal(floe_s3_abort_stale_uploads(s3, "data/", 3600, &aborted), 0);
	assert_int_equal(aborted, 2);
	assert_int_equal(floe_s3_abort_stale_uploads(s3, "data/", -1, &aborted), -EINVAL);
	floe_s3_free(s3);
	struct seen s[4];
	assert_int_equal(server_finish(&sv, s, 4), 4);
	assert_string_equal(s[0].target, "/bkt?uploads=&prefix=data%2F");
	assert_string_equal(s[1].target, "/bkt?uploads=&prefix=data%2F&key-marker=data%2Fb.parquet"
					 "&upload-id-marker=new1");
	assert_string_equal(s[2].method, "DELETE");
	assert_string_equal(s[2].target, "/bkt/data/a.parquet?uploadId=old1");
	assert_string_equal(s[3].method, "DELETE");
	assert_string_equal(s[3].target, "/bkt/data/d%20e.parquet?uploadId=old%2F2");
	seen_free(s, 4);
}

/* Through the store: the prefix is the store's; a provider passes through its options. */
static void test_store_abort_stale(void **state)
{
	(void)state;
	struct canned script[] = {
	    R(200, NULL,
	      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated>"
	      "</ListMultipartUploadsResult>"),
	};
	struct server sv;
	server_start(&sv, script, 1);
	setenv("AWS_ACCESS_KEY_ID", "AKIASTORE", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "s", 1);
	struct floe_s3_credprov_options po = {.providers = FLOE_S3_CREDPROV_ENV};
	struct floe_s3_credprov *p = NULL;
	assert_int_equal(floe_s3_credprov_new(&po, &p), 0);
	char ep[64];
	url_of(&sv, ep, sizeof(ep));
	struct floe_s3_options o = {.endpoint = ep,
				    .region = "us-east-1",
				    .bucket = "bkt",
				    .path_style = true,
				    .credprov = p};
	struct floe_store *st = NULL;
	assert_int_equal(floe_store_s3_new(&o, "/wh/", &st), 0);
	floe_s3_credprov_free(p);
	size_t n = 9;
	assert_int_equal(floe_store_s3_abort_stale_uploads(st, "data/", 3600, &n), 0);
	assert_int_equal(n, 0);
	floe_store_free(st);
	struct seen s[1];
	assert_int_equal(server_finish(&sv, s, 1), 1);
	assert_string_equal(s[0].target, "/bkt?uploads=&prefix=wh%2Fdata%2F");
	char v[512];
	assert_true(header(&s[0], "Authorization", v, sizeof(v)));
	assert_non_null(strstr(v, "Credential=AKIASTORE/"));
	seen_free(s, 1);
	assert_int_equal(floe_store_local_new(NULL, "/tmp", &st), 0);
	assert_int_equal(floe_store_s3_abort_stale_uploads(st, "", 1, &n), -EINVAL);
	floe_store_free(st);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_web_identity, clean_env),
	    cmocka_unit_test_setup(test_refresh, clean_env),
	    cmocka_unit_test_setup(test_container, clean_env),
	    cmocka_unit_test_setup(test_imds, clean_env),
	    cmocka_unit_test_setup(test_imds_failures, clean_env),
	    cmocka_unit_test_setup(test_chain_order, clean_env),
	    cmocka_unit_test_setup(test_static_replaced, clean_env),
	    cmocka_unit_test_setup(test_client_refreshes, clean_env),
	    cmocka_unit_test_setup(test_client_without_credentials, clean_env),
	    cmocka_unit_test_setup(test_abort_stale_uploads, clean_env),
	    cmocka_unit_test_setup(test_store_abort_stale, clean_env),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
