# Shared part of the power-cut tests (sourced after tests/integration/lib.sh): records a
# scenario's durable operations, then for every prefix of the recording builds the worst
# crash state and FLOE_CRASH_VARIANTS random ones (tests/crash/README.md) and checks that
# floe recovers from each. A scenario sets CRASH_ROOT (the directory that holds the
# state directory and the warehouse), CRASH_INIT (its image before the recording) and
# defines crash_check, which runs floe on the state in CRASH_ROOT and returns non-zero
# on a fault, saying what it was.
[ -n "${FLOE_CRASHGEN:-}" ] && [ -x "$FLOE_CRASHGEN" ] ||
	skip "the crash-state generator is built only with -DFLOE_FS_RECORD=ON"
VARIANTS=${FLOE_CRASH_VARIANTS:-1}
SEED=${FLOE_CRASH_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "crash states: seed $SEED (FLOE_CRASH_SEED), $VARIANTS random variants per point (FLOE_CRASH_VARIANTS)"

# The table properties of every cycle: expiry and metadata clean-up from the third
# commit on, so that a recording holds them.
CRASH_PROPS="    properties:
      history.expire.max-snapshot-age-ms: 1ms
      history.expire.min-snapshots-to-keep: 1
      write.metadata.previous-versions-max: 1
      write.metadata.delete-after-commit.enabled: true"

# crash_dirs DIR: a cycle's places: d (DIR), CRASH_ROOT (DIR/disk, with the state
# directory and the local warehouse made), CRASH_INIT, CRASH_STATE_DIR, rec (the
# recording), and next (the next line's number) at 0.
crash_dirs() {
	d=$1
	CRASH_ROOT="$d/disk"
	CRASH_INIT="$d/disk.init"
	CRASH_STATE_DIR="$CRASH_ROOT/state"
	rec="$d/rec.log"
	next=0
	mkdir -p "$CRASH_ROOT/state" "$CRASH_ROOT/wh"
}

# explore NAME LOG: every point of LOG (or those FLOE_CRASH_POINTS lists, to replay one), the worst variant and VARIANTS random ones, each
# state checked once (states are told apart by their content). Sets EXPLORE_FAULTS to the
# number of faulty states and prints the counts; the first faulty states are kept under
# $T/faults/ with the crashgen line that makes them again. EXPLORE_STOP=1 stops at the
# first fault.
explore() {
	local name=$1 log=$2 n point v hash faults=0 made=0 checked=0
	local -A seen=()
	n=$("$FLOE_CRASHGEN" count "$log")
	mkdir -p "$T/faults"
	# The worst variant of every point first: it shows most faults soonest; then the
	# FLOE_CRASH_DIR_VARIANTS states where one directory's unsynced names are lost and
	# every other's kept (crashgen's dK), then the random ones.
	local dirv stride=${FLOE_CRASH_STRIDE:-1} ranges=() lo hi m remote
	dirv=$(seq 0 $((${FLOE_CRASH_DIR_VARIANTS:-0} - 1)) | sed 's/^/d/')
	# A store the cut does not touch (CRASH_JOURNAL, crash_remote): the changes it may
	# hold at each point, from the recording's size when each came (store_journal.py).
	if [ -n "${CRASH_JOURNAL:-}" ]; then
		"$FLOE_CRASHGEN" ends "$log" >"$T/ends.txt"
		mapfile -t ranges < <(/usr/bin/python3 "$FLOE_SRC/tests/crash/store_journal.py" ranges \
			"$T/ends.txt" "$CRASH_JOURNAL" | cut -d' ' -f2-)
	fi
	# FLOE_CRASH_STRIDE=remote (a short default): only the points where the store may
	# hold changes the local state has no record of, with all of them.
	local points
	if [ "$stride" = remote ]; then
		points=$(for point in $(seq 0 "$n"); do
			read -r lo hi <<<"${ranges[$point]}"
			[ "$lo" = "$hi" ] || echo "$point"
		done)
	else
		points=$(seq 0 "$stride" "$n")
	fi
	for v in 0 $dirv $(seq 1 "$VARIANTS"); do
		for point in ${FLOE_CRASH_POINTS:-$points}; do
			# The worst case takes every store the point allows; the other variants the
			# store with every change sent before the cut (the local record of the
			# last ones lost).
			remote=-
			if [ -n "${CRASH_JOURNAL:-}" ]; then
				read -r lo hi <<<"${ranges[$point]}"
				remote=$hi
				[ "$v" != 0 ] || [ "$stride" = remote ] || remote=$(seq "$lo" "$hi")
			fi
			for m in $remote; do
				rm -rf "$CRASH_ROOT"
				hash=$("$FLOE_CRASHGEN" make "$log" "$CRASH_ROOT" "$CRASH_INIT" "$point" "$v" "$SEED" \
					2>"$T/gen.txt") || { cat "$T/gen.txt"; fail "crashgen failed: the harness, not floe"; finish; exit 1; }
				made=$((made + 1))
				hash=$hash:$m
				[ -z "${seen[$hash]:-}" ] || continue
				seen[$hash]=1
				checked=$((checked + 1))
				[ "$m" = - ] || { crash_remote "$m" && echo "the store holds its first $m changes" >>"$T/gen.txt"; } ||
					{ fail "the store's image $m could not be made: the harness, not floe"; finish; exit 1; }
				cp -a "$CRASH_ROOT" "$T/state.before"
				local crc=0
				crash_check >"$T/check.txt" 2>&1 || crc=1
				# A check that failed because the reader could not load judged nothing.
				if [ "$crc" = 1 ] && ! reader_loads; then
					cat "$T/check.txt"
					fail "the DuckDB reader does not load (node_modules changed under the run?): the harness, not floe"
					finish
					exit 1
				fi
				if [ "$crc" = 1 ]; then
					faults=$((faults + 1))
					echo "FAULT $name: $(cat "$T/gen.txt")"
					sed 's/^/    /' "$T/check.txt" | tail -20
					if [ "$faults" -le 3 ]; then
						rm -rf "$T/faults/$faults"
						mv "$T/state.before" "$T/faults/$faults"
						echo "$FLOE_CRASHGEN make $log $CRASH_ROOT $CRASH_INIT $point $v $SEED (store: $m changes)" \
							>"$T/faults/$faults.how"
					fi
				fi
				rm -rf "$T/state.before"
				[ "${EXPLORE_STOP:-0}" = 0 ] || [ "$faults" = 0 ] || break 3
			done
		done
	done
	echo "$name: $n operations, $((n + 1)) crash points (every $stride), $made states made, $checked distinct states checked, $faults faulty"
	EXPLORE_FAULTS=$faults
}

# reader_loads: true when node loads the DuckDB reader's package.
reader_loads() {
	(cd "$READER" && node -e "require('@duckdb/node-api')") >/dev/null 2>&1
}

# floe_recovers CONFIG LOGFILE: floe run --once on the crash state (its state directory
# CRASH_STATE_DIR), then a normal run stopped once it has started; both must succeed,
# the first must find no damaged state file, and anything quarantined must be named in
# the log.
floe_recovers() {
	local cfg=$1 out=$2 rc=0 pid
	timeout 120 "$FLOE_BIN" run -c "$cfg" --once --log-level info 2>"$out" || rc=$?
	[ $rc = 0 ] || { echo "run --once exited $rc"; tail -5 "$out"; return 1; }
	# With every fsync in place a cut leaves no damaged state file (whatever was renamed
	# or linked into place was synced first), so recovery never needs its safety nets.
	local damage
	damage=$(/usr/bin/python3 -c '
import json, sys
m = json.load(open(sys.argv[1]))
keys = ("spool_damaged", "state_damaged", "quarantined", "spool_reread_entries", "spool_lost_entries")
print(" ".join(f"{k}={m[k]}" for k in keys if m.get(k)))' "$CRASH_STATE_DIR/metrics.json") ||
		{ echo "no metrics.json after run --once"; return 1; }
	[ -z "$damage" ] || { echo "damaged state after the cut: $damage"; grep -E 'corrupt|quarantine|damaged' "$out" | head -3; return 1; }
	"$FLOE_BIN" run -c "$cfg" --log-level info 2>>"$out" &
	pid=$!
	PIDS+=($pid)
	LOG_WAIT_S=60 log_has "$out" "agent .* started" 2 $pid ||
		{ echo "the normal run did not start"; tail -5 "$out"; return 1; }
	stop_pid $pid 30 || { echo "the normal run exited $?"; tail -5 "$out"; return 1; }
	if [ -n "$(find "$CRASH_ROOT" -path '*quarantine/*' -type f | head -1)" ] &&
		! grep -q quarantine "$out"; then
		echo "something was quarantined without a word in the log"
		return 1
	fi
}

# crash_test NAME RECORD WHAT: the whole of a power-cut test: RECORD (a scenario's record
# function) records the NAME cycle into $T/NAME, explore checks every state of it, and
# WHAT is the check that none was faulty.
crash_test() {
	check "the $1 cycle is recorded" "$2" "$T/$1"
	[ "$FAILED" = 0 ] || { finish; exit 1; }
	explore "$1" "$rec"
	check "$3" test "$EXPLORE_FAULTS" = 0
	finish
}
