#!/usr/bin/env bash
# Real log rotation: Debian's logrotate rotates a file about once a second while a writer
# appends numbered lines at a fixed rate and `floe run` tails it. Modes: rename + create,
# copytruncate, compress + delaycompress (the .gz files excluded), and plain deletion (the
# writer recreates the file). Every line must reach the table exactly once, except with
# copytruncate, whose race (lines written between logrotate's copy and its truncation are
# in neither file; lines written after the truncation but before floe notices may be read
# at the old offset) is measured and printed, not asserted.
source "$(dirname "$0")/lib.sh"

if ! command -v logrotate >/dev/null; then
	apt-get install -y logrotate >/dev/null 2>&1 ||
		{ apt-get update >/dev/null 2>&1 && apt-get install -y logrotate >/dev/null 2>&1; } || true
fi
LOGROTATE=$(command -v logrotate || echo /usr/sbin/logrotate)
if [ ! -x "$LOGROTATE" ]; then
	fail "logrotate is not installed and could not be installed"
	finish
fi

LINES=${ROT_LINES:-20000}
SECS=${ROT_SECS:-10}

# writer FILE: appends "line NNNNNN" for 0..LINES-1 over SECS seconds, in batches of 20,
# opening the file for each batch (as a program that reopens its log would; O_APPEND and
# O_CREAT, so a deleted file is recreated).
writer() {
	python3 - "$1" "$LINES" "$SECS" <<'PY'
import sys, time
path, n, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
batch = 20
t0 = time.monotonic()
for i in range(0, n, batch):
    with open(path, 'a') as f:
        f.write(''.join('line %06d\n' % k for k in range(i, min(n, i + batch))))
    d = t0 + secs * (i + batch) / n - time.monotonic()
    if d > 0:
        time.sleep(d)
PY
}

# rotator MODE DIR: rotates DIR/logs/app.log about once a second until DIR/stop exists.
rotator() {
	local mode=$1 d=$2
	while [ ! -e "$d/stop" ]; do
		sleep 1
		if [ "$mode" = delete ]; then
			rm -f "$d/logs/app.log"
		else
			"$LOGROTATE" -s "$d/lr.state" -f "$d/lr.conf" 2>>"$d/lr.err" || true
		fi
	done
}

# records TABLE: total records in the table's current snapshot (0 before the first).
records() {
	"$FLOE_BIN" inspect "$1" 2>/dev/null | sed -n 's/^live files=[0-9]* records=\([0-9]*\).*/\1/p' |
		head -1 | grep . || echo 0
}

start_mode() {
	local mode=$1 d="$T/$1" paths opts
	mkdir -p "$d/logs"
	case $mode in
	create) opts="create" ;;
	copytruncate) opts="copytruncate" ;;
	compress) opts="create
    compress
    delaycompress" ;;
	delete) opts="" ;;
	esac
	cat >"$d/lr.conf" <<CONF
$d/logs/app.log {
    $opts
    rotate 100
    missingok
    notifempty
}
CONF
	# copytruncate leaves copies beside the file: only the live name is followed. The
	# other modes follow the rotated names too (the *.gz files are excluded by default).
	if [ "$mode" = copytruncate ]; then paths="[\"$d/logs/app.log\"]"; else paths="[\"$d/logs/app.log*\"]"; fi
	AGENT_ID=rot-$mode COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "$paths"
	"$FLOE_BIN" run -c "$d/floe.yaml" --log-level warn 2>>"$d/floe.err" &
	PIDS+=($!)
	echo $! >"$d/floe.pid"
	writer "$d/logs/app.log" &
	PIDS+=($!)
	echo $! >"$d/writer.pid"
	rotator "$mode" "$d" &
	PIDS+=($!)
	echo $! >"$d/rotator.pid"
}

MODES=(create copytruncate compress delete)
for m in "${MODES[@]}"; do start_mode "$m"; done
for m in "${MODES[@]}"; do wait "$(cat "$T/$m/writer.pid")"; done
for m in "${MODES[@]}"; do touch "$T/$m/stop"; done
for m in "${MODES[@]}"; do wait "$(cat "$T/$m/rotator.pid")" || true; done

# caught_up DIR: the agent has read every byte of its open files and closed the rotated
# ones, by its own metrics (rewritten after each commit cycle, every second here), and
# has sealed and committed since the writer stopped (so its counts are current).
caught_up() {
	local m="$1/state/metrics.json"
	[ -s "$m" ] && [ "$m" -nt "$1/stop" ] &&
		grep -q '"lag_bytes":0,"files_draining":0[,}]' "$m"
}

# Drain: wait until each agent has caught up with its files, 60 s at most overall.
deadline=$((SECONDS + 60))
for m in "${MODES[@]}"; do
	until caught_up "$T/$m" || [ $SECONDS -ge $deadline ]; do sleep 0.2; done
	check "$m: the agent caught up with its files (lag 0, rotated files closed)" caught_up "$T/$m"
done
for m in "${MODES[@]}"; do
	pid=$(cat "$T/$m/floe.pid")
	kill -TERM "$pid" 2>/dev/null || true
	rc=0
	wait "$pid" || rc=$?
	check "$m: floe stops cleanly on SIGTERM" test $rc = 0
done

# verify MODE: prints "missing=M duplicated=D" (lines missing, extra copies) for MODE.
verify() {
	local d="$T/$1"
	live_files "$d/wh/default/logs" >"$d/files"
	if [ ! -s "$d/files" ]; then
		echo "missing=$LINES duplicated=0"
		return
	fi
	local list
	list=$(sed "s/.*/'&'/" "$d/files" | paste -sd,)
	duck "select message from read_parquet([$list])" | sed -n 's/^\["line \([0-9]\{6\}\)"\]$/\1/p' |
		sort >"$d/got"
	local other
	other=$(($(duck "select count(*) from read_parquet([$list])" | tr -dc 0-9) - $(wc -l <"$d/got")))
	seq -f '%06g' 0 $((LINES - 1)) >"$d/want"
	local missing dup
	missing=$(sort -u "$d/got" | comm -23 "$d/want" - | wc -l)
	dup=$(($(wc -l <"$d/got") - $(sort -u "$d/got" | wc -l) + other))
	echo "missing=$missing duplicated=$dup"
}

for m in "${MODES[@]}"; do
	r=$(verify "$m")
	rot=$(ls "$T/$m/logs" | wc -l)
	echo "# $m: $r (files in the log directory now: $rot)"
	if [ "$m" = copytruncate ]; then
		echo "# copytruncate race: $r of $LINES lines"
		check "copytruncate: floe kept running and committed rows" test "$(records "$T/$m/wh/default/logs")" -gt 0
	else
		check "$m: every line exactly once" test "$r" = "missing=0 duplicated=0"
	fi
	if [ -s "$T/$m/floe.err" ]; then
		echo "# $m: floe said:"
		sed 's/^/#   /' "$T/$m/floe.err" | head -5
	fi
done
check "delete: a file deleted and recreated at each rotation is not reported as missing each time" \
	test "$(grep -c 'matches no file' "$T/delete/floe.err")" -le 1
check "logrotate really rotated (create mode left rotated files)" test "$(ls "$T/create/logs" | wc -l)" -gt 3
check "compress mode left .gz files (excluded)" test "$(ls "$T/compress/logs" | grep -c '\.gz$')" -gt 0
finish
