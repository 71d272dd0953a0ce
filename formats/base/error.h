/* The error codes of every layer of floe, in one registry. Functions return 0 on success
 * and a negative code on failure: -errno for system errors, or one of the codes below
 * (all below -4000, so they never collide with errno values): floe's own from -4001 and
 * the object store client's from -5001. floe_strerror describes every one of them. */
#ifndef FLOE_ERROR_H
#define FLOE_ERROR_H

#include <stddef.h>

enum {
	FLOE_EBASE = -4000,
	FLOE_ENOMEM = -4001,     /* an allocation failed or the memory budget is spent */
	FLOE_ELIMIT = -4002,     /* a hard maximum (buffer, count, size) would be exceeded */
	FLOE_EINVAL = -4003,     /* an argument is out of its domain */
	FLOE_EPARSE = -4004,     /* malformed input; the parser reports the byte offset */
	FLOE_EFORMAT = -4005,    /* well-formed input that violates a format's rules */
	FLOE_EUNSUPPORTED = -4006, /* a feature or version floe does not implement */
	FLOE_ECONFLICT = -4007,  /* an optimistic commit lost a race; reload and retry */
	FLOE_ECODEC = -4008,     /* a compression library reported an error */
	FLOE_ECORRUPT = -4009,   /* on-disk state failed its checksum or magic */
	FLOE_ESCHEMA = -4010,    /* a table's schema is incompatible with floe's */
	FLOE_ENOTFOUND = -4011,  /* a named object (table, file, key) does not exist */
	FLOE_EEXIST = -4012,     /* an object that must be new already exists */
	FLOE_EIDENTITY = -4013,  /* another installation writes under this agent's identity */
	FLOE_EREGRESS = -4014,   /* a table's history went backwards or has a gap */
	FLOE_EGONE = -4015,      /* a table this agent committed to is missing (not created again) */
	FLOE_ENEWID = -4016,     /* a new installation id (the old one lost) meets the old one's
				  * commits under agent.id: agent.replaces must name it */
	FLOE_EBEHIND = -4017,    /* a table holds fewer of this agent's commits than its record:
				  * that table's commits wait until it is restored */
	FLOE_ELAST = -4018
};

/* The S3 client's codes (platform/s3/). Its other failures are -errno: -ENOENT (404),
 * -EFBIG (a body over the caller's limit), -EINVAL (bad arguments or options), -EIO. */
enum {
	FLOE_S3_EBASE = -5000,
	FLOE_S3_EPRECONDITION = -5001, /* 412: a condition (If-None-Match: *) failed */
	FLOE_S3_ECONFLICT = -5002,     /* 409: e.g. a concurrent conditional write */
	FLOE_S3_EAMBIGUOUS = -5003,    /* a conditional write may or may not have been applied
					* (5xx or a cut connection): read the object to decide */
	FLOE_S3_EAUTH = -5004,	       /* 403 or 401: credentials, signature, permissions */
	FLOE_S3_EHTTP = -5005,	       /* another unexpected HTTP status (see last_status) */
	FLOE_S3_ETRANSPORT = -5006,    /* connection failed or was cut, retries exhausted */
	FLOE_S3_ETIMEOUT = -5007,      /* connect or transfer timeout, retries exhausted */
	FLOE_S3_ETLS = -5008,	       /* TLS handshake or certificate verification failed */
	FLOE_S3_EPROTO = -5009,	       /* malformed response (XML, headers) */
	FLOE_S3_EUNAVAILABLE = -5010,  /* 5xx / 429 / SlowDown still after the last retry */
	FLOE_S3_EREDIRECT = -5011,     /* 301/302/307/308: wrong region or endpoint (never
					* followed: it would send our credentials elsewhere) */
	FLOE_S3_ESTOPPED = -5012,      /* a stop signal ended the request (after the grace) */
	FLOE_S3_EREFUSED = -5013,      /* 412 to a create of a key that does not exist: the
					* store refuses every conditional create */
	FLOE_S3_ELOOP = -5014,	       /* a listing that does not end: a continuation token
					* seen before, or more pages than any real prefix has */
	FLOE_S3_ENOBUCKET = -5015,     /* 404 NoSuchBucket: the configured bucket does not
					* exist (not a missing key, which is -ENOENT) */
	FLOE_S3_ELOWEST = FLOE_S3_ENOBUCKET,
};

/* Returns a static, human-readable description of code (never NULL): 0, -errno (through
 * strerror) and every code above. */
const char *floe_strerror(int code);

/* What a failure was, for the person who must act on it: the code the function returns,
 * where in its input it happened (parsers: the byte offset, else FLOE_ERR_NO_OFFSET), and
 * a one-line message naming the thing at fault. A function that can explain a failure
 * takes a `struct floe_err *` (NULL when the caller does not want the detail) instead of
 * why/cap buffers or offset out-parameters; it fills it only when it fails. */
#define FLOE_ERR_MSG_MAX 1024
#define FLOE_ERR_NO_OFFSET ((size_t)-1)
struct floe_err {
	int code;
	size_t offset;
	char msg[FLOE_ERR_MSG_MAX];
};

/* Records a failure in e (may be NULL): code, no offset, and the formatted message
 * (truncated to fit). Returns code, so that `return floe_err_set(e, FLOE_EINVAL, ...)`
 * reads as one statement. */
int floe_err_set(struct floe_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The same with the byte offset in the input where the failure was found. */
int floe_err_at(struct floe_err *e, int code, size_t offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Clears e (may be NULL) to "no failure": code 0, no offset, empty message. */
void floe_err_clear(struct floe_err *e);
/* e's message, or floe_strerror(code) when the message is empty; e may be NULL. */
const char *floe_err_text(const struct floe_err *e, int code);

#endif
