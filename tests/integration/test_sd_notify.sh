#!/usr/bin/env bash
# Under a service manager (systemd's Type=notify and WatchdogSec=, as the packaged unit
# runs it), with the store unreachable as on a device that boots offline: floe says
# READY=1 once its inputs are open, without waiting for the store; it feeds the watchdog
# while its loop turns (WATCHDOG_USEC 2 s: every half second); a SIGHUP that changes the
# configuration is RELOADING=1 then READY=1 again, one with errors neither; SIGTERM is
# STOPPING=1 and a clean exit. /livez answers 200 all along while /healthz answers 503
# (the store), so a liveness probe never restarts an agent that only waits for its store;
# and a loop that stops turning (SIGSTOP) stops feeding the watchdog. The manager's socket
# is a receiver here (python3, a datagram socket in the test's directory).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
export AWS_EC2_METADATA_DISABLED=true

d=$T/n
mkdir -p "$d/in"
SPORT=$(free_port)
config() { # config COMMIT_INTERVAL
	cat >"$d/floe.yaml" <<YAML
agent: { id: notify-test, state_dir: $d/state, http: { listen: "127.0.0.1:0" } }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: $1 }
lake:
  warehouse: s3://bkt/n
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$SPORT", region: us-east-1, path_style: true, request_timeout: 2s }
YAML
}
config 1s
seq 1 20 | sed 's/^/line /' >"$d/in/app.log"

# The manager's end: each datagram a line of $d/notify.log (lib.sh).
notify_receiver "$d/notify.sock" "$d/notify.log"
RPID=$NOTIFY_PID
wait_for 10 test -S "$d/notify.sock" || { echo "the receiver did not start"; finish; exit 1; }
touch "$d/notify.log"

said() { grep -c -- "$1" "$d/notify.log" || true; }
NOTIFY_SOCKET=$d/notify.sock WATCHDOG_USEC=2000000 "$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "READY=1 with the store unreachable" wait_for 30 grep -q '^READY=1|STATUS=agent notify-test running, 1 inputs$' "$d/notify.log"
check "the log says the watchdog is fed every 500 ms" grep -q "service manager watchdog: fed every 500 ms" "$d/err"
fed() { [ "$(said '^WATCHDOG=1$')" -ge "$1" ]; }
check "the watchdog is fed while the loop turns (4 times)" wait_for 30 fed 4
wait_for 20 test -n "$(logged_port "$d/err")" || true
HPORT=$(logged_port "$d/err")
code() { curl -s -o "$d/body" -w '%{http_code}' "http://127.0.0.1:$HPORT$1"; }
healthz_down() { [ "$(code /healthz)" = 503 ] && grep -q "store unreachable" "$d/body"; }
check "/healthz answers 503: the store is unreachable" wait_for 20 healthz_down
check "/livez answers 200 meanwhile" test "$(code /livez)" = 200
check "/livez says ok" grep -qx ok "$d/body"

# A reload: a file with errors changes nothing; a good one is RELOADING=1 then READY=1.
echo "tables: [" >"$d/floe.yaml"
kill -HUP "$pid"
check "a SIGHUP with a broken file is refused" wait_log "$d/err" "has errors (above): the running configuration stays" 20
check "... and the manager hears nothing of it" test "$(said '^RELOADING=1')" = 0
config 2s
kill -HUP "$pid"
check "a SIGHUP with a new configuration: RELOADING=1" wait_for 30 grep -q '^RELOADING=1|MONOTONIC_USEC=[0-9]*|STATUS=reloading the configuration$' "$d/notify.log"
ready2() { [ "$(said '^READY=1')" -ge 2 ]; }
check "... then READY=1 once the new configuration runs" wait_for 30 ready2
check "... in that order" sh -c "grep -E '^(READY|RELOADING)=' '$d/notify.log' | cut -c1-5 | tr '\\n' ' ' | grep -qx 'READY RELOA READY '"
check "the agent runs on after the reload" kill -0 "$pid"

# A loop that stops turning stops feeding the watchdog (the manager would restart it).
before=$(said '^WATCHDOG=1$')
kill -STOP "$pid"
sleep 2
during=$(said '^WATCHDOG=1$')
sleep 2
check "a stopped loop feeds no watchdog" test "$(said '^WATCHDOG=1$')" = "$during"
kill -CONT "$pid"
check "... and feeds it again when it turns" wait_for 30 fed $((during + 2))
echo "# watchdog: $before fed before SIGSTOP, $during then, $(said '^WATCHDOG=1$') after SIGCONT"

stop_pid "$pid" 30
rc=$?
check "SIGTERM: exit 0" test "$rc" = 0
check "SIGTERM: STOPPING=1" grep -q '^STOPPING=1|STATUS=stopping: sealing and committing$' "$d/notify.log"

# Without NOTIFY_SOCKET floe says nothing to anyone and runs as before (--once, into a
# local warehouse).
cat >"$d/once.yaml" <<YAML
agent: { id: notify-once, state_dir: $d/state.once }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
lake: { warehouse: $d/wh }
YAML
: >"$d/notify.log"
check "run --once without a service manager" "$FLOE_BIN" run --once -c "$d/once.yaml" 2>"$d/err.once"
check "without NOTIFY_SOCKET nothing is sent" test ! -s "$d/notify.log"
check "... and the log says nothing of a service manager" sh -c "! grep -q 'NOTIFY_SOCKET\|watchdog' '$d/err.once'"

kill "$RPID" 2>/dev/null || true
wait "$RPID" 2>/dev/null || true
finish
