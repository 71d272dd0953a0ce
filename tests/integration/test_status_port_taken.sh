#!/usr/bin/env bash
# agent.http.listen at an address another process holds (another exporter on the port, a
# stale process, an address not on an interface yet at boot). floe used to exit 1 at the
# start, which a service manager restarts every 5 s for as long as the port is held, so
# nothing was read at all. Now the agent starts without its status pages, reads and
# commits, says so, and takes the address once it is free (tried every 5 s).
source "$(dirname "$0")/lib.sh"

d="$T/taken"
mkdir -p "$d/logs"
PORT=$(free_port)
mkfifo "$d/hold"
python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen()
print("bound", flush=True)
sys.stdin.read()' "$PORT" <"$d/hold" >"$d/bound" &
HOLDER=$!
PIDS+=($HOLDER)
exec 4>"$d/hold"
check "another process holds the port" wait_for 10 grep -q bound "$d/bound"

COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i "s#^  state_dir: .*#&\n  http: { listen: \"127.0.0.1:$PORT\" }#" "$d/floe.yaml"
seq 1 20 | sed 's/^/a /' >"$d/logs/x.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" 4>&- &
pid=$!
PIDS+=($pid)
check "the start says the address is taken and that it runs on" \
	log_has "$d/err" "agent.http.listen 127.0.0.1:$PORT: bind: Address already in use: the agent runs without" 1 "$pid"
check "the lines are committed meanwhile" log_has "$d/err" "committed snapshot" 1 "$pid"
check "the agent still runs" kill -0 "$pid"

# The port is given up: the pages come within a try or two.
exec 4>&-
wait $HOLDER || true
check "once the port is free, the agent takes it" log_has "$d/err" "status: serving /metrics, /healthz and /livez on tcp://127.0.0.1:$PORT (the address taken at try" 1 "$pid"
check "and serves /livez" wait_for 10 sh -c "curl -sf http://127.0.0.1:$PORT/livez | grep -q ok"
check "and /metrics" wait_for 10 sh -c "curl -sf http://127.0.0.1:$PORT/metrics | grep -q '^floe_rows_committed_total 20$'"
seq 1 10 | sed 's/^/b /' >>"$d/logs/x.log"
check "and commits on" log_has "$d/err" "committed snapshot" 2 "$pid"
check "the agent stops cleanly" stop_pid "$pid"
TABLE="$d/wh/default/logs"
check "every line once" \
	test "$(rows_sql "$TABLE" "SELECT count(*) = 30 AND count(DISTINCT message) = 30 FROM t")" = '[true]'
finish
