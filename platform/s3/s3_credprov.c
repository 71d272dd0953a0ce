/* The AWS credential provider chain (see s3_credprov.h): the provider object, the chain
 * with its cache and refresh margin, and the three local providers (static, environment,
 * shared file). The remote providers are in s3_credprov_remote.c, their HTTP helper in
 * s3_credprov_http.c, the small helpers all the providers share in s3_credprov_util.c. */
#include "platform/s3/s3_credprov.h"
#include "platform/s3/s3_credprov_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include "platform/log.h"
#include "platform/s3/s3.h"
#include "platform/secret.h"

#include <curl/curl.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- small helpers ------------------------------------------------------------------- */

static int dup_opt(struct floe_alloc *a, char **dst, const char *src)
{
	*dst = NULL;
	if (!src)
		return 0;
	*dst = floe_strdup(a, src);
	return *dst ? 0 : FLOE_ENOMEM;
}

unsigned floe_s3_credprov_networked(unsigned providers)
{
	unsigned net = 0;
	if (floe_s3_credprov_opt_env(NULL, "AWS_WEB_IDENTITY_TOKEN_FILE"))
		net |= FLOE_S3_CREDPROV_WEB_IDENTITY;
	if (floe_s3_credprov_opt_env(NULL, "AWS_CONTAINER_CREDENTIALS_FULL_URI") ||
	    floe_s3_credprov_opt_env(NULL, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"))
		net |= FLOE_S3_CREDPROV_CONTAINER;
	const char *dis = getenv("AWS_EC2_METADATA_DISABLED");
	if (!dis || strcasecmp(dis, "true") != 0)
		net |= FLOE_S3_CREDPROV_IMDS;
	return net & providers;
}

/* ---- the local providers ------------------------------------------------------------- */

/* The static keys resolved again from their references (p->mu held), after the store
 * refused them: a rotation that rewrote their files (a secrets agent, an operator) is
 * taken by the running agent. References that no longer resolve keep the keys there were. */
static void reload_static(struct floe_s3_credprov *p)
{
	if (!p->stat_stale || !p->stat_refs[0] || !p->stat_refs[1])
		return;
	p->stat_stale = false;
	char *v[3] = {NULL, NULL, NULL};
	int rc = 0;
	for (int i = 0; rc == 0 && i < 3; i++)
		if (p->stat_refs[i])
			rc = floe_secret_resolve(p->alloc, p->stat_refs[i], &v[i]);
	struct floe_aws_credentials n;
	memset(&n, 0, sizeof(n));
	if (rc == 0 && v[0] && *v[0] && v[1] && *v[1] &&
	    floe_aws_credentials_set(p->alloc, v[0], v[1], v[2], &n) == 0) {
		if (!p->stat.access_key_id || strcmp(n.access_key_id, p->stat.access_key_id) != 0)
			floe_info("S3 credentials: the keys of %s were read again after the store refused "
				  "them: another access key", p->stat_refs[0]);
		floe_aws_credentials_fini(&p->stat);
		p->stat = n;
	}
	for (int i = 0; i < 3; i++)
		floe_secret_free(p->alloc, v[i]);
}

static int prov_static(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
		       int64_t *exp, struct floe_err *why)
{
	(void)now;
	reload_static(p);
	if (!p->stat.access_key_id) {
		floe_s3_credprov_why(why, "not configured");
		return SKIPPED;
	}
	*exp = p->stat_exp;
	return floe_aws_credentials_set(p->alloc, p->stat.access_key_id,
					p->stat.secret_access_key, p->stat.session_token, c);
}

static int prov_env(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
		    int64_t *exp, struct floe_err *why)
{
	(void)now;
	int rc = floe_s3_credentials_from_env(p->alloc, c);
	if (rc == -ENOENT) {
		floe_s3_credprov_why(why, "AWS_ACCESS_KEY_ID or AWS_SECRET_ACCESS_KEY is not set");
		return SKIPPED;
	}
	*exp = 0;
	return rc;
}

static int prov_shared(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
		       int64_t *exp, struct floe_err *why)
{
	(void)now;
	const char *path = floe_s3_credprov_opt_env(p->shared_file, "AWS_SHARED_CREDENTIALS_FILE");
	const char *profile = floe_s3_credprov_opt_env(p->profile, "AWS_PROFILE");
	int rc = floe_s3_credentials_from_shared_file(p->alloc, path, profile, c);
	if (rc == 0) {
		*exp = 0;
		return 0;
	}
	const char *shown = path ? path : "~/.aws/credentials";
	if (rc == -ENOENT) {
		floe_s3_credprov_why(why, "%s: no such file, or no profile [%s] with both keys",
				     shown, profile ? profile : "default");
		/* A file that exists but lacks the profile is a configuration the user made:
		 * still not an error of the chain, as in the SDKs. */
		return SKIPPED;
	}
	floe_s3_credprov_why(why, "%s: %s", shown, rc == -EINVAL ? "syntax error" : floe_strerror(rc));
	return rc == FLOE_ENOMEM ? rc : -EINVAL;
}

static const struct {
	unsigned bit;
	const char *name;
	provider_fn fn;
} providers[] = {
    {FLOE_S3_CREDPROV_STATIC, "static", prov_static},
    {FLOE_S3_CREDPROV_ENV, "env", prov_env},
    {FLOE_S3_CREDPROV_WEB_IDENTITY, "web-identity", floe_s3_credprov_web_identity},
    {FLOE_S3_CREDPROV_SHARED_FILE, "shared-file", prov_shared},
    {FLOE_S3_CREDPROV_CONTAINER, "container", floe_s3_credprov_container},
    {FLOE_S3_CREDPROV_IMDS, "imds", floe_s3_credprov_imds},
};
#define NPROV (sizeof(providers) / sizeof(providers[0]))
_Static_assert(NPROV == 6, "struct floe_s3_credprov's seq and the order option hold six");

/* ---- the chain ----------------------------------------------------------------------- */

/* Fills p->seq: the providers named in order first, then the others in table order. */
static void set_order(struct floe_s3_credprov *p, const unsigned *order)
{
	size_t n = 0;
	unsigned placed = 0;
	for (size_t k = 0; k < 6 && order[k]; k++)
		for (size_t i = 0; i < NPROV; i++)
			if (order[k] == providers[i].bit && !(placed & providers[i].bit)) {
				p->seq[n++] = (unsigned char)i;
				placed |= providers[i].bit;
			}
	for (size_t i = 0; i < NPROV; i++)
		if (!(placed & providers[i].bit))
			p->seq[n++] = (unsigned char)i;
}

int floe_s3_credprov_new(const struct floe_s3_credprov_options *o, struct floe_s3_credprov **out)
{
	if (!o || !out || (o->providers & ~(unsigned)FLOE_S3_CREDPROV_ALL))
		return -EINVAL;
	const struct floe_aws_credentials *sc = o->static_credentials;
	bool has_static = sc && sc->access_key_id && *sc->access_key_id && sc->secret_access_key &&
			  *sc->secret_access_key;
	if (sc && !has_static && (sc->access_key_id || sc->secret_access_key))
		return -EINVAL; /* one key without the other is a configuration mistake */
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		return -EIO;
	struct floe_s3_credprov *p = floe_calloc(o->alloc, 1, sizeof(*p));
	if (!p)
		return FLOE_ENOMEM;
	p->alloc = o->alloc;
	if (pthread_mutex_init(&p->mu, NULL) != 0) {
		floe_free(p->alloc, p);
		return FLOE_ENOMEM;
	}
	p->refs = 1;
	p->source = -1;
	floe_err_clear(&p->err);
	p->providers = o->providers ? o->providers : FLOE_S3_CREDPROV_ALL;
	set_order(p, o->order);
	p->imds_disabled = o->imds_disabled;
	p->md_connect_ms =
	    o->metadata_connect_timeout_ms > 0 ? o->metadata_connect_timeout_ms : 1000;
	p->md_timeout_ms = o->metadata_timeout_ms > 0 ? o->metadata_timeout_ms : 3000;
	p->sts_connect_ms = o->sts_connect_timeout_ms > 0 ? o->sts_connect_timeout_ms : 5000;
	p->sts_timeout_ms = o->sts_timeout_ms > 0 ? o->sts_timeout_ms : 15000;
	p->margin = o->refresh_margin_s > 0 ? o->refresh_margin_s : 300;
	floe_s3_limits_init(&p->limits, -1, 0, o->stop_grace_ms, o->stop_fn, o->stop_ctx);
	int rc = 0;
	if (has_static)
		rc = floe_aws_credentials_set(p->alloc, sc->access_key_id, sc->secret_access_key,
					      sc->session_token, &p->stat);
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
		rc = dup_opt(p->alloc, dst[i], src[i]);
	for (size_t i = 0; rc == 0 && has_static && i < 3; i++)
		rc = dup_opt(p->alloc, &p->stat_refs[i], o->static_refs[i]);
	if (rc == 0 && floe_http_new(p->alloc, &p->http))
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
	floe_aws_credentials_fini(&p->stat);
	floe_aws_credentials_fini(&p->cur);
	for (int i = 0; i < 3; i++)
		floe_free(p->alloc, p->stat_refs[i]);
	char *strings[] = {p->shared_file, p->profile,	    p->wi_token_file, p->role_arn,
			   p->role_session_name, p->sts_endpoint, p->sts_region,
			   p->c_full,	   p->c_rel,		    p->c_host,	       p->c_token_file,
			   p->imds_endpoint, p->ca_file};
	for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
		floe_free(p->alloc, strings[i]);
	floe_wipe_free(p->alloc, p->c_token);
	floe_http_free(p->http);
	pthread_mutex_destroy(&p->mu);
	floe_free(p->alloc, p);
}

static int copy_out(const struct floe_aws_credentials *src, struct floe_aws_credentials *out)
{
	struct floe_aws_credentials c;
	int rc = floe_aws_credentials_set(src->alloc, src->access_key_id, src->secret_access_key,
					  src->session_token, &c);
	if (rc == 0) {
		floe_aws_credentials_fini(out);
		*out = c;
	}
	return rc;
}

/* Runs provider i; on success replaces the cache. *transient is set when it failed in a
 * way that may pass. The reason of a failure is appended to p->err. */
static int run_one(struct floe_s3_credprov *p, size_t i, int64_t now, bool *transient)
{
	struct floe_aws_credentials c = {0};
	int64_t exp = 0;
	struct floe_err local;
	floe_err_clear(&local);
	int rc = providers[i].fn(p, now, &c, &exp, &local);
	if (rc == 0) {
		floe_aws_credentials_fini(&p->cur);
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
	floe_s3_credprov_why(&p->err, "%s%s: %s", p->err.msg[0] ? "; " : "", providers[i].name,
			     rc == SKIPPED || local.msg[0] ? local.msg
							   : floe_strerror(rc < 0 ? rc : -EIO));
	return rc == SKIPPED ? -ENOENT : rc;
}

/* Makes the cache current at now (p->mu held): keeps it while it is fresh, else refreshes
 * it from the provider that served last (credentials that have not yet expired are kept
 * when that fails, and the refresh is tried again at the next get), else runs the chain.
 * Returns 0 when the cache may be served. */
static int refresh(struct floe_s3_credprov *p, int64_t now)
{
	if (p->have && (p->refresh_at == 0 || now < p->refresh_at))
		return 0;
	floe_err_clear(&p->err);
	bool transient = false;
	int tried = -1, rc;
	if (p->have && p->source >= 0) {
		tried = p->source;
		rc = run_one(p, (size_t)tried, now, &transient);
		if (rc == FLOE_ENOMEM || (rc == FLOE_S3_ESTOPPED && now >= p->expiration))
			return rc;
		if (rc == 0 || now < p->expiration)
			return 0; /* the report of a failed refresh stays readable */
		p->have = false;
		floe_aws_credentials_fini(&p->cur);
	}
	rc = -ENOENT;
	for (size_t k = 0; k < NPROV && rc != 0; k++) {
		size_t i = p->seq[k];
		if (!(p->providers & providers[i].bit) || (int)i == tried)
			continue;
		rc = run_one(p, i, now, &transient);
		if (rc == FLOE_ENOMEM || rc == FLOE_S3_ESTOPPED)
			return rc; /* the agent is stopping: the rest of the chain would be too */
	}
	if (rc != 0)
		return transient ? FLOE_S3_EUNAVAILABLE : FLOE_S3_EAUTH;
	floe_err_clear(&p->err); /* success: the reasons of providers skipped are noise */
	return 0;
}

int floe_s3_credprov_get(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *out,
			 int64_t *expiration, struct floe_err *e)
{
	if (!p || !out)
		return floe_err_set(e, -EINVAL, "no credential provider");
	pthread_mutex_lock(&p->mu);
	int rc = refresh(p, now);
	if (rc == 0)
		rc = copy_out(&p->cur, out);
	if (rc == 0 && expiration)
		*expiration = p->expiration;
	if (rc) {
		p->err.code = rc;
		if (e)
			floe_err_set(e, rc, "%s", p->err.msg[0] ? p->err.msg : floe_strerror(rc));
	}
	pthread_mutex_unlock(&p->mu);
	return rc;
}

int floe_s3_credprov_set_static(struct floe_s3_credprov *p, const struct floe_aws_credentials *c,
				int64_t expiration)
{
	if (!c->access_key_id || !*c->access_key_id || !c->secret_access_key || !*c->secret_access_key)
		return -ENOENT;
	struct floe_aws_credentials n;
	memset(&n, 0, sizeof(n));
	int rc = floe_aws_credentials_set(p->alloc, c->access_key_id, c->secret_access_key, c->session_token, &n);
	if (rc)
		return rc;
	pthread_mutex_lock(&p->mu);
	floe_aws_credentials_fini(&p->stat);
	p->stat = n;
	p->stat_exp = expiration;
	if (p->have && p->source >= 0 && providers[p->source].bit == FLOE_S3_CREDPROV_STATIC) {
		p->have = false; /* the next get takes the new ones */
		floe_aws_credentials_fini(&p->cur);
	}
	pthread_mutex_unlock(&p->mu);
	return 0;
}

void floe_s3_credprov_invalidate(struct floe_s3_credprov *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->have = false;
	p->stat_stale = true;
	floe_aws_credentials_fini(&p->cur);
	pthread_mutex_unlock(&p->mu);
}

const char *floe_s3_credprov_source(struct floe_s3_credprov *p)
{
	pthread_mutex_lock(&p->mu);
	const char *s = p->have && p->source >= 0 ? providers[p->source].name : "";
	pthread_mutex_unlock(&p->mu);
	return s;
}

void floe_s3_credprov_error(struct floe_s3_credprov *p, struct floe_err *e)
{
	pthread_mutex_lock(&p->mu);
	*e = p->err;
	pthread_mutex_unlock(&p->mu);
}
