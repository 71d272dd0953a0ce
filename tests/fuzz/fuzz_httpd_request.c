/* Fuzz target for the status pages' request reader (platform/httpd.c): any bytes, fed
 * in chunks whose sizes come from the first byte. The reader never takes more than
 * FLOE_HTTPD_REQUEST_MAX bytes, answers only 0, 1, 400, 414 or 431, stops taking bytes once
 * it answered, and a complete request's line is a NUL-terminated string shorter than
 * FLOE_HTTPD_LINE_MAX whose target, when it parses, is a path of it without query. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "platform/httpd.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t chunk = (size_t)data[0] % 17 + 1;
	const char *p = (const char *)data + 1;
	size_t n = size - 1, off = 0;
	struct floe_httpd_req q;
	memset(&q, 0, sizeof(q));
	int rc = 0;
	while (off < n && rc == 0) {
		size_t len = n - off < chunk ? n - off : chunk, used = 0;
		rc = floe_httpd_req_feed(&q, p + off, len, &used);
		if (used > len || (rc == 0 && used != len) || used == 0)
			__builtin_trap();
		off += used;
	}
	if ((rc != 0 && rc != 1 && rc != 400 && rc != 414 && rc != 431) ||
	    q.total > FLOE_HTTPD_REQUEST_MAX + 1)
		__builtin_trap();
	if (rc != 1)
		return 0;
	size_t len = strnlen(q.line, sizeof(q.line));
	if (!q.line_done || len >= sizeof(q.line) || len != q.line_len)
		__builtin_trap();
	char target[FLOE_HTTPD_LINE_MAX];
	bool head = false;
	int t = floe_httpd_req_target(&q, &head, target, sizeof(target));
	if (t != 0 && t != 400 && t != 405)
		__builtin_trap();
	if (t == 0 && (target[0] != '/' || strpbrk(target, "?# ") || !strstr(q.line, target)))
		__builtin_trap();
	return 0;
}
