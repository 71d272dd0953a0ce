/* The Parquet writers' options as the runner derives them from the configuration
 * (settings.c), for the memory rule (memory.c), which must model the same writers. */
#ifndef FLOE_RUN_SETTINGS_H
#define FLOE_RUN_SETTINGS_H

struct floe_config_table;
struct floe_pq_options;

/* Fills o from table t's configuration: codec, level, profile, row group size, the
 * dictionary cap and page budget. No offload, bloom filters or created_by (the runner
 * adds them). */
void floe_run_pq_options(const struct floe_config_table *t, struct floe_pq_options *o);

#endif
