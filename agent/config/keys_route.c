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

/* What a typed column's name means to input in: over every table the input can write
 * to, whether a column takes a field of that name itself (*self), and which field the
 * columns of that name take (*from; *other when two take different ones). */
static void column_source(const struct floe_config *c, const struct floe_config_input *in,
			  const char *name, bool *self, const char **from, const char **other)
{
	for (size_t k = 0; k <= in->nroutes; k++) {
		uint32_t t = k == 0 ? in->table_idx : in->routes[k - 1].table_idx;
		const struct floe_config_table *tb = floe_config_table_at(c, t);
		for (size_t j = 0; j < tb->ncolumns; j++) {
			const struct floe_config_column *col = &tb->columns[j];
			if (col->from && strcmp(col->from, name) == 0)
				*self = true;
			else if (col->name && col->from && strcmp(col->name, name) == 0) {
				if (*from && strcmp(*from, col->from) != 0)
					*other = col->from;
				*from = *from ? *from : col->from;
			}
		}
	}
}

/* Rules and aggregations read the parsed fields, before a table's columns take them (a
 * routed record is converted once its table is known). A field reference written as a
 * typed column's name whose values come from another field (name: http_status, from:
 * status) would read a field no record has and take nothing, silently: it is made to
 * read that field, when every table the inputs can write to that has a column of that
 * name takes the same field for it and none takes a field of that name. Two such tables
 * that take different fields leave the reference as written (it reads nothing) and
 * floe_config_warn says it cannot say which it means. attrs.KEY names the attribute
 * itself and is kept. The inputs: in alone, or (in NULL) those of aggregation g. *field
 * becomes attrs.FROM, but for a group key (key_of set): its column would change type
 * with its source (an aggregate table made by a release that read nothing there has it
 * as a string, and a column's type cannot change), so it stays as written and
 * floe_config_warn names the field to write. */
static int reference_column(struct floe_config_ctx *ctx, const struct floe_config *c,
			    const struct floe_config_input *in, const struct floe_config_agg *g,
			    int line, int col, const char *key, char **field, bool key_of)
{
	struct floe_field_ref ref;
	const char *from = NULL, *other = NULL;
	bool self = false;
	const char *name = *field;
	if (!name || strncmp(name, "attrs.", 6) == 0 ||
	    floe_field_ref_parse(name, strlen(name), &ref, NULL) || ref.src != FLOE_FIELD_ATTR)
		return 0;
	if (in) {
		column_source(c, in, name, &self, &from, &other);
	} else {
		for (size_t i = 0; i < c->ninputs; i++) {
			bool takes = g->nfrom == 0;
			for (size_t k = 0; k < g->nfrom && !takes; k++)
				takes = g->from_idx[k] == i;
			if (takes)
				column_source(c, &c->inputs[i], name, &self, &from, &other);
		}
	}
	if (self || !from)
		return 0;
	struct floe_cnode pos = {.line = (size_t)line, .col = (size_t)col};
	if (other)
		return floe_config_warn(ctx, &pos,
					"key '%s': '%s' is a column that takes the field '%s' in one "
					"table and '%s' in another; a %s reads the parsed field: "
					"name it",
					key, name, from, other, in ? "rule" : "field reference");
	if (key_of)
		return floe_config_warn(ctx, &pos,
					"key '%s': '%s' is a column that takes the field '%s'; a group "
					"key reads the parsed field, and this one would be null in "
					"every row: write '%s' (its key column is then named so)",
					key, name, from, from);
	size_t n = strlen(from) + 7;
	char *f = floe_malloc(ctx->a, n);
	if (!f)
		return floe_keymap_nomem(ctx);
	snprintf(f, n, "attrs.%s", from);
	floe_free(ctx->a, *field);
	*field = f;
	return 0;
}

/* An aggregation's field references written as typed columns' names (reference_column):
 * its where and metrics read the field the column takes (a metric's column was named
 * from what was written, and its type does not follow the source's); a group key is
 * warned of. */
static int agg_columns(struct floe_config_ctx *ctx, struct floe_config *c, size_t i)
{
	struct floe_config_agg *g = &c->aggs[i];
	char key[96];
	int rc;
	if (g->nfrom && g->from_idx)
		for (size_t k = 0; k < g->nfrom; k++)
			if (g->from_idx[k] >= c->ninputs)
				return 0; /* check_agg says so */
	snprintf(key, sizeof(key), "aggregations[%zu].where.field", i);
	if ((rc = reference_column(ctx, c, NULL, g, g->line, g->col, key, &g->where.field,
				   false)))
		return rc;
	for (size_t k = 0; k < g->nmetrics; k++) {
		snprintf(key, sizeof(key), "aggregations[%zu].metrics[%zu]", i, k);
		if ((rc = reference_column(ctx, c, NULL, g, g->line, g->col, key,
					   &g->metrics[k].field, false)))
			return rc;
	}
	for (size_t k = 0; k < g->ngroup_by; k++) {
		snprintf(key, sizeof(key), "aggregations[%zu].group_by[%zu]", i, k);
		if ((rc = reference_column(ctx, c, NULL, g, g->line, g->col, key, &g->group_by[k],
					   true)))
			return rc;
	}
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
			struct floe_config_route *r = &in->routes[k];
			if ((rc = reference_column(ctx, c, in, NULL, r->line, r->col, key,
						   &r->field, false)))
				first = first ? first : rc;
		}
	}
	for (size_t g = 0; g < c->naggs && !first; g++)
		if ((rc = agg_columns(ctx, c, g)))
			first = rc;
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
