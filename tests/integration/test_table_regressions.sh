#!/usr/bin/env bash
# Table histories that lose commits are refused, by floe run and floe inspect alike, with a
# message naming the file and what was expected, and nothing is committed on them:
# (a) a stray v5.metadata.json (a copy of v3) while v4 is missing; (b) the same copy after
# v4; (c) the current metadata file deleted; (d) the current metadata file and the hint
# deleted: the agent finds the table behind its checkpoint; (e) a table moved from another
# location; (f) a state_dir whose checkpoint is a directory. After each fix the agent goes
# on and every line is in the table exactly once. (g) A new warehouse is not refused.
source "$(dirname "$0")/lib.sh"

# setup DIR: a table at v3 (two commits of 100 lines) under DIR/wh.
setup() {
	mkdir -p "$1/logs"
	seq -f "line %g" 1 100 >"$1/logs/app.log"
	write_config "$1/floe.yaml" "$1/state" "$1/wh" "[\"$1/logs/*.log\"]"
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level warn
	seq -f "more %g" 1 100 >>"$1/logs/app.log"
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level warn
	seq -f "late %g" 1 100 >>"$1/logs/app.log"
	META="$1/wh/default/logs/metadata"
}
# refused DIR WHAT PATTERN: floe run exits non-zero saying PATTERN, commits nothing, and
# floe inspect says the same.
refused() {
	local d=$1 what=$2 pattern=$3 rc=0
	ls "$META" >"$d/before"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
	check "$what: floe run refuses (exit $rc)" test $rc != 0
	check "$what: saying so" grep -q "$pattern" "$d/err"
	ls "$META" >"$d/after"
	check "$what: and commits nothing" cmp -s "$d/before" "$d/after"
	rc=0
	"$FLOE_BIN" inspect "$d/wh/default/logs" >/dev/null 2>"$d/inspect.err" || rc=$?
	check "$what: floe inspect makes the same decision (exit $rc)" grep -q "$pattern" "$d/inspect.err"
}
# goes_on DIR WHAT: floe run succeeds and every line is in the table once.
goes_on() {
	check "$2: then floe run goes on" "$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level warn
	live_files "$1/wh/default/logs" >"$1/files"
	check "$2: every line exactly once" node "$READER/check_rows.js" "$1/files" "$1/logs/app.log"
}

d="$T/a"
setup "$d"
cp "$META/v3.metadata.json" "$META/v5.metadata.json"
refused "$d" "(a) a stray v5 past a missing v4" "v5.metadata.json exists but v4.metadata.json does not"
check "(a) no v4 was made" test ! -e "$META/v4.metadata.json"
mv "$META/v5.metadata.json" "$d/v5.stray"
goes_on "$d" "(a) moved aside"

d="$T/b"
setup "$d"
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn
cp "$META/v3.metadata.json" "$META/v5.metadata.json"
seq -f "last %g" 1 100 >>"$d/logs/app.log"
refused "$d" "(b) a stray v5 after v4" "v5.metadata.json was not made from v4.metadata.json"
mv "$META/v5.metadata.json" "$d/v5.stray"
goes_on "$d" "(b) moved aside"

d="$T/c"
setup "$d"
mv "$META/v3.metadata.json" "$d/v3.saved"
refused "$d" "(c) the current metadata deleted" "version-hint.text names v3 but .*v3.metadata.json is missing"
mv "$d/v3.saved" "$META/v3.metadata.json"
goes_on "$d" "(c) restored"

d="$T/d"
setup "$d"
mv "$META/v3.metadata.json" "$d/v3.saved"
rm "$META/version-hint.text"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "(d) with the hint gone too, the agent refuses (exit $rc)" test $rc != 0
check "(d) saying the table is behind it (commit-seq 2, table 1)" \
	grep -q "committed up to commit-seq 2 .* holds its commits up to commit-seq 1 and is at v2" "$d/err"
check "(d) and commits nothing" test ! -e "$META/v3.metadata.json"
mv "$d/v3.saved" "$META/v3.metadata.json"
goes_on "$d" "(d) restored"

d="$T/e"
setup "$d"
mv "$d/wh" "$d/moved"
write_config "$d/floe.yaml" "$d/state.e" "$d/moved" "[\"$d/logs/*.log\"]"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "(e) a table moved from elsewhere is refused as a configuration error (exit $rc)" test $rc = 2
check "(e) naming the location its files are at" grep -q "lists its manifests in file://$d/wh/.*which is not inside the warehouse file://$d/moved" "$d/err"
check "(e) not as a cross-device link" bash -c "! grep -q 'cross-device' '$d/err'"
rc=0
"$FLOE_BIN" inspect "$d/moved/default/logs" >/dev/null 2>"$d/inspect.err" || rc=$?
check "(e) floe inspect names the file outside the table" grep -q "is not inside file://$d/moved/default/logs" "$d/inspect.err"

# What must keep working: a new warehouse (another table) is not a regression.
d="$T/g"
setup "$d"
write_config "$d/floe.yaml" "$d/state" "$d/wh2" "[\"$d/logs/*.log\"]"
check "(g) a run against a new warehouse succeeds" \
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err"
check "(g) saying the table is another one" grep -q "is not the table this installation committed to" "$d/err"
list=$(live_files "$d/wh2/default/logs" | sed "s/.*/'&'/" | paste -sd,)
duck "select count(*), min(message), max(message) from read_parquet([$list])" >"$d/rows"
check "(g) the new table holds the lines read since, once ($(cat "$d/rows"))" \
	grep -qx '\["100","late 1","late 99"\]' "$d/rows"

d="$T/f"
mkdir -p "$d/state/checkpoint" "$d/logs"
echo one >"$d/logs/app.log"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
check "(f) a checkpoint that is a directory stops the agent (exit $rc)" test $rc = 1
check "(f) naming the path and what was expected" \
	grep -q "checkpoint $d/state/checkpoint: Is a directory (expected floe's checkpoint file" "$d/err"
finish
