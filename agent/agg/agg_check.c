/* The aggregations' memory rule: each one's plan, and their sum within their share of
 * agent.memory_limit, checked before anything is reserved so that `floe check` refuses
 * what `floe run` could not hold. */
#include "agent/agg/aggregator.h"

#include "agent/config/config.h"
#include "formats/base/error.h"

#include <stdio.h>

static double mib(uint64_t v)
{
	return (double)v / 1048576.0;
}

/* The aggregations' share of agent.memory_limit: a quarter, or what rest leaves. */
static uint64_t share_of(const struct floe_config *c, uint64_t rest)
{
	uint64_t limit = c->agent.memory_limit;
	uint64_t left = limit - (rest < limit ? rest : limit);
	return limit / 4 < left ? limit / 4 : left;
}

uint64_t floe_agg_growth(const struct floe_config *c, uint64_t rest, size_t i)
{
	uint64_t sum = 0, pools = 0, mine = 0;
	for (size_t k = 0; k < c->naggs; k++) {
		struct floe_agg_plan p;
		if (floe_agg_plan(&c->aggs[k], &p, NULL))
			return 0;
		sum += p.total;
		pools += p.pool * p.windows;
		if (k == i)
			mine = p.pool * p.windows;
	}
	uint64_t share = share_of(c, rest);
	if (sum >= share || pools == 0)
		return 0;
	/* Split as the reserved pools are: an aggregation with more sketch memory per
	 * window is the one whose groups can need more. */
	return (uint64_t)((double)(share - sum) * ((double)mine / (double)pools));
}

int floe_agg_check(const struct floe_config *c, uint64_t rest, struct floe_err *err)
{
	uint64_t sum = 0;
	uint64_t share = share_of(c, rest);
	for (size_t i = 0; i < c->naggs; i++) {
		const struct floe_config_agg *g = &c->aggs[i];
		struct floe_agg_plan p;
		struct floe_err why = {0};
		if (floe_agg_plan(g, &p, &why))
			return floe_err_set(err, FLOE_EFORMAT,
					    "%s:%d:%d: key 'aggregations[%zu]': %s; lower "
					    "allowed_lateness or raise slide",
					    c->path, g->line, g->col, i, why.msg);
		sum += p.total;
		if (sum <= share)
			continue;
		/* What would fit: the other aggregations as they are, this one's windows with
		 * fewer groups (each with up to 16 bytes of index), its overflow group kept. */
		uint64_t other = sum - p.total, per = (uint64_t)p.windows * (p.group_bytes + 16);
		uint64_t fit =
		    share > other + (64u << 10) ? (share - other - (64u << 10)) / per : 0;
		return floe_err_set(
		    err, FLOE_EFORMAT,
		    "%s:%d:%d: key 'aggregations[%zu].max_groups': %u window(s) x %llu groups x "
		    "%llu "
		    "bytes = %.1fMiB, and the aggregations together %.1fMiB: more than their "
		    "share of agent.memory_limit (%.1fMiB: at most a quarter, and what the "
		    "%.1fMiB the rest of the agent needs leaves); lower max_groups to %llu or "
		    "raise agent.memory_limit to %lluMiB",
		    c->path, g->line, g->col, i, p.windows, (unsigned long long)p.groups,
		    (unsigned long long)p.group_bytes, mib(p.total), mib(sum), mib(share),
		    mib(rest), (unsigned long long)(fit > 1 ? fit - 1 : 0),
		    (unsigned long long)(((sum * 4 > rest + sum ? sum * 4 : rest + sum) +
					  (1u << 20) - 1) >>
					 20));
	}
	return 0;
}
