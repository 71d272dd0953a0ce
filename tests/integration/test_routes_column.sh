#!/usr/bin/env bash
# A route rule written on a typed column's name (http_status, which takes the field
# status) tests the field the column takes: rules test the parsed fields, before a
# table's columns take them, so such a rule took nothing and every record went to the
# input's table, unsaid. floe check shows the rule on attrs.status; the 500s land in
# errors, typed, the rest in logs; every line once. An aggregation's where and metrics
# written on that name read the same field (they read nothing before: null sums, no
# event kept); a group key on it is a warning (floe check refuses it, floe run logs it),
# since its column would change type.
source "$(dirname "$0")/lib.sh"

d="$T/col"
mkdir -p "$d/logs"
printf '%s\n' 'status=500 n=1' 'status=200 n=2' 'status=503 n=3' 'status=500 n=4' >"$d/logs/app.log"
cat >"$d/floe.yaml" <<YAML
agent: {id: col, state_dir: $d/state}
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: logfmt
    route:
      - { field: http_status, equals: "500", table: errors }
tables:
  logs: { columns: [{name: http_status, type: int, from: status}] }
  errors: { partition_by: [], columns: [{name: http_status, type: int, from: status}] }
aggregations:
  - name: by_status
    window: 1h
    where: { field: http_status, matches: "^5" }
    group_by: [status]
    metrics: [count, {sum: http_status}]
lake: {warehouse: $d/wh}
YAML
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check.out" 2>&1 || true
check "floe check shows the rule on the field the column takes" \
	grep -q 'field: "attrs.status"' "$d/check.out"
check "run --once" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "errors holds the two 500s, in its typed column" \
	test "$(rows_sql "$d/wh/default/errors" "SELECT string_agg(attrs['n'] || ':' || http_status, ',' ORDER BY attrs['n']) FROM t")" = '["1:500,4:500"]'
check "logs holds the others" \
	test "$(rows_sql "$d/wh/default/logs" "SELECT string_agg(attrs['n'] || ':' || http_status, ',' ORDER BY attrs['n']) FROM t")" = '["2:200,3:503"]'
check "the aggregation's where and sum read the column's field" \
	test "$(rows_sql "$d/wh/default/by_status" "SELECT string_agg(status || ':' || count || ':' || CAST(sum_http_status AS BIGINT), ',' ORDER BY status) FROM t")" = '["500:2:1000,503:1:503"]'
sed -i 's/group_by: \[status\]/group_by: [http_status]/' "$d/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check2.out" 2>&1 || rc=$?
check "floe check refuses a group key on the column's name (exit 2)" test $rc = 2
check "naming the field to write" grep -q \
	"key 'aggregations\[0\].group_by\[0\]': 'http_status' is a column that takes the field 'status'.*write 'status'" \
	"$d/check2.out"
finish
