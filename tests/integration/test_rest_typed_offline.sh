#!/usr/bin/env bash
# A first boot with the REST catalog away, onto a table another agent made with its typed
# columns in another order (bytes 15, status 16; this agent's order gives status 15,
# bytes 16): the rows are written typed at once under provisional ids, and when the
# catalog answers the spooled files get the table's ids before they are committed.
# Read back by field id (DuckDB), every row is there once with its values under the
# right columns, and none kept its typed field in attrs.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh" # wait_for

start_rest_catalog "$T/cat"
port=${REST_URL##*:}
conf() { # conf ID COLUMNS
	mkdir -p "$T/in$1"
	cat >"$T/$1.yaml" <<YAML
agent: { id: $1, state_dir: $T/state$1 }
inputs:
  - { type: tail, paths: ["$T/in$1/*.log"], start_at: beginning, parser: json }
tables:
  logs: { commit_interval: 1s, columns: [ $2 ] }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
}
conf other "{ name: bytes, type: long }, { name: status, type: int }"
conf edge "{ name: status, type: int }, { name: bytes, type: long }"
echo '{"msg":"other-1","status":201,"bytes":7}' >"$T/inother/a.log"
check "the other agent makes the table" "$FLOE_BIN" run -c "$T/other.yaml" --once --log-level warn
fields() { curl -sf "$REST_URL/v1/ws/namespaces/edge/tables/logs" | python3 -c '
import json, sys
m = json.load(sys.stdin)["metadata"]
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(" ".join("%s=%d" % (f["name"], f["id"]) for f in s["fields"] if f["name"] in ("status", "bytes")))'; }
check "the table has bytes as 15 and status as 16" test "$(fields)" = "bytes=15 status=16"

stop_pid "$REST_PID" || true
for i in 1 2 3; do
	echo "{\"msg\":\"edge-$i\",\"status\":$((400 + i)),\"bytes\":$((1000 * i))}" >>"$T/inedge/a.log"
done
"$FLOE_BIN" run -c "$T/edge.yaml" --log-level info 2>"$T/err" &
pid=$!
PIDS+=("$pid")
check "the agent starts without the catalog, its entry listing provisional ids" wait_for 60 bash -c \
	"grep -l '\"provisional\":\[{\"name\":\"status\",\"id\":15,\"type\":\"int\"},{\"name\":\"bytes\",\"id\":16,\"type\":\"long\"}\]' '$T'/stateedge/spool/*.entry"
node "$FLOE_SRC/tests/integration/rest/server.js" --port "$port" --root "$T/cat" >"$T/cat/server2.out" 2>&1 &
REST_PID=$!
PIDS+=("$REST_PID")
wait_log "$T/cat/server2.out" "^listening " 30
check "the spooled files get the table's ids" wait_for 60 grep -q "now has the table.s field ids" "$T/err"
check "the spool empties" wait_for 60 bash -c "! ls '$T'/stateedge/spool/*.entry 2>/dev/null | grep -q ."
check "the agent stops" stop_pid "$pid"
check "the table keeps bytes 15 and status 16" test "$(fields)" = "bytes=15 status=16"
"$FLOE_BIN" inspect -c "$T/edge.yaml" 2>/dev/null | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' >"$T/files"
list=$(sed "s/.*/'&'/" "$T/files" | paste -sd,)
duck() { node "$READER/duck.js" "$@"; }
duck "select message, status, bytes, attrs['status'] from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	12: {name: 'attrs', type: 'MAP(VARCHAR, VARCHAR)', default_value: NULL},
	15: {name: 'bytes', type: 'BIGINT', default_value: NULL},
	16: {name: 'status', type: 'INTEGER', default_value: NULL}}) order by message" >"$T/rows"
check "read by field id, every row once, typed, under the right columns" diff - "$T/rows" <<<'["edge-1",401,"1000",null]
["edge-2",402,"2000",null]
["edge-3",403,"3000",null]
["other-1",201,"7",null]'
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
