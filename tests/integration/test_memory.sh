#!/usr/bin/env bash
# A poison line never crash-loops the agent. The reproductions:
# memory_limit 4MiB with the default max_line_bytes and one incompressible line of 550 KB,
# and memory_limit 32MiB with max_line_bytes 64MiB and a line of 8 MiB, used to fail every
# run with "sealing spool entry 1 failed: out of memory" (exit 1, the short lines before it
# never committed). `floe check` must now refuse such budgets (exit 2, naming the keys and
# the numbers), `run` too (exit 2: systemd does not restart on a configuration error),
# and budgets that pass must commit every line. At run time, a line that the memory left
# cannot take even in an empty batch is cut to what fits, counted, and the agent goes on.
source "$(dirname "$0")/lib.sh"

quietly() { "$@" >/dev/null; }
metric() { sed -n "s/.*\"$2\":\([0-9]*\).*/\1/p" "$1"; }
# noise BYTES: one line of incompressible text, without its LF.
noise() { head -c "$(($1 * 3 / 4 + 3))" /dev/urandom | base64 -w0 | head -c "$1"; }

# 1. memory_limit 4MiB, default max_line_bytes, a line of 550 KB after short lines.
d="$T/small"
mkdir -p "$d/logs"
{
	seq 1 100 | sed 's/^/short line /'
	noise 550000
	echo
	seq 1 10 | sed 's/^/after /'
} >"$d/logs/app.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i "s/^  state_dir: .*/&\n  memory_limit: 4MiB/" "$d/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check.err" || rc=$?
check "4MiB: check refuses the budget (exit 2)" test $rc = 2
check "4MiB: and names the keys and the numbers" grep -Eq \
	"floe.yaml:[0-9]+:[0-9]+: key 'agent.memory_limit': 4.0MiB cannot hold a record of 1.0MiB \(inputs\[0\].max_line_bytes\) through sealing: it needs [0-9.]+MiB .*raise agent.memory_limit to [0-9]+MiB or lower inputs\[0\].max_line_bytes to [0-9]+KiB" \
	"$d/check.err"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/run.err" || rc=$?
check "4MiB: run refuses it too, as a configuration error (exit 2)" test $rc = 2
# The budget check suggests passes; so does 8 MiB.
sed -i "s/memory_limit: 4MiB/memory_limit: 8MiB/" "$d/floe.yaml"
check "8MiB: check accepts it" quietly "$FLOE_BIN" check -c "$d/floe.yaml"
check "8MiB: the run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
live_files "$d/wh/default/logs" >"$d/files"
check "8MiB: every line exactly once" node "$READER/check_rows.js" "$d/files" "$d"/logs/*.log

# 2. memory_limit 32MiB, max_line_bytes 64MiB, a line of 8 MiB.
d="$T/big"
mkdir -p "$d/logs"
{
	seq 1 100 | sed 's/^/short line /'
	noise 8000000
	echo
	seq 1 10 | sed 's/^/after /'
} >"$d/logs/app.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i "s/^    start_at: beginning$/&\n    max_line_bytes: 64MiB/" "$d/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>"$d/check.err" || rc=$?
check "64MiB lines in 32MiB: check refuses (exit 2)" test $rc = 2
check "64MiB lines in 32MiB: naming max_line_bytes" grep -q "inputs\[0\].max_line_bytes" "$d/check.err"
# What the message suggests fits: the line is split at max_line_bytes, every byte kept.
fit=$(sed -n 's/.*lower inputs\[0\].max_line_bytes to \([0-9]*\)KiB.*/\1/p' "$d/check.err")
sed -i "s/max_line_bytes: 64MiB/max_line_bytes: ${fit}KiB/" "$d/floe.yaml"
check "the suggested max_line_bytes (${fit}KiB) passes" quietly "$FLOE_BIN" check -c "$d/floe.yaml"
check "and the run commits" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
pieces=$(((8000000 + fit * 1024 - 1) / (fit * 1024)))
check "every line, the long one in $pieces pieces" \
	test "$(metric "$d/state/metrics.json" rows_committed)" = "$((110 + pieces))"

# 3. At run time: files holding partial lines of 1 MB leave less than the check counted on
# (one read buffer per input), and the long lines are cut to what fits, never fatal.
d="$T/runtime"
mkdir -p "$d/logs"
for i in 1 2 3; do
	printf 'short %s\n' $i >"$d/logs/f$i.log"
	noise 1000000 >>"$d/logs/f$i.log"
done
{
	seq 1 50 | sed 's/^/g short /'
	noise 1000000
	echo
	seq 1 5 | sed 's/^/g after /'
} >"$d/logs/g.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
sed -i "s/^  state_dir: .*/&\n  memory_limit: 8MiB/" "$d/floe.yaml"
# The unfinished last lines must still look unfinished when the run reads them, however
# long a loaded machine took to get there (with the default 5s, they sometimes did not).
sed -i "s/^    start_at: beginning$/&\n    partial_line_timeout: 10m/" "$d/floe.yaml"
check "runtime: check accepts 8MiB" quietly "$FLOE_BIN" check -c "$d/floe.yaml"
check "runtime: the run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
m="$d/state/metrics.json"
# The 1 MB last lines of f1..f3 have no LF and their files were just written: a writer
# may still be in the middle of them, so they wait (partial_line_timeout).
check "runtime: every complete line is a row" test "$(metric "$m" rows_committed)" = 59
check "runtime: the cut lines are counted" test "$(metric "$m" lines_truncated_memory)" -ge 1
check "runtime: and logged" grep -q "does not fit in what agent.memory_limit has left: cut to" "$d/err"
list=$(live_files "$d/wh/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select count(*) from read_parquet([$list]) where length(message) < 1000000 and length(message) > 100000" >"$d/cut"
check "runtime: a cut line keeps its beginning" test "$(tr -dc 0-9 <"$d/cut")" = "$(metric "$m" lines_truncated_memory)"
touch -d '-1 hour' "$d"/logs/f*.log # the writers are done: their last lines are complete
check "runtime: a second run succeeds" "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err2"
check "runtime: the finished files' last lines are rows too" test "$(metric "$m" rows_committed)" = 3
# 4. A running agent's memory in use stays flat from commit to commit: nothing a commit
# does is left behind (the table's metadata model kept every expired snapshot's values,
# 12-17 KB a commit, and ran into memory_limit after days). A line every 0.2 s, a commit a
# second; floe_memory_used_bytes taken at the 15th, 35th and 55th commits, when the agent
# is quiet: every line appended so far committed (floe_rows_committed_total says so), so
# the batch is empty and no commit is in flight. Taken at any other moment, the gauge
# counts what is in flight, and that is what a loaded machine showed as a one-time step of
# exactly 101,256 bytes (272,236 to 373,492): the batch's open Parquet writer, made for
# the first row after a seal and freed by the next seal (13 column chunks, 6 dictionary
# slot tables of 8 KiB, the zstd contexts: pipeline/batch.c new_fragment). /metrics is
# rendered once a second and the batch sealed once a second; idle, the render follows the
# seal in the same loop turn (no writer), while on a loaded machine a line can wake the
# loop at the render's time first, and from then on every render falls before the seal
# (the writer counted). Quiet, the figure has no such term and must not move at all.
d="$T/flat"
mkdir -p "$d/logs"
: >"$d/logs/app.log"
cat >"$d/floe.yaml" <<YAML
agent:
  state_dir: $d/state
  http:
    listen: 127.0.0.1:0
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
tables:
  logs:
    commit_interval: 1s
    properties:
      history.expire.max-snapshot-age-ms: 1s
      commit.manifest.min-count-to-merge: 5
lake:
  warehouse: $d/wh
YAML
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/run.err" &
PIDS+=($!)
fpid=$!
port=$(serving_port "$d/run.err" $fpid)
# prom NAME: NAME's value in the document /metrics serves now.
prom() { curl -sf "http://127.0.0.1:$port/metrics" | awk -v n="$1" '$1 == n { print $2 }'; }
n=0
used=()
for from in 15 35 55; do
	while [ $n -lt 700 ]; do # a line every 0.2 s until that many commits
		n=$((n + 1))
		echo "line $n" >>"$d/logs/app.log"
		[ "$(prom floe_commits_total)" -ge $from ] 2>/dev/null && break
		sleep 0.2
	done
	# Quiet: the document that first counts every line committed (rendered after the
	# commit's report, with nothing read since the seal); at most 30 s.
	u=""
	for i in $(seq 1 300); do
		m=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
		if [ "$(awk '$1 == "floe_rows_committed_total" { print $2 }' <<<"$m")" = "$n" ]; then
			u=$(awk '$1 == "floe_memory_used_bytes" { print $2 }' <<<"$m")
			break
		fi
		sleep 0.1
	done
	used+=("$u")
done
kill -TERM $fpid
wait $fpid || true
echo "# memory in use, quiet, at commits 15, 35 and 55: ${used[*]}"
flat() {
	[ -n "${used[0]}" ] && [ "${used[0]}" = "${used[1]}" ] && [ "${used[1]}" = "${used[2]}" ]
}
check "flat: memory in use, quiet, is the same at commits 15, 35 and 55 (${used[*]})" flat
finish
