# The S3 scenario of the power-cut tests (sourced after scenario_tail.sh): the tail cycle
# against an S3 store (s3_stub.py keeping its objects as files) that the cut does not
# touch. The store journals every change while the cycle is recorded, each placed among
# floe's recorded file operations (store_journal.py); explore then rebuilds, for each
# crash state of the local disk, every store the cut allows (crash_remote): the changes
# sent before the cut are kept, although the local record of the last ones may be lost.
# The check is the tail cycle's: every line once in the table, which reads back whole.

# s3_crash_record DIR: starts the stub, records the tail cycle against it.
s3_crash_record() {
	local s3=$1/s3
	stub_env
	STORE=$s3/store
	CRASH_JOURNAL=$s3/journal
	mkdir -p "$STORE"
	export CHECK_TABLE_S3_ROOT=$STORE
	/usr/bin/python3 "$STUB_PY" --control "$s3/ctl" --log "$s3/stub.log" --dir "$STORE" \
		>"$s3/stub.out" 2>&1 &
	STUB_PID=$!
	PIDS+=("$STUB_PID")
	wait_for 10 grep -q 'stub listening' "$s3/stub.out" || { echo "stub: $(cat "$s3/stub.out")"; return 1; }
	STUB_PORT=$(sed -n 's/^stub listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$s3/stub.out")
	printf 'journal=%s\nrecord=%s\n' "$CRASH_JOURNAL" "$1/rec.log" >"$s3/ctl"
	CRASH_LAKE="lake:
  warehouse: s3://lake/crash
  catalog: { type: s3 }
  s3: { endpoint: \"http://127.0.0.1:$STUB_PORT\", region: us-east-1, path_style: true }"
	tail_record "$1" || return 1
	# The restarts on the crash states change the store but are not journaled.
	: >"$s3/ctl"
	[ -s "$CRASH_JOURNAL/index" ] || { echo "the store journaled no change"; return 1; }
	echo "the store journaled $(wc -l <"$CRASH_JOURNAL/index") changes"
}

# crash_remote M: the store as its first M journaled changes left it.
crash_remote() {
	rm -rf "$STORE"
	/usr/bin/python3 "$FLOE_SRC/tests/crash/store_journal.py" image "$CRASH_JOURNAL" "$1" "$STORE"
}

table_dir() { echo "$STORE/lake/crash/default/$1"; }
table_files() {
	"$FLOE_BIN" inspect -c "$d/floe.yaml" | sed -n "s#^  s3://\([^ ]*\)  records=.*#$STORE/\1#p"
}
