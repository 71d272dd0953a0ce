/* Civil time: the proleptic Gregorian calendar on day numbers (days since 1970-01-01,
 * any year an int64_t holds), broken-down UTC time of unix seconds, and the µs of a date
 * and time with floe's one leap-second rule (RFC 3339 text: rfc3339.h). Pure arithmetic: no clock, no time zone database, no locale; the one implementation
 * that log timestamps, Iceberg's partition transforms, SigV4 and credential expiries
 * share. */
#ifndef FLOE_BASE_CIVIL_H
#define FLOE_BASE_CIVIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The day number of a date: month 1-12, day 1-31 (not validated; day 0 or 32 count on
 * from the month's start, which callers that validate never pass). */
int64_t floe_civil_to_days(int64_t year, unsigned month, unsigned day);
/* The date of a day number. */
void floe_civil_from_days(int64_t days, int64_t *year, unsigned *month, unsigned *day);
bool floe_civil_is_leap(int64_t year);
/* 28 to 31; month 1-12. */
unsigned floe_civil_days_in_month(int64_t year, unsigned month);

/* A UTC time broken down. */
struct floe_civil_time {
	int64_t year;
	unsigned month, day;	      /* 1-12, 1-31 */
	unsigned hour, minute, second; /* 0-23, 0-59, 0-59 */
};
/* The UTC time of unix seconds (floor: -1 is 1969-12-31 23:59:59). */
void floe_civil_from_unix(int64_t unix_s, struct floe_civil_time *t);

/* µs since the epoch of day number days at hour:minute:second.frac_us (hour 0-23, minute
 * 0-59, second 0-60, frac_us 0-999999) at off_s seconds east of UTC; false when the
 * result leaves int64. The one leap-second rule of floe: second 60 is the last µs of its
 * minute (hh:mm:59.999999), whatever its fraction. */
bool floe_civil_us(int64_t days, unsigned hour, unsigned minute, unsigned second, int64_t frac_us,
		   int64_t off_s, int64_t *us);

#endif
