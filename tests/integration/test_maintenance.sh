#!/usr/bin/env bash
# Table maintenance on commit: manifest merging and snapshot expiry keep the metadata
# bounded over many commits, every row stays in the table exactly once, every manifest
# floe merged decodes with python3-avro; and an agent offline past the retention (its
# commit in the table but still in its spool, its snapshots expired by another agent)
# commits nothing twice when it comes back.
# MAINT_COMMITS sets the number of commits of the first part (short by default; a few
# thousand for a soak). Retention is shortened by the table properties, not skipped.
source "$(dirname "$0")/lib.sh"
COMMITS=${MAINT_COMMITS:-120}
PROPS="    properties:
      commit.manifest.min-count-to-merge: 10
      commit.manifest.target-size-bytes: 64KiB
      history.expire.max-snapshot-age-ms: 1ms
      history.expire.min-snapshots-to-keep: 5
      write.metadata.previous-versions-max: 5
      write.metadata.delete-after-commit.enabled: true"

# meta_exact META: "MISSING LEFTOVER": the lists and manifests the retained snapshots
# name that are not in META, and the ones in META that no retained snapshot names.
meta_exact() {
	/usr/bin/python3 - "$1" <<'PY'
import glob, json, os, sys, avro.datafile, avro.io
meta = sys.argv[1]
v = open(os.path.join(meta, "version-hint.text")).read().strip()
m = json.load(open(os.path.join(meta, "v%s.metadata.json" % v)))
need = set()
for s in m["snapshots"]:
    lst = s["manifest-list"].replace("file://", "")
    need.add(lst)
    for r in avro.datafile.DataFileReader(open(lst, "rb"), avro.io.DatumReader()):
        need.add(r["manifest_path"].replace("file://", ""))
have = set(glob.glob(os.path.join(meta, "*.avro")))
print(len(need - have), len(have - need))
PY
}

# ---- many commits ----
d="$T/many"
meta="$d/wh/default/logs/metadata"
mkdir -p "$d/logs"
write_config "$d/floe.yaml" "$d/state" "$d/wh" "[\"$d/logs/*.log\"]" "$PROPS"
max_meta=0 max_entries=0 max_files=0 failed=0
for i in $(seq 1 "$COMMITS"); do
	printf 'commit %d line a\ncommit %d line b\n' "$i" "$i" >>"$d/logs/app.log"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level error || failed=$((failed + 1))
	# From commit 50 on (merging and expiry have kicked in) nothing may grow.
	if [ "$i" -ge 50 ]; then
		v=$(cat "$meta/version-hint.text")
		size=$(stat -c %s "$meta/v$v.metadata.json")
		files=$(ls "$meta" | wc -l)
		[ "$size" -gt "$max_meta" ] && max_meta=$size
		[ "$files" -gt "$max_files" ] && max_files=$files
	fi
done
check "$COMMITS commits succeed" test "$failed" = 0
# The manifests the current snapshot's list holds, read by python3-avro.
entries=$(/usr/bin/python3 - "$meta" <<'PY'
import json, os, sys, avro.datafile, avro.io
meta = sys.argv[1]
v = open(os.path.join(meta, "version-hint.text")).read().strip()
m = json.load(open(os.path.join(meta, "v%s.metadata.json" % v)))
cur = [s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]][0]
lens = [r["manifest_length"] for r in avro.datafile.DataFileReader(open(cur["manifest-list"][7:], "rb"), avro.io.DatumReader())]
print(len(lens), sum(1 for n in lens if n < 32768))
PY
)
small=${entries#* } entries=${entries% *}
echo "# after $COMMITS commits: largest metadata.json $max_meta bytes, at most $max_files files in metadata/, $entries manifests listed, $small under half the target size"
check "metadata.json stays small (under 16 KiB)" test "$max_meta" -lt 16384
# Besides one full manifest per ~110 live data files (64 KiB of entries here; Iceberg's
# default target, 8 MiB, holds about 14,000), what metadata/ holds is bounded: 20,000
# commits ended with 182 full manifests and 206 files.
check "metadata/ holds a bounded number of files besides full manifests" \
	test "$max_files" -lt $((60 + COMMITS / 100))
# Full manifests add up as the table grows (one per target-size-bytes of entries, as in
# Iceberg); small ones are merged.
check "the manifest list holds few small manifests" test "$small" -le 20
check "floe inspect counts the same manifests" \
	test "$("$FLOE_BIN" inspect "$d/wh/default/logs" | sed -n 's/^manifests count=\([0-9]*\) .*/\1/p')" = "$entries"
check "floe inspect reports the small files" \
	grep -q "^small-files count=$COMMITS ratio=1.000$" <("$FLOE_BIN" inspect "$d/wh/default/logs")
check "5 snapshots are kept" test "$("$FLOE_BIN" inspect "$d/wh/default/logs" | sed -n 's/^snapshots //p')" = 5
live_files "$d/wh/default/logs" >"$d/files"
check "every line of every commit exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"
merged=$(find "$meta" -name '*-m[1-9]*.avro' | wc -l)
check "floe merged manifests" test "$merged" -gt 0
check "python3-avro decodes every manifest and list, merged ones included" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$meta"/*.avro
# Merged entries keep their snapshot id and sequence numbers: one agent's commit-seq N is
# the table's sequence number N here, and its data file's name carries N.
check "merged entries keep their sequence numbers and snapshot ids" /usr/bin/python3 - "$meta" <<'PY'
import json, os, re, sys, avro.datafile, avro.io
meta = sys.argv[1]
read = lambda p: list(avro.datafile.DataFileReader(open(p[7:] if p.startswith("file://") else p, "rb"), avro.io.DatumReader()))
v = open(os.path.join(meta, "version-hint.text")).read().strip()
m = json.load(open(os.path.join(meta, "v%s.metadata.json" % v)))
cur = [s for s in m["snapshots"] if s["snapshot-id"] == m["current-snapshot-id"]][0]
bad = existing = 0
for mf in read(cur["manifest-list"]):
    for e in read(mf["manifest_path"]):
        n = int(re.search(r"-(\d{20})-\d+\.parquet$", e["data_file"]["file_path"]).group(1))
        if e["status"] == 0:
            existing += 1
            ok = e["snapshot_id"] is not None and e["sequence_number"] == n and e["file_sequence_number"] == n
        else:
            # ADDED: inherited from the manifest's list entry.
            ok = (e["status"] == 1 and e["snapshot_id"] in (None, mf["added_snapshot_id"])
                  and e["sequence_number"] in (None, n) and mf["sequence_number"] == n)
        if not ok:
            print("# wrong entry:", e["status"], e["snapshot_id"], e["sequence_number"], n)
        bad += not ok
print("# %d EXISTING entries checked, %d wrong" % (existing, bad))
sys.exit(1 if bad or not existing else 0)
PY
# Every manifest a retained snapshot lists is there, and nothing else but the files of
# the metadata-log is left: expiry deleted exactly what no snapshot needs.
listed=$(meta_exact "$meta")
check "no manifest a retained snapshot needs was deleted" test "${listed% *}" = 0
check "no manifest or list is left that no snapshot lists (got ${listed#* })" test "${listed#* }" = 0

# ---- an agent offline past the retention ----
# offline NAME FOREIGN: with FOREIGN=1 the expiry is taken as another engine's, which does
# not keep floe.committed-seq.<installation>: the agent must find its files live instead.
offline() {
	local d="$T/$1" foreign=$2 rc=0
	mkdir -p "$d/a" "$d/b"
	for i in $(seq 1 20); do echo "agent a line $i"; done >"$d/a/a.log"
	AGENT_ID=agent-a write_config "$d/a.yaml" "$d/state-a" "$d/wh" "[\"$d/a/*.log\"]" "$PROPS"
	AGENT_ID=agent-b write_config "$d/b.yaml" "$d/state-b" "$d/wh" "[\"$d/b/*.log\"]" "$PROPS"
	FLOE_CRASH_AT=commit-after-metadata "$FLOE_BIN" run -c "$d/a.yaml" --once --log-level error || rc=$?
	check "$1: agent a dies after its commit landed" test $rc = 99
	check "$1: agent a's spool holds the committed batch" test -n "$(ls "$d/state-a/spool")"
	# Lines keep arriving while agent a is down; agent b commits past the retention.
	for i in $(seq 21 30); do echo "agent a line $i"; done >>"$d/a/a.log"
	for i in $(seq 1 8); do
		echo "agent b line $i" >>"$d/b/b.log"
		"$FLOE_BIN" run -c "$d/b.yaml" --once --log-level error
	done
	local meta="$d/wh/default/logs/metadata"
	if [ "$foreign" = 1 ]; then
		/usr/bin/python3 - "$meta/v$(cat "$meta/version-hint.text").metadata.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["properties"] = {k: v for k, v in m.get("properties", {}).items() if not k.startswith("floe.committed-seq.")}
json.dump(m, open(sys.argv[1], "w"))
PY
	fi
	check "$1: agent a's snapshot has expired" \
		test "$("$FLOE_BIN" inspect "$d/wh/default/logs" | grep -c 'floe.agent-id=agent-a')" = 0
	check "$1: agent a comes back" "$FLOE_BIN" run -c "$d/a.yaml" --once --log-level warn
	live_files "$d/wh/default/logs" >"$d/files"
	check "$1: every line of both agents exactly once" \
		node "$READER/check_rows.js" "$d/files" "$d/a/a.log" "$d/b/b.log"
}
offline offline 0
offline offline-foreign 1

# ---- a fleet: 4 agents commit at once, each merging the others' manifests too ----
d="$T/fleet"
for a in 1 2 3 4; do
	mkdir -p "$d/l$a"
	AGENT_ID=agent-$a write_config "$d/a$a.yaml" "$d/s$a" "$d/wh" "[\"$d/l$a/*.log\"]" "$PROPS"
done
for a in 1 2 3 4; do
	(
		for i in $(seq 1 15); do
			echo "agent $a line $i" >>"$d/l$a/x.log"
			"$FLOE_BIN" run -c "$d/a$a.yaml" --once --log-level error || echo "agent $a commit $i failed"
		done
	) >"$d/out$a" 2>&1 &
	PIDS+=($!)
done
for p in "${PIDS[@]}"; do wait "$p" || true; done
PIDS=()
check "fleet: every commit succeeds" test -z "$(cat "$d"/out*)"
live_files "$d/wh/default/logs" >"$d/files"
check "fleet: every line of every agent exactly once" node "$READER/check_rows.js" "$d/files" "$d"/l*/x.log
check "fleet: the metadata holds exactly what the retained snapshots name" \
	test "$(meta_exact "$d/wh/default/logs/metadata")" = "0 0"
finish
