/* The REST catalog client (catalog_rest.h): its operations (configure, create, load,
 * commit) and the storage credentials a catalog vends; each request goes through the one
 * exchange of catalog_rest_http.c. */
#include "agent/lake/catalog_rest.h"

#include "agent/config/config.h"
#include "agent/env/env.h"
#include "agent/lake/catalog_rest_impl.h"
#include "agent/lake/catalog_rest_sign.h"
#include "agent/lake/warehouse.h"
#include "formats/aws/credentials.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"
#include "formats/base/wipe.h"
#include "formats/iceberg/metadata.h"
#include "formats/iceberg/rest.h"
#include "platform/http.h"
#include "platform/log.h"
#ifndef FLOE_NO_S3
#include "platform/s3/s3.h"
#include "platform/s3/s3_credprov.h"
#endif
#include "platform/secret.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int floe_catalog_rest_check(struct floe_alloc *a, const struct floe_config *cfg, struct floe_err *err)
{
	const char *ref = cfg->lake.rest.credential ? cfg->lake.rest.credential : cfg->lake.rest.token;
	const char *key = cfg->lake.rest.credential ? "credential" : "token";
	if (!ref)
		return 0;
	char *v = NULL;
	int rc = floe_secret_resolve(a, ref, &v);
	if (rc)
		return floe_err_set(err, rc == FLOE_ENOMEM ? rc : FLOE_EINVAL,
				    "lake.catalog.%s: cannot resolve %s: %s", key, ref,
				    rc == -ENOENT && ref[0] == 'e' ? "the environment variable is not set"
								  : floe_strerror(rc));
	/* Said without the value, which is the secret. */
	const char *colon = cfg->lake.rest.credential ? strchr(v, ':') : NULL;
	if (cfg->lake.rest.credential && (!colon || colon == v || !colon[1]))
		rc = floe_err_set(err, FLOE_EINVAL,
				  "lake.catalog.credential: %s does not hold client_id:client_secret", ref);
	for (const char *p = v; rc == 0 && *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			rc = floe_err_set(err, FLOE_EINVAL, "lake.catalog.%s: %s holds a control character",
					  key, ref);
	floe_secret_free(a, v);
	return rc;
}

int floe_catalog_rest_new(struct floe_alloc *a, const struct floe_config *cfg,
			  const struct floe_clock *clock, const struct floe_rand *rand,
			  struct floe_catalog_rest **out, struct floe_err *err)
{
	struct floe_catalog_rest *c = floe_calloc(a, 1, sizeof(*c));
	if (!c)
		return floe_err_set(err, FLOE_ENOMEM, "%s", floe_strerror(FLOE_ENOMEM));
	int rc = floe_catalog_rest_check(a, cfg, err);
	if (rc) {
		floe_free(a, c);
		return rc;
	}
	c->a = a;
	c->cfg = cfg;
	c->clock = clock ? clock : floe_env_clock();
	c->rand = rand ? rand : floe_env_rand();
	snprintf(c->nsbuf, sizeof(c->nsbuf), "%s", cfg->lake.rest.namespace ? cfg->lake.rest.namespace : "default");
	for (char *p = c->nsbuf; p && c->nns < MAX_LEVELS;) {
		c->ns[c->nns++] = p;
		if ((p = strchr(p, '.')))
			*p++ = '\0';
	}
	snprintf(c->what, sizeof(c->what), "the REST catalog %s (namespace %s)", cfg->lake.rest.uri,
		 cfg->lake.rest.namespace ? cfg->lake.rest.namespace : "default");
	if ((rc = floe_http_new(a, &c->http))) {
		floe_free(a, c);
		return floe_err_set(err, rc, "%s: no HTTP client: %s", cfg->lake.rest.uri,
				    rc == -ENOTSUP ? "libcurl could not be loaded" : floe_strerror(rc));
	}
	if ((rc = floe_rest_signer_new(a, cfg, &c->signer, err))) {
		floe_http_free(c->http);
		floe_free(a, c);
		return rc;
	}
	*out = c;
	return 0;
}

void floe_catalog_rest_free(struct floe_catalog_rest *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < VENDED_MAX; i++) {
		floe_aws_credentials_fini(&c->vend[i].creds);
#ifndef FLOE_NO_S3
		floe_s3_credprov_free(c->vend[i].prov);
#endif
	}
	floe_catalog_rest_drop_token(c);
	floe_rest_signer_free(c->signer);
	floe_rest_config_free(c->conf);
	floe_http_free(c->http);
	floe_free(c->a, c);
}

const char *floe_catalog_rest_what(const struct floe_catalog_rest *c)
{
	return c->what;
}

static struct vended *vended_at(struct floe_catalog_rest *c, const char *location)
{
	for (size_t i = 0; i < VENDED_MAX; i++)
		if (c->vend[i].location[0] && strcmp(c->vend[i].location, location) == 0)
			return &c->vend[i];
	return NULL;
}

#ifndef FLOE_NO_S3
static int path_of(struct floe_catalog_rest *c, const char *table, const char *suffix, struct floe_buf *out,
		   struct floe_err *err);

/* A header of the catalog's signed request, added unless the request carries it already
 * (the catalog answers with every header, those it was given included). */
struct sign_add {
	floe_s3_sign_add_fn add;
	void *ctx;
	const struct floe_s3_to_sign *in;
};

static int sign_header(void *ctx, const char *name, const char *value)
{
	const struct sign_add *s = ctx;
	for (size_t i = 0; i < s->in->nheaders; i++)
		if (strcasecmp(s->in->headers[i].name, name) == 0)
			return 0;
	return s->add(s->ctx, name, value);
}

/* The S3 client's signer for a location with s3.remote-signing-enabled: POST
 * .../tables/{table}/sign with the request (a RemoteSignRequest), with the catalog's own
 * credentials; the answer's headers authorize it. A refusal (401/403/419) is
 * FLOE_S3_EAUTH, a catalog away its code: the upload fails unsent, and its data stays in
 * the spool for the next try. */
static int remote_sign(void *ctx, const struct floe_s3_to_sign *in, floe_s3_sign_add_fn add, void *add_ctx)
{
	struct vended *v = ctx;
	struct floe_catalog_rest *c = v->c;
	struct floe_rest_header h[16];
	size_t nh = 0;
	for (size_t i = 0; i < in->nheaders && nh < 16; i++)
		h[nh++] = (struct floe_rest_header){in->headers[i].name, in->headers[i].value};
	struct floe_buf body, p;
	struct floe_http_resp r = {0};
	struct floe_err e = {0};
	bool sent;
	floe_buf_init(&body, c->a, 64u << 10);
	floe_buf_init(&p, c->a, 4096);
	struct floe_rest_sign_in si = {in->region, in->url,	   in->method,	   h,
				       nh,	   v->sign_props, v->nsign_props, in->body,
				       in->body_len};
	int rc = floe_rest_sign_request(&si, &body);
	if (rc)
		floe_err_set(&e, rc, "the sign request: %s", floe_strerror(rc));
	if (rc == 0 && (v->sign_url[0] || (rc = path_of(c, v->name, "/sign", &p, &e)) == 0)) {
		struct rest_call k = {.method = "POST",
				      .path = v->sign_url[0] ? v->sign_url : (const char *)p.data,
				      .body = (const char *)body.data,
				      .body_len = body.len,
				      .extra = v->sign_headers,
				      .nextra = v->nsign_headers,
				      .max = CONFIG_MAX};
		rc = floe_catalog_rest_call(c, &k, &r, &sent, &e);
	}
	if (rc == 0 && r.status != 200)
		rc = floe_catalog_rest_status(c, "signing an S3 request", &r, &e);
	struct sign_add sa = {add, add_ctx, in};
	if (rc == 0 && (rc = floe_rest_sign_result_parse(c->a, r.data ? r.data : "", r.len, CONFIG_MAX, sign_header,
							 &sa, &e)) == FLOE_EFORMAT)
		rc = FLOE_S3_EPROTO;
	if (rc)
		floe_error("catalog: %s did not sign the S3 request %s %s: %s", c->what, in->method, in->url,
			   floe_err_text(&e, rc));
	floe_http_resp_fini(&r);
	floe_buf_fini(&p);
	floe_buf_fini(&body);
	return rc;
}
#endif

int floe_catalog_rest_open_store(struct floe_catalog_rest *c, const char *location, struct floe_store **out,
				 struct floe_err *err)
{
	struct vended *v = vended_at(c, location);
	if (!v || (!v->creds.access_key_id && !v->remote))
		return floe_warehouse_open_location(c->a, c->cfg, location, NULL, out, err);
#ifdef FLOE_NO_S3
	return floe_warehouse_open_location(c->a, c->cfg, location, NULL, out, err);
#else
	if (v->remote) {
		struct floe_warehouse_vended w = {.endpoint = v->endpoint[0] ? v->endpoint : NULL,
						  .region = v->region[0] ? v->region : NULL,
						  .path_style = v->path_style,
						  .sign_fn = remote_sign,
						  .sign_ctx = v};
		return floe_warehouse_open_location(c->a, c->cfg, location, &w, out, err);
	}
	if (!v->prov) {
		struct floe_s3_credprov_options o = {.alloc = c->a,
						     .providers = FLOE_S3_CREDPROV_STATIC,
						     .static_credentials = &v->creds};
		int rc = floe_s3_credprov_new(&o, &v->prov);
		if (rc == 0)
			rc = floe_s3_credprov_set_static(v->prov, &v->creds, v->expires_ms / 1000);
		if (rc)
			return floe_err_set(err, rc, "%s: the vended credentials: %s", location, floe_strerror(rc));
	}
	struct floe_warehouse_vended w = {.credprov = v->prov,
					  .endpoint = v->endpoint[0] ? v->endpoint : NULL,
					  .region = v->region[0] ? v->region : NULL,
					  .path_style = v->path_style};
	return floe_warehouse_open_location(c->a, c->cfg, location, &w, out, err);
#endif
}

/* The remote-signing-config's members into v's lists, copied into v->sign_buf. */
struct sign_fill {
	struct vended *v;
	size_t used;
	bool full;
};

static const char *sign_keep(struct sign_fill *f, const char *a, const char *sep, const char *b)
{
	char *at = f->v->sign_buf + f->used;
	int n = snprintf(at, sizeof(f->v->sign_buf) - f->used, "%s%s%s", a, sep, b);
	if (n < 0 || (size_t)n >= sizeof(f->v->sign_buf) - f->used)
		return NULL;
	f->used += (size_t)n + 1;
	return at;
}

static int sign_member(void *ctx, char kind, const char *name, const char *value)
{
	struct sign_fill *f = ctx;
	struct vended *v = f->v;
	/* A header line of the catalog's making must stay one header line. */
	if (strpbrk(name, "\r\n") || strpbrk(value, "\r\n") || (kind == 'h' && (!*name || strchr(name, ':')))) {
		f->full = true;
		return 0;
	}
	if (kind == 'h') {
		const char *hv = v->nsign_headers < SIGN_EXTRA_MAX ? sign_keep(f, name, ": ", value) : NULL;
		if (hv)
			v->sign_headers[v->nsign_headers++] = hv;
		f->full |= !hv;
		return 0;
	}
	const char *k = v->nsign_props < SIGN_EXTRA_MAX ? sign_keep(f, name, "", "") : NULL;
	const char *val = k ? sign_keep(f, value, "", "") : NULL;
	if (val)
		v->sign_props[v->nsign_props++] = (struct floe_rest_header){k, val};
	f->full |= !val;
	return 0;
}

/* Where and how v's requests are signed: the remote-signing-config's properties and
 * headers, passed through unchanged; the endpoint from the deprecated signer.endpoint
 * (absolute, or resolved against signer.uri, else the catalog's URI; also spelled
 * s3.signer.*), else the table's own /sign. An answer without a config (a commit's)
 * leaves them as they were. */
static void take_signing(struct floe_catalog_rest *c, struct vended *v, const struct floe_rest_table *t,
			 const char *location)
{
	if (!floe_rest_table_has_config(t))
		return;
	static const char *const EP[] = {"signer.endpoint", "s3.signer.endpoint", NULL};
	static const char *const URI[] = {"signer.uri", "s3.signer.uri", NULL};
	const char *ep = floe_rest_table_setting(t, location, c->conf, EP);
	const char *base = floe_rest_table_setting(t, location, c->conf, URI);
	v->sign_url[0] = '\0';
	if (ep && strstr(ep, "://"))
		snprintf(v->sign_url, sizeof(v->sign_url), "%s", ep);
	else if (ep || base) {
		/* Java's signer client's default path, where only the base is given. */
		const char *b = base ? base : c->cfg->lake.rest.uri, *e = ep ? ep : "v1/aws/s3/sign";
		size_t bl = strlen(b);
		bool slash = bl && b[bl - 1] == '/';
		if (*e == '/' && slash)
			e++;
		snprintf(v->sign_url, sizeof(v->sign_url), "%s%s%s", b, slash || *e == '/' ? "" : "/", e);
	}
	struct sign_fill f = {v, 0, false};
	v->nsign_props = v->nsign_headers = 0;
	floe_rest_table_signing(t, sign_member, &f);
	if (f.full)
		floe_warn("catalog: %s: the remote-signing-config of %s holds more than floe passes on (%d "
			  "properties, %d headers, %zu bytes) or a line break: the rest is left out",
			  c->what, location, SIGN_EXTRA_MAX, SIGN_EXTRA_MAX, sizeof(v->sign_buf));
	if (v->sign_url[0])
		floe_info("catalog: %s: S3 requests for %s are signed at %s", c->what, location, v->sign_url);
}

/* Takes what t vends for table name's location (nothing when it vends no keys): kept for
 * the store opened there, and handed to that store's credentials at once. */
static int take_vended(struct floe_catalog_rest *c, const char *name, const struct floe_rest_table *t,
		       const char *location, struct floe_err *err)
{
	const char *ak = floe_rest_table_storage(t, location, "s3.access-key-id");
	const char *sk = floe_rest_table_storage(t, location, "s3.secret-access-key");
	static const char *const RS[] = {"s3.remote-signing-enabled", NULL};
	const char *rs = floe_rest_table_setting(t, location, c->conf, RS);
	bool remote = rs && strcmp(rs, "true") == 0;
	if ((!remote && (!ak || !sk || !*ak || !*sk)) || strlen(name) >= sizeof(c->vend[0].name) ||
	    strlen(location) >= sizeof(c->vend[0].location))
		return 0;
	struct vended *v = vended_at(c, location);
	for (size_t i = 0; !v && i < VENDED_MAX; i++)
		if (!c->vend[i].location[0])
			v = &c->vend[i];
	if (!v)
		return floe_err_set(err, FLOE_ELIMIT, "%s: more than %d tables with vended credentials",
				    c->what, VENDED_MAX);
	struct floe_aws_credentials n;
	memset(&n, 0, sizeof(n));
	v->remote = remote;
	v->c = c;
	/* Remote signing: no key at all; the catalog signs each request (remote_sign). */
	int rc = remote ? 0
			: floe_aws_credentials_set(c->a, ak, sk, floe_rest_table_storage(t, location, "s3.session-token"),
						   &n);
	if (rc)
		return floe_err_set(err, rc, "%s: the vended credentials: %s", c->what, floe_strerror(rc));
	floe_aws_credentials_fini(&v->creds);
	v->creds = n;
	snprintf(v->name, sizeof(v->name), "%s", name);
	snprintf(v->location, sizeof(v->location), "%s", location);
	/* The keys and their expiry come from one source; where to send them may come from
	 * any: a credential that holds only keys leaves the endpoint to the table's config,
	 * the catalog's, then lake.s3's (floe_warehouse_open_location). */
	static const char *const EP[] = {"s3.endpoint", NULL};
	static const char *const RG[] = {"client.region", "s3.region", NULL};
	static const char *const PS[] = {"s3.path-style-access", NULL};
	const char *ep = floe_rest_table_setting(t, location, c->conf, EP);
	const char *rg = floe_rest_table_setting(t, location, c->conf, RG);
	const char *ps = floe_rest_table_setting(t, location, c->conf, PS);
	const char *ex = floe_rest_table_storage(t, location, "s3.session-token-expires-at-ms");
	snprintf(v->endpoint, sizeof(v->endpoint), "%s", ep ? ep : "");
	snprintf(v->region, sizeof(v->region), "%s", rg ? rg : "");
	v->path_style = ps ? strcmp(ps, "true") == 0 : -1;
	v->expires_ms = ex ? strtoll(ex, NULL, 10) : 0;
	if (v->expires_ms < 0)
		v->expires_ms = 0;
	v->expires_mono_ms = floe_rest_vended_mono(v->expires_ms, c->clock->wall_us(c->clock->ctx) / 1000,
						   c->clock->mono_us(c->clock->ctx) / 1000);
#ifndef FLOE_NO_S3
	if (!remote && v->prov && (rc = floe_s3_credprov_set_static(v->prov, &v->creds, v->expires_ms / 1000)))
		return floe_err_set(err, rc, "%s: the vended credentials: %s", c->what, floe_strerror(rc));
#endif
	if (remote)
		take_signing(c, v, t, location);
	floe_debug("catalog: %s %s for %s%s", c->what, remote ? "signs the S3 requests" : "vends storage credentials",
		   location, v->expires_ms ? " (expiring)" : "");
	return 0;
}

/* Whether table name's vended credentials expire within VENDED_MARGIN_MS (by either
 * clock: floe_rest_vended_due): the load that starts each commit then takes the table
 * whole (not 304), with new ones, before the commit's uploads. */
static bool vended_expiring(struct floe_catalog_rest *c, const char *name)
{
	int64_t now_ms = c->clock->wall_us(c->clock->ctx) / 1000;
	int64_t mono_ms = c->clock->mono_us(c->clock->ctx) / 1000;
	for (size_t i = 0; i < VENDED_MAX; i++) {
		const struct vended *v = &c->vend[i];
		if (v->location[0] && strcmp(v->name, name) == 0 && floe_rest_vended_due(v, now_ms, mono_ms))
			return true;
	}
	return false;
}


/* GET /v1/config once: the prefix (the configured one wins) and the endpoints. */
static int configure(struct floe_catalog_rest *c, struct floe_err *err)
{
	if (c->conf && !c->conf_stale)
		return 0;
	const char *wh = c->cfg->lake.rest.warehouse;
	struct rest_call k = {.method = "GET",
			 .path = "/v1/config",
			 .qname = wh ? "warehouse" : NULL,
			 .qvalue = wh,
			 .max = CONFIG_MAX};
	struct floe_http_resp r = {0};
	bool sent;
	int rc = floe_catalog_rest_call(c, &k, &r, &sent, err);
	if (rc == 0 && r.status != 200)
		rc = floe_catalog_rest_status(c, "GET /v1/config", &r, err);
	struct floe_err pe;
	struct floe_rest_config *conf = NULL;
	if (rc == 0 && (rc = floe_rest_config_parse(c->a, r.data ? r.data : "", r.len, CONFIG_MAX, NULL, 0,
						     &conf, &pe)))
		rc = floe_err_set(err, FLOE_S3_EPROTO, "%s: /v1/config: %s", c->cfg->lake.rest.uri,
				  floe_err_text(&pe, rc));
	floe_http_resp_fini(&r);
	if (rc)
		return rc; /* a stale one stays stale: read again at the next try */
	const char *pre = c->cfg->lake.rest.prefix ? c->cfg->lake.rest.prefix : floe_rest_config_get(conf, "prefix");
	char prefix[sizeof(c->prefix)];
	if (floe_fmt(prefix, sizeof(prefix), "%s", pre ? pre : "")) {
		floe_rest_config_free(conf);
		return floe_err_set(err, FLOE_ELIMIT, "the catalog's prefix is too long");
	}
	/* Read again after a failure: what the catalog says now replaces what it said. A
	 * new prefix may be a new warehouse, whose namespace is asked for again. */
	if (c->conf && strcmp(prefix, c->prefix) != 0) {
		floe_info("catalog: %s: the catalog's prefix is now '%s' (was '%s')", c->cfg->lake.rest.uri, prefix,
			  c->prefix);
		c->ns_made = false;
	}
	floe_rest_config_free(c->conf);
	c->conf = conf;
	c->conf_stale = false;
	memcpy(c->prefix, prefix, sizeof(prefix));
	return 0;
}

static int serves(struct floe_catalog_rest *c, const char *endpoint, struct floe_err *err)
{
	if (floe_rest_config_serves(c->conf, endpoint))
		return 0;
	return floe_err_set(err, FLOE_EUNSUPPORTED, "%s does not serve %s (its /v1/config lists the endpoints it serves)",
			    c->cfg->lake.rest.uri, endpoint);
}

/* The path of the namespace (table NULL) or of a table in it, with suffix. */
static int path_of(struct floe_catalog_rest *c, const char *table, const char *suffix, struct floe_buf *out,
		   struct floe_err *err)
{
	const char *sep = floe_rest_config_get(c->conf, "namespace-separator");
	int rc = floe_rest_path(c->prefix, c->ns, c->nns, sep, table, suffix, out);
	if (rc == 0)
		rc = floe_buf_terminate(out);
	return rc ? floe_err_set(err, rc, "a request path: %s", floe_strerror(rc)) : 0;
}

/* ---- operations ---------------------------------------------------------------------- */

/* Renews table name's expiring vended keys through GET .../credentials, where the catalog
 * lists that endpoint: true when it answered keys for the table's location that no longer
 * expire within the margin, so that the load need not take the whole metadata for them.
 * Else (not served, an error, keys that still expire) false, and the load takes the table
 * whole, as a catalog without the endpoint needs: a failure here is logged, never the
 * commit's. */
static bool renew_vended(struct floe_catalog_rest *c, const char *name)
{
	static const char EP[] = "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials";
	char loc[sizeof(c->vend[0].location)] = "";
	for (size_t i = 0; i < VENDED_MAX && !loc[0]; i++)
		if (c->vend[i].location[0] && strcmp(c->vend[i].name, name) == 0)
			memcpy(loc, c->vend[i].location, sizeof(loc));
	if (!loc[0] || !floe_rest_config_serves(c->conf, EP))
		return false;
	struct floe_buf p;
	struct floe_http_resp r = {0};
	struct floe_rest_table *t = NULL;
	struct floe_err e = {0};
	bool sent;
	floe_buf_init(&p, c->a, 4096);
	int rc = path_of(c, name, "/credentials", &p, &e);
	if (rc == 0) {
		struct rest_call k = {.method = "GET", .path = (const char *)p.data, .max = CONFIG_MAX};
		rc = floe_catalog_rest_call(c, &k, &r, &sent, &e);
	}
	if (rc == 0 && r.status != 200)
		rc = floe_catalog_rest_status(c, "loading the table's credentials", &r, &e);
	struct floe_err pe;
	if (rc == 0 && (rc = floe_rest_credentials_parse(c->a, r.data ? r.data : "", r.len, CONFIG_MAX, &t, &pe)))
		rc = floe_err_set(&e, rc, "%s: the credentials answer: %s", c->cfg->lake.rest.uri, floe_err_text(&pe, rc));
	if (rc == 0)
		rc = take_vended(c, name, t, loc, &e);
	floe_rest_table_free(t);
	floe_http_resp_fini(&r);
	floe_buf_fini(&p);
	if (rc == 0 && !vended_expiring(c, name))
		return true;
	floe_info("catalog: %s: the table's credentials were not renewed (%s): loading the table whole",
		  c->what, rc ? floe_err_text(&e, rc) : "no keys for its location, or keys that expire as soon");
	return false;
}

/* POST a body (a JSON document in b) to path: the answer in r. */
static int post(struct floe_catalog_rest *c, const char *path, const struct floe_buf *b, bool mutation,
		struct floe_http_resp *r, bool *sent, struct floe_err *err)
{
	struct rest_call k = {.method = "POST",
			 .path = path,
			 .body = (const char *)b->data,
			 .body_len = b->len,
			 .mutation = mutation,
			 .max = TABLE_MAX};
	return floe_catalog_rest_call(c, &k, r, sent, err);
}

/* Creates the namespace; one that exists already (409) is fine. Asked only when creating
 * the table found it missing: a principal without the right to create namespaces (403
 * whether or not the namespace exists, as Polaris answers) works in one made for it. */
static int make_namespace(struct floe_catalog_rest *c, struct floe_err *err)
{
	if (c->ns_made)
		return 0;
	struct floe_buf p, b;
	struct floe_http_resp r = {0};
	bool sent;
	if (!floe_rest_config_serves(c->conf, "POST /v1/{prefix}/namespaces")) {
		/* Namespaces are made by whoever runs the catalog: the table goes into the
		 * configured one, and its creation says if it is missing. */
		floe_info("catalog: %s does not create namespaces: using %s as it is", c->cfg->lake.rest.uri,
			  c->cfg->lake.rest.namespace);
		c->ns_made = true;
		return 0;
	}
	floe_buf_init(&p, c->a, 4096);
	floe_buf_init(&b, c->a, 1 << 16);
	const char *const none[] = {NULL};
	int rc = floe_rest_path(c->prefix, none, 0, NULL, NULL, "/namespaces", &p);
	if (rc == 0)
		rc = floe_buf_terminate(&p);
	if (rc == 0)
		rc = floe_rest_namespace_request(c->ns, c->nns, &b);
	if (rc)
		rc = floe_err_set(err, rc, "the namespace request: %s", floe_strerror(rc));
	if (rc == 0 && (rc = post(c, (const char *)p.data, &b, true, &r, &sent, err)) == 0) {
		if (r.status == 200 || r.status == 409)
			c->ns_made = true;
		else if (r.status == 401 || r.status == 403)
			/* A principal that may use the namespace but not create one: the
			 * operator has to, and the log says which. */
			rc = floe_catalog_rest_status(c, "creating the missing namespace (create it in the catalog, or "
							 "grant this principal the right to)", &r, err);
		else
			rc = floe_catalog_rest_status(c, "creating the namespace", &r, err);
	}
	if (rc == 0 && r.status == 200)
		floe_info("catalog: created namespace %s in %s", c->cfg->lake.rest.namespace, c->cfg->lake.rest.uri);
	floe_http_resp_fini(&r);
	floe_buf_fini(&p);
	floe_buf_fini(&b);
	return rc;
}

/* A LoadTableResult in r into *meta, its version into *version and its ETag into etag. */
static int take_table(struct floe_catalog_rest *c, const char *name, const char *what, struct floe_http_resp *r,
		      char etag[256], struct floe_ice_meta **meta, int64_t *version, struct floe_err *err)
{
	struct floe_rest_table *t = NULL;
	struct floe_err pe;
	int rc = floe_rest_table_parse(c->a, r->data ? r->data : "", r->len, TABLE_MAX, &t, &pe);
	if (rc)
		return floe_err_set(err, rc == FLOE_ENOMEM ? rc : FLOE_S3_EPROTO, "%s: %s: %s",
				    c->cfg->lake.rest.uri, what, floe_err_text(&pe, rc));
	const char *loc = floe_ice_meta_location(floe_rest_table_metadata(t));
	if (loc && (rc = take_vended(c, name, t, loc, err))) {
		floe_rest_table_free(t);
		return rc;
	}
	*meta = floe_rest_table_take_metadata(t);
	/* Else the last-sequence-number, which grows with every commit as well. */
	*version = floe_rest_metadata_version(floe_rest_table_location(t));
	if (*version <= 0)
		*version = floe_ice_meta_last_sequence(*meta);
	floe_rest_table_free(t);
	if (etag)
		snprintf(etag, 256, "%s", r->etag);
	return 0;
}

static int create_table(struct floe_catalog_rest *c, const char *name, const struct floe_catalog_rest_create *cr,
			char etag[256], struct floe_ice_meta **meta, int64_t *version, struct floe_err *err)
{
	struct floe_buf p, b;
	struct floe_http_resp r = {0};
	bool sent;
	floe_buf_init(&p, c->a, 4096);
	floe_buf_init(&b, c->a, 1 << 20);
	int rc = serves(c, "POST /v1/{prefix}/namespaces/{namespace}/tables", err);
	if (rc == 0 && (rc = path_of(c, NULL, "/tables", &p, err)) == 0 &&
	    (rc = floe_rest_create_request(c->a, name, NULL, cr->fields, cr->nfields, cr->pfields, cr->npfields,
					   cr->props, cr->nprops, &b)))
		rc = floe_err_set(err, rc, "the create-table request: %s", floe_strerror(rc));
	if (rc == 0 && (rc = post(c, (const char *)p.data, &b, true, &r, &sent, err)) == 0) {
		if (r.status == 200) {
			rc = take_table(c, name, "the created table", &r, etag, meta, version, err);
			if (rc == 0)
				floe_info("catalog: created table %s in %s at %s", name, c->what,
					  floe_ice_meta_location(*meta) ? floe_ice_meta_location(*meta) : "?");
		} else if (r.status == 409) {
			rc = FLOE_ECONFLICT; /* another writer created it first: load theirs */
		} else {
			rc = floe_catalog_rest_status(c, "creating the table", &r, err);
		}
	}
	floe_http_resp_fini(&r);
	floe_buf_fini(&p);
	floe_buf_fini(&b);
	return rc;
}

static int load(struct floe_catalog_rest *c, const char *name, const struct floe_catalog_rest_create *create,
		char etag[256], struct floe_ice_meta **meta, int64_t *version, struct floe_err *err);

/* A load or commit that failed (but for a conflict, which is another writer's commit)
 * has the next one read the catalog's configuration again: a catalog that came back
 * from an outage, or answers 404 NoSuchWarehouseException, may have been given another
 * prefix or other endpoints meanwhile, which a running agent read only at its start. */
static int mark(struct floe_catalog_rest *c, int rc)
{
	if (rc && rc != FLOE_ECONFLICT)
		c->conf_stale = true;
	return rc;
}

int floe_catalog_rest_load(struct floe_catalog_rest *c, const char *name,
			   const struct floe_catalog_rest_create *create, char etag[256],
			   struct floe_ice_meta **meta, int64_t *version, struct floe_err *err)
{
	return mark(c, load(c, name, create, etag, meta, version, err));
}

static int load(struct floe_catalog_rest *c, const char *name, const struct floe_catalog_rest_create *create,
		char etag[256], struct floe_ice_meta **meta, int64_t *version, struct floe_err *err)
{
	*meta = NULL;
	int rc = configure(c, err);
	if (rc == 0)
		rc = serves(c, "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}", err);
	if (rc)
		return rc;
	if (etag && vended_expiring(c, name) && !renew_vended(c, name))
		etag[0] = '\0';
	for (int round = 0; round < 2; round++) {
		struct floe_buf p;
		struct floe_http_resp r = {0};
		bool sent;
		floe_buf_init(&p, c->a, 4096);
		if ((rc = path_of(c, name, NULL, &p, err)) == 0) {
			struct rest_call k = {.method = "GET", .path = (const char *)p.data, .etag = etag, .max = TABLE_MAX};
			rc = floe_catalog_rest_call(c, &k, &r, &sent, err);
		}
		floe_buf_fini(&p);
		if (rc == 0) {
			if (r.status == 304)
				rc = 0;
			else if (r.status == 200)
				rc = take_table(c, name, "the loaded table", &r, etag, meta, version, err);
			else
				rc = floe_catalog_rest_status(c, "loading the table", &r, err);
		}
		floe_http_resp_fini(&r);
		if (rc != FLOE_ENOTFOUND || !create)
			return rc;
		/* The table is missing, or its namespace: a create in a missing namespace
		 * answers 404 (NoSuchNamespaceException), and once it is made the create
		 * goes again. */
		rc = create_table(c, name, create, etag, meta, version, err);
		if (rc == FLOE_ENOTFOUND && !c->ns_made && (rc = make_namespace(c, err)) == 0)
			rc = create_table(c, name, create, etag, meta, version, err);
		if (rc != FLOE_ECONFLICT)
			return rc;
	}
	return floe_err_set(err, FLOE_ECONFLICT, "%s: table %s was created and is still not there", c->what, name);
}

int floe_catalog_rest_commit(struct floe_catalog_rest *c, const char *name,
			     const struct floe_rest_commit *cm, char etag[256], struct floe_ice_meta **meta,
			     int64_t *version, bool *unknown, struct floe_err *err)
{
	struct floe_buf p, b;
	struct floe_http_resp r = {0};
	bool sent = false;
	*meta = NULL;
	*unknown = false;
	etag[0] = '\0';
	floe_buf_init(&p, c->a, 4096);
	floe_buf_init(&b, c->a, 1 << 20);
	int rc = configure(c, err);
	if (rc == 0)
		rc = serves(c, "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}", err);
	if (rc == 0 && (rc = path_of(c, name, NULL, &p, err)) == 0 && (rc = floe_rest_commit_request(c->a, cm, &b)))
		rc = floe_err_set(err, rc, "the commit request: %s", floe_strerror(rc));
	if (rc == 0) {
		rc = post(c, (const char *)p.data, &b, true, &r, &sent, err);
		if (rc == 0 && r.status == 200)
			rc = take_table(c, name, "the commit's answer", &r, etag, meta, version, err);
		else if (rc == 0)
			rc = floe_catalog_rest_status(c, "the commit", &r, err);
		/* Sent, and no answer that says what became of it: a 5xx after the catalog
		 * applied the commit, a cut connection, a timeout, or an answer floe cannot
		 * read. Only a reload tells. */
		*unknown = sent && rc && rc != FLOE_ECONFLICT && !(r.status >= 400 && r.status < 500);
	}
	floe_http_resp_fini(&r);
	floe_buf_fini(&p);
	floe_buf_fini(&b);
	return mark(c, rc);
}
