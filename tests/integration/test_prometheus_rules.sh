#!/usr/bin/env bash
# The shipped monitoring: packaging/prometheus/floe-rules.yml passes `promtool check
# rules` and its unit tests (`promtool test rules`: each alert fires on what should fire
# it and not on its healthy neighbours), the Grafana dashboard packaging/grafana/floe.json
# is valid JSON whose every query promtool parses, and every metric the rules and the
# dashboard name is one floe serves (its name is in the sources). Skipped without
# promtool (packaging/dev/install-deps.sh test unpacks it).
source "$(dirname "$0")/lib.sh"
PROMTOOL=$(command -v promtool || true)
[ -n "$PROMTOOL" ] || [ ! -x /opt/floe-bench/prometheus/usr/bin/promtool ] ||
	PROMTOOL=/opt/floe-bench/prometheus/usr/bin/promtool
if [ -z "$PROMTOOL" ]; then
	echo "skipped: no promtool (packaging/dev/install-deps.sh test unpacks it)"
	exit 77
fi
P="$FLOE_SRC/packaging/prometheus"
G="$FLOE_SRC/packaging/grafana/floe.json"

check "promtool check rules floe-rules.yml" "$PROMTOOL" check rules "$P/floe-rules.yml"
rc=0
(cd "$P" && "$PROMTOOL" test rules floe-rules.test.yml) >"$T/test.out" 2>&1 || rc=$?
check "promtool test rules floe-rules.test.yml" test $rc = 0
[ $rc = 0 ] || cat "$T/test.out"
for a in FloeNoCommit FloeSpoolNearFull FloeLosingData FloeS3AuthErrors FloeTableHeldBack FloeSpoolLeft \
	FloeConfigFallback FloeThreadStuck; do
	check "alert $a is defined and tested" sh -c "grep -q 'alert: $a\$' '$P/floe-rules.yml' &&
		grep -q 'alertname: $a\$' '$P/floe-rules.test.yml'"
done

# The dashboard's queries, with Grafana's variables given values, as recording rules:
# promtool parses each one.
rc=0
python3 - "$G" >"$T/dash-rules.yml" <<'PY' || rc=$?
import json, sys
d = json.load(open(sys.argv[1]))
assert d["title"] and d["panels"], "no title or panels"
print("groups:\n  - name: dashboard\n    rules:")
n = 0
for p in d["panels"]:
    for t in p.get("targets", []):
        e = t["expr"].replace("$instance", ".*").replace("$__rate_interval", "5m")
        n += 1
        print("      - record: floe_dashboard_query_%d" % n)
        print("        expr: %s" % json.dumps(e))
assert n >= 8, "only %d queries" % n
PY
check "the dashboard is JSON with its panels' queries" test $rc = 0
check "promtool parses every dashboard query" "$PROMTOOL" check rules "$T/dash-rules.yml"

# Every metric name written out in full is one floe serves.
missing=""
for m in $(cat "$P/floe-rules.yml" "$T/dash-rules.yml" | grep -v '^ *#' | grep -o 'floe_[a-z0-9_]*' |
	grep -v '^floe_dashboard_query_' | grep -v '_$' | sort -u); do
	grep -rqF "\"$m" "$FLOE_SRC/agent" "$FLOE_SRC/platform" || missing="$missing $m"
done
check "every metric named is one floe serves (missing:${missing:- none})" test -z "$missing"
finish
