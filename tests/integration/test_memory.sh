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
# 12-17 KB a commit, and ran into memory_limit after days). A line every 0.2 s, a
# commit a second; floe_memory_used_bytes compared between the 15th and 35th commits.
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
# The gauge counts a commit's buffers while it is in flight (the manifests and metadata
# it writes): a sample taken mid-commit is higher by that much. So each figure is the
# least of the samples over three commits, of which some fall between commits, taken
# after the warm-up (here the gauge rose by 16 KB at the 2nd commit and 33 KB at the 7th).
# On a loaded machine it once rose by 101,256 bytes, exactly, later on, twice in two
# runs: one allocation made once, when the machine falls behind, not a cost per commit.
# So three figures, 20 commits apart: a cost left behind by every commit (the bug this
# catches was 12-17 KB a commit) raises both steps; a one-time allocation raises one.
used=("" "" "")
for i in $(seq 1 700); do # a line every 0.2 s, at most 140 s
	echo "line $i" >>"$d/logs/app.log"
	m=$(curl -sf "http://127.0.0.1:$port/metrics" || true)
	c=$(awk '$1 == "floe_commits_total" { print $2 }' <<<"$m")
	u=$(awk '$1 == "floe_memory_used_bytes" { print $2 }' <<<"$m")
	c=${c:-0}
	for k in 0 1 2; do
		from=$((15 + 20 * k))
		if [ -n "$u" ] && [ "$c" -ge $from ] && [ "$c" -lt $((from + 3)) ]; then
			[ -z "${used[$k]}" ] || [ "$u" -lt "${used[$k]}" ] && used[$k]=$u
		fi
	done
	[ "$c" -ge 58 ] && break
	sleep 0.2
done
kill -TERM $fpid
wait $fpid || true
echo "# memory in use over commits 15-17, 35-37, 55-57: ${used[*]}"
flat() { # flat: one of the two steps is within 64 KiB
	[ -n "${used[0]}" ] && [ -n "${used[1]}" ] && [ -n "${used[2]}" ] || return 1
	[ "${used[1]}" -le $((used[0] + 65536)) ] || [ "${used[2]}" -le $((used[1] + 65536)) ]
}
check "flat: memory in use does not grow commit after commit (${used[*]})" flat
finish
