/* The runner's positions: (u32 count, then count x (u32 length, blob)), one blob per
 * input in the configuration's order, each the input's own (input.h). Pure. */
#ifndef FLOE_SPAN_H
#define FLOE_SPAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct floe_alloc;

/* Input i's blob inside the runner's positions p/len: *blob points into p. *count
 * gets the number of inputs recorded. FLOE_ECORRUPT when p is malformed, FLOE_ENOTFOUND
 * when i >= *count. */
int floe_span_input(const uint8_t *p, size_t len, size_t i, uint32_t *count, const uint8_t **blob,
		    size_t *blob_len);

#endif
