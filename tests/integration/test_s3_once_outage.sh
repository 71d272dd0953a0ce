#!/usr/bin/env bash
# A timer's `run --once` through a store outage of several days, with logrotate running
# meanwhile (a rename, one old file kept, the one before deleted). Before, a --once run
# that found entries in its spool committed them first and, with the store away, ended
# there: only the outage's first run read its log, the others read nothing (exit 1,
# "0 lines read"), and the lines of a file logrotate deleted during the outage were never
# read, lost with no count (10 lines written, 8 in the table). Now every run reads what
# is there into the spool, as the daemon does, and still exits 1 while the store is away;
# when the store is back (s3_stub.py on the same port) one run commits every line once.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
export AWS_EC2_METADATA_DISABLED=true

d=$T/oo
mkdir -p "$d/logs"
SPORT=$(free_port)
cat >"$d/floe.yaml" <<YAML
agent: { id: once-outage, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/logs/app.log"], start_at: beginning }
lake:
  warehouse: s3://bkt/oo
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$SPORT", region: us-east-1, path_style: true, request_timeout: 2s }
YAML
m() { metric "$d/state/metrics.json" "$1"; }

n=0
fails=0
read_each=true
for day in 1 2 3; do
	for i in 1 2 3; do
		n=$((n + 1))
		echo "day $day line $n" >>"$d/logs/app.log"
		rc=0
		"$FLOE_BIN" run -c "$d/floe.yaml" --once >>"$d/out" 2>&1 || rc=$?
		[ "$rc" = 1 ] && fails=$((fails + 1))
		[ "$(m lines)" = 1 ] || read_each=false
	done
	rm -f "$d/logs/app.log.2"
	if [ -f "$d/logs/app.log.1" ]; then mv "$d/logs/app.log.1" "$d/logs/app.log.2"; fi
	mv "$d/logs/app.log" "$d/logs/app.log.1"
done
check "every run with the store away exits 1 ($fails of $n)" test "$fails" = "$n"
check "... and each read its new line into the spool" $read_each
entries=$(find "$d/state/spool" -maxdepth 1 -name '*.entry' | wc -l)
check "the spool holds one entry per run ($entries)" test "$entries" = "$n"

n=$((n + 1))
echo "after the outage line $n" >>"$d/logs/app.log"
stub_start "$d/stub" "$SPORT"
once() { "$FLOE_BIN" run -c "$d/floe.yaml" --once >>"$d/out" 2>&1; }
check "with the store back, a run commits" once
rows=$("$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$SPORT" "s3://bkt/oo/default/logs" 2>/dev/null |
	sed -n 's#^  s3://bkt/.*  records=\([0-9]*\).*#\1#p' | awk '{ s += $1 } END { print s + 0 }')
check "every line is in the table once ($rows of $n)" test "$rows" = "$n"
check "and the spool is empty" test "$(m spool_bytes)" = 0
stub_stop
finish
