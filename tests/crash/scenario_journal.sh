# The journal scenario of the power-cut tests (sourced after scenario_tail.sh): three
# recorded `floe run --once` over systemd journal files that the test writes between them
# (systemd-journal-remote makes a journal file from the export format; no journald runs),
# the cursor kept in the state directory; the check is the tail cycle's: every entry once
# in the table, which reads back whole.
REMOTE=/opt/floe-bench/systemd-journal-remote/lib/systemd/systemd-journal-remote
[ -x "$REMOTE" ] || REMOTE=/lib/systemd/systemd-journal-remote
[ -x "$REMOTE" ] || skip "systemd-journal-remote is missing (packaging/dev/install-deps.sh test)"

# journal_record DIR: returns non-zero if a recorded run fails.
journal_record() {
	crash_dirs "$1"
	mkdir -p "$d/journal"
	cat >"$d/floe.yaml" <<YAML
agent: { id: crash-journal, state_dir: $CRASH_ROOT/state }
inputs:
  - { type: journal, directory: $d/journal, start_at: beginning }
tables:
  logs:
    commit_interval: 60s
$CRASH_PROPS
lake: { warehouse: $CRASH_ROOT/wh }
YAML
	if ! "$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check.err" &&
		grep -q "built without the systemd journal" "$d/check.err"; then
		skip "this floe was built without libsystemd"
	fi
	cp -a "$CRASH_ROOT" "$CRASH_INIT"
	journal_entries 1 300
	tail_run "the first recorded run commits" || return 1
	journal_entries 2 300
	tail_run "the second recorded run commits" || return 1
	journal_entries 3 150
	tail_run "the third recorded run commits and expires" || return 1
	TOTAL=$next
}

# journal_entries K N: N unique entries in a new journal file, the K'th.
journal_entries() {
	local i now
	now=$(date +%s%6N)
	for ((i = next; i < next + $2; i++)); do
		printf '__REALTIME_TIMESTAMP=%s\n__MONOTONIC_TIMESTAMP=%s\n' $((now + i)) $((1000 + i))
		printf '_BOOT_ID=0123456789abcdef0123456789abcdef\n_HOSTNAME=jhost\n'
		printf 'SYSLOG_IDENTIFIER=app\n_PID=%d\nPRIORITY=6\n' $((100 + i))
		printf '_SYSTEMD_UNIT=app.service\nMESSAGE=line-%06d power cut test payload\n\n' $i
	done | "$REMOTE" --output="$d/journal/j$1.journal" --split-mode=none - 2>/dev/null
	next=$((next + $2))
}
