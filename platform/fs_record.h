/* The file system's durable operations, recorded: for power-cut testing, fs.c reports each
 * operation that decides what a disk holds after a crash (creating or truncating a file,
 * writing it, syncing it, closing it; renaming, linking or unlinking a name; making or
 * syncing a directory) to a log, with the bytes written. A crash-state generator replays a
 * prefix of the log under a file system's rules (what an fsync makes durable, what a
 * rename needs its directory synced for) to build the states a power cut may leave.
 *
 * The log is text lines, each "<op> <path>[ <path2>]" with paths escaped (%XX for bytes
 * at or below a space, '%' and DEL), and a write is "write <path> <offset> <length>"
 * followed by exactly that many bytes and a newline. Ops: create (a new empty file, or
 * one truncated to empty), write, fsync, close, rename, link, unlink, mkdir, fsyncdir.
 * Paths are as floe gave them (relative ones relative to its working directory). */
#ifndef FLOE_FS_RECORD_H
#define FLOE_FS_RECORD_H

#include <stdbool.h>

/* Starts recording to log_path (appended to; created if absent). Returns 0 or -errno.
 * Process-wide: every thread's operations go to the one log, in the order they happen. */
int floe_fs_record_start(const char *log_path);
/* Stops recording and closes the log. */
void floe_fs_record_stop(void);
/* In a build with FLOE_FS_RECORD defined, starts recording to the file the environment
 * variable FLOE_FS_RECORD names (when set): the power-cut tests' way in. Elsewhere it
 * does nothing, so that no release binary can be made to log its writes. Returns 0 or
 * -errno. */
int floe_fs_record_from_env(void);

/* In a build with FLOE_FS_RECORD, true when the environment variable
 * FLOE_TEST_SKIP_FSYNC (a comma-separated list) names site, one of fs.c's fsync call
 * sites: "temp-file" (the temporary file of an atomic replace or exclusive create),
 * "copy-file" (a copy's temporary file), "file" (floe_file_sync), "publish-dir" (the
 * directory an atomic replace or exclusive create puts its name in), "rename-dir"
 * (floe_fs_rename's directories), "mkdir-dir" (the parent of a directory
 * floe_fs_mkdirs made) and "dir" (floe_fs_fsync_dir). fs.c then skips that fsync and
 * records nothing, so the power-cut tests can show that each one is needed. Elsewhere
 * always false. */
bool floe_fs_rec_skip_fsync(const char *site);

/* The hooks fs.c calls around each operation (no-ops while not recording). fd is the
 * descriptor the operation used; a file's path and write offset are tracked from its
 * create to its close. */
void floe_fs_rec_create(int fd, const char *path);
void floe_fs_rec_write(int fd, const void *p, unsigned long n);
void floe_fs_rec_fsync(int fd);
void floe_fs_rec_close(int fd);
void floe_fs_rec_path(const char *op, const char *path, const char *path2);

#endif
