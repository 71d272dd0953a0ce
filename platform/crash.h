/* Crash points for recovery tests: when the environment variable FLOE_CRASH_AT names a
 * point the process reaches, it dies there at once (_exit(99), no cleanup), as a power
 * cut or kill -9 would stop it. Unset, a crash point costs one getenv(). */
#ifndef FLOE_CRASH_H
#define FLOE_CRASH_H

void floe_crashpoint(const char *name);

#endif
