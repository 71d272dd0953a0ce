/* Spools left behind: the spool directory of a table the configuration no longer names
 * (a raw table removed from `tables:` or renamed, an aggregation removed) keeps its
 * entries, which are committed when the table is configured again. Until then nothing
 * commits them, so they are found and reported, never left silent. */
#ifndef FLOE_RUN_SPOOL_LEFT_H
#define FLOE_RUN_SPOOL_LEFT_H

#include <stdint.h>

struct floe_alloc;
struct floe_config;

/* One spool directory left behind: the table's name (borrowed), whether it is an
 * aggregate table's, its directory (borrowed), and its whole entries and their data
 * bytes. */
struct floe_spool_left {
	const char *table;
	const char *dir;
	int agg;
	uint64_t entries, bytes;
};

/* Walks state_dir/tables/<name> and state_dir/agg/<name> (borrowed cfg and state_dir)
 * for the directories of tables cfg does not name that hold whole entries, and calls fn
 * for each (left and what it points to are valid during the call only). Directories that
 * cannot be read are passed over: this only reports. a is for the listings. */
void floe_run_spools_left(struct floe_alloc *a, const struct floe_config *cfg,
			  const char *state_dir,
			  void (*fn)(void *ctx, const struct floe_spool_left *left), void *ctx);

#endif
