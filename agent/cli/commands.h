/* The floe subcommands. Each returns the process exit code: 0 success, 1 runtime
 * failure, 2 usage or configuration error, 3 state_dir in use by another process. */
#ifndef FLOE_COMMANDS_H
#define FLOE_COMMANDS_H

enum { FLOE_EXIT_OK = 0, FLOE_EXIT_RUNTIME = 1, FLOE_EXIT_USAGE = 2, FLOE_EXIT_LOCKED = 3 };

struct floe_config;
#include <stdbool.h>
#include <stddef.h>

/* Reads and parses a configuration file; prints the error and returns NULL on failure.
 * Free with floe_config_free. Without agent.id and without a machine id, the default id
 * comes from the installation id in state_dir, which create_identity makes if absent
 * (floe run); otherwise it is the host name until the first run. */
struct floe_config *floe_cli_load_config(const char *path, bool create_identity);
/* The same for the text of a file (read already) named path: positions in errors, and
 * cfg->path, are path's. */
struct floe_config *floe_cli_parse_config(const char *path, const char *text, size_t len,
					  bool create_identity);

/* The last good configuration of path, whose file cannot be used (last_good.h): parsed
 * under path's name and, for run (which may make the installation), checked as a start
 * checks the file; what it logs and /healthz says in note. NULL when there is none, or it
 * fails too. dir: where to look (NULL: where the file says, then the default state_dir). */
struct floe_config *floe_cli_fall_back(const char *path, const char *dir, bool run, char *note,
				       size_t cap);

/* Takes the lock that makes this process the only writer of the configuration's state_dir
 * (sub: a directory in it of its own, or NULL for state_dir itself), making the
 * directory if absent. Returns -1 with *fd owned by the caller (floe_fs_unlock; the
 * kernel releases it when the process dies), or the exit code after printing why:
 * FLOE_EXIT_LOCKED with the holder's process id when another process holds it. */
int floe_cli_lock_state(const struct floe_config *cfg, const char *sub, const char *what, int *fd);

int floe_cmd_run(int argc, char **argv);
int floe_cmd_check(int argc, char **argv);
int floe_cmd_inspect(int argc, char **argv);
int floe_cmd_status(int argc, char **argv); /* status.c */
int floe_cmd_maintain(int argc, char **argv); /* maintain.c */
int floe_cmd_version(int argc, char **argv);

#endif
