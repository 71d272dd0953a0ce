/* libm loaded with dlopen when the first sketch needs it (platform/libm.h). The
 * functions below call the library's through pointers that floe_libm_load resolves once
 * (platform/dl.h); floe itself then has no libm.so.6 among its needed libraries. */
#include "platform/libm.h"

#include "platform/dl.h"

#include <errno.h>
#include <gnu/lib-names.h> /* LIBM_SO: glibc's soname of libm for this target */
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>

/* double f(double): every function taken from libm. */
typedef double floe_libm_fn(double);

static struct {
	floe_libm_fn *log;
	floe_libm_fn *log1p;
	floe_libm_fn *exp;
	floe_libm_fn *sqrt;
} fn;
static pthread_once_t once = PTHREAD_ONCE_INIT;
/* Written only inside load, which pthread_once orders before every return from it. */
static bool loaded;
static char load_err[256];

/* Resolves every function or none (fn stays zero, loaded false, load_err says why).
 * dlsym gives each name's default version, the one the linker would have bound (log
 * and exp of GLIBC_2.29 on amd64). */
static void load(void)
{
	const struct floe_dl_sym syms[] = {
	    {"log", &fn.log},
	    {"log1p", &fn.log1p},
	    {"exp", &fn.exp},
	    {"sqrt", &fn.sqrt},
	};
	loaded = floe_dl_load(LIBM_SO, syms, sizeof(syms) / sizeof(syms[0]), load_err,
			      sizeof(load_err)) == 0;
}

int floe_libm_load(char *err, size_t cap)
{
	pthread_once(&once, load);
	if (loaded)
		return 0;
	if (err && cap)
		snprintf(err, cap, "%s", load_err);
	return -ENOENT;
}

double floe_libm_log(double x)
{
	return fn.log(x);
}

double floe_libm_log1p(double x)
{
	return fn.log1p(x);
}

double floe_libm_exp(double x)
{
	return fn.exp(x);
}

double floe_libm_sqrt(double x)
{
	return fn.sqrt(x);
}
