#!/usr/bin/env bash
# The test S3 server (packaging/dev/rgw): starts Ceph RGW on 127.0.0.1, checks the S3 calls
# floe needs with curl's SigV4 (including the If-None-Match: * create-only PUT), then checks
# that stop.sh leaves no process of the cluster behind.
# shellcheck source=tests/integration/lib.sh
source "$(dirname "$0")/lib.sh"

RGW="$FLOE_SRC/packaging/dev/rgw"
D="$T/rgw"
# A port per process so that parallel runs (ctest -j) do not meet.
PORT=${RGW_PORT:-$((17480 + $$ % 1000))}
trap '"$RGW/stop.sh" "$D" || true; cleanup' EXIT

# daemons_of DIR: PIDs of live (non-zombie) processes whose arguments mention DIR.
daemons_of() {
	local f p st
	# shellcheck disable=SC2013 # /proc paths have no blanks
	for f in $(grep -lzF -- "$1" /proc/[0-9]*/cmdline 2>/dev/null); do
		p=${f#/proc/}
		p=${p%/cmdline}
		[ "$p" != $$ ] || continue
		st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
		[ "${st:0:1}" != Z ] && echo "$p"
	done
}

t0=$(date +%s%N)
for try in 1 2 3 4 5; do # exit status 3: the port is taken, try the next one
	rc=0
	RGW_OWNER_PID=$$ "$RGW/start.sh" "$D" "$PORT" >"$T/start.out" || rc=$?
	if [ "$rc" != 3 ] || [ "$try" -ge 5 ]; then break; fi
	PORT=$((PORT + 1))
done
if [ "$rc" != 0 ]; then
	cat "$T/start.out"
	fail "start.sh (exit status $rc)"
	finish
	exit 1
fi
echo "# cold start $((($(date +%s%N) - t0) / 1000000)) ms"
check "start.sh writes DIR/env" test -s "$D/env"
set -a
# shellcheck disable=SC1091
. "$D/env"
set +a
check "env has every variable" test -n "$S3_ENDPOINT$S3_REGION" -a -n "$S3_BUCKET" -a \
	-n "$AWS_ACCESS_KEY_ID" -a -n "$AWS_SECRET_ACCESS_KEY"
check "endpoint is loopback on our port" test "$S3_ENDPOINT" = "http://127.0.0.1:$PORT"
check "DIR/pids lists mon, osd, radosgw and the watchdog" test "$(grep -c . "$D/pids")" -eq 4

B="$S3_ENDPOINT/$S3_BUCKET"
s3() { # s3 METHOD URL [curl args]: prints the HTTP status; body in $T/body, headers in $T/hdr
	local m=$1 u=$2
	shift 2
	curl -s --max-time 30 -o "$T/body" -D "$T/hdr" -w '%{http_code}' -X "$m" \
		--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:$AWS_SECRET_ACCESS_KEY" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" "$u" || echo "curl-failed"
}
is() { # is WANT GOT
	[ "$1" = "$2" ] || { echo "  wanted $1, got $2: $(head -c 300 "$T/body" 2>/dev/null)"; return 1; }
}

printf 'hello floe\n' >"$T/a"
printf 'second\n' >"$T/b"
check "PUT object" is 200 "$(s3 PUT "$B/dir/a.txt" -T "$T/a")"
check "GET object" is 200 "$(s3 GET "$B/dir/a.txt")"
check "GET returns the body" cmp -s "$T/a" "$T/body"
check "HEAD object" is 200 "$(s3 HEAD "$B/dir/a.txt" -I)"
check "HEAD gives the length" grep -qi '^content-length: 11' "$T/hdr"
check "HEAD missing object" is 404 "$(s3 HEAD "$B/dir/none" -I)"
# curl signs the query as written: parameters sorted by name, values SigV4-encoded.
check "ListObjectsV2" is 200 "$(s3 GET "$B?list-type=2&prefix=dir%2F")"
check "ListObjectsV2 lists the key" grep -q '<Key>dir/a.txt</Key>' "$T/body"
check "PUT If-None-Match: * on a new key" is 200 "$(s3 PUT "$B/dir/v1.json" -T "$T/a" -H 'If-None-Match: *')"
check "PUT If-None-Match: * again is 412" is 412 "$(s3 PUT "$B/dir/v1.json" -T "$T/b" -H 'If-None-Match: *')"
check "the 412 left the object unchanged" is 200 "$(s3 GET "$B/dir/v1.json")"
check "  same body" cmp -s "$T/a" "$T/body"
check "wrong secret is refused" is 403 "$(curl -s -o "$T/body" -w '%{http_code}' \
	--aws-sigv4 "aws:amz:$S3_REGION:s3" --user "$AWS_ACCESS_KEY_ID:wrong" \
	-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$B/dir/a.txt")"
check "s3cmd with DIR/s3cfg lists the bucket" \
	bash -c "s3cmd -c '$D/s3cfg' ls 's3://$S3_BUCKET/dir/' >'$T/s3cmd' 2>&1 && grep -q 'dir/a.txt' '$T/s3cmd'"
check "DELETE object" is 204 "$(s3 DELETE "$B/dir/a.txt")"
check "GET after DELETE is 404" is 404 "$(s3 GET "$B/dir/a.txt")"
s3 DELETE "$B/dir/v1.json" >/dev/null

check "start.sh again reuses the running server" \
	bash -c "'$RGW/start.sh' '$D' '$PORT' >'$T/again.out' 2>&1 && grep -q reusing '$T/again.out'"
check "  with the same keys" grep -qx "AWS_SECRET_ACCESS_KEY=$AWS_SECRET_ACCESS_KEY" "$T/again.out"

# Only loopback: no daemon of this cluster listens anywhere else.
listen_addrs() {
	local p inodes
	for p in $(daemons_of "$D"); do
		inodes=" $(find "/proc/$p/fd" -maxdepth 1 -lname 'socket:*' -printf '%l\n' 2>/dev/null |
			sed 's/^socket:\[\([0-9]*\)\]$/\1/' | tr '\n' ' ')"
		awk -v want="$inodes" '$4 == "0A" && index(want, " " $10 " ") { print $2 }' /proc/net/tcp /proc/net/tcp6
	done
}
loopback_only() {
	local a
	a=$(listen_addrs)
	echo "  listening (hex addr:port): $(tr '\n' ' ' <<<"$a")"
	[ -n "$a" ] && ! grep -qv '^0100007F:' <<<"$a"
}
check "daemons listen on 127.0.0.1 only" loopback_only
echo "# RSS (KiB): $(for p in $(daemons_of "$D"); do printf '%s=%s ' "$(cat "/proc/$p/comm")" \
	"$(awk '/^VmRSS/ { print $2 }' "/proc/$p/status")"; done)"

pids=$(cat "$D/pids")
t0=$(date +%s%N)
check "stop.sh" "$RGW/stop.sh" "$D"
echo "# stop $((($(date +%s%N) - t0) / 1000000)) ms"
check "stop.sh removed DIR" test ! -e "$D"
left=""
for p in $pids; do
	st=$(sed 's/^.*) //' "/proc/$p/stat" 2>/dev/null) || continue
	[ "${st:0:1}" = Z ] || left+=" $p"
done
check "no listed process is left" test -z "$left"
check "no process names DIR any more" test -z "$(daemons_of "$D")"
check "the S3 port is closed" bash -c "! (exec 3<>/dev/tcp/127.0.0.1/$PORT) 2>/dev/null"
finish
