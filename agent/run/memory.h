/* The memory rule (memory.c): what the agent needs at once to read the longest record an
 * input can make and seal it (its Parquet pages, their compression, the read buffers, the
 * record assembler's state, the sort buffer and the agent's own state), against
 * agent.memory_limit. A separate step from floe_config_parse because it measures the
 * compression context (a few milliseconds), and a part of run/ because it mirrors how the
 * runner holds a record on its way. */
#ifndef FLOE_RUN_MEMORY_H
#define FLOE_RUN_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct floe_config;
struct floe_err;

/* Parts in bytes; input is the input whose record needs the most. */
struct floe_memory_need {
	uint64_t writer, read, assemble, sort, base, total;
	size_t input;
	uint64_t record; /* the longest record of that input */
};
int floe_memory_need(const struct floe_config *c, struct floe_memory_need *out);
/* Returns 0 when agent.memory_limit holds that, or FLOE_EFORMAT with one line
 * "file:line:column: message" in err (may be NULL) naming the keys, the numbers and what
 * would fit (another error from the measurement, with a message too). */
int floe_memory_check(const struct floe_config *c, struct floe_err *err);

/* How the batch shares the budget among partitions: open writers (each with its
 * compression contexts, pages and dictionaries) and the stage that holds the rows of the
 * partitions beyond them (agent/pipeline/batch.h). */
struct floe_memory_partitions {
	size_t writers;      /* open writers at most, at least 1 */
	uint64_t per_writer; /* what one takes, about */
	uint64_t stage;      /* the stage's bytes */
};
/* What c's budget holds beside the rest of the agent (floe_memory_need): 0, or an error
 * measuring the compression contexts. */
int floe_memory_partitions(const struct floe_config *c, struct floe_memory_partitions *out);

#endif
