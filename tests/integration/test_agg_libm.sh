#!/usr/bin/env bash
# libm is loaded only for the aggregations' sketches (platform/libm.h): floe does not
# link it, an agent that only tails files never maps it, one with distinct or quantiles
# metrics loads it at start, and where it cannot be loaded such an aggregation fails
# with the loader's reason (exit 1) while an agent without sketches runs as before.
source "$(dirname "$0")/lib.sh"

# A static floe (FLOE_STATIC) links libm and loads nothing.
if ! readelf -d "$FLOE_BIN" | grep NEEDED >/dev/null; then
	skip "a static floe links libm"
fi
# The sanitizers' runtimes (linked in, as clang does, or shared) need libm themselves.
if readelf -Ws "$FLOE_BIN" | grep -E '__(asan|ubsan|tsan)_' >/dev/null; then
	skip "a sanitizer build's runtime links libm"
fi
check "floe does not link libm (readelf -d: no libm.so.6 NEEDED)" \
	bash -c "! readelf -d '$FLOE_BIN' | grep -q 'NEEDED.*libm\.so'"
check "nothing floe links brings libm (ldd)" bash -c "! ldd '$FLOE_BIN' | grep -q 'libm\.so'"

d="$T/m"
mkdir -p "$d/logs"
printf 'Dec  4 02:00:00 host app[%d]: line %d\n' 1 1 2 2 3 3 >"$d/logs/a.log"
pattern='^(?<ts>[A-Z][a-z]{2} +[0-9]+ [0-9:]{8}) (?<node>[^ ]+) (?<app>[^:[]+)\[(?<pid>[0-9]+)\]: (?<msg>.*)$'
# config NAME METRICS: a configuration in $d/NAME.yaml tailing a.log, with an
# aggregation of METRICS when METRICS is not empty.
config() {
	local name=$1 metrics=$2
	cat >"$d/$name.yaml" <<YAML
agent: {id: m-$name, state_dir: $d/$name/state}
inputs:
  - type: tail
    paths: ["$d/logs/a.log"]
    start_at: beginning
    parser: regex
    pattern: '$pattern'
    timestamp: {field: ts, format: syslog, zone: UTC}
lake: {warehouse: $d/$name/wh}
YAML
	if [ -n "$metrics" ]; then
		printf 'aggregations:\n  - {name: agg, from: [0], window: 1m, group_by: [app], max_groups: 10,\n      metrics: %s}\n' \
			"$metrics" >>"$d/$name.yaml"
	fi
}
config plain ""
config sketch '[count, {distinct: pid}, {quantiles: pid, q: [0.5]}]'
config counts '[count, {sum: pid}]'

# run_until_started NAME: starts floe on NAME's configuration, waits for its "started"
# line (10 s at most), and sets PID.
run_until_started() {
	"$FLOE_BIN" run -c "$d/$1.yaml" >"$d/$1.log" 2>&1 &
	PID=$!
	PIDS+=($PID)
	for _ in $(seq 1 100); do
		grep -q " started " "$d/$1.log" && break
		sleep 0.1
	done
}
run_until_started plain
check "a tail-only agent has started" grep -q " started " "$d/plain.log"
check "a tail-only agent: libm is not loaded" bash -c "! grep -q '/libm\.so' /proc/$PID/maps"
kill $PID 2>/dev/null || true
wait $PID 2>/dev/null || true
run_until_started sketch
check "an agent with distinct and quantiles metrics has started" grep -q " started " "$d/sketch.log"
check "distinct and quantiles metrics: libm is loaded" grep -q '/libm\.so' /proc/$PID/maps
kill $PID 2>/dev/null || true
wait $PID 2>/dev/null || true

# Where libm cannot be loaded (a file that is no library comes first in the loader's
# path), only the aggregations that need it fail, naming it.
mkdir -p "$d/nolib"
echo "not a library" >"$d/nolib/libm.so.6"
rc=0
LD_LIBRARY_PATH="$d/nolib" "$FLOE_BIN" run -c "$d/plain.yaml" --once --log-level warn \
	>"$d/nolib-plain.err" 2>&1 || rc=$?
check "without libm: a tail-only agent runs (exit 0)" test "$rc" = 0
rc=0
LD_LIBRARY_PATH="$d/nolib" "$FLOE_BIN" run -c "$d/counts.yaml" --once --log-level warn \
	>"$d/nolib-counts.err" 2>&1 || rc=$?
check "without libm: an aggregation of counts and sums runs (exit 0)" test "$rc" = 0
rc=0
LD_LIBRARY_PATH="$d/nolib" "$FLOE_BIN" run -c "$d/sketch.yaml" --once --log-level warn \
	>"$d/nolib-sketch.err" 2>&1 || rc=$?
check "without libm: an aggregation with sketches fails (exit 1)" test "$rc" = 1
check "without libm: the error names the aggregation, the library and the package" \
	grep -q "aggregation 'agg': cannot load libm.so.6 (.*): distinct and quantiles metrics need libm (Debian: the libc6 package)" \
	"$d/nolib-sketch.err"
finish
