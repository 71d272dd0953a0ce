/* A shared library loaded when first needed (dlopen) rather than linked: a library that
 * only some configurations use (libcurl for an S3 warehouse, libsystemd for the journal
 * input) then costs the agents that do not use it neither resident memory nor start-up
 * time. The callers keep a table of function pointers that this fills. */
#ifndef FLOE_PLATFORM_DL_H
#define FLOE_PLATFORM_DL_H

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

#endif
