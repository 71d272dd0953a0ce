#!/usr/bin/env bash
# A bucket whose policy denies DELETE (write-once buckets, a key without s3:DeleteObject)
# and `floe run --once` from a timer: the start's probe of conditional creates (a key
# created twice, the second refused) could not remove its key. With a new random key per
# run, every run left one `.floe-probe-*` object: 1,440 a day from a minutely timer, for
# ever (on the old tree, 5 runs left 5). The key is now the installation's own, so what a
# denied DELETE leaves is one object per installation; a start that finds it there takes
# the store's 412 for it as the proof the probe looks for. A store that ignores
# If-None-Match is still refused with the key left there.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
stub_env
S="$T/stub"
# The stub of stub_start, with its objects as files under $T/s3 (to be counted).
mkdir -p "$S" "$T/s3"
: >"$S/ctl"
/usr/bin/python3 "$STUB_PY" --control "$S/ctl" --log "$S/stub.log" --dir "$T/s3" >"$S/stub.out" 2>&1 &
STUB_PID=$!
PIDS+=("$STUB_PID")
wait_for 10 grep -q 'stub listening' "$S/stub.out" || { echo "  stub: $(cat "$S/stub.out")"; exit 1; }
STUB_PORT=$(sed -n 's/^stub listening on 127.0.0.1:\([0-9]*\)$/\1/p' "$S/stub.out")
ctl() { printf '%s\n' "$@" >"$S/ctl"; }

d="$T/a"
mkdir -p "$d/in"
cat >"$d/floe.yaml" <<YAML
agent: { id: probe, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/in/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
  other: { commit_interval: 1s }
lake:
  warehouse: s3://bkt/p
  catalog: { type: s3 }
  s3: { endpoint: "http://127.0.0.1:$STUB_PORT", region: us-east-1, path_style: true }
YAML
probes() { find "$T/s3" -name '.floe-probe*' | wc -l; }
records() {
	"$FLOE_BIN" inspect --endpoint "http://127.0.0.1:$STUB_PORT" "s3://bkt/p/default/logs" 2>/dev/null |
		sed -n 's/^live files=[0-9]* records=\([0-9]*\) .*/\1/p'
}

ctl "deny=^DELETE .*floe-probe"
ok=0
for i in 1 2 3 4 5; do
	echo "line $i" >>"$d/in/a.log"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>>"$d/err" && ok=$((ok + 1))
done
check "5 runs with DELETE denied: each exits 0" test $ok = 5
check "the store denied the probe's DELETEs" grep -q "FAULT deny DELETE" "$S/stub.log"
check "every line committed" test "$(records)" = 5
check "one probe object left, not one per run ($(probes))" test "$(probes)" = 1

# DELETE allowed again: the leftover goes at the next start.
ctl ""
echo "line 6" >>"$d/in/a.log"
check "a run with DELETE allowed" "$FLOE_BIN" run -c "$d/floe.yaml" --once
check "and no probe object is left" test "$(probes)" = 0

# Another installation (a state_dir wiped): one more at most.
ctl "deny=^DELETE .*floe-probe"
echo "line 7" >>"$d/in/a.log"
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>>"$d/err" || true
rm -rf "$d/state"
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>>"$d/err" || true
"$FLOE_BIN" run -c "$d/floe.yaml" --once 2>>"$d/err" || true
check "two installations, DELETE denied: two probe objects ($(probes))" test "$(probes)" = 2
stub_stop
finish
