#!/usr/bin/env bash
# Checks that every durable write goes through platform/fs.c, where the power-cut tests
# record it (platform/fs_record.h): outside fs.c and the recorder, no source file of
# agent/, formats/ or platform/ calls the system calls that change what a disk holds
# (write, pwrite, rename, link, unlink, mkdir, fsync, fdatasync, ftruncate, fallocate and
# their *at forms), opens a file for writing, or fopen()s one to write. A method call of
# the same name (s->write(...)) is not a system call. The exceptions are named below with
# their reason. Comments are left out. Prints each hit and exits 1 if there is one.
# Usage: check_durable.sh [SOURCE-ROOT]   (ctest runs it as layers/check_durable)
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
[ -f platform/fs.c ] || { echo "check_durable: no platform/fs.c under $ROOT"; exit 2; }

# Each file without its comments, as file:line: text.
strip() { awk -f "$ROOT/tests/layers/strip_comments.awk" "$@"; }

CALLS='(^|[^.>_[:alnum:]])(write|pwrite|pwritev|writev|rename|renameat2?|link|linkat|unlink|unlinkat|mkdir|mkdirat|fsync|fdatasync|ftruncate|truncate|fallocate|posix_fallocate|sync_file_range)\('
OPENS='(^|[^.>_[:alnum:]])(open|openat|creat)\(.*(O_WRONLY|O_RDWR|O_CREAT|O_TRUNC|O_APPEND)|(^|[^.>_[:alnum:]])(creat)\(|fopen\([^,]*,[[:space:]]*"[^"]*[wa+]'
# Not state: the loop's and the signal handler's wake-ups (an eventfd, a pipe), the unix
# socket a listener binds and removes, and the state lock's file (a flock does not outlive
# a reboot; fs.c says why it is not recorded).
ALLOW='^platform/loop\.c:.*write\(l->efd|^platform/signal\.c:.*write\(fd, &one|^platform/listen\.c:.*unlink\((sun->sun_path|l->uri\.path)\)'

files=$(find agent formats platform -name '*.c' -o -name '*.h' | grep -v -E '^platform/fs(_record)?\.c$' | sort)
# shellcheck disable=SC2086 # one argument per file
hits=$(strip $files | grep -E "$CALLS|$OPENS" | grep -v -E "$ALLOW" || true)
if [ -n "$hits" ]; then
	echo "check_durable: durable file operations outside platform/fs.c (route them through it):"
	echo "$hits"
	exit 1
fi
echo "check_durable: every durable file operation goes through platform/fs.c"
