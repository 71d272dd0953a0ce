#!/usr/bin/env bash
# Crashes at every step of sealing and committing, and kill -9 at random moments of a
# continuous run, each followed by a restart: afterwards the table holds every input
# line exactly once.
source "$(dirname "$0")/lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"

points=(seal-before-entry seal-before-checkpoint commit-after-manifest commit-after-metadata
	commit-before-spool-remove)
for point in "${points[@]}"; do
	d="$T/$point"
	mkdir -p "$d/logs"
	# Whole lines only: appending to an unterminated last line would continue a line
	# that --once already committed (test_loghub covers that case).
	for f in OpenSSH_2k.log Linux_2k.log; do sed -e '$a\' "$DATA/$f" >"$d/logs/$f"; done
	write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
	rc=0
	FLOE_CRASH_AT=$point "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
	check "$point: the first run dies at the crash point" test $rc = 99
	# More lines arrive while the agent is down.
	head -100 "$DATA/Apache_2k.log" | tr -d '\r' >>"$d/logs/Linux_2k.log"
	check "$point: the restart succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	live_files "$d/wh/default/logs" >"$d/files"
	check "$point: every line exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
done

# kill -9 at random moments of a continuous run while a writer appends.
d="$T/kill"
mkdir -p "$d/logs"
COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]" \
	"    target_file_size: 1MiB"
mapfile -t lines < <(cat "$DATA"/*.log | tr -d '\r')
n=0
for round in $(seq 1 6); do
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level error 2>>"$d/err" &
	pid=$!
	PIDS+=($pid)
	# Append 2,000 lines in bursts, then kill at a random point of the agent's work.
	for burst in $(seq 1 4); do
		printf '%s\n' "${lines[@]:n:500}" >>"$d/logs/app.log"
		n=$(((n + 500) % ${#lines[@]}))
		sleep 0.$((RANDOM % 4 + 1))
	done
	kill -9 $pid 2>/dev/null || true
	wait $pid 2>/dev/null || true
done
check "after 6 kills a final run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
live_files "$d/wh/default/logs" >"$d/files"
check "after kill -9 every line is in the table exactly once" \
	node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"
finish
