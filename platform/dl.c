/* Libraries loaded on first use (platform/dl.h), once per process.
 *
 * The ordering floe_dl_once relies on: the loader writes the function pointers, then the
 * state is stored with release; a reader that loads the state with acquire and sees 1
 * therefore sees every pointer. The fast path is that acquire load alone, so a call
 * through a loaded library costs no lock. The first callers take the mutex, so exactly
 * one runs the loader and the others wait for its result (the mutex orders their reads
 * after its writes too). A failure is kept: the loader is not run again. */
#include "platform/dl.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

int floe_dl_load(const char *soname, const struct floe_dl_sym *syms, size_t n, char *err,
		 size_t cap)
{
	/* RTLD_LOCAL: the library's names do not join the global scope, where they could
	 * bind the calls of other libraries; RTLD_NOW: an unresolvable library fails here,
	 * not at its first call. */
	void *h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		snprintf(err, cap, "cannot load %s (%s)", soname, why ? why : "no reason given");
		return -ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		void *p = dlsym(h, syms[i].name);
		if (!p) {
			snprintf(err, cap, "%s has no %s", soname, syms[i].name);
			for (size_t k = 0; k < i; k++)
				memset(syms[k].slot, 0, sizeof(p));
			dlclose(h);
			return -ENOENT;
		}
		/* A data pointer into a function pointer, as POSIX allows for dlsym. */
		memcpy(syms[i].slot, &p, sizeof(p));
	}
	return 0;
}

bool floe_dl_ready(struct floe_dl_once *o)
{
	return __atomic_load_n(&o->state, __ATOMIC_ACQUIRE) == 1;
}

int floe_dl_once(struct floe_dl_once *o, floe_dl_loader *load, char *err, size_t cap)
{
	int state = __atomic_load_n(&o->state, __ATOMIC_ACQUIRE);
	if (state == 0) {
		pthread_mutex_lock(&o->lock);
		state = __atomic_load_n(&o->state, __ATOMIC_ACQUIRE);
		if (state == 0) {
			state = load(o->err, sizeof(o->err)) == 0 ? 1 : -1;
			__atomic_store_n(&o->state, state, __ATOMIC_RELEASE);
		}
		pthread_mutex_unlock(&o->lock);
	}
	if (state == 1)
		return 0;
	if (err && cap)
		snprintf(err, cap, "%s", o->err);
	return -ENOENT;
}
