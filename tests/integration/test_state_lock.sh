#!/usr/bin/env bash
# One process owns a state_dir: while an agent runs, a second `run` (a daemon or a
# --once by hand) is refused with exit code 3 and the holder's process id, and writes
# nothing there; the read-only commands still work; a killed holder frees the state_dir
# for the next run without any cleanup. `floe maintain` has a lock of its own (its
# temporary files), so it runs beside the agent but not beside another maintain.
source "$(dirname "$0")/lib.sh"

d="$T/lock"
mkdir -p "$d/logs"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i 's/commit_interval: .*/commit_interval: 1s/' "$d/floe.yaml"
for i in $(seq 1 50); do echo "line $i"; done >"$d/logs/a.log"

"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err1" &
PID=$!
PIDS+=($PID)
log_has "$d/err1" "committed snapshot"

rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err2" || rc=$?
check "a --once beside the running agent is refused with exit code 3" test $rc = 3
check "its message names the holder's process id" grep -q "in use by process $PID (floe run" "$d/err2"
rc=0
timeout 20 "$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err3" || rc=$?
check "a second daemon is refused with exit code 3" test $rc = 3
check "it says why in one line" test "$(wc -l <"$d/err3")" = 1
check "the refused runs stopped before starting anything" \
	test "$(cat "$d/err2" "$d/err3" | grep -c -e started -e spool -e listening)" = 0
check "the lock file holds the agent's process id" test "$(cat "$d/state/lock")" = "$PID"
check "floe check works meanwhile" "$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null
check "floe status works meanwhile" "$FLOE_BIN" status -c "$d/floe.yaml" >/dev/null
check "floe inspect works meanwhile" "$FLOE_BIN" inspect "$d/wh/default/logs" >/dev/null
check "floe version works meanwhile" "$FLOE_BIN" version >/dev/null
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" >/dev/null 2>"$d/err4" || rc=$?
check "floe maintain runs beside the agent (a lock of its own)" test $rc = 0
check "the agent still runs" kill -0 $PID

# A reload may not move the agent to another state_dir (whose lock it does not hold).
sed "s#state_dir: $d/state#state_dir: $d/state2#" "$d/floe.yaml" >"$d/floe.yaml.new"
cp "$d/floe.yaml" "$d/floe.yaml.keep"
mv "$d/floe.yaml.new" "$d/floe.yaml"
kill -HUP $PID
check "a SIGHUP that changes agent.state_dir is refused" \
	log_has "$d/err1" "agent.state_dir changed ($d/state to $d/state2)" 1 $PID
check "and the running configuration stays" log_has "$d/err1" "the running configuration stays" 1 $PID
mv "$d/floe.yaml.keep" "$d/floe.yaml"

# A dead holder: the kernel released its lock, the lock file stays and is no obstacle.
kill -9 $PID
wait $PID 2>/dev/null || true
for i in $(seq 51 60); do echo "line $i"; done >>"$d/logs/a.log"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err5" || rc=$?
check "after the holder was killed, run --once goes on (exit 0)" test $rc = 0
check "and commits the rest" grep -q "committed snapshot" "$d/err5"

finish
