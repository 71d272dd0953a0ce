/* Fuzz target: floe_ts_parse. The first byte picks a format (built-in or custom), the
 * rest is the string; every third format reads times without an offset through a zone
 * given as a function (zone: local; here an hour ahead of UTC). A parse that needs the
 * whole string must agree with a prefix parse that consumed all of it. */
#include "agent/env/env.h"
#include "agent/parse/timestamp.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const specs[] = {
    "rfc3339",
    "iso8601",
    "epoch",
    "epoch_ms",
    "epoch_us",
    "epoch_ns",
    "syslog",
    "apache",
    "%d/%b/%Y:%H:%M:%S %z",
    "%Y-%m-%d %I:%M:%S.%f %p",
    "%a %B %e %T %y",
    "%Y %j %s",
    "%m%d %H%M%S",
};
#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static int32_t offset_at(void *ctx, int64_t utc_us)
{
	(void)ctx;
	(void)utc_us;
	return 3600;
}

static int64_t to_utc(void *ctx, int64_t local_us, int64_t hint_us)
{
	(void)ctx;
	(void)hint_us;
	return local_us > INT64_MIN + 3600000000LL ? local_us - 3600000000LL : local_us;
}

static const struct floe_zone_fn zone = {to_utc, offset_at, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_ts_format *fmts[NSPECS];
	if (!fmts[0]) {
		for (size_t k = 0; k < NSPECS; k++) {
			if (floe_ts_format_new(NULL, specs[k], strlen(specs[k]),
					       k % 2 ? "+05:30" : "UTC", k % 2 ? 6 : 3, &fmts[k],
					       NULL))
				abort();
			if (k % 3 == 2)
				floe_ts_format_set_zone(fmts[k], &zone);
		}
	}
	if (size == 0)
		return 0;
	const struct floe_ts_format *f = fmts[data[0] % NSPECS];
	const char *s = (const char *)data + 1;
	size_t n = size - 1;
	/* 2025-03-01T00:00:00Z, and the extremes. */
	static const int64_t refs[] = {1740787200000000, INT64_MIN, INT64_MAX};
	for (size_t k = 0; k < 3; k++) {
		int64_t a = 0, b = 0;
		size_t used = SIZE_MAX;
		int rc1 = floe_ts_parse(f, s, n, refs[k], &a, NULL);
		int rc2 = floe_ts_parse(f, s, n, refs[k], &b, &used);
		if (rc1 != 0 && rc1 != FLOE_EPARSE && rc1 != FLOE_ELIMIT)
			abort();
		if (rc2 == 0 && used > n)
			abort();
		if (rc1 == 0 && (rc2 != 0 || used != n || a != b))
			abort();
	}
	return 0;
}
