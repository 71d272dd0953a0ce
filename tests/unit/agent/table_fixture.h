/* For the spool and table tests: a temporary directory holding a spool (spool/), a batch
 * that seals into it and, for the table tests, a local warehouse (wh/) with the table
 * default.logs in it. Include after cmocka.h. */
#ifndef FLOE_TEST_TABLE_FIXTURE_H
#define FLOE_TEST_TABLE_FIXTURE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/env/env.h"
#include "agent/lake/spool.h"
#include "agent/lake/table.h"
#include "agent/pipeline/batch.h"
#include "agent/schema/partition.h"
#include "formats/base/alloc.h"
#include "platform/store.h"

struct fixture {
	char dir[64], wh[128], spooldir[128];
	char meta[256]; /* the table's metadata directory */
	struct floe_alloc alloc;
	struct floe_part_spec spec;
	struct floe_spool *spool;
	struct floe_batch *batch;
	struct floe_store *store; /* NULL without a warehouse */
	uint64_t seq;             /* the last entry a test sealed, where it counts them */
	/* What table_writers.h injects: a wall clock the test moves, counting randomness, and
	 * another writer's commit run at the first random fill when hook is set. */
	int64_t wall_us;
	uint8_t next;
	bool hook;
	struct floe_table *other;
	struct floe_clock clock;
	struct floe_rand rand;
};

/* A new fixture in a directory made from tmpl (mkdtemp's XXXXXX), partitioned by part
 * (NULL: unpartitioned), with at most max_partitions open writers (0: the batch's
 * default), with a warehouse when warehouse is true. NULL when anything fails. */
static inline struct fixture *fixture_new(const char *tmpl, const char *part, size_t max_partitions,
					  bool warehouse)
{
	struct fixture *f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	snprintf(f->dir, sizeof(f->dir), "%s", tmpl);
	if (!mkdtemp(f->dir))
		return NULL;
	snprintf(f->wh, sizeof(f->wh), "%s/wh", f->dir);
	snprintf(f->spooldir, sizeof(f->spooldir), "%s/spool", f->dir);
	snprintf(f->meta, sizeof(f->meta), "%s/default/logs/metadata", f->wh);
	floe_alloc_init(&f->alloc, 64u << 20);
	char *parts[] = {(char *)part};
	struct floe_batch_options bo;
	memset(&bo, 0, sizeof(bo));
	bo.pq.codec = FLOE_PQ_ZSTD;
	bo.target_file_size = 1u << 20;
	bo.max_writers = max_partitions;
	if (floe_part_spec_from_config(&f->spec, part ? parts : NULL, part ? 1 : 0, NULL) ||
	    floe_spool_open(&f->alloc, f->spooldir, &f->spec, &f->spool) ||
	    (warehouse && floe_store_local_new(&f->alloc, f->wh, &f->store)) ||
	    floe_batch_new(&f->alloc, &f->spec, &bo, f->spool, &f->batch))
		return NULL;
	return f;
}

/* The options of the table default.logs in f's warehouse for agent, installation inst;
 * the test sets the rest. */
static inline struct floe_table_options fixture_table(struct fixture *f, const char *agent, const char *inst)
{
	return (struct floe_table_options){.store = f->store,
					   .namespace = "default",
					   .name = "logs",
					   .spec = &f->spec,
					   .agent_id = agent,
					   .installation_id = inst};
}

/* The teardown of every fixture: nothing may be left allocated. */
static inline int fixture_teardown(void **state)
{
	struct fixture *f = *state;
	floe_batch_free(f->batch);
	floe_spool_free(f->spool);
	floe_store_free(f->store);
	assert_int_equal(f->alloc.used, 0);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

#endif
