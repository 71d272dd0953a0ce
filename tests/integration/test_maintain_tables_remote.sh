#!/usr/bin/env bash
# floe maintain over every table on an S3 warehouse (Ceph RGW on loopback, catalog s3) and
# through a REST catalog (data in RGW): logs, a routed unpartitioned access table and an
# aggregation's table, 8 tiny commits each; one maintain compacts each table into one
# file with the same rows (maintain's lines and record), a second run finds nothing
# left, and the rows each table holds are the same before and after (floe inspect's
# record counts: every table on S3, the logs table through the catalog).
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 18820
COMMITS=8

source "$(dirname "$0")/routes_lib.sh"
gen() { three_lines "$@"; }
conf() { three_yaml "$@"; }

# records INSPECT-ARGS...: the live rows of a table, by floe inspect.
records() {
	"$FLOE_BIN" inspect "$@" | sed -n 's/.*  records=\([0-9]*\).*/\1/p' | awk '{s += $1} END {print s + 0}'
}

# s3_rows DIR TABLE: the table's live rows on the S3 warehouse; rest_rows: through the
# catalog (floe inspect -c reads the logs table only: the others print nothing).
s3_rows() { records "s3://$S3_BUCKET/mt/default/$2" "${INSPECT_OPTS[@]}"; }
rest_rows() { [ "$2" = logs ] && records -c "$1/floe.yaml"; }

# scenario NAME DIR LAKE ROWS: commits, maintain, checks (ROWS DIR TABLE: its rows).
scenario() {
	local name=$1 d=$2 i failed=0 t
	mkdir -p "$d/logs"
	conf "$d" "$3"
	for i in $(seq 0 $((COMMITS - 1))); do
		gen "$d/logs/a.log" $((i * 30)) 30
		"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error || failed=$((failed + 1))
	done
	check "$name: $COMMITS tiny commits into three tables" test "$failed" = 0
	for t in logs access apps; do "$4" "$d" "$t" >"$d/rows.$t" || true; done
	local rc=0
	"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out" 2>"$d/err" || rc=$?
	sed 's/^/# /' "$d/out"
	check "$name: maintain succeeds (exit $rc)" test "$rc" = 0
	for t in logs access apps; do
		check "$name: $t compacted into one file" \
			grep -Eq "^$t: compacted 1 partitions: [0-9]+ files .* into 1 files .* in 1 replace snapshots" "$d/out"
	done
	check "$name: the record holds each table" python3 - "$d/state/maintain/metrics.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["tables"]
assert set(t) == {"logs", "access", "apps"}, t
assert all(v["failed"] == 0 and v["files_rewritten"] >= 8 and v["files_written"] == 1 for v in t.values()), t
PY
	"$FLOE_BIN" maintain -c "$d/floe.yaml" >"$d/out2" 2>&1 || true
	check "$name: a second run finds nothing left" \
		test "$(grep -c ': compacted 0 partitions: 0 files' "$d/out2")" = 3
	for t in logs access apps; do
		[ -s "$d/rows.$t" ] || continue
		check "$name: $t holds the same rows ($(cat "$d/rows.$t"))" \
			test "$("$4" "$d" "$t")" = "$(cat "$d/rows.$t")"
	done
}

INSPECT_OPTS=(--endpoint "http://127.0.0.1:$S3PORT" --region "$S3_REGION" --path-style)
scenario s3 "$T/s3" "{ warehouse: \"s3://$S3_BUCKET/mt\", catalog: { type: s3 }, s3: { endpoint: \"http://127.0.0.1:$S3PORT\", region: $S3_REGION, path_style: true } }" \
	s3_rows

start_rest_catalog "$T/cat" --warehouse "s3://$S3_BUCKET/mtrest" --vend \
	"s3.access-key-id=$AWS_ACCESS_KEY_ID,s3.secret-access-key=$AWS_SECRET_ACCESS_KEY,s3.endpoint=$S3_ENDPOINT,client.region=$S3_REGION,s3.path-style-access=true"
scenario rest "$T/rest" "{ catalog: { type: rest, uri: \"$REST_URL\", namespace: edge } }" rest_rows
finish
