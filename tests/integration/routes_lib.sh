# Helpers of the routing tests (sourced after lib.sh): logfmt lines for three tables, and
# the inputs and tables of their configuration.
# shellcheck shell=bash

# routed_lines FILE FROM N: lines FROM..FROM+N-1 appended to FILE, each unique: a third
# access logs (kind=access), a third from sshd, sudo or login, the rest from cron.
routed_lines() {
	python3 - "$@" <<'PY'
import sys
apps = ["sshd", "sudo", "login"]
f, a, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(f, "a") as out:
    for i in range(a, a + n):
        if i % 3 == 0:
            out.write(f"kind=access path=/p{i} status={200 + i % 5}\n")
        elif i % 3 == 1:
            out.write(f"app={apps[i % 9 // 3]} user=u{i} n={i}\n")
        else:
            out.write(f"app=cron job=j{i} n={i}\n")
PY
}

# routed_input GLOB RULE...: a tail input of a configuration (an item of inputs:): the
# files GLOB from the beginning, parsed as logfmt (with ROUTED_TIME set, each line's
# time= is its ts), with the route rules given (flow mappings).
routed_input() {
	local glob=$1 rule
	shift
	printf '  - type: tail\n    paths: ["%s"]\n    start_at: beginning\n    parser: logfmt\n' "$glob"
	[ -z "${ROUTED_TIME:-}" ] || printf '    timestamp: {field: time, format: rfc3339}\n'
	printf '    route:\n'
	for rule in "$@"; do printf '      - %s\n' "$rule"; done
}

# access_and_auth DIR: two items of inputs: DIR/logs/access.log (apache_combined) to the
# table access, and DIR/logs/auth.log (logfmt) with sshd's lines routed to security.
access_and_auth() {
	printf '  - { type: tail, paths: ["%s/logs/access.log"], start_at: beginning, parser: apache_combined,\n      table: access }\n' "$1"
	routed_input "$1/logs/auth.log" '{ field: app, equals: sshd, table: security }'
}

# routed_yaml DIR: agent, inputs and tables of a configuration for DIR (state in
# DIR/state, lines in DIR/logs): the README's rules, access to access, sshd, sudo and
# login to security a year, the rest to logs, every table committing each second.
routed_yaml() {
	cat <<YAML
agent: {id: routes-test, state_dir: $1/state}
inputs:
$(routed_input "$1/logs/*.log" '{ field: kind, equals: access, table: access }' \
		'{ field: app, matches: "^(sshd|sudo|login)$", table: security }')
tables:
  logs: { commit_interval: 1s }
  access: { partition_by: [], commit_interval: 1s }
  security: { commit_interval: 1s, properties: { history.expire.max-snapshot-age-ms: 365d } }
YAML
}

# Three kinds of table for the tests of what is done per table (maintain, the check of a
# table behind the agent): logs, a routed unpartitioned table and an aggregation's.

# three_lines FILE FIRST N: N logfmt lines numbered from FIRST, times in 2026-03-01 (a
# closed day), a third of them access lines (kind=access), the others of app0..app3.
three_lines() {
	python3 - "$@" <<'PY'
import sys
path, first, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(path, "a") as f:
    for j in range(first, first + n):
        s = j % 86000
        t = "2026-03-01T%02d:%02d:%02dZ" % (s // 3600, s // 60 % 60, s % 60)
        if j % 3 == 0:
            f.write("time=%s kind=access path=/p%d status=%d\n" % (t, j, 200 + j % 5))
        else:
            f.write("time=%s app=app%d n=%d\n" % (t, j % 4, j))
PY
}

# three_yaml DIR LAKE: DIR/floe.yaml with logs, access (access lines, unpartitioned) and
# the aggregation apps (count by app over every line, closing its windows at a stop),
# maintain.min_age 0s, and lake: LAKE (a flow mapping).
three_yaml() {
	cat >"$1/floe.yaml" <<YAML
agent: {id: three-tables, state_dir: $1/state}
inputs:
$(ROUTED_TIME=1 routed_input "$1/logs/*.log" '{ field: kind, equals: access, table: access }')
aggregations:
  - { name: apps, window: 1m, group_by: [app], metrics: [count], idle_timeout: 1s }
tables:
  logs: {}
  access: { partition_by: [] }
maintain: { min_age: 0s }
lake: $2
YAML
}
