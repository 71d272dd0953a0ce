#!/usr/bin/env bash
# Power cuts while spooled files get the table's field ids (scenario_reid.sh): a first
# boot offline spooled a typed column under a provisional id; the recorded runs rewrite
# those files and their entry, then commit. For each crash state (every point, with
# every store the cut allows at the worst variant; FLOE_CRASH_STRIDE=N for every Nth
# point), floe must start, commit every line once with its typed column, leave no
# rewrite debris that a commit would take, and leave a table that reads back whole.
: "${FLOE_CRASH_VARIANTS:=0}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/../integration/s3lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"
source "$(dirname "$0")/scenario_s3.sh"
source "$(dirname "$0")/scenario_reid.sh"

trap 'stub_stop; cleanup' EXIT
crash_test reid reid_record "every crash state of the re-id cycle recovers exactly once, typed"
