#!/usr/bin/env bash
# Power cuts in the tail input's full cycle across a rotation, local warehouse
# (scenario_tail.sh). For every prefix of the recorded operations the worst crash state
# and FLOE_CRASH_VARIANTS random ones are rebuilt and floe is restarted on each: it must
# start, and the table must hold every line of the (final) input files exactly once and
# read back whole (DuckDB, python3-avro, every referenced file present).
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"

crash_test tail tail_record "every crash state of the tail cycle recovers exactly once"
