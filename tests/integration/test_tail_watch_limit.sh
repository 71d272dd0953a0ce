#!/usr/bin/env bash
# Beyond inotify's watch limit (fs.inotify.max_user_watches, set low here in a user
# namespace of the test's own), the directories left over are polled: the agent says so
# once, shows how many in dirs_polled (metrics.json), and reads their files' appends
# within a second or two, as with the polling backend. Before, it said nothing, and an
# idle agent slept on inotify, so an append in a polled directory waited for the full
# pass, up to 30 s.
source "$(dirname "$0")/lib.sh"

unshare -U -r sh -c 'echo 8 >/proc/sys/user/max_inotify_watches' 2>/dev/null ||
	skip "no user namespace with its own inotify limits here (unshare -U -r)"
d="$T/w"
mkdir -p "$d/logs"
for i in $(seq 1 30); do
	mkdir "$d/logs/c$i"
	echo "first $i" >"$d/logs/c$i/app.log"
done
COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*/app.log\"]"
unshare -U -r sh -c "echo 8 >/proc/sys/user/max_inotify_watches &&
	exec '$FLOE_BIN' run -c '$d/floe.yaml' --log-level info" 2>"$d/err" &
pid=$!
PIDS+=($pid)
committed() { # committed N SECONDS: metrics.json counts N rows committed within SECONDS
	local _ n
	for _ in $(seq 1 $(($2 * 10))); do
		n=$(metric "$d/state/metrics.json" rows_committed 2>/dev/null || true)
		[ "${n:-0}" -ge "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
check "the 30 files are read" committed 30 20
check "the watch limit is logged once" \
	test "$(grep -c "inotify's watch limit (fs.inotify.max_user_watches) is reached" "$d/err")" = 1
# metrics.json is rewritten just after the commit's log line.
polled=""
for _ in $(seq 1 100); do
	polled=$(metric "$d/state/metrics.json" dirs_polled 2>/dev/null || true)
	[ -n "$polled" ] && break
	sleep 0.1
done
check "metrics.json counts the polled directories ($polled)" test "${polled:-0}" -gt 20
# Idle now (the loop sleeps after a few quiet turns): an append in a polled directory
# is read by the once-a-second look, long before the 30 s full pass.
sleep 3
echo "later 30" >>"$d/logs/c30/app.log"
check "an append in a polled directory is read" committed 31 15
stop_pid $pid
finish
