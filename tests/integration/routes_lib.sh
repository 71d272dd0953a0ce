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

# routed_yaml DIR: agent, inputs and tables of a configuration for DIR (state in
# DIR/state, lines in DIR/logs): the README's rules, access to access, sshd, sudo and
# login to security a year, the rest to logs, every table committing each second.
routed_yaml() {
	cat <<YAML
agent: {id: routes-test, state_dir: $1/state}
inputs:
  - type: tail
    paths: ["$1/logs/*.log"]
    start_at: beginning
    parser: logfmt
    route:
      - { field: kind, equals: access, table: access }
      - { field: app, matches: "^(sshd|sudo|login)\$", table: security }
tables:
  logs: { commit_interval: 1s }
  access: { partition_by: [], commit_interval: 1s }
  security: { commit_interval: 1s, properties: { history.expire.max-snapshot-age-ms: 365d } }
YAML
}
