/* The keys of an input's route rules (inputs[N].route[M]) and the rule that ties them to
 * the tables section: every table an input or a rule names is logs or a tables.<name>,
 * and no aggregation writes a table of that name. */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "agent/schema/aggtable.h"
#include "formats/base/alloc.h"
#include "formats/base/error.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define RTE(member) offsetof(struct floe_config_route, member)

static int route_post(struct floe_config_ctx *, const struct floe_cnode *, const char *, char *);

static const struct floe_key route_keys[] = {
    {.name = "field",
     .type = FLOE_KT_STRING,
     .off = RTE(field),
     .flags = FLOE_KF_REQUIRED,
     .check = floe_config_check_field_ref,
     .help =
	 "the field tested: app, host, facility, severity, source, msg_id, ..., or a parsed field"},
    {.name = "equals",
     .type = FLOE_KT_STRING,
     .off = RTE(equals),
     .help = "records whose field is this value"},
    {.name = "matches",
     .type = FLOE_KT_STRING,
     .off = RTE(matches),
     .check = floe_config_check_matches,
     .help = "records whose field matches this POSIX ERE"},
    {.name = "table",
     .type = FLOE_KT_STRING,
     .off = RTE(table),
     .flags = FLOE_KF_REQUIRED,
     .help = "where they go: logs or a table of tables"},
};
const struct floe_key_section floe_keys_route_section =
    FLOE_KEY_SECTION(route_keys, route_post, NULL);

static int route_post(struct floe_config_ctx *ctx, const struct floe_cnode *map, const char *path,
		      char *base)
{
	struct floe_config_route *r = (struct floe_config_route *)(void *)base;
	r->line = map ? (int)map->line : 0;
	r->col = map ? (int)map->col : 0;
	if (r->equals && r->matches)
		return floe_config_fail(ctx, map, FLOE_EFORMAT,
					"key '%s': expected equals or matches, got both", path);
	return floe_config_check_numeric_rule(ctx, map, path, r->field, r->equals, r->matches);
}

/* The index of table name, or a message at at naming it and the tables there are. */
static int find_table(struct floe_config_ctx *ctx, const struct floe_config *c,
		      const struct floe_cnode *at, const char *key, const char *name, uint32_t *idx)
{
	int i = floe_config_table_find(c, name);
	if (i >= 0) {
		*idx = (uint32_t)i;
		return 0;
	}
	char list[512];
	size_t n = 0;
	list[0] = '\0';
	for (size_t k = 0; k < floe_config_ntables(c) && n < sizeof(list); k++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", k ? ", " : "",
				      floe_config_table_at(c, k)->name);
	return floe_config_fail(ctx, at, FLOE_EFORMAT,
				"key '%s': unknown table '%s' (the tables are: %s; a table is "
				"declared under tables:)",
				key, name, list);
}

/* Route rules test the parsed fields, before a table's columns take them (a routed
 * record is converted once its table is known). A rule written on a typed column's name
 * whose values come from another field (name: http_status, from: status) would test a
 * field no record has and take nothing, silently: it is made to test that field, when
 * every table the input can write to that has a column of that name takes the same
 * field for it and none takes a field of that name. Two such tables that take different
 * fields leave the rule as written (it takes nothing) and floe_config_warn says the rule
 * cannot say which it means. attrs.KEY names the attribute
 * itself and is kept. */
static int rule_on_column(struct floe_config_ctx *ctx, const struct floe_config *c,
			  const struct floe_config_input *in, struct floe_config_route *r,
			  const char *key)
{
	struct floe_field_ref ref;
	const char *from = NULL, *other = NULL;
	if (!r->field || strncmp(r->field, "attrs.", 6) == 0 ||
	    floe_field_ref_parse(r->field, strlen(r->field), &ref, NULL) ||
	    ref.src != FLOE_FIELD_ATTR)
		return 0;
	for (size_t k = 0; k <= in->nroutes; k++) {
		uint32_t t = k == 0 ? in->table_idx : in->routes[k - 1].table_idx;
		const struct floe_config_table *tb = floe_config_table_at(c, t);
		for (size_t j = 0; j < tb->ncolumns; j++) {
			const struct floe_config_column *col = &tb->columns[j];
			if (col->from && strcmp(col->from, r->field) == 0)
				return 0; /* a column takes the field itself */
			if (col->name && col->from && strcmp(col->name, r->field) == 0) {
				if (from && strcmp(from, col->from) != 0)
					other = col->from;
				from = from ? from : col->from;
			}
		}
	}
	if (!from)
		return 0;
	struct floe_cnode pos = {.line = (size_t)r->line, .col = (size_t)r->col};
	if (other)
		return floe_config_warn(
		    ctx, &pos,
		    "key '%s': '%s' is a column that takes the field '%s' in one "
		    "table and '%s' in another; a rule tests the parsed field: "
		    "name it",
		    key, r->field, from, other);
	size_t n = strlen(from) + 7;
	char *f = floe_malloc(ctx->a, n);
	if (!f)
		return floe_keymap_nomem(ctx);
	snprintf(f, n, "attrs.%s", from);
	floe_free(ctx->a, r->field);
	r->field = f;
	return 0;
}

int floe_keys_routes_check(struct floe_config_ctx *ctx, const struct floe_cnode *root,
			   struct floe_config *c)
{
	const struct floe_cnode *ins = floe_keymap_find_value(root, "inputs");
	char key[96];
	int first = 0, rc;
	for (size_t i = 0; i < c->ninputs; i++) {
		struct floe_config_input *in = &c->inputs[i];
		const struct floe_cnode *node =
		    ins && ins->kind == FLOE_CNODE_SEQ && i < ins->nkids ? ins->kids[i] : NULL;
		const struct floe_cnode *at = floe_keys_given(node, "table");
		snprintf(key, sizeof(key), "inputs[%zu].table", i);
		if ((rc = find_table(ctx, c, at ? at : node, key, in->table, &in->table_idx)))
			first = first ? first : rc;
		for (size_t k = 0; k < in->nroutes; k++) {
			struct floe_config_route *r = &in->routes[k];
			struct floe_cnode pos = {.line = (size_t)r->line, .col = (size_t)r->col};
			snprintf(key, sizeof(key), "inputs[%zu].route[%zu].table", i, k);
			if ((rc = find_table(ctx, c, &pos, key, r->table, &r->table_idx)))
				first = first ? first : rc;
		}
		for (size_t k = 0; k < in->nroutes && !first; k++) {
			snprintf(key, sizeof(key), "inputs[%zu].route[%zu].field", i, k);
			if ((rc = rule_on_column(ctx, c, in, &in->routes[k], key)))
				first = first ? first : rc;
		}
	}
	for (size_t g = 0; g < c->naggs; g++) {
		if (floe_config_table_find(c, c->aggs[g].table) < 0)
			continue;
		struct floe_cnode pos = {.line = (size_t)c->aggs[g].line,
					 .col = (size_t)c->aggs[g].col};
		rc = floe_config_fail(
		    ctx, &pos, FLOE_EFORMAT,
		    "key 'aggregations[%zu].table': '%s' is a raw table of tables:; "
		    "an aggregation writes a table of its own",
		    g, c->aggs[g].table);
		first = first ? first : rc;
	}
	return first;
}
