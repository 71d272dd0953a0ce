#!/usr/bin/env bash
# The Parquet writer's fuzz target, read back: its replay driver runs over the seed
# corpus and over generated inputs (gen_pq_fuzz.py: every codec x profile, with small
# pages, row groups and budgets, bloom filters, the page index on and off, and log-like
# rows with invalid UTF-8, null and empty maps, null values), writing each file and the
# rows it gave the writer (FLOE_FUZZ_PQ_OUT). DuckDB and arrow-rs must each read every
# row back equal, invalid UTF-8 replaced as the WHATWG decoder replaces it.
source "$(dirname "$0")/lib.sh"
REPLAY=${FLOE_BUILD:-$(dirname "$FLOE_BIN")}/tests/fuzz_pq_writer_replay
[ -x "$REPLAY" ] || { echo "missing $REPLAY (build the fuzz_pq_writer_replay target)"; exit 1; }
mkdir -p "$T/in" "$T/out"
cp "$FLOE_SRC"/tests/fuzz/corpus/fuzz_pq_writer/* "$T/in/"
python3 "$FLOE_SRC/tests/integration/gen_pq_fuzz.py" "$T/in" --seed "${SEED:-1}"
check "the target takes every input ($(ls "$T/in" | wc -l))" \
	env FLOE_FUZZ_PQ_OUT="$T/out" "$REPLAY" "$T/in"
check "every codec x profile wrote files" bash -c "
	for c in uncompressed zstd lz4_raw; do for p in default compact; do
		grep -l '\"codec\":\"'\$c'\",\"profile\":\"'\$p'\"' '$T'/out/*.rows | grep -q . || exit 1
	done; done"
check "DuckDB and arrow-rs read every row back equal" node "$READER/check_pq_fuzz.js" "$T/out"
# The files the writer finished (result 0), for hyparquet's look at their metadata.
for r in "$T"/out/*.rows; do
	tail -n 1 "$r" | grep -x '{"result":0}' >/dev/null && echo "${r%.rows}.parquet"
done >"$T/finished"
check "hyparquet: statistics, page index and bloom filters match the rows" \
	xargs -a "$T/finished" node "$READER/check_pq_index.mjs"
finish
