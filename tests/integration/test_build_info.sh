#!/usr/bin/env bash
# Which build runs: floe version prints the version (the package's for a packaged floe;
# test_package checks that one), the source commit when known and the build type, and
# /metrics carries the same as floe_build_info's labels, so a fleet's dashboard can tell
# its devices' builds apart.
source "$(dirname "$0")/lib.sh"

line=$("$FLOE_BIN" version)
echo "# $line"
re='^floe ([^ ]+) \((commit ([0-9a-f]+), )?([A-Za-z]+) build; '
check "floe version: version, commit (when known) and build type" bash -c "[[ \"\$1\" =~ \$2 ]]" _ "$line" "$re"
[[ "$line" =~ $re ]] || { finish; exit 1; }
ver=${BASH_REMATCH[1]} commit=${BASH_REMATCH[3]} type=${BASH_REMATCH[4]}
[ "$type" != default ] || type=""
if git -C "$FLOE_SRC" rev-parse --git-dir >/dev/null 2>&1; then
	check "built in git: the commit is named ($commit)" test -n "$commit"
fi

mkdir -p "$T/in"
cat >"$T/floe.yaml" <<YAML
agent:
  state_dir: $T/state
  http:
    listen: 127.0.0.1:0
inputs:
  - type: tail
    paths: ["$T/in/*.log"]
YAML
run_serving "$T/floe.yaml" "$T/run.err"
check "the agent serves /metrics" test -n "$port"
[ -n "$port" ] || { cat "$T/run.err"; finish; exit 1; }
# The first document is published just after that log line.
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$T/m.txt" && grep -q '^floe_build_info' "$T/m.txt" && break
	sleep 0.1
done
want="floe_build_info{version=\"$ver\",commit=\"$commit\",build_type=\"$type\"} 1"
check "/metrics: $want" grep -qxF "$want" "$T/m.txt"
check "/metrics: floe_build_info is a gauge" grep -qx '# TYPE floe_build_info gauge' "$T/m.txt"
kill -TERM $pid
wait $pid || true
finish
