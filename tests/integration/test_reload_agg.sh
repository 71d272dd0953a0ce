#!/usr/bin/env bash
# An aggregation whose table cannot take the rows of a changed configuration (group_by
# and window changed: another column where the table has 'app'): `floe check` refuses it
# naming the table, a SIGHUP refuses it and the running configuration goes on (it still
# commits), a restart with it runs on the last good configuration (the one the agent
# started with, test_config_fallback), and the agent that refused it is never stopped by it.
source "$(dirname "$0")/lib.sh"

d="$T/reload_agg"
mkdir -p "$d/logs"
conf() { # conf GROUP_BY WINDOW
	cat >"$d/floe.yaml.new" <<YAML
agent: {id: reload-agg, state_dir: $d/state}
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: json
tables:
  logs:
    commit_interval: 1s
lake: {warehouse: $d/wh}
aggregations:
  - {name: per_app, window: $2, group_by: $1, metrics: [count], max_groups: 100}
YAML
	mv "$d/floe.yaml.new" "$d/floe.yaml"
}
wait_log() { log_has "$d/err" "$1" "${2:-1}" "$PID"; }

conf "[app]" 1m
for i in $(seq 1 20); do echo "{\"app\": \"a$((i % 3))\", \"msg\": \"one $i\"}"; done >"$d/logs/x.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
PID=$!
PIDS+=($PID)
wait_log "agent .* started"
wait_log "committed snapshot"
check "the aggregate table exists" test -d "$d/wh/default/per_app/metadata"

# The shape changes: no app column, the count where app was.
conf "[]" 5m
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check" || rc=$?
check "floe check refuses the changed aggregation (exit 2)" test $rc = 2
check "floe check names the table and the field" grep -q "per_app.*field 3 is string 'app'" "$d/check"
kill -HUP $PID
check "SIGHUP with it: refused, naming the table" wait_log "SIGHUP: .*per_app.*field 3"
check "SIGHUP with it: the running configuration stays" wait_log "the running configuration stays"
check "the agent still runs" kill -0 $PID
commits=$(grep -c "committed snapshot" "$d/err")
for i in $(seq 21 30); do echo "{\"app\": \"a$((i % 3))\", \"msg\": \"two $i\"}"; done >>"$d/logs/x.log"
check "and still commits" wait_log "committed snapshot" $((commits + 1))
check "the agent runs on after the refused reload" kill -0 $PID

# A configuration that passes every check but cannot start (its syslog socket's path is
# a regular file, which floe leaves alone; a port another process holds is waited for
# instead, test_listen_taken): the previous configuration starts again, the agent goes on.
conf "[app]" 1m
touch "$d/not-a-socket"
sed -i "s#^tables:#  - {type: syslog, listen: \"unix://$d/not-a-socket\"}\ntables:#" "$d/floe.yaml"
kill -HUP $PID
check "SIGHUP with a configuration that cannot start: the previous one runs on" \
	wait_log "the new configuration cannot start (above): the previous configuration runs on"
check "it started again" wait_log "agent .* started" 2
commits=$(grep -c "committed snapshot" "$d/err")
for i in $(seq 31 40); do echo "{\"app\": \"a$((i % 3))\", \"msg\": \"three $i\"}"; done >>"$d/logs/x.log"
check "and commits what comes" wait_log "committed snapshot" $((commits + 1))
conf "[]" 5m

rc=0
kill -TERM $PID
wait $PID || rc=$?
check "SIGTERM: exit 0" test $rc = 0
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err2" || rc=$?
check "a restart with it runs on the last good configuration (exit 0)" test $rc = 0
check "naming the table it refused" grep -q "per_app" "$d/err2"
check "and saying what runs instead" grep -q "running on the last good configuration" "$d/err2"

finish
