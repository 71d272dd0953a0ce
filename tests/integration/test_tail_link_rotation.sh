#!/usr/bin/env bash
# Kubernetes' log layout: floe tails /var/log/containers/*.log (follow_symlinks: true),
# symbolic links to /var/log/pods/<pod>/<container>/0.log, which the kubelet rotates
# behind the link (0.log -> 0.log.<time>, the runtime then writes a new 0.log, the
# oldest rotated files deleted). Before, the rotation was seen only through the link by
# the periodic rescan (2 s while lines come, 30 s once idle), and the rescan's new file
# read at the next full pass (30 s more): a generation that lived between two rescans was
# never read (here about half of them), and a quiet container's next lines came a minute
# late. Now the link's target directory's events are the link's file's, and a file
# rotated behind the link is drained from its target's directory.
# Part 1: a writer appends numbered lines while the rotation comes twice a second; every
# line is in the table exactly once. Part 2: an idle agent, one rotation, ten lines: in
# the table within 10 s. Part 3: lines appended to a container's file while floe is
# stopped, and the file then rotated behind its link: read at the next start.
source "$(dirname "$0")/lib.sh"

LINES=${LINK_ROT_LINES:-6000}
SECS=${LINK_ROT_SECS:-6}
d=$T/k8s
pods=$d/pods
cont=$d/containers
mkdir -p "$pods/ns_web_1/app" "$pods/ns_db_2/db" "$cont"
: >"$pods/ns_web_1/app/0.log"
: >"$pods/ns_db_2/db/0.log"
ln -s "$pods/ns_web_1/app/0.log" "$cont/web_ns_app-1.log"
ln -s "$pods/ns_db_2/db/0.log" "$cont/db_ns_db-2.log"
INPUT_KEYS="    follow_symlinks: true" COMMIT_INTERVAL=1s AGENT_ID=k8s-node \
	write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$cont/*.log\"]"

# writer FILE: appends "line NNNNNN" for 0..LINES-1 over SECS seconds in batches of 20,
# opening the file for each batch (O_APPEND | O_CREAT: a new 0.log after a rotation, as
# the container runtime reopens it).
writer() {
	python3 - "$1" "$LINES" "$SECS" <<'PY'
import sys, time
path, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
t0 = time.monotonic()
for i in range(0, n, 20):
    with open(path, 'a') as f:
        f.write(''.join('line %06d\n' % k for k in range(i, min(n, i + 20))))
    d = t0 + secs * (i + 20) / n - time.monotonic()
    if d > 0:
        time.sleep(d)
PY
}

# kubelet DIR: rotates DIR/0.log twice a second until $d/stop exists, keeping the four
# newest rotated files.
kubelet() {
	local dir=$1 k=0
	while [ ! -e "$d/stop" ]; do
		sleep 0.5
		k=$((k + 1))
		[ -s "$dir/0.log" ] && mv "$dir/0.log" "$dir/0.log.$(printf %04d $k)"
		ls "$dir"/0.log.* 2>/dev/null | sort | head -n -4 | xargs -r rm -f
	done
}

# rows SQL-WHERE: rows of the current snapshot matching the condition.
rows() {
	rows_sql "$d/wh/default/logs" "select count(*) from t where $1" | tr -dc 0-9
}

"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/floe.err" &
pid=$!
PIDS+=($pid)
wait_log "$d/floe.err" "agent k8s-node started"

# ---- part 1: rotations twice a second under a steady writer ---------------------------
kubelet "$pods/ns_web_1/app" &
kpid=$!
PIDS+=($kpid)
writer "$pods/ns_web_1/app/0.log"
touch "$d/stop"
wait $kpid || true
caught_up() {
	[ "$(snapshot_records "$d/wh/default/logs")" = "$LINES" ]
}
wait_for 20 caught_up || true
got=$(rows "message like 'line %'")
distinct=$(rows_sql "$d/wh/default/logs" "select count(distinct message) from t where message like 'line %'" |
	tr -dc 0-9)
rotated=$(grep -c . <<<"$(ls "$pods/ns_web_1/app")")
echo "# $LINES lines written over ${SECS}s under rotations twice a second; $got rows, $distinct distinct"
check "every line written behind the rotated link is in the table (got $got of $LINES)" \
	test "$got" = "$LINES"
check "none twice ($distinct distinct of $got)" test "$distinct" = "$got"
check "the kubelet rotated the file (files left: $rotated)" test "$rotated" -ge 2
if [ "$got" != "$LINES" ]; then
	rows_sql "$d/wh/default/logs" "select message from t where message like 'line %' order by 1" |
		sed -n 's/^\["line \([0-9]*\)"\]$/\1/p' >"$d/got"
	seq -f '%06g' 0 $((LINES - 1)) | comm -23 - "$d/got" | awk 'NR == 1 || $1 != p + 1 { if (NR > 1) print "# missing " s "-" p; s = $1 } { p = $1 } END { if (NR) print "# missing " s "-" p }' | head -20
fi

# ---- part 2: an idle agent, one rotation ---------------------------------------------
web=$pods/ns_web_1/app
touch "$web/0.log" # the kubelet's last rotation may have left none
sleep 8 # idle long enough for the slow rescan pace
mv "$web/0.log" "$web/0.log.idle"
seq 1 10 | sed 's/^/after idle /' >"$web/0.log"
after_idle() { [ "$(rows "message like 'after idle %'")" = 10 ]; }
check "an idle agent reads the file a rotation behind the link made within 10 s" \
	wait_for 10 after_idle

# ---- part 3: a rotation behind the link while the agent is stopped ---------------------
# Lines appended to the followed file, then the file rotated and a new one begun, all
# while floe is down (an upgrade, a reboot): at the start the old file is found beside
# the link's target by its identity and read to its end, and the new one from its start.
db=$pods/ns_db_2/db
seq 1 5 | sed 's/^/db first /' >>"$db/0.log"
first_in() { [ "$(rows "message like 'db first %'")" = 5 ]; }
check "the second container's lines are read" wait_for 10 first_in
rc=0
stop_pid "$pid" || rc=$?
check "floe stops cleanly (exit $rc)" test "$rc" = 0
seq 1 5 | sed 's/^/db late /' >>"$db/0.log"
mv "$db/0.log" "$db/0.log.0001"
seq 1 5 | sed 's/^/db next /' >"$db/0.log"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/floe2.err" &
pid=$!
PIDS+=($pid)
late_in() { [ "$(rows "message like 'db late %' or message like 'db next %'")" = 10 ]; }
check "after a restart, the lines a rotated file got while floe was down are read, and the new file's" \
	wait_for 15 late_in
check "the first lines are not read twice" test "$(rows "message like 'db first %'")" = 5
rc=0
stop_pid "$pid" || rc=$?
check "floe stops cleanly (exit $rc)" test "$rc" = 0
check "no error in the agent's log" sh -c "! grep -h ' error' '$d/floe.err' '$d/floe2.err'"
finish
