/* Error codes shared by every layer of floe. Functions return 0 on success and a
 * negative code on failure: -errno for system errors, or one of the FLOE_E* codes below
 * (all below -4000, so they never collide with errno values). */
#ifndef FLOE_ERROR_H
#define FLOE_ERROR_H

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
	FLOE_ELAST = -4015
};

/* Returns a static, human-readable description of code (never NULL). */
const char *floe_strerror(int code);

#endif
