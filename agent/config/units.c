/* Size and duration parsing and formatting for the configuration (see units.h). */
#include "agent/config/units.h"

#include "formats/base/error.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit size_units[] = {
    {"B", 1},
    {"K", 1024ull},
    {"KiB", 1024ull},
    {"M", 1024ull * 1024},
    {"MiB", 1024ull * 1024},
    {"G", 1024ull * 1024 * 1024},
    {"GiB", 1024ull * 1024 * 1024},
    {"T", 1024ull * 1024 * 1024 * 1024},
    {"TiB", 1024ull * 1024 * 1024 * 1024},
};

static const struct unit duration_units[] = {
    {"ms", 1}, {"s", 1000}, {"m", 60ull * 1000}, {"h", 3600ull * 1000}, {"d", 24ull * 3600 * 1000},
};

/* Splits s into a decimal number and a unit; finds the unit in units (n of them). An empty
 * unit is accepted only when allow_bare. Overflow of the number or of the product is
 * FLOE_ELIMIT; everything else malformed is FLOE_EPARSE. */
static int parse_with_units(const char *s, size_t len, const struct unit *units, size_t n,
			    int allow_bare, uint64_t *out)
{
	size_t i = 0;
	uint64_t v = 0;
	int overflow = 0;

	if (len == 0 || s[0] < '0' || s[0] > '9')
		return FLOE_EPARSE;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (__builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(s[i] - '0'), &v))
			overflow = 1;
		i++;
	}
	if (i < len && s[i] == ' ')
		i++;
	const char *u = s + i;
	size_t ulen = len - i;
	uint64_t mult = 0;
	if (ulen == 0) {
		if (!allow_bare || u[-1] == ' ')
			return FLOE_EPARSE;
		mult = 1;
	} else {
		for (size_t k = 0; k < n; k++) {
			if (strlen(units[k].name) == ulen && memcmp(units[k].name, u, ulen) == 0) {
				mult = units[k].mult;
				break;
			}
		}
		if (mult == 0)
			return FLOE_EPARSE;
	}
	if (overflow || __builtin_mul_overflow(v, mult, &v))
		return FLOE_ELIMIT;
	*out = v;
	return 0;
}

int floe_units_parse_size(const char *s, size_t len, uint64_t *out)
{
	return parse_with_units(s, len, size_units, sizeof(size_units) / sizeof(size_units[0]), 1,
				out);
}

int floe_units_parse_duration_ms(const char *s, size_t len, uint64_t *out)
{
	return parse_with_units(s, len, duration_units,
				sizeof(duration_units) / sizeof(duration_units[0]), 0, out);
}

/* Picks the largest unit (units sorted ascending, aliases skipped by taking the last
 * entry of each multiple) that divides v; 0 takes the smallest. */
static char *format_with_units(uint64_t v, const struct unit *units, size_t n, char *buf)
{
	const struct unit *best = &units[0];
	for (size_t k = 0; k < n; k++)
		if (v != 0 && v % units[k].mult == 0)
			best = &units[k];
	snprintf(buf, FLOE_UNITS_FMT_MAX, "%" PRIu64 "%s", v / best->mult, best->name);
	return buf;
}

char *floe_units_format_size(uint64_t v, char *buf)
{
	return format_with_units(v, size_units, sizeof(size_units) / sizeof(size_units[0]), buf);
}

char *floe_units_format_duration_ms(uint64_t ms, char *buf)
{
	return format_with_units(ms, duration_units,
				 sizeof(duration_units) / sizeof(duration_units[0]), buf);
}
