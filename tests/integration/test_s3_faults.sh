#!/usr/bin/env bash
# floe through a fault-injecting proxy in front of a real S3 server (Ceph RGW on loopback).
# (c) A continuous run while a writer appends, with ~15 % of requests dropped, answered
#     500/503, stalled or cut after RGW applied them; then the faults stop and floe drains:
#     every line is in the table exactly once.
# (d) The store goes down (the proxy stops: connections refused) while 50 MiB of lines
#     arrive, more than the 16 MiB spool holds; then it returns and floe drains. drop_oldest:
#     rows in the table + dropped_rows (metrics.json) = lines written, every row is a written
#     line at its offset, none twice. block: nothing dropped, every line exactly once, and
#     blocked_ms > 0.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
GEN="$FLOE_SRC/tests/integration/gen_lines.py"
s3_start 19480

# floe_start DIR: a continuous run of DIR/floe.yaml; sets FLOE_PID.
floe_start() {
	"$FLOE_BIN" run -c "$1/floe.yaml" --log-level info 2>>"$1/err" &
	FLOE_PID=$!
	PIDS+=("$FLOE_PID")
}
# floe_stop: SIGTERM, then wait (bounded: SIGKILL after 60 s). Fails if floe failed.
floe_stop() {
	kill -TERM "$FLOE_PID" 2>/dev/null || true
	local i
	for i in $(seq 1 600); do
		kill -0 "$FLOE_PID" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$FLOE_PID" 2>/dev/null || true
	wait "$FLOE_PID"
}
# drained DIR LINES: metrics.json shows every line read and nothing left in the spool.
drained() {
	local m="$1/state/metrics.json"
	[ -f "$m" ] || return 1
	[ "$(metric "$m" lines)" = "$2" ] && [ "$(metric "$m" spool_bytes)" = 0 ] &&
		[ $(($(metric "$m" rows_committed) + $(metric "$m" dropped_rows))) = "$2" ]
}

# --- (c) faults on ~15 % of requests during a continuous run ------------------------------------
d="$T/c"
mkdir -p "$d/logs"
printf 'rate=0.15\nweights=drop:1,500:1,503:1,stall:0.6,cut:2\nstall_s=2\n' >"$d/ctl"
proxy_start 0 "$d/ctl" "$d/proxy" 7
COMMIT_INTERVAL=1s s3_config "$d/floe.yaml" "$d/state" faults "[\"$d/logs/*.log\"]" "$PROXY_PORT" \
	"    target_file_size: 1MiB"
s3_config "$d/direct.yaml" "$d/state-direct" faults "[\"$T/none/*.log\"]" "$S3PORT"
# Start-up must get through the faults too (probe, table creation): a few tries.
ok=0
for try in 1 2 3 4 5; do
	floe_start "$d"
	wait_for 30 bash -c "test -f '$d/state/metrics.json' || ! kill -0 $FLOE_PID 2>/dev/null" || true
	if [ -f "$d/state/metrics.json" ]; then
		ok=1
		break
	fi
	wait "$FLOE_PID" 2>/dev/null || true
done
check "(c) floe starts through the faulty proxy" test $ok = 1
mapfile -t lines < <(cat "$DATA"/*.log | tr -d '\r')
n=0
t_end=$(($(date +%s) + 20))
for burst in $(seq 1 80); do
	[ "$(date +%s)" -lt "$t_end" ] || break
	printf '%s\n' "${lines[@]:n:400}" >>"$d/logs/app.log"
	n=$(((n + 400) % ${#lines[@]}))
	sleep 0.25
done
total=$(wc -l <"$d/logs/app.log")
echo "rate=0" >"$d/ctl"
check "(c) floe drains once the faults stop ($total lines)" wait_for 90 drained "$d" "$total"
check "(c) floe is still running" kill -0 "$FLOE_PID"
check "(c) floe stops cleanly on SIGTERM" floe_stop
proxy_stop
echo "# (c) $(cat "$d/proxy.out" | tail -1)"
echo "# (c) metrics.json: $(cat "$d/state/metrics.json")"
echo "# (c) floe's errors: $(grep -c 'floe error' "$d/err" || true), warnings: $(grep -c 'floe warn' "$d/err" || true)"
check "(c) faults were injected" test "$(grep -c '^[0-9.]* fault' "$d/proxy")" -gt 10
check "(c) some cut after the request was applied" grep -q ' cut (upstream answered' "$d/proxy"
check "(c) the live files are fetched" s3_live "$d/direct.yaml" faults "$d/s3" "$d/files"
check "(c) every line is in the table exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"

# --- (d) the store is down while the spool overflows ---------------------------------------------
# rows_check FILES LOG: every row is a line of LOG at its offset (the line starts with it),
# no offset or line twice. Prints the row count.
rows_check() {
	local list
	list=$(sed "s/.*/'&'/" "$1" | paste -sd,)
	duck "select count(*), count(distinct \"offset\"), count(distinct message),
		count(*) filter (where coalesce(try_cast(substr(message, 1, 12) as bigint) <> \"offset\", true)),
		count(*) filter (where source <> '$2'),
		count(*) filter (where f.line is null)
		from read_parquet([$list]) p left join
		read_csv('$2', columns = {'line': 'VARCHAR'}, header = false, delim = '\t', quote = '',
			escape = '') f on p.message = f.line" >"$1.count" || return 1
	cat "$1.count" | tr -d '[]"' | awk -F, '{ print $1; exit !($1 == $2 && $1 == $3 && $4 == 0 && $5 == 0 && $6 == 0) }'
}

# outage POLICY: one (d) run with spool.policy POLICY.
outage() {
	local policy=$1
	local d="$T/d-$policy"
	mkdir -p "$d/logs"
	: >"$d/ctl"
	proxy_start 0 "$d/ctl" "$d/proxy" 11
	local port=$PROXY_PORT
	# A 5 s interval: a failing commit (retries against a refused port) takes ~2 s, and
	# reading waits while it runs.
	COMMIT_INTERVAL=5s s3_config "$d/floe.yaml" "$d/state" "outage-$policy" "[\"$d/logs/*.log\"]" "$port" \
		"    target_file_size: 2MiB" "spool: { max_bytes: 16MiB, policy: $policy }"
	s3_config "$d/direct.yaml" "$d/state-direct" "outage-$policy" "[\"$T/none/*.log\"]" "$S3PORT"
	printf '%012d first line\n' 0 >"$d/logs/app.log" # offset first, as gen_lines.py writes
	floe_start "$d"
	check "(d $policy) floe commits while the store is up" wait_for 30 drained "$d" 1
	proxy_stop
	check "(d $policy) the store is down" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null"
	/usr/bin/python3 "$GEN" "$d/logs/app.log" 50 >"$d/gen.out"
	local total
	total=$(wc -l <"$d/logs/app.log")
	if [ "$policy" = drop_oldest ]; then
		check "(d $policy) the spool overflows and drops while the store is down" \
			wait_for 120 bash -c "[ \"\$(sed -n 's/.*\"dropped_entries\":\([0-9]*\).*/\1/p' '$d/state/metrics.json')\" -gt 0 ] &&
				grep -q '\"lines\":$total,' '$d/state/metrics.json'"
	else
		check "(d $policy) the spool fills to its limit while the store is down" \
			wait_for 120 bash -c "[ \"\$(sed -n 's/.*\"spool_bytes\":\([0-9]*\).*/\1/p' '$d/state/metrics.json')\" -ge 16777216 ]"
		sleep 3 # the store stays down a while longer; inputs wait
	fi
	echo "# (d $policy) while down: $(cat "$d/state/metrics.json")"
	proxy_start "$port" "$d/ctl" "$d/proxy" 12
	check "(d $policy) floe drains once the store returns ($total lines)" wait_for 120 drained "$d" "$total"
	check "(d $policy) floe stops cleanly on SIGTERM" floe_stop
	proxy_stop
	local m="$d/state/metrics.json"
	echo "# (d $policy) metrics.json: $(cat "$m")"
	check "(d $policy) the live files are fetched" s3_live "$d/direct.yaml" "outage-$policy" "$d/s3" "$d/files"
	local rows dropped
	rows=$(rows_check "$d/files" "$d/logs/app.log") || {
		fail "(d $policy) rows are lines at their offsets, none twice ($(cat "$d/files.count"))"
		return
	}
	pass "(d $policy) every row is a written line at its offset, none twice ($rows rows)"
	dropped=$(metric "$m" dropped_rows)
	check "(d $policy) rows in the table ($rows) + dropped_rows ($dropped) = lines written ($total)" \
		test $((rows + dropped)) = "$total"
	check "(d $policy) rows_committed = rows in the table" test "$(metric "$m" rows_committed)" = "$rows"
	if [ "$policy" = drop_oldest ]; then
		check "(d $policy) rows were dropped" test "$dropped" -gt 0
	else
		check "(d $policy) nothing was dropped" test "$dropped" = 0
		check "(d $policy) blocked_ms > 0 ($(metric "$m" blocked_ms))" test "$(metric "$m" blocked_ms)" -gt 0
		check "(d $policy) every line exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"
	fi
}
outage drop_oldest
outage block
finish
