# The tail scenario of the power-cut tests (sourced after crashlib.sh): tail_record DIR
# records three `floe run --once` into DIR/rec.log (read, seal, spool, commit, checkpoint,
# spool clean-up, and snapshot expiry from the third commit on), the input file rotated
# and appended between them, and sets CRASH_ROOT, CRASH_INIT and crash_check for
# explore. The environment's FLOE_TEST_SKIP_FSYNC reaches the recorded runs. CRASH_LAKE,
# when set, is the configuration's lake section in place of the local warehouse.
# With AGG=1 the lines are JSON events 400 ms apart in event time, and an aggregation
# counts them per minute and app: each run ends with windows open (their image in
# agg/; a lateness of an hour keeps them all open, so that a restart reading the rotated
# file after the new one drops no event as late), and the aggregate table must count every
# line once. JSON=1 makes the lines those JSON events without the aggregation.

# tail_record DIR: returns non-zero if a recorded run fails.
tail_record() {
	tail_setup "$1"
	tail_lines 300
	tail_run "the first recorded run commits" || return 1
	tail_lines 100
	mv "$d/logs/app.log" "$d/logs/app.log.1"
	tail_lines 200
	tail_run "the second recorded run commits across the rotation" || return 1
	tail_lines 150
	tail_run "the third recorded run commits and expires" || return 1
	TOTAL=$next
}

# tail_setup DIR: the configuration DIR/floe.yaml and the image the states start from.
tail_setup() {
	local agg=""
	[ "${AGG:-0}" = 0 ] || agg="aggregations:
  - name: apps
    window: 1m
    allowed_lateness: 1h
    idle_timeout: 1h
    group_by: [app]
    metrics: [count]
    max_groups: 100"
	crash_dirs "$1"
	mkdir -p "$d/logs"
	write_config "$d/floe.yaml" "$CRASH_ROOT/state" "$CRASH_ROOT/wh" "[\"$d/logs/app.log*\"]" \
		"$CRASH_PROPS"
	if [ -n "${CRASH_LAKE:-}" ]; then
		sed -i '/^lake:/,$d' "$d/floe.yaml"
		echo "$CRASH_LAKE" >>"$d/floe.yaml"
	fi
	if [ "${AGG:-0}" != 0 ] || [ "${JSON:-0}" != 0 ]; then
		sed -i 's/^    start_at: beginning$/&\n    parser: json\n    timestamp: {field: ts, format: rfc3339}/' "$d/floe.yaml"
		echo "$agg" >>"$d/floe.yaml"
	fi
	cp -a "$CRASH_ROOT" "$CRASH_INIT"
}

tail_run() {
	FLOE_FS_RECORD="$rec" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn ||
		{ echo "$1: failed"; return 1; }
}

# tail_lines N: appends N unique lines to app.log.
tail_lines() {
	local i
	local i pad
	for ((i = 0; i < $1; i++)); do
		pad=$(printf '%*s' $((next % 97)) '' | tr ' ' x)
		if [ "${AGG:-0}" = 0 ] && [ "${JSON:-0}" = 0 ]; then
			printf 'line-%06d power cut test payload %s\n' $next "$pad"
		else
			printf '{"ts":"2025-12-01T00:%02d:%02d.%03dZ","app":"a%d","message":"line-%06d %s"}\n' \
				$((next * 400 / 60000)) $((next * 400 / 1000 % 60)) $((next * 400 % 1000)) \
				$((next % 3)) $next "$pad"
		fi
		next=$((next + 1))
	done >>"$d/logs/app.log"
}

# crash_check: floe recovers, then one DuckDB query over the live files of the raw table
# (and the aggregate table) and one python3-avro pass over both tables' metadata.
crash_check() {
	floe_recovers "$d/floe.yaml" "$d/run.log" || return 1
	tail_table_check
}

# tail_table_check: every line once in the table (and counted once in the aggregate
# table), both read back whole.
tail_table_check() {
	local tables=(logs) sql want got
	[ "${AGG:-0}" = 0 ] || tables+=(apps)
	sql="SELECT count(*), count(DISTINCT message), count(*) FILTER (WHERE message LIKE 'line-%') FROM $(parquet_of logs)"
	want="[$TOTAL,$TOTAL,$TOTAL]"
	if [ "${AGG:-0}" != 0 ]; then
		sql="SELECT * FROM ($sql), (SELECT sum(count) FROM $(parquet_of apps))"
		want="[$TOTAL,$TOTAL,$TOTAL,$TOTAL]"
	fi
	got=$(duck "$sql") || return 1
	[ "${got//\"/}" = "$want" ] ||
		{ echo "rows: [count, distinct, ours(, aggregated)] = $got, want $want"; return 1; }
	/usr/bin/python3 "$FLOE_SRC/tests/crash/check_table.py" $(for t in "${tables[@]}"; do table_dir "$t"; done)
}

# parquet_of TABLE: read_parquet([...]) of the table's live files.
parquet_of() {
	echo "read_parquet([$(table_files "$1" | sed "s/.*/'&'/" | paste -sd,)])"
}

# table_dir TABLE, table_files TABLE: the table's directory and its live data files, as
# local paths (a scenario with another warehouse redefines both).
table_dir() { echo "$CRASH_ROOT/wh/default/$1"; }
table_files() { live_files "$(table_dir "$1")"; }
