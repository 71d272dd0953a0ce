#!/usr/bin/env bash
# A configuration against the tables of a REST catalog, as against a warehouse's: an
# aggregation whose group_by changed, or a typed column whose type the table's field
# cannot take, is refused by `floe check` (exit 2, naming the table and the field), so a
# unit's ExecStartPre keeps the agent on its old configuration instead of letting `floe
# run` fail for good; a SIGHUP with it is refused before anything stops, the running
# configuration goes on and still commits.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh" # wait_for

start_rest_catalog "$T/cat"
mkdir -p "$T/logs"
conf() { # conf GROUP_BY STATUS_TYPE
	cat >"$T/floe.yaml.new" <<YAML
agent: { id: edge-check, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning, parser: json }
tables:
  logs:
    commit_interval: 1s
    columns:
      - { name: status, type: $2 }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
aggregations:
  - { name: per_app, window: 1m, group_by: $1, metrics: [count], max_groups: 100 }
YAML
	mv "$T/floe.yaml.new" "$T/floe.yaml"
}
line() { echo "{\"app\": \"a$(($1 % 3))\", \"status\": $((200 + $1 % 2)), \"msg\": \"$2 $1\"}"; }
commits() { grep -c "committed snapshot" "$T/run.log"; }
more_commits() { [ "$(commits)" -gt "$1" ]; }

conf "[app]" int
for i in $(seq 1 20); do line "$i" one; done >"$T/logs/x.log"
rc=0
"$FLOE_BIN" check -c "$T/floe.yaml" >"$T/check0" 2>&1 || rc=$?
check "floe check passes before the tables exist (exit $rc)" test $rc = 0
"$FLOE_BIN" run -c "$T/floe.yaml" --log-level info 2>"$T/run.log" &
pid=$!
PIDS+=("$pid")
check "the logs table commits" wait_for 60 more_commits 0
check "the catalog has both tables" curl -sf "$REST_URL/v1/ws/namespaces/edge/tables/per_app" -o /dev/null
rc=0
"$FLOE_BIN" check -c "$T/floe.yaml" >"$T/check1" 2>&1 || rc=$?
check "floe check passes the configuration that made them (exit $rc)" test $rc = 0

conf "[]" int
rc=0
"$FLOE_BIN" check -c "$T/floe.yaml" >/dev/null 2>"$T/check2" || rc=$?
check "floe check refuses the changed aggregation (exit $rc)" test $rc = 2
check "and names the catalog's table and the field" \
	grep -q "per_app in the REST catalog $REST_URL.*field 3 is string 'app'" "$T/check2"
kill -HUP "$pid"
check "SIGHUP with it: refused before anything stops" \
	wait_log "$T/run.log" "SIGHUP: .*per_app in the REST catalog.*field 3" 30
check "SIGHUP with it: the running configuration stays" wait_log "$T/run.log" "the running configuration stays" 10
check "the running configuration did not stop for it" test "$(grep -c "the new configuration takes over" "$T/run.log")" = 0

conf "[app]" boolean
rc=0
"$FLOE_BIN" check -c "$T/floe.yaml" >/dev/null 2>"$T/check3" || rc=$?
check "floe check refuses a column the table's field cannot take (exit $rc)" test $rc = 2
check "and names the table, the column and both types" \
	grep -q "tables.logs.columns: table logs in the REST catalog.*status" "$T/check3"

conf "[app]" int
n=$(commits)
for i in $(seq 21 30); do line "$i" two; done >>"$T/logs/x.log"
check "the agent runs on and commits" wait_for 30 more_commits "$n"
check "it runs" kill -0 "$pid"
check "the agent stops" stop_pid "$pid"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
