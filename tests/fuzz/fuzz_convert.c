/* Fuzz target for text-to-typed-value conversion: every type on any bytes returns one of
 * its three answers without reading past the input, and what converts round-trips:
 * integers, floats, doubles, dates and timestamps print back to a text that converts to
 * the same value, booleans are 0 or 1, floats are single-precision values, and a null or
 * a failure leaves a null. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/schema/convert.h"
#include "formats/base/civil.h"
#include "formats/parquet/writer.h"

static void check(enum floe_col_type t, const char *p, size_t n)
{
	struct floe_pq_value v, w;
	char buf[32];
	enum floe_conv rc = floe_convert(t, p, n, &v);
	if (rc != FLOE_CONV_OK) {
		if (!v.is_null || (rc != FLOE_CONV_NULL && rc != FLOE_CONV_FAIL))
			abort();
		return;
	}
	if (v.is_null)
		abort();
	switch (t) {
	case FLOE_COL_INT:
	case FLOE_COL_LONG:
		if (t == FLOE_COL_INT && (v.i < INT32_MIN || v.i > INT32_MAX))
			abort();
		snprintf(buf, sizeof(buf), "%lld", (long long)v.i);
		if (floe_convert(t, buf, strlen(buf), &w) != FLOE_CONV_OK || w.i != v.i)
			abort();
		break;
	case FLOE_COL_BOOLEAN:
		if (v.i != 0 && v.i != 1)
			abort();
		break;
	case FLOE_COL_FLOAT:
	case FLOE_COL_DOUBLE:
		/* A float is a single-precision value; either prints back (9 or 17 digits are
		 * enough to name it) to a text that converts to the same value. */
		if (t == FLOE_COL_FLOAT && v.d == v.d && (double)(float)v.d != v.d)
			abort();
		if (v.d == v.d) {
			snprintf(buf, sizeof(buf), t == FLOE_COL_FLOAT ? "%.9g" : "%.17g", v.d);
			if (floe_convert(t, buf, strlen(buf), &w) != FLOE_CONV_OK || w.d != v.d)
				abort();
		}
		break;
	case FLOE_COL_DATE: {
		int64_t y;
		unsigned m, d;
		floe_civil_from_days(v.i, &y, &m, &d);
		snprintf(buf, sizeof(buf), "%04lld-%02u-%02u", (long long)y, m, d);
		if (n != 10 || memcmp(buf, p, 10) != 0)
			abort();
		break;
	}
	case FLOE_COL_TIMESTAMPTZ: {
		/* Printed back in UTC (years 0000-9999: what the text can say), it is the
		 * same instant. */
		struct floe_civil_time c;
		char ts[48];
		int64_t s = v.i >= 0 ? v.i / 1000000 : -((-v.i + 999999) / 1000000);
		floe_civil_from_unix(s, &c);
		if (c.year < 0 || c.year > 9999)
			break;
		int k = snprintf(ts, sizeof(ts), "%04lld-%02u-%02uT%02u:%02u:%02u.%06lldZ",
				 (long long)c.year, c.month, c.day, c.hour, c.minute, c.second,
				 (long long)(v.i - s * 1000000));
		if (floe_convert(t, ts, (size_t)k, &w) != FLOE_CONV_OK || w.i != v.i)
			abort();
		break;
	}
	case FLOE_COL_STRING:
	case FLOE_COL_BINARY:
		if (v.s != p || v.len != n)
			abort();
		break;
	default:
		break;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so ASan sees any read past the end. */
	char *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	for (int t = 0; t < FLOE_COL_NTYPES; t++)
		check((enum floe_col_type)t, p, size);
	free(p);
	return 0;
}
