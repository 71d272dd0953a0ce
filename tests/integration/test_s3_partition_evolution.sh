#!/usr/bin/env bash
# floe maintain rewrites older partition specs' files into the current spec on an S3
# warehouse (Ceph RGW on loopback): three runs under day(ts), [day(ts), app] and
# hour(ts), then maintain under [day(ts), app] with min_age 0s, killed once before its
# first rewrite's replace and run again. Afterwards every live file is under the current
# spec's directories, DuckDB reads every line once with the same values as before, and
# python3-avro decodes every manifest and list.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 18760
d="$T/p"
mkdir -p "$d/logs"
export INPUT_KEYS='    parser: json
    timestamp: { field: time, format: rfc3339 }'
# conf PARTITION [MAINTAIN]: the configuration under that partition_by.
conf() {
	s3_config "$d/floe.yaml" "$d/state" pe "[\"$d/logs/*.log\"]" "$S3PORT" "    partition_by: [$1]
    properties: { history.expire.max-snapshot-age-ms: 1ms, history.expire.min-snapshots-to-keep: 1 }" "${2:-}"
}
failed=0
n=0
for spec in '"day(ts)"' '"day(ts)", app' '"hour(ts)"'; do
	n=$((n + 1))
	python3 "$FLOE_SRC/tests/integration/gen_app_lines.py" "$d/logs/app.log" "run $n" 0 150 3
	conf "$spec"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn || failed=$((failed + 1))
done
check "three runs under three specs commit to RGW" test "$failed" = 0

# digest OUT: the live files fetched, and every value of every row in one digest.
digest() {
	s3_live "$d/floe.yaml" pe "$d/s3" "$1" || return 1
	local files
	files=$(sed "s/.*/'&'/" "$1" | paste -sd,)
	duck "WITH t AS (SELECT * FROM read_parquet([$files], hive_partitioning = false)) SELECT count(*),
		count(DISTINCT message), md5(string_agg(CAST(struct_pack(ts, received_at, host, source, \"offset\",
		app, message, attrs) AS VARCHAR), chr(10) ORDER BY message)) FROM t"
}
before=$(digest "$d/before")
check "450 lines before maintain ($before)" test "$(echo "$before" | cut -d, -f1-2)" = '["450","450"'

conf '"day(ts)", app' 'maintain: { min_age: 0s }'
rc=0
FLOE_CRASH_AT=maintain-respec-before-replace "$FLOE_BIN" maintain -c "$d/floe.yaml" >/dev/null 2>"$d/crash.err" || rc=$?
check "maintain dies before its first rewrite's replace" test $rc = 99
check "after the kill: every row once, the same values" test "$(digest "$d/crashed")" = "$before"
rc=0
"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/maintain.out" 2>"$d/maintain.err" || rc=$?
cat "$d/maintain.out"
check "maintain succeeds" test $rc = 0
check "maintain rewrote the 4 files of specs 0 and 2" grep -q '; 4 of the files in were of older partition specs;' "$d/maintain.out"
after=$(digest "$d/after")
check "after maintain: every row once, the same values ($after)" test "$after" = "$before"
check "every live file is under the current spec (day and app)" \
	test "$(grep -c '/data/ts_day=[^/]*/app=[^/]*/[^/]*\.parquet$' "$d/after")" = "$(wc -l <"$d/after")"
check "python3-avro decodes every manifest and list" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$d/s3/default/logs/metadata"/*.avro
check "the metadata still has the three specs" /usr/bin/python3 - "$d/s3/default/logs/metadata" <<'PY'
import json, os, sys
meta = sys.argv[1]
v = open(os.path.join(meta, "version-hint.text")).read().strip()
m = json.load(open(os.path.join(meta, "v%s.metadata.json" % v)))
sys.exit(0 if sorted(s["spec-id"] for s in m["partition-specs"]) == [0, 1, 2] and m["default-spec-id"] == 1 else 1)
PY
finish
