/* The configured warehouse as an object store (see warehouse.c). */
#ifndef FLOE_WAREHOUSE_H
#define FLOE_WAREHOUSE_H

#include <stdbool.h>
#include <stddef.h>

struct floe_alloc;
struct floe_config;
struct floe_err;
struct floe_store;

/* Opens cfg's warehouse, whose memory (object bodies, listings, credentials) comes from a
 * (the agent's budget; borrowed, it must outlive the store). With probe, an S3 store must
 * first show that it refuses a second conditional create of a probe key (-ENOTSUP
 * otherwise). err (may be NULL) gets the code and a message for the operator on failure;
 * FLOE_EINVAL is a configuration error (a credential reference that does not resolve, no
 * credentials at all). */
int floe_warehouse_open(struct floe_alloc *a, const struct floe_config *cfg, bool probe,
			struct floe_store **out, struct floe_err *err);

#endif
