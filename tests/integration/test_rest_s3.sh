#!/usr/bin/env bash
# A REST catalog whose tables live on S3 (the test catalog with an s3:// warehouse, data in
# Ceph RGW): floe creates the table through the catalog, writes its data files, manifests
# and manifest lists at the s3:// location the catalog gave it (with lake.s3's endpoint
# and the environment's keys), commits twice; every line is in the table exactly once
# (DuckDB, over the live files `floe inspect -c` lists), iceberg-js sees both snapshots,
# and the catalog's OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
R="$FLOE_SRC/tests/integration/rest"
s3_start 18640
start_rest_catalog "$T/cat" --warehouse "s3://$S3_BUCKET/rest"
mkdir -p "$T/logs"
for i in $(seq 1 200); do echo "s3 line $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-s3, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
  s3: { endpoint: "http://127.0.0.1:$S3PORT", region: $S3_REGION, path_style: true }
YAML
check "floe check accepts lake.s3 with a REST catalog" "$FLOE_BIN" check -c "$T/floe.yaml"
check "a first run commits to the s3:// table" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
for i in $(seq 1 30); do echo "s3 appended $i"; done >>"$T/logs/a.log"
check "a second run appends" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
check "the live files are fetched from RGW" s3_live "$T/floe.yaml" rest/edge/logs "$T/s3" "$T/files"
check "2 snapshots" grep -q '^snapshots 2$' "$T/files.inspect"
check "the table is at the catalog's s3:// location" grep -q "^table s3://$S3_BUCKET/rest/edge/logs\$" "$T/files.inspect"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "iceberg-js sees floe's 2 snapshots" \
	node "$R/check_floe.mjs" "$REST_URL" none none edge logs 2 "$(wc -l <"$T/logs/a.log")"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
