/* Clocks, randomness and host identity: the few things about "now" and "here" that the
 * rest of floe gets injected from this layer. */
#ifndef FLOE_PLATFORM_CLOCK_H
#define FLOE_PLATFORM_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Wall-clock time (CLOCK_REALTIME) in microseconds since the Unix epoch. */
int64_t floe_clock_now_us(void);
/* Monotonic time (CLOCK_MONOTONIC) in nanoseconds, for intervals and timeouts. */
int64_t floe_clock_mono_ns(void);
/* Fills p[0..n) from the kernel's CSPRNG (getrandom), retrying EINTR and partial reads. */
int floe_random_bytes(void *p, size_t n);
/* Copies the host name, NUL-terminated, into out[0..cap). -ENAMETOOLONG if it does not
 * fit. */
int floe_hostname(char *out, size_t cap);
/* Writes a random (version 4) UUID as 36 lowercase characters plus NUL. */
void floe_uuid4(char out[37]);

#endif
