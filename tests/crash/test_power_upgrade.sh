#!/usr/bin/env bash
# Power cuts while floe takes over a state directory in the formats an older floe wrote
# (scenario_upgrade.sh): every crash state of the upgrade must recover with every line
# once. The short default takes every 40th point
# (FLOE_CRASH_STRIDE=1 for all).
: "${FLOE_CRASH_VARIANTS:=0}" "${FLOE_CRASH_STRIDE:=40}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"
source "$(dirname "$0")/scenario_upgrade.sh"

crash_test upgrade upgrade_record "every crash state of the upgrade recovers exactly once"
