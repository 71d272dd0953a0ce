#!/usr/bin/env bash
# floe against a real S3 server (Ceph RGW on loopback): (a) `floe run --once` uploads the
# loghub samples and DuckDB reads the fetched live files back equal, twice (the second run
# with appended lines); the manifests pass python3-avro and version-hint.text names the
# current version. (b) 8 floe processes with distinct inputs commit to one S3 table at once,
# 3 rounds: every line exactly once and a linear snapshot history.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
s3_start 18480

# --- (a) round trip -----------------------------------------------------------------------
d="$T/a"
mkdir -p "$d/logs"
for f in "$DATA"/*.log; do sed -e '$a\' "$f" >"$d/logs/$(basename "$f")"; done
s3_config "$d/floe.yaml" "$d/state" rt "[\"$d/logs/*.log\"]" "$S3PORT"
check "(a) floe run --once against RGW" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
check "(a) the live files are fetched" s3_live "$d/floe.yaml" rt "$d/s3" "$d/files"
check "(a) DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
head -100 "$DATA/Apache_2k.log" | tr -d '\r' >>"$d/logs/Linux_2k.log"
printf 'one more line\n' >>"$d/logs/HDFS_2k.log"
check "(a) a second run with appended lines" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
rm -rf "$d/s3"
check "(a) the live files are fetched again" s3_live "$d/floe.yaml" rt "$d/s3" "$d/files"
check "(a) DuckDB reads every line back exactly once after the append" \
	node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log
check "(a) 2 snapshots" grep -q '^snapshots 2$' "$d/files.inspect"
meta="$d/s3/default/logs/metadata"
mapfile -t avros < <(find "$meta" -name '*.avro' | sort)
check "(a) manifests and lists were written (${#avros[@]})" test "${#avros[@]}" -ge 4
check "(a) python3-avro reads every manifest and list" /usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "${avros[@]}"
check "(a) version-hint.text is present" test -s "$meta/version-hint.text"
cur=$(sed -n 's/^metadata v\([0-9]*\)\.metadata\.json$/\1/p' "$d/files.inspect")
check "(a) version-hint.text names the current version (v$cur)" test "$(tr -d ' \n' <"$meta/version-hint.text")" = "$cur"
check "(a) no leftover probe or temporary object" \
	bash -c "! find '$d/s3' -name '.floe-probe*' | grep -q ."

# --- (b) 8 concurrent committers ------------------------------------------------------------
N=8
ROUNDS=3
srcs=("$DATA"/*.log)
for i in $(seq 1 $N); do
	mkdir -p "$T/b$i/logs"
	AGENT_ID="agent-$i" s3_config "$T/b$i/floe.yaml" "$T/b$i/state" conc "[\"$T/b$i/logs/*.log\"]" "$S3PORT"
done
for round in $(seq 1 $ROUNDS); do
	for i in $(seq 1 $N); do
		src=${srcs[$(((i + round) % ${#srcs[@]}))]}
		sed -n "$((round * 300 - 299)),$((round * 300))p" "$src" | tr -d '\r' >>"$T/b$i/logs/app.log"
	done
	pids=()
	for i in $(seq 1 $N); do
		timeout 120 "$FLOE_BIN" run -c "$T/b$i/floe.yaml" --once --log-level warn 2>"$T/b$i/err.$round" &
		pids+=($!)
		PIDS+=($!)
	done
	ok=1
	for p in "${pids[@]}"; do wait "$p" || ok=0; done
	check "(b) round $round: all $N committers succeed" test $ok = 1
	[ $ok = 1 ] || cat "$T"/b*/err.$round
done
check "(b) the live files are fetched" s3_live "$T/b1/floe.yaml" conc "$T/b-s3" "$T/b-files"
want=$((N * ROUNDS))
check "(b) $want snapshots" grep -q "^snapshots $want$" "$T/b-files.inspect"
check "(b) metadata v$((want + 1)) is current" grep -q "^metadata v$((want + 1)).metadata.json$" "$T/b-files.inspect"
awk '/^snapshot /{ split($3, s, "="); split($4, p, "="); print $2, s[2], p[2] }' "$T/b-files.inspect" >"$T/history"
check "(b) the history is linear" awk 'NR == 1 { if ($3 != "none" || $2 != 1) exit 1; prev = $1; next }
	{ if ($3 != prev || $2 != NR) exit 1; prev = $1 } END { if (NR == 0) exit 1 }' "$T/history"
for i in $(seq 1 $N); do
	check "(b) agent-$i committed $ROUNDS times" \
		bash -c "[ \$(grep -c '^  floe.agent-id=agent-$i$' '$T/b-files.inspect') -eq $ROUNDS ]"
done
check "(b) every line of every agent is in the table exactly once" \
	node "$READER/check_rows.js" "$T/b-files" "$T"/b*/logs/app.log
finish
