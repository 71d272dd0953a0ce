#!/usr/bin/env bash
# A column removed from the configuration while files written under it wait in the
# spool: the commit still gives the table that column (under the id its files carry),
# optional, so the files' values read by id and the id is never handed to another
# column. The store is the stub, made to hold every data upload for a while: the table
# is read, the plan learnt, and the files wait in the spool.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
export AWS_EC2_METADATA_DISABLED=true

d=$T/s
mkdir -p "$d/in" "$d/got"
stub_start "$d/stub"
cfg() {
	cat >"$d/floe.yaml" <<YAML
agent: { id: typed-spooled, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning, parser: json }
tables:
  logs:
    commit_interval: 1s
    columns: [ $1 ]
lake:
  warehouse: s3://bkt/typed
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$STUB_PORT", region: us-east-1, path_style: true, request_timeout: 2s }
YAML
}
inspect() { "$FLOE_BIN" inspect --json --endpoint "http://127.0.0.1:$STUB_PORT" s3://bkt/typed/default/logs 2>/dev/null; }
m() { metric "$d/state/metrics.json" "$1"; }
spooled() { [ -f "$d/state/metrics.json" ] && [ "$(m spool_bytes)" -gt 0 ]; }

cfg "{ name: status, type: int }"
echo '{"msg":"one","status":200,"took":1.5}' >"$d/in/app.log"
check "first run: the table with status" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn

# took added; the data uploads held: the table is read, the plan learnt, the file spooled.
echo 'stall=^PUT .*/data/' >"$d/stub/ctl"
cfg "{ name: status, type: int }, { name: took, type: double }"
echo '{"msg":"two","status":404,"took":2.5}' >>"$d/in/app.log"
"$FLOE_BIN" run -c "$d/floe.yaml" 2>"$d/err" &
pid=$!
PIDS+=("$pid")
check "the second line goes to the spool" wait_for 60 spooled
stop_pid "$pid" || true
check "it waits in the spool" spooled

# took removed from the list, the store answers: the spooled file is committed, took kept.
: >"$d/stub/ctl"
cfg "{ name: status, type: int }"
check "third run: the spool committed" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "all committed" test "$(m spool_bytes)" = 0
inspect >"$d/inspect.json"
check "the table has took under the id its file carries, optional" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["schema"]
f = {x["name"]: (x["id"], x["type"], x["required"]) for x in s["fields"]}
sys.exit(0 if f.get("status") == (15, "int", False) and f.get("took") == (16, "double", False) else 1)' "$d/inspect.json"
python3 -c 'import json,sys; [print(f["path"]) for f in json.load(open(sys.argv[1]))["files"]]' "$d/inspect.json" >"$d/files"
i=0
while read -r uri; do
	i=$((i + 1))
	curl -sf "http://127.0.0.1:$STUB_PORT/${uri#s3://}" -o "$d/got/$i.parquet"
done <"$d/files"
list=$(ls "$d"/got/*.parquet | sed "s/.*/'&'/" | paste -sd,)
duck "select message, status, took from read_parquet([$list], schema = map {
	11: {name: 'message', type: 'VARCHAR', default_value: NULL},
	15: {name: 'status', type: 'INTEGER', default_value: NULL},
	16: {name: 'took', type: 'DOUBLE', default_value: NULL}}) order by message" >"$d/rows"
check "both rows once, the spooled one's took read by id" diff - "$d/rows" <<<'["one",200,null]
["two",404,2.5]'
finish
