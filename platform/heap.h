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

/* Gives the kernel back the heap's free memory, wherever it lies (glibc's malloc_trim
 * releases whole free pages inside the heap too, not only at its top). For the end of
 * start-up: sizing the batches compresses a probe of half a MiB in a throw-away zstd
 * context (formats/parquet/writer.c), about 2.4 MiB that floe_heap_tune's thresholds
 * would otherwise keep resident in an agent that has nothing to read; measured with
 * tests/bench/idle.sh (10 idle files: 5.9 MiB of RSS before, 3.9 MiB after, without S3
 * and PCRE2 on amd64). Safe with other threads running; does nothing without glibc. */
void floe_heap_release(void);

#endif
