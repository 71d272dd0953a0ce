#!/usr/bin/env bash
# Remote signing: the test catalog's table config says s3.remote-signing-enabled, and the
# catalog alone holds RGW's keys (--sign-keys). floe, with no S3 key at all, ships its logs
# to the s3:// table: every S3 request (uploads, manifests, manifest lists, reads) is
# signed by POST .../tables/logs/sign and RGW takes it. A sign request the catalog refuses
# (403) fails the upload with an error that says so; the rows stay spooled, and the next
# run commits them. Every line once (DuckDB), no OpenAPI violation.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
R="$FLOE_SRC/tests/integration/rest"
s3_start 18840
start_rest_catalog "$T/cat" --warehouse "s3://$S3_BUCKET/sign" --sign-keys "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	--table-config "s3.remote-signing-enabled=true,s3.endpoint=$S3_ENDPOINT,client.region=$S3_REGION,s3.path-style-access=true"
mkdir -p "$T/logs"
for i in $(seq 1 100); do echo "signed line $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-sign, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge }
YAML
NOKEYS=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE
	HOME="$T" AWS_SHARED_CREDENTIALS_FILE="$T/none" AWS_EC2_METADATA_DISABLED=true "$FLOE_BIN")
SIGN='"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs/sign","status":200'
check "a device without any S3 key commits to the s3:// table, its requests signed by the catalog" \
	"${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn
check "... through the sign endpoint" grep -q "$SIGN" "$T/cat/requests.log"

# The catalog refuses to sign: the upload fails, the error says so, nothing is lost.
for i in $(seq 1 30); do echo "refused line $i"; done >>"$T/logs/a.log"
curl -sf -X POST "$REST_URL/_test/faults" -H 'Content-Type: application/json' -d '{"refuse_sign":1000}' >/dev/null
rc=0
timeout 120 "${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn 2>"$T/refused.log" || rc=$?
echo "# exit $rc: $(grep -m1 'did not sign' "$T/refused.log")"
check "a refused signature fails the run" test "$rc" != 0
check "... with an error that names the refusal" grep -q 'did not sign the S3 request PUT .*403' "$T/refused.log"
spooled() { ls "$T/state/spool/"*.parquet >/dev/null 2>&1; }
check "... and the rows stay spooled" spooled
curl -sf -X POST "$REST_URL/_test/faults" -H 'Content-Type: application/json' -d '{"refuse_sign":0}' >/dev/null
check "signed again, the next run commits them" "${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn

check "... and nothing stays in the spool" bash -c "! ls '$T/state/spool/'*.parquet >/dev/null 2>&1"
check "the live files are fetched from RGW" s3_live "$T/floe.yaml" sign/edge/logs "$T/s3" "$T/files"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
stop_pid "$REST_PID" || true

# A catalog whose signer is elsewhere (the deprecated s3.signer.endpoint setting, as
# catalogs written before the per-table endpoint give it; a relative one is resolved
# against the catalog's URI when no s3.signer.uri is given) and that gives
# a remote-signing-config: every sign request goes to that signer with the config's
# properties and headers, which it refuses without.
start_rest_catalog "$T/cat2" --warehouse "s3://$S3_BUCKET/sign2" --sign-keys "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
	--table-config "s3.remote-signing-enabled=true,s3.endpoint=$S3_ENDPOINT,client.region=$S3_REGION,s3.path-style-access=true,s3.signer.endpoint=signer/v1/aws/s3/sign" \
	--signer-path /signer/v1/aws/s3/sign --remote-signing-config '{"properties":{"tenant":"t-7"},"headers":{"X-Sign-Tenant":["t-7"]}}'
sed -e "s#$T/state#$T/state2#" -e "s#uri: \"[^\"]*\"#uri: \"$REST_URL\"#" "$T/floe.yaml" >"$T/floe2.yaml"
check "signed by the signer the table's config names, with the remote-signing-config, it commits" \
	"${NOKEYS[@]}" run -c "$T/floe2.yaml" --once --log-level info 2>"$T/run2.log"
check "... every sign request went there" \
	bash -c "grep -q '\"path\":\"/signer/v1/aws/s3/sign\",\"status\":200' '$T/cat2/requests.log' && ! grep -q '/tables/logs/sign' '$T/cat2/requests.log'"
check "... and floe said where it signs" grep -q "are signed at $REST_URL/signer/v1/aws/s3/sign" "$T/run2.log"
check "the live files are fetched from RGW" s3_live "$T/floe2.yaml" sign2/edge/logs "$T/s3b" "$T/files2"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files2" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat2/violations.log"
finish
