#!/usr/bin/env bash
# floe maintain on an S3 warehouse (Ceph RGW on loopback): the small files of a closed day
# are read with range GETs, rewritten, created with conditional PUTs and committed as a
# replace; DuckDB reads every line exactly once from fewer files; once the replace's
# parent expires (1 ms retention, 2 snapshots kept) the old data files are deleted from
# the bucket with batched DeleteObjects requests, and the bucket's data files are
# exactly the live ones: the output file of a maintain that crashed before its replace
# (maintain.min_age 0s) was deleted by the next run too.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 18760
COMMITS=${COMPACT_COMMITS:-12}
d="$T/c"
mkdir -p "$d/logs"
s3_config "$d/floe.yaml" "$d/state" ct "[\"$d/logs/*.log\"]" "$S3PORT" "    target_file_size: 1MiB
    properties:
      history.expire.max-snapshot-age-ms: 1ms
      history.expire.min-snapshots-to-keep: 2"
sed -i 's/^    start_at: beginning$/&\n    parser: json\n    timestamp: { field: time, format: rfc3339 }/' "$d/floe.yaml"

# gen FIRST N DAY: N JSON lines numbered from FIRST with times in DAY, 200 random hex
# digits each.
gen() {
	python3 - "$d/logs/a.log" "$@" <<'PY'
import random, sys
path, first, n, day = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
r = random.Random(first)
with open(path, "a") as f:
    for j in range(first, first + n):
        s = j % 86000
        f.write('{"time":"%sT%02d:%02d:%02dZ","seq":%d,"pad":"%s"}\n' % (
            day, s // 3600, s // 60 % 60, s % 60, j, "%x" % r.getrandbits(800)))
PY
}

failed=0
for i in $(seq 0 $((COMMITS - 1))); do
	gen $((i * 400)) 400 2026-03-01
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn || failed=$((failed + 1))
done
check "$COMMITS commits to RGW succeed" test "$failed" = 0
"$FLOE_BIN" inspect -c "$d/floe.yaml" | grep -c "ts_day=2026-03-01/.*records=" >"$d/nbefore" || true
# A run that dies after storing an output file leaves it in the bucket, listed by nothing.
FLOE_CRASH_AT=maintain-after-output "$FLOE_BIN" maintain -c "$d/floe.yaml" >/dev/null 2>&1 || true
{ cat "$d/floe.yaml"; printf 'maintain:\n  min_age: 0s\n'; } >"$d/m.yaml"
rc=0
"$FLOE_BIN" maintain -c "$d/m.yaml" >"$d/out" 2>"$d/err" || rc=$?
echo "# $(cat "$d/out")"
check "maintain on S3 succeeds" test "$rc" = 0
check "it deleted the crashed run's output file" grep -q "deleted 1 output files of interrupted runs" "$d/err"
check "the live files are fetched" s3_live "$d/floe.yaml" ct "$d/s3a" "$d/files"
check "DuckDB reads every line exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/a.log"
after=$(grep -c 'ts_day=2026-03-01' "$d/files" || true)
check "the day's files went from $(cat "$d/nbefore") to $after" test "$after" -lt "$(cat "$d/nbefore")"
check "the snapshot is a replace" grep -q "operation=replace" "$d/files.inspect"
# Two appends (to another day) expire the replace's parent: its old files go.
for i in 0 1; do
	gen $((100000 + i * 10)) 10 2026-03-05
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level info 2>>"$d/expire.log" || failed=$((failed + 1))
done
echo "# $(grep -o 'expired.*' "$d/expire.log" | paste -sd';' -)"
check "RGW takes DeleteObjects (no fallback to one DELETE a key)" \
	test -z "$(grep 'does not implement DeleteObjects' "$d/expire.log")"
check "every unused file was deleted" grep -Eq 'deleted ([1-9][0-9]*) of \1 unused files' "$d/expire.log"
check "the live files are fetched again" s3_live "$d/floe.yaml" ct "$d/s3b" "$d/files2"
check "DuckDB still reads every line exactly once" node "$READER/check_rows.js" "$d/files2" "$d/logs/a.log"
find "$d/s3b/default/logs/data" -name '*.parquet' | sort >"$d/bucket"
sort "$d/files2" >"$d/live"
check "the bucket holds exactly the live data files (old ones deleted on expiry)" diff "$d/bucket" "$d/live"
finish
