#!/usr/bin/env bash
# Power cuts in an aggregation with open windows: the tail cycle of scenario_tail.sh with
# JSON events and an aggregation counting them per minute and app (AGG=1), each
# recorded run ending with windows open. Every crash state must recover with every
# line once in the raw table and counted once in the aggregate table. Its recording is
# twice the tail's (the images and the aggregate table's commits), so the short default
# is the worst case alone: FLOE_CRASH_VARIANTS=1 made 1,270 states, 382 distinct, in
# 8.5 minutes on two busy cores.
: "${FLOE_CRASH_VARIANTS:=0}"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_tail.sh"

export AGG=1
crash_test aggregation tail_record "every crash state of the aggregation cycle recovers, each event counted once"
