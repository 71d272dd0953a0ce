#!/usr/bin/env bash
# S3 benchmark against a real Ceph RGW on loopback (packaging/dev/rgw). Prints figures only;
# asserts nothing; not run by ctest.
#  1. Upload: FILES files of MIB MiB of random bytes (as incompressible as zstd Parquet),
#     PUT by floe's S3 client (tests/bench/bench_s3.c: floe_s3_put_file, one connection,
#     SigV4 with the payload hashed, and with UNSIGNED-PAYLOAD) and by `s3cmd put` (its
#     defaults: multipart in 15 MiB parts), to the same RGW. MB/s and the ratio to s3cmd.
#  2. Commits: 1, 8 and 32 concurrent committers on one table, each a loop of
#     `floe run --once` over a fresh 10-line input (distinct agents and state dirs). Commit
#     latency is from floe's own log: "agent started" (after start-up and the conditional
#     PUT probe) to "committed snapshot" — the whole commit: data file upload, manifest,
#     manifest list, conditional PUT of the next metadata version, retries after lost races.
#     commits/s is commits over the wall time of the round (process start-ups included).
# usage: tests/bench/s3.sh     env: BUILD (default build-test/gcc), FILES (20), MIB (16),
#        COMMITS (total commits per round, default 64)
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$(pwd)
BUILD=${BUILD:-build-test/gcc}
FLOE="$BUILD/floe"
BENCH="$BUILD/tests/bench_s3"
[ -x "$BENCH" ] && [ -x "$FLOE" ] || { echo "build $FLOE and $BENCH first (cmake --build $BUILD)"; exit 2; }
FILES=${FILES:-20}
MIB=${MIB:-16}
COMMITS=${COMMITS:-64}
W=$(mktemp -d /tmp/floe-bench-s3.XXXXXX)
RGWDIR="$W/rgw"
PORT=$((20480 + $$ % 1000))
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
now() { date +%s%N; }

echo "== upload: $FILES files x $MIB MiB to RGW on 127.0.0.1 =="
mkdir -p "$W/files"
for i in $(seq 1 "$FILES"); do head -c $((MIB << 20)) /dev/urandom >"$W/files/f$i.bin"; done
total=$((FILES * MIB))
field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }
floe_signed=$("$BENCH" "$S3_ENDPOINT" "$S3_BUCKET" up/floe "$W"/files/*.bin | field mbps)
floe_unsigned=$("$BENCH" "$S3_ENDPOINT" "$S3_BUCKET" up/floe-u --unsigned "$W"/files/*.bin | field mbps)
t0=$(now)
s3cmd -q -c "$RGWDIR/s3cfg" put "$W"/files/*.bin "s3://$S3_BUCKET/up/s3cmd/"
s3cmd_mbps=$(echo "$total * 1000000000 / ($(now) - $t0)" | bc -l)
t0=$(now)
s3cmd -q -c "$RGWDIR/s3cfg" --disable-multipart put "$W"/files/*.bin "s3://$S3_BUCKET/up/s3cmd1/"
s3cmd1_mbps=$(echo "$total * 1000000000 / ($(now) - $t0)" | bc -l)
printf '%-44s %10s %10s\n' uploader "MiB/s" "vs s3cmd"
for r in "floe put_file (SigV4, payload hashed)|$floe_signed" \
	"floe put_file (UNSIGNED-PAYLOAD)|$floe_unsigned" \
	"s3cmd put (default: multipart 15 MiB)|$s3cmd_mbps" \
	"s3cmd put --disable-multipart|$s3cmd1_mbps"; do
	printf '%-44s %10.1f %9.2fx\n' "${r%%|*}" "${r##*|}" "$(echo "${r##*|} / $s3cmd_mbps" | bc -l)"
done
rm -rf "$W/files"

echo
echo "== commits: concurrent committers on one table (floe run --once loops) =="
printf '%-12s %8s %10s %10s %10s %10s %10s\n' committers commits "p50 ms" "p99 ms" "max ms" commits/s failures
for n in 1 8 32; do
	per=$(((COMMITS + n - 1) / n))
	prefix="commit-$n"
	for i in $(seq 1 "$n"); do
		mkdir -p "$W/c$n/a$i/logs"
		cat >"$W/c$n/a$i/floe.yaml" <<YAML
agent: { id: bench-$n-$i, state_dir: $W/c$n/a$i/state }
inputs: [ { type: tail, paths: ["$W/c$n/a$i/logs/*.log"], start_at: beginning } ]
tables: { logs: { commit_interval: 60s } }
lake:
  warehouse: s3://$S3_BUCKET/$prefix
  catalog: { type: s3 }
  s3: { endpoint: "$S3_ENDPOINT", region: $S3_REGION, path_style: true }
YAML
	done
	# The table exists before the clock starts.
	"$FLOE" run -c "$W/c$n/a1/floe.yaml" --once --log-level error
	t0=$(now)
	for i in $(seq 1 "$n"); do
		(
			for k in $(seq 1 "$per"); do
				for l in $(seq 1 10); do echo "committer $i commit $k line $l"; done >>"$W/c$n/a$i/logs/app.log"
				"$FLOE" run -c "$W/c$n/a$i/floe.yaml" --once --log-level info 2>>"$W/c$n/a$i/log" ||
					echo "fail" >>"$W/c$n/failures"
			done
		) &
	done
	wait
	wall=$((($(now) - t0) / 1000000))
	fails=0
	[ ! -f "$W/c$n/failures" ] || fails=$(wc -l <"$W/c$n/failures")
	cat "$W/c$n"/a*/log | /usr/bin/python3 -c '
import sys, datetime
def ms(line):
    t = datetime.datetime.strptime(line[:23], "%Y-%m-%dT%H:%M:%S.%f")
    return t.timestamp() * 1000
lat, start = [], None
for line in sys.stdin:
    if " started (warehouse " in line:
        start = ms(line)
    elif "table: committed snapshot" in line and start is not None:
        lat.append(ms(line) - start)
        start = None
lat.sort()
def pct(p):
    return lat[min(len(lat) - 1, int(p * len(lat)))] if lat else 0
print(len(lat), "%.0f %.0f %.0f" % (pct(0.5), pct(0.99), lat[-1] if lat else 0))
' >"$W/c$n/lat"
	read -r count p50 p99 max <"$W/c$n/lat"
	printf '%-12s %8d %10s %10s %10s %10.1f %10d\n' "$n" "$count" "$p50" "$p99" "$max" \
		"$(echo "$count * 1000 / $wall" | bc -l)" "$fails"
	snaps=$("$FLOE" inspect -c "$W/c$n/a1/floe.yaml" | grep -c '^snapshot ' || true)
	echo "             (the table holds $snaps snapshots; $count commits were timed)"
done
