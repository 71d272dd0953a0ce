#!/usr/bin/env bash
# A local warehouse on a file system that fills up (a 1 MiB tmpfs): a full disk is the
# store refusing for now, as an S3 store's refusal is. (a) Full at the start, the table
# not made yet: the daemon starts all the same, reads into its spool, says why on
# /healthz (503, the error) and in floe_store_reachable 0, and when space is freed makes
# the table and commits every line once. (b) Filled while it runs: the commits fail, said
# once in the log and on /healthz (a data file stored, its commit not), no metadata file a
# reader sees is cut short, and
# when space returns every line is in the table once.
source "$(dirname "$0")/lib.sh"

d="$T/whfull"
mkdir -p "$d/logs" "$d/wh"
mount -t tmpfs -o size=1m tmpfs "$d/wh" 2>/dev/null || skip "cannot mount a tmpfs (needs root)"
trap 'umount "$d/wh" 2>/dev/null || true; cleanup' EXIT
cat >"$d/floe.yaml" <<YAML
agent: {id: whfull, state_dir: $d/state, http: {listen: "127.0.0.1:0"}}
inputs: [{type: tail, paths: ["$d/logs/*.log"], start_at: beginning}]
tables: {logs: {commit_interval: 1s}}
lake: {warehouse: $d/wh}
YAML
TABLE="$d/wh/default/logs"
rows() { "$FLOE_BIN" inspect "$TABLE" 2>/dev/null | sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p'; }
wait_rows() {
	local i
	for i in $(seq 1 300); do
		[ "$(rows)" = "$1" ] && return 0
		sleep 0.1
	done
	return 1
}
# fill NAME [LEAVE]: a file taking the free space of the warehouse's file system but LEAVE
# bytes (0: all of it).
fill() {
	local avail
	avail=$(( $(df -B1 --output=avail "$d/wh" | tail -1) - ${2:-0} ))
	[ "$avail" -gt 0 ] && dd if=/dev/zero of="$d/wh/filler.$1" bs=4096 count=$((avail / 4096)) 2>/dev/null
	[ "${2:-0}" -gt 0 ] || dd if=/dev/zero of="$d/wh/filler.$1" bs=512 count=64 oflag=append conv=notrunc 2>/dev/null || true
}
# health_has TEXT: until /healthz answers 503 with TEXT in its reason, at most 10 s.
health_has() {
	local i
	for i in $(seq 1 100); do
		[ "$(curl -s -o "$d/health" -w '%{http_code}' "http://127.0.0.1:$port/healthz")" = 503 ] &&
			grep -q "$1" "$d/health" && return 0
		sleep 0.1
	done
	return 1
}
# (a) Full at the start.
fill a
seq 1 100 | sed 's/^/a /' >"$d/logs/x.log"
run_serving "$d/floe.yaml" "$d/err"
check "a: the daemon starts on a full warehouse" test -n "$port"
check "a: says it starts without the table" \
	log_has "$d/err" "No space left on device; starting without it" 1 "$pid"
check "a: /healthz says the store refuses, and why" health_has "No space left on device"
check "a: /metrics has floe_store_reachable 0" prom_is "floe_store_reachable 0"
check "a: the lines wait in the spool" prom_is "floe_spool_entries 1"
rm -f "$d"/wh/filler.*
check "a: space freed: the table is made and every line committed" wait_rows 100
check "a: /metrics has floe_store_reachable 1" prom_is "floe_store_reachable 1"

# (b) Filled while it runs.
mark=$(wc -l <"$d/err")
# A page left: the batch's data file fits, its manifest and metadata do not.
fill b 4096
seq 1 100 | sed 's/^/b /' >>"$d/logs/x.log"
check "b: the commit fails, said once" log_has "$d/err" "the store is away or refuses: .*No space left on device" 1 "$pid"
check "b: /healthz says why" health_has "No space left on device"
check "b: /metrics has floe_store_reachable 0" prom_is "floe_store_reachable 0"
seq 101 200 | sed 's/^/b /' >>"$d/logs/x.log"
check "b: more lines wait in the spool" log_has "$d/err" "sealed spool entry 3" 1 "$pid"
check "b: the failure is not logged at every retry" \
	test "$(tail -n +$((mark + 1)) "$d/err" | grep -c "the store is away or refuses")" = 1
ok=1
for f in "$TABLE"/metadata/v*.metadata.json; do
	python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null || ok=0
done
check "b: every metadata file a reader sees is whole JSON" test $ok = 1
check "b: no temporary file left in the table" test -z "$(find "$TABLE" -name '.*.tmp.*')"
rm -f "$d"/wh/filler.*
check "b: space back: every line in the table" wait_rows 300
check "b: the daemon says so" log_has "$d/err" "the store answers again" 2 "$pid"
check "the daemon stops cleanly" stop_pid "$pid"
check "every line once" test "$(rows_sql "$TABLE" "SELECT count(DISTINCT message) FROM t")" = '["300"]'
finish
