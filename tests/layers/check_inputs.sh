#!/usr/bin/env bash
# Checks that agent/run/ knows no type of input: the runner reads through the inputs' one
# interface (agent/input/input.h) and never branches on which kind an input is, so that a
# new input (OTLP, forward) is added in agent/input/ alone. Refused in agent/run/: the
# configured type constants (FLOE_INPUT_TAIL, FLOE_INPUT_SYSLOG, ...), a look at an
# input's type field, the kinds' own headers (tail.h, syslog_in.h, journal_in.h), and a
# call of a kind's functions (floe_tail_*, floe_syslog_*, floe_journal_*). Comments are
# left out. Prints each hit and exits 1 if there is one.
# Usage: check_inputs.sh [SOURCE-ROOT]   (ctest runs it as layers/check_inputs)
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"
[ -d agent/run ] || { echo "check_inputs: no agent/run under $ROOT"; exit 2; }

# Each file without its comments, as file:line: text.
strip() { awk -f "$ROOT/tests/layers/strip_comments.awk" "$@"; }

PATTERN='FLOE_INPUT_(TAIL|SYSLOG|JOURNAL|[A-Z]+)\b|\b(inputs\[[^]]*\]|in|c|input)(\.|->)type\b|#[[:space:]]*include[[:space:]]*"agent/input/(tail|syslog_in|journal_in)\.h"|\bfloe_(tail|syslog|journal)_[a-z_]+[[:space:]]*\('
hits=$(strip agent/run/*.c agent/run/*.h | grep -E "$PATTERN" || true)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "check_inputs: agent/run/ branches on an input's type or calls a kind of input" \
	     "directly: go through agent/input/input.h"
	exit 1
fi
echo "check_inputs: agent/run/ reads every input through agent/input/input.h"
