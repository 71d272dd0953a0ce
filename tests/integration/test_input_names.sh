#!/usr/bin/env bash
# inputs[].name: a named input is called by its name in the log, in floe status and in
# the input label of /metrics; an unnamed one by its position, as before. Two inputs of
# one name (a given name, or a given name equal to another's position) and a name that
# would need quoting are configuration errors (exit 2) naming the key.
source "$(dirname "$0")/lib.sh"
mkdir -p "$T/web" "$T/db" "$T/none"
printf 'w %d\n' 1 2 3 >"$T/web/a.log"
printf 'd %d\n' 1 2 >"$T/db/a.log"
cat >"$T/floe.yaml" <<YAML
agent:
  state_dir: $T/state
  http:
    listen: 127.0.0.1:0
inputs:
  - {name: web, type: tail, paths: ["$T/web/*.log"], start_at: beginning}
  - {type: tail, paths: ["$T/db/*.log"], start_at: beginning}
  - {name: idle.one, type: tail, paths: ["$T/none/*.log"], start_at: beginning}
tables:
  logs:
    commit_interval: 1s
YAML
check "floe check shows the names, given and default" sh -c "'$FLOE_BIN' check -c '$T/floe.yaml' |
	grep -c '^  - name: \"\\(web\\|2\\|idle.one\\)\"' | grep -qx 3"
run_serving "$T/floe.yaml" "$T/run.err"
check "the agent serves /metrics" test -n "$port"
[ -n "$port" ] || { cat "$T/run.err"; finish; exit 1; }
# The 5 lines are read: the counters say so (bounded wait).
for i in $(seq 1 100); do
	curl -sf "http://127.0.0.1:$port/metrics" >"$T/m.txt" || true
	grep -qx 'floe_input_lines_total{input="web"} 3' "$T/m.txt" &&
		grep -qx 'floe_input_lines_total{input="2"} 2' "$T/m.txt" && break
	sleep 0.1
done
check "/metrics: the named input's label is its name" grep -qx 'floe_input_lines_total{input="web"} 3' "$T/m.txt"
check "/metrics: an unnamed input's label is its position" grep -qx 'floe_input_lines_total{input="2"} 2' "$T/m.txt"
check "/metrics: input idle.one" grep -qx 'floe_input_lines_total{input="idle.one"} 0' "$T/m.txt"
check "the log names the input by its name" grep -q 'input idle.one: pattern .* matches no file' "$T/run.err"
kill -TERM $pid
wait $pid || true
check "floe status names the inputs" sh -c "'$FLOE_BIN' status -c '$T/floe.yaml' >'$T/status.out' || true
	grep -q '^input web (' '$T/status.out' && grep -q '^input 2 (' '$T/status.out'"

bad() { # bad NAME-YAML EXPECTED-MESSAGE: a configuration error with that message, exit 2
	printf 'inputs:\n  - {%s type: tail, paths: ["/tmp/x/*.log"]}\n  - {type: tail, paths: ["/tmp/y/*.log"]}\n' "$1" >"$T/bad.yaml"
	local rc=0
	"$FLOE_BIN" check -c "$T/bad.yaml" >/dev/null 2>"$T/bad.err" || rc=$?
	[ $rc = 2 ] && grep -qF -- "$2" "$T/bad.err" || { cat "$T/bad.err"; return 1; }
}
check "a given name equal to another input's position is refused" \
	bad 'name: "2",' "key 'inputs[1].name': '2' is also the name of inputs[0] (an input's default name is its position)"
check "a name that would need quoting is refused" \
	bad 'name: "a\"b",' "key 'inputs[0].name': expected 1 to 24 characters of A-Z a-z 0-9 . _ -"
check "a name too long for the log is refused" bad "name: $(printf 'x%.0s' $(seq 1 25))," "expected 1 to 24 characters"
finish
