#!/usr/bin/env bash
# A device whose clock is an hour ahead (an RTC that runs fast, a clock restored from its
# last saved time) signing its REST catalog's requests with SigV4: the catalog (the test
# catalog with --sigv4, which refuses an x-amz-date more than 15 minutes off, as AWS
# does) answered every request 403, and nothing was ever committed. floe now learns the
# catalog's clock from its answers' Date header: the first refusal is signed again on the
# catalog's clock, the offset is said once, and every line lands. The clock is shifted by
# a preloaded shim (tests/clock_shim.c), the catalog's is the machine's.
source "$(dirname "$0")/lib.sh"
clock_shim "$T/offset"
AK=AKIDFLOESIGV4CLOCK1
SK='sigv4/Secret+key-for-the-clock-test'
start_rest_catalog "$T/cat" --sigv4 "$AK:$SK:eu-west-3:glue"
mkdir -p "$T/logs"
for i in $(seq 1 50); do echo "line $i from a device an hour ahead"; done >"$T/logs/a.log"
cat >"$T/floe.yaml" <<YAML
agent: { id: edge-ahead, state_dir: $T/state }
inputs:
  - { type: tail, paths: ["$T/logs/*.log"], start_at: beginning }
lake:
  catalog: { type: rest, uri: "$REST_URL", namespace: edge, warehouse: wh,
             sigv4-enabled: true, signing-name: glue, signing-region: eu-west-3 }
YAML
echo 3600 >"$T/offset"
check "floe with its clock an hour ahead commits through the signing catalog" \
	"${CLOCK_SHIFTED[@]}" env -u AWS_PROFILE HOME="$T" AWS_SHARED_CREDENTIALS_FILE="$T/none" \
	AWS_EC2_METADATA_DISABLED=true AWS_ACCESS_KEY_ID="$AK" AWS_SECRET_ACCESS_KEY="$SK" \
	"$FLOE_BIN" run -c "$T/floe.yaml" --once --log-level info >"$T/run.log" 2>&1
check "the offset is said once" test "$(grep -c "this device's clock is 36[0-9][0-9] s ahead of the catalog's" "$T/run.log")" = 1
check "one request was refused for its time, none after it" \
	test "$(grep -c '"status":403' "$T/cat/requests.log")" = 1
check "every line is in the table" grep -q "50 rows committed" "$T/run.log"
check "no request or answer broke the OpenAPI document" test ! -s "$T/cat/violations.log"
finish
