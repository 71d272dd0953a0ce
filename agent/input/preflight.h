/* What can be known about the file inputs before reading them: each pattern against the
 * file system as it is now (`floe check` warns, `floe run` logs the same at start-up), and
 * the patterns that could make the agent read its own state or warehouse (an error for
 * both: the agent would ingest its own metrics and data forever). */
#ifndef FLOE_INPUT_PREFLIGHT_H
#define FLOE_INPUT_PREFLIGHT_H

#include "agent/input/tail.h"

#include <stdbool.h>
#include <stddef.h>

struct floe_config;
struct floe_config_input;

/* A tail's options as the configuration gives them for input i, with the storage they
 * point into. */
struct floe_preflight_tail {
	struct floe_tail_options o;
	const char *skip[2]; /* the state directory, and the warehouse when local */
	char name[32];	     /* "input N" */
};
/* Fills out for cfg's input i (cfg borrowed: out points into it); each max_open_files is
 * scaled to scale_pct percent (see floe_preflight_descriptors). */
void floe_preflight_tail_options(const struct floe_config *cfg, size_t i, unsigned scale_pct,
				 struct floe_preflight_tail *out);

/* Receives one finding: error (the configuration cannot run) or a warning, as one line
 * naming the configuration file, the input's line and the pattern. */
typedef void (*floe_preflight_fn)(void *ctx, bool error, const char *msg);

/* Checks every tail input of cfg (borrowed). Returns the number of errors found (0: it
 * may run); every finding goes to fn. Reads directories and opens matched files to test
 * that they can be read; changes nothing. */
int floe_preflight_inputs(const struct floe_config *cfg, floe_preflight_fn fn, void *ctx);

/* Whether a file matched by pattern could lie under dir (both absolute, normalised; braces
 * expanded): true if the pattern has more components than dir and each of dir's matches
 * the pattern's at the same depth. Exposed for tests. */
bool floe_preflight_could_match_under(const char *pattern, const char *dir);

/* The descriptors the inputs may hold (their max_open_files and their listeners'
 * max_connections summed), capped so that together with what the rest of the agent
 * needs they stay under the process's limit (raised towards its hard limit first).
 * *scale_pct gets the percentage each input's max_open_files and max_connections must be
 * scaled to (100: none), and the limit found. */
void floe_preflight_descriptors(const struct floe_config *cfg, unsigned *scale_pct,
				unsigned long long *limit);
/* The connections each stream listener of syslog input in may hold at once: its
 * max_connections scaled to scale_pct percent (8 at least). */
unsigned floe_preflight_max_connections(const struct floe_config_input *in,
					unsigned scale_pct);

#endif
