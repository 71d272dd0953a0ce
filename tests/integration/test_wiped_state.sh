#!/usr/bin/env bash
# A device whose state_dir is wiped (a volatile /var/lib, a re-flashed data partition, a
# container without a volume for it) keeps committing under its agent.id: the new
# installation finds the agent.id's commits made from its own home (the same hardware,
# here a machine tree with one network device, and the same state_dir path, whose lock
# says no agent runs on it) and takes them over, saying so, where the old tree stopped
# for good (exit 2, which the unit does not restart). A clone of the device's image (the
# same agent.id, other hardware), a second state_dir on the same machine, and a machine
# whose hardware says nothing of itself are still refused (exit 2, naming the
# installation), as before. Every line of the runs that commit is in the table once.
source "$(dirname "$0")/lib.sh"
WH=$T/wh
machine_root "$T/m1" "b8:27:eb:00:00:01"
machine_root "$T/m2" "b8:27:eb:00:00:02"

config() { # config FILE STATE LOGS
	cat >"$1" <<YAML
agent: { id: device-7, state_dir: $2 }
inputs:
  - { type: tail, paths: ["$3/*.log"], start_at: beginning }
lake: { warehouse: $WH }
YAML
}
rows() { snapshot_records "$WH/default/logs"; }

mkdir -p "$T/in"
config "$T/a.yaml" "$T/state" "$T/in"
seq 1 10 | sed 's/^/before /' >"$T/in/a.log"
FLOE_TEST_MACHINE_ROOT=$T/m1 "$FLOE_BIN" run --once -c "$T/a.yaml" 2>"$T/err.1"
check "the device commits its 10 lines" test "$(rows)" = 10

# The state_dir is wiped, and with it (a volatile /var) the logs it had read.
rm -rf "$T/state" "$T/in"
mkdir -p "$T/in"
seq 1 5 | sed 's/^/after /' >"$T/in/b.log"
rc=0
FLOE_TEST_MACHINE_ROOT=$T/m1 "$FLOE_BIN" run --once -c "$T/a.yaml" 2>"$T/err.2" || rc=$?
check "after the wipe the device runs on (exit 0, got $rc)" test "$rc" = 0
check "it says it takes the agent.id over from its wiped self" \
	grep -q "agent.id 'device-7' last committed from installation .* on this machine from this state_dir, whose files are gone .* takes the agent.id over" "$T/err.2"
check "its 5 new lines are committed: 15 in all" test "$(rows)" = 15
rc=0
seq 6 8 | sed 's/^/after /' >>"$T/in/b.log"
FLOE_TEST_MACHINE_ROOT=$T/m1 "$FLOE_BIN" run --once -c "$T/a.yaml" 2>"$T/err.3" || rc=$?
check "the next run commits as usual (exit 0, got $rc), without a word of it" \
	sh -c "[ $rc = 0 ] && ! grep -q 'takes the agent.id over' '$T/err.3'"
check "18 lines in all" test "$(rows)" = 18

# Refused as before: (1) a clone of the image on other hardware; (2) a second state_dir
# on the same machine; (3) a machine whose hardware says nothing (a container).
mkdir -p "$T/in2"
echo "clone line" >"$T/in2/c.log"
# The clone's state_dir has the device's path: the device's own is moved aside meanwhile.
mv "$T/state" "$T/state.device"
for c in "clone:$T/m2:$T/state" "second state_dir:$T/m1:$T/state.second" "no hardware:$T/no-machine:$T/state"; do
	IFS=: read -r name root state <<<"$c"
	config "$T/c.yaml" "$state" "$T/in2"
	rc=0
	FLOE_TEST_MACHINE_ROOT=$root "$FLOE_BIN" run --once -c "$T/c.yaml" 2>"$T/err.c" || rc=$?
	check "($name) refused with exit 2 (got $rc)" test "$rc" = 2
	check "($name) naming the installation that commits under the agent.id" \
		grep -q "agent.id 'device-7' already commits from installation" "$T/err.c"
	rm -rf "$state"
done
mv "$T/state.device" "$T/state"
check "nothing of theirs is committed: 18 lines" test "$(rows)" = 18
finish
