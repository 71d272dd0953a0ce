/* The progress line: see progress.h. */
#include "progress.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>

/* bytes in the largest binary unit under 1024 of it, one decimal ("512 B", "1.5 MiB"). */
static void size_text(char *out, size_t cap, double bytes)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	size_t u = 0;
	while (bytes >= 1024 && u + 1 < sizeof(unit) / sizeof(unit[0])) {
		bytes /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(out, cap, "%.0f B", bytes);
	else
		snprintf(out, cap, "%.1f %s", bytes, unit[u]);
}

/* n as it is under 10,000, then in thousands, then in millions ("9999", "12.3 k",
 * "4.5 M"). */
static void count_text(char *out, size_t cap, uint64_t n)
{
	if (n < 10000)
		snprintf(out, cap, "%" PRIu64, n);
	else if (n < 1000000)
		snprintf(out, cap, "%.1f k", (double)n / 1e3);
	else
		snprintf(out, cap, "%.1f M", (double)n / 1e6);
}

void floe_progress_format(char *buf, size_t cap, uint64_t done, uint64_t total, uint64_t lines,
			  int64_t elapsed_us)
{
	if (cap == 0)
		return;
	char d[32], t[32], l[32], r[32], left[32] = "";
	size_text(d, sizeof(d), (double)done);
	size_text(t, sizeof(t), (double)total);
	count_text(l, sizeof(l), lines);
	bool known = total > 0 && total >= done;
	int n = known ? snprintf(buf, cap, "progress: %s of %s (%u%%), %s lines", d, t,
				 (unsigned)((double)done * 100 / (double)total), l)
		      : snprintf(buf, cap, "progress: %s, %s lines", d, l);
	double rate = elapsed_us > 0 ? (double)done * 1e6 / (double)elapsed_us : 0;
	if (n < 0 || (size_t)n >= cap || rate <= 0)
		return;
	size_text(r, sizeof(r), rate);
	if (known && total > done) {
		/* Rounded up: a run with bytes left never says 0:00. */
		uint64_t s = (uint64_t)((double)(total - done) / rate) + 1;
		if (s >= 3600)
			snprintf(left, sizeof(left), ", %" PRIu64 ":%02u:%02u left", s / 3600,
				 (unsigned)(s / 60 % 60), (unsigned)(s % 60));
		else
			snprintf(left, sizeof(left), ", %u:%02u left", (unsigned)(s / 60),
				 (unsigned)(s % 60));
	}
	snprintf(buf + n, cap - (size_t)n, ", %s/s%s", r, left);
}
