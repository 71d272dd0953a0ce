#!/usr/bin/env bash
# Stops the test S3 server that start.sh started from DIR: every process listed in DIR/pids, by
# PID, newest first (watchdog, radosgw, OSD, monitor: one at a time is fast, all at once makes
# each daemon wait ~5 s for a peer that is gone). SIGTERM, then SIGKILL after RGW_STOP_WAIT
# seconds (default 10). Then deletes DIR, unless KEEP=1.
# Usage: [KEEP=1] stop.sh DIR
set -uo pipefail

MARK=.floe-rgw
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: [KEEP=1] stop.sh DIR" >&2
	exit 2
fi
DIR=$(realpath -m -- "$1")
WAIT=${RGW_STOP_WAIT:-10}
[ -d "$DIR" ] || exit 0
[ -f "$DIR/$MARK" ] || { echo "rgw: $DIR was not made by start.sh; not touching it" >&2; exit 1; }

alive() { # alive PID: running and not a zombie (a killed daemon whose parent is gone stays a
	# zombie until PID 1 reaps it, and kill -0 still succeeds on it)
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st:0:1}" != Z ]
}
ours() { # ours PID: alive and one of its arguments is DIR or under it (guards against PID reuse)
	alive "$1" && tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline" |
		awk -v d="$DIR" '$0 == d || index($0, d "/") == 1 { f = 1 } END { exit !f }'
}
wait_gone() { # wait_gone PID SECONDS
	local i
	for ((i = 0; i < $2 * 20; i++)); do
		alive "$1" || return 0
		sleep 0.05
	done
	! alive "$1"
}
stop_pid() {
	local p=$1
	[ "$p" != $$ ] || return 0 # the watchdog runs this script as itself
	ours "$p" || return 0
	kill -TERM "$p" 2>/dev/null || return 0
	wait_gone "$p" "$WAIT" && return 0
	echo "rgw: pid $p ignored SIGTERM for ${WAIT}s; sending SIGKILL" >&2
	kill -KILL "$p" 2>/dev/null
	wait_gone "$p" 5 || { echo "rgw: pid $p does not die" >&2; rc=1; }
}

rc=0
if [ -f "$DIR/pids" ]; then
	mapfile -t pids < <(grep -E '^[0-9]+$' "$DIR/pids" | tac)
	for p in "${pids[@]}"; do stop_pid "$p"; done
fi
# A start.sh killed between starting a daemon and recording its PID leaves it unlisted: find
# daemons whose configuration file is this DIR's (nothing else names it).
# shellcheck disable=SC2013 # /proc paths have no blanks
for f in $(grep -lzxF -- "$DIR/ceph.conf" /proc/[0-9]*/cmdline 2>/dev/null); do
	p=${f#/proc/}
	p=${p%/cmdline}
	[ "$p" != $$ ] || continue
	echo "rgw: stopping unlisted pid $p" >&2
	stop_pid "$p"
done

if [ "$rc" = 0 ] && [ "${KEEP:-0}" != 1 ]; then
	rm -rf -- "$DIR"
fi
exit $rc
