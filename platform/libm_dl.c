/* libm loaded with dlopen when the first sketch needs it (platform/libm.h). The
 * functions below call the library's through pointers that floe_libm_load resolves once
 * (platform/dl.h); floe itself then has no libm.so.6 among its needed libraries. */
#include "platform/libm.h"

#include "platform/dl.h"

#include <gnu/lib-names.h> /* LIBM_SO: glibc's soname of libm for this target */

/* double f(double): every function taken from libm. */
typedef double floe_libm_fn(double);

static struct {
	floe_libm_fn *log;
	floe_libm_fn *log1p;
	floe_libm_fn *exp;
	floe_libm_fn *sqrt;
} fn;
static struct floe_dl_once lib = FLOE_DL_ONCE_INIT;

/* Resolves every function or none (fn stays zero, err says why). dlsym gives each
 * name's default version, the one the linker would have bound (log and exp of
 * GLIBC_2.29 on amd64). */
static int load(char *err, size_t cap)
{
	const struct floe_dl_sym syms[] = {
	    {"log", &fn.log},
	    {"log1p", &fn.log1p},
	    {"exp", &fn.exp},
	    {"sqrt", &fn.sqrt},
	};
	return floe_dl_load(LIBM_SO, syms, sizeof(syms) / sizeof(syms[0]), err, cap);
}

int floe_libm_load(char *err, size_t cap)
{
	return floe_dl_once(&lib, load, err, cap);
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
