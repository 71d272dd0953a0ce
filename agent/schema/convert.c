/* Text to typed column values (rules in convert.h). Each converter reads the bytes once
 * and never looks past n; floating point goes through strtod on a bounded, terminated
 * copy only after the text has matched the decimal grammar, so strtod's extras (hex,
 * leading space, locale) never apply. */
#include "agent/schema/convert.h"

#include "formats/base/civil.h"
#include "formats/base/rfc3339.h"
#include "formats/base/scan.h"
#include "formats/parquet/writer.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* Longer decimal text than this is not a number anyone logs; it does not convert. */
#define NUM_MAX 64

static const char *const NAMES[FLOE_COL_NTYPES] = {
    [FLOE_COL_BOOLEAN] = "boolean", [FLOE_COL_INT] = "int",	   [FLOE_COL_LONG] = "long",
    [FLOE_COL_FLOAT] = "float",	    [FLOE_COL_DOUBLE] = "double", [FLOE_COL_STRING] = "string",
    [FLOE_COL_DATE] = "date",	    [FLOE_COL_BINARY] = "binary",
    [FLOE_COL_TIMESTAMPTZ] = "timestamptz",
};

int floe_col_type_parse(const char *name, size_t len)
{
	for (int t = 0; t < FLOE_COL_NTYPES; t++)
		if (strlen(NAMES[t]) == len && memcmp(NAMES[t], name, len) == 0)
			return t;
	return -1;
}

const char *floe_col_type_name(enum floe_col_type t)
{
	return (unsigned)t < FLOE_COL_NTYPES ? NAMES[t] : NULL;
}

static bool word_is(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && strncasecmp(p, w, n) == 0;
}

static enum floe_conv to_bool(const char *p, size_t n, int64_t *out)
{
	static const char *const T[] = {"true", "t", "yes", "on", "1"};
	static const char *const F[] = {"false", "f", "no", "off", "0"};
	for (size_t i = 0; i < sizeof(T) / sizeof(T[0]); i++) {
		if (word_is(p, n, T[i]))
			return *out = 1, FLOE_CONV_OK;
		if (word_is(p, n, F[i]))
			return *out = 0, FLOE_CONV_OK;
	}
	return FLOE_CONV_FAIL;
}

/* A decimal integer in [lo, hi]. Digits accumulate as a negative number, whose range
 * holds INT64_MIN. */
static enum floe_conv to_int(const char *p, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	int64_t v = 0;
	if (i < n && (p[i] == '-' || p[i] == '+'))
		neg = p[i++] == '-';
	if (i == n)
		return FLOE_CONV_FAIL;
	if (n - i <= 18) {
		/* Up to 18 digits cannot overflow: no bound checked per digit (status codes,
		 * sizes, ids are all this short). */
		uint64_t u = 0;
		for (; i < n; i++) {
			unsigned d = (unsigned char)p[i] - '0';
			if (d > 9)
				return FLOE_CONV_FAIL;
			u = u * 10 + d;
		}
		v = neg ? -(int64_t)u : (int64_t)u;
		if (v < lo || v > hi)
			return FLOE_CONV_FAIL;
		*out = v;
		return FLOE_CONV_OK;
	}
	for (; i < n; i++) {
		unsigned d = (unsigned char)p[i] - '0';
		if (d > 9 || v < (INT64_MIN + (int64_t)d) / 10)
			return FLOE_CONV_FAIL;
		v = v * 10 - (int64_t)d;
	}
	if (!neg) {
		if (v == INT64_MIN)
			return FLOE_CONV_FAIL;
		v = -v;
	}
	if (v < lo || v > hi)
		return FLOE_CONV_FAIL;
	*out = v;
	return FLOE_CONV_OK;
}

static size_t digits(const char *p, size_t n, size_t i)
{
	size_t s = i;
	while (i < n && p[i] >= '0' && p[i] <= '9')
		i++;
	return i - s;
}

/* [sign] (digits [. digits*] | . digits) [(e|E) [sign] digits], or [sign] nan|inf|infinity. */
static bool decimal_grammar(const char *p, size_t n)
{
	size_t i = 0, ip, fp = 0;
	if (i < n && (p[i] == '-' || p[i] == '+'))
		i++;
	if (word_is(p + i, n - i, "nan") || word_is(p + i, n - i, "inf") ||
	    word_is(p + i, n - i, "infinity"))
		return true;
	i += ip = digits(p, n, i);
	if (i < n && p[i] == '.')
		i += 1 + (fp = digits(p, n, i + 1));
	if (ip + fp == 0)
		return false;
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '-' || p[i] == '+'))
			i++;
		size_t ep = digits(p, n, i);
		if (ep == 0)
			return false;
		i += ep;
	}
	return i == n;
}

static enum floe_conv to_double(const char *p, size_t n, bool single, double *out)
{
	char buf[NUM_MAX + 1];
	if (n > NUM_MAX || !decimal_grammar(p, n))
		return FLOE_CONV_FAIL;
	memcpy(buf, p, n);
	buf[n] = '\0';
	if (single) {
		float f = strtof(buf, NULL);
		*out = f;
	} else {
		*out = strtod(buf, NULL);
	}
	return FLOE_CONV_OK;
}

/* YYYY-MM-DD, years 0000-9999. */
static enum floe_conv to_date(const char *p, size_t n, int64_t *out)
{
	size_t i = 0;
	int y, m, d;
	if (!floe_scan_digits(p, n, &i, 4, 4, &y) || !floe_scan_char(p, n, &i, '-') ||
	    !floe_scan_digits(p, n, &i, 2, 2, &m) || !floe_scan_char(p, n, &i, '-') ||
	    !floe_scan_digits(p, n, &i, 2, 2, &d) || i != n)
		return FLOE_CONV_FAIL;
	if (m < 1 || m > 12 || d < 1 || (unsigned)d > floe_civil_days_in_month(y, (unsigned)m))
		return FLOE_CONV_FAIL;
	*out = floe_civil_to_days(y, (unsigned)m, (unsigned)d);
	return FLOE_CONV_OK;
}

/* The one RFC 3339 scanner floe has (syslog, JSON "ts", the configured formats), whole
 * text only, offset required. */
static enum floe_conv to_timestamptz(const char *p, size_t n, int64_t *out)
{
	struct floe_rfc3339 t;
	size_t end = 0;
	if (floe_rfc3339_scan(p, n, FLOE_RFC3339_FRAC9, &t, &end) != 0 || end != n ||
	    floe_rfc3339_us(&t, 0, out) != 0)
		return FLOE_CONV_FAIL;
	return FLOE_CONV_OK;
}

enum floe_conv floe_convert(enum floe_col_type t, const char *p, size_t n,
			    struct floe_pq_value *out)
{
	enum floe_conv rc = FLOE_CONV_FAIL;
	floe_pq_value_init(out, false);
	if (t != FLOE_COL_STRING && t != FLOE_COL_BINARY && (n == 0 || (n == 1 && p[0] == '-'))) {
		out->is_null = true;
		return FLOE_CONV_NULL;
	}
	switch (t) {
	case FLOE_COL_BOOLEAN:
		rc = to_bool(p, n, &out->i);
		break;
	case FLOE_COL_INT:
		rc = to_int(p, n, INT32_MIN, INT32_MAX, &out->i);
		break;
	case FLOE_COL_LONG:
		rc = to_int(p, n, INT64_MIN, INT64_MAX, &out->i);
		break;
	case FLOE_COL_FLOAT:
	case FLOE_COL_DOUBLE:
		rc = to_double(p, n, t == FLOE_COL_FLOAT, &out->d);
		break;
	case FLOE_COL_DATE:
		rc = to_date(p, n, &out->i);
		break;
	case FLOE_COL_TIMESTAMPTZ:
		rc = to_timestamptz(p, n, &out->i);
		break;
	case FLOE_COL_STRING:
	case FLOE_COL_BINARY:
		out->s = p;
		out->len = n;
		rc = FLOE_CONV_OK;
		break;
	default:
		break;
	}
	if (rc != FLOE_CONV_OK)
		floe_pq_value_init(out, true);
	return rc;
}
