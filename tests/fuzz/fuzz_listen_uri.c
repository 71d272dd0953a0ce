/* Fuzz target for the listen URI parser (platform/listen_uri.c): any bytes. A refusal has an
 * offset within the input and a message; an accepted URI keeps the parser's promises and
 * survives formatting and parsing again unchanged. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "platform/listen.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct floe_listen_uri u, v;
	struct floe_listen_uri_error e = {0};
	if (floe_listen_uri_parse((const char *)data, size, &u, &e) != 0) {
		if (!e.msg || !*e.msg || e.off > size)
			__builtin_trap();
		return 0;
	}
	bool is_unix = u.transport == FLOE_LISTEN_UNIX || u.transport == FLOE_LISTEN_UNIX_STREAM;
	if (is_unix) {
		size_t n = strnlen(u.path, sizeof(u.path));
		if (n == 0 || n > FLOE_LISTEN_PATH_MAX || u.path[0] != '/' ||
		    u.path[n - 1] == '/' || u.host[0])
			__builtin_trap();
	} else if (!u.host[0] || strnlen(u.host, sizeof(u.host)) > FLOE_LISTEN_HOST_MAX ||
		   u.path[0]) {
		__builtin_trap();
	}
	char out[FLOE_LISTEN_URI_MAX];
	int n = floe_listen_uri_format(&u, u.port, out, sizeof(out));
	if (n < 0)
		__builtin_trap();
	if (floe_listen_uri_parse(out, (size_t)n, &v, &e) != 0 || memcmp(&u, &v, sizeof(u)) != 0)
		__builtin_trap();
	return 0;
}
