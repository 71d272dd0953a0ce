#!/usr/bin/env bash
# A first boot while the store does not answer: no plan of the typed columns can be
# learnt yet, so they are written under provisional field ids. Once the store answers, the
# committer's first contact learns the plan from the table, the spooled files get the
# table's ids before their commit, and the main thread's batch takes the plan at a seal:
# the rows read after that are written under the table's ids, without a restart. Every
# row has its typed columns; nothing lost or doubled.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
source "$(dirname "$0")/typed_s3lib.sh"
typed_s3_start "$T/l"
typed_s3_config typed-learn "{ name: status, type: int }, { name: took, type: double }"

# The store holds every request: to the agent's first boot it is away.
echo 'stall=.*' >"$d/stub/ctl"
echo '{"msg":"one","status":200,"took":1.5}' >"$d/in/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the agent starts without the store" wait_for 60 grep -q 'starting without it' "$d/err"
check "it says the columns take provisional ids for now" grep -q 'provisional field ids' "$d/err"
check "the first line goes to the spool" wait_for 60 spooled
: >"$d/stub/ctl"
check "committed once the store answers" wait_for 120 committed 1
check "the plan is learnt and saved in state_dir" test -s "$d/state/columns"
# Written after the report that carried the plan: the batch has taken it.
echo '{"msg":"two","status":404,"took":"x"}' >>"$d/in/app.log"
check "the second line committed, without a restart" wait_for 120 committed 2
check "the bad value counted for its column" grep -q '"conversion_failures":{"status":0,"took":1}' "$d/state/metrics.json"
stop_pid "$pid" || true

check "the table's schema has the columns under ids 15 and 16" typed_s3_schema status=15:int took=16:double
typed_s3_fetch
check "two live files" test "$(wc -l <"$d/files")" = 2
check "both files carry the typed columns, under the learnt ids" \
	test "$(duck "select count(*) from parquet_schema([$list]) where (name = 'status' and field_id = 15) or (name = 'took' and field_id = 16)")" = '["4"]'
duck "select message, status, took, attrs['status'], attrs['took'] from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	12: {name: 'attrs', type: 'MAP(VARCHAR, VARCHAR)', default_value: NULL},
	15: {name: 'status', type: 'INTEGER', default_value: NULL},
	16: {name: 'took', type: 'DOUBLE', default_value: NULL}}) order by message" >"$d/rows"
check "both rows typed (the second's bad value in attrs), each once" diff - "$d/rows" <<<'["one",200,1.5,null,null]
["two",404,null,null,"x"]'
finish
