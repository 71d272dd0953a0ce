/* The REST catalog's answers read (see rest.h); rest_request.c builds its requests. */
#include "formats/iceberg/rest.h"

#include "metadata_impl.h"

#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"
#include "formats/base/wipe.h"
#include "formats/json/json.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* A table's metadata inside a LoadTableResult is re-serialised for its parser; no real
 * table's document comes near this. */
#define META_MAX_BYTES ((size_t)256 << 20)
/* An error or token answer is small; a bigger one is not what it claims to be. */
#define SMALL_MAX_BYTES ((size_t)64 << 10)

static const char *const DEFAULT_ENDPOINTS[] = {
    "GET /v1/{prefix}/namespaces",
    "POST /v1/{prefix}/namespaces",
    "GET /v1/{prefix}/namespaces/{namespace}",
    "DELETE /v1/{prefix}/namespaces/{namespace}",
    "POST /v1/{prefix}/namespaces/{namespace}/properties",
    "GET /v1/{prefix}/namespaces/{namespace}/tables",
    "POST /v1/{prefix}/namespaces/{namespace}/tables",
    "GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "DELETE /v1/{prefix}/namespaces/{namespace}/tables/{table}",
    "POST /v1/{prefix}/namespaces/{namespace}/register",
    "POST /v1/{prefix}/namespaces/{namespace}/tables/{table}/metrics",
    "POST /v1/{prefix}/tables/rename",
    "POST /v1/{prefix}/transactions/commit",
};

/* ---- shared checks ---- */

/* obj's member name if it is an object whose members are all strings (absent: *out
 * NULL, 0). */
static int string_map(const struct floe_json *obj, const char *name, const struct floe_json **out,
		      struct floe_err *err)
{
	const struct floe_json *m = floe_json_get(obj, name);
	*out = NULL;
	if (!m || floe_json_is(m, FLOE_JSON_NULL))
		return 0;
	if (!floe_json_is(m, FLOE_JSON_OBJECT))
		return floe_err_set(err, FLOE_EFORMAT, "'%s' is not an object", name);
	for (size_t i = 0; i < floe_json_len(m); i++)
		if (!floe_json_is(floe_json_at(m, i), FLOE_JSON_STRING))
			return floe_err_set(err, FLOE_EFORMAT, "'%s.%s' is not a string", name,
					    floe_json_key_at(m, i));
	*out = m;
	return 0;
}

static int parse_object(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
			const char *what, struct floe_json_doc **doc, struct floe_err *err)
{
	int rc = floe_json_parse(a, json, len, max_bytes, doc, err);
	if (rc)
		return rc;
	if (!floe_json_is(floe_json_root(*doc), FLOE_JSON_OBJECT)) {
		floe_json_doc_free(*doc);
		*doc = NULL;
		return floe_err_set(err, FLOE_EFORMAT, "the %s is not a JSON object", what);
	}
	return 0;
}

/* ---- the catalog configuration ---- */

struct floe_rest_config {
	struct floe_alloc *a;
	struct floe_json_doc *doc;
	struct floe_json *merged;
	const struct floe_json *endpoints; /* NULL: the default set */
	int64_t idempotency_ms;
};

static int merge(struct floe_json_doc *d, struct floe_json *into, const struct floe_json *from)
{
	for (size_t i = 0; i < floe_json_len(from); i++)
		if (floe_json_set(d, into, floe_json_key_at(from, i), floe_json_at(from, i)))
			return FLOE_ENOMEM;
	return 0;
}

/* An ISO 8601 duration of days, hours, minutes and seconds ("P1D", "PT30M", "PT1H30M",
 * "PT45S"), in ms; 0 for anything else (years and months have no fixed length). */
static int64_t duration_ms(const char *s)
{
	static const struct {
		char unit;
		bool in_time;
		int64_t ms;
	} UNITS[] = {{'D', false, 86400000}, {'H', true, 3600000}, {'M', true, 60000}, {'S', true, 1000}};
	int64_t total = 0;
	bool in_time = false;
	size_t u = 0;
	if (*s++ != 'P' || !*s)
		return 0;
	while (*s) {
		if (*s == 'T' && !in_time) {
			in_time = true;
			s++;
			continue;
		}
		int64_t n = 0;
		const char *start = s;
		while (*s >= '0' && *s <= '9' && n < 1000000000)
			n = n * 10 + (*s++ - '0');
		if (s == start)
			return 0;
		while (u < 4 && (UNITS[u].unit != *s || UNITS[u].in_time != in_time))
			u++;
		if (u == 4)
			return 0;
		total += n * UNITS[u++].ms;
		s++;
	}
	return total;
}

static int config_fill(struct floe_rest_config *c, const struct floe_ice_kv *client, size_t nclient,
		       struct floe_err *err)
{
	struct floe_json *root = floe_json_root(c->doc);
	const struct floe_json *defaults, *overrides, *ep = floe_json_get(root, "endpoints");
	const char *idem = NULL;
	int rc;
	if ((rc = string_map(root, "defaults", &defaults, err)) ||
	    (rc = string_map(root, "overrides", &overrides, err)))
		return rc;
	if (!(c->merged = floe_json_new_object(c->doc)) || merge(c->doc, c->merged, defaults))
		return FLOE_ENOMEM;
	for (size_t i = 0; i < nclient; i++)
		if (floe_json_set(c->doc, c->merged, client[i].key,
				  floe_json_new_str(c->doc, client[i].value, strlen(client[i].value))))
			return FLOE_ENOMEM;
	if (merge(c->doc, c->merged, overrides))
		return FLOE_ENOMEM;
	if (ep && !floe_json_is(ep, FLOE_JSON_NULL)) {
		if (!floe_json_is(ep, FLOE_JSON_ARRAY))
			return floe_err_set(err, FLOE_EFORMAT, "'endpoints' is not an array");
		for (size_t i = 0; i < floe_json_len(ep); i++)
			if (!floe_json_is(floe_json_at(ep, i), FLOE_JSON_STRING))
				return floe_err_set(err, FLOE_EFORMAT,
						    "'endpoints[%zu]' is not a string", i);
		c->endpoints = ep;
	}
	if (floe_json_get(root, "idempotency-key-lifetime") &&
	    floe_json_get_str(root, "idempotency-key-lifetime", &idem) == 0)
		c->idempotency_ms = duration_ms(idem);
	return 0;
}

int floe_rest_config_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
			   const struct floe_ice_kv *client, size_t nclient,
			   struct floe_rest_config **out, struct floe_err *err)
{
	struct floe_rest_config *c = floe_calloc(a, 1, sizeof(*c));
	int rc;
	*out = NULL;
	if (!c)
		return FLOE_ENOMEM;
	c->a = a;
	if ((rc = parse_object(a, json, len, max_bytes, "catalog configuration", &c->doc, err)) ||
	    (rc = config_fill(c, client, nclient, err))) {
		if (c->doc)
			floe_json_doc_free_wiped(c->doc);
		floe_free(a, c);
		return rc;
	}
	*out = c;
	return 0;
}

void floe_rest_config_free(struct floe_rest_config *c)
{
	if (!c)
		return;
	floe_json_doc_free_wiped(c->doc);
	floe_free(c->a, c);
}

const char *floe_rest_config_get(const struct floe_rest_config *c, const char *key)
{
	const char *v = NULL;
	return floe_json_get_str(c->merged, key, &v) ? NULL : v;
}

bool floe_rest_config_serves(const struct floe_rest_config *c, const char *endpoint)
{
	if (!c->endpoints) {
		for (size_t i = 0; i < sizeof(DEFAULT_ENDPOINTS) / sizeof(DEFAULT_ENDPOINTS[0]); i++)
			if (strcmp(DEFAULT_ENDPOINTS[i], endpoint) == 0)
				return true;
		return false;
	}
	for (size_t i = 0; i < floe_json_len(c->endpoints); i++) {
		const char *e = NULL;
		if (floe_json_str(floe_json_at(c->endpoints, i), &e, NULL) == 0 &&
		    strcmp(e, endpoint) == 0)
			return true;
	}
	return false;
}

int64_t floe_rest_config_idempotency_ms(const struct floe_rest_config *c)
{
	return c->idempotency_ms;
}

/* ---- a loaded table ---- */

struct floe_rest_table {
	struct floe_alloc *a;
	struct floe_json_doc *doc;
	struct floe_ice_meta *meta;
	const char *location;
	const struct floe_json *config;
	const struct floe_json *creds; /* array, checked */
	const struct floe_json *signing; /* remote-signing-config, checked, or NULL */
};

static int sign_headers(const struct floe_json *hs, int pass,
			int (*fn)(void *ctx, const char *name, const char *value), void *ctx);

/* remote-signing-config: an object whose properties are strings and whose headers are
 * arrays of strings (a RemoteSigningConfig), checked whole here. */
static int table_signing(struct floe_rest_table *t, const struct floe_json *root, struct floe_err *err)
{
	const struct floe_json *rs = floe_json_get(root, "remote-signing-config"), *props = NULL;
	if (!rs || floe_json_is(rs, FLOE_JSON_NULL))
		return 0;
	const struct floe_json *hs = floe_json_get(rs, "headers");
	if (!floe_json_is(rs, FLOE_JSON_OBJECT) || string_map(rs, "properties", &props, err) ||
	    (hs && !floe_json_is(hs, FLOE_JSON_NULL) &&
	     (!floe_json_is(hs, FLOE_JSON_OBJECT) || sign_headers(hs, 0, NULL, NULL))))
		return floe_err_set(err, FLOE_EFORMAT,
				    "'remote-signing-config' is not a RemoteSigningConfig (properties of strings, "
				    "headers of arrays of strings)");
	t->signing = rs;
	return 0;
}

bool floe_rest_table_has_config(const struct floe_rest_table *t)
{
	return t->config || t->creds || t->signing;
}

int floe_rest_table_signing(const struct floe_rest_table *t,
			    int (*fn)(void *ctx, char kind, const char *name, const char *value), void *ctx)
{
	if (!t->signing)
		return 0;
	const struct floe_json *props = floe_json_get(t->signing, "properties");
	const struct floe_json *hs = floe_json_get(t->signing, "headers");
	for (size_t i = 0; floe_json_is(props, FLOE_JSON_OBJECT) && i < floe_json_len(props); i++) {
		const char *v = NULL;
		int rc = floe_json_str(floe_json_at(props, i), &v, NULL) ? 0 : fn(ctx, 'p', floe_json_key_at(props, i), v);
		if (rc)
			return rc;
	}
	for (size_t i = 0; floe_json_is(hs, FLOE_JSON_OBJECT) && i < floe_json_len(hs); i++) {
		const struct floe_json *vs = floe_json_at(hs, i);
		for (size_t j = 0; floe_json_is(vs, FLOE_JSON_ARRAY) && j < floe_json_len(vs); j++) {
			const char *v = NULL;
			int rc = floe_json_str(floe_json_at(vs, j), &v, NULL) ? 0
										: fn(ctx, 'h', floe_json_key_at(hs, i), v);
			if (rc)
				return rc;
		}
	}
	return 0;
}

static int table_creds(struct floe_rest_table *t, const struct floe_json *root, struct floe_err *err)
{
	const struct floe_json *cr = floe_json_get(root, "storage-credentials");
	int rc;
	if (!cr || floe_json_is(cr, FLOE_JSON_NULL))
		return 0;
	if (!floe_json_is(cr, FLOE_JSON_ARRAY))
		return floe_err_set(err, FLOE_EFORMAT, "'storage-credentials' is not an array");
	for (size_t i = 0; i < floe_json_len(cr); i++) {
		const struct floe_json *e = floe_json_at(cr, i), *cfg;
		const char *prefix;
		if (!floe_json_is(e, FLOE_JSON_OBJECT) || floe_json_get_str(e, "prefix", &prefix))
			return floe_err_set(err, FLOE_EFORMAT,
					    "'storage-credentials[%zu]' has no prefix", i);
		if ((rc = string_map(e, "config", &cfg, err)))
			return rc;
		if (!cfg)
			return floe_err_set(err, FLOE_EFORMAT,
					    "'storage-credentials[%zu]' has no config", i);
	}
	t->creds = cr;
	return 0;
}

static int table_fill(struct floe_rest_table *t, struct floe_err *err)
{
	const struct floe_json *root = floe_json_root(t->doc), *md = floe_json_get(root, "metadata");
	const struct floe_json *loc = floe_json_get(root, "metadata-location");
	struct floe_buf b;
	int rc;
	if (!floe_json_is(md, FLOE_JSON_OBJECT))
		return floe_err_set(err, FLOE_EFORMAT, "the table has no 'metadata' object");
	if (loc && !floe_json_is(loc, FLOE_JSON_NULL) && floe_json_str(loc, &t->location, NULL))
		return floe_err_set(err, FLOE_EFORMAT, "'metadata-location' is not a string");
	if ((rc = string_map(root, "config", &t->config, err)) || (rc = table_creds(t, root, err)) ||
	    (rc = table_signing(t, root, err)))
		return rc;
	floe_buf_init(&b, t->a, META_MAX_BYTES);
	if (!(rc = floe_json_write(md, &b)))
		rc = floe_ice_meta_parse(t->a, (const char *)b.data, b.len, &t->meta, err);
	floe_buf_fini(&b);
	return rc;
}

/* A new table from the document json, its members read by fill. */
static int table_read(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes, const char *what,
		      int (*fill)(struct floe_rest_table *, struct floe_err *), struct floe_rest_table **out,
		      struct floe_err *err)
{
	struct floe_rest_table *t = floe_calloc(a, 1, sizeof(*t));
	int rc;
	*out = NULL;
	if (!t)
		return FLOE_ENOMEM;
	t->a = a;
	if ((rc = parse_object(a, json, len, max_bytes, what, &t->doc, err)) || (rc = fill(t, err))) {
		floe_rest_table_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

int floe_rest_table_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
			  struct floe_rest_table **out, struct floe_err *err)
{
	return table_read(a, json, len, max_bytes, "table answer", table_fill, out, err);
}

/* A LoadCredentialsResponse's one member, required. */
static int credentials_fill(struct floe_rest_table *t, struct floe_err *err)
{
	const struct floe_json *root = floe_json_root(t->doc);
	if (!floe_json_get(root, "storage-credentials"))
		return floe_err_set(err, FLOE_EFORMAT, "the credentials answer has no 'storage-credentials'");
	return table_creds(t, root, err);
}

int floe_rest_credentials_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
				struct floe_rest_table **out, struct floe_err *err)
{
	return table_read(a, json, len, max_bytes, "credentials answer", credentials_fill, out, err);
}

void floe_rest_table_free(struct floe_rest_table *t)
{
	if (!t)
		return;
	floe_ice_meta_free(t->meta);
	if (t->doc)
		floe_json_doc_free_wiped(t->doc);
	floe_free(t->a, t);
}

const char *floe_rest_table_location(const struct floe_rest_table *t)
{
	return t->location;
}

struct floe_ice_meta *floe_rest_table_metadata(const struct floe_rest_table *t)
{
	return t->meta;
}

struct floe_ice_meta *floe_rest_table_take_metadata(struct floe_rest_table *t)
{
	struct floe_ice_meta *m = t->meta;
	t->meta = NULL;
	return m;
}

int64_t floe_rest_metadata_version(const char *location)
{
	const char *name = location ? strrchr(location, '/') : NULL;
	name = name ? name + 1 : location ? location : "";
	if (*name == 'v')
		name++;
	int64_t v = 0;
	const char *p = name;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
			return 0;
	}
	if (p == name || (*p != '-' && *p != '.'))
		return 0;
	return strstr(p, ".metadata.json") ? v : 0;
}

const char *floe_rest_table_config(const struct floe_rest_table *t, const char *key)
{
	const char *v = NULL;
	return floe_json_get_str(t->config, key, &v) ? NULL : v;
}

const struct floe_json *floe_rest_table_credential(const struct floe_rest_table *t,
						   const char *location)
{
	const struct floe_json *best = NULL;
	size_t best_len = 0;
	for (size_t i = 0; i < floe_json_len(t->creds); i++) {
		const struct floe_json *e = floe_json_at(t->creds, i);
		const char *prefix = NULL;
		size_t n;
		floe_json_get_str(e, "prefix", &prefix);
		n = strlen(prefix);
		if (strncmp(location, prefix, n) == 0 && (!best || n > best_len)) {
			best = floe_json_get(e, "config");
			best_len = n;
		}
	}
	return best;
}

const char *floe_rest_table_storage(const struct floe_rest_table *t, const char *location,
				    const char *key)
{
	const char *v = NULL;
	const struct floe_json *cred = floe_rest_table_credential(t, location);
	if (cred)
		return floe_json_get_str(cred, key, &v) ? NULL : v;
	return floe_rest_table_config(t, key);
}

const char *floe_rest_table_setting(const struct floe_rest_table *t, const char *location,
				    const struct floe_rest_config *conf, const char *const *keys)
{
	const char *v = NULL;
	const struct floe_json *cred = floe_rest_table_credential(t, location);
	/* Source by source, each asked for every spelling before the next is asked. */
	for (const char *const *k = keys; cred && *k; k++)
		if (floe_json_get_str(cred, *k, &v) == 0)
			return v;
	for (const char *const *k = keys; *k; k++)
		if ((v = floe_rest_table_config(t, *k)))
			return v;
	for (const char *const *k = keys; conf && *k; k++)
		if ((v = floe_rest_config_get(conf, *k)))
			return v;
	return NULL;
}

/* ---- errors and tokens ---- */

static void copy_str(char *dst, size_t cap, const struct floe_json *obj, const char *key)
{
	const char *s = NULL;
	size_t n = 0;
	if (floe_json_str(floe_json_get(obj, key), &s, &n))
		return;
	if (n >= cap)
		n = cap - 1;
	memcpy(dst, s, n);
	dst[n] = '\0';
	/* Control characters (a NUL among them) would cut or forge a log line. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)dst[i] < 0x20)
			dst[i] = ' ';
}

int floe_rest_error_parse(const char *json, size_t len, struct floe_rest_error *out)
{
	struct floe_json_doc *doc = NULL;
	const struct floe_json *e;
	int64_t code;
	memset(out, 0, sizeof(*out));
	if (parse_object(NULL, json, len, SMALL_MAX_BYTES, "error", &doc, NULL))
		return FLOE_EFORMAT;
	e = floe_json_get(floe_json_root(doc), "error");
	if (!floe_json_is(e, FLOE_JSON_OBJECT)) {
		floe_json_doc_free(doc);
		return FLOE_EFORMAT;
	}
	copy_str(out->type, sizeof(out->type), e, "type");
	copy_str(out->message, sizeof(out->message), e, "message");
	if (floe_json_get_int(e, "code", &code) == 0 && code >= 100 && code <= 599)
		out->code = (int)code;
	floe_json_doc_free(doc);
	return 0;
}

int floe_rest_token_parse(struct floe_alloc *a, const char *json, size_t len,
			  struct floe_rest_token *out, struct floe_err *err)
{
	struct floe_json_doc *doc = NULL;
	const struct floe_json *root;
	const char *tok = NULL, *type = NULL;
	size_t n = 0;
	int64_t exp;
	int rc;
	memset(out, 0, sizeof(*out));
	out->expires_in_s = -1;
	if ((rc = parse_object(a, json, len, SMALL_MAX_BYTES, "token answer", &doc, err)))
		return rc;
	root = floe_json_root(doc);
	if (floe_json_str(floe_json_get(root, "access_token"), &tok, &n) || n == 0 ||
	    memchr(tok, '\0', n))
		rc = floe_err_set(err, FLOE_EFORMAT, "the token answer has no access_token");
	else if (floe_json_get_str(root, "token_type", &type) ||
		 (strcasecmp(type, "bearer") != 0 && strcasecmp(type, "N_A") != 0))
		rc = floe_err_set(err, FLOE_EFORMAT, "the token is not a bearer token");
	else if (!(out->access_token = floe_strndup(a, tok, n)))
		rc = FLOE_ENOMEM;
	if (rc == 0 && floe_json_get_int(root, "expires_in", &exp) == 0 && exp >= 0)
		out->expires_in_s = exp;
	floe_json_doc_free_wiped(doc);
	return rc;
}

void floe_rest_token_free(struct floe_alloc *a, struct floe_rest_token *t)
{
	floe_wipe_free(a, t->access_token);
	t->access_token = NULL;
}

/* Whether every member of hs is an array of strings (pass 0), or fn's answer for each
 * value (pass 1). */
static int sign_headers(const struct floe_json *hs, int pass, int (*fn)(void *ctx, const char *name, const char *value),
			void *ctx)
{
	for (size_t i = 0; i < floe_json_len(hs); i++) {
		const struct floe_json *vs = floe_json_at(hs, i);
		if (!floe_json_is(vs, FLOE_JSON_ARRAY))
			return FLOE_EFORMAT;
		for (size_t j = 0; j < floe_json_len(vs); j++) {
			const char *v;
			size_t n;
			if (floe_json_str(floe_json_at(vs, j), &v, &n) || strlen(v) != n)
				return FLOE_EFORMAT;
			int rc = pass ? fn(ctx, floe_json_key_at(hs, i), v) : 0;
			if (rc)
				return rc;
		}
	}
	return 0;
}

int floe_rest_sign_result_parse(struct floe_alloc *a, const char *json, size_t len, size_t max_bytes,
				int (*fn)(void *ctx, const char *name, const char *value), void *ctx,
				struct floe_err *err)
{
	struct floe_json_doc *doc = NULL;
	const char *uri;
	int rc = parse_object(a, json, len, max_bytes, "sign answer", &doc, err);
	if (rc)
		return rc;
	const struct floe_json *root = floe_json_root(doc), *hs = floe_json_get(root, "headers");
	if (floe_json_get_str(root, "uri", &uri) || !floe_json_is(hs, FLOE_JSON_OBJECT) ||
	    sign_headers(hs, 0, fn, ctx))
		rc = floe_err_set(err, FLOE_EFORMAT,
				  "the sign answer is not a RemoteSignResult ('uri' a string, 'headers' an "
				  "object of arrays of strings)");
	else
		rc = sign_headers(hs, 1, fn, ctx);
	floe_json_doc_free(doc);
	return rc;
}
