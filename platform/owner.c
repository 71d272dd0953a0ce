/* Thread roles (owner.h): one thread-local word. No lock: each thread reads and writes
 * only its own. */
#include "owner.h"

#include "log.h"

#include <stdio.h>
#include <stdlib.h>

/* 0 until the thread takes a role: the process's own thread. */
static _Thread_local unsigned role;

unsigned floe_owner_role(void)
{
	return role ? role : FLOE_ROLE_MAIN;
}

unsigned floe_owner_enter(unsigned r)
{
	unsigned prev = role;
	role = r;
	return prev;
}

void floe_owner_leave(unsigned prev)
{
	role = prev;
}

/* The roles of a mask in words, for the message. */
static void names(unsigned roles, char *out, size_t cap)
{
	static const char *const name[] = {"main", "committer", "syslog receiver", "http",
					   "worker"};
	size_t len = 0;
	out[0] = '\0';
	for (unsigned i = 0; i < sizeof(name) / sizeof(name[0]); i++) {
		if (!(roles & (1u << i)))
			continue;
		int n = snprintf(out + len, cap - len, "%s%s", len ? " or " : "", name[i]);
		if (n < 0 || (size_t)n >= cap - len)
			return;
		len += (size_t)n;
	}
}

void floe_owner_fail(unsigned want, const char *file, int line, const char *func)
{
	char w[96], have[96];
	names(want, w, sizeof(w));
	names(floe_owner_role(), have, sizeof(have));
	floe_error("%s:%d: %s: belongs to the %s thread, called on the %s thread", file, line,
		   func, w, have);
	abort();
}
