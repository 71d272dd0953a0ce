/* Fuzz target: floe_syslog_parse (and the 5424 and 3164 readers directly) on arbitrary
 * bytes, under three receive times and both hostname modes. Checks: only 0 or
 * FLOE_EPARSE; every slice inside the input; a failure keeps the input whole, with no
 * PRI and an untouched field collector; header fields within the RFC limits; PRI parts
 * in range; error offsets in range; the failure attributes can always be added. */
#include "agent/parse/fields.h"
#include "agent/parse/syslog.h"
#include "formats/base/error.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t sink;

static void in_input(struct floe_str s, const char *p, size_t n)
{
	if (!s.p || s.len == 0)
		return;
	if (s.p < p || s.len > n || s.p - p > (ptrdiff_t)(n - s.len))
		abort();
	uint8_t x = 0;
	for (size_t i = 0; i < s.len; i++)
		x ^= (uint8_t)s.p[i];
	sink = x;
}

static void check(int rc, const struct floe_syslog_msg *m, const char *p, size_t n,
		  struct floe_fields *f)
{
	if (!m->message.p)
		abort();
	in_input(m->host, p, n);
	in_input(m->app, p, n);
	in_input(m->proc_id, p, n);
	in_input(m->msg_id, p, n);
	in_input(m->message, p, n);
	if (rc == FLOE_EPARSE) {
		if (m->format != FLOE_SYSLOG_INVALID || !m->error || m->error_off > n ||
		    m->has_facility || m->has_severity || m->has_ts || m->host.p ||
		    m->message.len > n || (m->message.len && m->message.p != p) ||
		    floe_fields_count(f) != 0)
			abort();
	} else if (rc == 0) {
		if (m->error || m->format == FLOE_SYSLOG_INVALID)
			abort();
		if (m->has_facility && (m->facility < 0 || m->facility > 23))
			abort();
		if (m->has_severity && (m->severity < 0 || m->severity > 7))
			abort();
		if (m->ts_error && (m->has_ts || m->ts_error_off > n))
			abort();
		if (m->format == FLOE_SYSLOG_5424 && (m->host.len > 255 || m->app.len > 48 ||
						      m->proc_id.len > 128 || m->msg_id.len > 32))
			abort();
		if (m->format == FLOE_SYSLOG_PLAIN && (m->has_facility || m->app.p || m->host.p))
			abort();
	} else {
		abort();
	}
	for (size_t i = 0; i < floe_fields_count(f); i++) {
		const char *k = floe_fields_keys(f)[i], *v = floe_fields_vals(f)[i];
		size_t kl = floe_fields_key_lens(f)[i], vl = floe_fields_val_lens(f)[i];
		if (!v || kl == 0 || kl > 65 || vl > n)
			abort();
		uint8_t x = 0;
		for (size_t j = 0; j < kl; j++)
			x ^= (uint8_t)k[j];
		for (size_t j = 0; j < vl; j++)
			x ^= (uint8_t)v[j];
		sink = x;
	}
	int erc = floe_syslog_error_attrs(m, f);
	if (erc != 0 && erc != FLOE_ELIMIT)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct floe_fields *f;
	if (!f && floe_fields_new(NULL, 16, 512, &f) != 0)
		abort();
	/* An exact-size copy, so that a read past the end is caught by ASan. */
	char *p = malloc(size ? size : 1);
	if (!p)
		return 0;
	memcpy(p, data, size);
	static const int64_t recv[3] = {INT64_C(1704067199000000), 0, INT64_MIN};
	typedef int (*parse_fn)(const char *, size_t, const struct floe_syslog_opts *,
				struct floe_syslog_msg *, struct floe_fields *);
	static const parse_fn fns[3] = {floe_syslog_parse, floe_syslog_parse_5424,
					floe_syslog_parse_3164};
	for (int k = 0; k < 3; k++) {
		struct floe_syslog_opts o = {.received_us = recv[k],
					     .zone_off_s = k == 1 ? -36000 : 3600 * k,
					     .no_hostname = k == 2};
		struct floe_syslog_msg m;
		floe_fields_reset(f);
		int rc = fns[k](p, size, &o, &m, f);
		check(rc, &m, p, size, f);
	}
	free(p);
	return 0;
}
