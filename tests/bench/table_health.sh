#!/usr/bin/env bash
# Table health benchmark: compaction. COMMITS tiny commits (LINES log lines each, JSON with
# a 200-hex-digit field so the data does not compress to nothing) into one past day make
# as many small files; `floe maintain` rewrites them (scan, streaming read, write, upload
# into the warehouse, replace commit) and is timed end to end: MB/s of input files, rows/s
# and its peak RSS; side by side with DuckDB rewriting the same files into one with one
# thread (COPY (SELECT * FROM read_parquet([...])) TO ... (FORMAT parquet), ZSTD level 3,
# the agent's codec and level), its RSS (node included) and the ratio (above 1: floe is
# faster). Each time is the best of REPEAT runs (default 3), on a fresh copy of the table.
# Prints figures only; asserts nothing.
# usage: tests/bench/table_health.sh [COMMITS [LINES]]   (default 200 x 500)
# Needs a floe binary (FLOE_BIN, default $BUILD/floe, BUILD default build-test/gcc) and
# the test readers (node, DuckDB).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
FLOE_BIN=${FLOE_BIN:-$BUILD/floe}
[ -x "$FLOE_BIN" ] || { echo "build $FLOE_BIN first (or set FLOE_BIN)"; exit 2; }
COMMITS=${1:-200}
LINES=${2:-500}
REPEAT=${REPEAT:-3}
W=$(mktemp -d /tmp/floe-bench-health.XXXXXX)
trap '[ "${KEEP:-0}" = 1 ] && echo "kept $W" || rm -rf "$W"' EXIT
mkdir -p "$W/logs"
cat >"$W/floe.yaml" <<YAML
agent:
  id: bench
  state_dir: $W/state
inputs:
  - type: tail
    paths: ["$W/logs/*.log"]
    start_at: beginning
    parser: json
    timestamp: { field: time, format: rfc3339 }
lake:
  warehouse: $W/wh
YAML
gen() {
	python3 - "$W/logs/a.log" "$1" "$LINES" <<'PY'
import random, sys
path, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
r = random.Random(first)
words = ["GET", "POST", "/api/v1/items", "/login", "200", "404", "500", "user", "cache", "miss", "hit"]
with open(path, "a") as f:
    for j in range(first, first + n):
        s = j % 86000
        f.write('{"time":"2026-03-01T%02d:%02d:%02dZ","app":"app%d","level":"%s","msg":"%s","req":"%x"}\n' % (
            s // 3600, s // 60 % 60, s % 60, j % 7, ["info", "warn", "error"][j % 3],
            " ".join(r.choice(words) for _ in range(8)), r.getrandbits(800)))
PY
}
echo "== $COMMITS commits of $LINES lines into one day =="
for i in $(seq 0 $((COMMITS - 1))); do
	gen $((i * LINES))
	"$FLOE_BIN" run -c "$W/floe.yaml" --once --log-level error
done
"$FLOE_BIN" inspect "$W/wh/default/logs" | sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' >"$W/files"
bytes=$(xargs stat -c %s <"$W/files" | awk '{t += $1} END {print t}')
rows=$((COMMITS * LINES))
echo "input: $(wc -l <"$W/files") files, $(echo "$bytes / 1000000" | bc -l | xargs printf '%.1f') MB, $rows rows"

# rss_run OUT COMMAND...: runs COMMAND, "seconds rss_kib cpu_seconds" of it into OUT.
rss_run() {
	local out=$1
	shift
	local t0 t1
	t0=$(date +%s%N)
	/usr/bin/time -f '%M %U %S' -o "$out.rss" "$@" >"$out.log" 2>&1
	t1=$(date +%s%N)
	read -r rss us ss <"$out.rss"
	echo "$(echo "($t1 - $t0) / 1000000000" | bc -l) $rss $(echo "$us + $ss" | bc -l)" >"$out"
}
best_floe="" best_duck=""
# The table's files name their absolute paths: each run gets the original back in place.
cp -a "$W/wh" "$W/wh.orig"
sed "s#state_dir: $W/state#state_dir: $W/mstate#" "$W/floe.yaml" >"$W/m.yaml"
for _ in $(seq "$REPEAT"); do
	rm -rf "$W/wh" && cp -a "$W/wh.orig" "$W/wh" && sync
	rss_run "$W/f" "$FLOE_BIN" maintain -c "$W/m.yaml" --log-level warn
	read -r s r c <"$W/f"
	if [ -z "$best_floe" ] || [ "$(echo "$s < ${best_floe%% *}" | bc -l)" = 1 ]; then best_floe="$s $r $c"; fi
	line=$(node tests/bench/duck_rewrite.js "@$W/files" "$W/duck.parquet" zstd 3 122880)
	ds=$(echo "$line" | sed -n 's/.*seconds=\([^ ]*\).*/\1/p')
	dr=$(echo "$line" | sed -n 's/.*rss_kib=\([^ ]*\).*/\1/p')
	dc=$(echo "$line" | sed -n 's/.*cpu=\([^ ]*\).*/\1/p')
	if [ -z "$best_duck" ] || [ "$(echo "$ds < ${best_duck%% *}" | bc -l)" = 1 ]; then best_duck="$ds $dr $dc"; fi
done
out=$(grep '^logs: compacted' "$W/f.log" || true)
echo "floe maintain: $out"
printf '%-22s %8s %8s %11s %9s %8s\n' "" seconds "MB/s" "rows/s" "RSS KiB" "CPU s"
read -r fs fr fc <<<"$best_floe"
read -r ds dr dc <<<"$best_duck"
printf '%-22s %8.3f %8.1f %11.0f %9d %8.2f\n' "floe maintain" "$fs" "$(echo "$bytes / 1000000 / $fs" | bc -l)" \
	"$(echo "$rows / $fs" | bc -l)" "$fr" "$fc"
printf '%-22s %8.3f %8.1f %11.0f %9d %8.2f\n' "duckdb copy, 1 thread" "$ds" "$(echo "$bytes / 1000000 / $ds" | bc -l)" \
	"$(echo "$rows / $ds" | bc -l)" "$dr" "$dc"
printf 'speed floe / duckdb: %.2f x wall, %.2f x CPU (DuckDB RSS and CPU include node)\n' \
	"$(echo "$ds / $fs" | bc -l)" "$(echo "$dc / $fc" | bc -l)"
