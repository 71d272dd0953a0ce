/* Fuzz target: arbitrary lines through the syslog_file parser. On success every field is a
 * slice inside the line and an app is there; on failure the offset is inside the line and
 * no field is left. */
#include "agent/parse/fields.h"
#include "agent/parse/syslog_file.h"
#include "agent/schema/record.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	/* 2026-12-03T12:00:00Z as the receive time. */
	int rc = floe_syslog_file_parse(p, size, 1796299200LL * 1000000, 3600, f, &ts, &pid, &why);
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
