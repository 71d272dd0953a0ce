/* Routing: which raw table a record of an input goes to, by the input's route rules
 * (inputs[].route: the first rule whose field equals its value, matches its pattern, or,
 * with neither, is present) and its table (inputs[].table) for the rest. Made once per
 * input from the configuration; picking allocates nothing. */
#ifndef FLOE_PIPELINE_ROUTE_H
#define FLOE_PIPELINE_ROUTE_H

#include <stddef.h>

struct floe_alloc;
struct floe_config_input;
struct floe_err;
struct floe_record;
struct floe_route;

/* The rules of input in (borrowed: must outlive the route) into *out (owned; free with
 * floe_route_free). Returns 0, FLOE_ENOMEM, or FLOE_EINVAL with err when a pattern or a
 * field does not compile (the configuration check makes that impossible). */
int floe_route_new(struct floe_alloc *a, const struct floe_config_input *in,
		   struct floe_route **out, struct floe_err *err);
void floe_route_free(struct floe_route *rt);
/* The table (floe_config_table_at's index) rec (borrowed) goes to. rt NULL: table 0. */
size_t floe_route_pick(const struct floe_route *rt, const struct floe_record *rec);

#endif
