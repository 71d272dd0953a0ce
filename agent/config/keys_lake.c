/* The keys of the lake section (warehouse, namespace, catalog and lake.s3): their rows,
 * the warehouse, endpoint and credential checks, and the rules tying the warehouse,
 * the catalog and lake.s3 together. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"
#include "formats/base/hex.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_namespace(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_warehouse(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_endpoint(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			  char **);
static int check_region(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_local_file(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			    char **);
static int check_profile(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			 char **);
static int check_credential_source(struct floe_config_ctx *, const struct floe_cnode *,
				   const char *, char **);
static bool s3_on(const char *);
static bool recreate_on(const char *);
static int s3_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int lake_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void lake_fini(struct floe_alloc *, char *);

static const char *const bool_names[] = {"false", "true", NULL};
/* The EC2 instance metadata service (imds) is not tried unless listed: an edge device is
 * rarely an EC2 instance, and probing 169.254.169.254 from one costs a timeout on every
 * credential miss and asks whatever answers at that address on the local network. The
 * other sources are only used when their environment variables or file are there. */
static const char *const credential_sources[] = {"env",	      "file", "web_identity",
						 "container", "imds", NULL};
static const char *const credential_default[] = {"env", "file", "web_identity", "container", NULL};

/* ---- the key table ------------------------------------------------------------------ */

static const struct floe_key s3_keys[] = {
    {.name = "endpoint",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.endpoint),
     .flags = FLOE_KF_COMPUTED,
     .check = check_endpoint,
     .help = "http(s)://host[:port]; default https://s3.<region>.amazonaws.com"},
    {.name = "region",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.region),
     .def = "us-east-1",
     .check = check_region,
     .help = "signing region"},
    {.name = "path_style",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.s3.path_style),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .help = "host/bucket/key instead of bucket.host/key"},
    {.name = "ca_file",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.ca_file),
     .check = check_local_file,
     .help = "CA bundle (PEM); default: the system's"},
    {.name = "access_key_id",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.access_key_id),
     .check = floe_config_check_secret_ref,
     .help = "env:NAME or file:/path; default: environment, then shared credentials"},
    {.name = "secret_access_key",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.secret_access_key),
     .check = floe_config_check_secret_ref,
     .help = "env:NAME or file:/path, with access_key_id"},
    {.name = "session_token",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.session_token),
     .check = floe_config_check_secret_ref,
     .help = "env:NAME or file:/path, for temporary keys"},
    {.name = "profile",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.s3.profile),
     .check = check_profile,
     .help = "shared credentials profile, when no keys are set"},
    {.name = "credentials",
     .type = FLOE_KT_STRLIST,
     .off = CFG(lake.s3.credentials),
     .off_n = CFG(lake.s3.ncredentials),
     .flags = FLOE_KF_NONEMPTY | FLOE_KF_UNIQUE,
     .def_list = credential_default,
     .max = 5,
     .check = check_credential_source,
     .help = "sources tried in order without access_key_id: env, file, web_identity, "
	     "container, imds"},
    {.name = "allow_http",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.s3.allow_http),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .help = "allow an http:// endpoint on a host that is not loopback (unencrypted)"},
    {.name = "request_timeout",
     .type = FLOE_KT_DURATION,
     .off = CFG(lake.s3.request_timeout_ms),
     .def = "30s",
     .min = 1 * SEC,
     .max = 1 * HOUR,
     .help = "a request's deadline: this plus 1 s per min_rate bytes it moves"},
    {.name = "min_rate",
     .type = FLOE_KT_SIZE,
     .off = CFG(lake.s3.min_rate),
     .def = "4KiB",
     .min = 64,
     .max = 1 * GiB,
     .help = "bytes per second a transfer may take beyond request_timeout"},
    {.name = "multipart_threshold",
     .type = FLOE_KT_SIZE,
     .off = CFG(lake.s3.multipart_threshold),
     .def = "64MiB",
     .min = 5 * MiB,
     .max = 5 * GiB,
     .help = "larger uploads are multipart"},
    {.name = "part_size",
     .type = FLOE_KT_SIZE,
     .off = CFG(lake.s3.part_size),
     .def = "16MiB",
     .min = 5 * MiB,
     .max = 5 * GiB,
     .help = "multipart part size"},
};
static const struct floe_key_section s3_section = FLOE_KEY_SECTION(s3_keys, s3_post, NULL);

static const struct floe_key lake_keys[] = {
    {.name = "warehouse",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.warehouse),
     .flags = FLOE_KF_COMPUTED,
     .check = check_warehouse,
     .help = "directory, file:// or s3:// URI; default <state_dir>/warehouse"},
    {.name = "namespace",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.namespace),
     .def = "default",
     .check = check_namespace,
     .help = "Iceberg namespace"},
    {.name = "recreate_tables",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.recreate_tables),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .flags = FLOE_KF_QUIET,
     .shown = recreate_on,
     .help = "true makes a new table in place of one this agent committed to that is "
	     "missing; false waits for it (a warehouse mount not up yet)"},
    {.name = "catalog", .type = FLOE_KT_SECTION, .sub = &floe_keys_catalog_section},
    {.name = "s3",
     .type = FLOE_KT_SECTION,
     .sub = &s3_section,
     .shown = s3_on,
     .help = "used with catalog type s3"},
};
const struct floe_key_section floe_keys_lake_section =
    FLOE_KEY_SECTION(lake_keys, lake_post, lake_fini);

/* ---- checks and post hooks ------------------------------------------------------------- */

static int check_namespace(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 128, "_"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 128 characters of A-Z a-z 0-9 _, got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Whether s is well-formed UTF-8 (no overlong forms, surrogates or values past
 * U+10FFFF), as every string YAML gives us is, and as the dump must stay. */
static bool utf8_valid(const unsigned char *s)
{
	while (*s) {
		unsigned c = *s, n = c < 0x80		      ? 0
				     : c >= 0xC2 && c <= 0xDF ? 1
				     : c >= 0xE0 && c <= 0xEF ? 2
				     : c >= 0xF0 && c <= 0xF4 ? 3
							      : 9;
		if (n == 9)
			return false;
		unsigned lo = 0x80, hi = 0xBF;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
		else if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
		s++;
		for (unsigned i = 0; i < n; i++, s++) {
			if (*s < (i == 0 ? lo : 0x80) || *s > (i == 0 ? hi : 0xBF))
				return false;
		}
	}
	return true;
}

static bool bucket_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

/* s3://BUCKET[/PREFIX]: the bucket follows S3's naming rules (3 to 63 of a-z 0-9 . -,
 * starting and ending with a letter or digit) so that a typo fails here rather than at
 * the first upload; the prefix loses its trailing slashes and may not hold empty
 * segments (keys with "//" are legal in S3 but never what was meant). The value is
 * stored as written otherwise: S3 keys are not percent-decoded. */
static int check_s3_warehouse(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			      const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value, *b = s + 5;
	size_t n = strlen(s), blen = strcspn(b, "/");
	floe_keymap_show(s, n, shown);
	bool ok = blen >= 3 && blen <= 63 && b[0] != '.' && b[0] != '-' && b[blen - 1] != '.' &&
		  b[blen - 1] != '-';
	for (size_t i = 0; ok && i < blen; i++)
		ok = bucket_char(b[i]);
	if (!ok)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': expected s3://BUCKET[/PREFIX] with a bucket name "
		    "of 3 to 63 characters of a-z 0-9 . - starting and ending "
		    "with a letter or digit, got '%s'",
		    path, shown);
	while (n > 5 + blen && s[n - 1] == '/')
		n--; /* the prefix's trailing slashes */
	for (size_t i = 5 + blen; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c == '/' && s[i + 1] == '/') || c < 0x20 || c == 0x7f)
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': the key prefix in '%s' has an empty "
						"segment or a control character",
						path, shown);
	}
	(*value)[n] = '\0';
	return 0;
}

/* A warehouse is a local directory. file:///dir and file://localhost/dir are accepted
 * and turned into /dir (with %XX decoded), since that is how Iceberg tools print
 * locations; any other scheme is not supported yet. */
static int check_warehouse(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *s = *value;
	size_t n = strlen(s);
	floe_keymap_show(s, n, shown);
	if (strncmp(s, "file://", 7) == 0) {
		const char *p = s + 7;
		if (strncmp(p, "localhost/", 10) == 0)
			p += 9;
		if (*p != '/')
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': a file:// URI needs an empty host or "
						"localhost and an absolute path, got '%s'",
						path, shown);
		char *out = floe_malloc(ctx->a, strlen(p) + 1);
		if (!out)
			return floe_keymap_nomem(ctx);
		size_t o = 0;
		for (; *p; p++) {
			if (*p != '%') {
				out[o++] = *p;
				continue;
			}
			int h = floe_hex_digit(p[1]), l = h < 0 ? -1 : floe_hex_digit(p[2]);
			if (h < 0 || l < 0 || (h == 0 && l == 0)) {
				floe_free(ctx->a, out);
				return floe_config_fail(ctx, at, FLOE_EFORMAT,
							"key '%s': bad %%-escape in URI '%s'", path,
							shown);
			}
			out[o++] = (char)(h * 16 + l);
			p += 2;
		}
		out[o] = '\0';
		if (!utf8_valid((const unsigned char *)out)) {
			floe_free(ctx->a, out);
			return floe_config_fail(ctx, at, FLOE_EFORMAT,
						"key '%s': URI '%s' decodes to invalid UTF-8", path,
						shown);
		}
		floe_free(ctx->a, *value);
		*value = out;
		return 0;
	}
	if (strncmp(s, "s3://", 5) == 0)
		return check_s3_warehouse(ctx, at, path, value);
	if (floe_keymap_has_scheme(s))
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected a directory path, a file:// URI or an "
					"s3:// URI, got '%s'",
					path, shown);
	return 0;
}

/* ---- lake: S3 ------------------------------------------------------------------------ */

/* lake.recreate_tables is dumped only when set: it gives up a protection. */
static bool recreate_on(const char *base)
{
	return ((const struct floe_config *)(const void *)base)->lake.recreate_tables;
}

static bool s3_on(const char *base)
{
	return ((const struct floe_config *)(const void *)base)->lake.catalog != FLOE_CATALOG_FILESYSTEM;
}

/* http(s)://HOST[:PORT] with an optional final '/', which is dropped: the S3 client wants
 * no path, and bucket and key are added to it. HOST is a name, an IPv4 address or an
 * IPv6 address in brackets. */
static int check_endpoint(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			  const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	char *s = *value;
	size_t n = strlen(s);
	const char *h = strncmp(s, "https://", 8) == 0	? s + 8
			: strncmp(s, "http://", 7) == 0 ? s + 7
							: NULL;
	bool ok = h != NULL;
	const char *p = h;
	if (ok && *p == '[') {
		p++;
		while ((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f') ||
		       (*p >= 'A' && *p <= 'F') || *p == ':' || *p == '.')
			p++;
		ok = p > h + 1 && *p++ == ']';
	} else if (ok) {
		while ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		       (*p >= '0' && *p <= '9') || *p == '.' || *p == '-')
			p++;
		ok = p > h;
	}
	if (ok && *p == ':') {
		unsigned port = 0;
		const char *d = ++p;
		while (*p >= '0' && *p <= '9' && p - d < 5)
			port = port * 10 + (unsigned)(*p++ - '0');
		ok = p > d && port >= 1 && port <= 65535;
	}
	if (ok && *p == '/' && p[1] == '\0')
		p++;
	if (!ok || *p != '\0')
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected http://HOST[:PORT] or "
					"https://HOST[:PORT] (no path), got '%s'",
					path, floe_keymap_show(s, n, shown));
	if (n > 0 && s[n - 1] == '/')
		s[n - 1] = '\0';
	return 0;
}

/* The region goes into the default endpoint's host name (hence no '_') and the SigV4
 * scope. */
static int check_region(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 64, "-"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 -, got "
				"'%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

static int check_profile(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
			 char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_keymap_all_of(*value, 1, 64, "._-"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got "
				"'%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

static int check_credential_source(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	for (size_t i = 0; credential_sources[i]; i++)
		if (strcmp(*value, credential_sources[i]) == 0)
			return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected one of env, file, web_identity, container, "
				"imds, got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* An http:// endpoint sends every request, its signature and the session token of
 * temporary credentials in the clear: fine on loopback (a local gateway), a choice to make
 * explicitly anywhere else. */
static int check_cleartext(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			   const char *path, struct floe_config *c)
{
	const char *ep = c->lake.s3.endpoint;
	if (strncmp(ep, "http://", 7) != 0 || floe_config_loopback_url(ep))
		return 0;
	if (!c->lake.s3.allow_http) {
		char shown[FLOE_KEYMAP_SHOW_CAP];
		return floe_config_fail(
		    ctx, floe_keymap_find_value(map, "endpoint"), FLOE_EFORMAT,
		    "key '%s.endpoint': '%s' is plain HTTP to a host that is not "
		    "loopback: requests, data and any session token would cross "
		    "the network unencrypted; use https://, or set %s.allow_http: "
		    "true to accept that",
		    path, floe_keymap_show(ep, strlen(ep), shown), path);
	}
	c->lake.s3.cleartext = true;
	return 0;
}

static int check_local_file(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (!floe_keymap_has_scheme(*value))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a local file path, got '%s'", path,
				floe_keymap_show(*value, strlen(*value), shown));
}

/* Defaults and cross-key rules of lake.s3 (also run when the section is absent). */
static int s3_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		   char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	if (c->lake.s3.access_key_id && !c->lake.s3.secret_access_key)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "access_key_id"),
					FLOE_EFORMAT,
					"key '%s.access_key_id': set without secret_access_key; "
					"give both or neither",
					path);
	if (!c->lake.s3.access_key_id && c->lake.s3.secret_access_key)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "secret_access_key"),
					FLOE_EFORMAT,
					"key '%s.secret_access_key': set without access_key_id; "
					"give both or neither",
					path);
	if (!c->lake.s3.access_key_id && c->lake.s3.session_token)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "session_token"),
					FLOE_EFORMAT,
					"key '%s.session_token': only used with access_key_id and "
					"secret_access_key",
					path);
	if (c->lake.s3.access_key_id && c->lake.s3.profile)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "profile"), FLOE_EFORMAT,
					"key '%s.profile': only used when access_key_id and "
					"secret_access_key are not set",
					path);
	if (c->lake.s3.profile) {
		bool file = false;
		for (size_t i = 0; i < c->lake.s3.ncredentials; i++)
			file = file || strcmp(c->lake.s3.credentials[i], "file") == 0;
		if (!file)
			return floe_config_fail(ctx, floe_keymap_find_value(map, "profile"),
						FLOE_EFORMAT,
						"key '%s.profile': only used with 'file' in "
						"%s.credentials",
						path, path);
	}
	if (c->lake.s3.endpoint)
		return check_cleartext(ctx, map, path, c);
	size_t total;
	if (__builtin_add_overflow(strlen(c->lake.s3.region), sizeof("https://s3..amazonaws.com"),
				   &total))
		return floe_keymap_nomem(ctx);
	if (!(c->lake.s3.endpoint = floe_malloc(ctx->a, total)))
		return floe_keymap_nomem(ctx);
	snprintf(c->lake.s3.endpoint, total, "https://s3.%s.amazonaws.com", c->lake.s3.region);
	return 0;
}

/* The warehouse, the catalog and lake.s3 must agree: an s3:// warehouse goes with catalog
 * s3 and the other way round, and lake.s3 is only for catalog s3. Then the bucket and
 * prefix of an s3:// warehouse are split out for the runner. */
static int lake_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		     char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	const struct floe_cnode *s3 = floe_keymap_find_value(map, "s3");
	const char *w = c->lake.warehouse;
	bool s3_wh = w && strncmp(w, "s3://", 5) == 0;

	const char *type = c->lake.catalog == FLOE_CATALOG_REST ? "rest" : "filesystem";
	if (c->lake.catalog == FLOE_CATALOG_FILESYSTEM && s3 && !floe_cnode_is_null(s3))
		return floe_config_fail(ctx, s3, FLOE_EFORMAT,
					"key 'lake.s3': only used with lake.catalog.type s3 or rest (it "
					"is filesystem)");
	if (c->lake.catalog != FLOE_CATALOG_S3 && s3_wh)
		return floe_config_fail(ctx, floe_keymap_find_value(map, "warehouse"), FLOE_EFORMAT,
					"key 'lake.warehouse': an s3:// warehouse needs "
					"lake.catalog.type s3 (it is %s)", type);
	/* A REST catalog's tables live where the catalog says; its namespace defaults to
	 * lake.namespace. */
	if (c->lake.catalog == FLOE_CATALOG_REST && !c->lake.rest.namespace &&
	    !(c->lake.rest.namespace = floe_strdup(ctx->a, c->lake.namespace)))
		return floe_keymap_nomem(ctx);
	if (c->lake.catalog == FLOE_CATALOG_S3 && !s3_wh)
		return floe_config_fail(
		    ctx, floe_keymap_find_value(floe_keymap_find_value(map, "catalog"), "type"),
		    FLOE_EFORMAT,
		    "key 'lake.catalog.type': s3 needs an s3:// warehouse (lake.warehouse: "
		    "s3://BUCKET[/PREFIX])");
	if (!s3_wh)
		return 0;
#ifdef FLOE_NO_S3
	/* Refused here too, so that `floe check` says it before a service starts. */
	return floe_config_fail(ctx, floe_keymap_find_value(map, "warehouse"), FLOE_EFORMAT,
				"key 'lake.warehouse': this build of floe has no S3 support (built "
				"with FLOE_WITH_S3=OFF or FLOE_STATIC); use a local warehouse, or "
				"a floe built with S3");
#endif
	size_t blen = strcspn(w + 5, "/");
	const char *prefix = w[5 + blen] ? w + 5 + blen + 1 : "";
	if (!(c->lake.s3_bucket = floe_strndup(ctx->a, w + 5, blen)) ||
	    !(c->lake.s3_prefix = floe_strdup(ctx->a, prefix)))
		return floe_keymap_nomem(ctx);
	return 0;
}

static void lake_fini(struct floe_alloc *a, char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	floe_free(a, c->lake.s3_bucket);
	floe_free(a, c->lake.s3_prefix);
}
