/* Fuzz target: arbitrary lines through the syslog_file parser, at a fixed zone and at one
 * given as a function (zone: local; here +1 h, +2 h past the receive time, as a summer
 * time). On success every field is a slice inside the line and an app is there, and both
 * zones agree on whether the line parses; on failure the offset is inside the line and no
 * field is left. */
#include "agent/env/env.h"
#include "agent/parse/fields.h"
#include "agent/parse/syslog_file.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RECV (1796299200LL * 1000000) /* 2026-12-03T12:00:00Z */

static int32_t offset_at(void *ctx, int64_t utc_us)
{
	(void)ctx;
	return utc_us < RECV ? 3600 : 7200;
}

static int64_t to_utc(void *ctx, int64_t local_us, int64_t hint_us)
{
	(void)ctx;
	(void)hint_us;
	int64_t u = local_us - 3600LL * 1000000;
	return u < RECV ? u : local_us - 7200LL * 1000000;
}

static const struct floe_zone_fn zone = {to_utc, offset_at, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_fields *f;
	if (!f && floe_fields_new(NULL, 16, 0, &f))
		abort();
	const char *p = (const char *)data;
	floe_fields_reset(f);
	struct floe_err why = {0};
	int64_t ts = 0;
	struct floe_str pid = {0};
	int local = floe_syslog_file_parse(p, size, RECV, 0, 0, &zone, f, &ts, &pid, &why);
	floe_fields_reset(f);
	int rc = floe_syslog_file_parse(p, size, RECV, 0, 3600, NULL, f, &ts, &pid, &why);
	if ((local == 0) != (rc == 0))
		abort();
	if (rc == 0) {
		const char *app;
		size_t al;
		if (!floe_fields_find(f, "app", 3, &app, &al) || al == 0)
			abort();
		if (pid.p && (pid.p < p || pid.len > size || (size_t)(pid.p - p) > size - pid.len))
			abort();
		for (size_t i = 0; i < floe_fields_count(f); i++) {
			const char *v = floe_fields_vals(f)[i];
			size_t vl = floe_fields_val_lens(f)[i];
			if (v < p || vl > size || (size_t)(v - p) > size - vl)
				abort();
		}
	} else if (rc != FLOE_EPARSE || why.code != FLOE_EPARSE || why.offset > size ||
		   floe_fields_count(f) != 0) {
		abort();
	}
	return 0;
}
