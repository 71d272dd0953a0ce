#!/usr/bin/env bash
# Typed columns of a table other than logs, learnt at the committer's first contact: the
# agent's first start finds the store away, so the access table's plan cannot be learnt;
# its lines wait in the spool typed under a provisional field id, the table is reached,
# the plan is learnt and saved beside the table's spool, the spooled files get the
# table's id before they are committed, and the lines read after it are written under it. The store is the in-memory stub
# (s3_stub.py), holding every request while it is "away".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
source "$(dirname "$0")/typed_s3lib.sh"
typed_s3_start "$T/o"
cat >"$d/floe.yaml" <<YAML
agent: { id: typed-table, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning, parser: json, table: access }
tables:
  logs: { commit_interval: 1s }
  access: { commit_interval: 1s, partition_by: [], columns: [{ name: status, type: int }] }
YAML
typed_s3_lake >>"$d/floe.yaml"
access() { inspect access; }
# has_files N: the access table has N live files or more.
has_files() {
	local n
	n=$(access | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["files"]))' 2>/dev/null)
	[ "${n:-0}" -ge "$1" ]
}

echo 'stall=.*' >"$d/stub/ctl"
echo '{"msg":"one","status":200}' >"$d/in/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the agent starts without the store" wait_for 60 grep -q 'starting without it' "$d/err"
check "no plan saved for access yet" test ! -e "$d/state/tables/access/columns"
check "the spooled entry lists its provisional column" \
	wait_for 60 bash -c "grep -l '\"provisional\":\[{\"name\":\"status\",\"id\":15,\"type\":\"int\"}' '$d'/state/tables/access/*.entry"
: >"$d/stub/ctl"
check "the access table is reached and its plan learnt" \
	wait_for 120 grep -q 'columns: table access was reached' "$d/err"
check "the plan is saved beside access's spool" test -s "$d/state/tables/access/columns"
check "the first line is committed" wait_for 120 has_files 1
echo '{"msg":"two","status":404}' >>"$d/in/app.log"
check "the second line is committed" wait_for 120 has_files 2
stop_pid "$pid" || true

typed_s3_fetch access
id=$(access | python3 -c 'import json,sys; print([f["id"] for f in json.load(sys.stdin)["schema"]["fields"] if f["name"] == "status"][0])')
check "access's schema has status" test -n "$id"
duck "select message, status, attrs['status'] from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	12: {name: 'attrs', type: 'MAP(VARCHAR, VARCHAR)', default_value: NULL},
	$id: {name: 'status', type: 'INTEGER', default_value: NULL}}) order by message" >"$d/rows"
check "both lines are typed under the table's id, the spooled one too" \
	diff - "$d/rows" <<<'["one",200,null]
["two",404,null]'
finish
