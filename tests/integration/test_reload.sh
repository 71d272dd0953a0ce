#!/usr/bin/env bash
# SIGHUP reloads the configuration: a file with errors is refused with them and the
# running configuration goes on; a valid one takes over (an input added, a limit changed)
# after sealing and committing, with the positions kept: no line read twice or skipped.
source "$(dirname "$0")/lib.sh"

d="$T/reload"
mkdir -p "$d/a" "$d/b"
PORT=$(free_port)
conf() { # conf EXTRA-INPUTS
	cat >"$d/floe.yaml.new" <<YAML
agent: {id: reload-test, state_dir: $d/state}
inputs:
  - type: tail
    paths: ["$d/a/*.log"]
    start_at: beginning
$1
tables:
  logs:
    commit_interval: 1s
lake: {warehouse: $d/wh}
YAML
	mv "$d/floe.yaml.new" "$d/floe.yaml"
}
rows() {
	local files
	files=$(live_files "$d/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || { echo '[]'; return; }
	duck "SELECT count(*), count(DISTINCT message) FROM read_parquet([$files]) ${1:-}"
}
wait_log() { # wait_log PATTERN [COUNT]: until the log holds PATTERN COUNT times (10 s)
	local i
	for i in $(seq 1 100); do
		[ "$(grep -c "$1" "$d/err" 2>/dev/null)" -ge "${2:-1}" ] && return 0
		sleep 0.1
	done
	return 1
}

conf ""
for i in $(seq 1 100); do echo "a line $i"; done >"$d/a/x.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
PID=$!
PIDS+=($PID)
wait_log "agent .* started"
wait_log "committed snapshot"

# A configuration with an error: refused, the agent goes on.
echo "inputs: [{type: tail, paths: 3, bogus: 1}]" >"$d/floe.yaml"
kill -HUP $PID
check "SIGHUP with a broken file: its error is logged" wait_log "has errors (above): the running configuration stays"
check "SIGHUP with a broken file: the agent still runs" kill -0 $PID
for i in $(seq 101 150); do echo "a line $i"; done >>"$d/a/x.log"

# A valid one: a second file input and a syslog input added.
conf "  - type: tail
    paths: [\"$d/b/*.log\"]
    start_at: beginning
  - type: syslog
    listen: \"udp://127.0.0.1:$PORT\""
for i in $(seq 1 30); do echo "b line $i"; done >"$d/b/y.log"
kill -HUP $PID
check "SIGHUP with a valid file: the new configuration takes over" \
	wait_log "SIGHUP: starting again with the new configuration"
check "the new configuration's syslog input listens" wait_log "listening on udp://127.0.0.1:$PORT"
logger -n 127.0.0.1 -P $PORT -d --rfc5424 -t reloaded "after the reload"
for i in $(seq 151 160); do echo "a line $i"; done >>"$d/a/x.log"
sleep 2
rc=0
kill -TERM $PID
wait $PID || rc=$?
check "SIGTERM after the reload: exit 0" test $rc = 0
check "every line of the first file once (160), across the reload" \
	test "$(rows "WHERE message LIKE 'a line %'")" = '["160","160"]'
check "the added file's lines (30) and the syslog message are in" \
	test "$(rows "WHERE message LIKE 'b line %' OR message = 'after the reload'")" = '["31","31"]'

finish
