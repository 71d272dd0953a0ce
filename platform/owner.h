/* Which thread is running: each thread takes a role when it starts, and a function that
 * touches one thread's state says whose it is with FLOE_OWNER at its entry, the way
 * SQLite asserts its pager's state. Debug builds check it and abort on the wrong thread,
 * naming both; release builds (NDEBUG) compile the checks out. agent/README.md ("Threads")
 * lists which state belongs to which role. */
#ifndef FLOE_OWNER_H
#define FLOE_OWNER_H

/* Roles are bits, so that a function several threads may call names them all. */
enum floe_role {
	FLOE_ROLE_MAIN = 1u << 0,      /* the runner's loop: inputs, batch, seal, checkpoint */
	FLOE_ROLE_COMMITTER = 1u << 1, /* uploads and commits, one lease at a time */
	FLOE_ROLE_SYSLOG_RX = 1u << 2, /* the syslog receiver: sockets, framers, queue tail */
	FLOE_ROLE_HTTPD = 1u << 3,     /* the status listener's thread */
	FLOE_ROLE_WORKER = 1u << 4,    /* a worker pool's thread, running a plain task */
};
#define FLOE_ROLE_ANY 0x1fu

/* This thread's role. A thread that never took one is the process's own (the main
 * thread, or a test's): every thread floe starts takes its role first thing. */
unsigned floe_owner_role(void);
/* Makes role this thread's role and returns the one it had, for floe_owner_leave: a
 * worker thread taking on a long task (the committer, the receiver), or the main thread
 * taking over a stopped thread's state (role | FLOE_ROLE_MAIN). */
unsigned floe_owner_enter(unsigned role);
void floe_owner_leave(unsigned prev);
/* Logs where the wrong thread came in, and aborts. */
void floe_owner_fail(unsigned want, const char *file, int line, const char *func)
    __attribute__((noreturn));

#ifdef NDEBUG
#define FLOE_OWNER(roles) ((void)0)
#else
#define FLOE_OWNER(roles)                                                                  \
	((floe_owner_role() & (unsigned)(roles))                                            \
	     ? (void)0                                                                      \
	     : floe_owner_fail((unsigned)(roles), __FILE__, __LINE__, __func__))
#endif

#endif
