/* The aggregations' rules that span the file, checked once every section is read:
 * unique names and tables, `from` naming real inputs, and inputs whose records would be
 * kept nowhere (raw: false with no aggregation taking them). */
#include "agent/config/keys_impl.h"

#include "agent/config/config.h"
#include "formats/base/error.h"

#include <inttypes.h>
#include <string.h>

/* Aggregation i's node for key (or the aggregation itself when key is NULL or absent). */
static const struct floe_cnode *agg_node(const struct floe_cnode *root, size_t i, const char *key)
{
	const struct floe_cnode *list = floe_keys_given(root, "aggregations");
	const struct floe_cnode *item = list && i < list->nkids ? list->kids[i] : list;
	const struct floe_cnode *v = item && key ? floe_keys_given(item, key) : NULL;
	return v ? v : item;
}

static int check_agg(struct floe_config_ctx *ctx, const struct floe_cnode *root,
		     const struct floe_config *c, size_t i)
{
	const struct floe_config_agg *g = &c->aggs[i];
	for (size_t k = 0; k < g->nfrom; k++)
		if (g->from_idx[k] >= c->ninputs)
			return floe_config_fail(ctx, agg_node(root, i, "from"), FLOE_EFORMAT,
						"key 'aggregations[%zu].from[%zu]': there is no "
						"inputs[%" PRIu32 "] (%zu input%s)",
						i, k, g->from_idx[k], c->ninputs,
						c->ninputs == 1 ? "" : "s");
	for (size_t j = 0; j < i; j++) {
		if (strcmp(c->aggs[j].name, g->name) == 0)
			return floe_config_fail(
			    ctx, agg_node(root, i, "name"), FLOE_EFORMAT,
			    "key 'aggregations[%zu].name': '%s' is also the name "
			    "of aggregations[%zu]",
			    i, g->name, j);
		if (strcmp(c->aggs[j].table, g->table) == 0)
			return floe_config_fail(ctx, agg_node(root, i, "table"), FLOE_EFORMAT,
						"key 'aggregations[%zu].table': aggregations[%zu] "
						"writes to '%s' too",
						i, j, g->table);
	}
	if (strcmp(g->table, c->logs.name ? c->logs.name : "logs") == 0)
		return floe_config_fail(ctx, agg_node(root, i, "table"), FLOE_EFORMAT,
					"key 'aggregations[%zu].table': '%s' is the raw table", i,
					g->table);
	return 0;
}

/* Whether an aggregation takes from input i (an empty `from` takes from every input). */
static bool aggregated(const struct floe_config *c, size_t i)
{
	for (size_t j = 0; j < c->naggs; j++) {
		if (c->aggs[j].nfrom == 0)
			return true;
		for (size_t k = 0; k < c->aggs[j].nfrom; k++)
			if (c->aggs[j].from_idx[k] == i)
				return true;
	}
	return false;
}

/* An input with raw: false keeps its records nowhere unless an aggregation takes them. */
static int check_raw(struct floe_config_ctx *ctx, const struct floe_cnode *root,
		     const struct floe_config *c, size_t i)
{
	if (c->inputs[i].raw || aggregated(c, i))
		return 0;
	const struct floe_cnode *list = floe_keys_given(root, "inputs");
	const struct floe_cnode *item = list && i < list->nkids ? list->kids[i] : list;
	const struct floe_cnode *at = item ? floe_keys_given(item, "raw") : NULL;
	return floe_config_fail(ctx, at ? at : item, FLOE_EFORMAT,
				"key 'inputs[%zu].raw': false, but no aggregation takes from "
				"inputs[%zu]: its records would be kept nowhere (set raw: true, or "
				"name it in an aggregation's from)",
				i, i);
}

int floe_keys_aggs_check(struct floe_config_ctx *ctx, const struct floe_cnode *root,
			 struct floe_config *c)
{
	for (size_t i = 0; i < c->naggs; i++) {
		int rc = check_agg(ctx, root, c, i);
		if (rc < 0)
			return rc;
	}
	for (size_t i = 0; i < c->ninputs; i++) {
		int rc = check_raw(ctx, root, c, i);
		if (rc < 0)
			return rc;
	}
	return 0;
}
