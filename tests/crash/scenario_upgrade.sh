# The upgrade scenario of the power-cut tests (sourced after scenario_tail.sh): floe
# taking over a state directory an older floe left, in the formats it still reads and
# rewrites (old_state.py: a version 1 checkpoint and a version 1 spool entry, sealed but
# not committed). Unrecorded: a run --once commits 300 lines, a second seals 200 more and
# dies before uploading them (FLOE_CRASH_AT=commit-before-upload); the state is then
# turned into the old formats and is the image the states start from. Recorded: two
# run --once that commit the old entry and new lines and rewrite the state in the current
# formats. Every crash state must recover with every line once.

# upgrade_record DIR: returns non-zero if a run fails.
upgrade_record() {
	local rc=0
	tail_setup "$1"
	tail_lines 300
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn || { echo "the first run failed"; return 1; }
	tail_lines 200
	FLOE_CRASH_AT=commit-before-upload "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error 2>/dev/null || rc=$?
	[ $rc = 99 ] || { echo "the second run did not die before its upload (exit $rc)"; return 1; }
	/usr/bin/python3 "$FLOE_SRC/tests/crash/old_state.py" "$CRASH_ROOT/state" || return 1
	rm -rf "$CRASH_INIT"
	cp -a "$CRASH_ROOT" "$CRASH_INIT"
	tail_lines 150
	tail_run "the first recorded run takes the old state over and commits" || return 1
	tail_lines 100
	tail_run "the second recorded run commits" || return 1
	TOTAL=$next
}
