#!/usr/bin/env bash
# Power cuts in the syslog (TCP) input's full cycle (scenario_syslog.sh): for every prefix
# of the recorded operations the worst crash state and FLOE_CRASH_VARIANTS random ones
# are rebuilt and floe is restarted on each: it must start, every message the state held
# durably must be in the table once and none twice, and the table must read back whole.
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/crashlib.sh"
source "$(dirname "$0")/scenario_syslog.sh"

crash_test syslog syslog_record "every crash state of the syslog cycle recovers what it held, once"
