/* libm's functions that the aggregations' sketches need (DDSketch's logarithmic
 * mapping, HyperLogLog's estimator), loaded when the first sketch is set up rather than
 * linked: libm is about 0.3 MiB of resident memory in every agent, and only one with
 * `quantiles` or `distinct` metrics calls it. A static build links libm instead
 * (libm_linked.c; libm_dl.c loads it). The functions are glibc's, so a sketch gives the
 * same buckets and estimates whichever way they are reached. */
#ifndef FLOE_PLATFORM_LIBM_H
#define FLOE_PLATFORM_LIBM_H

#include <stddef.h>

/* Loads libm once per process (thread-safe; later calls return the first answer). On
 * failure err[0..cap) says why ("cannot load libm.so.6 (the loader's reason)"); err may
 * be NULL. Returns 0 or -ENOENT. */
int floe_libm_load(char *err, size_t cap);

/* libm's log, log1p, exp and sqrt. Only after floe_libm_load has returned 0: the sketches'
 * _init and _decode functions call it, and nothing reaches these without a sketch. */
double floe_libm_log(double x);
double floe_libm_log1p(double x);
double floe_libm_exp(double x);
double floe_libm_sqrt(double x);

#endif
