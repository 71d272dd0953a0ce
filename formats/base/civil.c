/* Civil time (see civil.h). The day-number conversions are Howard Hinnant's algorithms:
 * counting from 0000-03-01 puts the leap day last in its year, and 400-year eras of
 * 146097 days repeat exactly. */
#include "civil.h"

#include "error.h"

int64_t floe_civil_to_days(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t mp = m > 2 ? (int64_t)m - 3 : (int64_t)m + 9;
	int64_t doy = (153 * mp + 2) / 5 + (int64_t)d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

void floe_civil_from_days(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
	int64_t z = days + 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	int64_t doe = z - era * 146097;
	int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	int64_t mp = (5 * doy + 2) / 153;
	*d = (unsigned)(doy - (153 * mp + 2) / 5 + 1);
	*m = (unsigned)(mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

bool floe_civil_is_leap(int64_t y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

unsigned floe_civil_days_in_month(int64_t y, unsigned m)
{
	static const unsigned char dm[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	return m == 2 && floe_civil_is_leap(y) ? 29 : dm[m - 1];
}

void floe_civil_from_unix(int64_t t, struct floe_civil_time *c)
{
	int64_t days = t / 86400 - (t % 86400 < 0);
	int64_t secs = t - days * 86400;
	floe_civil_from_days(days, &c->year, &c->month, &c->day);
	c->hour = (unsigned)(secs / 3600);
	c->minute = (unsigned)(secs / 60 % 60);
	c->second = (unsigned)(secs % 60);
}

/* w digits at p[at..] into *out; false when they are not all there. */
static bool digits(const char *p, size_t n, size_t at, int w, unsigned *out)
{
	if (at > n || (size_t)w > n - at)
		return false;
	unsigned v = 0;
	for (int k = 0; k < w; k++) {
		char ch = p[at + (size_t)k];
		if (ch < '0' || ch > '9')
			return false;
		v = v * 10 + (unsigned)(ch - '0');
	}
	*out = v;
	return true;
}

/* The zone at p[*i..]: "Z", "z", "+HH:MM" or "-HH:MM", as seconds east of UTC. */
static bool zone(const char *p, size_t n, size_t *i, int64_t *off)
{
	if (*i < n && (p[*i] == 'Z' || p[*i] == 'z')) {
		*off = 0;
		(*i)++;
		return true;
	}
	unsigned oh, om;
	if (*i >= n || (p[*i] != '+' && p[*i] != '-') || !digits(p, n, *i + 1, 2, &oh) ||
	    *i + 3 >= n || p[*i + 3] != ':' || !digits(p, n, *i + 4, 2, &om) || oh > 23 || om > 59)
		return false;
	*off = (int64_t)(oh * 3600 + om * 60) * (p[*i] == '-' ? -1 : 1);
	*i += 6;
	return true;
}

int floe_civil_parse_rfc3339(const char *p, size_t n, int64_t *unix_s)
{
	unsigned y, mo, d, hh, mi, ss;
	if (!p || n < 20 || !digits(p, n, 0, 4, &y) || p[4] != '-' || !digits(p, n, 5, 2, &mo) ||
	    p[7] != '-' || !digits(p, n, 8, 2, &d) ||
	    (p[10] != 'T' && p[10] != 't' && p[10] != ' ') || !digits(p, n, 11, 2, &hh) ||
	    p[13] != ':' || !digits(p, n, 14, 2, &mi) || p[16] != ':' || !digits(p, n, 17, 2, &ss))
		return FLOE_EPARSE;
	if (mo < 1 || mo > 12 || d < 1 || d > floe_civil_days_in_month(y, mo) || hh > 23 ||
	    mi > 59 || ss > 60)
		return FLOE_EPARSE;
	size_t i = 19;
	if (i < n && p[i] == '.') {
		size_t start = ++i;
		while (i < n && p[i] >= '0' && p[i] <= '9')
			i++;
		if (i == start)
			return FLOE_EPARSE;
	}
	int64_t off;
	if (!zone(p, n, &i, &off) || i != n)
		return FLOE_EPARSE;
	*unix_s = floe_civil_to_days(y, mo, d) * 86400 + hh * 3600 + mi * 60 + ss - off;
	return 0;
}
