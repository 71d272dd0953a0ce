#!/usr/bin/env bash
# Partition-spec and sort-order evolution through an Iceberg REST catalog (the test
# catalog, which checks add-spec's field ids and sources): three runs with partition_by
# day(ts), then [day(ts), app] with sort_by [app, ts], then hour(ts). A change is sent with
# the data commit as add-spec + set-default-spec asserting the default it was built on
# (likewise add-sort-order + set-default-sort-order); the catalog's table ends with three
# specs, manifests per spec, and every line once; the OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"

start_rest_catalog "$T/cat"
mkdir -p "$T/logs"
run() { # N PARTITION [SORT]
	python3 "$FLOE_SRC/tests/integration/gen_app_lines.py" "$T/logs/app.log" "run $1" 0 90 3
	cat >"$T/floe.yaml" <<YAML
agent: { id: edge-pspec, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning, parser: json, timestamp: { field: time, format: rfc3339 } }
tables:
  logs:
    partition_by: [$2]
${3:-}
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
	check "$1: run --once ($2)" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
}
commits() {
	grep '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs"' "$T/cat/requests.log" |
		grep '"status":200' | sed -n 's/.*"requirements":\(\[[^]]*\]\),"updates":\(\[[^]]*\]\).*/\1 \2/p'
}

run 1 '"day(ts)"'
run 2 '"day(ts)", app' '    sort_by: [app, ts]'
check "2: the commit sent add-spec, set-default-spec, add-sort-order, set-default-sort-order with their assertions" \
	grep -qx '\["assert-table-uuid","assert-ref-snapshot-id","assert-default-spec-id=0","assert-default-sort-order-id=0"\] \["add-spec","set-default-spec","add-sort-order","set-default-sort-order","add-snapshot","set-snapshot-ref"\]' \
	<(commits | tail -1)
run 3 '"hour(ts)"'
check "3: the commit sent add-spec asserting spec 1 and took the unsorted order back by id" \
	grep -qx '\["assert-table-uuid","assert-ref-snapshot-id","assert-default-spec-id=1","assert-default-sort-order-id=1"\] \["add-spec","set-default-spec","set-default-sort-order","add-snapshot","set-snapshot-ref"\]' \
	<(commits | tail -1)

loc=$(curl -sf "$REST_URL/v1/ws/namespaces/edge/tables/logs" |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["metadata-location"])')
out=$(/usr/bin/python3 "$FLOE_SRC/tests/integration/check_specs.py" "$loc") || out=''
echo "$out"
check "the catalog's table has three specs, day(ts) keeping id 1000" \
	test "$(echo "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); print(json.dumps([d["specs"], d["field_ids"], d["default"], d["last_partition_id"]]))')" = \
	'[[[0, ["day(1)"]], [1, ["day(1)", "identity(8)"]], [2, ["hour(1)"]]], [[1000], [1000, 1001], [1002]], 2, 1002]'
check "manifests per spec: 90 rows each" \
	test "$(echo "$out" | python3 -c 'import json,sys; print(json.dumps(json.load(sys.stdin)["records"], sort_keys=True))')" = '{"0": 90, "1": 90, "2": 90}'
files=$("$FLOE_BIN" inspect -c "$T/floe.yaml" 2>/dev/null | sed -n "s#^  file://\([^ ]*\)  records=.*#'\1'#p" | paste -sd,)
rows=$(duck "select count(*), count(distinct message) from read_parquet([$files])")
check "DuckDB reads every line once ($rows)" test "$rows" = '["270","270"]'
# The catalog refuses a spec that gives a used field id to another field.
bad='{"requirements":[],"updates":[{"action":"add-spec","spec":{"fields":[{"name":"app_b","transform":"bucket[4]","source-id":8,"field-id":1001}]}}]}'
code=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Content-Type: application/json' -d "$bad" \
	"$REST_URL/v1/ws/namespaces/edge/tables/logs")
check "the test catalog refuses an add-spec reusing field id 1001 for another field ($code)" test "$code" = 400
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
