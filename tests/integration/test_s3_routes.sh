#!/usr/bin/env bash
# Several raw tables on a real S3 server (Ceph RGW on loopback): a crash between two
# tables' commits, then kill -9 at random moments of continuous runs while a writer
# appends; after a final --once, the three tables together hold every line exactly once,
# each line in the table its route rules name.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
CYCLES=${KILL_CYCLES:-12}
s3_start 15680

source "$(dirname "$0")/routes_lib.sh"

# conf DIR PREFIX: three tables (routes_lib.sh) in s3://$S3_BUCKET/PREFIX.
conf() {
	{
		routed_yaml "$1"
		cat <<YAML
lake:
  warehouse: s3://$S3_BUCKET/$2
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$S3PORT", region: $S3_REGION, path_style: true }
YAML
	} >"$1/floe.yaml"
}
# all_once DIR PREFIX: every line once over the three tables (their live files fetched);
# only_theirs DIR: each table's rows only those its rules give it.
all_once() {
	local t
	: >"$1/files"
	for t in logs access security; do
		s3_live "$1/floe.yaml" "$2" "$1/s3" "$1/files.$t" "$t" || return 1
		cat "$1/files.$t" >>"$1/files"
	done
	node "$READER/check_rows.js" "$1/files" "$1"/logs/*.log
}
only_theirs() {
	local q f
	for t in access security logs; do
		f=$(sed "s/.*/'&'/" "$1/files.$t" | paste -sd,)
		[ -n "$f" ] || return 1
		case $t in
		access) q="attrs['kind'] IS DISTINCT FROM 'access'" ;;
		security) q="app NOT IN ('sshd', 'sudo', 'login')" ;;
		logs) q="app IS DISTINCT FROM 'cron'" ;;
		esac
		[ "$(duck "SELECT count(*) FROM read_parquet([$f]) WHERE $q")" = '["0"]' ] || return 1
	done
}

d="$T/between"
mkdir -p "$d/logs"
routed_lines "$d/logs/app.log" 0 900
conf "$d" between
rc=0
FLOE_CRASH_AT=commit-between-tables timeout 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
check "between: the first run dies between two tables' commits" test $rc = 99
routed_lines "$d/logs/app.log" 900 300
check "between: the restart succeeds" timeout 60 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "between: every line exactly once over the three tables" all_once "$d" between
check "between: each table holds only its rows" only_theirs "$d"

d="$T/kill"
mkdir -p "$d/logs"
conf "$d" kill
(
	n=0
	for b in $(seq 1 4000); do
		[ -e "$d/stop-writer" ] && break
		routed_lines "$d/logs/app.log" $n 60
		n=$((n + 60))
		sleep 0.05
	done
) &
WRITER=$!
PIDS+=("$WRITER")
RANDOM=$$
for cycle in $(seq 1 "$CYCLES"); do
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level error 2>>"$d/err" &
	pid=$!
	PIDS+=("$pid")
	ms=$((300 + RANDOM % 1500))
	sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))" # a random moment, not a wait
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
done
touch "$d/stop-writer"
wait "$WRITER" || true
check "kill: after $CYCLES kills a final run succeeds" timeout 120 "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "kill: every line exactly once over the three tables" all_once "$d" kill
check "kill: each table holds only its rows" only_theirs "$d"
finish
