#!/usr/bin/env bash
# A fleet's configuration push that breaks the file, on a device nobody logs in to. floe
# run keeps the configuration each start ran with (state_dir/config.last-good.yaml) and
# runs on it when a later start finds the file unusable, instead of exiting 2 (which the
# unit does not restart): the lines go on into the table, /healthz answers 503 naming
# the file, floe_config_fallback is 1. Each kind of breakage: a wrong value, a file cut
# short in the middle (a YAML error), a new column type the table refuses at the start,
# and --once from a timer. A SIGHUP with the file mended takes it, and it becomes the
# copy. agent.keep_last_good: false keeps no copy (the old exit 2). floe check still
# refuses the broken file, and says what run would do; floe status and floe maintain
# read the copy.
source "$(dirname "$0")/lib.sh"

d="$T/fb"
mkdir -p "$d/logs"
conf() { # conf [EXTRA-TABLES-KEYS]
	cat >"$d/floe.yaml" <<YAML
agent:
  id: fb
  state_dir: $d/state
  http: { listen: "127.0.0.1:0" }
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: json
tables:
  logs:
    commit_interval: 1s
${1:-}
lake:
  warehouse: $d/wh
YAML
}
TABLE="$d/wh/default/logs"
COPY="$d/state/config.last-good.yaml"
n=0
lines() { # lines N: N more JSON lines, numbered on from the last
	local i
	for ((i = 0; i < $1; i++)); do
		n=$((n + 1))
		echo "{\"msg\":\"line $n\",\"code\":$n}" >>"$d/logs/app.log"
	done
}
health_has() { wait_for 10 sh -c "curl -s http://127.0.0.1:$port/healthz | grep -q \"\$1\"" _ "$1"; }
rows_are() { # rows_are N: the table holds lines 1..N, each once
	[ "$(rows_sql "$TABLE" "SELECT count(*) || ' ' || count(DISTINCT message) FROM t")" = "[\"$1 $1\"]" ]
}

# 1. A good file: its start keeps it.
conf "    columns: [{ name: code, type: long }]"
lines 10
run_serving "$d/floe.yaml" "$d/err1"
check "a good file: the agent serves" test -n "$port"
check "a good file: the copy is kept at the start" wait_for 10 test -s "$COPY"
check "a good file: the copy names the file and holds it after three lines" \
	sh -c "sed -n 2p '$COPY' | grep -qx '# file: $d/floe.yaml' && tail -n +4 '$COPY' | cmp -s - '$d/floe.yaml'"
check "a good file: its lines are committed" wait_for 20 rows_are 10
check "a good file: floe_config_fallback 0" prom_is "floe_config_fallback 0"
check "a good file: stops cleanly" stop_pid "$pid"

# 2. A wrong value: check refuses it, run runs on the copy.
sed -i 's/start_at: beginning/start_at: beginnig/' "$d/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check2" || rc=$?
check "a wrong value: check exits 2" test $rc = 2
check "a wrong value: check says run would use the copy" grep -q "floe run runs on the last good configuration kept in $COPY" "$d/check2"
lines 10
run_serving "$d/floe.yaml" "$d/err2"
check "a wrong value: the agent runs and serves" test -n "$port"
check "a wrong value: the log names the error" grep -q "start_at': expected one of beginning, end, got 'beginnig'" "$d/err2"
check "a wrong value: the log says it runs on the copy" grep -q "running on the last good configuration" "$d/err2"
check "a wrong value: /healthz names the file (503)" health_has "$d/floe.yaml cannot be used"
check "a wrong value: floe_config_fallback 1" prom_is "floe_config_fallback 1"
check "a wrong value: the new lines are committed" wait_for 20 rows_are 20
"$FLOE_BIN" status -c "$d/floe.yaml" >"$d/status2" 2>&1 || true
check "a wrong value: floe status reads the state the copy names, and says so" \
	grep -q "^configuration: the agent runs on its last good configuration ($COPY)" "$d/status2"
check "a wrong value: floe status calls it unhealthy" grep -q "^health: unhealthy: the configuration file cannot be used" "$d/status2"
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/maintain2" 2>&1 || rc=$?
check "a wrong value: floe maintain (its daily timer) runs on the copy too" test $rc = 0

# 3. Mended while it runs: a SIGHUP takes the file, which becomes the copy.
sed -i 's/start_at: beginnig/start_at: beginning/; s/commit_interval: 1s/commit_interval: 2s/' "$d/floe.yaml"
kill -HUP "$pid"
check "mended: the reload takes the file" log_has "$d/err2" "SIGHUP: starting again with the new configuration" 1 "$pid"
check "mended: /healthz is ok" health_has "^ok"
check "mended: floe_config_fallback 0" prom_is "floe_config_fallback 0"
check "mended: the copy is the mended file" wait_for 10 sh -c "tail -n +4 '$COPY' | cmp -s - '$d/floe.yaml'"
lines 5
check "mended: the lines are committed" wait_for 20 rows_are 25
check "mended: stops cleanly" stop_pid "$pid"

# 4. A file cut short in the middle (a YAML error), as a push interrupted leaves it.
cp "$d/floe.yaml" "$d/good.yaml"
head -c 150 "$d/good.yaml" >"$d/floe.yaml"
printf '\n  - [unclosed\n' >>"$d/floe.yaml"
lines 5
run_serving "$d/floe.yaml" "$d/err4"
check "cut short: the agent runs on the copy" log_has "$d/err4" "running on the last good configuration" 1 "$pid"
check "cut short: the new lines are committed" wait_for 20 rows_are 30
check "cut short: stops cleanly" stop_pid "$pid"

# 5. A file the table refuses at the start: a column retyped long -> string.
conf "    columns: [{ name: code, type: string }]"
lines 5
run_serving "$d/floe.yaml" "$d/err5"
check "retyped: the start names the refusal" log_has "$d/err5" "column 'code': the table has field .* as long; floe writes string" 1 "$pid"
check "retyped: the agent runs on the copy" log_has "$d/err5" "running on the last good configuration" 1 "$pid"
check "retyped: /healthz names the file" health_has "cannot be used"
check "retyped: the new lines are committed" wait_for 20 rows_are 35
check "retyped: stops cleanly" stop_pid "$pid"
check "retyped: the copy is still the good file" sh -c "tail -n +4 '$COPY' | cmp -s - '$d/good.yaml'"

# 6. --once from a timer, with the file broken: the copy runs, and commits.
sed -i 's/commit_interval: 1s/commit_interval: x/' "$d/floe.yaml"
lines 5
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err6" || rc=$?
check "--once: exits 0 on the copy" test $rc = 0
check "--once: said so" grep -q "running on the last good configuration" "$d/err6"
check "--once: the lines are committed" rows_are 40

# 7. agent.keep_last_good: false. A start with it removes the copy; a broken file then
# stops the agent (exit 2), as before there was a copy.
cp "$d/good.yaml" "$d/floe.yaml"
sed -i 's/^  id: fb$/  id: fb\n  keep_last_good: false/' "$d/floe.yaml"
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err7" || true
check "keep_last_good false: the copy is removed" test ! -e "$COPY"
sed -i 's/start_at: beginning/start_at: beginnig/' "$d/floe.yaml"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err7b" || rc=$?
check "keep_last_good false: a broken file stops the agent (exit 2)" test $rc = 2

# 8. A copy of another file is not taken: the state_dir's copy was made from good.yaml,
# a broken floe.yaml naming the same state_dir exits 2.
rc=0
"$FLOE_BIN" run -c "$d/good.yaml" --once 2>/dev/null || rc=$?
check "another file's copy: good.yaml runs and is kept" test $rc = 0 -a -s "$COPY"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err8" || rc=$?
check "another file's copy: not taken (exit 2)" test $rc = 2
check "another file's copy: said so" grep -q "is the last good configuration of $d/good.yaml, not of $d/floe.yaml" "$d/err8"
finish
