/* A table's typed columns reserved before any file carries their ids: when an agent
 * reaches the table, the columns it plans that the table lacks are committed as a schema
 * of their own, a metadata version with no snapshot; a try that loses the race learns the
 * ids again from the winner's schema (nothing is written under them yet). Calls
 * table_attempt.c's steps; none of them calls it. */
#include "agent/lake/table_impl.h"

#include "agent/env/env.h"
#include "agent/schema/columns.h"
#include "formats/base/buf.h"
#include "formats/base/error.h"

#include <stdbool.h>
#include <stdint.h>

struct reserve {
	struct floe_colplan *plan;
	struct floe_err *err; /* why the plan cannot be learnt */
};

/* One try: the plan learnt from the freshly loaded schema (on a retry, after another
 * writer's schema: its ids may change, no file carries them yet), and, when the schema
 * must change, a metadata version with it and no new snapshot. */
static int reserve_try(struct floe_table *t, void *ctx, unsigned attempt_no)
{
	(void)attempt_no;
	struct reserve *rv = ctx;
	struct floe_table_expiry x = {0};
	struct floe_buf b;
	bool changed = false, unknown = false;
	int rc = floe_colplan_learn(rv->plan, t->meta, rv->err);
	if (rc || (rc = floe_table_evolve_plan(t, t->meta, rv->plan, &changed)) || !changed)
		return rc;
	floe_buf_init(&b, t->alloc, FLOE_TABLE_METADATA_MAX);
	/* The table's time (floe_table_snapshot_time): the version's, and the expiry's ages. */
	int64_t mono_ms, now = floe_table_snapshot_time(t, t->meta, -1, &mono_ms);
	if ((rc = floe_table_add_snapshot(t, NULL, now, &x)) == 0)
		rc = floe_table_put_next(t, &b, "reserve-before-metadata", "reserve-after-metadata", &x,
					 &unknown);
	floe_table_expiry_fini(t, &x);
	floe_buf_fini(&b);
	return rc;
}

int floe_table_reserve_columns(struct floe_table *t, struct floe_colplan *p, struct floe_err *err)
{
	struct floe_colplan try = *p;
	struct reserve rv = {&try, err};
	floe_err_clear(&t->err);
	if (t->opt.fields) /* not the logs table */
		return 0;
	int rc = floe_table_reload(t);
	if (rc == 0)
		rc = floe_table_retry(t, "schema", reserve_try, &rv);
	if (rc == 0) {
		*p = try;
		return 0;
	}
	/* A plan that cannot be learnt has its reason in err already. */
	return err && err->msg[0] ? rc : floe_table_report(t, rc, err);
}
