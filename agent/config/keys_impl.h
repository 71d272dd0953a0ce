/* Private to agent/config/keys*.c: the units and field macros the key tables are written
 * with, and the sections that keys.c's root table links to from the other files. */
#ifndef FLOE_CONFIG_KEYS_IMPL_H
#define FLOE_CONFIG_KEYS_IMPL_H

#include "agent/config/keys.h"

#include <stdbool.h>
#include <stddef.h>

#define KiB 1024ll
#define MiB (1024ll * KiB)
#define GiB (1024ll * MiB)
#define TiB (1024ll * GiB)
#define SEC 1000ll
#define MINUTE (60ll * SEC)
#define HOUR (3600ll * SEC)
#define DAY (24ll * HOUR)

#define CFG(member) offsetof(struct floe_config, member)
#define TBL(member) offsetof(struct floe_config_table, member)
#define INP(member) offsetof(struct floe_config_input, member)
#define AGG(member) offsetof(struct floe_config_agg, member)
#define MET(member) offsetof(struct floe_config_metric, member)

struct floe_config_input;
struct floe_config;
struct floe_buf;

/* The sections below the root, each with its keys, checks and hooks in its own file. */
extern const struct floe_key_section floe_keys_input_section;  /* keys_inputs.c */
extern const struct floe_key_section floe_keys_tables_section; /* keys_tables.c */
extern const struct floe_key_section floe_keys_lake_section;   /* keys_lake.c */
extern const struct floe_key_section floe_keys_aggs_section;   /* keys_aggs.c */
extern const struct floe_key_section floe_keys_catalog_section; /* keys_catalog.c */
/* keys_lake.c, also for the catalog's keys: a secret given as a reference (env:NAME or
 * file:/path), never as the value; whether an http(s) URL's host is loopback. */
int floe_config_check_secret_ref(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				 const char *path, char **value);
bool floe_config_loopback_url(const char *url);
/* keys_syslog.c: what the syslog keys of an input need beyond the table rows. */
extern const struct floe_key_section floe_keys_syslog_tls_section;
int floe_config_check_listen(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			     const char *path, char **value);
int floe_config_check_match(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			    const char *path, char **value);
int floe_config_check_field_name(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				 const char *path, char **value);
/* keys_aggs.c, also for inputs[].route: a field reference (schema/aggtable.h), and a
 * POSIX ERE compiled as the matcher will compile it. */
int floe_config_check_field_ref(struct floe_config_ctx *ctx, const struct floe_cnode *at,
				const char *path, char **value);
/* A rule on a numeric record field (a route's, a where's), tested as the decimal text of
 * the field's number: an equals value written as that text in place (a severity's name,
 * leading zeros: floe_field_ref_equals_number); an equals the field can never have, or a
 * matches pattern no severity or facility matches, takes nothing: floe_config_warn says
 * so (floe check refuses it, floe run logs it and keeps the rule as written). */
int floe_config_check_numeric_rule(struct floe_config_ctx *ctx, const struct floe_cnode *map,
				   const char *path, const char *field, char *equals,
				   const char *matches);
int floe_config_check_matches(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			      const char *path, char **value);
/* keys_route.c: an input's route rules, and the rule of the root that their tables and
 * each input's table exist. */
extern const struct floe_key_section floe_keys_route_section;
int floe_keys_routes_check(struct floe_config_ctx *ctx, const struct floe_cnode *root,
			   struct floe_config *c);
int floe_config_parse_mode(struct floe_config_ctx *ctx, const struct floe_cnode *at,
			   const char *path, const char *s, size_t len, char *field);
int floe_config_format_mode(struct floe_buf *out, const char *field);
/* The rules that tie an input's keys to its type (input_post calls it first): each type's
 * required keys, and no key of the other type given. */
int floe_config_input_type_rules(struct floe_config_ctx *ctx, const struct floe_cnode *map,
				 const char *path, struct floe_config_input *in);

struct floe_config;
/* The rules of aggregations that span the file (keys_aggs.c), for the root's post hook:
 * names and tables unique, not the logs table, and `from` naming inputs that exist.
 * root is the document's mapping (may be NULL). */
/* A key the file gave a value (not absent, not null), or NULL. */
static inline const struct floe_cnode *floe_keys_given(const struct floe_cnode *map,
						       const char *name)
{
	const struct floe_cnode *v = floe_keymap_find_value(map, name);
	return v && !floe_cnode_is_null(v) ? v : NULL;
}

int floe_keys_aggs_check(struct floe_config_ctx *ctx, const struct floe_cnode *root,
			 struct floe_config *c);
/* Gives each unnamed input its default name (its 1-based position) and refuses two
 * inputs of one name (keys_inputs.c), for the root's post hook, before the aggregations'
 * rules. */
int floe_keys_inputs_names(struct floe_config_ctx *ctx, const struct floe_cnode *root,
			   struct floe_config *c);

#endif
