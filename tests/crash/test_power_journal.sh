#!/usr/bin/env bash
# Power cuts in the journal input's full cycle (scenario_journal.sh): for every prefix of
# the recorded operations the worst crash state and FLOE_CRASH_VARIANTS random ones are
# rebuilt and floe is restarted on each: it must start, and the table must hold every
# journal entry exactly once and read back whole. The short default takes every
# 40th point (FLOE_CRASH_STRIDE=1 for all).
: "${FLOE_CRASH_VARIANTS:=0}" "${FLOE_CRASH_STRIDE:=40}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"
source "$(dirname "$0")/scenario_journal.sh"

crash_test journal journal_record "every crash state of the journal cycle recovers exactly once"
