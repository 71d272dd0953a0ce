#!/usr/bin/env bash
# Every manifest and manifest list floe writes is decoded by an independent Avro reader
# (Debian's python3-avro) and its field ids, order and header metadata are those of the
# Iceberg v2 spec; the table metadata JSON carries what engines require.
source "$(dirname "$0")/lib.sh"
DATA="$FLOE_SRC/tests/data/loghub"
mkdir -p "$T/logs"
cp "$DATA"/*.log "$T/logs/"
touch -d '-1 min' "$T"/logs/*.log # finished files: their last lines without LF are taken
write_config "$T/floe.yaml" "$T/state" "$T/wh" "[\"$T/logs/*.log\"]" \
	"    partition_by: [\"day(ts)\", \"bucket(4, host)\", \"host\"]"
check "first commit" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
echo "one more line" >>"$T/logs/HDFS_2k.log"
check "second commit" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
meta="$T/wh/default/logs/metadata"
ls "$meta"/*.avro >"$T/avro"
check "two manifests and two manifest lists were written" test "$(wc -l <"$T/avro")" -eq 4
check "python3-avro decodes every manifest and list with the spec's field ids" \
	/usr/bin/python3 "$FLOE_SRC/tests/integration/check_avro.py" $(cat "$T/avro")
# The newest list carries both manifests, ours first, with the right sequence numbers.
newest=$(ls -t "$meta"/snap-*.avro | head -1)
/usr/bin/python3 - "$newest" >"$T/list" <<'PY'
import sys, warnings
warnings.filterwarnings("ignore")
import avro.datafile, avro.io
with open(sys.argv[1], "rb") as f:
    r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
    for m in r:
        print(m["sequence_number"], m["added_files_count"], m["added_rows_count"],
              [(p["contains_null"], p["lower_bound"] is not None) for p in m["partitions"]])
PY
check "the second list holds the new manifest first, then the parent's" \
	bash -c "sed -n 1p '$T/list' | grep -q '^2 1 1 ' && sed -n 2p '$T/list' | grep -q '^1 1 10000 '"
check "partition summaries have bounds for every field" \
	bash -c "! grep -q 'False)' '$T/list' || grep -q '(False, True), (False, True), (False, True)' '$T/list'"
v=$(cat "$meta/version-hint.text")
/usr/bin/python3 - "$meta/v$v.metadata.json" <<'PY' >"$T/meta"
import json, sys
m = json.load(open(sys.argv[1]))
print(m["format-version"], m["last-sequence-number"], len(m["snapshots"]),
      m["refs"]["main"]["snapshot-id"] == m["current-snapshot-id"],
      m["snapshots"][1]["parent-snapshot-id"] == m["snapshots"][0]["snapshot-id"],
      len(m["metadata-log"]), m["partition-specs"][0]["fields"][1]["transform"],
      m["last-column-id"], m["snapshots"][1]["manifest-list"].startswith("file:///"))
PY
check "metadata: v2, two snapshots chained, refs.main current, metadata-log, bucket[4]" \
	grep -qx "2 2 2 True True 2 bucket\[4\] 14 True" "$T/meta"
finish
