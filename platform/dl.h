/* A shared library loaded when first needed (dlopen) rather than linked: a library that
 * only some configurations use (libcurl for an S3 warehouse, libsystemd for the journal
 * input) then costs the agents that do not use it neither resident memory nor start-up
 * time. The callers keep a table of function pointers that this fills. */
#ifndef FLOE_PLATFORM_DL_H
#define FLOE_PLATFORM_DL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct floe_dl_sym {
	const char *name;
	void *slot; /* the address of the function pointer that receives it */
};

/* Loads the library soname and stores every symbol of syms[0..n) in its slot, all or
 * none: on failure the slots are zeroed, the library is unloaded, and err[0..cap) says
 * why ("cannot load SONAME (the loader's reason)" or "SONAME has no NAME"). A loaded
 * library stays until the process ends. Returns 0 or -ENOENT. */
int floe_dl_load(const char *soname, const struct floe_dl_sym *syms, size_t n, char *err,
		 size_t cap);

/* A library loaded at most once per process, by whichever thread needs it first: a
 * static struct floe_dl_once beside the caller's table of function pointers, set up with
 * FLOE_DL_ONCE_INIT. */
struct floe_dl_once {
	pthread_mutex_t lock; /* held by the one thread that loads */
	int state;	      /* 0 not tried, 1 loaded, -1 failed: published with release */
	char err[320];	      /* why it failed; written before state */
};
#define FLOE_DL_ONCE_INIT {PTHREAD_MUTEX_INITIALIZER, 0, ""}

/* The loader a caller gives floe_dl_once: fills the caller's table (floe_dl_load) and
 * returns 0, or fails with err[0..cap) saying why (it may log too: it runs once). */
typedef int floe_dl_loader(char *err, size_t cap);

/* Runs load the first time any thread calls this for o, and never again: concurrent
 * first callers wait for the one that loads. Returns 0 when the library is loaded, with
 * everything load wrote visible to this thread; otherwise -ENOENT with load's reason
 * copied to err[0..cap) (err may be NULL). */
int floe_dl_once(struct floe_dl_once *o, floe_dl_loader *load, char *err, size_t cap);

/* True when o's library is loaded (a floe_dl_once returned 0 in some thread): then,
 * as there, everything its loader wrote is visible to this thread. Never loads. */
bool floe_dl_ready(struct floe_dl_once *o);

#endif
