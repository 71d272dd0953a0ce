#!/usr/bin/env bash
# Power cuts in the tail cycle against an S3 store (scenario_s3.sh): the local state is
# cut, the store keeps every request it received before the cut. For each crash state
# and each store the cut allows, floe must start, commit no line twice although the local
# record of a commit may be lost, lose no committed line, and leave a table that reads
# back whole. The short default (FLOE_CRASH_STRIDE=remote) takes
# only the points where the store may hold changes the local state has no record of, each
# with all of them (FLOE_CRASH_STRIDE=1 for every point and store).
: "${FLOE_CRASH_VARIANTS:=0}" "${FLOE_CRASH_STRIDE:=remote}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/../integration/s3lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"
source "$(dirname "$0")/scenario_s3.sh"

trap 'stub_stop; cleanup' EXIT
crash_test s3 s3_crash_record "every crash state of the S3 cycle recovers exactly once, the store as the cut left it"
