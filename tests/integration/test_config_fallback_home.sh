#!/usr/bin/env bash
# The last good configuration when the broken file cannot say its state_dir: a fleet's
# push breaks the file before its agent.state_dir line (a custom one), or empties it
# to a line of garbage, or to nothing at all, or drops its inputs. The copy in state_dir cannot be found from the file, so each
# start also keeps one in the service manager's state directory (systemd's
# StateDirectory=, $STATE_DIRECTORY; /var/lib/floe without it) under a name made from the
# file's path. Before, such a start exited 2 (which the unit does not restart) and read
# nothing. agent.keep_last_good: false removes that copy too.
source "$(dirname "$0")/lib.sh"

d="$T/fbh"
mkdir -p "$d/logs" "$d/home"
export STATE_DIRECTORY="$d/home"
good() {
	cat >"$d/floe.yaml" <<YAML
inputs:
  - type: tail
    paths: ["$d/logs/*.log"]
    start_at: beginning
tables:
  logs: { commit_interval: 1s }
agent:
  id: fbh
  state_dir: $d/state
  keep_last_good: ${1:-true}
lake: { warehouse: $d/wh }
YAML
}
records() { snapshot_records "$d/wh/default/logs"; }

good
echo "line 1" >"$d/logs/a.log"
check "a first start with a custom state_dir" "$FLOE_BIN" run -c "$d/floe.yaml" --once
check "keeps the copy in state_dir" test -f "$d/state/config.last-good.yaml"
check "and one in \$STATE_DIRECTORY, named by the file's path" \
	bash -c "ls '$d/home' | grep -q '^config\.last-good\.[0-9a-f]*\.yaml$'"

# Broken before agent.state_dir: the YAML error comes first.
sed -i 's/^    start_at: beginning$/    start_at: beginning\n  - { type: tail, paths: [unclosed/' "$d/floe.yaml"
echo "line 2" >>"$d/logs/a.log"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err1" || rc=$?
check "broken before agent.state_dir: run exits 0" test $rc = 0
check "on the copy found from the path alone" grep -q "running on the last good configuration.*kept in $d/home/" "$d/err1"
check "and commits the new line" test "$(records)" = 2

# A line of garbage for the whole file.
echo "%%% not yaml: [" >"$d/floe.yaml"
echo "line 3" >>"$d/logs/a.log"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err2" || rc=$?
check "a file of garbage: run exits 0 on the copy" test $rc = 0
check "and commits the new line" test "$(records)" = 3

# An empty file (a push that created the file and had not written it when the power
# went; a template that rendered nothing). Before, it was a valid configuration: every
# default, no inputs, the agent running and reading nothing, exit 0, the copy unused.
: >"$d/floe.yaml"
echo "line 4" >>"$d/logs/a.log"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check3" 2>&1 || rc=$?
check "an empty file: check exits 2" test $rc = 2
check "and says the file holds no configuration" grep -q "holds no configuration" "$d/check3"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err3" || rc=$?
check "an empty file: run exits 0 on the copy" test $rc = 0
check "said so" grep -q "running on the last good configuration" "$d/err3"
check "and commits the new line" test "$(records)" = 4
printf '# floe\n\n   \n' >"$d/floe.yaml"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >/dev/null 2>&1 || rc=$?
check "a file of comments and blanks: check exits 2" test $rc = 2

# A file that lost its inputs (an emptied list): run refuses it, as check does, and runs
# on the copy.
good
sed -i 's/^inputs:$/inputs: []\nold_inputs:/' "$d/floe.yaml"
sed -i '/^old_inputs:/,/^tables:/{/^tables:/!d}' "$d/floe.yaml"
echo "line 5" >>"$d/logs/a.log"
rc=0
"$FLOE_BIN" check -c "$d/floe.yaml" >"$d/check4" 2>&1 || rc=$?
check "no inputs: check exits 2, saying so" sh -c "test $rc = 2 && grep -q 'no inputs' '$d/check4'"
rc=0
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>"$d/err4" || rc=$?
check "no inputs: run exits 0 on the copy" test $rc = 0
check "and commits the new line" test "$(records)" = 5

# keep_last_good: false removes both copies.
good false
check "keep_last_good: false" "$FLOE_BIN" run -c "$d/floe.yaml" --once
check "removes the copy in \$STATE_DIRECTORY too" \
	bash -c "! ls '$d/home' | grep -q last-good"
finish
