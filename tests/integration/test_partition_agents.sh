#!/usr/bin/env bash
# Two agents with different partition_by on one table, committing at the same time: agent
# alpha with day(ts), agent beta with [day(ts), app], each tailing its own file and
# committing every second. Neither fails; each data file is in a manifest of the spec of
# the agent that wrote it (the table ends with both specs), and DuckDB reads every line
# of both exactly once.
source "$(dirname "$0")/lib.sh"

WH=$T/wh
mkdir -p "$T/alpha" "$T/beta"
agent() { # NAME PARTITION
	cat >"$T/$1.yaml" <<YAML
agent: { id: $1, state_dir: $T/state-$1 }
inputs:
  - type: tail
    paths: ["$T/$1/*.log"]
    start_at: beginning
    parser: json
    timestamp: { field: time, format: rfc3339 }
tables:
  logs:
    partition_by: [$2]
    commit_interval: 1s
lake: { warehouse: $WH }
YAML
}
lines() { # NAME FROM COUNT
	python3 "$FLOE_SRC/tests/integration/gen_app_lines.py" "$T/$1/app.log" "$1" "$2" "$3"
}
committed() { # NAME ROWS
	python3 -c "import json,sys; sys.exit(0 if json.load(open('$T/state-$1/metrics.json'))['rows_committed']>=$2 else 1)" 2>/dev/null
}

# The table is created by alpha's first run, so both start on an existing table.
agent alpha '"day(ts)"'
agent beta '"day(ts)", app'
lines alpha 0 10
check "alpha creates the table" "$FLOE_BIN" run -c "$T/alpha.yaml" --once --log-level warn
for a in alpha beta; do
	"$FLOE_BIN" run -c "$T/$a.yaml" --log-level info 2>"$T/$a.err" &
	PIDS+=($!)
	eval "PID_$a=$!"
done
wait_log "$T/alpha.err" "agent .* started"
wait_log "$T/beta.err" "agent .* started"
# Five rounds of lines for both, each waited for until both committed it (rows_committed
# counts the daemon's rows).
for r in 1 2 3 4 5; do
	lines alpha $((10 + (r - 1) * 40)) 40
	lines beta $(((r - 1) * 40)) 40
	for i in $(seq 1 300); do committed alpha $((r * 40)) && committed beta $((r * 40)) && break; sleep 0.1; done
done
check "alpha committed its 200 lines (and 10 of its first run)" committed alpha 200
check "beta committed its 200 lines" committed beta 200
check "alpha stops cleanly" stop_pid "$PID_alpha"
check "beta stops cleanly" stop_pid "$PID_beta"
check "neither agent logged an error" bash -c "! grep -h ' error' '$T/alpha.err' '$T/beta.err'"

out=$(/usr/bin/python3 "$FLOE_SRC/tests/integration/check_specs.py" "$WH/default/logs") || out=''
echo "$out"
check "the table has both specs" \
	test "$(echo "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["specs"]))')" = '[[0, ["day(1)"]], [1, ["day(1)", "identity(8)"]]]'
check "alpha's files are in manifests of spec 0, beta's of spec 1" \
	test "$(echo "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["writers"], sort_keys=True))')" = '{"0": ["alpha"], "1": ["beta"]}'
check "rows per spec: 210 and 200" \
	test "$(echo "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["records"], sort_keys=True))')" = '{"0": 210, "1": 200}'
rows=$(rows_sql "$WH/default/logs" "SELECT count(*), count(DISTINCT message) FROM t")
check "DuckDB: every line of both agents exactly once ($rows)" test "$rows" = '["410","410"]'
finish
