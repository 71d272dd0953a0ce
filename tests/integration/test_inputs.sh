#!/usr/bin/env bash
# What the file input reads and what it says about what it cannot: its own state and
# warehouse never (an error at check, skipped at run time), symbolic links by the
# follow_symlinks rule (exclude also matched on the target), patterns matching nothing and
# missing directories as warnings, and more files than descriptors allowed.
source "$(dirname "$0")/lib.sh"

rows() { # rows TABLE-DIR: the rows of the live data files
	local files
	files=$(live_files "$1" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || { echo 0; return; }
	duck "SELECT count(*) FROM read_parquet([$files])" | tr -d '[]"\n'
}
sources() { # sources TABLE-DIR: the distinct sources, sorted, one per line
	local files
	files=$(live_files "$1" | sed "s/.*/'&'/" | paste -sd,)
	[ -n "$files" ] || return 0
	duck "SELECT DISTINCT source FROM read_parquet([$files]) ORDER BY 1" | tr -d '[]"'
}

# A glob that matches the state directory: refused by check and by run (exit 2).
d="$T/own"
mkdir -p "$d/state" "$d/logs"
echo '{"a":1}' >"$d/logs/app.json"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.json\", \"$d/state/*.json\"]"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/out" 2>&1 || rc=$?
check "a glob over agent.state_dir fails check with exit 2" test $rc = 2
check "the error names the pattern and agent.state_dir" \
	grep -q "pattern '$d/state/\*.json' can match files in agent.state_dir" "$d/out"
rc=0
timeout -k 5 30 "$FLOE_BIN" run -c "$d/floe.yaml" --once >"$d/out" 2>&1 || rc=$?
check "a glob over agent.state_dir fails run with exit 2" test $rc = 2
# The same through a link that only run time can see: skipped, the rest committed, and
# metrics.json is not read back in a second run.
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.json\"]"
ln -s "$d/state/metrics.json" "$d/logs/metrics.json"
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err1"
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err2"
check "a link into the state directory is not read: one row" test "$(rows "$d/wh/default/logs")" = 1
check "the skipped link is logged" grep -q "not reading $d/logs/metrics.json.*own state" "$d/err2"

# Symbolic links: within_glob_root (the default) reads a link within the pattern's
# directory and not one out of it; true reads both; false neither; exclude applies to
# the target.
d="$T/links"
mkdir -p "$d/logs/sub" "$d/private"
echo "in-tree line" >"$d/logs/sub/real.txt"
echo "private line" >"$d/private/secret.txt"
chmod 600 "$d/private/secret.txt"
echo "plain line" >"$d/logs/plain.log"
echo "archived line" >"$d/logs/old.gz"
ln -s "$d/logs/sub/real.txt" "$d/logs/in.log"
ln -s "$d/private/secret.txt" "$d/logs/out.log"
ln -s "$d/logs/old.gz" "$d/logs/archive.log"
for mode in default true false; do
	extra=""
	[ $mode = default ] || extra="    follow_symlinks: $mode"
	cat >"$d/$mode.yaml" <<YAML
agent: { id: links, state_dir: $d/state-$mode }
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
$extra
lake: { warehouse: $d/wh-$mode }
YAML
	"$FLOE_BIN" run -c "$d/$mode.yaml" --once --log-level warn 2>"$d/err-$mode"
done
check "follow_symlinks default: the plain file and the in-tree link" \
	test "$(sources "$d/wh-default/default/logs" | paste -sd' ')" = "$d/logs/in.log $d/logs/plain.log"
check "follow_symlinks default: the link out of the tree is logged" \
	grep -q "not reading $d/logs/out.log -> $d/private/secret.txt" "$d/err-default"
check "follow_symlinks true: the link out of the tree too, never the excluded target" \
	test "$(sources "$d/wh-true/default/logs" | paste -sd' ')" = "$d/logs/in.log $d/logs/out.log $d/logs/plain.log"
check "follow_symlinks false: the plain file only" \
	test "$(sources "$d/wh-false/default/logs" | paste -sd' ')" = "$d/logs/plain.log"

# check warns about a missing directory and a pattern matching nothing; run logs the
# same, and the state changes (the directory appears, a file matches).
d="$T/health"
mkdir -p "$d/empty"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/missing/*.log\", \"$d/empty/*.log\"]"
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/out" 2>&1
check "check warns: a missing directory" grep -q "pattern $d/missing/\*.log matches no file: directory $d/missing: No such file" "$d/out"
check "check warns: a pattern matching nothing" grep -q "pattern $d/empty/\*.log matches no file (yet)" "$d/out"
COMMIT_INTERVAL=1s write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/missing/*.log\", \"$d/empty/*.log\"]"
"$FLOE_BIN" run -c "$d/floe.yaml" --log-level info 2>"$d/err" &
pid=$!
PIDS+=($pid)
sleep 1
mkdir -p "$d/missing"
echo "now here" >"$d/missing/a.log"
for _ in $(seq 1 100); do grep -q "pattern $d/missing/\*.log matches files again" "$d/err" && break; sleep 0.1; done
kill -TERM $pid
wait $pid || true
check "run logs when a pattern matches again" grep -q "pattern $d/missing/\*.log matches files again" "$d/err"
check "run logs each state once" test "$(grep -c "pattern $d/empty/\*.log matches no file" "$d/err")" = 1
check "metrics.json counts the unmatched pattern per input" \
	grep -q '"patterns_unmatched":1' "$d/state/metrics.json"

# More files than descriptors allowed: the inputs share what the limit leaves, with a
# warning, and every line is read (once "Too many open files" and exit 1).
d="$T/fds"
mkdir -p "$d/logs"
for i in $(seq 1 300); do echo "file $i" >"$d/logs/f$i.log"; done
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
rc=0
(ulimit -n 128 && "$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn) 2>"$d/err" || rc=$?
check "300 files under a limit of 128 descriptors: run succeeds" test $rc = 0
check "300 files under a limit of 128 descriptors: every line" test "$(rows "$d/wh/default/logs")" = 300
check "the descriptor cap is logged" grep -q "max_open_files and max_connections exceed the 128 descriptors" "$d/err"
finish
