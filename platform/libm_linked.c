/* libm linked (platform/libm.h), for the static build: a static floe loads nothing at
 * run time (glibc's dlopen from a static program needs that very glibc's shared
 * libraries on the device), and linking libm.a adds only the four functions. */
#include "platform/libm.h"

#include <math.h>

int floe_libm_load(char *err, size_t cap)
{
	return 0;
}

double floe_libm_log(double x)
{
	return log(x);
}

double floe_libm_log1p(double x)
{
	return log1p(x);
}

double floe_libm_exp(double x)
{
	return exp(x);
}

double floe_libm_sqrt(double x)
{
	return sqrt(x);
}
