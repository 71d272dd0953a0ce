#!/usr/bin/env bash
# Storage credentials vended by a REST catalog: a device configured with only the
# catalog's URI and OAuth2 client credentials (no lake.s3, no S3 keys in its environment)
# ships its logs to an s3:// table in Ceph RGW with the keys, endpoint and region the
# test catalog vends (X-Iceberg-Access-Delegation: vended-credentials). Then, with floe
# running, the vended keys expire and rotate: the catalog vends a new key and the old one
# is removed from RGW; floe takes the new one by reloading the table before its next
# commit. Every line lands exactly once (DuckDB over the live files), and the catalog's
# OpenAPI check refused nothing.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/s3lib.sh"
R="$FLOE_SRC/tests/integration/rest"
s3_start 18720
AK1=$AWS_ACCESS_KEY_ID SK1=$AWS_SECRET_ACCESS_KEY
now_ms() { echo $(($(date +%s) * 1000)); }
vend() { # AK SK EXPIRES-AT-MS: the storage configuration the catalog vends
	echo "s3.access-key-id=$1,s3.secret-access-key=$2,s3.endpoint=$S3_ENDPOINT,client.region=$S3_REGION,s3.path-style-access=true,s3.session-token-expires-at-ms=$3"
}
start_rest_catalog "$T/cat" --warehouse "s3://$S3_BUCKET/vend" --client-id dev1 --client-secret Vend-S3cret \
	--vend "$(vend "$AK1" "$SK1" $(($(now_ms) + 3600000)))"
printf 'dev1:Vend-S3cret\n' >"$T/cred"
mkdir -p "$T/logs"
for i in $(seq 1 100); do echo "vended line $i"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-vend, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
tables:
  logs: { commit_interval: 1s }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge, credential: "file:$T/cred" }
YAML
# floe without any S3 key of its own: no environment keys, no shared file, no IMDS.
# (env execs floe: the PID of a background one is floe's, for stop_pid.)
NOKEYS=(env -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN -u AWS_PROFILE
	HOME="$T" AWS_SHARED_CREDENTIALS_FILE="$T/none" AWS_EC2_METADATA_DISABLED=true "$FLOE_BIN")
check "a device with only the catalog's URI and credential commits to the s3:// table" \
	"${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn
check "its requests asked for vended credentials" \
	grep -q '"path":"/v1/ws/namespaces/edge/tables/logs","status":200,.*"delegation":"vended-credentials"' "$T/cat/requests.log"

# The keys vended from now on expire within a minute: each commit reloads the table whole
# (no 304), which brings the keys of the moment, before it uploads.
vend_json() { python3 -c 'import json,sys; print(json.dumps(dict(kv.split("=",1) for kv in sys.argv[1].split(","))))' "$1"; }
curl -sf -X POST "$REST_URL/_test/vend" -H 'Content-Type: application/json' \
	-d "$(vend_json "$(vend "$AK1" "$SK1" $(($(now_ms) + 20000)))")" >/dev/null
"${NOKEYS[@]}" run -c "$T/floe.yaml" --log-level info 2>"$T/run.log" &
pid=$!
PIDS+=("$pid")
commits() { grep -c '"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":200' "$T/cat/requests.log"; }
# Rows the running agent committed (its log), so that the rotation below comes only once
# every line before it is in: a commit still under way with the old key when that key is
# removed would be refused (403) by the test's own doing, not floe's.
rows_reach() { [ "$(sed -n 's/.*table: committed snapshot .* \([0-9]*\) rows) as .*/\1/p' "$T/run.log" | awk '{s += $1} END {print s + 0}')" -ge "$1" ]; }
seq -f "before rotation %g" 1 50 >>"$T/logs/a.log"
check "lines appended while running land" wait_for 60 rows_reach 50

# Rotation: a new key for the same user, vended; the old one removed from RGW.
AK2=$(od -An -tx1 -N10 /dev/urandom | tr -d ' \n' | tr a-f A-F)
SK2=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
radosgw-admin -c "$T/rgw/ceph.conf" key create --uid=floe --key-type=s3 --access-key="$AK2" --secret-key="$SK2" >/dev/null 2>&1
curl -sf -X POST "$REST_URL/_test/vend" -H 'Content-Type: application/json' \
	-d "$(vend_json "$(vend "$AK2" "$SK2" $(($(now_ms) + 20000)))")" >/dev/null
check "the old key is removed from RGW" \
	bash -c "radosgw-admin -c '$T/rgw/ceph.conf' key rm --uid=floe --key-type=s3 --access-key='$AK1' >/dev/null 2>&1"
seq -f "after rotation %g" 1 50 >>"$T/logs/a.log"
check "lines appended after the rotation land, with the new key" wait_for 60 rows_reach 100
stop_pid "$pid" || true
# S3 refusals as floe logs them (s3: ...: HTTP 403 CODE), not a bare 403, which a random
# snapshot id or a file's uuid in the log holds now and then.
check "the agent never failed a commit for its credentials" \
	bash -c "! grep -qE 'InvalidAccessKeyId|ExpiredToken|SignatureDoesNotMatch|AccessDenied|HTTP 403' '$T/run.log'"
# The catalog lists GET .../credentials in /v1/config: expiring keys are renewed there
# before each commit, the commits after the rotation included.
CREDS='"method":"GET","path":"/v1/ws/namespaces/edge/tables/logs/credentials","status":200'
check "expiring keys were renewed through the advertised /credentials endpoint" grep -q "$CREDS" "$T/cat/requests.log"
COMMIT='"method":"POST","path":"/v1/ws/namespaces/edge/tables/logs","status":200'
renewed_before_commits() { # every commit from the first renewal on follows a renewal
	awk -v c="$CREDS" -v m="$COMMIT" 'index($0, c) { on = 1; fresh = 1 }
		index($0, m) && on { n++; if (!fresh) bad = 1; fresh = 0 } END { exit !(n >= 2 && !bad) }' "$1"
}
check "... one before each commit from then on" renewed_before_commits "$T/cat/requests.log"
LOAD304='"path":"/v1/ws/namespaces/edge/tables/logs","status":304'

# Read back with the new key (the old one is gone).
export AWS_ACCESS_KEY_ID=$AK2 AWS_SECRET_ACCESS_KEY=$SK2
sed -i "s/^access_key = .*/access_key = $AK2/; s/^secret_key = .*/secret_key = $SK2/" "$S3CFG"
check "the live files are fetched from RGW" s3_live "$T/floe.yaml" vend/edge/logs "$T/s3" "$T/files"
check "DuckDB reads every line back exactly once" node "$READER/check_rows.js" "$T/files" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"

# A credential that holds only the keys: the endpoint and the addressing come from the
# table's config, the region from the catalog's /v1/config, as the spec lets a catalog
# split them. (Bounded: a floe that sent the keys to AWS's default endpoint instead would
# wait that store out.)
# The keys expire within the renewal margin, and this catalog does not list GET
# .../credentials: each load before a commit takes the table whole, with new keys.
start_rest_catalog "$T/cat2" --warehouse "s3://$S3_BUCKET/vend2" --client-id dev1 --client-secret Vend-S3cret \
	--omit-endpoint 'GET /v1/{prefix}/namespaces/{namespace}/tables/{table}/credentials' \
	--vend "s3.access-key-id=$AK2,s3.secret-access-key=$SK2,s3.session-token-expires-at-ms=$(($(now_ms) + 20000))" \
	--table-config "s3.endpoint=$S3_ENDPOINT,s3.path-style-access=true" --config-default "client.region=$S3_REGION"
sed -i "s#uri: \"[^\"]*\"#uri: \"$REST_URL\"#; s#state_dir: .*#state_dir: $T/state2 }#" "$T/floe.yaml"
check "a credential without an endpoint: the table's config and the catalog's give it" \
	timeout 120 "${NOKEYS[@]}" run -c "$T/floe.yaml" --once --log-level warn
check "the second table's live files are fetched from RGW" s3_live "$T/floe.yaml" vend2/edge/logs "$T/s3b" "$T/files2"
check "DuckDB reads every line of it once" node "$READER/check_rows.js" "$T/files2" "$T/logs/a.log"
check "no request or answer broke the OpenAPI document (second catalog)" test ! -s "$T/cat2/violations.log"
whole_loads() { # the table loaded whole at least twice, never from its ETag, no /credentials
	! grep -q '/credentials' "$1" && ! grep -qF "$LOAD304" "$1" &&
		[ "$(grep -cF '"method":"GET","path":"/v1/ws/namespaces/edge/tables/logs","status":200' "$1")" -ge 2 ]
}
check "a catalog without the /credentials endpoint is not asked it: the table is loaded whole" whole_loads "$T/cat2/requests.log"
finish
