/* Listen URIs: a pure parser and formatter over (ptr, len), and peer address formatting.
 * No I/O and no name resolution here (inet_pton only checks a literal's shape), so that
 * the parser can be unit-tested and fuzzed on any bytes. */
#include "listen.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/un.h>

_Static_assert(FLOE_LISTEN_PATH_MAX + 1 <= sizeof(((struct sockaddr_un *)0)->sun_path),
	       "a unix path must fit sun_path");

static const struct {
	const char *name;
	enum floe_listen_transport t;
} schemes[] = {
    /* Longer names first: "unix" is a prefix of "unix+stream". */
    {"unix+stream", FLOE_LISTEN_UNIX_STREAM},
    {"unix", FLOE_LISTEN_UNIX},
    {"udp", FLOE_LISTEN_UDP},
    {"tcp", FLOE_LISTEN_TCP},
    {"tls", FLOE_LISTEN_TLS},
};

const char *floe_listen_scheme(enum floe_listen_transport t)
{
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (schemes[i].t == t)
			return schemes[i].name;
	return "?";
}

bool floe_listen_is_stream(enum floe_listen_transport t)
{
	return t == FLOE_LISTEN_TCP || t == FLOE_LISTEN_TLS || t == FLOE_LISTEN_UNIX_STREAM;
}

static int fail(struct floe_listen_uri_error *e, size_t off, const char *msg)
{
	if (e) {
		e->off = off;
		e->msg = msg;
	}
	return -EINVAL;
}

static char lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* Matches the scheme and "://" at the start of s; returns the offset after them, or 0. */
static size_t match_scheme(const char *s, size_t len, enum floe_listen_transport *t)
{
	for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
		size_t n = strlen(schemes[i].name), k = 0;
		if (len < n + 3)
			continue;
		while (k < n && lower(s[k]) == schemes[i].name[k])
			k++;
		if (k == n && memcmp(s + n, "://", 3) == 0) {
			*t = schemes[i].t;
			return n + 3;
		}
	}
	return 0;
}

static int parse_path(const char *s, size_t len, size_t at, struct floe_listen_uri *u,
		      struct floe_listen_uri_error *e)
{
	if (at == len)
		return fail(e, at, "missing socket path (unix:///absolute/path)");
	if (s[at] != '/')
		return fail(e, at,
			    "a unix socket URI has no host: unix:///absolute/path (three slashes)");
	size_t n = len - at;
	if (n > FLOE_LISTEN_PATH_MAX)
		return fail(e, at + FLOE_LISTEN_PATH_MAX, "socket path longer than 107 bytes");
	for (size_t i = at; i < len; i++) {
		if (s[i] == '\0')
			return fail(e, i, "NUL byte in the socket path");
		if (s[i] == '?' || s[i] == '#')
			return fail(e, i, "a query or fragment is not allowed in a listen URI");
	}
	if (s[len - 1] == '/')
		return fail(e, len - 1, "the socket path names a directory");
	memcpy(u->path, s + at, n);
	u->path[n] = '\0';
	return 0;
}

/* An IPv6 literal at s[at] (just after '['): up to ']'. */
static int parse_v6(const char *s, size_t len, size_t at, struct floe_listen_uri *u, size_t *end,
		    struct floe_listen_uri_error *e)
{
	size_t close = at;
	while (close < len && s[close] != ']')
		close++;
	if (close == len)
		return fail(e, at - 1, "unclosed '[' in the host");
	/* The address proper, then an optional zone after '%' (or "%25", RFC 6874). */
	size_t pct = at;
	while (pct < close && s[pct] != '%')
		pct++;
	char addr[INET6_ADDRSTRLEN + 1];
	unsigned char bin[16];
	if (pct - at == 0 || pct - at >= sizeof(addr))
		return fail(e, at, "not an IPv6 address");
	/* inet_pton would stop at a NUL and take what is before it. */
	for (size_t i = at; i < pct; i++) {
		char c = s[i];
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F') ||
		      c == ':' || c == '.'))
			return fail(e, i, "bad character in the IPv6 address");
	}
	memcpy(addr, s + at, pct - at);
	addr[pct - at] = '\0';
	if (inet_pton(AF_INET6, addr, bin) != 1)
		return fail(e, at, "not an IPv6 address");
	size_t zone = pct + 1;
	if (pct < close && close - zone >= 2 && memcmp(s + zone, "25", 2) == 0 && close - zone > 2)
		zone += 2;
	if (pct < close) {
		if (zone == close)
			return fail(e, pct, "empty IPv6 zone after '%'");
		for (size_t i = zone; i < close; i++) {
			char c = s[i];
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			      (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-'))
				return fail(e, i, "bad character in the IPv6 zone");
		}
	}
	size_t alen = pct - at, zlen = pct < close ? close - zone : 0;
	if (alen + 1 + zlen > FLOE_LISTEN_HOST_MAX)
		return fail(e, zone, "IPv6 zone too long");
	memcpy(u->host, s + at, alen);
	if (zlen) {
		u->host[alen] = '%';
		memcpy(u->host + alen + 1, s + zone, zlen);
		alen += 1 + zlen;
	}
	u->host[alen] = '\0';
	u->host_v6 = true;
	*end = close + 1;
	return 0;
}

/* A host name or IPv4 literal at s[at..stop). */
static int parse_name(const char *s, size_t at, size_t stop, struct floe_listen_uri *u,
		      struct floe_listen_uri_error *e)
{
	size_t n = stop - at, label = 0;
	bool digits_only = true;
	if (n == 0)
		return fail(e, at, "missing host (0.0.0.0 or [::] listen on every address)");
	if (n > FLOE_LISTEN_HOST_MAX)
		return fail(e, at + FLOE_LISTEN_HOST_MAX, "host name longer than 253 bytes");
	for (size_t i = at; i < stop; i++) {
		char c = s[i];
		if (c == '.') {
			if (label == 0)
				return fail(e, i, "empty label in the host name");
			label = 0;
			continue;
		}
		if (c == '@')
			return fail(e, i, "user information is not allowed in a listen URI");
		if (c == '[' || c == ']')
			return fail(e, i, "an IPv6 address must be the whole host, in brackets");
		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return fail(e, i, "bad character in the host name");
		if (!(c >= '0' && c <= '9'))
			digits_only = false;
		if (++label > 63)
			return fail(e, i, "host name label longer than 63 bytes");
	}
	if (label == 0)
		return fail(e, stop - 1, "empty label in the host name");
	memcpy(u->host, s + at, n);
	u->host[n] = '\0';
	/* All digits and dots is meant as an IPv4 address: 999.1.2.3 or 10.1 is an error,
	 * not a name to look up. */
	unsigned char bin[4];
	if (digits_only && inet_pton(AF_INET, u->host, bin) != 1)
		return fail(e, at, "not an IPv4 address");
	return 0;
}

static int parse_port(const char *s, size_t len, size_t at, struct floe_listen_uri *u,
		      struct floe_listen_uri_error *e)
{
	if (at == len)
		return fail(e, at, "missing port after ':'");
	unsigned v = 0;
	size_t i = at;
	while (i < len && s[i] >= '0' && s[i] <= '9') {
		if (i > at && s[at] == '0')
			return fail(e, at, "port with a leading zero");
		v = v * 10 + (unsigned)(s[i] - '0');
		if (v > 65535)
			return fail(e, at, "port above 65535");
		i++;
	}
	if (i == at)
		return fail(e, at, "port is not a number");
	if (i < len) {
		if (s[i] == '/')
			return fail(e, i, "nothing may follow the port (no path)");
		return fail(e, i, "unexpected character after the port");
	}
	u->port = (uint16_t)v;
	return 0;
}

static int parse_inet(const char *s, size_t len, size_t at, struct floe_listen_uri *u,
		      struct floe_listen_uri_error *e)
{
	size_t end;
	int rc;
	if (at < len && s[at] == '[') {
		if ((rc = parse_v6(s, len, at + 1, u, &end, e)))
			return rc;
	} else {
		end = at;
		while (end < len && s[end] != ':' && s[end] != '/' && s[end] != '?' &&
		       s[end] != '#')
			end++;
		if ((rc = parse_name(s, at, end, u, e)))
			return rc;
	}
	if (end == len)
		return fail(e, end, "missing port (HOST:PORT)");
	if (s[end] != ':')
		return fail(e, end, "expected ':' and a port after the host");
	return parse_port(s, len, end + 1, u, e);
}

int floe_listen_uri_parse(const char *s, size_t len, struct floe_listen_uri *u,
			  struct floe_listen_uri_error *e)
{
	memset(u, 0, sizeof(*u));
	size_t at = match_scheme(s, len, &u->transport);
	if (at == 0) {
		size_t k = 0;
		while (k < len && s[k] != ':')
			k++;
		if (k < len && (len - k < 3 || memcmp(s + k, "://", 3) != 0))
			return fail(e, k, "expected \"://\" after the scheme");
		return fail(e, 0, "unknown scheme (udp, tcp, tls, unix or unix+stream)");
	}
	if (u->transport == FLOE_LISTEN_UNIX || u->transport == FLOE_LISTEN_UNIX_STREAM)
		return parse_path(s, len, at, u, e);
	return parse_inet(s, len, at, u, e);
}

int floe_listen_uri_format(const struct floe_listen_uri *u, uint16_t port, char *out, size_t cap)
{
	int n;
	if (u->transport == FLOE_LISTEN_UNIX || u->transport == FLOE_LISTEN_UNIX_STREAM)
		n = snprintf(out, cap, "%s://%s", floe_listen_scheme(u->transport), u->path);
	else if (u->host_v6) {
		/* A zone is written "%25" as RFC 6874 says, which the parser reads back. */
		const char *pct = strchr(u->host, '%');
		int alen = pct ? (int)(pct - u->host) : (int)strlen(u->host);
		n = snprintf(out, cap, "%s://[%.*s%s%s]:%u", floe_listen_scheme(u->transport), alen,
			     u->host, pct ? "%25" : "", pct ? pct + 1 : "", (unsigned)port);
	} else
		n = snprintf(out, cap, "%s://%s:%u", floe_listen_scheme(u->transport), u->host,
			     (unsigned)port);
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}

int floe_sockaddr_format(const union floe_sockaddr *a, bool with_port, char *out, size_t cap)
{
	char host[INET6_ADDRSTRLEN];
	int n;
	unsigned port = 0;
	if (a->sa.sa_family == AF_INET) {
		inet_ntop(AF_INET, &a->in.sin_addr, host, sizeof(host));
		port = ntohs(a->in.sin_port);
		n = with_port ? snprintf(out, cap, "%s:%u", host, port)
			      : snprintf(out, cap, "%s", host);
	} else if (a->sa.sa_family == AF_INET6) {
		inet_ntop(AF_INET6, &a->in6.sin6_addr, host, sizeof(host));
		port = ntohs(a->in6.sin6_port);
		n = with_port ? snprintf(out, cap, "[%s]:%u", host, port)
			      : snprintf(out, cap, "%s", host);
	} else {
		n = snprintf(out, cap, "%s", a->sa.sa_family == AF_UNIX ? "unix" : "unknown");
	}
	if (n < 0 || (size_t)n >= cap)
		return -ENOSPC;
	return n;
}
