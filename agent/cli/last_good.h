/* floe run's last good configuration. Each time a runner starts, the bytes of the
 * configuration it started with are kept in its state_dir (agent.keep_last_good, on by
 * default). A later start whose file cannot be used (unreadable, errors, a preflight
 * error, a table that refuses it) runs on that copy instead of exiting: a device that
 * got a broken file from its fleet's configuration push goes on reading, listening and
 * committing, says so on /healthz and in config_fallback, and takes the file again at
 * the next SIGHUP or start that finds it good. */
#ifndef FLOE_CLI_LAST_GOOD_H
#define FLOE_CLI_LAST_GOOD_H

#include <stddef.h>

struct floe_config;

#define FLOE_LAST_GOOD_FILE "config.last-good.yaml"

/* Keeps cfg->source as the copy in cfg's state_dir (unchanged when the copy already holds
 * it), and, when the service manager's state directory ($STATE_DIRECTORY, else the
 * default state_dir) is another and exists, as a copy there named by cfg's path; or
 * removes both when agent.keep_last_good is false. A failure is logged: it is never a
 * reason to stop. */
void floe_last_good_save(const struct floe_config *cfg);

/* The last good copy of the file at path, which could not be used. Looked for in dir (a
 * state_dir; NULL: in the state_dir the file names now, as far as it can be read, then in
 * agent.state_dir's default and the service manager's state directory, then as the copy
 * named by path there); only a copy made from path is taken. Returns 0 with the
 * copy's configuration text in *body (owned: floe_free(NULL, ...); the caller parses it
 * under path's name, so that positions are the file's and a SIGHUP reads path again), the
 * state_dir it was found in (in found, FLOE_PATH_MAX bytes) and what /healthz says in
 * note; or FLOE_ENOTFOUND (a copy that cannot be used is logged). */
int floe_last_good_find(const char *path, const char *dir, char **body, size_t *body_len,
			char *found, char *note, size_t cap);

#endif
