/* floe's configuration keys: one row per key (name, type, field, default, range, help)
 * for the engine in keymap.c, plus the checks and cross-key rules a row cannot express.
 * Adding a key means adding a row here and a field in config.h. */
#include "agent/config/keys.h"

#include "agent/config/config.h"
#include "agent/config/units.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KiB 1024ll
#define MiB (1024ll * KiB)
#define GiB (1024ll * MiB)
#define SEC 1000ll
#define HOUR (3600ll * SEC)

#define CFG(member) offsetof(struct floe_config, member)
#define TBL(member) offsetof(struct floe_config_table, member)
#define INP(member) offsetof(struct floe_config_input, member)

static int check_id(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
static int check_state_dir(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_namespace(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_warehouse(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int check_partition(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int agent_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int input_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int table_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int root_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void table_fini(struct floe_alloc *, char *);

static const char *const codec_names[] = {"zstd", "lz4_raw", "uncompressed", NULL};
static const char *const start_at_names[] = {"beginning", "end", NULL};
static const char *const input_type_names[] = {"tail", NULL};
static const char *const catalog_names[] = {"filesystem", NULL};
static const char *const exclude_default[] = {"*.gz", "*.xz", "*.bz2", "*.zst", NULL};
static const char *const partition_default[] = {"day(ts)", NULL};

/* ---- the key table ------------------------------------------------------------------ */

static const struct floe_key agent_keys[] = {
    {.name = "id",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.id),
     .flags = FLOE_KF_COMPUTED,
     .check = check_id,
     .help = "names this agent in commits and object keys; default: host name"},
    {.name = "state_dir",
     .type = FLOE_KT_STRING,
     .off = CFG(agent.state_dir),
     .def = "/var/lib/floe",
     .check = check_state_dir,
     .help = "checkpoints and spool"},
    {.name = "memory_limit",
     .type = FLOE_KT_SIZE,
     .off = CFG(agent.memory_limit),
     .def = "32MiB",
     .min = 4 * MiB,
     .max = 4 * GiB,
     .help = "total memory budget"},
};
static const struct floe_key_section agent_section = FLOE_KEY_SECTION(agent_keys, agent_post, NULL);

static const struct floe_key input_keys[] = {
    {.name = "type",
     .type = FLOE_KT_ENUM,
     .off = INP(type),
     .size = sizeof(enum floe_input_type),
     .flags = FLOE_KF_REQUIRED,
     .choices = input_type_names,
     .help = "input kind"},
    {.name = "paths",
     .type = FLOE_KT_STRLIST,
     .off = INP(paths),
     .off_n = INP(npaths),
     .flags = FLOE_KF_REQUIRED | FLOE_KF_NONEMPTY,
     .help = "globs of files to follow"},
    {.name = "exclude",
     .type = FLOE_KT_STRLIST,
     .off = INP(exclude),
     .off_n = INP(nexclude),
     .def_list = exclude_default,
     .help = "globs to skip, matched on full path and basename"},
    {.name = "start_at",
     .type = FLOE_KT_ENUM,
     .off = INP(start_at_end),
     .size = sizeof(bool),
     .def = "end",
     .choices = start_at_names,
     .help = "where to start in a file seen first"},
    {.name = "max_line_bytes",
     .type = FLOE_KT_SIZE,
     .off = INP(max_line_bytes),
     .def = "1MiB",
     .min = 256,
     .max = 64 * MiB,
     .help = "longer lines are split"},
};
static const struct floe_key_section input_section = FLOE_KEY_SECTION(input_keys, input_post, NULL);

static const struct floe_key table_keys[] = {
    {.name = "codec",
     .type = FLOE_KT_ENUM,
     .off = TBL(codec),
     .size = sizeof(enum floe_codec),
     .def = "zstd",
     .choices = codec_names,
     .help = "Parquet page compression"},
    {.name = "zstd_level",
     .type = FLOE_KT_INT,
     .off = TBL(zstd_level),
     .size = sizeof(int),
     .def = "3",
     .min = 1,
     .max = 22,
     .help = "used when codec is zstd"},
    {.name = "partition_by",
     .type = FLOE_KT_STRLIST,
     .off = TBL(partition_by),
     .off_n = TBL(npartition_by),
     .flags = FLOE_KF_UNIQUE,
     .def_list = partition_default,
     .max = 8,
     .check = check_partition,
     .help = "Iceberg partition fields; [] = unpartitioned"},
    {.name = "target_file_size",
     .type = FLOE_KT_SIZE,
     .off = TBL(target_file_size),
     .def = "64MiB",
     .min = 1 * MiB,
     .max = 2 * GiB,
     .help = "data file size to aim for"},
    {.name = "commit_interval",
     .type = FLOE_KT_DURATION,
     .off = TBL(commit_interval_ms),
     .def = "60s",
     .min = 1 * SEC,
     .max = 24 * HOUR,
     .help = "how often to commit"},
    {.name = "row_group_size",
     .type = FLOE_KT_SIZE,
     .off = TBL(row_group_size),
     .flags = FLOE_KF_COMPUTED,
     .min = 1 * MiB,
     .max = 2 * GiB,
     .help = "Parquet row group; default min(target_file_size, 64MiB)"},
};
static const struct floe_key_section table_section =
    FLOE_KEY_SECTION(table_keys, table_post, table_fini);

static const struct floe_key tables_keys[] = {
    {.name = "logs",
     .type = FLOE_KT_SECTION,
     .off = CFG(logs),
     .sub = &table_section,
     .help = "the raw log table"},
};
static const struct floe_key_section tables_section = FLOE_KEY_SECTION(tables_keys, NULL, NULL);

static const struct floe_key catalog_keys[] = {
    {.name = "type",
     .type = FLOE_KT_ENUM,
     .off = CFG(lake.catalog),
     .size = sizeof(enum floe_catalog_type),
     .def = "filesystem",
     .choices = catalog_names,
     .help = "how commits are made atomic"},
};
static const struct floe_key_section catalog_section = FLOE_KEY_SECTION(catalog_keys, NULL, NULL);

static const struct floe_key lake_keys[] = {
    {.name = "warehouse",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.warehouse),
     .flags = FLOE_KF_COMPUTED,
     .check = check_warehouse,
     .help = "directory or file:// URI; default <state_dir>/warehouse"},
    {.name = "namespace",
     .type = FLOE_KT_STRING,
     .off = CFG(lake.namespace),
     .def = "default",
     .check = check_namespace,
     .help = "Iceberg namespace"},
    {.name = "catalog", .type = FLOE_KT_SECTION, .sub = &catalog_section},
};
static const struct floe_key_section lake_section = FLOE_KEY_SECTION(lake_keys, NULL, NULL);

static const struct floe_key root_keys[] = {
    {.name = "agent", .type = FLOE_KT_SECTION, .sub = &agent_section},
    {.name = "inputs",
     .type = FLOE_KT_SECTION_LIST,
     .off = CFG(inputs),
     .off_n = CFG(ninputs),
     .size = sizeof(struct floe_config_input),
     .sub = &input_section},
    {.name = "tables", .type = FLOE_KT_SECTION, .sub = &tables_section},
    {.name = "lake", .type = FLOE_KT_SECTION, .sub = &lake_section},
};
const struct floe_key_section floe_config_keys = FLOE_KEY_SECTION(root_keys, root_post, NULL);

/* ---- checks and post hooks ------------------------------------------------------------- */

static bool all_of(const char *s, size_t min, size_t max, const char *extra)
{
	size_t n = strlen(s);
	if (n < min || n > max)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      strchr(extra, c)))
			return false;
	}
	return true;
}

static int check_id(struct floe_config_ctx *ctx, const struct floe_cnode *at, const char *path,
		    char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (all_of(*value, 1, 64, "._-"))
		return 0;
	return floe_config_fail(
	    ctx, at, FLOE_EFORMAT,
	    "key '%s': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got '%s'", path,
	    floe_keymap_show(*value, strlen(*value), shown));
}

static int check_namespace(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (all_of(*value, 1, 128, "_"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 128 characters of A-Z a-z 0-9 _, got '%s'",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Whether s starts with "scheme://" (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )). */
static bool has_scheme(const char *s)
{
	size_t i = 0;
	if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))
		while (s[i] && (strchr("+-.", s[i]) || (s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			i++;
	return i > 0 && strncmp(s + i, "://", 3) == 0;
}

/* The state directory is always local; a URI there is a mistake, and the default
 * warehouse, <state_dir>/warehouse, must stay a plain path too. */
static int check_state_dir(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (!has_scheme(*value))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a local directory path, got '%s'", path,
				floe_keymap_show(*value, strlen(*value), shown));
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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
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
			int h = hexval(p[1]), l = h < 0 ? -1 : hexval(p[2]);
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
	if (has_scheme(s))
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': expected a directory path or a file:// URI, got '%s' "
		    "(only local warehouses are supported so far)",
		    path, shown);
	return 0;
}

static void skip_ws(const char **p, const char *e)
{
	while (*p < e && (**p == ' ' || **p == '\t'))
		(*p)++;
}

static size_t word(const char **p, const char *e, const char **w)
{
	skip_ws(p, e);
	*w = *p;
	while (*p < e && ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') ||
			  (**p >= '0' && **p <= '9') || **p == '_'))
		(*p)++;
	return (size_t)(*p - *w);
}

#define IS(w, l, lit) ((l) == sizeof(lit) - 1 && memcmp((w), (lit), (l)) == 0)

/* Writes the canonical form of partition field s into out (32 bytes); -1 if s is not one
 * floe supports. */
static int canonical_partition(const char *s, char *out)
{
	const char *p = s, *e = s + strlen(s), *fn, *a1 = "", *a2 = "";
	size_t fnl, a1l = 0, a2l = 0;
	int nargs = 0;

	fnl = word(&p, e, &fn);
	skip_ws(&p, e);
	if (p < e && *p == '(') {
		p++;
		a1l = word(&p, e, &a1);
		nargs = 1;
		skip_ws(&p, e);
		if (p < e && *p == ',') {
			p++;
			a2l = word(&p, e, &a2);
			nargs = 2;
			skip_ws(&p, e);
		}
		if (p >= e || *p != ')')
			return -1;
		p++;
		skip_ws(&p, e);
	}
	if (p != e || fnl == 0)
		return -1;
	if (nargs == 0 && (IS(fn, fnl, "host") || IS(fn, fnl, "app")))
		return snprintf(out, 32, "identity(%.*s)", (int)fnl, fn), 0;
	if (nargs == 1 && IS(fn, fnl, "identity") && (IS(a1, a1l, "host") || IS(a1, a1l, "app")))
		return snprintf(out, 32, "identity(%.*s)", (int)a1l, a1), 0;
	if (nargs == 1 && IS(a1, a1l, "ts") &&
	    (IS(fn, fnl, "year") || IS(fn, fnl, "month") || IS(fn, fnl, "day") ||
	     IS(fn, fnl, "hour")))
		return snprintf(out, 32, "%.*s(ts)", (int)fnl, fn), 0;
	if (nargs == 2 && IS(fn, fnl, "bucket") && IS(a2, a2l, "host") && a1l >= 1 && a1l <= 4) {
		int nb = 0;
		for (size_t i = 0; i < a1l; i++) {
			if (a1[i] < '0' || a1[i] > '9')
				return -1;
			nb = nb * 10 + (a1[i] - '0');
		}
		if (nb < 1 || nb > 1024)
			return -1;
		return snprintf(out, 32, "bucket(%d, host)", nb), 0;
	}
	return -1;
}

static int check_partition(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char canon[32], shown[FLOE_KEYMAP_SHOW_CAP];
	if (canonical_partition(*value, canon) < 0)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': expected one of year(ts), month(ts), day(ts), "
		    "hour(ts), identity(host), host, app, bucket(N, host) with N "
		    "in 1..1024, got '%s'",
		    path, floe_keymap_show(*value, strlen(*value), shown));
	if (strcmp(canon, *value) == 0)
		return 0;
	char *c = floe_strdup(ctx->a, canon);
	if (!c)
		return floe_keymap_nomem(ctx);
	floe_free(ctx->a, *value);
	*value = c;
	return 0;
}

static int agent_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (c->agent.id)
		return 0;
	if (!(c->agent.id = floe_strdup(ctx->a, ctx->default_id)))
		return floe_keymap_nomem(ctx);
	if (all_of(c->agent.id, 1, 64, "._-"))
		return 0;
	return floe_config_fail(
	    ctx, map, FLOE_EFORMAT,
	    "key 'agent.id' is not set and the host name '%s' is not a valid id "
	    "(1 to 64 characters of A-Z a-z 0-9 . _ -); set agent.id",
	    floe_keymap_show(c->agent.id, strlen(c->agent.id), shown));
}

static int input_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_input *in = (struct floe_config_input *)(void *)base;
	in->line = map ? (map->line > INT32_MAX ? INT32_MAX : (int)map->line) : 0;
	return 0;
}

static int table_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_table *t = (struct floe_config_table *)(void *)base;
	const char *dot = strrchr(path, '.');
	char a[FLOE_UNITS_FMT_MAX], b[FLOE_UNITS_FMT_MAX];

	if (!(t->name = floe_strdup(ctx->a, dot ? dot + 1 : path)))
		return floe_keymap_nomem(ctx);
	if (t->row_group_size == 0) {
		t->row_group_size = t->target_file_size < (uint64_t)(64 * MiB)
					? t->target_file_size
					: (uint64_t)(64 * MiB);
	} else if (t->row_group_size > t->target_file_size) {
		return floe_config_fail(ctx, floe_keymap_find_value(map, "row_group_size"),
					FLOE_EFORMAT,
					"key '%s.row_group_size': %s is larger than "
					"target_file_size (%s)",
					path, floe_units_format_size(t->row_group_size, a),
					floe_units_format_size(t->target_file_size, b));
	}
	return 0;
}

static void table_fini(struct floe_alloc *a, char *base)
{
	floe_free(a, ((struct floe_config_table *)(void *)base)->name);
}

static int root_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		     char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	if (c->lake.warehouse)
		return 0;
	const char *dir = c->agent.state_dir;
	size_t n = strlen(dir), total;
	bool slash = n > 0 && dir[n - 1] == '/';
	if (__builtin_add_overflow(n, sizeof("/warehouse"), &total))
		return floe_keymap_nomem(ctx);
	if (!(c->lake.warehouse = floe_malloc(ctx->a, total)))
		return floe_keymap_nomem(ctx);
	snprintf(c->lake.warehouse, total, "%s%swarehouse", dir, slash ? "" : "/");
	return 0;
}
