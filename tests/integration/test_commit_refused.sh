#!/usr/bin/env bash
# Commits that fail for a reason of the warehouse's own, not a store away: the table's
# metadata directory refuses new files (chattr +i, as a permission or a mount's policy
# would). /healthz, once the data waited three commit intervals, names the last failure
# beside the failure count, so it is told without the device's log; when the directory
# takes files again every line is in the table once, and /healthz is ok.
source "$(dirname "$0")/lib.sh"

d="$T/refused"
mkdir -p "$d/logs" "$d/probe"
refuses=0
if chattr +i "$d/probe" 2>/dev/null; then
	touch "$d/probe/x" 2>/dev/null || refuses=1
	chattr -i "$d/probe"
fi
[ $refuses = 1 ] || skip "chattr +i does not refuse files here (needs root and a file system with attributes)"
trap 'chattr -i "$d/wh/default/logs/metadata" 2>/dev/null || true; cleanup' EXIT
COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i "s#^  state_dir: .*#&\n  http: { listen: \"127.0.0.1:0\" }#" "$d/floe.yaml"
TABLE="$d/wh/default/logs"

# health_has TEXT: until /healthz has TEXT, at most 20 s.
health_has() {
	local i
	for i in $(seq 1 200); do
		curl -s "http://127.0.0.1:$port/healthz" | grep -q "$1" && return 0
		sleep 0.1
	done
	return 1
}

seq 1 50 | sed 's/^/a /' >"$d/logs/x.log"
run_serving "$d/floe.yaml" "$d/err"
check "the agent serves" test -n "$port"
check "the first lines are committed" log_has "$d/err" "committed snapshot" 1 "$pid"
chattr +i "$TABLE/metadata"
seq 1 50 | sed 's/^/b /' >>"$d/logs/x.log"
check "the commit fails" log_has "$d/err" "commit failed: storing manifest .* Operation not permitted" 1 "$pid"
check "/healthz names the last failure" \
	health_has "commits failed so far, the last: storing manifest .*Operation not permitted"
chattr -i "$TABLE/metadata"
check "the directory takes files again: the lines are committed" \
	log_has "$d/err" "committed snapshot" 2 "$pid"
check "/healthz is ok again" health_has "^ok"
check "the agent stops cleanly" stop_pid "$pid"
check "every line once" \
	test "$(rows_sql "$TABLE" "SELECT count(*) = 100 AND count(DISTINCT message) = 100 FROM t")" = '[true]'
finish
