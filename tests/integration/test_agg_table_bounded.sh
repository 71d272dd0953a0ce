#!/usr/bin/env bash
# An aggregate table stays bounded with nothing configured, as the raw table does: a
# timer's run --once, AGG_RUNS times with a line appended before each, commits a row to
# both tables each time (a clean stop writes the open window as a partial row). With no
# properties in the configuration, old metadata files are deleted after each commit
# (floe's defaults for a table it creates: write.metadata.delete-after-commit.enabled,
# previous-versions-max 10), so metadata/ keeps at most 11 metadata.json files for
# either table, and every run's line is in both.
source "$(dirname "$0")/lib.sh"

RUNS=${AGG_RUNS:-16}
d="$T/aggb"
mkdir -p "$d/logs"
cat >"$d/floe.yaml" <<YAML
agent: { id: aggb, state_dir: $d/state }
inputs:
  - { type: tail, paths: ["$d/logs/app.log"], start_at: beginning, parser: json }
lake: { warehouse: $d/wh }
aggregations:
  - { name: per_app, window: 1m, group_by: [app], metrics: [count] }
YAML
for i in $(seq 1 "$RUNS"); do
	printf '{"app":"a%d","message":"run %d"}\n' $((i % 3)) "$i" >>"$d/logs/app.log"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once >>"$d/out" 2>&1 || { tail -20 "$d/out"; break; }
done
count_meta() { find "$1/metadata" -name '*.metadata.json' | wc -l; }
raw=$(count_meta "$d/wh/default/logs")
agg=$(count_meta "$d/wh/default/per_app")
echo "# after $RUNS runs: $raw metadata.json files in logs, $agg in per_app"
check "the raw table keeps at most 11 metadata.json files ($raw)" test "$raw" -le 11
check "the aggregate table keeps at most 11 metadata.json files ($agg)" test "$agg" -le 11
check "the raw table holds every run's line" \
	test "$(rows_sql "$d/wh/default/logs" "SELECT count(*)::INT FROM t")" = "[$RUNS]"
check "the aggregate table counts every run's line" \
	test "$(rows_sql "$d/wh/default/per_app" "SELECT sum(count)::INT FROM t")" = "[$RUNS]"
finish
