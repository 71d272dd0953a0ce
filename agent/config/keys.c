/* The declarative key table of floe's configuration and the engine that runs it. One
 * row per key (name, type, field offset, default, range, help) drives validation,
 * defaults, the effective-configuration dump and freeing (Fluent Bit's config map idea),
 * so adding a key means adding a row, not another strcmp ladder. */
#include "agent/config/keys.h"

#include "agent/config/config.h"
#include "agent/config/units.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define KiB 1024ll
#define MiB (1024ll * KiB)
#define GiB (1024ll * MiB)
#define SEC 1000ll
#define HOUR (3600ll * SEC)

#define PATH_CAP 160 /* longest key path: table names plus a few [index] */
#define SHOW_CAP 80  /* longest piece of user text quoted in a message */
#define MAX_KEYS 32  /* keys per section */
#define LIST_CAP 160 /* "zstd, lz4_raw, uncompressed" and the like */

enum ktype {
	KT_SECTION,      /* a mapping of more keys (sub), at base + off */
	KT_SECTION_LIST, /* a sequence of mappings: array of size-byte elements at off, count at off_n */
	KT_STRING,       /* char * at off */
	KT_STRLIST,      /* char ** at off, size_t count at off_n; a lone string is a list of one */
	KT_SIZE,         /* uint64_t bytes at off */
	KT_DURATION,     /* uint64_t milliseconds at off */
	KT_INT,          /* int at off */
	KT_ENUM,         /* index into choices, stored in size bytes (bool or enum) at off */
};

enum {
	KF_REQUIRED = 1, /* no default: the key must be given */
	KF_NONEMPTY = 2, /* a list that must hold at least one entry */
	KF_UNIQUE = 4,   /* a list whose entries must all differ */
	KF_COMPUTED = 8, /* the default is derived from other keys by the section's post hook */
};

/* Extra validation of a string after its type conversion; may replace *value (owned) with
 * a normalised form. */
typedef int (*kcheck_fn)(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			 const char *path, char **value);
/* Runs after every key of a section is set: computed defaults and cross-key rules. map is
 * NULL when the section was absent from the file. */
typedef int (*kpost_fn)(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			const char *path, char *base);

struct section;

struct kdef {
	const char *name;
	enum ktype type;
	size_t off;
	size_t off_n;
	size_t size;
	unsigned flags;
	const char *def;              /* scalar default, written as in the file */
	const char *const *def_list;  /* KT_STRLIST default, NULL-terminated */
	int64_t min, max;             /* KT_SIZE, KT_DURATION (ms), KT_INT; KT_STRLIST: max
				       * entries (0 = no limit) */
	const char *const *choices;   /* KT_ENUM, NULL-terminated; the value is the index */
	const struct section *sub;    /* KT_SECTION, KT_SECTION_LIST */
	kcheck_fn check;
	const char *help;
};

struct section {
	const struct kdef *keys;
	size_t nkeys;
	kpost_fn post;
};

#define SECTION(keys, post) {keys, sizeof(keys) / sizeof(keys[0]), post}
#define CFG(member) offsetof(struct floe_config, member)
#define TBL(member) offsetof(struct floe_config_table, member)
#define INP(member) offsetof(struct floe_config_input, member)

static int check_id(struct floe_config_ctx *, const struct floe_cnode *, const char *, char **);
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

static const char *const codec_names[] = {"zstd", "lz4_raw", "uncompressed", NULL};
static const char *const start_at_names[] = {"beginning", "end", NULL};
static const char *const input_type_names[] = {"tail", NULL};
static const char *const catalog_names[] = {"filesystem", NULL};
static const char *const exclude_default[] = {"*.gz", "*.xz", "*.bz2", "*.zst", NULL};
static const char *const partition_default[] = {"day(ts)", NULL};

/* ---- the key table ------------------------------------------------------------------ */

static const struct kdef agent_keys[] = {
	{.name = "id", .type = KT_STRING, .off = CFG(agent.id), .flags = KF_COMPUTED,
	 .check = check_id, .help = "names this agent in commits and object keys; default: host name"},
	{.name = "state_dir", .type = KT_STRING, .off = CFG(agent.state_dir), .def = "/var/lib/floe",
	 .help = "checkpoints and spool"},
	{.name = "memory_limit", .type = KT_SIZE, .off = CFG(agent.memory_limit), .def = "32MiB",
	 .min = 4 * MiB, .max = 4 * GiB, .help = "total memory budget"},
};
static const struct section agent_section = SECTION(agent_keys, agent_post);

static const struct kdef input_keys[] = {
	{.name = "type", .type = KT_ENUM, .off = INP(type), .size = sizeof(enum floe_input_type),
	 .flags = KF_REQUIRED, .choices = input_type_names, .help = "input kind"},
	{.name = "paths", .type = KT_STRLIST, .off = INP(paths), .off_n = INP(npaths),
	 .flags = KF_REQUIRED | KF_NONEMPTY, .help = "globs of files to follow"},
	{.name = "exclude", .type = KT_STRLIST, .off = INP(exclude), .off_n = INP(nexclude),
	 .def_list = exclude_default, .help = "globs to skip, matched on full path and basename"},
	{.name = "start_at", .type = KT_ENUM, .off = INP(start_at_end), .size = sizeof(bool),
	 .def = "end", .choices = start_at_names, .help = "where to start in a file seen first"},
	{.name = "max_line_bytes", .type = KT_SIZE, .off = INP(max_line_bytes), .def = "1MiB",
	 .min = 256, .max = 64 * MiB, .help = "longer lines are split"},
};
static const struct section input_section = SECTION(input_keys, input_post);

static const struct kdef table_keys[] = {
	{.name = "codec", .type = KT_ENUM, .off = TBL(codec), .size = sizeof(enum floe_codec),
	 .def = "zstd", .choices = codec_names, .help = "Parquet page compression"},
	{.name = "zstd_level", .type = KT_INT, .off = TBL(zstd_level), .size = sizeof(int),
	 .def = "3", .min = 1, .max = 22, .help = "used when codec is zstd"},
	{.name = "partition_by", .type = KT_STRLIST, .off = TBL(partition_by),
	 .off_n = TBL(npartition_by), .flags = KF_UNIQUE, .def_list = partition_default, .max = 8,
	 .check = check_partition, .help = "Iceberg partition fields; [] = unpartitioned"},
	{.name = "target_file_size", .type = KT_SIZE, .off = TBL(target_file_size), .def = "64MiB",
	 .min = 1 * MiB, .max = 2 * GiB, .help = "data file size to aim for"},
	{.name = "commit_interval", .type = KT_DURATION, .off = TBL(commit_interval_ms),
	 .def = "60s", .min = 1 * SEC, .max = 24 * HOUR, .help = "how often to commit"},
	{.name = "row_group_size", .type = KT_SIZE, .off = TBL(row_group_size),
	 .flags = KF_COMPUTED, .min = 1 * MiB, .max = 2 * GiB,
	 .help = "Parquet row group; default min(target_file_size, 64MiB)"},
};
static const struct section table_section = SECTION(table_keys, table_post);

static const struct kdef tables_keys[] = {
	{.name = "logs", .type = KT_SECTION, .off = CFG(logs), .sub = &table_section,
	 .help = "the raw log table"},
};
static const struct section tables_section = SECTION(tables_keys, NULL);

static const struct kdef catalog_keys[] = {
	{.name = "type", .type = KT_ENUM, .off = CFG(lake.catalog),
	 .size = sizeof(enum floe_catalog_type), .def = "filesystem", .choices = catalog_names,
	 .help = "how commits are made atomic"},
};
static const struct section catalog_section = SECTION(catalog_keys, NULL);

static const struct kdef lake_keys[] = {
	{.name = "warehouse", .type = KT_STRING, .off = CFG(lake.warehouse), .flags = KF_COMPUTED,
	 .check = check_warehouse, .help = "directory or file:// URI; default <state_dir>/warehouse"},
	{.name = "namespace", .type = KT_STRING, .off = CFG(lake.namespace), .def = "default",
	 .check = check_namespace, .help = "Iceberg namespace"},
	{.name = "catalog", .type = KT_SECTION, .sub = &catalog_section},
};
static const struct section lake_section = SECTION(lake_keys, NULL);

static const struct kdef root_keys[] = {
	{.name = "agent", .type = KT_SECTION, .sub = &agent_section},
	{.name = "inputs", .type = KT_SECTION_LIST, .off = CFG(inputs), .off_n = CFG(ninputs),
	 .size = sizeof(struct floe_config_input), .sub = &input_section},
	{.name = "tables", .type = KT_SECTION, .sub = &tables_section},
	{.name = "lake", .type = KT_SECTION, .sub = &lake_section},
};
static const struct section root_section = SECTION(root_keys, root_post);

/* ---- helpers -------------------------------------------------------------------------- */

static int nomem(struct floe_config_ctx *ctx)
{
	return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
}

/* Copies user text into buf (SHOW_CAP bytes) fit for a one-line message: control
 * characters and quotes become '?', long text is cut (not inside a UTF-8 sequence) and
 * marked with "...". */
static const char *show(const char *s, size_t len, char *buf)
{
	size_t max = SHOW_CAP - 4, n = len;
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = (c < 0x20 || c == 0x7f || c == '\'') ? '?' : (char)c;
	}
	if (n < len)
		memcpy(buf + n, "...", 3), n += 3;
	buf[n] = '\0';
	return buf;
}

static void path_key(char *dst, const char *prefix, const char *name)
{
	snprintf(dst, PATH_CAP, "%s%s%s", prefix, *prefix ? "." : "", name);
}

static void path_index(char *dst, const char *prefix, size_t i)
{
	snprintf(dst, PATH_CAP, "%s[%zu]", prefix, i);
}

static const char *kind_name(const struct floe_cnode *n)
{
	if (floe_cnode_is_null(n))
		return "null";
	switch (n->kind) {
	case FLOE_CNODE_MAP:
		return "a mapping";
	case FLOE_CNODE_SEQ:
		return "a sequence";
	default:
		return "a scalar";
	}
}

/* "a, b, c" from a NULL-terminated list of names. */
static const char *join_names(const char *const *names, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = '\0';
	for (size_t i = 0; names[i] && n < cap; i++)
		n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", names[i]);
	return buf;
}

static const char *expected_name(const struct kdef *k, char *buf, size_t cap)
{
	switch (k->type) {
	case KT_SECTION:
		return "a mapping";
	case KT_SECTION_LIST:
		return "a sequence of mappings";
	case KT_STRING:
		return "a string";
	case KT_STRLIST:
		return "a string or a sequence of strings";
	case KT_SIZE:
		return "a size";
	case KT_DURATION:
		return "a duration";
	case KT_INT:
		return "an integer";
	case KT_ENUM: {
		char list[LIST_CAP];
		snprintf(buf, cap, "one of %s", join_names(k->choices, list, sizeof(list)));
		return buf;
	}
	}
	return "a value";
}

static int type_error(struct floe_config_ctx *ctx, const struct kdef *k,
		      const struct floe_cnode *val, const char *path)
{
	char buf[LIST_CAP + 8];
	return floe_config_fail(ctx, val, FLOE_EFORMAT, "key '%s': expected %s, got %s", path,
				expected_name(k, buf, sizeof(buf)), kind_name(val));
}

static void put_ptr(char *field, const void *p)
{
	memcpy(field, &p, sizeof(p));
}

static void *get_ptr(const char *field)
{
	void *p;
	memcpy(&p, field, sizeof(p));
	return p;
}

static void put_size(char *field, size_t n)
{
	memcpy(field, &n, sizeof(n));
}

static size_t get_size(const char *field)
{
	size_t n;
	memcpy(&n, field, sizeof(n));
	return n;
}

static void put_u64(char *field, uint64_t v)
{
	memcpy(field, &v, sizeof(v));
}

static uint64_t get_u64(const char *field)
{
	uint64_t v;
	memcpy(&v, field, sizeof(v));
	return v;
}

/* Stores v in a bool (size 1) or an int-sized enum or int. */
static void put_small(char *field, size_t size, int64_t v)
{
	if (size == 1) {
		bool b = v != 0;
		memcpy(field, &b, 1);
	} else {
		int i = (int)v;
		memcpy(field, &i, sizeof(i));
	}
}

static int64_t get_small(const char *field, size_t size)
{
	if (size == 1) {
		uint8_t b;
		memcpy(&b, field, 1);
		return b;
	}
	int i;
	memcpy(&i, field, sizeof(i));
	return i;
}

/* Finds the value of key name in map (NULL if absent or map is NULL). */
static const struct floe_cnode *find_value(const struct floe_cnode *map, const char *name)
{
	size_t nlen = strlen(name);
	for (size_t i = 0; map && i + 1 < map->nkids; i += 2) {
		const struct floe_cnode *key = map->kids[i];
		if (key->kind == FLOE_CNODE_SCALAR && key->len == nlen &&
		    memcmp(key->str, name, nlen) == 0)
			return map->kids[i + 1];
	}
	return NULL;
}

/* ---- conversions ------------------------------------------------------------------- */

static int parse_int(const char *s, size_t len, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	int64_t v = 0;
	if (len > 0 && (s[0] == '-' || s[0] == '+'))
		neg = s[i++] == '-';
	if (i == len)
		return FLOE_EPARSE;
	for (; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return FLOE_EPARSE;
		int d = s[i] - '0';
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, neg ? -d : d, &v))
			return FLOE_ELIMIT;
	}
	*out = v;
	return 0;
}

/* Converts a scalar val (not null) for a scalar-typed key. */
static int convert_scalar(struct floe_config_ctx *ctx, const struct kdef *k,
			  const struct floe_cnode *val, const char *path, char *base)
{
	char *field = base + k->off;
	char shown[SHOW_CAP], lo[FLOE_UNITS_FMT_MAX], hi[FLOE_UNITS_FMT_MAX];
	int rc;

	if (val->kind != FLOE_CNODE_SCALAR)
		return type_error(ctx, k, val, path);
	if (memchr(val->str, '\0', val->len))
		return floe_config_fail(ctx, val, FLOE_EFORMAT,
					"key '%s': must not contain NUL characters", path);
	show(val->str, val->len, shown);
	switch (k->type) {
	case KT_STRING: {
		if (val->len == 0)
			return floe_config_fail(ctx, val, FLOE_EFORMAT, "key '%s': must not be empty",
						path);
		char *s = floe_strndup(ctx->a, val->str, val->len);
		if (!s)
			return nomem(ctx);
		put_ptr(field, s);
		return k->check ? k->check(ctx, val, path, (char **)(void *)field) : 0;
	}
	case KT_SIZE: {
		uint64_t v = 0;
		rc = floe_units_parse_size(val->str, val->len, &v);
		if (rc == FLOE_EPARSE)
			return floe_config_fail(
				ctx, val, FLOE_EFORMAT,
				"key '%s': expected a size (an integer with an optional unit B, K, KiB, M, "
				"MiB, G, GiB, T, TiB; all 1024-based), got '%s'",
				path, shown);
		if (rc < 0 || v < (uint64_t)k->min || v > (uint64_t)k->max)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': expected a size in %s..%s, got '%s'", path,
						floe_units_format_size((uint64_t)k->min, lo),
						floe_units_format_size((uint64_t)k->max, hi), shown);
		put_u64(field, v);
		return 0;
	}
	case KT_DURATION: {
		uint64_t v = 0;
		rc = floe_units_parse_duration_ms(val->str, val->len, &v);
		if (rc == FLOE_EPARSE)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': expected a duration (an integer with a "
						"unit ms, s, m or h), got '%s'",
						path, shown);
		if (rc < 0 || v < (uint64_t)k->min || v > (uint64_t)k->max)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': expected a duration in %s..%s, got '%s'",
						path, floe_units_format_duration_ms((uint64_t)k->min, lo),
						floe_units_format_duration_ms((uint64_t)k->max, hi),
						shown);
		put_u64(field, v);
		return 0;
	}
	case KT_INT: {
		int64_t v = 0;
		rc = parse_int(val->str, val->len, &v);
		if (rc < 0 || v < k->min || v > k->max)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': expected an integer in %" PRId64
						"..%" PRId64 ", got '%s'",
						path, k->min, k->max, shown);
		put_small(field, k->size, v);
		return 0;
	}
	case KT_ENUM:
		for (size_t i = 0; k->choices[i]; i++) {
			if (strlen(k->choices[i]) == val->len &&
			    memcmp(k->choices[i], val->str, val->len) == 0) {
				put_small(field, k->size, (int64_t)i);
				return 0;
			}
		}
		char list[LIST_CAP];
		return floe_config_fail(ctx, val, FLOE_EFORMAT,
					"key '%s': expected one of %s, got '%s'", path,
					join_names(k->choices, list, sizeof(list)), shown);
	default:
		return type_error(ctx, k, val, path);
	}
}

/* Allocates the array of a list (n entries, at least one slot so that NULL always means
 * failure) and records it in the struct at once, so that freeing a half-filled list
 * works. */
static void *new_list(struct floe_config_ctx *ctx, const struct kdef *k, char *base, size_t n,
		      size_t elem)
{
	void *arr = floe_calloc(ctx->a, n ? n : 1, elem);
	if (!arr)
		return NULL;
	put_ptr(base + k->off, arr);
	put_size(base + k->off_n, n);
	return arr;
}

static int convert_strlist(struct floe_config_ctx *ctx, const struct kdef *k,
			   const struct floe_cnode *val, const char *path, char *base)
{
	const struct floe_cnode *const *items = (const struct floe_cnode *const *)val->kids;
	size_t n = val->nkids;
	char ipath[PATH_CAP], shown[SHOW_CAP];

	if (val->kind == FLOE_CNODE_MAP)
		return type_error(ctx, k, val, path);
	if (val->kind == FLOE_CNODE_SCALAR) {
		items = &val;
		n = 1;
	}
	if (n == 0 && (k->flags & KF_NONEMPTY))
		return floe_config_fail(ctx, val, FLOE_EFORMAT, "key '%s': must not be empty", path);
	if (k->max > 0 && n > (uint64_t)k->max)
		return floe_config_fail(ctx, val, FLOE_EFORMAT, "key '%s': at most %" PRId64
					" entries, got %zu", path, k->max, n);
	char **arr = new_list(ctx, k, base, n, sizeof(char *));
	if (!arr)
		return nomem(ctx);
	for (size_t i = 0; i < n; i++) {
		const struct floe_cnode *item = items[i];
		if (val->kind == FLOE_CNODE_SEQ)
			path_index(ipath, path, i);
		else
			snprintf(ipath, sizeof(ipath), "%s", path);
		if (item->kind != FLOE_CNODE_SCALAR || floe_cnode_is_null(item))
			return floe_config_fail(ctx, item, FLOE_EFORMAT,
						"key '%s': expected a string, got %s", ipath,
						kind_name(item));
		if (item->len == 0)
			return floe_config_fail(ctx, item, FLOE_EFORMAT,
						"key '%s': must not be empty", ipath);
		if (memchr(item->str, '\0', item->len))
			return floe_config_fail(ctx, item, FLOE_EFORMAT,
						"key '%s': must not contain NUL characters", ipath);
		arr[i] = floe_strndup(ctx->a, item->str, item->len);
		if (!arr[i])
			return nomem(ctx);
		if (k->check) {
			int rc = k->check(ctx, item, ipath, &arr[i]);
			if (rc < 0)
				return rc;
		}
		for (size_t j = 0; (k->flags & KF_UNIQUE) && j < i; j++)
			if (strcmp(arr[j], arr[i]) == 0)
				return floe_config_fail(ctx, item, FLOE_EFORMAT,
							"key '%s': duplicate entry '%s'", ipath,
							show(arr[i], strlen(arr[i]), shown));
	}
	return 0;
}

static int apply_section(struct floe_config_ctx *ctx, const struct section *sec,
			 const struct floe_cnode *map, const char *path, char *base);

static int convert_section_list(struct floe_config_ctx *ctx, const struct kdef *k,
				const struct floe_cnode *val, const char *path, char *base)
{
	char ipath[PATH_CAP];
	if (val->kind != FLOE_CNODE_SEQ)
		return type_error(ctx, k, val, path);
	char *arr = new_list(ctx, k, base, val->nkids, k->size);
	if (!arr)
		return nomem(ctx);
	for (size_t i = 0; i < val->nkids; i++) {
		const struct floe_cnode *item = val->kids[i];
		path_index(ipath, path, i);
		if (item->kind != FLOE_CNODE_MAP)
			return floe_config_fail(ctx, item, FLOE_EFORMAT,
						"key '%s': expected a mapping, got %s", ipath,
						kind_name(item));
		int rc = apply_section(ctx, k->sub, item, ipath, arr + i * k->size);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int apply_value(struct floe_config_ctx *ctx, const struct kdef *k,
		       const struct floe_cnode *val, const char *path, char *base)
{
	switch (k->type) {
	case KT_SECTION:
		if (val->kind != FLOE_CNODE_MAP)
			return type_error(ctx, k, val, path);
		return apply_section(ctx, k->sub, val, path, base + k->off);
	case KT_SECTION_LIST:
		return convert_section_list(ctx, k, val, path, base);
	case KT_STRLIST:
		return convert_strlist(ctx, k, val, path, base);
	default:
		return convert_scalar(ctx, k, val, path, base);
	}
}

/* Sets key k, absent from the file, to its default. */
static int apply_default(struct floe_config_ctx *ctx, const struct kdef *k,
			 const struct floe_cnode *map, const char *path, char *base)
{
	switch (k->type) {
	case KT_SECTION:
		return apply_section(ctx, k->sub, NULL, path, base + k->off);
	case KT_SECTION_LIST:
		return 0; /* an empty list: the struct is zeroed */
	case KT_STRLIST: {
		size_t n = 0;
		while (k->def_list && k->def_list[n])
			n++;
		char **arr = new_list(ctx, k, base, n, sizeof(char *));
		if (!arr)
			return nomem(ctx);
		for (size_t i = 0; i < n; i++)
			if (!(arr[i] = floe_strdup(ctx->a, k->def_list[i])))
				return nomem(ctx);
		return 0;
	}
	default:
		if ((k->flags & KF_COMPUTED) || !k->def)
			return 0;
		/* Defaults go through the same conversion as file values, so a default
		 * that breaks its own range fails every test. */
		struct floe_cnode d = {.kind = FLOE_CNODE_SCALAR,
				       .line = map ? map->line : 1,
				       .col = map ? map->col : 1,
				       .str = (char *)k->def,
				       .len = strlen(k->def)};
		return convert_scalar(ctx, k, &d, path, base);
	}
}

static int unknown_key(struct floe_config_ctx *ctx, const struct section *sec,
		       const struct floe_cnode *key, const char *path)
{
	char shown[SHOW_CAP], list[LIST_CAP];
	size_t n = 0;
	list[0] = '\0';
	for (size_t i = 0; i < sec->nkeys && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				      sec->keys[i].name);
	return floe_config_fail(ctx, key, FLOE_EFORMAT, "unknown key '%s%s%s'; valid keys here: %s",
				path, *path ? "." : "", show(key->str, key->len, shown), list);
}

/* Applies map (NULL = section absent) to the section's keys, then defaults for the keys
 * not given, then the section's post hook. First error in document order wins. */
static int apply_section(struct floe_config_ctx *ctx, const struct section *sec,
			 const struct floe_cnode *map, const char *path, char *base)
{
	const struct floe_cnode *vals[MAX_KEYS] = {0};
	char kpath[PATH_CAP];
	int rc;

	for (size_t i = 0; map && i + 1 < map->nkids; i += 2) {
		const struct floe_cnode *key = map->kids[i], *val = map->kids[i + 1];
		if (key->kind != FLOE_CNODE_SCALAR)
			return floe_config_fail(ctx, key, FLOE_EFORMAT,
						"key names must be strings, got %s", kind_name(key));
		size_t idx = 0;
		while (idx < sec->nkeys && !(strlen(sec->keys[idx].name) == key->len &&
					     memcmp(sec->keys[idx].name, key->str, key->len) == 0))
			idx++;
		if (idx == sec->nkeys)
			return unknown_key(ctx, sec, key, path);
		path_key(kpath, path, sec->keys[idx].name);
		if (vals[idx])
			return floe_config_fail(ctx, key, FLOE_EFORMAT, "duplicate key '%s'", kpath);
		vals[idx] = val;
		if (floe_cnode_is_null(val))
			continue; /* "key:" with nothing after it: the default applies */
		rc = apply_value(ctx, &sec->keys[idx], val, kpath, base);
		if (rc < 0)
			return rc;
	}
	for (size_t idx = 0; idx < sec->nkeys; idx++) {
		const struct kdef *k = &sec->keys[idx];
		if (vals[idx] && !floe_cnode_is_null(vals[idx]))
			continue;
		path_key(kpath, path, k->name);
		if ((k->flags & KF_REQUIRED) && vals[idx])
			return floe_config_fail(ctx, vals[idx], FLOE_EFORMAT,
						"key '%s': a value is required", kpath);
		if (k->flags & KF_REQUIRED)
			return floe_config_fail(ctx, map, FLOE_EFORMAT, "missing required key '%s'",
						kpath);
		rc = apply_default(ctx, k, map, kpath, base);
		if (rc < 0)
			return rc;
	}
	return sec->post ? sec->post(ctx, map, path, base) : 0;
}

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
	char shown[SHOW_CAP];
	if (all_of(*value, 1, 64, "._-"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 64 characters of A-Z a-z 0-9 . _ -, got '%s'",
				path, show(*value, strlen(*value), shown));
}

static int check_namespace(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char shown[SHOW_CAP];
	if (all_of(*value, 1, 128, "_"))
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected 1 to 128 characters of A-Z a-z 0-9 _, got '%s'",
				path, show(*value, strlen(*value), shown));
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
	char shown[SHOW_CAP];
	const char *s = *value;
	size_t n = strlen(s);
	show(s, n, shown);
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
			return nomem(ctx);
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
		floe_free(ctx->a, *value);
		*value = out;
		return 0;
	}
	/* scheme "://" per RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) */
	size_t i = 0;
	if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))
		while (s[i] && (strchr("+-.", s[i]) || (s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			i++;
	if (i > 0 && strncmp(s + i, "://", 3) == 0)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
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
	char canon[32], shown[SHOW_CAP];
	if (canonical_partition(*value, canon) < 0)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected one of year(ts), month(ts), day(ts), "
					"hour(ts), identity(host), host, app, bucket(N, host) with N "
					"in 1..1024, got '%s'",
					path, show(*value, strlen(*value), shown));
	if (strcmp(canon, *value) == 0)
		return 0;
	char *c = floe_strdup(ctx->a, canon);
	if (!c)
		return nomem(ctx);
	floe_free(ctx->a, *value);
	*value = c;
	return 0;
}

static int agent_post(struct floe_config_ctx *ctx, const struct floe_cnode *map,
		      const char *path, char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	char shown[SHOW_CAP];
	if (c->agent.id)
		return 0;
	if (!(c->agent.id = floe_strdup(ctx->a, ctx->default_id)))
		return nomem(ctx);
	if (all_of(c->agent.id, 1, 64, "._-"))
		return 0;
	return floe_config_fail(ctx, map, FLOE_EFORMAT,
				"key 'agent.id' is not set and the host name '%s' is not a valid id "
				"(1 to 64 characters of A-Z a-z 0-9 . _ -); set agent.id",
				show(c->agent.id, strlen(c->agent.id), shown));
}

static int input_post(struct floe_config_ctx *ctx, const struct floe_cnode *map,
		      const char *path, char *base)
{
	struct floe_config_input *in = (struct floe_config_input *)(void *)base;
	in->line = map ? (map->line > INT32_MAX ? INT32_MAX : (int)map->line) : 0;
	return 0;
}

static int table_post(struct floe_config_ctx *ctx, const struct floe_cnode *map,
		      const char *path, char *base)
{
	struct floe_config_table *t = (struct floe_config_table *)(void *)base;
	const char *dot = strrchr(path, '.');
	char a[FLOE_UNITS_FMT_MAX], b[FLOE_UNITS_FMT_MAX];

	if (!(t->name = floe_strdup(ctx->a, dot ? dot + 1 : path)))
		return nomem(ctx);
	if (t->row_group_size == 0) {
		t->row_group_size = t->target_file_size < (uint64_t)(64 * MiB)
					    ? t->target_file_size
					    : (uint64_t)(64 * MiB);
	} else if (t->row_group_size > t->target_file_size) {
		return floe_config_fail(ctx, find_value(map, "row_group_size"), FLOE_EFORMAT,
					"key '%s.row_group_size': %s is larger than "
					"target_file_size (%s)",
					path, floe_units_format_size(t->row_group_size, a),
					floe_units_format_size(t->target_file_size, b));
	}
	return 0;
}

static int root_post(struct floe_config_ctx *ctx, const struct floe_cnode *map,
		     const char *path, char *base)
{
	struct floe_config *c = (struct floe_config *)(void *)base;
	if (c->lake.warehouse)
		return 0;
	const char *dir = c->agent.state_dir;
	size_t n = strlen(dir), total;
	bool slash = n > 0 && dir[n - 1] == '/';
	if (__builtin_add_overflow(n, sizeof("/warehouse"), &total))
		return nomem(ctx);
	if (!(c->lake.warehouse = floe_malloc(ctx->a, total)))
		return nomem(ctx);
	snprintf(c->lake.warehouse, total, "%s%swarehouse", dir, slash ? "" : "/");
	return 0;
}

/* ---- engine entry points ----------------------------------------------------------- */

int floe_keys_apply(struct floe_config_ctx *ctx, const struct floe_cnode *root,
		    struct floe_config *c)
{
	if (root && floe_cnode_is_null(root))
		root = NULL; /* a document holding only a comment */
	if (root && root->kind != FLOE_CNODE_MAP)
		return floe_config_fail(ctx, root, FLOE_EFORMAT,
					"expected a mapping at the top level, got %s",
					kind_name(root));
	return apply_section(ctx, &root_section, root, "", (char *)c);
}

static void free_section(struct floe_alloc *a, const struct section *sec, char *base)
{
	for (size_t i = 0; i < sec->nkeys; i++) {
		const struct kdef *k = &sec->keys[i];
		char *field = base + k->off;
		switch (k->type) {
		case KT_SECTION:
			free_section(a, k->sub, field);
			break;
		case KT_SECTION_LIST: {
			char *arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			for (size_t j = 0; arr && j < n; j++)
				free_section(a, k->sub, arr + j * k->size);
			floe_free(a, arr);
			break;
		}
		case KT_STRLIST: {
			char **arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			for (size_t j = 0; arr && j < n; j++)
				floe_free(a, arr[j]);
			floe_free(a, arr);
			break;
		}
		case KT_STRING:
			floe_free(a, get_ptr(field));
			break;
		default:
			break;
		}
	}
	if (sec == &table_section)
		floe_free(a, ((struct floe_config_table *)(void *)base)->name);
}

void floe_keys_free(struct floe_config *c)
{
	free_section(c->alloc, &root_section, (char *)c);
}

/* ---- dump ------------------------------------------------------------------------------ */

/* A YAML double-quoted scalar. Besides quotes, backslashes and C0 controls, escapes what
 * a YAML reader would refuse or fold raw: DEL, C1 controls (NEL is a line break),
 * U+2028/U+2029 and the non-characters U+FFFE/U+FFFF. */
static int put_quoted(struct floe_buf *b, const char *str)
{
	const unsigned char *p = (const unsigned char *)str;
	int rc = floe_buf_putc(b, '"');
	for (; rc == 0 && *p; p++) {
		if (*p == '"' || *p == '\\')
			rc = floe_buf_printf(b, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			rc = floe_buf_printf(b, "\\x%02X", *p);
		else if (p[0] == 0xC2 && p[1] >= 0x80 && p[1] <= 0x9F)
			rc = floe_buf_printf(b, "\\x%02X", p[1]), p++;
		else if (p[0] == 0xE2 && p[1] == 0x80 && (p[2] == 0xA8 || p[2] == 0xA9))
			rc = floe_buf_printf(b, "\\u20%02X", p[2] - 0x80), p += 2;
		else if (p[0] == 0xEF && p[1] == 0xBF && (p[2] == 0xBE || p[2] == 0xBF))
			rc = floe_buf_printf(b, "\\uFF%02X", p[2] - 0xBF + 0xFF), p += 2;
		else
			rc = floe_buf_putc(b, *p);
	}
	return rc ? rc : floe_buf_putc(b, '"');
}

static int dump_section(struct floe_buf *b, const struct section *sec, const char *base,
			int indent, bool list_item)
{
	char tmp[FLOE_UNITS_FMT_MAX];
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sec->nkeys; i++) {
		const struct kdef *k = &sec->keys[i];
		const char *field = base + k->off;
		if (list_item && i == 0)
			rc = floe_buf_printf(b, "%*s- %s:", indent - 2, "", k->name);
		else
			rc = floe_buf_printf(b, "%*s%s:", indent, "", k->name);
		if (rc < 0)
			break;
		switch (k->type) {
		case KT_SECTION:
			rc = floe_buf_putc(b, '\n');
			if (rc == 0)
				rc = dump_section(b, k->sub, field, indent + 2, false);
			continue; /* no help line: the section's keys carry it */
		case KT_SECTION_LIST: {
			const char *arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			rc = floe_buf_puts(b, n ? "\n" : " []\n");
			for (size_t j = 0; rc == 0 && j < n; j++)
				rc = dump_section(b, k->sub, arr + j * k->size, indent + 4, true);
			continue;
		}
		case KT_STRLIST: {
			char *const *arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			rc = floe_buf_puts(b, " [");
			for (size_t j = 0; rc == 0 && j < n; j++) {
				if (j)
					rc = floe_buf_puts(b, ", ");
				if (rc == 0)
					rc = put_quoted(b, arr[j]);
			}
			if (rc == 0)
				rc = floe_buf_putc(b, ']');
			break;
		}
		case KT_STRING:
			rc = floe_buf_putc(b, ' ');
			if (rc == 0)
				rc = put_quoted(b, get_ptr(field));
			break;
		case KT_SIZE:
			rc = floe_buf_printf(b, " %s", floe_units_format_size(get_u64(field), tmp));
			break;
		case KT_DURATION:
			rc = floe_buf_printf(b, " %s",
					     floe_units_format_duration_ms(get_u64(field), tmp));
			break;
		case KT_INT:
			rc = floe_buf_printf(b, " %" PRId64, get_small(field, k->size));
			break;
		case KT_ENUM: {
			int64_t v = get_small(field, k->size);
			size_t n = 0;
			while (k->choices[n])
				n++;
			rc = floe_buf_printf(b, " %s", v >= 0 && (size_t)v < n ? k->choices[v] : "?");
			break;
		}
		}
		if (rc == 0 && k->help)
			rc = floe_buf_printf(b, "  # %s", k->help);
		if (rc == 0)
			rc = floe_buf_putc(b, '\n');
	}
	return rc;
}

int floe_keys_dump(const struct floe_config *c, struct floe_buf *out)
{
	int rc = floe_buf_puts(out, "# effective configuration of ");
	for (const char *p = c->path; rc == 0 && *p; p++)
		rc = floe_buf_putc(out, ((unsigned char)*p < 0x20 || *p == 0x7f) ? '?' : *p);
	if (rc == 0)
		rc = floe_buf_putc(out, '\n');
	return rc ? rc : dump_section(out, &root_section, (const char *)c, 0, false);
}
