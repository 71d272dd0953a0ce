#!/usr/bin/env bash
# Power cuts while `floe maintain` compacts beside a running agent (scenario_maintain.sh):
# every crash state of the recording (both processes' operations) must recover with
# every line once, and a maintain run on it succeed. The short default takes every
# 80th point, its recording being the longest (FLOE_CRASH_STRIDE=1 for all).
: "${FLOE_CRASH_VARIANTS:=0}" "${FLOE_CRASH_STRIDE:=80}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"
source "$(dirname "$0")/scenario_maintain.sh"

crash_test maintain maintain_record "every crash state of the maintenance cycle recovers exactly once, and maintain runs on it"
