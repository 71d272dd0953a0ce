#!/usr/bin/env bash
# Real-world logs (loghub samples) -> floe run --once -> Iceberg table; DuckDB reads
# every live data file back and finds every line exactly once at its byte offset, for
# each codec. Then more lines are appended, including a partial last line, and a second
# run continues after the last committed line.
source "$(dirname "$0")/lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"

for codec in zstd lz4_raw uncompressed; do
	d="$T/$codec"
	mkdir -p "$d/logs"
	cp "$DATA"/*.log "$d/logs/"
	touch -d '-1 min' "$d"/logs/*.log # finished files: their last lines without LF are taken
	write_config "$d/floe.yaml" "$d/state" "file://$d/wh" "[\"$d/logs/*.log\"]" "    codec: $codec"
	check "$codec: floe run --once succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
	table="$d/wh/default/logs"
	live_files "$table" >"$d/files"
	check "$codec: the table has live data files" test -s "$d/files"
	check "$codec: DuckDB reads every line back exactly once" \
		node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
	list=$(sed "s/.*/'&'/" "$d/files" | paste -sd,)
	duck "select distinct compression from parquet_metadata([$list])" >"$d/codec"
	want=$(echo "$codec" | tr a-z A-Z)
	check "$codec: parquet_metadata shows codec $want" grep -qx "\[\"$want\"\]" "$d/codec"
	check "$codec: hyparquet finds the statistics, page index and bloom filters true" \
		xargs -a "$d/files" node "$READER/check_pq_index.mjs"
done

# The compact profile (v2 pages, delta encodings) reads back the same.
d="$T/compact"
mkdir -p "$d/logs"
cp "$DATA"/*.log "$d/logs/"
touch -d '-1 min' "$d"/logs/*.log # finished files: their last lines without LF are taken
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]" "    profile: compact"
check "compact: floe run --once succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
live_files "$d/wh/default/logs" >"$d/files"
check "compact: DuckDB reads every line back exactly once" \
	node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
f=$(head -1 "$d/files")
duck "select count(*) from parquet_metadata('$f') where encodings like '%DELTA%'" >"$d/enc"
check "compact: delta encodings are used" bash -c "! grep -qx '\[\"0\"\]' '$d/enc'"
check "compact: hyparquet finds the statistics, page index and bloom filters true" \
	xargs -a "$d/files" node "$READER/check_pq_index.mjs"

d="$T/zstd"
table="$d/wh/default/logs"
"$FLOE_BIN" inspect "$table" >"$d/inspect"
check "inspect shows the table uuid" grep -q "^uuid [0-9a-f-]\{36\}$" "$d/inspect"
check "inspect shows one snapshot" grep -q "^snapshots 1$" "$d/inspect"
check "the snapshot summary counts 9,996+ records" grep -q "^  total-records=10000$" "$d/inspect"
check "the snapshot carries floe.agent-id" grep -q "^  floe.agent-id=it-agent$" "$d/inspect"
check "version-hint.text names v2" bash -c "[ \"\$(cat '$table/metadata/version-hint.text')\" = 2 ]"

# Field ids and types as an engine sees them.
f=$(head -1 "$d/files")
duck "select name, field_id from parquet_schema('$f') where field_id is not null order by field_id" >"$d/schema"
check "every column carries its Iceberg field id" \
	bash -c "[ \"\$(wc -l <'$d/schema')\" -eq 14 ] && grep -q '\"message\",\"11\"' '$d/schema'"
duck "select typeof(ts), typeof(attrs), typeof(\"offset\") from read_parquet('$f') limit 1" >"$d/types"
duck "select path_in_schema, bloom_filter_offset is not null from parquet_metadata('$f') where path_in_schema in ('host', 'app', 'message') order by 1" >"$d/bloom"
check "bloom filters on host and app (the default), not on message" \
	bash -c "grep -qx '\[\"app\",true\]' '$d/bloom' && grep -qx '\[\"host\",true\]' '$d/bloom' && grep -qx '\[\"message\",false\]' '$d/bloom'"
check "ts is a timestamptz, attrs a map, offset a bigint" \
	grep -q '"TIMESTAMP WITH TIME ZONE","MAP(VARCHAR, VARCHAR)","BIGINT"' "$d/types"

# A second run continues after the last committed line: append whole lines and a
# partial one, which --once holds (its file was just written: a writer may be in the
# middle of it). When its LF arrives the third run commits the line whole.
printf 'appended line one\nappended line two\npartial line' >>"$d/logs/HDFS_2k.log"
check "second run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
printf '\nlast line\n' >>"$d/logs/HDFS_2k.log"
check "third run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
live_files "$table" >"$d/files"
check "after appends every line is in the table exactly once" \
	node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
"$FLOE_BIN" inspect "$table" >"$d/inspect"
check "three snapshots" grep -q "^snapshots 3$" "$d/inspect"
check "a run with nothing new adds no snapshot" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "still three snapshots" bash -c "'$FLOE_BIN' inspect '$table' | grep -q '^snapshots 3$'"
finish
