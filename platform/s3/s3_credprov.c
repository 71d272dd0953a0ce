/* The AWS credential provider chain (see s3_credprov.h): the provider object, the chain
 * with its cache and refresh margin, and the three local providers (static, environment,
 * shared file). The remote providers are in s3_credprov_remote.c, their HTTP helper in
 * s3_credprov_http.c, the small helpers all the providers share in s3_credprov_util.c. */
#include "platform/s3/s3_credprov.h"
#include "platform/log.h"
#include "platform/s3/s3_credprov_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"

#include "platform/clock.h"
#include "platform/s3/s3.h"
#include "platform/secret.h"
#include "platform/signal.h"

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

/* ---- static keys from files --------------------------------------------------------- */

/* A key file changed this recently may still be being written (a script that truncates it
 * and then writes, or writes in pieces): it is read once it has been left alone this long,
 * waiting out the rest of it (once per change, a stop cuts it short), so that a file
 * written just before the start is taken at once still. */
#define KEYFILE_SETTLE_US INT64_C(1000000)
/* The files are read again this often (unix seconds) even when stat shows no change: a
 * file system with coarse timestamps (FAT's 2 s) can hide a rewrite of the same size. */
#define KEYFILE_REREAD_S 60

static bool same_file(const struct floe_fs_stat *a, const struct floe_fs_stat *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_us == b->mtime_us;
}

/* Whether the key files may differ from what p->stat was made of (p->mu held): one was
 * replaced, changed or went away, or the periodic read is due (also after the clock
 * stepped back past it). Costs a stat(2) per file. */
static bool keyfiles_stale(struct floe_s3_credprov *p, int64_t now)
{
	if (now >= p->kf_reread_at || now < p->kf_reread_at - KEYFILE_REREAD_S)
		return true;
	for (size_t i = 0; i < 3; i++) {
		struct floe_fs_stat st;
		if (p->kf[i].path && (!p->kf[i].loaded || floe_fs_stat(p->kf[i].path, &st) != 0 ||
				      !same_file(&st, &p->kf[i].st)))
			return true;
	}
	return false;
}

/* Reads key file i into *out (owned: floe_secret_free) and its identity into *st. A file
 * that cannot be used now (missing, unreadable, empty, a NUL byte, a control character,
 * changed again within KEYFILE_SETTLE_US or while it was read) is FLOE_S3_EUNAVAILABLE,
 * the reason appended to why: whoever provisions it is expected to put it right. */
static int keyfile_read(struct floe_s3_credprov *p, size_t i, char **out, struct floe_fs_stat *st,
			struct floe_err *why)
{
	const char *path = p->kf[i].path, *reason = NULL;
	struct floe_fs_stat after;
	char *v = NULL;
	int rc = floe_fs_stat(path, st);
	if (rc == 0 && !st->regular)
		reason = "not a regular file";
	else if (rc == 0) {
		int64_t age = floe_clock_now_us() - st->mtime_us;
		if (age >= 0 && age < KEYFILE_SETTLE_US) {
			floe_signal_sleep_ms((unsigned)((KEYFILE_SETTLE_US - age) / 1000 + 1));
			if ((rc = floe_fs_stat(path, &after)) == 0 && !same_file(st, &after))
				reason = "is being written: waiting for it to be whole";
		}
	}
	if (rc == 0 && !reason && (rc = floe_secret_read_file(p->alloc, path, &v)) == 0) {
		if (floe_fs_stat(path, &after) != 0 || !same_file(st, &after))
			reason = "changed while it was read: waiting for it to be written whole";
		else if (!floe_s3_credprov_header_safe(v, strlen(v)))
			reason = "holds a line break or another control character";
	}
	if (rc == FLOE_ENOMEM)
		return rc;
	if (rc == -EILSEQ)
		reason = "holds a NUL byte";
	else if (rc == -ENODATA)
		reason = "is empty";
	if (rc || reason) {
		floe_secret_free(p->alloc, v);
		floe_s3_credprov_why(why, "%sfile:%s: %s", why->msg[0] ? "; " : "", path,
				     reason ? reason : floe_strerror(rc));
		return FLOE_S3_EUNAVAILABLE;
	}
	*out = v;
	return 0;
}

/* Makes p->stat what the key files hold now, with the keys given without a file (p->mu
 * held). When one cannot be used, the keys read before are wiped too: none is signed
 * with while its file is away or in flux. */
static int keyfiles_load(struct floe_s3_credprov *p, int64_t now, struct floe_err *why)
{
	char *v[3] = {NULL, NULL, NULL};
	struct floe_fs_stat st[3];
	memset(st, 0, sizeof(st));
	int rc = 0;
	/* Every file is looked at, so that the reason names all that are missing. */
	for (size_t i = 0; i < 3 && rc != FLOE_ENOMEM; i++) {
		int r = p->kf[i].path ? keyfile_read(p, i, &v[i], &st[i], why) : 0;
		if (r && (rc == 0 || r == FLOE_ENOMEM))
			rc = r;
	}
	struct floe_aws_credentials n;
	memset(&n, 0, sizeof(n));
	if (rc == 0) {
		const char *k[3];
		for (size_t i = 0; i < 3; i++)
			k[i] = p->kf[i].path ? v[i] : p->fixed[i];
		rc = floe_aws_credentials_set(p->alloc, k[0], k[1], k[2], &n);
	}
	for (size_t i = 0; i < 3; i++)
		floe_secret_free(p->alloc, v[i]);
	/* A rotation is worth a line: the key id only, never a secret. */
	if (rc == 0 && p->stat.access_key_id && p->kf[0].path &&
	    strcmp(n.access_key_id, p->stat.access_key_id) != 0)
		floe_info("S3 credentials: the keys of file:%s were read again: another access key",
			  p->kf[0].path);
	floe_aws_credentials_fini(&p->stat);
	for (size_t i = 0; i < 3; i++)
		p->kf[i].loaded = false;
	if (rc)
		return rc;
	p->stat = n;
	for (size_t i = 0; i < 3; i++) {
		p->kf[i].loaded = p->kf[i].path != NULL;
		p->kf[i].st = st[i];
	}
	p->kf_reread_at = now + KEYFILE_REREAD_S;
	return 0;
}

/* ---- the local providers ------------------------------------------------------------- */

static int prov_static(struct floe_s3_credprov *p, int64_t now, struct floe_aws_credentials *c,
		       int64_t *exp, struct floe_err *why)
{
	int rc;
	if (p->nkf && (rc = keyfiles_load(p, now, why)) != 0)
		return rc;
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
	const char *given[3] = {sc ? sc->access_key_id : NULL, sc ? sc->secret_access_key : NULL,
				sc ? sc->session_token : NULL};
	for (size_t i = 0; i < 3; i++)
		if (given[i] && !*given[i])
			given[i] = NULL;
	size_t nkf = 0;
	for (size_t i = 0; i < 3; i++)
		nkf += o->key_files[i] != NULL;
	bool has_ak = given[0] || o->key_files[0], has_sk = given[1] || o->key_files[1];
	bool any = (sc && (sc->access_key_id || sc->secret_access_key)) || nkf;
	if (any && !(has_ak && has_sk))
		return -EINVAL; /* one key without the other is a configuration mistake */
	bool has_static = has_ak && !nkf;
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
	p->nkf = nkf;
	for (size_t i = 0; nkf && rc == 0 && i < 3; i++) {
		if (o->key_files[i])
			rc = dup_opt(p->alloc, &p->kf[i].path, o->key_files[i]);
		else
			rc = dup_opt(p->alloc, &p->fixed[i], given[i]);
	}
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
	for (size_t i = 0; i < 3; i++) {
		floe_free(p->alloc, p->kf[i].path);
		floe_secret_free(p->alloc, p->fixed[i]);
	}
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
	/* Keys from files are as good as the files: one that changed is read again at once
	 * (prov_static), a rotation takes effect at the next request. */
	if (p->have && p->nkf && p->source >= 0 &&
	    providers[p->source].bit == FLOE_S3_CREDPROV_STATIC && keyfiles_stale(p, now)) {
		p->have = false;
		floe_aws_credentials_fini(&p->cur);
	}
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
	/* Keys set here replace those of files, which are not read again. */
	for (size_t i = 0; i < 3; i++) {
		floe_free(p->alloc, p->kf[i].path);
		floe_secret_free(p->alloc, p->fixed[i]);
		p->kf[i].path = p->fixed[i] = NULL;
		p->kf[i].loaded = false;
	}
	p->nkf = 0;
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
