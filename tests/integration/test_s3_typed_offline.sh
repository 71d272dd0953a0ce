#!/usr/bin/env bash
# Typed columns on an S3 table, and a restart while the store does not answer: the agent
# starts without it, writes the typed columns under the field ids it saved in state_dir
# when it last reached the table (not into attrs, not under guessed ids), and commits
# them once the store answers again. The store is the in-memory stub (s3_stub.py), made
# to hold every request while it is "away", so the table it keeps survives.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
source "$(dirname "$0")/typed_s3lib.sh"
typed_s3_start "$T/o"
typed_s3_config typed-s3 "{ name: status, type: int }, { name: took, type: double }"

echo '{"msg":"one","status":200,"took":1.5}' >"$d/in/app.log"
check "first run, the store up" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "the table's schema has the columns under ids 15 and 16" typed_s3_schema status=15:int took=16:double
check "the plan is kept in state_dir" test -s "$d/state/columns"

# The store holds every request from now on: to the agent it is away.
echo 'stall=.*' >"$d/stub/ctl"
echo '{"msg":"two","status":404,"took":"x"}' >>"$d/in/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the agent starts without the store" wait_for 60 grep -q 'starting without it' "$d/err"
check "no warning that the columns stay in attrs" bash -c "! grep -q 'their fields stay in attrs' '$d/err'"
check "the line goes to the spool" wait_for 60 spooled
: >"$d/stub/ctl"
check "committed once the store answers" wait_for 120 committed 1
check "the bad value counted for its column" grep -q '"conversion_failures":{"status":0,"took":1}' "$d/state/metrics.json"
stop_pid "$pid" || true

# Both files, fetched from the stub and read by field id.
typed_s3_fetch
check "two live files" test "$(wc -l <"$d/files")" = 2
check "the offline file carries the saved ids" \
	test "$(duck "select count(*) from parquet_schema([$list]) where (name = 'status' and field_id = 15) or (name = 'took' and field_id = 16)")" = '["4"]'
duck "select message, status, took, attrs['took'] from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	12: {name: 'attrs', type: 'MAP(VARCHAR, VARCHAR)', default_value: NULL},
	15: {name: 'status', type: 'INTEGER', default_value: NULL},
	16: {name: 'took', type: 'DOUBLE', default_value: NULL}}) order by message" >"$d/rows"
check "both rows typed, the bad value kept in attrs" diff - "$d/rows" <<<'["one",200,1.5,null]
["two",404,null,"x"]'
finish
