/* floe_strerror: one table for floe's own codes, strerror() for -errno. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const messages[] = {
	[0] = "unknown floe error",
	[1] = "out of memory or memory budget exhausted",
	[2] = "size or count limit exceeded",
	[3] = "invalid argument",
	[4] = "malformed input",
	[5] = "format rule violated",
	[6] = "unsupported feature or version",
	[7] = "commit conflict",
	[8] = "compression codec error",
	[9] = "corrupt state (bad checksum or magic)",
	[10] = "incompatible table schema",
	[11] = "not found",
	[12] = "already exists",
	[13] = "agent identity in use by another installation",
	[14] = "table history went backwards or has a gap",
};

/* The platform layer's S3 codes (platform/s3.h, -5001 and below); their messages live
 * here too so that one function describes every code. tests/unit/agent/test_errors.c
 * checks that both tables agree. */
static const char *const s3_messages[] = {
	"precondition failed (the object exists or changed)",
	"conflicting concurrent request",
	"outcome unknown: the request may have been applied",
	"access denied or bad credentials/signature",
	"unexpected HTTP status",
	"connection failed",
	"timed out",
	"TLS handshake or certificate verification failed",
	"malformed response",
	"service unavailable (retries exhausted)",
	"redirected: wrong region or endpoint",
	"abandoned: the agent is stopping",
	"the store refuses conditional creates (412 for a key that does not exist)",
	"the listing does not end (a repeated continuation token or too many pages)",
};

const char *floe_strerror(int code)
{
	if (code <= -5001 && code >= -5000 - (int)(sizeof(s3_messages) / sizeof(s3_messages[0])))
		return s3_messages[-5001 - code];
	if (code == 0)
		return "success";
	if (code < 0 && code > FLOE_EBASE)
		return strerror(-code);
	if (code <= FLOE_EBASE && code > FLOE_ELAST)
		return messages[FLOE_EBASE - code];
	return messages[0];
}

static int err_vset(struct floe_err *e, int code, size_t offset, const char *fmt, va_list ap)
{
	if (!e)
		return code;
	e->code = code;
	e->offset = offset;
	if (vsnprintf(e->msg, sizeof(e->msg), fmt, ap) < 0)
		e->msg[0] = '\0';
	return code;
}

int floe_err_set(struct floe_err *e, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vset(e, code, FLOE_ERR_NO_OFFSET, fmt, ap);
	va_end(ap);
	return rc;
}

int floe_err_at(struct floe_err *e, int code, size_t offset, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = err_vset(e, code, offset, fmt, ap);
	va_end(ap);
	return rc;
}

void floe_err_clear(struct floe_err *e)
{
	if (!e)
		return;
	e->code = 0;
	e->offset = FLOE_ERR_NO_OFFSET;
	e->msg[0] = '\0';
}

const char *floe_err_text(const struct floe_err *e, int code)
{
	return e && e->msg[0] ? e->msg : floe_strerror(code);
}
