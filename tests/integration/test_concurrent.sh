#!/usr/bin/env bash
# Four floe processes with distinct inputs commit to one table at the same time, over
# three rounds: every commit lands, every line is in the table exactly once, and the
# snapshot history is linear (each snapshot's parent is the one before it).
source "$(dirname "$0")/lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
WH="$T/wh"
N=4
ROUNDS=3
srcs=("$DATA"/*.log)

for i in $(seq 1 $N); do
	mkdir -p "$T/a$i/logs"
	AGENT_ID="agent-$i" write_config "$T/a$i/floe.yaml" "$T/a$i/state" "$WH" "[\"$T/a$i/logs/*.log\"]"
done

for round in $(seq 1 $ROUNDS); do
	for i in $(seq 1 $N); do
		# Each round appends a different slice of a loghub sample to each agent's log.
		src=${srcs[$(((i + round) % ${#srcs[@]}))]}
		sed -n "$((round * 300 - 299)),$((round * 300))p" "$src" | tr -d '\r' >>"$T/a$i/logs/app.log"
	done
	pids=()
	for i in $(seq 1 $N); do
		"$FLOE_BIN" run -c "$T/a$i/floe.yaml" --once --log-level warn 2>"$T/a$i/err.$round" &
		pids+=($!)
		PIDS+=($!)
	done
	ok=1
	for k in "${!pids[@]}"; do
		if ! wait "${pids[$k]}"; then
			ok=0
			echo "# agent-$((k + 1)) failed in round $round:"
			sed 's/^/#   /' "$T/a$((k + 1))/err.$round" | tail -5
		fi
	done
	check "round $round: all $N committers succeed" test $ok = 1
done

table="$WH/default/logs"
"$FLOE_BIN" inspect "$table" >"$T/inspect"
want=$((N * ROUNDS))
check "$want snapshots" grep -q "^snapshots $want$" "$T/inspect"
check "metadata v$((want + 1)) is current" grep -q "^metadata v$((want + 1)).metadata.json$" "$T/inspect"
# Linear history: snapshot k's parent is snapshot k-1, sequence numbers 1..N.
awk '/^snapshot /{ split($3, s, "="); split($4, p, "="); print $2, s[2], p[2] }' "$T/inspect" >"$T/history"
check "the history is linear" awk 'NR == 1 { if ($3 != "none" || $2 != 1) exit 1; prev = $1; next }
	{ if ($3 != prev || $2 != NR) exit 1; prev = $1 } END { if (NR == 0) exit 1 }' "$T/history"
for i in $(seq 1 $N); do
	check "agent-$i committed $ROUNDS times" \
		bash -c "[ \$(grep -c '^  floe.agent-id=agent-$i$' '$T/inspect') -eq $ROUNDS ]"
done
live_files "$table" >"$T/files"
check "every line of every agent is in the table exactly once" \
	node "$READER/check_rows.js" "$T/files" "$T"/a*/logs/app.log
finish
