/* Path helpers: absolute paths for the warehouse (Iceberg v2 stores fully qualified
 * URIs) and file:// URI conversion. */
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

#endif
