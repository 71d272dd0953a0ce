#!/usr/bin/env bash
# agent.log_format: json: every line floe writes to stderr in a run (start-up, a warning,
# commits, the stop) is one JSON object with time, level and msg, as a log collector
# reads it; floe check shows the setting; text stays the default.
source "$(dirname "$0")/lib.sh"

SAMPLE=$FLOE_SRC/tests/data/loghub/Linux_2k.log
cat >"$T/floe.yaml" <<YAML
agent: { state_dir: $T/state, log_format: json }
inputs: [ { type: tail, paths: ["$SAMPLE", "$T/missing-\"quoted\"-*.log"], start_at: beginning } ]
YAML
rc=0
"$FLOE_BIN" run -c "$T/floe.yaml" --once 2>"$T/err" >/dev/null || rc=$?
check "run --once with log_format json" test $rc = 0
cat >"$T/check.py" <<'PY'
import json, re, sys
levels = set()
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    o = json.loads(line)
    assert sorted(o) == ["level", "msg", "time"], o
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", o["time"]), o
    levels.add(o["level"])
    n += 1
assert n >= 4, n
assert levels <= {"debug", "info", "warn", "error"}, levels
print(n, "lines,", ", ".join(sorted(levels)))
PY
out=$(python3 "$T/check.py" "$T/err" 2>&1) || { cat "$T/err"; echo "$out"; }
check "every stderr line is a JSON object with time, level, msg ($out)" \
	python3 "$T/check.py" "$T/err"
check "the warning quotes the pattern, escaped" \
	grep -q '"level":"warn","msg":"input 1: pattern .*missing-\\"quoted\\"-\*.log matches no file' "$T/err"
check "floe check shows log_format: json" \
	sh -c "'$FLOE_BIN' check -c '$T/floe.yaml' 2>/dev/null | grep -q '^  log_format: json'"
sed -i 's/, log_format: json//' "$T/floe.yaml"
rm -rf "$T/state"
"$FLOE_BIN" run -c "$T/floe.yaml" --once 2>"$T/err-text" >/dev/null || true
check "text is the default" grep -q '^[0-9-]*T[0-9:.]*Z floe info: agent .* started' "$T/err-text"
finish
