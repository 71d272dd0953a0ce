/* Path helpers: absolute paths for the warehouse (Iceberg v2 stores fully qualified
 * URIs), file:// URI conversion, and canonical paths for the tail's path rules. */
#ifndef FLOE_PATH_H
#define FLOE_PATH_H

#include <stddef.h>

/* Makes path absolute against the current directory and removes "." and ".." segments
 * and duplicate slashes, without requiring the path to exist. Writes to out (cap bytes).
 * -ENAMETOOLONG when it does not fit. */
int floe_path_absolute(const char *path, char *out, size_t cap);
/* If s is a file:// URI, writes its path (percent-decoded) to out; otherwise copies s.
 * -EINVAL for a file URI with a host other than empty or localhost. */
int floe_path_from_uri(const char *s, char *out, size_t cap);
/* The canonical path of an existing file or directory, every symbolic link, "." and ".."
 * resolved (realpath(3)), into out (cap bytes). -ENOENT, -EACCES, -ENAMETOOLONG... */
int floe_path_real(const char *path, char *out, size_t cap);
/* Whether path is a directory whose entries can be listed: 0, -ENOENT (missing),
 * -ENOTDIR, -EACCES (no permission to list or search it). */
int floe_path_dir_state(const char *path);

#endif
