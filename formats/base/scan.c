/* Text scanning steps (see scan.h): the digits, bytes and fractions that the timestamp
 * parsers of every layer read with one set of rules. */
#include "scan.h"

static bool isdig(char c)
{
	return c >= '0' && c <= '9';
}

bool floe_scan_digits(const char *s, size_t n, size_t *i, int min, int max, int *out)
{
	int v = 0, k = 0;
	while (k < max && *i < n && isdig(s[*i])) {
		v = v * 10 + (s[*i] - '0');
		(*i)++;
		k++;
	}
	*out = v;
	return k >= min;
}

bool floe_scan_char(const char *s, size_t n, size_t *i, char c)
{
	if (*i < n && s[*i] == c) {
		(*i)++;
		return true;
	}
	return false;
}

bool floe_scan_fraction(const char *s, size_t n, size_t *i, size_t max, int64_t *us)
{
	int64_t v = 0;
	size_t k = 0;
	while (*i < n && isdig(s[*i])) {
		if (max && k == max)
			return false;
		if (k < 6)
			v = v * 10 + (s[*i] - '0');
		k++;
		(*i)++;
	}
	for (size_t r = k; r < 6; r++)
		v *= 10;
	*us = v;
	return k > 0;
}
