#!/usr/bin/env bash
# The progress line of a long run --once: on a terminal (a pseudo-terminal from
# util-linux's script), a line with bytes done of the total, lines, rate and time left,
# redrawn in place, with the log lines above it intact and the line cleared at the end;
# with stderr in a file, no progress and no control characters. The input (about 100 MB)
# takes a few seconds; if a machine reads it in under 1.5 s, the terminal's progress check
# cannot run (the line is drawn once a second, from the second second on): if nothing
# else fails, the test then exits 77 saying so, counted skipped rather than passed.
source "$(dirname "$0")/lib.sh"
command -v script >/dev/null || skip "script (util-linux) is missing"

python3 - "$T/big.log" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(1200000):
        f.write(f"Dec  3 17:{i % 60:02d}:{i % 60:02d} host{i % 7} app[{i % 1000}]: request {i} "
                f"took {i * 7919 % 9999} ms path=/api/v1/item/{i * 7 % 100000}\n")
PY
cat >"$T/floe.yaml" <<YAML
agent: { state_dir: $T/state }
inputs: [ { type: tail, paths: ["$T/big.log"], start_at: beginning } ]
YAML

# Not a terminal: logs only.
rc=0
"$FLOE_BIN" run -c "$T/floe.yaml" --once 2>"$T/file.err" >/dev/null || rc=$?
check "run --once with stderr in a file" test $rc = 0
check "... shows no progress" sh -c "! grep -q 'progress:' '$T/file.err'"
check "... and writes no carriage return or escape" sh -c "! grep -q \$'[\r\033]' '$T/file.err'"

# A terminal: script gives floe a pseudo-terminal and copies what it writes.
rm -rf "$T/state"
start=$(date +%s%N)
rc=0
script -qec "'$FLOE_BIN' run -c '$T/floe.yaml' --once" /dev/null >"$T/tty.out" 2>&1 </dev/null || rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
check "run --once on a terminal ($ms ms)" test $rc = 0
if [ "$ms" -ge 1500 ]; then
	check "a progress line: bytes of the total, percentage, lines, rate, time left" \
		grep -aq $'\rprogress: [0-9.]* [KMG]*i*B of [0-9.]* [KMG]*i*B ([0-9]*%), [0-9.]* [kM]* *lines, [0-9.]* [KMG]*i*B/s' "$T/tty.out"
else
	skip_part "the progress line (the run took $ms ms, under the 1.5 s it needs)"
fi
# Every log line starts a line of its own (a progress line before it is cleared).
tr '\r' '\n' <"$T/tty.out" | sed $'s/\033\\[K//g' | grep -a ' floe ' >"$T/log-lines"
check "the log lines are whole: started, sealed, committed, stopping" sh -c \
	"grep -aq '^[0-9T:.Z-]* floe info: agent .* started' '$T/log-lines' &&
	 grep -aq '^[0-9T:.Z-]* floe info: runner: sealed' '$T/log-lines' &&
	 grep -aq '^[0-9T:.Z-]* floe info: table: committed' '$T/log-lines' &&
	 grep -aq '^[0-9T:.Z-]* floe info: agent .* stopping: 1200000 lines read' '$T/log-lines'"
# CR and ESC made visible (R, E): the clear sequence, then the last log line.
tr '\r\033' 'RE' <"$T/tty.out" >"$T/tty.visible"
check "the progress line is cleared before the last log line" \
	grep -aq 'RE\[K[0-9T:.Z-]* floe info: agent .* stopping' "$T/tty.visible"
finish
