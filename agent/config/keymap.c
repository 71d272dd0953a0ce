/* The key-table engine (Fluent Bit's config map idea): given a table of keys (name, type,
 * field offset, default, range, help) and a YAML node tree, it converts and validates
 * every value into a struct, applies defaults, and later dumps and frees that struct, all
 * from the same rows. Nothing here knows floe's keys; keys.c holds them. */
#include "agent/config/keys.h"
#include "agent/config/keymap_field.h"

#include "agent/config/units.h"
#include "formats/base/alloc.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <stddef.h>
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define PATH_CAP 160 /* longest key path: table names plus a few [index] */
#define MAX_KEYS 64  /* keys per section (apply_section asserts it) */
#define LIST_CAP 512 /* the keys of a section (Iceberg property names are long), the choices of an enum */

int floe_keymap_nomem(struct floe_config_ctx *ctx)
{
	return floe_config_fail(ctx, NULL, FLOE_ENOMEM, "out of memory");
}

/* Control characters and quotes become '?' so that a message stays one line with balanced
 * quotes; long text is cut (not inside a UTF-8 sequence) and marked with "...". */
const char *floe_keymap_show(const char *s, size_t len, char *buf)
{
	size_t max = FLOE_KEYMAP_SHOW_CAP - 4, n = len;
	if (n > max) {
		n = max;
		while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80)
			n--;
	}
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		buf[i] = (c < 0x20 || c == 0x7f || c == '\'') ? '?' : (char)c;
	}
	if (n < len) {
		memcpy(buf + n, "...", 3);
		n += 3;
	}
	buf[n] = '\0';
	return buf;
}

bool floe_keymap_all_of(const char *s, size_t min, size_t max, const char *extra)
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

/* Whether s starts with "scheme://" (RFC 3986: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )). */
bool floe_keymap_has_scheme(const char *s)
{
	size_t i = 0;
	if ((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z'))
		while (s[i] && (strchr("+-.", s[i]) || (s[i] >= 'a' && s[i] <= 'z') ||
				(s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			i++;
	return i > 0 && strncmp(s + i, "://", 3) == 0;
}

/* Key paths are built from table names and indexes, so they fit; were one ever cut, only
 * a message would be shorter. */
static void path_key(char *dst, const char *prefix, const char *name)
{
	if (snprintf(dst, PATH_CAP, "%s%s%s", prefix, *prefix ? "." : "", name) >= PATH_CAP)
		dst[PATH_CAP - 1] = '\0';
}

static void path_index(char *dst, const char *prefix, size_t i)
{
	if (snprintf(dst, PATH_CAP, "%s[%zu]", prefix, i) >= PATH_CAP)
		dst[PATH_CAP - 1] = '\0';
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

static const char *expected_name(const struct floe_key *k, char *buf, size_t cap)
{
	switch (k->type) {
	case FLOE_KT_SECTION:
		return "a mapping";
	case FLOE_KT_SECTION_LIST:
		return "a sequence of mappings";
	case FLOE_KT_STRING:
	case FLOE_KT_CUSTOM:
		return "a string";
	case FLOE_KT_STRLIST:
		return "a string or a sequence of strings";
	case FLOE_KT_SIZE:
		return "a size";
	case FLOE_KT_DURATION:
		return "a duration";
	case FLOE_KT_INT:
		return "an integer";
	case FLOE_KT_ENUM: {
		char list[LIST_CAP];
		snprintf(buf, cap, "one of %s", join_names(k->choices, list, sizeof(list)));
		return buf;
	}
	}
	return "a value";
}

static int type_error(struct floe_config_ctx *ctx, const struct floe_key *k,
		      const struct floe_cnode *val, const char *path)
{
	char buf[LIST_CAP + 8];
	return floe_config_fail(ctx, val, FLOE_EFORMAT, "key '%s': expected %s, got %s", path,
				expected_name(k, buf, sizeof(buf)), kind_name(val));
}

const struct floe_cnode *floe_keymap_find_value(const struct floe_cnode *map, const char *name)
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
static int convert_scalar(struct floe_config_ctx *ctx, const struct floe_key *k,
			  const struct floe_cnode *val, const char *path, char *base)
{
	char *field = base + k->off;
	char shown[FLOE_KEYMAP_SHOW_CAP], lo[FLOE_UNITS_FMT_MAX], hi[FLOE_UNITS_FMT_MAX];
	int rc;

	if (val->kind != FLOE_CNODE_SCALAR)
		return type_error(ctx, k, val, path);
	if (memchr(val->str, '\0', val->len))
		return floe_config_fail(ctx, val, FLOE_EFORMAT,
					"key '%s': must not contain NUL characters", path);
	floe_keymap_show(val->str, val->len, shown);
	switch (k->type) {
	case FLOE_KT_STRING: {
		if (val->len == 0)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': must not be empty", path);
		char *s = floe_strndup(ctx->a, val->str, val->len);
		if (!s)
			return floe_keymap_nomem(ctx);
		put_ptr(field, s);
		return k->check ? k->check(ctx, val, path, (char **)(void *)field) : 0;
	}
	case FLOE_KT_SIZE: {
		uint64_t v = 0;
		rc = floe_units_parse_size(val->str, val->len, &v);
		if (rc == FLOE_EPARSE)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': expected a size (an integer with an "
						"optional unit B, K, KiB, M, "
						"MiB, G, GiB, T, TiB; all 1024-based), got '%s'",
						path, shown);
		if (rc < 0 || v < (uint64_t)k->min || v > (uint64_t)k->max)
			return floe_config_fail(
			    ctx, val, FLOE_EFORMAT, "key '%s': expected a size in %s..%s, got '%s'",
			    path, floe_units_format_size((uint64_t)k->min, lo),
			    floe_units_format_size((uint64_t)k->max, hi), shown);
		put_u64(field, v);
		return 0;
	}
	case FLOE_KT_DURATION: {
		uint64_t v = 0;
		rc = floe_units_parse_duration_ms(val->str, val->len, &v);
		if (rc == FLOE_EPARSE)
			return floe_config_fail(ctx, val, FLOE_EFORMAT,
						"key '%s': expected a duration (an integer with a "
						"unit ms, s, m, h or d), got '%s'",
						path, shown);
		if (rc < 0 || v < (uint64_t)k->min || v > (uint64_t)k->max)
			return floe_config_fail(
			    ctx, val, FLOE_EFORMAT,
			    "key '%s': expected a duration in %s..%s, got '%s'", path,
			    floe_units_format_duration_ms((uint64_t)k->min, lo),
			    floe_units_format_duration_ms((uint64_t)k->max, hi), shown);
		put_u64(field, v);
		return 0;
	}
	case FLOE_KT_INT: {
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
	case FLOE_KT_CUSTOM:
		return k->parse(ctx, val, path, val->str, val->len, field);
	case FLOE_KT_ENUM:
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
static void *new_list(struct floe_config_ctx *ctx, const struct floe_key *k, char *base, size_t n,
		      size_t elem)
{
	void *arr = floe_calloc(ctx->a, n ? n : 1, elem);
	if (!arr)
		return NULL;
	put_ptr(base + k->off, arr);
	put_size(base + k->off_n, n);
	return arr;
}

static int convert_strlist(struct floe_config_ctx *ctx, const struct floe_key *k,
			   const struct floe_cnode *val, const char *path, char *base)
{
	const struct floe_cnode *const *items = (const struct floe_cnode *const *)val->kids;
	size_t n = val->nkids;
	char ipath[PATH_CAP], shown[FLOE_KEYMAP_SHOW_CAP];

	if (val->kind == FLOE_CNODE_MAP)
		return type_error(ctx, k, val, path);
	if (val->kind == FLOE_CNODE_SCALAR) {
		items = &val;
		n = 1;
	}
	if (n == 0 && (k->flags & FLOE_KF_NONEMPTY))
		return floe_config_fail(ctx, val, FLOE_EFORMAT, "key '%s': must not be empty",
					path);
	if (k->max > 0 && n > (uint64_t)k->max)
		return floe_config_fail(ctx, val, FLOE_EFORMAT,
					"key '%s': at most %" PRId64 " entries, got %zu", path,
					k->max, n);
	char **arr = new_list(ctx, k, base, n, sizeof(char *));
	if (!arr)
		return floe_keymap_nomem(ctx);
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
			return floe_keymap_nomem(ctx);
		if (k->check) {
			int rc = k->check(ctx, item, ipath, &arr[i]);
			if (rc < 0)
				return rc;
		}
		for (size_t j = 0; (k->flags & FLOE_KF_UNIQUE) && j < i; j++)
			if (strcmp(arr[j], arr[i]) == 0)
				return floe_config_fail(
				    ctx, item, FLOE_EFORMAT, "key '%s': duplicate entry '%s'",
				    ipath, floe_keymap_show(arr[i], strlen(arr[i]), shown));
	}
	return 0;
}

static int apply_section(struct floe_config_ctx *ctx, const struct floe_key_section *sec,
			 const struct floe_cnode *map, const char *path, char *base);

/* After an error, whether checking goes on with the next key or item, so that a file's
 * every error is reported in one run: for anything but a lack of memory. */
static bool go_on(int rc)
{
	return rc != FLOE_ENOMEM;
}

static int convert_section_list(struct floe_config_ctx *ctx, const struct floe_key *k,
				const struct floe_cnode *val, const char *path, char *base)
{
	char ipath[PATH_CAP];
	if (val->kind != FLOE_CNODE_SEQ)
		return type_error(ctx, k, val, path);
	char *arr = new_list(ctx, k, base, val->nkids, k->size);
	if (!arr)
		return floe_keymap_nomem(ctx);
	int first = 0; /* every item is checked; the first error is returned */
	for (size_t i = 0; i < val->nkids; i++) {
		const struct floe_cnode *item = val->kids[i];
		path_index(ipath, path, i);
		/* The shorthand: a scalar X read as the mapping { shorthand: X }, positioned
		 * at X, so that every message about it points at what the user wrote. */
		struct floe_cnode key = {.kind = FLOE_CNODE_SCALAR, .plain = true};
		struct floe_cnode *pair[2] = {&key, (struct floe_cnode *)item};
		struct floe_cnode map = {.kind = FLOE_CNODE_MAP, .kids = pair, .nkids = 2};
		if (item->kind == FLOE_CNODE_SCALAR && !floe_cnode_is_null(item) &&
		    k->sub->shorthand) {
			key.str = (char *)k->sub->shorthand;
			key.len = strlen(key.str);
			key.line = map.line = item->line;
			key.col = map.col = item->col;
			item = &map;
		}
		int rc;
		if (item->kind != FLOE_CNODE_MAP)
			rc = floe_config_fail(ctx, item, FLOE_EFORMAT,
					      "key '%s': expected a mapping, got %s", ipath,
					      kind_name(item));
		else
			rc = apply_section(ctx, k->sub, item, ipath, arr + i * k->size);
		if (rc < 0 && !go_on(rc))
			return rc;
		first = first ? first : rc;
	}
	return first;
}

static int apply_value(struct floe_config_ctx *ctx, const struct floe_key *k,
		       const struct floe_cnode *val, const char *path, char *base)
{
	switch (k->type) {
	case FLOE_KT_SECTION:
		if (val->kind != FLOE_CNODE_MAP)
			return type_error(ctx, k, val, path);
		return apply_section(ctx, k->sub, val, path, base + k->off);
	case FLOE_KT_SECTION_LIST:
		return convert_section_list(ctx, k, val, path, base);
	case FLOE_KT_STRLIST:
		return convert_strlist(ctx, k, val, path, base);
	default:
		return convert_scalar(ctx, k, val, path, base);
	}
}

/* Sets key k, absent from the file, to its default. */
static int apply_default(struct floe_config_ctx *ctx, const struct floe_key *k,
			 const struct floe_cnode *map, const char *path, char *base)
{
	switch (k->type) {
	case FLOE_KT_SECTION:
		return apply_section(ctx, k->sub, NULL, path, base + k->off);
	case FLOE_KT_SECTION_LIST:
		return 0; /* an empty list: the struct is zeroed */
	case FLOE_KT_STRLIST: {
		size_t n = 0;
		while (k->def_list && k->def_list[n])
			n++;
		char **arr = new_list(ctx, k, base, n, sizeof(char *));
		if (!arr)
			return floe_keymap_nomem(ctx);
		for (size_t i = 0; i < n; i++)
			if (!(arr[i] = floe_strdup(ctx->a, k->def_list[i])))
				return floe_keymap_nomem(ctx);
		return 0;
	}
	default:
		if ((k->flags & FLOE_KF_COMPUTED) || !k->def)
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

static int unknown_key(struct floe_config_ctx *ctx, const struct floe_key_section *sec,
		       const struct floe_cnode *key, const char *path)
{
	char shown[FLOE_KEYMAP_SHOW_CAP], list[LIST_CAP];
	size_t n = 0;
	list[0] = '\0';
	for (size_t i = 0; i < sec->nkeys && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? ", " : "",
				      sec->keys[i].name);
	return floe_config_fail(ctx, key, FLOE_EFORMAT, "unknown key '%s%s%s'; valid keys here: %s",
				path, *path ? "." : "", floe_keymap_show(key->str, key->len, shown),
				list);
}

/* Whether key names one of sec's own keys. */
static bool own_key(const struct floe_key_section *sec, const struct floe_cnode *key)
{
	for (size_t i = 0; i < sec->nkeys; i++)
		if (strlen(sec->keys[i].name) == key->len &&
		    memcmp(sec->keys[i].name, key->str, key->len) == 0)
			return true;
	return false;
}

/* The keys of map that are not sec's own, each an element of sec->rest's array named by
 * the key (checked by rest->check first), in document order. */
static int apply_rest(struct floe_config_ctx *ctx, const struct floe_key_section *sec,
		      const struct floe_cnode *map, const char *path, char *base)
{
	const struct floe_key *k = sec->rest;
	size_t n = 0, j = 0;
	char kpath[PATH_CAP];
	for (size_t i = 0; i + 1 < map->nkids; i += 2)
		n += map->kids[i]->kind == FLOE_CNODE_SCALAR && !own_key(sec, map->kids[i]);
	char *arr = new_list(ctx, k, base, n, k->size);
	if (!arr)
		return floe_keymap_nomem(ctx);
	int first = 0;
	for (size_t i = 0; i + 1 < map->nkids && j < n; i += 2) {
		const struct floe_cnode *key = map->kids[i], *val = map->kids[i + 1];
		if (key->kind != FLOE_CNODE_SCALAR || own_key(sec, key))
			continue;
		char *elem = arr + j++ * k->size, *name = floe_strdup(ctx->a, key->str);
		if (!name)
			return floe_keymap_nomem(ctx);
		put_ptr(elem + k->name_off, name);
		path_key(kpath, path, name);
		int rc = k->check ? k->check(ctx, key, kpath, (char **)(void *)(elem + k->name_off)) : 0;
		for (size_t o = 0; rc == 0 && o + 1 < j; o++)
			if (strcmp(get_ptr(arr + o * k->size + k->name_off), name) == 0)
				rc = floe_config_fail(ctx, key, FLOE_EFORMAT, "duplicate key '%s'", kpath);
		if (rc == 0 && val->kind != FLOE_CNODE_MAP && !floe_cnode_is_null(val))
			rc = type_error(ctx, k, val, kpath);
		else if (rc == 0)
			rc = apply_section(ctx, k->sub, floe_cnode_is_null(val) ? NULL : val, kpath,
					   elem);
		if (rc < 0 && !go_on(rc))
			return rc;
		first = first ? first : rc;
	}
	return first;
}

/* Applies map (NULL = section absent) to the section's keys, then defaults for the keys
 * not given, then the section's post hook. Every key is checked, in document order, past
 * the errors (each recorded); the post hook, which ties keys together, runs only when
 * none failed here or below. Returns the first error. */
static int apply_section(struct floe_config_ctx *ctx, const struct floe_key_section *sec,
			 const struct floe_cnode *map, const char *path, char *base)
{
	const struct floe_cnode *vals[MAX_KEYS] = {0};
	char kpath[PATH_CAP];
	unsigned before = ctx->nerrors;
	int rc, first = 0;

	/* A section's key table is ours, not input: one that outgrew vals is a bug. */
	assert(sec->nkeys <= MAX_KEYS);
	if (sec->nkeys > MAX_KEYS)
		return floe_config_fail(ctx, map, FLOE_EINVAL, "%s: %zu keys, more than the %d a "
					"section may have", path, sec->nkeys, MAX_KEYS);

	for (size_t i = 0; map && i + 1 < map->nkids; i += 2) {
		const struct floe_cnode *key = map->kids[i], *val = map->kids[i + 1];
		size_t idx = 0;
		if (key->kind != FLOE_CNODE_SCALAR) {
			rc = floe_config_fail(ctx, key, FLOE_EFORMAT,
					      "key names must be strings, got %s", kind_name(key));
		} else {
			while (idx < sec->nkeys &&
			       !(strlen(sec->keys[idx].name) == key->len &&
				 memcmp(sec->keys[idx].name, key->str, key->len) == 0))
				idx++;
			if (idx < sec->nkeys)
				path_key(kpath, path, sec->keys[idx].name);
			if (idx == sec->nkeys)
				rc = sec->rest ? 0 : unknown_key(ctx, sec, key, path);
			else if (vals[idx])
				rc = floe_config_fail(ctx, key, FLOE_EFORMAT, "duplicate key '%s'",
						      kpath);
			else if ((vals[idx] = val), floe_cnode_is_null(val))
				rc = 0; /* "key:" with nothing after it: the default applies */
			else
				rc = apply_value(ctx, &sec->keys[idx], val, kpath, base);
		}
		if (rc < 0 && !go_on(rc))
			return rc;
		first = first ? first : rc;
	}
	for (size_t idx = 0; idx < sec->nkeys; idx++) {
		const struct floe_key *k = &sec->keys[idx];
		if (vals[idx] && !floe_cnode_is_null(vals[idx]))
			continue;
		path_key(kpath, path, k->name);
		if ((k->flags & FLOE_KF_REQUIRED) && vals[idx])
			rc = floe_config_fail(ctx, vals[idx], FLOE_EFORMAT,
					      "key '%s': a value is required", kpath);
		else if ((k->flags & FLOE_KF_REQUIRED) && map)
			rc = floe_config_fail(ctx, map, FLOE_EFORMAT, "missing required key '%s'",
					      kpath);
		else if (k->flags & FLOE_KF_REQUIRED)
			rc = 0; /* the section is absent: the key stays unset ("off") */
		else
			rc = apply_default(ctx, k, map, kpath, base);
		if (rc < 0 && !go_on(rc))
			return rc;
		first = first ? first : rc;
	}
	if (sec->rest && map && (rc = apply_rest(ctx, sec, map, path, base)) < 0 && !go_on(rc))
		return rc;
	if (first || ctx->nerrors != before)
		return first ? first : FLOE_EFORMAT;
	return sec->post ? sec->post(ctx, map, path, base) : 0;
}

/* ---- entry points ------------------------------------------------------------------ */

int floe_keymap_apply(struct floe_config_ctx *ctx, const struct floe_key_section *sec,
		      const struct floe_cnode *root, char *base)
{
	if (root && floe_cnode_is_null(root))
		root = NULL; /* a document holding only a comment */
	if (root && root->kind != FLOE_CNODE_MAP)
		return floe_config_fail(ctx, root, FLOE_EFORMAT,
					"expected a mapping at the top level, got %s",
					kind_name(root));
	return apply_section(ctx, sec, root, "", base);
}

void floe_keymap_free(struct floe_alloc *a, const struct floe_key_section *sec, char *base)
{
	for (size_t i = 0; i < sec->nkeys; i++) {
		const struct floe_key *k = &sec->keys[i];
		char *field = base + k->off;
		switch (k->type) {
		case FLOE_KT_SECTION:
			floe_keymap_free(a, k->sub, field);
			break;
		case FLOE_KT_SECTION_LIST: {
			char *arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			for (size_t j = 0; arr && j < n; j++)
				floe_keymap_free(a, k->sub, arr + j * k->size);
			floe_free(a, arr);
			break;
		}
		case FLOE_KT_STRLIST: {
			char **arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			for (size_t j = 0; arr && j < n; j++)
				floe_free(a, arr[j]);
			floe_free(a, arr);
			break;
		}
		case FLOE_KT_STRING:
			floe_free(a, get_ptr(field));
			break;
		default:
			break;
		}
	}
	if (sec->rest) {
		char *arr = get_ptr(base + sec->rest->off);
		for (size_t j = 0; arr && j < get_size(base + sec->rest->off_n); j++)
			floe_keymap_free(a, sec->rest->sub, arr + j * sec->rest->size);
		floe_free(a, arr);
	}
	if (sec->fini)
		sec->fini(a, base);
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

static int dump_section(struct floe_buf *b, const struct floe_key_section *sec, const char *base,
			int indent, bool list_item)
{
	char tmp[FLOE_UNITS_FMT_MAX];
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sec->nkeys; i++) {
		const struct floe_key *k = &sec->keys[i];
		const char *field = base + k->off;
		if (i > 0 && (k->flags & FLOE_KF_QUIET) && k->shown && !k->shown(base))
			continue;
		if (list_item && i == 0)
			rc = floe_buf_printf(b, "%*s- %s:", indent - 2, "", k->name);
		else
			rc = floe_buf_printf(b, "%*s%s:", indent, "", k->name);
		if (rc < 0)
			break;
		if (k->shown && !k->shown(base)) {
			rc = floe_buf_puts(b, " ~");
			goto help;
		}
		switch (k->type) {
		case FLOE_KT_SECTION:
			rc = floe_buf_putc(b, '\n');
			if (rc == 0)
				rc = dump_section(b, k->sub, field, indent + 2, false);
			continue; /* no help line: the section's keys carry it */
		case FLOE_KT_SECTION_LIST: {
			const char *arr = get_ptr(field);
			size_t n = get_size(base + k->off_n);
			rc = floe_buf_puts(b, n ? "\n" : " []\n");
			for (size_t j = 0; rc == 0 && j < n; j++)
				rc = dump_section(b, k->sub, arr + j * k->size, indent + 4, true);
			continue;
		}
		case FLOE_KT_STRLIST: {
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
		case FLOE_KT_STRING:
			/* An optional string that is not set is null, as in the file. */
			if (!get_ptr(field)) {
				rc = floe_buf_puts(b, " ~");
				break;
			}
			rc = floe_buf_putc(b, ' ');
			if (rc == 0)
				rc = put_quoted(b, get_ptr(field));
			break;
		case FLOE_KT_CUSTOM:
			rc = floe_buf_putc(b, ' ');
			if (rc == 0)
				rc = k->format(b, field);
			break;
		case FLOE_KT_SIZE:
			rc = floe_buf_printf(b, " %s", floe_units_format_size(get_u64(field), tmp));
			break;
		case FLOE_KT_DURATION:
			rc = floe_buf_printf(b, " %s",
					     floe_units_format_duration_ms(get_u64(field), tmp));
			break;
		case FLOE_KT_INT:
			rc = floe_buf_printf(b, " %" PRId64, get_small(field, k->size));
			break;
		case FLOE_KT_ENUM: {
			int64_t v = get_small(field, k->size);
			size_t n = 0;
			while (k->choices[n])
				n++;
			rc = floe_buf_printf(b, " %s",
					     v >= 0 && (size_t)v < n ? k->choices[v] : "?");
			break;
		}
		}
	help:
		if (rc == 0 && k->help)
			rc = floe_buf_printf(b, "  # %s", k->help);
		if (rc == 0)
			rc = floe_buf_putc(b, '\n');
	}
	const char *arr = sec->rest ? get_ptr(base + sec->rest->off) : NULL;
	for (size_t j = 0; rc == 0 && arr && j < get_size(base + sec->rest->off_n); j++) {
		const char *elem = arr + j * sec->rest->size;
		rc = floe_buf_printf(b, "%*s%s:\n", indent, "",
				     (const char *)get_ptr(elem + sec->rest->name_off));
		if (rc == 0)
			rc = dump_section(b, sec->rest->sub, elem, indent + 2, false);
	}
	return rc;
}

int floe_keymap_dump(struct floe_buf *out, const struct floe_key_section *sec, const char *base)
{
	return dump_section(out, sec, base, 0, false);
}
