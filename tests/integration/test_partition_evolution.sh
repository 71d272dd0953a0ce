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
# one per day and app each) are compacted, with a manifest of that spec only; the files
# of specs 0 and 2 are left under their specs, and every line is still read once.
# Its expiry (every snapshot but the last, here) deletes the compacted files and keeps
# every file of the other specs.
sed 's/^    partition_by:/    properties: { history.expire.max-snapshot-age-ms: 1ms, history.expire.min-snapshots-to-keep: 1 }\n    partition_by:/' \
	"$T/c.yaml" >"$T/m.yaml"
printf 'maintain:\n  min_age: 0s\n' >>"$T/m.yaml"
rc=0
"$FLOE_BIN" maintain -c "$T/m.yaml" >"$T/maintain.out" 2>"$T/maintain.err" || rc=$?
cat "$T/maintain.out"
check "maintain succeeds" test $rc = 0
check "maintain compacted the 3 partitions of spec 1 (6 files)" grep -q '^compacted 3 partitions: 6 files' "$T/maintain.out"
out=$(specs) || out=''
check "after maintain: manifests still per spec, spec 1's rows in 3 files" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["files"], d["records"]], sort_keys=True))')" = \
	'[{"0": 1, "1": 3, "2": 3}, {"0": 300, "1": 600, "2": 300}]'
check "expiry deleted the 6 compacted files: the 7 live ones (3 specs) are left" \
	test "$(find "$TBL/data" -name '*.parquet' | wc -l)" = 7
rows=$(rows_sql "$TBL" "SELECT count(*), count(DISTINCT message) FROM t")
check "DuckDB after maintain: every line exactly once ($rows)" test "$rows" = '["1200","1200"]'
avro_ok=1
for f in "$TBL"/metadata/*.avro; do
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$f" >/dev/null || avro_ok=0
done
check "check_avro.py reads every manifest and list after maintain" test $avro_ok = 1

finish
