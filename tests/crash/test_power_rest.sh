#!/usr/bin/env bash
# Power cuts in the tail cycle through a REST catalog (scenario_rest.sh): floe's files in
# the warehouse are cut, the catalog keeps what it received before the cut. For each
# crash state and each catalog state the cut allows, floe must start, commit no line
# twice although the local record of a commit may be lost, lose no committed line, and
# leave a table that reads back whole. The short default (FLOE_CRASH_STRIDE=remote)
# takes only the points where the catalog may hold commits the local state has no record
# of, each with all of them (FLOE_CRASH_STRIDE=1 for every point and catalog state).
: "${FLOE_CRASH_VARIANTS:=0}" "${FLOE_CRASH_STRIDE:=remote}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"
source "$(dirname "$0")/scenario_rest.sh"

trap '! running_job "${REST_PID:-}" || { kill "$REST_PID"; wait "$REST_PID"; } 2>/dev/null; cleanup' EXIT
crash_test rest rest_crash_record "every crash state of the REST cycle recovers exactly once, the catalog as the cut left it"
