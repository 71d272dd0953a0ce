/* floe_strerror: a table for each range of codes, strerror() for -errno; and the error
 * detail of struct floe_err. */
#include "error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* One table for both ranges of codes, each beside its message, so that none can drift
 * from the enums; error paths are rare, so a linear search is fast enough. */
static const struct {
	int code;
	const char *msg;
} messages[] = {
	{FLOE_ENOMEM, "out of memory or memory budget exhausted"},
	{FLOE_ELIMIT, "size or count limit exceeded"},
	{FLOE_EINVAL, "invalid argument"},
	{FLOE_EPARSE, "malformed input"},
	{FLOE_EFORMAT, "format rule violated"},
	{FLOE_EUNSUPPORTED, "unsupported feature or version"},
	{FLOE_ECONFLICT, "commit conflict"},
	{FLOE_ECODEC, "compression codec error"},
	{FLOE_ECORRUPT, "corrupt state (bad checksum or magic)"},
	{FLOE_ESCHEMA, "incompatible table schema"},
	{FLOE_ENOTFOUND, "not found"},
	{FLOE_EEXIST, "already exists"},
	{FLOE_EIDENTITY, "agent identity in use by another installation"},
	{FLOE_EREGRESS, "table history went backwards or has a gap"},
	{FLOE_EGONE, "a table this agent committed to is missing"},
	{FLOE_ENEWID, "a new installation id meets its lost predecessor's commits"},
	{FLOE_EBEHIND, "a table is behind this agent's record of its commits"},
	{FLOE_S3_EPRECONDITION, "precondition failed (the object exists or changed)"},
	{FLOE_S3_ECONFLICT, "conflicting concurrent request"},
	{FLOE_S3_EAMBIGUOUS, "outcome unknown: the request may have been applied"},
	{FLOE_S3_EAUTH, "access denied or bad credentials/signature"},
	{FLOE_S3_EHTTP, "unexpected HTTP status"},
	{FLOE_S3_ETRANSPORT, "connection failed"},
	{FLOE_S3_ETIMEOUT, "timed out"},
	{FLOE_S3_ETLS, "TLS handshake or certificate verification failed"},
	{FLOE_S3_EPROTO, "malformed response"},
	{FLOE_S3_EUNAVAILABLE, "service unavailable (retries exhausted)"},
	{FLOE_S3_EREDIRECT, "redirected: wrong region or endpoint"},
	{FLOE_S3_ESTOPPED, "abandoned: the agent is stopping"},
	{FLOE_S3_EREFUSED, "the store refuses conditional creates (412 for a key that does not exist)"},
	{FLOE_S3_ELOOP, "the listing does not end (a repeated continuation token or too many pages)"},
	{FLOE_S3_ENOBUCKET, "the bucket does not exist (NoSuchBucket)"},
};
_Static_assert(sizeof(messages) / sizeof(messages[0]) ==
		   (FLOE_EBASE - FLOE_ELAST - 1) + (FLOE_S3_EBASE - FLOE_S3_ELOWEST),
	       "every code has a message");

const char *floe_strerror(int code)
{
	if (code == 0)
		return "success";
	if (code < 0 && code > FLOE_EBASE)
		return strerror(-code);
	for (size_t i = 0; i < sizeof(messages) / sizeof(messages[0]); i++)
		if (messages[i].code == code)
			return messages[i].msg;
	return "unknown floe error";
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
