/* Limits that every layer shares. */
#ifndef FLOE_BASE_LIMITS_H
#define FLOE_BASE_LIMITS_H

/* The size of every buffer that holds a file system path (and of the store keys and file
 * URIs made from paths): Linux's PATH_MAX (4096 bytes with the NUL, the longest path the
 * kernel takes) plus one more file name (NAME_MAX 255 and its '/'). A directory the kernel
 * accepts joined with a name always fits; and a path cut to fit is still longer than the
 * kernel takes, so truncation can only ever meet ENAMETOOLONG, never open another file.
 * Formats that store paths keep their own limits. */
#define FLOE_PATH_MAX (4096 + 256)

#endif
