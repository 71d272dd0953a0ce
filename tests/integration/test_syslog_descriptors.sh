#!/usr/bin/env bash
# A syslog listener's connections stay within the process's descriptors: under a limit
# of 200 (a container's or a unit's LimitNOFILE=), senders that open 300 TCP connections
# and never send used to take every descriptor (max_connections is 1024), and the agent's
# commits and metrics.json failed with "Too many open files" for as long as they stayed
# (idle_timeout: 1 h). The listener now takes the input's share of the limit, says so at
# start, and refuses (counted) what is beyond it; a file's line is committed meanwhile,
# and a sender gets in again once the idle ones are gone.
source "$(dirname "$0")/lib.sh"

command -v logger >/dev/null || skip "logger is missing"
d="$T/fds"
mkdir -p "$d/logs"
port=$(free_port)
cat >"$d/floe.yaml" <<YAML
agent:
  state_dir: $d/state
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
  - type: syslog
    listen: ["tcp://127.0.0.1:$port"]
tables:
  logs:
    commit_interval: 1s
lake:
  warehouse: $d/wh
YAML
(ulimit -n 200 && exec "$FLOE_BIN" run -c "$d/floe.yaml" --log-level info) 2>"$d/err" &
pid=$!
PIDS+=($pid)
check "the agent listens" wait_log "$d/err" "listening on tcp://127.0.0.1:$port"
check "the listener's cap is logged" \
	grep -q "tcp://127.0.0.1:$port: at most [0-9]* connections at once, not max_connections' 1024" "$d/err"

# 300 idle connections, held until $d/release exists (60 s at most).
python3 - "$port" "$d/release" >"$d/holder.out" 2>&1 <<'PY' &
import os, socket, sys, time
held = []
for _ in range(300):
    try:
        held.append(socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5))
    except OSError as e:
        print("connect:", e, flush=True)
        break
print("held", len(held), flush=True)
for _ in range(600):
    if os.path.exists(sys.argv[2]):
        break
    time.sleep(0.1)
PY
holder=$!
PIDS+=($holder)
check "the senders hold their connections" wait_log "$d/holder.out" "^held"
# The agent has refused the connections beyond its cap once it counts them.
for _ in $(seq 1 200); do
	[ "$(metric "$d/state/metrics.json" rejected 2>/dev/null || true)" != "" ] &&
		[ "$(metric "$d/state/metrics.json" rejected)" -gt 0 ] && break
	sleep 0.1
done
echo "a file's line" >"$d/logs/a.log"
check "a file's line is committed while the connections are held" \
	wait_log "$d/err" "committed snapshot .* 1 rows" 20
check "connections beyond the cap are refused and counted" \
	test "$(metric "$d/state/metrics.json" rejected)" -gt 0
check "no descriptor ran out" sh -c "! grep -q 'Too many open files' '$d/err'"

touch "$d/release"
wait $holder || true
# Once the idle connections are gone, a sender gets in again (a message sent while the
# agent had not yet seen every close may be refused: sent again).
for _ in $(seq 1 10); do
	logger -n 127.0.0.1 -P "$port" -T "after the idle ones" 2>/dev/null || true
	LOG_WAIT_S=2 log_has "$d/err" "committed snapshot" 2 && break
done
check "a sender gets in once the idle ones are gone" \
	test "$(grep -c 'committed snapshot' "$d/err")" -ge 2
stop_pid $pid
finish
