#!/usr/bin/env bash
# Commit soak: does a commit cost more as the table ages? `floe run` tails a log that a
# generator appends to at a steady RATE (lines a second, default 950), commits every
# second (commit_interval 1s, the shortest) into a local warehouse made with floe's own
# table properties (none configured), until COMMITS commits are in the table. Two series
# run side by side, each with its own warehouse and agent:
#   alone:    the agent by itself;
#   maintain: `floe maintain` in a loop beside it (maintain.min_age 0), so replace
#             commits race the agent's.
# The lines carry their own event time, which runs 60 times faster than the clock, and
# both tables are partitioned by hour(ts): an hour partition closes every real minute,
# so maintain has closed partitions to compact throughout.
# Per block of commits (the first hundred ... the last hundred) it prints the agent's CPU
# per commit (utime+stime from /proc, sampled every 0.2 s and interpolated at the block's
# first and last commit; it includes tailing and writing the second's lines, which the
# steady rate keeps constant) and the seal->commit latency p50/p90 (from the log's
# millisecond timestamps: "sealed spool entry N" to the commit whose commit-seq is N),
# then the ratio of the last block to the first, and the table's size at the end.
# Prints figures only; asserts nothing.
# usage: tests/bench/soak_commits.sh [COMMITS]   (default 300, about 5 minutes; the
#        issue's figures: 3600, an hour)
# Needs a floe binary (FLOE_BIN, default $BUILD/floe, BUILD default build-test/gcc).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
FLOE_BIN=${FLOE_BIN:-$BUILD/floe}
[ -x "$FLOE_BIN" ] || { echo "build $FLOE_BIN first (or set FLOE_BIN)"; exit 2; }
FLOE_BIN=$(realpath "$FLOE_BIN")
COMMITS=${1:-300}
RATE=${RATE:-950}
BLOCK=${BLOCK:-100}
W=$(mktemp -d /tmp/floe-bench-soak.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ "${KEEP:-0}" = 1 ] && echo "kept $W" || rm -rf "$W"
}
trap cleanup EXIT

# The generator: RATE lines a second, caught up to the clock every 50 ms (so a slow
# moment does not lower the rate), event time 60x the clock from 2026-03-01T00:00Z.
gen() {
	exec python3 - "$1" "$RATE" <<'PY'
import random, sys, time
path, rate = sys.argv[1], int(sys.argv[2])
r = random.Random(1)
words = ["GET", "POST", "/api/v1/items", "/login", "200", "404", "500", "user", "cache", "miss"]
start, n = time.monotonic(), 0
with open(path, "a", buffering=1 << 16) as f:
    while True:
        el = time.monotonic() - start
        due = int(el * rate)
        ev = int(el * 60)
        while n < due:
            f.write('{"time":"2026-03-%02dT%02d:%02d:%02dZ","app":"app%d","level":"%s","msg":"%s"}\n' % (
                1 + ev // 86400, ev // 3600 % 24, ev // 60 % 60, ev % 60, n % 7,
                ["info", "warn", "error"][n % 3], " ".join(r.choice(words) for _ in range(8))))
            n += 1
        f.flush()
        time.sleep(0.05)
PY
}

# series NAME: starts one agent (and its generator, and its maintain loop for "maintain").
series() {
	local d="$W/$1"
	mkdir -p "$d/logs"
	: >"$d/logs/a.log"
	cat >"$d/floe.yaml" <<YAML
agent: { id: soak, state_dir: $d/state }
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
    parser: json
    timestamp: { field: time, format: rfc3339 }
tables:
  logs: { commit_interval: 1s, partition_by: ["hour(ts)"] }
lake: { warehouse: $d/wh }
maintain: { min_age: 0s }
YAML
	gen "$d/logs/a.log" </dev/null >/dev/null 2>&1 &
	pids+=($!)
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info >"$d/run.log" 2>&1 &
	local agent=$!
	pids+=($agent)
	echo "$agent" >"$d/pid"
	# /proc/PID/stat fields 14 and 15 (utime, stime) in clock ticks, with the time in ms.
	(while [ -e "/proc/$agent/stat" ]; do
		echo "$(date +%s%3N) $(awk '{print $14 + $15}' "/proc/$agent/stat" 2>/dev/null)"
		sleep 0.2
	done) >"$d/cpu" 2>/dev/null </dev/null &
	pids+=($!)
	if [ "$1" = maintain ]; then
		(while [ ! -e "$W/stop" ]; do
			"$FLOE_BIN" maintain -c "$d/floe.yaml" --log-level info >>"$d/maintain.log" 2>&1 || true
			sleep 1
		done) </dev/null >/dev/null 2>&1 &
		pids+=($!)
	fi
}

commits() { grep -c 'table: committed snapshot' "$1/run.log" 2>/dev/null || true; }

echo "== $COMMITS commits, one a second, $RATE lines a second, floe's table properties =="
series alone
series maintain
# Waits for the commits by polling the agents' logs (they say nothing else when done).
while :; do
	a=$(commits "$W/alone") m=$(commits "$W/maintain")
	[ "${a:-0}" -ge "$COMMITS" ] && [ "${m:-0}" -ge "$COMMITS" ] && break
	for s in alone maintain; do
		kill -0 "$(cat "$W/$s/pid")" 2>/dev/null || { echo "$s: the agent stopped"; tail "$W/$s/run.log"; exit 1; }
	done
	sleep 5
done

# report NAME: the per-block table of one series.
report() {
	local d="$W/$1"
	echo "-- $1 (ticks per second $(getconf CLK_TCK))"
	python3 - "$d/run.log" "$d/cpu" "$COMMITS" "$BLOCK" "$(getconf CLK_TCK)" <<'PY'
import bisect, datetime, re, sys
log, cpuf, commits, block, tck = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def ms(t):
    return datetime.datetime.strptime(t, "%Y-%m-%dT%H:%M:%S.%fZ").timestamp() * 1000
st, sc = [], []
for l in open(cpuf):
    f = l.split()
    if len(f) == 2:
        st.append(int(f[0])); sc.append(int(f[1]))
def cpu_at(t):  # ticks at time t, interpolated between the samples around it
    i = min(max(bisect.bisect_left(st, t), 1), len(st) - 1)
    a, b = st[i - 1], st[i]
    return sc[i - 1] + (sc[i] - sc[i - 1]) * (t - a) / (b - a) if b > a else sc[i]
seal, ct, lat = {}, [], []
for l in open(log):
    m = re.search(r"sealed spool entry (\d+):", l)
    if m:
        seal[m.group(1)] = ms(l.split()[0])
    m = re.search(r"table: committed snapshot \d+ \(commit-seq (\d+),", l)
    if m and len(ct) < commits:
        t = ms(l.split()[0])
        ct.append(t)
        lat.append(t - seal[m.group(1)] if m.group(1) in seal else None)
def pct(a, p):
    return a[int(p * (len(a) - 1) + 0.5)] if a else 0
rows = []
print("   %-13s %9s %8s %8s" % ("commits", "cpu ms/c", "p50 ms", "p90 ms"))
for b in range(0, len(ct), block):
    e = min(b + block, len(ct)) - 1
    a = sorted(x for x in lat[b:e + 1] if x is not None)
    c = (cpu_at(ct[e]) - cpu_at(ct[b])) * 1000 / tck / (e - b) if e > b else 0
    rows.append((c, pct(a, 0.5), pct(a, 0.9)))
    print("   %5d-%-7d %9.2f %8.0f %8.0f" % (b + 1, e + 1, *rows[-1]))
if len(rows) > 1 and all(rows[0]):
    print("   last / first block: cpu %.2fx, p50 %.2fx, p90 %.2fx" % tuple(l / f for l, f in zip(rows[-1], rows[0])))
PY
	local meta="$d/wh/default/logs/metadata"
	local cur
	cur=$(ls -t "$meta"/*.metadata.json | head -1)
	echo "   at the end: metadata.json $(stat -c %s "$cur") bytes, metadata/ $(find "$meta" -type f | wc -l) files" \
		"$(du -sb "$meta" | cut -f1) bytes; $("$FLOE_BIN" inspect "$d/wh/default/logs" | grep -m1 '^live files')"
	[ "$1" != maintain ] || echo "   maintain runs: $(grep -c 'table: replaced' "$d/maintain.log" || true) replace commits"
}
touch "$W/stop"
kill "$(cat "$W/alone/pid")" "$(cat "$W/maintain/pid")" 2>/dev/null || true
report alone
report maintain
