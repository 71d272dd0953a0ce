#!/usr/bin/env bash
# Starts a throw-away S3 server for integration tests: Ceph RADOS Gateway (Debian 12) with one
# monitor and one memstore OSD, no mgr, no cephx, everything listening on 127.0.0.1 only and
# every file (config, data, logs, sockets, pid files) under DIR. Installs the packages if missing.
# Writes DIR/env (sourceable S3_* and AWS_* variables), DIR/pids and DIR/s3cfg (for s3cmd -c).
# Usage: start.sh DIR [PORT]     PORT: S3 port, default 17480. Stop with stop.sh DIR.
# Exit status: 0 ready, 1 failed (logs in DIR/log), 2 usage, 3 PORT already in use.
# Environment: RGW_MON_PORT (monitor port, default derived from PORT), RGW_TIMEOUT (seconds to
# wait for readiness, default 60), RGW_OWNER_PID (stop the server once that process is gone).
# A healthy server already running from DIR is reused as it is.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
PKGS=(ceph-mon ceph-osd radosgw ceph-common curl s3cmd) # install-deps.sh's rgwpk
BUCKET=floe-test
REGION=us-east-1
MARK=.floe-rgw # marks a directory as ours: stop.sh and start.sh only ever wipe such a directory

usage() { echo "usage: start.sh DIR [PORT]" >&2; exit 2; }
if [ $# -lt 1 ] || [ $# -gt 2 ] || [ -z "$1" ]; then usage; fi
DIR=$(realpath -m -- "$1")
PORT=${2:-17480}
if ! [[ $PORT =~ ^[0-9]+$ ]] || [ "$PORT" -lt 1024 ] || [ "$PORT" -gt 65535 ]; then usage; fi
TIMEOUT=${RGW_TIMEOUT:-60}
CONF=$DIR/ceph.conf
export CEPH_CONF=$CONF # so that no ceph tool falls back to /etc/ceph/ceph.conf

T0=$(date +%s%N)
say() { # progress with the time since start
	local n
	n=$(date +%s%N)
	printf 'rgw [%d.%02ds] %s\n' $(((n - T0) / 1000000000)) $(((n - T0) / 10000000 % 100)) "$*" >&2
}
die() {
	echo "rgw: $*" >&2
	exit 1
}

# --- packages --------------------------------------------------------------------------------
# Several test runs may start at once on a fresh machine: serialise apt with a lock, and look
# again once we hold it.
missing_pkgs() {
	local ok p
	ok=" $(dpkg-query -W -f='${Package} ${Status}\n' "${PKGS[@]}" 2>/dev/null |
		awk '$2 " " $3 " " $4 == "install ok installed" { printf "%s ", $1 }' || true)"
	for p in "${PKGS[@]}"; do
		[[ $ok == *" $p "* ]] || echo "$p"
	done
}
if [ -n "$(missing_pkgs)" ]; then
	(
		flock -w 900 9 || die "timed out waiting for another package installation"
		mapfile -t need < <(missing_pkgs)
		if [ ${#need[@]} -gt 0 ]; then
			say "installing ${need[*]}"
			# install-deps.sh's "rgw" set is these packages; it survives an index that
			# fails to download (a mirror mid-sync) and names what it could not install.
			"$HERE/../install-deps.sh" rgw >&2 || die "installing ${need[*]} failed"
			say "installed"
		fi
	) 9>"${TMPDIR:-/tmp}/floe-rgw-apt.lock"
fi

# --- helpers ---------------------------------------------------------------------------------
alive() { # alive PID: running and not a zombie (a killed daemon whose parent is gone stays a
	# zombie until PID 1 reaps it, and kill -0 still succeeds on it)
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null) || return 1
	[ -n "$st" ] && [ "${st:0:1}" != Z ]
}
ours() { # ours PID: alive and one of its arguments is DIR or under it (guards against PID reuse)
	alive "$1" && tr '\0' '\n' 2>/dev/null <"/proc/$1/cmdline" |
		awk -v d="$DIR" '$0 == d || index($0, d "/") == 1 { f = 1 } END { exit !f }'
}
port_open() { # port_open PORT: something accepts connections on 127.0.0.1:PORT
	(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}
sock_inodes() { # sock_inodes PID: inodes of the sockets PID holds
	find "/proc/$1/fd" -maxdepth 1 -lname 'socket:*' -printf '%l\n' 2>/dev/null |
		sed 's/^socket:\[\([0-9]*\)\]$/\1/'
}
listeners() { # listeners PID: "ADDR:PORT" (hex, as in /proc/net/tcp*) of every TCP socket PID listens on
	local inodes
	inodes=$(sock_inodes "$1" | tr '\n' ' ')
	[ -n "$inodes" ] || return 0
	awk -v want=" $inodes" '$4 == "0A" && index(want, " " $10 " ") { print $2 }' \
		/proc/net/tcp /proc/net/tcp6 2>/dev/null
}
listens_on() { # listens_on PID PORT: PID itself listens on 127.0.0.1:PORT
	listeners "$1" | grep -qx "0100007F:$(printf '%04X' "$2")"
}
left() { # seconds left before the readiness deadline
	echo $((DEADLINE - $(date +%s)))
}
s3() { # s3 METHOD PATH [curl args]: prints the HTTP status
	local m=$1 p=$2
	shift 2
	curl -s --max-time 20 -o /dev/null -w '%{http_code}' -X "$m" \
		--aws-sigv4 "aws:amz:$REGION:s3" --user "$AK:$SK" \
		-H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@" "http://127.0.0.1:$PORT$p" || true
}
healthy() { # the server recorded in DIR runs and answers
	local p n=0
	[ -f "$DIR/pids" ] && [ -f "$DIR/env" ] || return 1
	while read -r p; do
		[ -n "$p" ] || continue
		ours "$p" || return 1
		n=$((n + 1))
	done <"$DIR/pids"
	[ "$n" -ge 3 ] || return 1
	# shellcheck disable=SC1091
	PORT=$(. "$DIR/env" && echo "${S3_ENDPOINT##*:}")
	# shellcheck disable=SC1091
	AK=$(. "$DIR/env" && echo "$AWS_ACCESS_KEY_ID")
	# shellcheck disable=SC1091
	SK=$(. "$DIR/env" && echo "$AWS_SECRET_ACCESS_KEY")
	[ "$(s3 HEAD "/$BUCKET" -I)" = 200 ]
}

# --- reuse, or start from a clean DIR ----------------------------------------------------------
WANT_PORT=$PORT
if healthy; then
	[ "$PORT" = "$WANT_PORT" ] || echo "rgw: note: reusing the server from $DIR on port $PORT, not $WANT_PORT" >&2
	say "reusing the running server from $DIR"
	cat "$DIR/env"
	exit 0
fi
PORT=$WANT_PORT
if [ -e "$DIR" ] && [ -n "$(ls -A "$DIR" 2>/dev/null)" ]; then
	[ -f "$DIR/$MARK" ] || die "$DIR exists, is not empty and was not made by start.sh; refusing to touch it"
	say "$DIR holds a stopped or broken server: cleaning it up"
	KEEP=0 "$HERE/stop.sh" "$DIR" || die "could not stop the old server in $DIR"
fi

if port_open "$PORT"; then
	echo "rgw: port $PORT on 127.0.0.1 is already in use; pass another: start.sh DIR PORT" >&2
	exit 3
fi
if [ -n "${RGW_MON_PORT:-}" ]; then
	MON_PORT=$RGW_MON_PORT
	port_open "$MON_PORT" && die "monitor port $MON_PORT on 127.0.0.1 is already in use"
else
	# Derived from PORT so that parallel runs on different PORTs rarely meet; then the next free one.
	MON_PORT=$((13300 + PORT % 1000))
	while port_open "$MON_PORT" || [ "$MON_PORT" = "$PORT" ]; do
		MON_PORT=$((MON_PORT + 1))
		[ "$MON_PORT" -lt 14400 ] || die "no free monitor port in 13300..14399"
	done
fi

mkdir -p "$DIR"/{mon.a,osd.0,rgw.a,run,log,crash}
: >"$DIR/$MARK"
: >"$DIR/pids"
DEADLINE=$(($(date +%s) + TIMEOUT))

STARTED=0
on_exit() {
	[ "$STARTED" = 1 ] && return 0
	local f
	for f in "$DIR"/log/*.log "$DIR"/log/*.out; do
		[ -s "$f" ] && { echo "--- tail $f" >&2; tail -n 20 "$f" >&2; }
	done
	echo "rgw: start failed; stopping what was started (logs kept in $DIR/log)" >&2
	KEEP=1 "$HERE/stop.sh" "$DIR" || true
}
trap on_exit EXIT

# Admin sockets are Unix sockets: their path must fit in 107 bytes. Drop them if DIR is too long.
ASOK="$DIR/run/\$name.asok"
[ ${#DIR} -le 80 ] || ASOK=

FSID=$(cat /proc/sys/kernel/random/uuid)
cat >"$CONF" <<EOF
# Written by packaging/dev/rgw/start.sh: a throw-away test cluster, loopback only.
[global]
fsid = $FSID
mon host = v2:127.0.0.1:$MON_PORT
public addr = 127.0.0.1
cluster addr = 127.0.0.1
ms bind msgr1 = false
ms bind ipv6 = false
# No cephx: loopback only, and no keyrings to manage. S3 requests are still signed and checked.
auth cluster required = none
auth service required = none
auth client required = none
# radosgw defaults to 'secure' mode towards the monitor, which needs cephx; without this it
# retries "get_initial_auth_request returned -13" for 300 s.
ms mon client mode = crc secure
keyring = /dev/null
run dir = $DIR/run
crash dir = $DIR/crash
mon cluster log file = $DIR/log/cluster.log
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 1
osd pool default pgp num = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon osd down out interval = 0
# the test machine's disk may be fuller than the monitor's usual 5 % floor
mon data avail warn = 1
mon data avail crit = 1
# a map update every 0.1 s instead of 1 s: radosgw creates its pools in ~1 s instead of ~10 s
paxos propose interval = 0.1
paxos min wait = 0.01

[mon]
mon data = $DIR/mon.\$id
log file = $DIR/log/\$name.log
pid file = $DIR/run/\$name.pid
admin socket = $ASOK

[osd]
osd data = $DIR/osd.\$id
# memstore keeps objects in the OSD's RAM (capacity below); never restart a memstore OSD
osd objectstore = memstore
memstore device bytes = 2147483648
log file = $DIR/log/\$name.log
pid file = $DIR/run/\$name.pid
admin socket = $ASOK

[client.rgw.a]
rgw data = $DIR/rgw.a
rgw frontends = beast endpoint=127.0.0.1:$PORT
rgw thread pool size = 64
rgw enable usage log = false
log file = $DIR/log/\$name.log
pid file = $DIR/run/\$name.pid
admin socket = $ASOK
EOF

spawn() { # spawn NAME COMMAND...: start a daemon in the foreground mode as a background child
	# Its stdio goes to a file: an inherited pipe would keep ctest (or $(...)) waiting for it.
	local name=$1
	shift
	"$@" </dev/null >>"$DIR/log/$name.out" 2>&1 &
	LAST_PID=$!
	echo "$LAST_PID" >>"$DIR/pids"
}
need_alive() { # need_alive NAME PID
	alive "$2" || die "$1 exited during start-up (see $DIR/log)"
}
deadline() { # deadline WHAT: give up once RGW_TIMEOUT has passed
	[ "$(left)" -gt 0 ] || die "gave up after ${TIMEOUT}s waiting for $1 (see $DIR/log)"
}
ceph_() { timeout 20 ceph -c "$CONF" --connect-timeout 10 "$@"; }

say "starting in $DIR (S3 port $PORT, monitor port $MON_PORT)"

# --- monitor ---------------------------------------------------------------------------------
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_PORT]" "$DIR/monmap" \
	>>"$DIR/log/setup.out" 2>&1 || die "monmaptool failed"
ceph-mon -c "$CONF" -i a --mkfs --monmap "$DIR/monmap" >>"$DIR/log/setup.out" 2>&1 ||
	die "ceph-mon --mkfs failed"
spawn mon.a ceph-mon -c "$CONF" -i a -f
PID_mon_a=$LAST_PID
# Listening is enough: the next command waits for the monitor to answer by itself.
until listens_on "$PID_mon_a" "$MON_PORT"; do
	need_alive mon.a "$PID_mon_a"
	deadline "mon.a to listen on 127.0.0.1:$MON_PORT"
	sleep 0.05
done
say "mon.a listening (pid $PID_mon_a)"

# --- OSD ---------------------------------------------------------------------------------------
OSD_UUID=$(cat /proc/sys/kernel/random/uuid)
OSD_ID=$(ceph_ osd new "$OSD_UUID" 2>>"$DIR/log/setup.out") || die "ceph osd new failed"
[ "$OSD_ID" = 0 ] || die "unexpected OSD id '$OSD_ID'"
ceph-osd -c "$CONF" -i 0 --mkfs --osd-uuid "$OSD_UUID" >>"$DIR/log/setup.out" 2>&1 ||
	die "ceph-osd --mkfs failed"
spawn osd.0 ceph-osd -c "$CONF" -i 0 -f
PID_osd_0=$LAST_PID
# radosgw started before the OSD is up creates a pool with no OSD, and its first request then
# waits ~5 s for a resend. The OSD logs its boot; ask the monitor now and then in case it didn't.
i=0
until grep -q 'state: booting -> active' "$DIR/log/osd.0.log" 2>/dev/null ||
	{ [ $((++i % 20)) = 0 ] && ceph_ osd dump 2>/dev/null | grep -q '^osd\.0 up'; }; do
	need_alive mon.a "$PID_mon_a"
	need_alive osd.0 "$PID_osd_0"
	deadline "osd.0 to boot"
	sleep 0.05
done
say "osd.0 up (pid $PID_osd_0)"

# --- radosgw ---------------------------------------------------------------------------------------
# It creates its pools on the first start, then serves.
spawn rgw.a radosgw -c "$CONF" -n client.rgw.a -f
PID_rgw_a=$LAST_PID
# The port must be served by our radosgw, not by something that grabbed it meanwhile.
until listens_on "$PID_rgw_a" "$PORT" &&
	[ "$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/" || true)" = 200 ]; do
	need_alive mon.a "$PID_mon_a"
	need_alive osd.0 "$PID_osd_0"
	need_alive rgw.a "$PID_rgw_a"
	deadline "radosgw to serve on 127.0.0.1:$PORT"
	sleep 0.05
done
say "radosgw serving on 127.0.0.1:$PORT (pid $PID_rgw_a)"

# Nothing may listen beyond loopback (the OSD picks its own ports in 6800..7300).
for p in "$PID_mon_a" "$PID_osd_0" "$PID_rgw_a"; do
	bad=$(listeners "$p" | grep -v '^0100007F:' || true)
	[ -z "$bad" ] || die "pid $p listens beyond 127.0.0.1: $bad"
done

# --- S3 user, bucket, conditional-PUT probe -----------------------------------------------------
AK=$(od -An -tx1 -N10 /dev/urandom | tr -d ' \n' | tr a-f A-F)
SK=$(od -An -tx1 -N20 /dev/urandom | tr -d ' \n')
timeout 30 radosgw-admin -c "$CONF" user create --uid=floe --display-name="floe tests" \
	--access-key="$AK" --secret-key="$SK" >>"$DIR/log/setup.out" 2>&1 ||
	die "radosgw-admin user create failed"
code=$(s3 PUT "/$BUCKET")
[ "$code" = 200 ] || die "creating bucket $BUCKET: HTTP $code"
probe="/$BUCKET/.probe-$(od -An -tx1 -N6 /dev/urandom | tr -d ' \n')"
first=$(s3 PUT "$probe" --data-binary probe -H 'If-None-Match: *')
second=$(s3 PUT "$probe" --data-binary probe -H 'If-None-Match: *')
gone=$(s3 DELETE "$probe")
[ "$first $second $gone" = "200 412 204" ] ||
	die "If-None-Match: * probe gave $first/$second (delete $gone), wanted 200/412 (204)"
say "user, bucket $BUCKET and If-None-Match probe ok"

cat >"$DIR/s3cfg" <<EOF
[default]
access_key = $AK
secret_key = $SK
host_base = 127.0.0.1:$PORT
host_bucket = 127.0.0.1:$PORT
bucket_location = $REGION
use_https = False
signature_v2 = False
EOF
cat >"$DIR/env.tmp" <<EOF
S3_ENDPOINT=http://127.0.0.1:$PORT
S3_REGION=$REGION
S3_BUCKET=$BUCKET
AWS_ACCESS_KEY_ID=$AK
AWS_SECRET_ACCESS_KEY=$SK
EOF
mv "$DIR/env.tmp" "$DIR/env"

# Optional watchdog: stops the server if its owner dies without calling stop.sh (e.g. a test
# killed by ctest's timeout). stop.sh stops it first, being the last PID listed.
if [ -n "${RGW_OWNER_PID:-}" ]; then
	bash -c 'while kill -0 "$1" 2>/dev/null; do sleep 1; done; exec "$2" "$3"' floe-rgw-watchdog \
		"$RGW_OWNER_PID" "$HERE/stop.sh" "$DIR" </dev/null >>"$DIR/log/watchdog.out" 2>&1 &
	echo $! >>"$DIR/pids"
fi

STARTED=1
say "ready"
cat "$DIR/env"
