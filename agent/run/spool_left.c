/* Spools of tables the configuration no longer names (spool_left.h). Only the directory
 * listing and the files' sizes are read: an entry's rows would need its table's
 * partition spec, which a configuration without the table does not have. */
#include "agent/run/spool_left.h"

#include "agent/config/config.h"
#include "formats/base/buf.h"
#include "formats/base/limits.h"
#include "platform/fs.h"

#include <stdbool.h>
#include <string.h>

struct walk {
	struct floe_alloc *alloc;
	const struct floe_config *cfg;
	const char *parent; /* state_dir/tables or state_dir/agg */
	bool agg;
	void (*fn)(void *ctx, const struct floe_spool_left *left);
	void *ctx;
	/* The directory being counted. */
	const char *dir;
	uint64_t entries, bytes;
};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n > m && memcmp(s + n - m, suffix, m) == 0;
}

/* Counts a spool directory's entries (<seq>.entry) and data files (<seq>-<k>.parquet);
 * its quarantine, its typed columns' plan and its record of the last commit are not
 * waiting rows. */
static int count_one(void *ctx, const char *name)
{
	struct walk *w = ctx;
	char path[FLOE_PATH_MAX];
	struct floe_fs_stat st;
	if (name[0] == '.')
		return 0;
	if (ends_with(name, ".entry"))
		w->entries++;
	else if (ends_with(name, ".parquet") &&
		 floe_fmt(path, sizeof(path), "%s/%s", w->dir, name) == 0 &&
		 floe_fs_stat(path, &st) == 0 && st.regular)
		w->bytes += st.size;
	return 0;
}

static bool configured(const struct walk *w, const char *name)
{
	if (w->agg) {
		for (size_t i = 0; i < w->cfg->naggs; i++)
			if (strcmp(w->cfg->aggs[i].table, name) == 0)
				return true;
		return false;
	}
	/* Index 0 (logs) spools in state_dir/spool, never here. */
	for (size_t k = 1; k < floe_config_ntables(w->cfg); k++)
		if (strcmp(floe_config_table_at(w->cfg, k)->name, name) == 0)
			return true;
	return false;
}

static int dir_one(void *ctx, const char *name)
{
	struct walk *w = ctx;
	char dir[FLOE_PATH_MAX];
	struct floe_fs_stat st;
	/* The aggregations' quarantine and their windows' images sit beside their spools. */
	if (name[0] == '.' || strcmp(name, "quarantine") == 0 || configured(w, name) ||
	    floe_fmt(dir, sizeof(dir), "%s/%s", w->parent, name) != 0 ||
	    floe_fs_stat(dir, &st) != 0 || !st.dir)
		return 0;
	w->dir = dir;
	w->entries = w->bytes = 0;
	if (floe_fs_list(w->alloc, dir, count_one, w) != 0 || w->entries == 0)
		return 0;
	struct floe_spool_left left = {
	    .table = name, .dir = dir, .agg = w->agg, .entries = w->entries, .bytes = w->bytes};
	w->fn(w->ctx, &left);
	return 0;
}

void floe_run_spools_left(struct floe_alloc *a, const struct floe_config *cfg,
			  const char *state_dir,
			  void (*fn)(void *ctx, const struct floe_spool_left *left), void *ctx)
{
	static const char *const parents[] = {"tables", "agg"};
	char parent[FLOE_PATH_MAX];
	for (size_t i = 0; i < sizeof(parents) / sizeof(parents[0]); i++) {
		struct walk w = {
		    .alloc = a, .cfg = cfg, .parent = parent, .agg = i == 1, .fn = fn, .ctx = ctx};
		/* A listing that fails (no such directory yet) reports nothing. */
		if (floe_fmt(parent, sizeof(parent), "%s/%s", state_dir, parents[i]) == 0)
			(void)floe_fs_list(a, parent, dir_one, &w);
	}
}
