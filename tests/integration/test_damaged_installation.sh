#!/usr/bin/env bash
# A damaged installation file (state_dir/installation) never stops the agent, and the
# installation goes on under the same id, so nothing it committed is committed again.
# A first run commits 2,000 lines and dies before it removes the committed entry from the
# spool (FLOE_CRASH_AT=commit-before-spool-remove): only the table's floe.commit-seq of
# this installation tells the restart that the entry is in. Then the installation file
# is damaged three ways (cut short, zeros over it as after a power cut, garbage), alone
# (its copy, installation.copy, answers) or with its copy (the checkpoint, which names
# the installation, answers). The restart must go on, set the file aside, say so and
# count it, and the table must hold every line once. When the file, its copy and the
# checkpoint are all damaged, a new installation is made, logged and counted.
source "$(dirname "$0")/lib.sh"

rows() {
	"$FLOE_BIN" inspect "$1/wh/default/logs" 2>/dev/null |
		sed -n 's#^live files=[0-9]* records=\([0-9]*\).*#\1#p'
}
# spoil FILE HOW: cut (to 31 bytes), zeros (the same length of zeros), garbage.
spoil() {
	local size
	size=$(stat -c %s "$1")
	case $2 in
	cut) truncate -s 31 "$1" ;;
	zeros) head -c "$size" /dev/zero >"$1" ;;
	garbage) head -c 200 /dev/urandom >"$1" ;;
	esac
}
# setup DIR: the configuration, 2,000 lines, a first run whose commit lands but whose
# entry stays in the spool.
setup() {
	mkdir -p "$1/logs"
	seq 1 2000 | sed 's/^/line /' >"$1/logs/app.log"
	write_config "$1/floe.yaml" "$1/state" "$1/wh" "[\"$1/logs/*.log\"]"
	local rc=0
	FLOE_CRASH_AT=commit-before-spool-remove "$FLOE_BIN" run -c "$1/floe.yaml" --once \
		--log-level error 2>/dev/null || rc=$?
	test $rc = 99 && test -f "$1/state/installation.copy" &&
		test "$(rows "$1")" = 2000 && test -n "$(ls "$1"/state/spool/*.entry 2>/dev/null)"
}

# case NAME HOW FILES...: damage FILES (under state/) HOW, restart, check.
case_() {
	local name=$1 how=$2 d="$T/$1" rc=0 inst
	shift 2
	check "$name: the first run commits and dies before its spool removal" setup "$d"
	inst=$(grep -ao '"installation":"[0-9a-f-]*"' "$d/state/installation.copy")
	for f in "$@"; do spoil "$d/state/$f" "$how"; done
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err" || rc=$?
	check "$name: the restart goes on (exit 0)" test $rc = 0
	check "$name: the damaged file is set aside" test -f "$d/state/quarantine/installation"
	check "$name: counted (state_damaged)" \
		test "$(metric "$d/state/metrics.json" state_damaged)" -ge "$#"
	check "$name: logged" grep -q "identity: .*/installation is damaged" "$d/err"
	check "$name: the same installation goes on" \
		grep -aqF "$inst" "$d/state/installation"
	check "$name: no new installation counted" \
		test "$(metric "$d/state/metrics.json" installation_renewed)" = 0
	check "$name: every line once in the table" test "$(rows "$d")" = 2000
	seq 2001 2500 | sed 's/^/line /' >>"$d/logs/app.log"
	rc=0
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn 2>"$d/err2" || rc=$?
	check "$name: a later run commits what came since (exit 0)" test $rc = 0
	check "$name: every line once after it" test "$(rows "$d")" = 2500
}

for how in cut zeros garbage; do
	case_ "file-$how" "$how" installation
	check "file-$how: its copy answered" grep -q "its copy names installation" "$T/file-$how/err"
	case_ "both-$how" "$how" installation installation.copy
	check "both-$how: the checkpoint answered" \
		grep -q "the checkpoint names installation" "$T/both-$how/err"
done

# Nothing names the installation any more: a new one, logged and counted. The table holds
# the old one's commits under this agent.id, most likely this agent's own: the agent does
# not stop, but reads into its spool and commits nothing until agent.replaces names the
# old installation (the log says which). What the old one committed and had not removed
# from its spool is then not committed again: the spool's record of its last commit
# (.last-commit, written before the removal) says it is in, whichever installation
# committed it.
# renew DIR: the installation file, its copy and the checkpoint damaged, a run (its log in
# DIR/err); the old installation in $old.
renew() {
	old=$(grep -ao '"installation":"[0-9a-f-]*"' "$1/state/installation.copy" | cut -d'"' -f4)
	for f in installation installation.copy checkpoint; do spoil "$1/state/$f" garbage; done
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level warn 2>"$1/err" || true
}
# replaced DIR NAME ROWS: with agent.replaces naming $old, a run commits, and the table
# holds ROWS.
replaced() {
	local rc=0
	sed -i "s/^  id: it-agent$/&\n  replaces: $old/" "$1/floe.yaml"
	"$FLOE_BIN" run -c "$1/floe.yaml" --once --log-level warn 2>"$1/err2" || rc=$?
	check "$2: with agent.replaces it commits (exit 0)" test $rc = 0
	check "$2: the entry the old installation committed is not committed again ($(rows "$1") rows)" \
		test "$(rows "$1")" = "$3"
}

d="$T/all"
check "all: the first run commits and dies before its spool removal" setup "$d"
renew "$d"
check "all: a new installation is logged" grep -q "new installation" "$d/err"
check "all: and counted (installation_renewed)" \
	test "$(metric "$d/state/metrics.json" installation_renewed)" = 1
check "all: the files are counted (state_damaged)" \
	test "$(metric "$d/state/metrics.json" state_damaged)" -ge 3
check "all: the table's check names the old installation" \
	grep -q "set agent.replaces: $old" "$d/err"
check "all: nothing is committed meanwhile" test "$(rows "$d")" = 2000
replaced "$d" all 2000

# The same with the old installation's last commit landed in the table but not yet in
# the spool's record of its last commit (a crash between the two): with agent.replaces
# naming it, its commit-seq in the table says the entry is in, since the record (of its
# commit before) says this spool's entries were numbered by it.
d="$T/window"
check "window: the first run commits" setup "$d"
check "window: a second run commits and dies before recording it" bash -c "
	seq 2001 2500 | sed 's/^/line /' >>'$d/logs/app.log'
	FLOE_CRASH_AT=commit-after-metadata '$FLOE_BIN' run -c '$d/floe.yaml' --once --log-level error 2>/dev/null
	test \$? = 99"
check "window: the table holds it" test "$(rows "$d")" = 2500
check "window: its entry is still in the spool" test -n "$(ls "$d"/state/spool/*.entry 2>/dev/null)"
renew "$d"
check "window: a new installation waits for agent.replaces" grep -q "set agent.replaces: $old" "$d/err"
replaced "$d" window 2500

finish
