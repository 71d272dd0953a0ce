/* Opening a configured warehouse: a local directory, or an S3 bucket with credentials
 * from the configuration's references, the environment or the shared credentials file,
 * checked to honour conditional creates before floe trusts it with commits. */
#include "warehouse.h"

#include "agent/config/config.h"
#include "formats/base/error.h"
#include "formats/base/limits.h"
#include "platform/clock.h"
#include "platform/log.h"
#include "platform/path.h"
#include "platform/store.h"
#ifndef FLOE_NO_S3
#include "platform/s3/s3.h"
#include "platform/s3/s3_credentials.h"
#include "platform/s3/s3_credprov.h"
#include "platform/s3/store_s3.h"
#include "platform/secret.h"
#endif

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#ifndef FLOE_NO_S3
/* The sources of lake.s3.credentials as provider bits, in the order given; the
 * configuration's own keys alone when it names them (the sources are "without
 * access_key_id": a key file that is away must not let another source's keys in, which
 * would then be kept while the file comes back). */
static unsigned credential_sources(const struct floe_config *cfg, unsigned order[6])
{
	static const struct {
		const char *name;
		unsigned bit;
	} map[] = {{"env", FLOE_S3_CREDPROV_ENV},
		   {"file", FLOE_S3_CREDPROV_SHARED_FILE},
		   {"web_identity", FLOE_S3_CREDPROV_WEB_IDENTITY},
		   {"container", FLOE_S3_CREDPROV_CONTAINER},
		   {"imds", FLOE_S3_CREDPROV_IMDS}};
	unsigned bits = FLOE_S3_CREDPROV_STATIC;
	size_t n = 0;
	order[n++] = FLOE_S3_CREDPROV_STATIC;
	if (cfg->lake.s3.access_key_id || cfg->lake.s3.secret_access_key) {
		order[n] = 0;
		return bits;
	}
	for (size_t i = 0; i < cfg->lake.s3.ncredentials && n < 6; i++)
		for (size_t k = 0; k < sizeof(map) / sizeof(map[0]); k++)
			if (strcmp(cfg->lake.s3.credentials[i], map[k].name) == 0) {
				bits |= map[k].bit;
				order[n++] = map[k].bit;
			}
	return bits;
}

/* Credentials for S3: the configuration's references (env:NAME, file:/path) when given,
 * else the sources of lake.s3.credentials in their order (environment, shared credentials
 * file, web identity token, container endpoint, EC2 IMDSv2), refreshed before they
 * expire. With local, the sources the environment sets up to use the network are left
 * out (floe check): the others run as for the agent, with the same messages. An env:
 * reference that does not resolve, or no credentials from any source, is a configuration
 * error (FLOE_EINVAL: exit 2, so that systemd does not restart a host that cannot work
 * until someone fixes it): the environment needs a restart anyway. What may come right
 * without anyone at the device is not (FLOE_S3_EUNAVAILABLE): a remote source that does
 * not answer (a device that boots offline), and a file: reference's file that is missing,
 * unreadable or being written (provisioned after boot, by an enrolment or Vault agent, a
 * mount, LoadCredential=); the provider reads such files again whenever they change. The
 * provider is kept and asked again by every request, so the agent starts, spools, and its
 * committer waits for the keys as it waits for the network. *waiting (may be NULL) says
 * so, with the reasons in err. */
static int s3_credprov(struct floe_alloc *a, const struct floe_config *cfg, bool local,
		       struct floe_s3_credprov **out, bool *waiting, struct floe_err *err)
{
	struct floe_aws_credentials c;
	memset(&c, 0, sizeof(c));
	c.alloc = a;
	const char *refs[3] = {cfg->lake.s3.access_key_id, cfg->lake.s3.secret_access_key,
			       cfg->lake.s3.session_token};
	char **dst[3] = {&c.access_key_id, &c.secret_access_key, &c.session_token};
	bool given = refs[0] || refs[1];
	struct floe_s3_credprov_options po;
	memset(&po, 0, sizeof(po));
	if (waiting)
		*waiting = false;
	for (int i = 0; given && i < 3; i++) {
		if (!refs[i])
			continue;
		if (strncmp(refs[i], "file:", 5) == 0) {
			/* Read by the provider, and again whenever the file changes. */
			po.key_files[i] = refs[i] + 5;
			continue;
		}
		int rc = floe_secret_resolve(a, refs[i], dst[i]);
		if (rc) {
			floe_aws_credentials_fini(&c);
			return floe_err_set(err, rc == FLOE_ENOMEM ? rc : FLOE_EINVAL,
					    "lake.s3: cannot resolve %s: %s", refs[i],
					    rc == -ENOENT && refs[i][0] == 'e'
						? "the environment variable is not set"
						: floe_strerror(rc));
		}
	}
	po.alloc = a;
	po.static_credentials = given ? &c : NULL;
	po.providers = credential_sources(cfg, po.order);
	if (local)
		po.providers &= ~floe_s3_credprov_networked(po.providers);
	po.profile = cfg->lake.s3.profile;
	po.sts_region = cfg->lake.s3.region;
	int rc = floe_s3_credprov_new(&po, out);
	floe_aws_credentials_fini(&c);
	if (rc)
		return floe_err_set(err, rc, "cannot set up S3 credentials: %s", floe_strerror(rc));
	/* Ask once now, so that a host without credentials fails at start-up with the
	 * reasons of every provider rather than at the first commit. */
	struct floe_aws_credentials probe;
	memset(&probe, 0, sizeof(probe));
	struct floe_err reasons = {0};
	rc = floe_s3_credprov_get(*out, floe_clock_now_us() / 1000000, &probe, NULL, &reasons);
	floe_aws_credentials_fini(&probe);
	/* Without the network (local), only a key file can be waited for: every other
	 * source check asks answers from this host. */
	if (rc == FLOE_S3_EUNAVAILABLE && (!local || given)) {
		const char *then = local ? "floe run starts without them, reads into the spool, "
					   "and commits once they are"
					 : "the agent starts, reads into the spool, and asks again "
					   "before each request";
		struct floe_err w = {0};
		floe_err_set(&w, rc, "S3 credentials are not available yet (%.600s); %s",
			     reasons.msg, then);
		if (waiting)
			*waiting = true;
		if (local && err)
			*err = w;
		else if (!local)
			floe_warn("%s", w.msg);
		return 0;
	}
	if (rc) {
		floe_s3_credprov_free(*out);
		*out = NULL;
		if (rc == FLOE_S3_EAUTH)
			rc = FLOE_EINVAL;
		floe_err_set(err, rc, "no S3 credentials: %.768s",
			     rc == FLOE_S3_ESTOPPED ? floe_strerror(rc) : reasons.msg);
	}
	return rc;
}

static int open_s3_with(struct floe_alloc *a, const struct floe_config *cfg, const char *bucket,
			const char *prefix, const char *what, const struct floe_warehouse_vended *v,
			struct floe_s3_credprov *prov, struct floe_store **out, struct floe_err *err);

/* An S3 store over bucket/prefix with lake.s3's endpoint, options and credentials, or
 * with what a catalog vended (v, may be NULL); what names it in messages. */
static int open_s3(struct floe_alloc *a, const struct floe_config *cfg, const char *bucket,
		   const char *prefix, const char *what, const struct floe_warehouse_vended *v,
		   struct floe_store **out, struct floe_err *err)
{
	if (v && (v->credprov || v->sign_fn))
		return open_s3_with(a, cfg, bucket, prefix, what, v, floe_s3_credprov_ref(v->credprov), out, err);
	if (cfg->lake.s3.cleartext)
		floe_warn("lake.s3.endpoint %s is plain HTTP to a host that is not loopback "
			  "(lake.s3.allow_http): requests, data and any session token cross the "
			  "network unencrypted",
			  cfg->lake.s3.endpoint);
	struct floe_s3_credprov *prov = NULL;
	int rc = s3_credprov(a, cfg, false, &prov, NULL, err);
	if (rc)
		return rc;
	return open_s3_with(a, cfg, bucket, prefix, what, v, prov, out, err);
}

/* open_s3 with the credentials of prov (a reference this takes over), and the endpoint,
 * region and addressing v vended where it has them. */
static int open_s3_with(struct floe_alloc *a, const struct floe_config *cfg, const char *bucket,
			const char *prefix, const char *what, const struct floe_warehouse_vended *v,
			struct floe_s3_credprov *prov, struct floe_store **out, struct floe_err *err)
{
	int rc;
	struct floe_s3_options o;
	memset(&o, 0, sizeof(o));
	o.alloc = a;
	o.endpoint = v && v->endpoint ? v->endpoint : cfg->lake.s3.endpoint;
	o.region = v && v->region ? v->region : cfg->lake.s3.region;
	o.bucket = bucket;
	o.path_style = v && v->path_style >= 0 ? v->path_style != 0 : cfg->lake.s3.path_style;
	o.credprov = prov;
	if (v && v->sign_fn) {
		o.sign_fn = v->sign_fn;
		o.sign_ctx = v->sign_ctx;
	}
	o.ca_file = cfg->lake.s3.ca_file;
	o.request_timeout_ms = (int64_t)cfg->lake.s3.request_timeout_ms;
	o.min_rate = (int64_t)cfg->lake.s3.min_rate;
	o.multipart_threshold = (int64_t)cfg->lake.s3.multipart_threshold;
	o.part_size = (int64_t)cfg->lake.s3.part_size;
	rc = floe_store_s3_new(&o, prefix, out);
	floe_s3_credprov_free(prov); /* the client holds its own reference */
	if (rc)
		return floe_err_set(err, rc, "cannot use S3 warehouse %s: %s", what, floe_strerror(rc));
	return 0;
}

#endif

/* Opens the warehouse's store: a local directory, or S3 after checking that the store
 * honours conditional creates (the commit point of catalog-less tables). */
int floe_warehouse_open(struct floe_alloc *a, const struct floe_config *cfg, bool probe,
			struct floe_store **out, struct floe_err *err)
{
	int rc;
	if (cfg->lake.catalog != FLOE_CATALOG_S3) {
		char abs[FLOE_PATH_MAX];
		if ((rc = floe_path_absolute(cfg->lake.warehouse, abs, sizeof(abs))) == 0)
			rc = floe_store_local_new(a, abs, out);
		if (rc)
			floe_err_set(err, rc, "cannot use warehouse %s: %s", cfg->lake.warehouse,
				     floe_strerror(rc));
		return rc;
	}
#ifdef FLOE_NO_S3
	/* A build without the S3 client (FLOE_WITH_S3=OFF or FLOE_STATIC): a configuration it
	 * cannot serve. */
	return floe_err_set(err, FLOE_EINVAL,
			    "lake.warehouse %s: this build of floe has no S3 support (it was built "
			    "with FLOE_WITH_S3=OFF or FLOE_STATIC); use a local warehouse, or a "
			    "floe built with S3",
			    cfg->lake.warehouse);
#else
	if ((rc = open_s3(a, cfg, cfg->lake.s3_bucket, cfg->lake.s3_prefix, cfg->lake.warehouse, NULL, out, err)))
		return rc;
	if (!probe)
		return 0;
	if ((rc = floe_warehouse_probe(*out, cfg, NULL, err))) {
		floe_store_free(*out);
		*out = NULL;
	}
	return rc;
#endif
}

int floe_warehouse_open_location(struct floe_alloc *a, const struct floe_config *cfg, const char *location,
				 const struct floe_warehouse_vended *v, struct floe_store **out,
				 struct floe_err *err)
{
	const char *p = location;
	if (strncmp(p, "s3://", 5) == 0) {
#ifdef FLOE_NO_S3
		(void)a;
		(void)cfg;
		(void)v;
		(void)out;
		return floe_err_set(err, FLOE_EUNSUPPORTED, "%s: this build of floe has no S3 support", location);
#else
		char bucket[64];
		size_t blen = strcspn(p + 5, "/");
		if (blen == 0 || blen >= sizeof(bucket))
			return floe_err_set(err, FLOE_EUNSUPPORTED, "%s: not an s3://BUCKET/PREFIX location", location);
		memcpy(bucket, p + 5, blen);
		bucket[blen] = '\0';
		const char *prefix = p[5 + blen] ? p + 5 + blen + 1 : "";
		char pre[FLOE_PATH_MAX];
		size_t n = strlen(prefix);
		while (n > 0 && prefix[n - 1] == '/')
			n--;
		if (n >= sizeof(pre))
			return floe_err_set(err, FLOE_ELIMIT, "%s: the location is too long", location);
		memcpy(pre, prefix, n);
		pre[n] = '\0';
		return open_s3(a, cfg, bucket, pre, location, v, out, err);
#endif
	}
	char path[FLOE_PATH_MAX];
	if (floe_path_from_uri(location, path, sizeof(path)) || path[0] != '/')
		return floe_err_set(err, FLOE_EUNSUPPORTED,
				    "%s: floe writes to a local directory (file:// or an absolute path) or "
				    "to s3://BUCKET/PREFIX",
				    location);
	int rc = floe_store_local_new(a, path, out);
	return rc ? floe_err_set(err, rc, "cannot use %s: %s", location, floe_strerror(rc)) : 0;
}

bool floe_warehouse_waited_out(int rc)
{
	/* What only the store can say: it cannot be reached or refuses for now. Fixed on the
	 * other side (the network, the server, a bucket made, a policy granted), none needs
	 * the device touched, so the agent keeps reading into the spool meanwhile. A store
	 * that breaks the protocol (refuses every conditional create, or lists without end)
	 * is not one floe can commit to: that stops the agent, saying so. */
	if (rc == FLOE_EGONE || rc == FLOE_ENEWID)
		return true; /* a mount not up yet; agent.replaces to set (floe_table_open) */
	/* A local warehouse's disk full (at the start, a table cannot even be created) or
	 * mounted read-only after an error: the device need not stop reading for that, its
	 * spool takes the lines until space is freed or the mount is writable again. */
	if (rc == -ENOSPC || rc == -EDQUOT || rc == -EROFS)
		return true;
	return rc <= FLOE_S3_EPRECONDITION && rc >= FLOE_S3_ELOWEST && rc != FLOE_S3_EREFUSED &&
	       rc != FLOE_S3_ELOOP && rc != FLOE_S3_ESTOPPED;
}

int floe_warehouse_probe(struct floe_store *st, const struct floe_config *cfg,
			 const char *installation, struct floe_err *err)
{
	if (cfg->lake.catalog != FLOE_CATALOG_S3)
		return 0;
#ifdef FLOE_NO_S3
	(void)st;
	(void)err;
	return 0;
#else
	int rc;
	/* The probe removes its key before and after. A bucket whose policy denies DELETE
	 * keeps it: named by the installation (one agent at a time per state_dir, so the key
	 * is this process's own), that is one object however many starts (a --once timer's,
	 * 1,440 a day), and a start that finds it there gets the store's 412 for it, which is
	 * the proof sought. Without an installation (floe maintain, whose job needs DELETE
	 * anyway), 64 random bits keep the key this process's own among agents sharing an
	 * id. */
	char probe_key[256], nonce_hex[17];
	if (!installation) {
		uint64_t nonce = 0;
		floe_random_bytes(&nonce, sizeof(nonce));
		snprintf(nonce_hex, sizeof(nonce_hex), "%016" PRIx64, nonce);
		installation = nonce_hex;
	}
	snprintf(probe_key, sizeof(probe_key), "%s/%s/metadata/.floe-probe-%s-%s",
		 cfg->lake.namespace, cfg->logs.name, cfg->agent.id, installation);
	rc = floe_store_probe_conditional(st, probe_key);
	if (rc == -ENOTSUP)
		floe_err_set(err, rc,
			     "the S3 store at %s ignores If-None-Match: a second conditional create "
			     "succeeded, so it cannot arbitrate commits; use a store that honours "
			     "conditional writes or a REST catalog",
			     cfg->lake.s3.endpoint);
	else if (rc == FLOE_S3_EREFUSED)
		floe_err_set(err, rc,
			     "the S3 store at %s refuses every conditional create (412 for a key that "
			     "does not exist), so floe cannot commit to %s; use a store that honours "
			     "If-None-Match: * or a REST catalog",
			     cfg->lake.s3.endpoint, cfg->lake.warehouse);
	else if (rc && floe_store_s3_last_error(st)[0])
		floe_err_set(err, rc, "cannot reach the S3 warehouse %s: %s: %s", cfg->lake.warehouse,
			     floe_strerror(rc), floe_store_s3_last_error(st));
	else if (rc)
		floe_err_set(err, rc, "cannot reach the S3 warehouse %s: %s", cfg->lake.warehouse,
			     floe_strerror(rc));
	if (rc)
		return rc;
	/* Parts of uploads a crashed run left behind cost storage until aborted. Other agents
	 * share the data prefix, so only day-old uploads are taken for abandoned. */
	char data_prefix[512];
	size_t aborted = 0;
	snprintf(data_prefix, sizeof(data_prefix), "%s/%s/data/", cfg->lake.namespace, cfg->logs.name);
	int arc = floe_store_s3_abort_stale_uploads(st, data_prefix, 24 * 3600, &aborted);
	if (arc)
		floe_warn("warehouse: listing stale multipart uploads failed: %s", floe_strerror(arc));
	else if (aborted)
		floe_info("warehouse: aborted %zu stale multipart uploads under %s", aborted, data_prefix);
	return 0;
#endif
}

int floe_warehouse_check_credentials(const struct floe_config *cfg, bool *remote,
				     struct floe_err *err)
{
	*remote = false;
	if (cfg->lake.catalog != FLOE_CATALOG_S3)
		return 0;
#ifdef FLOE_NO_S3
	(void)err;
	return 0;
#else
	unsigned order[6];
	bool refs = cfg->lake.s3.access_key_id || cfg->lake.s3.secret_access_key;
	bool networked = floe_s3_credprov_networked(credential_sources(cfg, order)) != 0;
	struct floe_s3_credprov *prov = NULL;
	struct floe_err e = {0};
	bool waiting = false;
	int rc = s3_credprov(NULL, cfg, true, &prov, &waiting, &e);
	floe_s3_credprov_free(prov);
	if (rc == 0) {
		if (waiting && err)
			*err = e; /* a key file run waits for: the warning */
		return 0;
	}
	/* Without references, FLOE_EINVAL is "no credentials from the sources asked": the
	 * agent may still get them from one that check left out. */
	if (!refs && networked && rc == FLOE_EINVAL) {
		*remote = true;
		return 0;
	}
	if (err)
		*err = e;
	return rc;
#endif
}

int floe_warehouse_credprov(struct floe_alloc *a, const struct floe_config *cfg, struct floe_s3_credprov **out,
			    struct floe_err *err)
{
	*out = NULL;
#ifdef FLOE_NO_S3
	(void)a;
	(void)cfg;
	return floe_err_set(err, -ENOTSUP, "this build of floe has no S3 client");
#else
	return s3_credprov(a, cfg, false, out, NULL, err);
#endif
}
