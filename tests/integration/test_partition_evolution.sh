#!/usr/bin/env bash
# Partition-spec and sort-order evolution: one table written by three runs of one agent
# whose configuration changes in between: partition_by day(ts), then [day(ts), app], then
# hour(ts) (with sort_by [app, ts] in the second). The table gets a spec per change
# (field ids above last-partition-id, day(ts) keeping its id), each run's files are under
# its spec, manifests never mix specs (python3-avro reads each with its spec's partition
# struct), a spec taken back is reused by id, and DuckDB reads every line exactly once.
# Then floe maintain, after min_age, rewrites the old-spec files into the current spec.
source "$(dirname "$0")/lib.sh"

WH=$T/wh
TBL=$WH/default/logs
mkdir -p "$T/in"

# run N PARTITION [SORT]: appends 300 lines (100 per app, 3 hours) and runs --once.
run() {
	python3 "$FLOE_SRC/tests/integration/gen_app_lines.py" "$T/in/app.log" "run $1" 0 300 3
	cat >"$T/c.yaml" <<YAML
agent: { id: pspec, state_dir: $T/state }
inputs:
  - type: tail
    paths: ["$T/in/*.log"]
    start_at: beginning
    parser: json
    timestamp: { field: time, format: rfc3339 }
tables:
  logs:
    partition_by: [$2]
${3:-}
lake: { warehouse: $WH }
YAML
	local rc=0
	"$FLOE_BIN" run -c "$T/c.yaml" --once --log-level info 2>"$T/run$1.err" || rc=$?
	check "run $1 ($2): run --once succeeds" test $rc = 0
}

specs() { /usr/bin/python3 "$FLOE_SRC/tests/integration/check_specs.py" "$TBL"; }
field() { python3 -c "import json,sys; print(json.dumps(json.load(sys.stdin)$1, sort_keys=True))"; }

run 1 '"day(ts)"'
run 2 '"day(ts)", app' '    sort_by: [app, ts]'
run 3 '"hour(ts)"'

out=$(specs) || out=''
check "the manifests follow their specs ($out)" test -n "$out"
echo "$out"
check "the metadata has three specs" \
	test "$(echo "$out" | field '["specs"]')" = '[[0, ["day(1)"]], [1, ["day(1)", "identity(8)"]], [2, ["hour(1)"]]]'
check "day(ts) keeps field id 1000; app and hour(ts) take 1001 and 1002" \
	test "$(echo "$out" | field '["field_ids"]')" = '[[1000], [1000, 1001], [1002]]'
check "default-spec-id 2, last-partition-id 1002" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(d["default"], d["last_partition_id"])')" = "2 1002"
check "each spec's run is in its own manifests: 300 rows each" \
	test "$(echo "$out" | field '["records"]')" = '{"0": 300, "1": 300, "2": 300}'
check "files: one per day under spec 0, per day and app under 1, per hour under 2" \
	test "$(echo "$out" | field '["files"]')" = '{"0": 1, "1": 3, "2": 3}'
check "sort orders: unsorted (0) and [app, ts] (1); default 0 after run 3" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["sort_orders"], d["default_sort_order"]]))')" = \
	'[[[0, []], [1, ["identity(8) asc", "identity(1) asc"]]], 0]'
check "run 2's data files carry sort_order_id 1, the others none" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(sorted(map(str, d["sort_order_ids"])))')" = \
	"['1', '1', '1', 'None', 'None', 'None', 'None']"

avro_ok=1
for f in "$TBL"/metadata/*.avro; do
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$f" >/dev/null || avro_ok=0
done
check "check_avro.py reads every manifest and list" test $avro_ok = 1

rows=$(rows_sql "$TBL" "SELECT count(*), count(DISTINCT message) FROM t")
check "DuckDB: every line exactly once ($rows)" test "$rows" = '["900","900"]'

# A spec taken back is reused by its id, not added again.
run 4 '"day(ts)", app'
out=$(specs) || out=''
check "[day(ts), app] again is spec 1 again, no fourth spec" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["specs"]), d["default"])')" = "3 1"
rows=$(rows_sql "$TBL" "SELECT count(*), count(DISTINCT message) FROM t")
check "DuckDB after run 4: every line exactly once ($rows)" test "$rows" = '["1200","1200"]'

# floe maintain on a table of three specs: the current spec's small files (runs 2 and 4,
# one per day and app each) are compacted, and the files of specs 0 and 2 (closed, as
# min_age is 0s) are rewritten into spec 1, split by day and app: spec 0's one file into
# 3 (one per app), each of spec 2's 3 hourly files (one app each) into 1. Every row is read once with the same values,
# before and after, and after a kill at each point of the rewrite (the crash leaves the
# table as it was, and the next run deletes the files it left). Its expiry (every
# snapshot but the last, here) deletes the replaced files.
sed 's/^    partition_by:/    properties: { history.expire.max-snapshot-age-ms: 1ms, history.expire.min-snapshots-to-keep: 1 }\n    partition_by:/' \
	"$T/c.yaml" >"$T/m.yaml"
printf 'maintain:\n  min_age: 0s\n' >>"$T/m.yaml"
# Every value of every row, in one digest (messages are unique: they give the order). The
# columns are named: DuckDB adds the directories' Hive partition values as columns.
digest() {
	rows_sql "$TBL" "SELECT count(*), count(DISTINCT message), md5(string_agg(CAST(struct_pack(ts, received_at,
		host, source, \"offset\", facility, severity, app, proc_id, msg_id, message, attrs) AS VARCHAR), chr(10)
		ORDER BY message)) FROM t"
}
before=$(digest)
check "the digest is taken ($before)" test -n "$before"
for point in maintain-respec-after-output maintain-respec-before-replace; do
	rc=0
	FLOE_CRASH_AT=$point "$FLOE_BIN" maintain -c "$T/m.yaml" >/dev/null 2>"$T/crash.err" || rc=$?
	check "maintain dies at $point" test $rc = 99
	check "after the kill at $point: every row once, the same values" test "$(digest)" = "$before"
done
rc=0
"$FLOE_BIN" maintain -c "$T/m.yaml" >"$T/maintain.out" 2>"$T/maintain.err" || rc=$?
cat "$T/maintain.out"
check "maintain succeeds" test $rc = 0
check "maintain rewrote the 4 files of specs 0 and 2" grep -q '; 4 of the files in were of older partition specs;' "$T/maintain.out"
out=$(specs) || out=''
check "after maintain: only spec 1 files are live, 9 of them, with every row" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["files"], d["records"]], sort_keys=True))')" = \
	'[{"1": 9}, {"1": 1200}]'
check "the metadata still has the three specs, 1 the default" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(len(d["specs"]), d["default"])')" = "3 1"
check "no file but the 9 live ones is left: replaced ones expired, the killed runs' removed" \
	test "$(find "$TBL/data" -name '*.parquet' | wc -l)" = 9
after=$(digest)
check "DuckDB after maintain: every row once, the same values ($after)" test "$after" = "$before"
avro_ok=1
for f in "$TBL"/metadata/*.avro; do
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$f" >/dev/null || avro_ok=0
done
check "check_avro.py reads every manifest and list after maintain" test $avro_ok = 1

# The rewritten files are small files of the current spec: the next run compacts them.
rc=0
"$FLOE_BIN" maintain -c "$T/m.yaml" >"$T/maintain2.out" 2>&1 || rc=$?
check "a second maintain compacts them into one file per day and app" \
	test "$rc $(specs | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps(d["files"]))')" = '0 {"1": 3}'
check "DuckDB after the second maintain: the same rows" test "$(digest)" = "$before"

finish
