/* Iceberg partition transforms: parsing their names, the time transforms (with floor
 * division, so instants before 1970 fall into the right partition), the murmur3 bucket
 * hash of spec Appendix B, partition path strings and UTF-8 bound truncation. */
#include "transform.h"

#include "formats/base/civil.h"
#include "formats/base/error.h"
#include "formats/base/utf8.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define US_PER_DAY INT64_C(86400000000)
#define US_PER_HOUR INT64_C(3600000000)

static int64_t floor_div(int64_t a, int64_t b)
{
	int64_t q = a / b;
	if ((a % b != 0) && ((a < 0) != (b < 0)))
		q--;
	return q;
}

static bool parse_param(const char *s, size_t len, const char *prefix, int32_t *out)
{
	size_t pl = strlen(prefix);
	if (len < pl + 2 || memcmp(s, prefix, pl) != 0 || s[pl] != '[' || s[len - 1] != ']')
		return false;
	int64_t v = 0;
	size_t i = pl + 1;
	if (i == len - 1)
		return false;
	for (; i < len - 1; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
		if (v > INT32_MAX)
			return false;
	}
	if (v <= 0)
		return false;
	*out = (int32_t)v;
	return true;
}

int floe_ice_transform_parse(const char *s, size_t len, struct floe_ice_transform *out)
{
	static const struct {
		const char *name;
		enum floe_ice_transform_kind kind;
	} plain[] = {
		{"identity", FLOE_ICE_IDENTITY}, {"year", FLOE_ICE_YEAR}, {"month", FLOE_ICE_MONTH},
		{"day", FLOE_ICE_DAY},           {"hour", FLOE_ICE_HOUR}, {"void", FLOE_ICE_VOID},
	};
	if (!s || !out)
		return FLOE_EINVAL;
	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		if (strlen(plain[i].name) == len && memcmp(plain[i].name, s, len) == 0) {
			out->kind = plain[i].kind;
			out->param = 0;
			return 0;
		}
	}
	int32_t p;
	if (parse_param(s, len, "bucket", &p)) {
		out->kind = FLOE_ICE_BUCKET;
		out->param = p;
		return 0;
	}
	if (parse_param(s, len, "truncate", &p)) {
		out->kind = FLOE_ICE_TRUNCATE;
		out->param = p;
		return 0;
	}
	return FLOE_EPARSE;
}

int floe_ice_transform_name(const struct floe_ice_transform *t, char *out, size_t cap)
{
	int n;
	switch (t->kind) {
	case FLOE_ICE_IDENTITY: n = snprintf(out, cap, "identity"); break;
	case FLOE_ICE_YEAR: n = snprintf(out, cap, "year"); break;
	case FLOE_ICE_MONTH: n = snprintf(out, cap, "month"); break;
	case FLOE_ICE_DAY: n = snprintf(out, cap, "day"); break;
	case FLOE_ICE_HOUR: n = snprintf(out, cap, "hour"); break;
	case FLOE_ICE_BUCKET: n = snprintf(out, cap, "bucket[%d]", (int)t->param); break;
	case FLOE_ICE_TRUNCATE: n = snprintf(out, cap, "truncate[%d]", (int)t->param); break;
	case FLOE_ICE_VOID: n = snprintf(out, cap, "void"); break;
	default: return FLOE_EINVAL;
	}
	if (n < 0 || (size_t)n >= cap)
		return FLOE_ELIMIT;
	return 0;
}

int32_t floe_ice_day_from_us(int64_t us) { return (int32_t)floor_div(us, US_PER_DAY); }

int32_t floe_ice_hour_from_us(int64_t us) { return (int32_t)floor_div(us, US_PER_HOUR); }

int32_t floe_ice_year_from_us(int64_t us)
{
	int64_t y;
	unsigned m, d;
	floe_civil_from_days(floor_div(us, US_PER_DAY), &y, &m, &d);
	return (int32_t)(y - 1970);
}

int32_t floe_ice_month_from_us(int64_t us)
{
	int64_t y;
	unsigned m, d;
	floe_civil_from_days(floor_div(us, US_PER_DAY), &y, &m, &d);
	return (int32_t)((y - 1970) * 12 + (m - 1));
}

static uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

uint32_t floe_ice_murmur3_32(const void *data, size_t len, uint32_t seed)
{
	const uint8_t *p = data;
	const uint32_t c1 = 0xcc9e2d51u, c2 = 0x1b873593u;
	uint32_t h = seed;
	size_t nblocks = len / 4;
	for (size_t i = 0; i < nblocks; i++) {
		uint32_t k = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 |
			     (uint32_t)p[4 * i + 2] << 16 | (uint32_t)p[4 * i + 3] << 24;
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
		h = rotl32(h, 13);
		h = h * 5 + 0xe6546b64u;
	}
	const uint8_t *tail = p + nblocks * 4;
	uint32_t k = 0;
	switch (len & 3) {
	case 3: k ^= (uint32_t)tail[2] << 16; /* fall through */
	case 2: k ^= (uint32_t)tail[1] << 8; /* fall through */
	case 1:
		k ^= tail[0];
		k *= c1;
		k = rotl32(k, 15);
		k *= c2;
		h ^= k;
	}
	h ^= (uint32_t)len;
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

int32_t floe_ice_bucket_bytes(const void *p, size_t len, int32_t n)
{
	/* A bucket count must be positive; 0 keeps a bad spec from dividing by zero. */
	if (n <= 0)
		return 0;
	uint32_t h = floe_ice_murmur3_32(p, len, 0);
	return (int32_t)((h & 0x7fffffffu) % (uint32_t)n);
}

int32_t floe_ice_bucket_long(int64_t v, int32_t n)
{
	uint8_t b[8];
	uint64_t u = (uint64_t)v;
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(u >> (8 * i));
	return floe_ice_bucket_bytes(b, sizeof(b), n);
}

static int put_year(char *out, size_t cap, int64_t y, int *n)
{
	/* Java's ISO formatter writes 4 digits, a sign past 9999, and a minus before 0. */
	if (y > 9999)
		*n = snprintf(out, cap, "+%lld", (long long)y);
	else if (y < 0)
		*n = snprintf(out, cap, "-%04lld", -(long long)y);
	else
		*n = snprintf(out, cap, "%04lld", (long long)y);
	return (*n < 0 || (size_t)*n >= cap) ? FLOE_ELIMIT : 0;
}

int floe_ice_human_day(int32_t day, char *out, size_t cap)
{
	int64_t y;
	unsigned m, d;
	int n;
	floe_civil_from_days(day, &y, &m, &d);
	int rc = put_year(out, cap, y, &n);
	if (rc)
		return rc;
	int k = snprintf(out + n, cap - (size_t)n, "-%02u-%02u", m, d);
	return (k < 0 || (size_t)k >= cap - (size_t)n) ? FLOE_ELIMIT : 0;
}

/* The day's date, then the hour. */
int floe_ice_human_hour(int32_t hour, char *out, size_t cap)
{
	int64_t day = floor_div(hour, 24);
	int h = (int)(hour - day * 24);
	int rc = floe_ice_human_day((int32_t)day, out, cap);
	if (rc)
		return rc;
	size_t n = strlen(out);
	int k = snprintf(out + n, cap - n, "-%02d", h);
	return (k < 0 || (size_t)k >= cap - n) ? FLOE_ELIMIT : 0;
}

int floe_ice_human_month(int32_t month, char *out, size_t cap)
{
	int64_t years = floor_div(month, 12);
	int m = (int)(month - years * 12) + 1, n;
	int rc = put_year(out, cap, 1970 + years, &n);
	if (rc)
		return rc;
	int k = snprintf(out + n, cap - (size_t)n, "-%02d", m);
	return (k < 0 || (size_t)k >= cap - (size_t)n) ? FLOE_ELIMIT : 0;
}

int floe_ice_human_year(int32_t year, char *out, size_t cap)
{
	int n;
	return put_year(out, cap, 1970 + (int64_t)year, &n);
}

/* A code point starts at every byte that is not a continuation byte (10xxxxxx). */
size_t floe_ice_truncate_lower(const char *s, size_t len, size_t n)
{
	size_t cps = 0;
	for (size_t i = 0; i < len; i++) {
		if (((uint8_t)s[i] & 0xc0) != 0x80) {
			if (cps == n)
				return i;
			cps++;
		}
	}
	return len;
}

/* As Java's UnicodeUtil.truncateStringMax: keep n code points, then increment the last
 * one that can be incremented (dropping the ones after it). Invalid UTF-8 gives no bound,
 * since a made-up code point could sort below the real bytes. */
size_t floe_ice_truncate_upper(const char *s, size_t len, size_t n, char *out, size_t cap)
{
	const uint8_t *u = (const uint8_t *)s;
	size_t cut = floe_ice_truncate_lower(s, len, n);
	if (cut == len || n == 0)
		return 0;
	size_t starts[4 * 64];
	uint32_t cps[4 * 64];
	size_t count = 0;
	/* Bound the work per call; Iceberg's default truncation is 16 code points. */
	if (n > sizeof(starts) / sizeof(starts[0]))
		return 0;
	for (size_t i = 0; i < cut;) {
		uint32_t cp;
		size_t k = floe_utf8_get(u + i, len - i, &cp);
		if (k == 0 || i + k > cut)
			return 0;
		starts[count] = i;
		cps[count] = cp;
		count++;
		i += k;
	}
	for (size_t j = count; j-- > 0;) {
		uint32_t next = cps[j] + 1;
		if (next >= 0xd800 && next <= 0xdfff)
			next = 0xe000;
		if (next > 0x10ffff)
			continue;
		uint8_t enc[4];
		size_t el = floe_utf8_put(enc, next);
		if (starts[j] + el > cap)
			return 0;
		memcpy(out, s, starts[j]);
		memcpy(out + starts[j], enc, el);
		return starts[j] + el;
	}
	return 0;
}
