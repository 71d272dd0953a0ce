#!/usr/bin/env bash
# SigV4 request signing for a REST catalog on an AWS endpoint (lake.catalog.sigv4-enabled,
# signing-name, signing-region): the test catalog, started with --sigv4, checks every
# request's AWS Signature Version 4 (its own verifier, written from AWS's description)
# and answers 403 to an unsigned or wrongly signed one. floe signs with the keys of the
# environment, then with lake.s3's, through a two-level namespace (a path with %1F, which
# SigV4 encodes once more) and a warehouse name that needs encoding in /v1/config's
# query; every line lands once (DuckDB), the OpenAPI check refused nothing, and the
# secret is in no log. A floe with a wrong secret is refused and commits nothing.
source "$(dirname "$0")/lib.sh"
AK=AKIDFLOESIGV4TEST01
SK='sigv4/Secret+key-for-tests'
start_rest_catalog "$T/cat" --sigv4 "$AK:$SK:eu-west-3:glue"
mkdir -p "$T/logs"
for i in $(seq 1 120); do echo "signed line $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-sig, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge.site1, warehouse: "wh one/x",
             sigv4-enabled: true, signing-name: glue, signing-region: eu-west-3 }
YAML
# Keys from nowhere but what each step gives (no shared file, no IMDS).
KEYS=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE
	HOME="$T" AWS_SHARED_CREDENTIALS_FILE="$T/none" AWS_EC2_METADATA_DISABLED=true)

code=$(curl -s -o "$T/unsigned.json" -w '%{http_code}' "$REST_URL/v1/config")
check "the catalog refuses an unsigned request (403)" test "$code" = 403
now=$(date -u +%Y%m%dT%H%M%SZ)
empty=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
code=$(curl -s -o "$T/badsig.json" -w '%{http_code}' -H "x-amz-date: $now" -H "x-amz-content-sha256: $empty" \
	-H "Authorization: AWS4-HMAC-SHA256 Credential=$AK/${now%%T*}/eu-west-3/glue/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=$(printf '0%.0s' $(seq 1 64))" \
	"$REST_URL/v1/config")
check "... and a wrongly signed one (403, the signature does not match)" \
	bash -c "test '$code' = 403 && grep -q 'signature does not match' '$T/badsig.json'"

check "floe commits through the catalog, signing with the environment's keys" \
	"${KEYS[@]}" AWS_ACCESS_KEY_ID="$AK" AWS_SECRET_ACCESS_KEY="$SK" "$FLOE_BIN" run -c "$T/floe.yaml" --once \
	--log-level debug 2>"$T/run1.log"
sed -i 's#^lake:#lake:\n  s3: { access_key_id: "env:CAT_AK", secret_access_key: "file:'"$T"'/sk" }#' "$T/floe.yaml"
printf '%s\n' "$SK" >"$T/sk"
for i in $(seq 1 30); do echo "appended signed line $i"; done >>"$T/logs/a.log"
check "a second run appends, signing with lake.s3's keys" \
	"${KEYS[@]}" CAT_AK="$AK" "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn
check "every request of floe's was signed and accepted (only the two above refused)" \
	test "$(grep -c '"status":403' "$T/cat/requests.log")" = 2
check "the commits went to the two-level namespace's path" \
	test "$(grep -c '"method":"POST","path":"/v1/ws/namespaces/edge%1Fsite1/tables/logs","status":200' "$T/cat/requests.log")" = 2
check "/v1/config was asked with the warehouse, encoded" grep -q '"path":"/v1/config?warehouse=wh%20one%2Fx","status":200' "$T/cat/requests.log"
"${KEYS[@]}" CAT_AK="$AK" "$FLOE_BIN" inspect -c "$T/floe.yaml" >"$T/inspect" 2>"$T/inspect.err"
check "floe inspect -c reads the table through the signing catalog" grep -q '^snapshots 2$' "$T/inspect"
sed -n 's#^  file://\([^ ]*\)  records=.*#\1#p' "$T/inspect" >"$T/files"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
check "the secret is in no log" bash -c "! grep -qF '$SK' '$T/run1.log' '$T/cat/requests.log'"

# A wrong secret: every request is refused; nothing is committed, the log says why.
printf 'not-the-secret\n' >"$T/sk"
echo "one more line" >>"$T/logs/a.log"
"${KEYS[@]}" CAT_AK="$AK" timeout 30 "$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level warn 2>"$T/bad.log" || true
check "a wrong secret: the catalog refuses floe (403), and floe says so" \
	bash -c "grep -q 'answered 403 ' '$T/bad.log' && test \$(grep -c '\"status\":403' '$T/cat/requests.log') -gt 2"
check "... and commits nothing" \
	test "$(grep -c '"method":"POST","path":"/v1/ws/namespaces/edge%1Fsite1/tables/logs","status":200' "$T/cat/requests.log")" = 2
finish
