#!/usr/bin/env bash
# Manifest merging and snapshot expiry on an S3 warehouse (Ceph RGW on loopback): over
# MAINT_COMMITS commits (30 by default) the merged manifests, the expired snapshots'
# lists and manifests and the old metadata files are written and deleted through the S3
# client; afterwards the table holds exactly what its retained snapshots list, DuckDB reads
# every line once, and python3-avro decodes every manifest.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
s3_start 18720
COMMITS=${MAINT_COMMITS:-30}
d="$T/m"
mkdir -p "$d/logs"
s3_config "$d/floe.yaml" "$d/state" mt "[\"$d/logs/*.log\"]" "$S3PORT" "    properties:
      commit.manifest.min-count-to-merge: 5
      history.expire.max-snapshot-age-ms: 1ms
      history.expire.min-snapshots-to-keep: 3
      write.metadata.previous-versions-max: 3
      write.metadata.delete-after-commit.enabled: true"
failed=0
for i in $(seq 1 "$COMMITS"); do
	printf 'commit %d line a\ncommit %d line b\n' "$i" "$i" >>"$d/logs/app.log"
	"$FLOE_BIN" run -c "$d/floe.yaml" --once --log-level warn || failed=$((failed + 1))
done
check "$COMMITS commits to RGW succeed" test "$failed" = 0
check "the live files are fetched" s3_live "$d/floe.yaml" mt "$d/s3" "$d/files"
check "DuckDB reads every line exactly once" node "$READER/check_rows.js" "$d/files" "$d/logs/app.log"
check "3 snapshots are kept" grep -q '^snapshots 3$' "$d/files.inspect"
meta="$d/s3/default/logs/metadata"
check "python3-avro decodes every manifest and list" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" "$meta"/*.avro
check "floe merged manifests" test "$(find "$meta" -name '*-m[1-9]*.avro' | wc -l)" -gt 0
# The bucket holds exactly the lists and manifests the retained snapshots name, and the
# metadata files of the log.
check "deleted on S3 exactly what no retained snapshot needs" /usr/bin/python3 - "$meta" "s3://$S3_BUCKET/mt" <<'PY'
import glob, json, os, sys, avro.datafile, avro.io
meta, uri = sys.argv[1], sys.argv[2]
local = lambda p: p.replace(uri, os.path.dirname(os.path.dirname(os.path.dirname(meta))))
read = lambda p: list(avro.datafile.DataFileReader(open(local(p), "rb"), avro.io.DatumReader()))
v = open(os.path.join(meta, "version-hint.text")).read().strip()
m = json.load(open(os.path.join(meta, "v%s.metadata.json" % v)))
need = set()
for s in m["snapshots"]:
    need.add(local(s["manifest-list"]))
    need.update(local(r["manifest_path"]) for r in read(s["manifest-list"]))
have = set(glob.glob(os.path.join(meta, "*.avro")))
logs = {local(e["metadata-file"]) for e in m["metadata-log"]}
jsons = set(glob.glob(os.path.join(meta, "v*.metadata.json")))
print("# missing %d, left over %d, metadata files %d (log %d)" % (len(need - have), len(have - need), len(jsons), len(logs)))
sys.exit(0 if need == have and jsons == logs | {os.path.join(meta, "v%s.metadata.json" % v)} else 1)
PY
finish
