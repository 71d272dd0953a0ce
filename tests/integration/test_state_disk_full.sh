#!/usr/bin/env bash
# state_dir on a small file system (a 12 MiB tmpfs) with a backlog larger than it: the
# agent seals smaller entries as the free space shrinks and waits for commits to make
# room, instead of failing at the first batch; `run --once` ships the whole backlog.
# A disk that others filled makes a daemon wait (503 on /healthz and
# floe_state_disk_low 1 on /metrics, both saying why) and it resumes by itself when space
# returns. `floe check` warns that spool.max_bytes is more than the disk holds.
source "$(dirname "$0")/lib.sh"

d="$T/disk"
mkdir -p "$d/logs" "$d/state"
mount -t tmpfs -o size=12m tmpfs "$d/state" 2>/dev/null || {
	echo "skip: cannot mount a tmpfs (needs root)"
	exit 77
}
trap 'umount "$d/state" 2>/dev/null || true; cleanup' EXIT

python3 - "$d/logs/x.log" <<'PY'
import random, string, sys
rnd = random.Random(7)
with open(sys.argv[1], "w") as f:
    for i in range(400000):
        f.write("line %d %s\n" % (i, "".join(rnd.choices(string.ascii_letters, k=80))))
PY
cat >"$d/floe.yaml" <<YAML
agent:
  id: disk-full
  state_dir: $d/state
  http: {listen: "127.0.0.1:0"}
inputs: [{type: tail, paths: ["$d/logs/*.log"], start_at: beginning}]
tables: {logs: {commit_interval: 1s}}
lake: {warehouse: $d/wh}
YAML
rows() { "$FLOE_BIN" inspect "$d/wh/default/logs" | sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p'; }

"$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check"
check "floe check warns that spool.max_bytes is more than the disk's free space" \
	grep -q "spool.max_bytes (1024.0MiB) is more than the .*MiB free on the file system of $d/state" "$d/check"

rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err1" || rc=$?
check "run --once with a backlog larger than state_dir's disk: exit 0" test $rc = 0
check "every line of the backlog is committed (400000)" test "$(rows)" = 400000
check "in entries that fit (more than one seal)" \
	test "$(grep -c "sealed spool entry" "$d/err1")" -gt 1
echo "seals: $(grep -c "sealed spool entry" "$d/err1"), commits: $(grep -c "committed snapshot" "$d/err1")"

# The disk filled by someone else: the daemon waits, says why, and resumes by itself.
avail=$(df -B1 --output=avail "$d/state" | tail -1)
dd if=/dev/zero of="$d/state/filler" bs=1M count=$((avail / 1048576 - 1)) 2>/dev/null || true
for i in $(seq 1 1000); do echo "more $i"; done >>"$d/logs/x.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err2" &
PID=$!
PIDS+=($PID)
wait_log() { log_has "$1" "$2" 1 "$PID"; }
check "a full disk at the start: the daemon waits" wait_log "$d/err2" "inputs wait for commits to make room"
port=$(serving_port "$d/err2" $PID)
code=$(curl -s -o "$d/health" -w '%{http_code}' "http://127.0.0.1:$port/healthz" || true)
check "/healthz: 503 while the disk is full" test "$code" = 503
check "/healthz says why" grep -q "state_dir's file system full" "$d/health"
curl -s "http://127.0.0.1:$port/metrics" >"$d/m.txt" || true
check "/metrics: floe_state_disk_low 1" grep -qx "floe_state_disk_low 1" "$d/m.txt"
check "the daemon still runs" kill -0 $PID
rm -f "$d/state/filler"
check "space back: it resumes by itself" wait_log "$d/err2" "bytes free again: inputs resume"
check "and commits the rest" wait_log "$d/err2" "committed snapshot"
for i in $(seq 1 100); do [ "$(rows)" = 401000 ] && break; sleep 0.1; done
check "every line is in the table (401000)" test "$(rows)" = 401000
check "metrics.json: state_disk_low 0 again" grep -q '"state_disk_low":0' "$d/state/metrics.json"
rc=0
kill -TERM $PID
wait $PID || rc=$?
check "SIGTERM: exit 0" test $rc = 0

finish
