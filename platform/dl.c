/* Libraries loaded on first use (platform/dl.h). */
#include "platform/dl.h"

#include <dlfcn.h>
#include <errno.h>
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
