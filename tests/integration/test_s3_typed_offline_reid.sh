#!/usr/bin/env bash
# A first boot offline onto tables another agent already made: the typed columns are
# written under provisional field ids at once, and before the spooled files are committed
# they get the ids the table gives those names, which here are not the provisional ones
# (the other agent declared the columns in another order: bytes 15, status 16, where this
# agent's order gives status 15, bytes 16); a restart, still offline, with bytes taken out
# of the list and took put in (under the provisional id bytes had) still commits bytes
# (the table keeps the column) and gives took an id of its own. Read back by field id,
# every row is there once with its values under the right columns. A table whose column has a type the
# spooled files cannot live with (status is a string there, an int here) refuses the
# commit with an error naming the table, the column and both types, and keeps the
# entries in the spool. The store is the in-memory stub (s3_stub.py), holding every
# request while it is "away".
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
source "$(dirname "$0")/typed_s3lib.sh"
typed_s3_start "$T/r"

# conf ID STATE LOGS-COLUMNS ODD-STATUS-TYPE: an agent writing logs (JSON lines of
# in/*.log) and the table odd (JSON lines of odd/*.log).
conf() {
	cat >"$d/$1.yaml" <<YAML
agent: { id: $1, state_dir: $2 }
inputs:
  - { type: tail, paths: ["$d/in$1/*.log"], start_at: beginning, parser: json }
  - { type: tail, paths: ["$d/odd$1/*.log"], start_at: beginning, parser: json, table: odd }
tables:
  logs: { commit_interval: 1s, columns: [ $3 ] }
  odd: { commit_interval: 1s, partition_by: [], columns: [ { name: status, type: $4 } ] }
YAML
	typed_s3_lake >>"$d/$1.yaml"
	mkdir -p "$d/in$1" "$d/odd$1"
}
conf other "$d/other" "{ name: bytes, type: long }, { name: status, type: int }" string
conf edge "$d/state" "{ name: status, type: int }, { name: bytes, type: long }" int

echo '{"msg":"other-1","status":201,"bytes":7}' >"$d/inother/a.log"
echo '{"msg":"odd-other-1","status":"fine"}' >"$d/oddother/a.log"
check "the other agent makes the tables" "$FLOE_BIN" run -c "$d/other.yaml" --once --log-level warn
check "the table has bytes as 15 and status as 16" typed_s3_schema bytes=15:long status=16:int
odd_id=$(inspect odd | python3 -c 'import json,sys; print([f["id"] for f in json.load(sys.stdin)["schema"]["fields"] if f["name"] == "status"][0])')
check "odd has status as a string" test -n "$odd_id"

# This agent's first boot: the store holds every request.
echo 'stall=.*' >"$d/stub/ctl"
for i in 1 2 3; do
	echo "{\"msg\":\"edge-$i\",\"status\":$((400 + i)),\"bytes\":$((1000 * i))}" >>"$d/inedge/a.log"
done
echo '{"msg":"odd-edge-1","status":500}' >"$d/oddedge/a.log"
"$FLOE_BIN" run -c "$d/edge.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the agent starts without the store" wait_for 60 grep -q 'starting without it' "$d/err"
check "its logs entry lists status 15 and bytes 16 as provisional" wait_for 60 bash -c \
	"grep -l '\"provisional\":\[{\"name\":\"status\",\"id\":15,\"type\":\"int\"},{\"name\":\"bytes\",\"id\":16,\"type\":\"long\"}\]' '$d'/state/spool/*.entry"
check "its odd entry lists status 15 as provisional" wait_for 60 bash -c \
	"grep -l '\"provisional\":\[{\"name\":\"status\",\"id\":15,\"type\":\"int\"}\]' '$d'/state/tables/odd/*.entry"
# Still offline, the power goes and the columns list changes: bytes out, took in. took's
# provisional id is the one bytes had in the files that wait.
kill -9 "$pid"
wait "$pid" 2>/dev/null || true
conf edge "$d/state" "{ name: status, type: int }, { name: took, type: double }" int
echo '{"msg":"edge-4","status":404,"took":2.5}' >>"$d/inedge/a.log"
: >"$d/err"
"$FLOE_BIN" run -c "$d/edge.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the restart, still offline, lists status 15 and took 16 as provisional" wait_for 60 bash -c \
	"grep -l '\"provisional\":\[{\"name\":\"status\",\"id\":15,\"type\":\"int\"},{\"name\":\"took\",\"id\":16,\"type\":\"double\"}\]' '$d'/state/spool/*.entry"
: >"$d/stub/ctl"
check "the spooled logs files get the table's ids" wait_for 120 bash -c "grep -c 'of the logs table .* now has the table.s field ids' '$d/err' | grep -qx 2"
check "odd refuses, naming the table, the column and both types" \
	wait_for 120 bash -c "grep 'odd' '$d/err' | grep 'status' | grep -q 'string'"
check "the logs spool empties" wait_for 120 bash -c "! ls '$d'/state/spool/*.entry 2>/dev/null | grep -q ."
check "odd's entry stays in its spool" bash -c "ls '$d'/state/tables/odd/*.entry | grep -q ."
check "odd's files stay too, unchanged" bash -c "ls '$d'/state/tables/odd/*-0.parquet | grep -q . && ! ls '$d'/state/tables/odd/ | grep -q '\.ids\.'"
check "the agent runs on" kill -0 "$pid"
stop_pid "$pid" || true
grep -E 'odd.*status' "$d/err" | head -2 | sed 's/^/  /'
check "odd still has only the other agent's row" \
	test "$(inspect odd | python3 -c 'import json,sys; print(sum(f["records"] for f in json.load(sys.stdin)["files"]))')" = 1

check "the table keeps bytes 15 and status 16, and took gets 17" typed_s3_schema bytes=15:long status=16:int took=17:double
typed_s3_fetch
check "the rewritten files carry the table's ids" \
	test "$(duck "select count(*) from parquet_schema([$list]) where (name = 'status' and field_id = 16) or (name = 'bytes' and field_id = 15) or (name = 'took' and field_id = 17)")" = "[\"$(( 2 * $(wc -l <"$d/files") ))\"]"
duck "select message, status, bytes, took, attrs['status'] from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	12: {name: 'attrs', type: 'MAP(VARCHAR, VARCHAR)', default_value: NULL},
	15: {name: 'bytes', type: 'BIGINT', default_value: NULL},
	16: {name: 'status', type: 'INTEGER', default_value: NULL},
	17: {name: 'took', type: 'DOUBLE', default_value: NULL}}) order by message" >"$d/rows"
check "read by field id, every row once with its values under the right columns" diff - "$d/rows" <<<'["edge-1",401,"1000",null,null]
["edge-2",402,"2000",null,null]
["edge-3",403,"3000",null,null]
["edge-4",404,null,2.5,null]
["other-1",201,"7",null,null]'
finish
