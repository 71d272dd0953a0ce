/* The keys of the tables section (tables.logs): their rows, the column and partition
 * checks, and the defaults and cross-key rules of a table. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "agent/config/units.h"
#include "agent/schema/columns.h"
#include "agent/schema/partition.h"
#include "agent/schema/record.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int check_partition(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			   char **);
static int table_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static void table_fini(struct floe_alloc *, char *);
static int check_bloom_column(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			      char **);
static int check_sort_column(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			     char **);

static int check_column_name(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			     char **);
static int check_column_from(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			     char **);
static int column_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);
static int columns_check(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			 struct floe_config_table *);
static bool columns_shown(const char *);
static int check_table_name(struct floe_config_ctx *, const struct floe_cnode *, const char *,
			    char **);

static const char *const codec_names[] = {"zstd", "lz4_raw", "uncompressed", NULL};
static const char *const profile_names[] = {"default", "compact", NULL};
static const char *const message_names[] = {"keep", "unparsed", NULL};
static const char *const bloom_default[] = {"host", "app", NULL};
static const char *const partition_default[] = {"day(ts)", NULL};
static const char *const bool_names[] = {"false", "true", NULL};

/* Iceberg's own names and defaults (TableProperties.java). */
static const struct floe_key prop_keys[] = {
    {.name = "commit.manifest-merge.enabled",
     .type = FLOE_KT_ENUM,
     .off = offsetof(struct floe_table_props, merge_enabled),
     .size = sizeof(bool),
     .def = "true",
     .choices = bool_names,
     .help = "merge small manifests into larger ones on commit"},
    {.name = "commit.manifest.min-count-to-merge",
     .type = FLOE_KT_INT,
     .off = offsetof(struct floe_table_props, merge_min_count),
     .size = sizeof(uint32_t),
     .def = "100",
     .min = 2,
     .max = 1000000,
     .help = "small manifests a list must hold before they are merged (larger ones merge ten of a size)"},
    {.name = "commit.manifest.target-size-bytes",
     .type = FLOE_KT_SIZE,
     .off = offsetof(struct floe_table_props, merge_target_bytes),
     .def = "8MiB",
     .min = 4 * KiB,
     .max = 256 * MiB,
     .help = "largest size of a merged manifest"},
    {.name = "history.expire.max-snapshot-age-ms",
     .type = FLOE_KT_DURATION,
     .off = offsetof(struct floe_table_props, max_snapshot_age_ms),
     .def = "5d",
     .min = 1,
     .max = 3650 * DAY,
     .help = "snapshots older than this expire (beyond min-snapshots-to-keep)"},
    {.name = "history.expire.min-snapshots-to-keep",
     .type = FLOE_KT_INT,
     .off = offsetof(struct floe_table_props, min_snapshots),
     .size = sizeof(uint32_t),
     .def = "1",
     .min = 1,
     .max = 100000000,
     .help = "the newest snapshots kept whatever their age"},
    {.name = "write.metadata.previous-versions-max",
     .type = FLOE_KT_INT,
     .off = offsetof(struct floe_table_props, previous_versions_max),
     .size = sizeof(uint32_t),
     .def = "100",
     .min = 1,
     .max = 100000,
     .help = "metadata-log entries kept"},
    {.name = "write.metadata.delete-after-commit.enabled",
     .type = FLOE_KT_ENUM,
     .off = offsetof(struct floe_table_props, delete_after_commit),
     .size = sizeof(bool),
     .def = "false",
     .choices = bool_names,
     .help = "delete metadata files that fall off the metadata-log"},
};
/* Records which keys the file left out: a table floe creates gets floe's own defaults
 * for an unattended writer there and the file's values elsewhere (agent/lake/table.c),
 * while the defaults above stay Iceberg's, which a table created elsewhere lives by.
 * Bit i is prop_keys[i] (the FLOE_PROP_* order). */
static int props_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	(void)ctx;
	(void)path;
	struct floe_table_props *p = (struct floe_table_props *)(void *)base;
	p->unset = 0;
	for (size_t i = 0; i < sizeof(prop_keys) / sizeof(prop_keys[0]); i++)
		if (!floe_keymap_find_value(map, prop_keys[i].name))
			p->unset |= 1u << i;
	return 0;
}
static const struct floe_key_section prop_section =
    FLOE_KEY_SECTION(prop_keys, props_post, NULL);

/* The Iceberg types a typed column may have: enum floe_col_type's order. */
static const char *const col_type_names[] = {"boolean", "int",    "long",   "float",	    "double",
					     "string",	"date", "binary", "timestamptz", NULL};
#define COL(member) offsetof(struct floe_config_column, member)
static const struct floe_key column_keys[] = {
    {.name = "name",
     .type = FLOE_KT_STRING,
     .off = COL(name),
     .flags = FLOE_KF_REQUIRED,
     .check = check_column_name,
     .help = "the column's name"},
    {.name = "type",
     .type = FLOE_KT_ENUM,
     .off = COL(type),
     .size = sizeof(int),
     .flags = FLOE_KF_REQUIRED,
     .choices = col_type_names,
     .help = "its Iceberg type"},
    {.name = "from",
     .type = FLOE_KT_STRING,
     .off = COL(from),
     .flags = FLOE_KF_COMPUTED,
     .check = check_column_from,
     .help = "the parsed field its value comes from (KEY or attrs.KEY); default: name"},
    {.name = "renamed_from",
     .type = FLOE_KT_STRING,
     .off = COL(renamed_from),
     .check = check_column_name,
     .help = "the column's previous name: the table's field keeps its id"},
};
static const struct floe_key_section column_section =
    FLOE_KEY_SECTION(column_keys, column_post, NULL);

/* ---- the key table ------------------------------------------------------------------ */

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
     .flags = FLOE_KF_COMPUTED,
     .min = 1,
     .max = 22,
     .help = "used when codec is zstd; default 1, or 6 with profile compact"},
    {.name = "profile",
     .type = FLOE_KT_ENUM,
     .off = TBL(profile),
     .size = sizeof(enum floe_table_profile),
     .def = "default",
     .choices = profile_names,
     .help = "Parquet encodings: default (every reader) or compact (v2 pages, delta encodings)"},
    {.name = "bloom_filters",
     .type = FLOE_KT_STRLIST,
     .off = TBL(bloom_filters),
     .off_n = TBL(nbloom_filters),
     .flags = FLOE_KF_UNIQUE,
     .def_list = bloom_default,
     .max = 11,
     .check = check_bloom_column,
     .help = "columns with Parquet bloom filters; [] = none"},
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
    {.name = "sort_by",
     .type = FLOE_KT_STRLIST,
     .off = TBL(sort_by),
     .off_n = TBL(nsort_by),
     .flags = FLOE_KF_UNIQUE,
     .max = FLOE_SORT_NKEYS,
     .check = check_sort_column,
     .help = "columns to sort a file's rows by, in runs of sort_buffer; [] = arrival order"},
    {.name = "sort_buffer",
     .type = FLOE_KT_SIZE,
     .off = TBL(sort_buffer),
     .def = "4MiB",
     .min = 64 * KiB,
     .max = 1 * GiB,
     .help = "rows held for sorting (with sort_by); at most memory_limit / 4"},
    {.name = "properties",
     .type = FLOE_KT_SECTION,
     .off = TBL(props),
     .sub = &prop_section,
     .help = "Iceberg table properties floe follows; the table's own values take precedence"},
    {.name = "columns",
     .type = FLOE_KT_SECTION_LIST,
     .off = TBL(columns),
     .off_n = TBL(ncolumns),
     .size = sizeof(struct floe_config_column),
     .sub = &column_section,
     .shown = columns_shown,
     .help = "typed columns from parsed fields; ~ = the built-in parsers' own, [] = none"},
    {.name = "message",
     .type = FLOE_KT_ENUM,
     .off = TBL(message),
     .size = sizeof(enum floe_table_message),
     .def = "keep",
     .choices = message_names,
     .help = "the message column: keep (every line) or unparsed (only the lines a parser "
	     "did not take apart; null for the others)"},
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
/* Every other name under tables: a further raw table, with the same keys. */
static const struct floe_key more_tables = {
    .name = "<name>",
    .type = FLOE_KT_SECTION_LIST,
    .off = CFG(tables),
    .off_n = CFG(ntables),
    .size = sizeof(struct floe_config_table),
    .sub = &table_section,
    .check = check_table_name,
    .name_off = TBL(name),
    .help = "a further raw table"};
const struct floe_key_section floe_keys_tables_section = {
    .keys = tables_keys, .nkeys = 1, .rest = &more_tables};

int floe_config_table_find(const struct floe_config *c, const char *name)
{
	for (size_t i = 0; name && i < floe_config_ntables(c); i++)
		if (strcmp(floe_config_table_at(c, i)->name, name) == 0)
			return (int)i;
	return -1;
}

/* ---- checks and post hooks ------------------------------------------------------------- */

/* What the three keys below do not take yet, said in their refusals: a typed column's
 * field id is known only once its plan is learnt from the table, after the
 * configuration, and may come later than the first batch. */
#define NOT_TYPED "typed columns (tables.logs.columns) are not supported here yet"

/* Bloom filters go on the logs table's primitive columns. */
static int check_bloom_column(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			      const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	if (floe_log_column_id(*value, strlen(*value)) != 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a column of the logs table (ts, received_at, host, "
				"source, offset, facility, severity, app, proc_id, msg_id, message), got "
				"'%s' (" NOT_TYPED ")",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* Sort keys are the logs table's scalar columns (not message, which would cost a lot of
 * comparisons for nothing, nor the attrs map); agent/schema/record.h holds the list. */
static int check_sort_column(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	enum floe_sort_key k;
	if (floe_log_sort_key_parse(*value, strlen(*value), &k) == 0)
		return 0;
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': expected a sortable column of the logs table (ts, "
				"received_at, host, source, offset, facility, severity, app, "
				"proc_id, msg_id), got '%s' (" NOT_TYPED ")",
				path, floe_keymap_show(*value, strlen(*value), shown));
}

/* A partition field, parsed by agent/schema/partition.c (the one parser of that text) and
 * stored in its canonical form; table_post builds the spec from those. */
static int check_partition(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, char **value)
{
	char canon[32], shown[FLOE_KEYMAP_SHOW_CAP];
	struct floe_part_field f;
	if (floe_part_field_parse(*value, &f, NULL) != 0 ||
	    floe_part_field_text(&f, canon, sizeof(canon)) != 0)
		return floe_config_fail(
		    ctx, at, FLOE_EFORMAT,
		    "key '%s': expected one of year(ts), month(ts), day(ts), "
		    "hour(ts), identity(host), host, app, bucket(N, host) with N "
		    "in 1..1024, got '%s' (" NOT_TYPED ")",
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

/* A table's name: an identifier every engine and catalog takes unquoted. */
static int check_table_name(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *v = *value;
	if (!floe_keymap_all_of(v, 1, 128, "_") || (v[0] >= '0' && v[0] <= '9'))
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': a table name is 1 to 128 letters, digits and _, "
					"not starting with a digit, got '%s'",
					path, floe_keymap_show(v, strlen(v), shown));
	return 0;
}

/* A column name: what every engine takes unquoted, and not a built-in column's. */
static int check_column_name(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *v = *value;
	size_t n = strlen(v);
	if (n == 0 || n > FLOE_COL_NAME_MAX || (v[0] >= '0' && v[0] <= '9') ||
	    !floe_keymap_all_of(v, 1, FLOE_COL_NAME_MAX, "_"))
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected a name of 1 to %d letters, digits and _, "
					"not starting with a digit, got '%s'",
					path, FLOE_COL_NAME_MAX, floe_keymap_show(v, n, shown));
	if (floe_log_column_id(v, n) != 0 || strcmp(v, "attrs") == 0)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': '%s' is a built-in column of the logs table", path,
					v);
	return 0;
}

/* A field name (attrs.KEY is KEY): stored without the prefix. */
static int check_column_from(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, char **value)
{
	char shown[FLOE_KEYMAP_SHOW_CAP];
	const char *v = *value;
	if (strncmp(v, "attrs.", 6) == 0)
		v += 6;
	size_t n = strlen(v);
	if (n == 0 || n > FLOE_COL_FROM_MAX || strpbrk(v, "\t\n"))
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s': expected a field name of 1 to %d bytes (KEY or "
					"attrs.KEY), got '%s'",
					path, FLOE_COL_FROM_MAX, floe_keymap_show(*value, strlen(*value), shown));
	if (v != *value)
		memmove(*value, v, n + 1);
	return 0;
}

static int column_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		       char *base)
{
	(void)path;
	struct floe_config_column *c = (struct floe_config_column *)(void *)base;
	c->line = map ? (int)map->line : 0;
	c->col = map ? (int)map->col : 0;
	if (!c->from && c->name && !(c->from = floe_strdup(ctx->a, c->name)))
		return floe_keymap_nomem(ctx);
	return 0;
}

/* The list as a whole: names unique, a column not renamed from another of the list, and
 * two columns never from one field (one value, one column). */
static int columns_check(struct floe_config_ctx *ctx, const struct floe_cnode *map,
			 const char *path, struct floe_config_table *t)
{
	const struct floe_cnode *at = floe_keys_given(map, "columns");
	int rc = 0;
	if (t->ncolumns > FLOE_COLS_MAX)
		return floe_config_fail(ctx, at, FLOE_EFORMAT,
					"key '%s.columns': at most %d columns, got %zu", path,
					FLOE_COLS_MAX, t->ncolumns);
	for (size_t i = 0; i < t->ncolumns; i++) {
		const struct floe_config_column *c = &t->columns[i];
		for (size_t j = 0; j < i; j++) {
			const struct floe_config_column *o = &t->columns[j];
			if (strcmp(o->name, c->name) == 0)
				rc = floe_config_fail(ctx, at, FLOE_EFORMAT,
						      "key '%s.columns': column '%s' is declared twice "
						      "(lines %d and %d)",
						      path, c->name, o->line, c->line);
			else if (strcmp(o->from, c->from) == 0)
				rc = floe_config_fail(ctx, at, FLOE_EFORMAT,
						      "key '%s.columns': columns '%s' and '%s' both "
						      "take field '%s'",
						      path, o->name, c->name, c->from);
		}
		for (size_t j = 0; c->renamed_from && j < t->ncolumns; j++)
			if (strcmp(t->columns[j].name, c->renamed_from) == 0)
				rc = floe_config_fail(ctx, at, FLOE_EFORMAT,
						      "key '%s.columns': column '%s' is renamed from "
						      "'%s', which the list still declares",
						      path, c->name, c->renamed_from);
	}
	return rc;
}

/* An absent list (the parsers' own columns) is dumped as absent, not as [] (none). */
static bool columns_shown(const char *base)
{
	return ((const struct floe_config_table *)(const void *)base)->columns_given;
}

static int table_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_table *t = (struct floe_config_table *)(void *)base;
	const char *dot = strrchr(path, '.');
	char a[FLOE_UNITS_FMT_MAX], b[FLOE_UNITS_FMT_MAX];

	if (!t->name && !(t->name = floe_strdup(ctx->a, dot ? dot + 1 : path)))
		return floe_keymap_nomem(ctx);
	t->columns_given = floe_keys_given(map, "columns") != NULL;
	int rc = columns_check(ctx, map, path, t);
	if (rc)
		return rc;
	/* partition_by, sort_by and bloom_filters as the agent uses them, from the entries
	 * their checks accepted (so none of these can fail). */
	if (floe_part_spec_from_config(&t->partition, t->partition_by, t->npartition_by, NULL) != 0)
		return floe_config_fail(ctx, map, FLOE_EFORMAT, "key '%s.partition_by': bad entry",
					path);
	for (size_t i = 0; i < t->nsort_by; i++)
		(void)floe_log_sort_key_parse(t->sort_by[i], strlen(t->sort_by[i]),
					      &t->sort_keys[i]);
	for (size_t i = 0; i < t->nbloom_filters; i++)
		t->bloom_ids[i] =
		    floe_log_column_id(t->bloom_filters[i], strlen(t->bloom_filters[i]));
	/* The compact profile trades speed for size; its level was chosen with the
	 * Parquet benchmark (see formats/parquet/writer.c). The default profile's is 1:
	 * on the loghub samples, as they are and with their digits varied, its files were
	 * 7 % smaller to 0.6 % larger than level 3's, and it took 12 % less CPU end to end
	 * on 1 M access-log lines (the generated log families of tests/bench/gen_corpus.py:
	 * 3.7 % larger). */
	if (t->zstd_level == 0)
		t->zstd_level = t->profile == FLOE_PROFILE_COMPACT ? 6 : 1;
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
