# The re-id scenario of the power-cut tests (sourced after scenario_tail.sh and
# scenario_s3.sh): a first boot offline, whose typed column is spooled under a provisional
# field id, then the store. Unrecorded: a run --once while nothing listens on the store's
# port reads 300 JSON lines into the spool (the entry marked provisional) and fails to
# commit; that state is the image the crash states start from. Recorded, the store up
# (s3_stub.py --dir, its changes journaled): a run --once that gives the spooled files
# the table's ids (new files, the entry replaced, the old files removed) and commits, and
# a second that commits more lines. Every crash state must recover with every line once
# in the table, and every line's typed column set (none left in attrs).

# reid_record DIR: returns non-zero if a run does not do what it should.
reid_record() {
	local s3=$1/s3 rc=0
	stub_env
	STORE=$s3/store
	CRASH_JOURNAL=$s3/journal
	mkdir -p "$STORE"
	export CHECK_TABLE_S3_ROOT=$STORE
	STUB_PORT=$(free_port)
	CRASH_LAKE="lake:
  warehouse: s3://lake/crash
  catalog: { type: s3 }
  s3: { endpoint: \"http://127.0.0.1:$STUB_PORT\", region: us-east-1, path_style: true, request_timeout: 2s }"
	CRASH_PROPS="    columns: [{ name: app_name, type: string, from: app }]"
	JSON=1
	tail_setup "$1"
	tail_lines 300
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$1/offline.log" || rc=$?
	[ "$rc" != 0 ] || { echo "the offline run committed: the store was there"; return 1; }
	grep -l '"provisional":\[{"name":"app_name"' "$CRASH_ROOT"/state/spool/*.entry >/dev/null ||
		{ echo "the offline run spooled no provisional entry"; cat "$1/offline.log"; return 1; }
	rm -rf "$CRASH_INIT"
	cp -a "$CRASH_ROOT" "$CRASH_INIT"
	/usr/bin/python3 "$STUB_PY" --control "$s3/ctl" --log "$s3/stub.log" --dir "$STORE" \
		--port "$STUB_PORT" >"$s3/stub.out" 2>&1 &
	STUB_PID=$!
	PIDS+=("$STUB_PID")
	wait_for 10 grep -q 'stub listening' "$s3/stub.out" || { echo "stub: $(cat "$s3/stub.out")"; return 1; }
	printf 'journal=%s\nrecord=%s\n' "$CRASH_JOURNAL" "$rec" >"$s3/ctl"
	tail_lines 100
	tail_run "the first recorded run re-ids the spooled files and commits" || return 1
	tail_lines 150
	tail_run "the second recorded run commits" || return 1
	: >"$s3/ctl"
	TOTAL=$next
	grep -c 'ids.parquet' "$rec" | sed 's/^/recorded operations naming a re-id file: /'
}

# crash_check: the tail cycle's check, and every line's typed column set.
crash_check() {
	floe_recovers "$d/floe.yaml" "$d/run.log" || return 1
	tail_table_check || return 1
	local got
	got=$(duck "SELECT count(*) FROM $(parquet_of logs) WHERE app_name IS NULL OR attrs['app'] IS NOT NULL") || return 1
	[ "$got" = '["0"]' ] || { echo "lines without their typed column: $got"; return 1; }
}
