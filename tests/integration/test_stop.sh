#!/usr/bin/env bash
# Every loop ends: `run --once` returns, and SIGTERM or SIGINT ends `run` within 5 s after
# sealing and committing what was read, whatever an input is doing. Each case here is a
# state that once kept a loop going.
source "$(dirname "$0")/lib.sh"

# stop_within SECONDS PID: sends SIGTERM and waits at most SECONDS for PID to exit;
# returns the exit code, 124 if it did not exit in time (then it is killed).
stop_within() {
	local secs=$1 pid=$2 sig=${3:-TERM} i
	kill -"$sig" "$pid" 2>/dev/null || true
	for i in $(seq 1 $((secs * 10))); do
		kill -0 "$pid" 2>/dev/null || { wait "$pid"; return $?; }
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	return 124
}

rows() { # rows TABLE-DIR: the rows of the live data files
	local files
	files=$(live_files "$1" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || { echo 0; return; }
	duck "SELECT count(*) FROM read_parquet([$files])" | tr -d '[]"\n'
}

# Nine files in one input, one ending in a short unterminated line (a writer killed
# mid-line). With more than eight files, reading gives back buffers that hold only a
# partial line; that once made the file read its last bytes again forever.
partial_inputs() {
	mkdir -p "$1/in"
	for i in $(seq 1 9); do echo "line $i" >"$1/in/f$i.log"; done
	printf partial >>"$1/in/f1.log"
	touch -d '-1 min' "$1/in/f1.log" # the writer is gone: its last line is complete
}

d="$T/once"
partial_inputs "$d"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/in/*.log\"]"
rc=0
timeout -k 5 30 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "nine files, one unterminated: run --once returns" test $rc = 0
check "nine files, one unterminated: every line is committed, the partial one too" \
	test "$(rows "$d/wh/default/logs")" = 10

for sig in TERM INT; do
	d="$T/run-$sig"
	partial_inputs "$d"
	write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/in/*.log\"]"
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level warn 2>"$d/err" &
	pid=$!
	PIDS+=($pid)
	sleep 2
	rc=0
	stop_within 5 $pid $sig || rc=$?
	check "nine files, one unterminated: SIG$sig ends run within 5 s (exit $rc)" test $rc = 0
	check "nine files, one unterminated: SIG$sig commits every line, the idle file's partial one too" \
		test "$(rows "$d/wh/default/logs")" = 10
done
# SIGHUP (a closed terminal, or `systemctl reload`) neither kills the agent nor skips
# the seal: it is logged and the agent goes on, and SIGTERM still ends it cleanly.
d="$T/hup"
partial_inputs "$d"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/in/*.log\"]"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=($pid)
sleep 1
kill -HUP $pid
sleep 1
check "SIGHUP: the agent is still running" kill -0 $pid
rc=0
stop_within 5 $pid TERM || rc=$?
check "SIGHUP: logged, and SIGTERM afterwards ends run cleanly (exit $rc)" \
	bash -c "[ $rc = 0 ] && grep -q 'SIGHUP: starting again with the new configuration' '$d/err'"
check "SIGHUP: the lines are committed" test "$(rows "$d/wh/default/logs")" = 10

# Idle, the loop sleeps until its next deadline (here the 30 s full pass and rescan, with
# a 60 s commit interval): a line appended meanwhile is read at once (inotify wakes it),
# and SIGTERM ends the wait at once (the signal wakes it, even when it comes just before
# the wait begins).
d="$T/idle"
partial_inputs "$d"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/in/*.log\"]"
sed -i "s#^  state_dir: $d/state#&\n  http: { listen: 127.0.0.1:0 }#" "$d/floe.yaml"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=($pid)
port=$(serving_port "$d/err" $pid)
lines() { curl -sf "http://127.0.0.1:$port/metrics" | awk '$1 == "floe_input_lines_total{input=\"1\"}" { print $2 }'; }
sleep 4 # past the first idle turns: the long wait
echo "appended while idle" >>"$d/in/f2.log"
got=""
for i in $(seq 1 30); do
	got=$(lines)
	[ "$got" = 11 ] && break
	sleep 0.1
done
check "idle: a line appended during the long wait is read within 3 s (lines: $got)" test "$got" = 11
sleep 3
rc=0
stop_within 2 $pid TERM || rc=$?
check "idle: SIGTERM ends the long wait and the run within 2 s (exit $rc)" test $rc = 0
check "idle: the lines are committed" test "$(rows "$d/wh/default/logs")" = 11

# run --once that reads nothing says why.
d="$T/nothing"
mkdir -p "$d/in"
echo "old line" >"$d/in/a.log"
cat >"$d/floe.yaml" <<YAML
agent: { id: n, state_dir: $d/state }
inputs: [{ type: tail, paths: ["$d/in/*.log"] }]
lake: { warehouse: $d/wh }
YAML
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err"
check "run --once with start_at: end says why it read nothing" \
	grep -q 'input 1 read no line: 1 files followed, 1 of them started at their end (start_at: end' "$d/err"
finish
