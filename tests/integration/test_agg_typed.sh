#!/usr/bin/env bash
# Aggregation over typed columns: parser apache_combined gives status (int) and bytes
# (long); an aggregation keyed by status with bytes metrics writes status as an INTEGER
# key column and its metrics from the numbers themselves, equal per window and status
# to DuckDB's GROUP BY over the raw table's typed columns. An aggregate table that holds
# status as a string (made with `columns: []`) is refused by floe check and by run,
# naming the key and both types, with the data kept. A value of an int key column that
# is no integer (kept in attrs as text) groups under a null key, counted in
# metrics.json (and /metrics: one counter table makes both).
# An input with raw: false keys its aggregation by its parser's natural types too, an
# input written to another table by that table's.
source "$(dirname "$0")/lib.sh"

d="$T/agg"
mkdir -p "$d/logs"
# 600 lines over 5 minutes, statuses 200/304/404/500, bytes '-' on every 304.
python3 - "$d/logs/access.log" <<'PY'
import sys
st = [200, 200, 200, 304, 404, 500]
with open(sys.argv[1], "w") as f:
    for i in range(600):
        s = st[(i * 7) % len(st)]
        b = "-" if s == 304 else str((i * 7919) % 50000 + 1)
        f.write('10.0.%d.%d - - [10/Oct/2026:13:%02d:%02d +0000] "GET /r%d HTTP/1.1" %d %s "-" "curl/8.5"\n'
                % (i % 5, i % 251, 50 + i // 120, (i // 2) % 60, i % 17, s, b))
PY
cfg() { # cfg NAME [COLUMNS-YAML]
	cat >"$d/$1.yaml" <<YAML
agent: { id: aggtyped, state_dir: $d/state-$1 }
inputs:
  - { type: tail, paths: ["$d/logs/*.log"], start_at: beginning, parser: apache_combined }
tables:
  logs:
${2:-    commit_interval: 60s}
lake: { warehouse: $d/wh-$1 }
aggregations:
  - name: by_status
    window: 1m
    group_by: [status]
    metrics: [count, {sum: bytes}, {max: bytes}, {quantiles: bytes, q: [0.5]}, {distinct: bytes}]
YAML
}
cfg typed
check "typed: run" "$FLOE_BIN" run -c "$d/typed.yaml" --once --log-level warn
live_files "$d/wh-typed/default/logs" >"$d/raw"
live_files "$d/wh-typed/default/by_status" >"$d/agg"
check "typed: both tables have live files" test -s "$d/raw" -a -s "$d/agg"
raw="[$(sed "s/.*/'&'/" "$d/raw" | paste -sd,)]"
agg="[$(sed "s/.*/'&'/" "$d/agg" | paste -sd,)]"
duck "select typeof(status), typeof(count), typeof(sum_bytes), typeof(max_bytes)
      from read_parquet($agg) limit 1" >"$d/types"
check "typed: status is an INTEGER key column, the metrics numbers" \
	grep -qx '\["INTEGER","BIGINT","DOUBLE","DOUBLE"\]' "$d/types"
python3 - "$d/wh-typed/default/by_status" >"$d/schema" <<'PY'
import json, sys, glob, re
meta = sorted(glob.glob(sys.argv[1] + "/metadata/v*.metadata.json"),
              key=lambda p: int(re.search(r"v(\d+)\.metadata", p).group(1)))[-1]
m = json.load(open(meta))
s = [x for x in m["schemas"] if x["schema-id"] == m["current-schema-id"]][0]
print(" ".join("%d:%s:%s" % (f["id"], f["name"], f["type"]) for f in s["fields"][:4]))
PY
check "typed: the aggregate table's schema says status is int" \
	grep -qx '1:window_start:timestamptz 2:window_end:timestamptz 3:status:int 4:count:long' "$d/schema"
exact="select time_bucket(interval 1 minute, ts) w, status, count(*) n, sum(bytes) s, max(bytes) hi,
  count(distinct bytes) nd from read_parquet($raw) group by all"
floe="select window_start w, status, sum(count) n, sum(sum_bytes) s, max(max_bytes) hi,
  max(distinct_bytes) nd from read_parquet($agg) group by all"
duck "SET TimeZone='UTC'" "select count(*) from ($exact)" >"$d/ngroups"
check "typed: DuckDB finds 20 window x status groups" grep -qx '\["20"\]' "$d/ngroups"
duck "SET TimeZone='UTC'" "select count(*) from ($exact) e full outer join ($floe) f
  on e.w = f.w and e.status is not distinct from f.status
  where e.n is distinct from f.n or e.s is distinct from f.s or e.hi is distinct from f.hi
     or e.nd is distinct from f.nd" >"$d/diff"
check "typed: count, sum, max and distinct equal DuckDB's for every window and status" \
	grep -qx '\["0"\]' "$d/diff"
duck "select sum(count) from read_parquet($agg)" >"$d/total"
check "typed: every line counted once" grep -qx '\["600"\]' "$d/total"

# The same aggregation over an aggregate table written with status as a string.
cfg text "    columns: []"
check "text: run with columns: [] (status a string key)" \
	"$FLOE_BIN" run -c "$d/text.yaml" --once --log-level warn
duck "select typeof(status) from read_parquet([$(live_files "$d/wh-text/default/by_status" |
	sed "s/.*/'&'/" | paste -sd,)]) limit 1" >"$d/ttype"
check "text: status is a VARCHAR key there" grep -qx '\["VARCHAR"\]' "$d/ttype"
cfg text2
sed -i "s#state-text2#state-text#; s#wh-text2#wh-text#" "$d/text2.yaml"
rc=0
"$FLOE_BIN" check -c "$d/text2.yaml" >"$d/check.out" 2>&1 || rc=$?
check "text -> typed: floe check refuses (exit 2)" test $rc -eq 2
check "text -> typed: the refusal names the key and both types" \
	grep -q "field 3 is string 'status' in the table, floe writes int 'status'" "$d/check.out"
check "text -> typed: and says what to do" grep -q "another table" "$d/check.out"
echo '10.0.0.1 - - [10/Oct/2026:14:10:00 +0000] "GET /x HTTP/1.1" 200 5 "-" "curl/8.5"' >>"$d/logs/access.log"
rc=0
"$FLOE_BIN" run -c "$d/text2.yaml" --once --log-level warn >"$d/run.out" 2>&1 || rc=$?
check "text -> typed: run refuses too" test $rc -ne 0
check "text -> typed: run names the key" grep -q "string 'status' in the table, floe writes int" "$d/run.out"

# A JSON field declared int: "oops" is a null key, counted; the others are int keys.
j="$T/json"
mkdir -p "$j/logs"
printf '%s\n' '{"code":200,"n":1}' '{"code":"oops","n":2}' '{"code":404,"n":3}' '{"code":200,"n":4}' \
	>"$j/logs/app.log"
cat >"$j/floe.yaml" <<YAML
agent: { id: aggjson, state_dir: $j/state }
inputs:
  - { type: tail, paths: ["$j/logs/*.log"], start_at: beginning, parser: json }
tables:
  logs:
    columns: [{name: code, type: int}, {name: n, type: long}]
lake: { warehouse: $j/wh }
aggregations:
  - { name: by_code, window: 1h, group_by: [code], metrics: [count, {sum: n}] }
YAML
check "json: run" "$FLOE_BIN" run -c "$j/floe.yaml" --once --log-level warn
rows_sql "$j/wh/default/by_code" "select typeof(code), code, sum(count), sum(sum_n) from t
  group by all order by code nulls first" >"$j/rows"
check "json: the non-integer code is a null key" grep -qx '\["INTEGER",null,"1",2\]' "$j/rows"
check "json: 200 and 404 are int keys" \
	bash -c "grep -qx '\[\"INTEGER\",200,\"2\",5\]' '$j/rows' && grep -qx '\[\"INTEGER\",404,\"1\",3\]' '$j/rows'"
check "json: metrics.json counts it (agg_unparsable 1)" test "$(metric "$j/state/metrics.json" agg_unparsable)" = 1
# status_key WHAT INPUT-KEYS [TABLES]: the access log through an input with INPUT-KEYS
# (and TABLES), an aggregation keyed by status: floe check passes, the run's aggregate
# table has status as an INTEGER key, 4 statuses, every line once.
status_key() {
	local n="$T/$1"
	mkdir -p "$n"
	cat >"$n/floe.yaml" <<YAML
agent: { id: agg$1, state_dir: $n/state }
inputs:
  - { type: tail, paths: ["$d/logs/*.log"], start_at: beginning, parser: apache_combined, $2 }
${3:-}
lake: { warehouse: $n/wh }
aggregations:
  - { name: by_status, window: 1m, group_by: [status], metrics: [count, {sum: bytes}] }
YAML
	check "$1: check" "$FLOE_BIN" check -c "$n/floe.yaml"
	check "$1: run" "$FLOE_BIN" run -c "$n/floe.yaml" --once --log-level warn
	rows_sql "$n/wh/default/by_status" "select typeof(status), count(distinct status), sum(count)
	  from t group by all" >"$n/rows"
	check "$1: status is an INTEGER key, 4 statuses, every line once" \
		grep -qx '\["INTEGER","4","601"\]' "$n/rows"
}
# An input written to no table (raw: false): its aggregation still reads its parser's
# natural types (the logs table has no say).
status_key noraw "raw: false"
# An input written to another table (access): its aggregation reads that table's types.
status_key totable "table: access" "tables: { access: {} }"
finish
