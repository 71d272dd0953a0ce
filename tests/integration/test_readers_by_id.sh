#!/usr/bin/env bash
# Every reader the suite has reads one table across four schema versions and two
# partition specs (day, then hour), resolving
# columns by field id as an Iceberg reader must: a column added (took), one renamed with
# renamed_from (status -> http_status, its id kept), one promoted from int to long
# (code). DuckDB, arrow-rs (parquet-wasm) and hyparquet each read every live data file
# with the same resolver (reader/read_by_id.mjs: the file's field ids against the
# current schema) and must give the same rows: old files under today's names, nulls in
# columns added since, ints read as the longs they became. python3-avro reads every
# manifest and manifest list, those of each spec with its partition struct.
source "$(dirname "$0")/lib.sh"

mkdir -p "$T/in"
cfg() { # cfg N COLUMNS-YAML [PARTITION_BY]
	cat >"$T/v$1.yaml" <<YAML
agent: { id: readers, state_dir: $T/state }
inputs: [ { type: tail, paths: ["$T/in/*.log"], start_at: beginning, parser: json } ]
tables:
  logs:
    partition_by: ${3:-["day(ts)"]}
    columns:
$2
lake: { warehouse: $T/wh }
YAML
}
TBL=$T/wh/default/logs
meta() { newest_metadata "$TBL"; }
schemas() {
	python3 - "$(meta)" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(len(m["schemas"]), " ".join("%d:%s:%s" % (f["id"], f["name"], f["type"]) for f in s["fields"] if f["id"] > 14))
PY
}
run() { # run N LINE: one more line, one more run and commit
	echo "$2" >>"$T/in/app.log"
	check "v$1: run" "$FLOE_BIN" run -c "$T/v$1.yaml" --once --log-level warn
}

cfg 1 "      - { name: status, type: int }
      - { name: code, type: int }"
run 1 '{"msg":"one","status":200,"code":7,"took":1.5}'
check "v1: status and code" test "$(schemas)" = "2 15:status:int 16:code:int"
cfg 2 "      - { name: status, type: int }
      - { name: code, type: int }
      - { name: took, type: double }"
run 2 '{"msg":"two","status":404,"code":8,"took":2.25}'
check "v2: took added" test "$(schemas)" = "3 15:status:int 16:code:int 17:took:double"
cfg 3 "      - { name: http_status, type: int, from: status, renamed_from: status }
      - { name: code, type: int }
      - { name: took, type: double }"
run 3 '{"msg":"three","status":500,"code":9,"took":3.5}'
check "v3: status renamed, its id kept" test "$(schemas)" = "4 15:http_status:int 16:code:int 17:took:double"
cfg 4 "      - { name: http_status, type: int, from: status, renamed_from: status }
      - { name: code, type: long }
      - { name: took, type: double }"
run 4 '{"msg":"four","status":503,"code":4294967296,"took":4.75}'
check "v4: code promoted to long" test "$(schemas)" = "5 15:http_status:int 16:code:long 17:took:double"
# A second partition spec: the same columns, rows now partitioned by hour.
cfg 5 "      - { name: http_status, type: int, from: status, renamed_from: status }
      - { name: code, type: long }
      - { name: took, type: double }" '["hour(ts)"]'
run 5 '{"msg":"five","status":201,"code":5,"took":5.5}'
specs() {
	python3 - "$(meta)" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
print(m["default-spec-id"], " ".join("%d:%s" % (s["spec-id"], ",".join(f["transform"] for f in s["fields"])) for s in m["partition-specs"]))
PY
}
check "v5: a second partition spec, the default" test "$(specs)" = "1 0:day 1:hour"

mapfile -t FILES < <(live_files "$TBL")
check "five data files, one a run" test "${#FILES[@]}" -eq 5
node "$READER/read_by_id.mjs" "$(meta)" "${FILES[@]}" >"$T/rows.out" 2>"$T/rows.err"
check "DuckDB, arrow-rs and hyparquet read the same rows by field id" grep -q "read the same 5 rows" "$T/rows.err"
# offset, message, http_status, code, took: a file of v1 has no took; a file before v3
# names status otherwise; code was an int before v4.
check "the rows under today's names and types" diff - "$T/rows.out" <<'ROWS'
["offset","message","http_status:int","code:long","took:double"]
["0","one","200","7",null]
["47","two","404","8","2.25"]
["95","three","500","9","3.5"]
["144","four","503","4294967296","4.75"]
["202","five","201","5","5.5"]
ROWS
check "python3-avro reads every manifest and manifest list" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$TBL"/metadata/*.avro
finish
