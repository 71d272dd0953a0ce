/* The C library's heap, set up for the Parquet writer's pattern: a page buffer of up to
 * about 1.25 MiB is allocated and freed for every page handed to the compression
 * thread, all the time. */
#ifndef FLOE_HEAP_H
#define FLOE_HEAP_H

/* With glibc: blocks under 4 MiB come from the heap rather than from their own mmap,
 * and up to 8 MiB free at the heap's top stays mapped, so that freeing a page buffer
 * no longer returns it to the kernel only for the next one to fault it back in (page
 * by page, zeroed). The process keeps what it has used, up to that much; its peak is
 * unchanged. Elsewhere (musl, whose allocator has no such knobs) it does nothing.
 * Call once, before the threads start. */
void floe_heap_tune(void);

#endif
