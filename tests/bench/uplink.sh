#!/usr/bin/env bash
# Read stalls benchmark: how long `floe run` stops reading its input while it
# uploads and commits. A writer appends RATE lines/s (default 50,000, about 4.5 MB/s) to
# one file for SECONDS_RUN seconds (default 20), in slices every 10 ms, each line carrying
# the wall time it was written; floe tails it into a table on a real Ceph RGW on loopback
# (packaging/dev/rgw), committing every COMMIT_INTERVAL (default 1s). Afterwards the
# table's files are fetched and DuckDB compares each row's received_at (the time floe read
# the line) with its write time: the longest wait is the longest read stall (plus up to
# the 10 ms of a slice). Prints, per floe binary given, the longest wait, the 99th
# percentile, the lines that waited over 100 ms, and the run's commits and seals. Asserts
# nothing; not run by ctest. Compare two builds (before and after a change) by naming both.
# usage: tests/bench/uplink.sh [FLOE_BIN...]   (default: $BUILD/floe, BUILD=build-test/gcc)
#        env: RATE (lines/s), SECONDS_RUN (seconds of input), COMMIT_INTERVAL (default 1s)
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$(pwd)
BUILD=${BUILD:-build-test/gcc}
[ $# -gt 0 ] || set -- "$BUILD/floe"
for b in "$@"; do [ -x "$b" ] || { echo "no floe binary at $b"; exit 2; }; done
RATE=${RATE:-50000}
SECONDS_RUN=${SECONDS_RUN:-20}
COMMIT_INTERVAL=${COMMIT_INTERVAL:-1s}
W=$(mktemp -d /tmp/floe-bench-uplink.XXXXXX)
RGWDIR="$W/rgw"
PORT=$((21480 + $$ % 1000))
trap '"$SRC/packaging/dev/rgw/stop.sh" "$RGWDIR" || true; rm -rf "$W"' EXIT
for try in 1 2 3 4 5; do
	rc=0
	RGW_OWNER_PID=$$ "$SRC/packaging/dev/rgw/start.sh" "$RGWDIR" "$PORT" >"$W/start.out" 2>&1 || rc=$?
	[ "$rc" = 3 ] && [ "$try" -lt 5 ] || break
	PORT=$((PORT + 1))
done
[ "$rc" = 0 ] || { cat "$W/start.out"; exit 1; }
set -a
. "$RGWDIR/env"
set +a

# The writer: a slice of lines every 10 ms, each carrying the wall time it was written
# (w=µs since the epoch), which the table's received_at (the time floe read it) is
# compared with.
cat >"$W/feed.py" <<'PY'
import sys, time
path, rate, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
n, t0, step, k = 0, time.monotonic(), 0.01, 0
with open(path, "ab", buffering=0) as f:
    while time.monotonic() - t0 < secs:
        k += 1
        want = int(rate * step * k)
        w = time.time_ns() // 1000
        f.write(b"".join(b"host-7 api[4242]: GET /v1/items/%d status=200 took=%dms user=u%d w=%d\n"
                         % (i, i % 997, i % 31, w) for i in range(n, want)))
        n = want
        delay = t0 + step * (k + 1) - time.monotonic()
        if delay > 0:
            time.sleep(delay)
print(n)
PY

# One line per binary: how long lines waited to be read (received_at - w) over the run,
# the longest and the 99th percentile, the lines that waited over 100 ms, and the run's
# lines, commits and seals.
printf '%-36s %11s %8s %12s %9s %8s %6s\n' floe "longest ms" "p99 ms" "waited>100ms" lines commits seals
run=0
for FLOE in "$@"; do
	run=$((run + 1))
	d="$W/run$run"
	mkdir -p "$d/in"
	: >"$d/in/app.log"
	cat >"$d/floe.yaml" <<YAML
agent: { id: bench-uplink-$run, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: $COMMIT_INTERVAL }
lake:
  warehouse: s3://$S3_BUCKET/uplink$run
  catalog: { type: s3 }
  s3: { endpoint: "$S3_ENDPOINT", region: $S3_REGION, path_style: true }
YAML
	"$FLOE" run -c "$d/floe.yaml" 2>"$d/err" &
	pid=$!
	for i in $(seq 1 200); do grep -q "agent bench-uplink-$run started" "$d/err" && break; sleep 0.1; done
	lines=$(python3 "$W/feed.py" "$d/in/app.log" "$RATE" "$SECONDS_RUN")
	sleep 2 # the last lines' commit interval
	kill -TERM "$pid"
	wait "$pid" || true
	s3cmd -q -c "$RGWDIR/s3cfg" sync "s3://$S3_BUCKET/uplink$run/" "$d/wh/"
	res=$(node tests/integration/reader/duck.js "select max(lat) / 1000, round(quantile_cont(lat, 0.99) / 1000, 1),
		count(*) filter (where lat > 100000) from (select epoch_us(received_at)
		- cast(regexp_extract(message, 'w=([0-9]+)', 1) as bigint) as lat
		from read_parquet('$d/wh/**/*.parquet'))" | tr -d '[]"' | tr ',' ' ')
	m="$d/state/metrics.json"
	printf '%-36s %11s %8s %12s %9s %8s %6s\n' "$FLOE" $res "$lines" \
		"$(sed -n 's/.*"commits":\([0-9]*\).*/\1/p' "$m")" \
		"$(sed -n 's/.*"seals":\([0-9]*\).*/\1/p' "$m")"
done
