/* The small helpers every credential provider shares (s3_credprov_impl.h): a leaf file
 * below the chain (s3_credprov.c) and the remote providers (s3_credprov_remote.c,
 * s3_credprov_http.c), which all call it and which it calls none of. */
#include "platform/s3/s3_credprov_impl.h"

#include "formats/base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *floe_s3_credprov_opt_env(const char *o, const char *env)
{
	if (o)
		return *o ? o : NULL;
	const char *v = getenv(env);
	return v && *v ? v : NULL;
}

void floe_s3_credprov_why(struct floe_err *e, const char *fmt, ...)
{
	size_t len = strlen(e->msg);
	if (len + 1 >= sizeof(e->msg))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg + len, sizeof(e->msg) - len, fmt, ap);
	va_end(ap);
}
