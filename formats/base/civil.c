/* Civil time (see civil.h). The day-number conversions are Howard Hinnant's algorithms:
 * counting from 0000-03-01 puts the leap day last in its year, and 400-year eras of
 * 146097 days repeat exactly. */
#include "civil.h"

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

bool floe_civil_us(int64_t days, unsigned hour, unsigned minute, unsigned second, int64_t frac_us,
		   int64_t off_s, int64_t *us)
{
	/* We know no leap second table, so second 60 cannot be placed on the UTC time line
	 * exactly. The last µs of its minute is the closest instant that keeps the order of
	 * the events around it: after every event of second 59, before every event of the
	 * next minute, and the same whichever input the string came through. */
	if (second == 60) {
		second = 59;
		frac_us = 999999;
	}
	int64_t secs, v;
	if (__builtin_mul_overflow(days, 86400, &secs) ||
	    __builtin_add_overflow(secs, (int64_t)(hour * 3600 + minute * 60 + second) - off_s, &secs) ||
	    __builtin_mul_overflow(secs, INT64_C(1000000), &v) || __builtin_add_overflow(v, frac_us, &v))
		return false;
	*us = v;
	return true;
}
