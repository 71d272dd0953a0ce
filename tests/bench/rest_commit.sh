#!/usr/bin/env bash
# Commits through the test REST catalog (tests/integration/rest/server.js, its tables on a
# Ceph RGW on loopback) with 1, 8 and 32 concurrent committers, beside the same committers
# on the catalog-less S3 table (conditional PUTs) on the same RGW as the reference.
# Each committer is a `floe run` of its own (own agent id and state_dir) tailing a file
# that gets a line every 0.2 s, committing every second (commit_interval 1s) into one
# table shared by the series; lines are fed for DURATION seconds (default 30), then each
# agent's spool is left to drain (its metrics.json says every line fed is committed and
# spool_entries 0; at most DRAIN
# seconds, default 180), then every agent is stopped by PID. Per series it prints:
#   commits/s:   the table's commits (every agent's "commit done") over the series' time
#                (feeding and draining);
#   p50, p99:    one commit's latency, hand-over to the committer to its report (uploads,
#                metadata and every retry included), from each agent's debug line
#                "runner: commit done in X s, N attempts (L lost to other writers)";
#   retries:     attempts per commit beyond the first (lost races, and 5xx for S3);
#   failed:      commits that failed (ran out of their retry budget: "lost the race"
#                counts them apart, or failed otherwise), none of them cut by the stop,
#                which comes once the spools are empty (the issue's target with 32
#                committers: 0), and agents whose spool did not drain in time;
# then the REST figures as ratios of the S3 ones. Prints figures only; asserts nothing.
# usage: tests/bench/rest_commit.sh [COMMITTERS...]   (default 1 8 32)
# Needs a floe binary (FLOE_BIN, default $BUILD/floe, BUILD default build-test/gcc), Node
# with the test catalog's packages (npm ci in tests/integration/rest) and radosgw.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
BUILD=${BUILD:-build-test/gcc}
FLOE_BIN=${FLOE_BIN:-$BUILD/floe}
[ -x "$FLOE_BIN" ] || { echo "build $FLOE_BIN first (or set FLOE_BIN)"; exit 2; }
FLOE_BIN=$(realpath "$FLOE_BIN")
[ -d tests/integration/rest/node_modules ] || { echo "npm ci in tests/integration/rest first"; exit 2; }
DURATION=${DURATION:-30}
[ $# -gt 0 ] || set -- 1 8 32
W=$(mktemp -d /tmp/floe-bench-rest.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	"$SRC/packaging/dev/rgw/stop.sh" "$W/rgw" >/dev/null 2>&1 || true
	[ "${KEEP:-0}" = 1 ] && echo "kept $W" || rm -rf "$W"
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

PORT=$((20680 + $$ % 1000))
for try in 1 2 3 4 5; do
	rc=0
	RGW_OWNER_PID=$$ "$SRC/packaging/dev/rgw/start.sh" "$W/rgw" "$PORT" >"$W/rgw-start.out" 2>&1 || rc=$?
	[ "$rc" = 3 ] && [ "$try" -lt 5 ] || break
	PORT=$((PORT + 1))
done
[ "$rc" = 0 ] || { cat "$W/rgw-start.out"; exit 1; }
set -a
. "$W/rgw/env"
set +a

CPORT=$(free_port)
node tests/integration/rest/server.js --port "$CPORT" --root "$W/cat" --warehouse "s3://$S3_BUCKET/rest" \
	>"$W/cat.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 300); do grep -q '^listening' "$W/cat.out" 2>/dev/null && break; sleep 0.1; done
grep -q '^listening' "$W/cat.out" || { cat "$W/cat.out"; exit 1; }

# series KIND N: N agents on the KIND (rest, s3) table of the series; figures to $W/KIND-N.fig
series() {
	local kind=$1 n=$2 d="$W/$1-$2" i p lake
	mkdir -p "$d"
	if [ "$kind" = rest ]; then
		lake="catalog: { type: rest, uri: \"http://127.0.0.1:$CPORT\", namespace: bench$n }"
	else
		lake="warehouse: s3://$S3_BUCKET/plain$n
  catalog: { type: s3 }"
	fi
	local run=() feed
	for i in $(seq 1 "$n"); do
		mkdir -p "$d/a$i"
		: >"$d/a$i/in.log"
		cat >"$d/a$i/floe.yaml" <<YAML
agent: { id: bench-$kind-$n-$i, state_dir: $d/a$i/state }
inputs:
  - { type: tail, paths: ["$d/a$i/in.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  $lake
  s3: { endpoint: "$S3_ENDPOINT", region: $S3_REGION, path_style: true }
YAML
	done
	# The table exists before the clock starts: its creation is not a commit.
	echo "first" >"$d/a1/in.log"
	"$FLOE_BIN" run -c "$d/a1/floe.yaml" --once --log-level warn
	local t0 t1
	t0=$(date +%s.%N)
	for i in $(seq 1 "$n"); do
		"$FLOE_BIN" run -c "$d/a$i/floe.yaml" --log-level debug 2>"$d/a$i/run.log" &
		run+=($!)
		pids+=($!)
	done
	(
		k=0
		end=$(($(date +%s) + DURATION))
		while [ "$(date +%s)" -lt "$end" ]; do
			k=$((k + 1))
			for i in $(seq 1 "$n"); do echo "agent $i line $k" >>"$d/a$i/in.log"; done
			sleep 0.2
		done
		echo "$k" >"$d/fed"
	) &
	feed=$!
	wait "$feed"
	local undrained=0 end=$(($(date +%s) + ${DRAIN:-180})) fed
	fed=$(cat "$d/fed")
	drained() { grep -q "\"rows_committed\":$fed,.*\"spool_entries\":0," "$1" 2>/dev/null; }
	for i in $(seq 1 "$n"); do
		until drained "$d/a$i/state/metrics.json" || [ "$(date +%s)" -ge "$end" ]; do sleep 0.5; done
		drained "$d/a$i/state/metrics.json" || undrained=$((undrained + 1))
	done
	t1=$(date +%s.%N)
	for p in "${run[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${run[@]}"; do wait "$p" || true; done
	cat "$d"/a*/run.log | python3 -c '
import re, sys
t = float(sys.argv[2]) - float(sys.argv[1]); ok, att, failed, budget = [], 0, 0, 0
for line in sys.stdin:
    if "attempts lost the race" in line and "commit failed" in line: budget += 1
    m = re.search(r"runner: commit (done|failed) in ([0-9.]+) s, ([0-9]+) attempts", line)
    if not m: continue
    if m.group(1) == "failed": failed += 1; continue
    ok.append(float(m.group(2))); att += int(m.group(3))
ok.sort()
q = lambda p: ok[min(len(ok) - 1, int(p * len(ok)))] * 1000 if ok else float("nan")
n = max(len(ok), 1)
print("%d %.2f %.1f %.1f %.2f %d %d %s" % (len(ok), len(ok) / t, q(0.5), q(0.99), (att - len(ok)) / n, failed, budget, sys.argv[3]))
' "$t0" "$t1" "$undrained" >"$d.fig"
}

printf '== %s s per series, a commit a second per agent, RGW and the test catalog on 127.0.0.1 ==\n' "$DURATION"
printf '%-5s %-4s %8s %9s %9s %9s %9s %7s %7s %9s\n' kind N commits commits/s p50_ms p99_ms retries failed budget undrained
for n in "$@"; do
	for kind in s3 rest; do
		series "$kind" "$n"
		read -r c cps p50 p99 retr failed budget undrained <"$W/$kind-$n.fig"
		printf '%-5s %-4s %8s %9s %9s %9s %9s %7s %7s %9s\n' "$kind" "$n" "$c" "$cps" "$p50" "$p99" "$retr" "$failed" "$budget" "$undrained"
	done
	read -r _ scps sp50 sp99 _ <"$W/s3-$n.fig"
	read -r _ rcps rp50 rp99 _ <"$W/rest-$n.fig"
	python3 -c 'import sys; a = [float(x) for x in sys.argv[1:]]
r = lambda x, y: "%.2f" % (x / y) if y else "-"
print("      rest/s3: commits/s x%s, p50 x%s, p99 x%s" % (r(a[0], a[1]), r(a[2], a[3]), r(a[4], a[5])))' \
		"$rcps" "$scps" "$rp50" "$sp50" "$rp99" "$sp99"
done
