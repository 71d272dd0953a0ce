/* The keys of lake.catalog: its type, and for a REST catalog where it is (uri, prefix,
 * warehouse, namespace) and how floe proves who it is (a bearer token, or OAuth2 client
 * credentials against oauth2-server-uri with a scope). Secrets are references only. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/utf8.h"

#include <stdio.h>
#include <string.h>

static int check_url(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_levels(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_prefix(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_signing(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static bool rest_on(const char *);
static int catalog_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);

static const char *const catalog_names[] = {"filesystem", "s3", "rest", NULL};
static const char *const bool_names[] = {"false", "true", NULL};

static const struct floe_key catalog_keys[] = {
    {.name = "type",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.catalog),
     .size = sizeof(enum floe_catalog_type),
     .def = "filesystem",
     .choices = catalog_names,
     .help = "how commits are made atomic"},
    {.name = "uri",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.uri),
     .check = check_url,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: the catalog's base URL (https://host[:port][/path])"},
    {.name = "warehouse",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.warehouse),
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: the warehouse asked of /v1/config (a name or a location)"},
    {.name = "namespace",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.namespace),
     .flags = FLOE_KF_COMPUTED | FLOE_KF_QUIET,
     .check = check_levels,
     .shown = rest_on,
     .help = "rest: the namespace, levels joined by '.'; default lake.namespace"},
    {.name = "prefix",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.prefix),
     .check = check_prefix,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: the path prefix; default the one /v1/config gives"},
    {.name = "credential",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.credential),
     .check = floe_config_check_secret_ref,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: env:NAME or file:/path holding client_id:client_secret (OAuth2)"},
    {.name = "token",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.token),
     .check = floe_config_check_secret_ref,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: env:NAME or file:/path holding a bearer token (a file is read again "
	     "when it changes)"},
    {.name = "scope",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.scope),
     .def = "catalog",
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: the OAuth2 scope asked for with credential"},
    {.name = "oauth2-server-uri",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.oauth2_server_uri),
     .check = check_url,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: where credential is exchanged; default <uri>/v1/oauth/tokens"},
    {.name = "sigv4-enabled",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.rest.sigv4),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: sign every request with AWS SigV4 (keys as lake.s3 finds them)"},
    {.name = "signing-name",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.signing_name),
     .def = "execute-api",
     .check = check_signing,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: the service SigV4 signs for (glue for AWS Glue, s3tables for S3 Tables)"},
    {.name = "signing-region",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.rest.signing_region),
     .check = check_signing,
     .flags = FLOE_KF_QUIET,
     .shown = rest_on,
     .help = "rest: the region SigV4 signs for; default lake.s3.region"},
};
const struct floe_key_section floe_keys_catalog_section =
    FLOE_KEY_SECTION(catalog_keys, catalog_post, NULL);

/* ---- shared with lake.s3 ---------------------------------------------------------- */

/* Whether the endpoint's host (after "http://") is a loopback address: localhost,
 * 127.0.0.0/8 or [::1]. Requests to it never leave the machine. */
bool floe_config_loopback_url(const char *ep)
{
	const char *h = strstr(ep, "://");
	h = h ? h + 3 : ep;
	size_t n = h[0] == '[' ? strcspn(h, "]") + 1 : strcspn(h, ":/");
	if ((n == 9 && strncmp(h, "localhost", 9) == 0) || (n == 5 && strncmp(h, "[::1]", 5) == 0))
		return true;
	if (n < 4 || strncmp(h, "127.", 4) != 0)
		return false;
	for (size_t i = 4; i < n; i++)
		if (!((h[i] >= '0' && h[i] <= '9') || h[i] == '.'))
			return false;
	return true;
}

/* Credentials are never written in the configuration, which is often world-readable and
 * gets dumped and logged: only a reference, "env:NAME" or "file:/absolute/path", that
 * the runner resolves. The message does not repeat the value, which may be the secret. */
int floe_config_check_secret_ref(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				 const char *path, char **value)
{
	const char *s = *value;
	bool ok = false;
	if (strncmp(s, "env:", 4) == 0)
		ok = (s[4] < '0' || s[4] > '9') && floe_keymap_all_of(s + 4, 1, 128, "_");
	else if (strncmp(s, "file:/", 6) == 0)
		ok = s[6] != '\0' && floe_utf8_valid((const uint8_t *)s, strlen(s)) == strlen(s);
	if (ok)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a reference, env:NAME (an environment "
				"variable) or file:/absolute/path (a file holding the value); the "
				"value itself does not belong in the configuration",
				path);
}

/* ---- lake.catalog ------------------------------------------------------------------ */

static bool rest_on(const char *base)
{
	return ((const struct floe_config *)(const void *)base)->lake.catalog == FLOE_CATALOG_REST;
}

/* http(s)://HOST[:PORT][/PATH], without a query or fragment, its final '/' dropped (paths
 * are appended to it). Plain HTTP only to loopback: a token or client secret goes with
 * every request. */
static int check_url(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		     char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	char *s = *value;
	size_t n = strlen(s);
	floe_keymap_show(s, n, shown);
	const char *h = strncmp(s, "https://", 8) == 0 ? s + 8 : strncmp(s, "http://", 7) == 0 ? s + 7 : NULL;
	bool ok = h && *h && *h != '/' && !strpbrk(s, "?# \t\r\n");
	for (const char *p = s; ok && *p; p++)
		ok = (unsigned char)*p > 0x20 && *p != 0x7f;
	if (!ok)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected https://HOST[:PORT][/PATH] (no query), got '%s'",
					path, shown);
	if (h == s + 7 && !floe_config_loopback_url(s))
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': '%s' is plain HTTP to a host that is not loopback: "
					"tokens and client secrets would cross the network unencrypted; "
					"use https://",
					path, shown);
	while (n > (size_t)(h - s) && s[n - 1] == '/')
		s[--n] = '\0';
	return 0;
}

/* Namespace levels: 1 to 8 of [A-Za-z0-9_]{1,128}, joined by '.'. */
static int check_levels(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value;
	size_t levels = 0;
	bool ok = true;
	while (ok) {
		size_t n = strcspn(s, ".");
		char level[130];
		ok = n >= 1 && n <= 128 && ++levels <= 8;
		if (ok) {
			memcpy(level, s, n);
			level[n] = '\0';
			ok = floe_keymap_all_of(level, 1, 128, "_");
		}
		if (!s[n])
			break;
		s += n + 1;
	}
	if (ok)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 8 levels of 1 to 128 characters of A-Z a-z "
				"0-9 _, joined by '.', got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* A SigV4 scope part: it goes into the signed credential scope between '/'. */
static int check_signing(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			 char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 64, "-_."))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 - _ ., got '%s'", path,
				floe_keymap_show(*value, strlen(*value), shown));
}

static int check_prefix(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 256, "_-./"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 256 characters of A-Z a-z 0-9 _ - . /, got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* The REST keys belong to type rest; it needs uri and at most one way to authenticate.
 * The namespace's default (lake.namespace) is set by the lake section's post hook, which
 * runs once every lake key is read. */
static int catalog_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
			char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	static const char *const rest_keys[] = {"uri", "warehouse", "namespace", "prefix", "credential",
						"token", "oauth2-server-uri", "scope", "sigv4-enabled",
						"signing-name", "signing-region"};
	if (c->lake.catalog != FLOE_CATALOG_REST) {
		for (size_t i = 0; i < sizeof(rest_keys) / sizeof(rest_keys[0]); i++) {
			const struct floe_cnode *v = floe_keys_given(map, rest_keys[i]);
			if (v)
				return floe_config_fail(ctx, v, FLOE_EFORMAT,
							"key '%s.%s': only used with type rest", path,
							rest_keys[i]);
		}
		return 0;
	}
	if (!c->lake.rest.uri)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "type"), FLOE_EFORMAT,
					"key '%s.type': rest needs %s.uri (the catalog's base URL)", path,
					path);
	if (c->lake.rest.token && c->lake.rest.credential)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "token"), FLOE_EFORMAT,
					"key '%s.token': give token or credential, not both", path);
	if (c->lake.rest.oauth2_server_uri && !c->lake.rest.credential)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "oauth2-server-uri"),
					FLOE_EFORMAT,
					"key '%s.oauth2-server-uri': only used with credential", path);
#ifdef FLOE_NO_S3
	return floe_config_fail(ctx, floe_keymap_find_value(map, "type"), FLOE_EFORMAT,
				"key '%s.type': this build of floe has no HTTP client (built with "
				"FLOE_WITH_S3=OFF or FLOE_STATIC), so no REST catalog",
				path);
#endif
	if (!c->lake.rest.oauth2_server_uri && c->lake.rest.credential) {
		size_t n = strlen(c->lake.rest.uri) + sizeof("/v1/oauth/tokens");
		if (!(c->lake.rest.oauth2_server_uri = floe_malloc(ctx->a, n)))
			return floe_keymap_nomem(ctx);
		snprintf(c->lake.rest.oauth2_server_uri, n, "%s/v1/oauth/tokens", c->lake.rest.uri);
	}
	return 0;
}
