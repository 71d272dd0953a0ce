#!/usr/bin/env bash
# The host name changes while the agent runs (DHCP or a provisioning script names the
# device after boot): the lines read after the change carry the new name in the host
# column, and a table partitioned by host puts them under it, with a log line saying
# so; the lines read before keep the old one. No restart is needed. The agent runs in a
# UTS namespace of its own (unshare -u), so the machine's name is not touched.
source "$(dirname "$0")/lib.sh"

command -v unshare >/dev/null && command -v nsenter >/dev/null || skip "no unshare or nsenter"
unshare -u sleep 600 &
ns=$!
PIDS+=($ns)
ok=0
for i in $(seq 1 50); do
	nsenter -t $ns -u hostname boot-name 2>/dev/null && { ok=1; break; }
	sleep 0.1
done
[ $ok = 1 ] || skip "cannot make a UTS namespace here (unshare -u needs privileges)"

d="$T/host"
mkdir -p "$d/logs"
COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]" \
	"    partition_by: [host]"
TABLE="$d/wh/default/logs"

# wait_rows N: until the table holds N rows, at most 20 s.
wait_rows() {
	local i
	for i in $(seq 1 200); do
		[ "$(snapshot_records "$TABLE")" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}

seq 1 20 | sed 's/^/before /' >"$d/logs/a.log"
nsenter -t $ns -u "$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=($pid)
check "the lines before the change are committed" wait_rows 20
nsenter -t $ns -u hostname real-name
# An idle agent still turns at its commit interval: the change is seen without a line.
check "the change is logged" \
	log_has "$d/err" "the host name changed from boot-name to real-name"
seq 1 30 | sed 's/^/after /' >>"$d/logs/a.log"
check "the lines after it are committed" wait_rows 50
check "the lines before it carry the old name" \
	test "$(rows_sql "$TABLE" "SELECT count(*) FROM t WHERE host = 'boot-name' AND message LIKE 'before %'")" = '["20"]'
check "the lines after it carry the new name" \
	test "$(rows_sql "$TABLE" "SELECT count(*) FROM t WHERE host = 'real-name' AND message LIKE 'after %'")" = '["30"]'
check "the new name has a partition of its own" \
	test -n "$(find "$TABLE/data" -path '*host=real-name*' -name '*.parquet')"
check "the agent stops cleanly" stop_pid "$pid"
finish
