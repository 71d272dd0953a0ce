/* Fuzz target: floe_rfc3339_scan in every mode (the first byte picks the flags). A scan
 * never reads or reports past n; what it accepts is in range; a prefix scan agrees with
 * a whole scan of the bytes it took; and an instant converts without overflow traps. */
#include "formats/base/error.h"
#include "formats/base/rfc3339.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	unsigned flags = data[0] & 15u;
	/* The input ends where the fuzzer's buffer does: ASan sees any read past n. */
	const char *s = (const char *)data + 1;
	size_t n = size - 1;
	struct floe_rfc3339 t, w;
	size_t end = SIZE_MAX, wend;
	int rc = floe_rfc3339_scan(s, n, flags, &t, &end);
	if (end > n || (rc != 0 && rc != FLOE_EPARSE && rc != FLOE_EFORMAT))
		abort();
	if (rc == 0) {
		if (t.month < 1 || t.month > 12 || t.day < 1 || t.day > 31 || t.hour > 23 ||
		    t.minute > 59 || t.second > 60 || t.frac_us < 0 || t.frac_us > 999999)
			abort();
		if (!(flags & FLOE_RFC3339_PREFIX) && end != n)
			abort();
		if (!t.has_off && !(flags & (FLOE_RFC3339_ZONELESS | FLOE_RFC3339_ISO8601)))
			abort();
		if (floe_rfc3339_scan(s, end, flags & ~FLOE_RFC3339_PREFIX, &w, &wend) != 0 ||
		    t.year != w.year || t.month != w.month || t.day != w.day || t.hour != w.hour ||
		    t.minute != w.minute || t.second != w.second || t.frac_us != w.frac_us ||
		    t.has_off != w.has_off || (t.has_off && t.off_s != w.off_s))
			abort();
		int64_t us;
		if (floe_rfc3339_us(&t, -86399, &us) != 0)
			abort(); /* four-digit years are far inside int64 µs */
	}
	return 0;
}
