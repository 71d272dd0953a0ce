# The maintenance scenario of the power-cut tests (sourced after scenario_tail.sh):
# `floe maintain` compacting beside a running agent. Two recorded `run --once` leave two
# small files in a closed day (JSON events of 2025-12-01); then an agent runs (commits
# every second) while a recorded `floe maintain` (min_age 0s) replaces them, and the
# agent, stopped, commits the last lines and expires the replaced files. Both processes
# record into one log. Each crash state must recover with every line once; then a
# `floe maintain` on it must succeed (what a cut run left is cleaned up, never in the way)
# and every line still be there once.

# maintain_record DIR: returns non-zero if a recorded run fails.
maintain_record() {
	local pid
	JSON=1
	COMMIT_INTERVAL=1s tail_setup "$1"
	printf 'maintain: { min_age: 0s }\n' >>"$d/floe.yaml"
	tail_lines 300
	tail_run "the first recorded run commits" || return 1
	tail_lines 200
	tail_run "the second recorded run commits" || return 1
	FLOE_FS_RECORD="$rec" "$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/agent.log" &
	pid=$!
	PIDS+=($pid)
	wait_log "$d/agent.log" "agent .* started" || { echo "the agent did not start"; return 1; }
	tail_lines 150
	wait_log "$d/agent.log" "committed snapshot" 30 || { echo "the agent committed nothing"; return 1; }
	FLOE_FS_RECORD="$rec" "$FLOE_BIN" maintain -c "$d/floe.yaml" --log-level info >"$d/maintain.log" 2>&1 ||
		{ echo "the recorded maintain failed: $(tail -3 "$d/maintain.log")"; return 1; }
	grep -q "^logs: compacted [1-9]" "$d/maintain.log" || { echo "maintain compacted nothing: $(cat "$d/maintain.log")"; return 1; }
	tail_lines 100
	stop_pid $pid 30 || { echo "the agent's stop exited $?"; return 1; }
	TOTAL=$next
}

crash_check() {
	floe_recovers "$d/floe.yaml" "$d/run.log" || return 1
	tail_table_check || return 1
	"$FLOE_BIN" maintain -c "$d/floe.yaml" --log-level warn 2>"$d/maintain.err" ||
		{ echo "maintain on the recovered state failed: $(tail -3 "$d/maintain.err")"; return 1; }
	tail_table_check
}
