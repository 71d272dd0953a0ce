#!/usr/bin/env bash
# What floe's fsyncs cost (tests/crash/README.md, "Cost"): a round appends LINES lines to
# a tailed file and runs `floe run --once` (read, seal, spool, copy into the local
# warehouse, commit, checkpoint, spool clean-up), ROUNDS rounds per series. Prints, per
# round, the fsyncs of files and of directories counted in the recording
# (FLOE_FS_RECORD), and the commit latency (from the seal's log line to the commit's) and
# the whole run's wall time, as medians, for three series side by side:
#   fsync:      as shipped, on the disk under DIR;
#   no fsync:   every fsync site left out (FLOE_TEST_SKIP_FSYNC): the lower bound, what
#               eatmydata would give;
#   throttled:  as shipped, the rounds run in a cgroup (v1 blkio, or v2 io.max) whose
#               writes to DIR's disk are held to WIOPS per second: a slow SD card or eMMC.
#               Skipped, saying why, where the cgroup cannot be made (not root, no blkio
#               controller, DIR not on a block device the cgroup can name); and the
#               same without fsync ("thr., none").
# Prints figures only; asserts nothing.
# usage: tests/bench/power_fsync.sh   (FLOE_BIN: a -DFLOE_FS_RECORD=ON build's floe,
#        default build-rec/floe; DIR default /var/tmp; ROUNDS 7, LINES 2000, WIOPS 50)
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${FLOE_BIN:-build-rec/floe}
[ -x "$BIN" ] || { echo "build $BIN first: cmake -DFLOE_FS_RECORD=ON, target floe (or set FLOE_BIN)"; exit 2; }
ROUNDS=${ROUNDS:-7}
LINES=${LINES:-2000}
WIOPS=${WIOPS:-50}
W=$(mktemp -d "${DIR:-/var/tmp}/floe-bench-fsync.XXXXXX")
CG=""
cleanup() {
	if [ -n "$CG" ]; then
		echo $$ >"$(dirname "$CG")/cgroup.procs" 2>/dev/null || true
		rmdir "$CG" 2>/dev/null || true
	fi
	rm -rf "$W"
}
trap cleanup EXIT
ALL_SITES=temp-file,copy-file,file,publish-dir,mkdir-dir,rename-dir,dir

# series NAME [ENV...]: ROUNDS rounds on a fresh state; prints one line of figures.
series() {
	local name=$1 r i
	shift
	rm -rf "$W/s" && mkdir -p "$W/s/logs"
	cat >"$W/s/floe.yaml" <<YAML
agent: { id: bench, state_dir: $W/s/state }
inputs:
  - { type: tail, paths: ["$W/s/logs/*.log"], start_at: beginning }
lake: { warehouse: $W/s/wh }
YAML
	local lat=() wall=() files=() dirs=()
	for ((r = 0; r < ROUNDS; r++)); do
		seq $((r * LINES)) $((r * LINES + LINES - 1)) | sed 's/^/bench line /' >>"$W/s/logs/a.log"
		rm -f "$W/s/rec.log"
		local t0 t1
		t0=$(date +%s%N)
		env "$@" FLOE_FS_RECORD="$W/s/rec.log" "$BIN" run -c "$W/s/floe.yaml" --once --log-level info 2>"$W/s/run.log"
		t1=$(date +%s%N)
		wall+=($(((t1 - t0) / 1000000)))
		lat+=("$(python3 - "$W/s/run.log" <<'PY'
import re, sys, datetime
seal = commit = None
for line in open(sys.argv[1]):
    m = re.match(r"(\S+Z) ", line)
    if not m:
        continue
    t = datetime.datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
    if "sealed spool entry" in line and seal is None:
        seal = t
    if "committed snapshot" in line:
        commit = t
print(int((commit - seal).total_seconds() * 1000) if seal and commit else -1)
PY
)")
		files+=("$(grep -ac '^fsync ' "$W/s/rec.log" || true)")
		dirs+=("$(grep -ac '^fsyncdir ' "$W/s/rec.log" || true)")
	done
	printf '%-11s %9s %9s %14s %12s\n' "$name" "$(median "${files[@]:1}")" "$(median "${dirs[@]:1}")" \
		"$(median "${lat[@]:1}") ms" "$(median "${wall[@]:1}") ms"
}

median() { printf '%s\n' "$@" | sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

# throttle: a cgroup of this shell's own whose writes to W's disk are held to WIOPS a
# second (the rounds run in it; the shell leaves it and removes it on exit); a reason on
# stdout when it cannot be made.
throttle() {
	local dev majmin
	dev=$(df --output=source "$W" | tail -1)
	[ -b "$dev" ] || { echo "$W is not on a block device ($dev)"; return 1; }
	majmin=$(printf '%d:%d' "0x$(stat -L -c %t "$dev")" "0x$(stat -L -c %T "$dev")")
	if [ -w /sys/fs/cgroup/blkio ]; then
		CG=/sys/fs/cgroup/blkio/floe-bench-$$
		mkdir "$CG" && echo "$majmin $WIOPS" >"$CG/blkio.throttle.write_iops_device" &&
			echo $$ >"$CG/cgroup.procs" && return 0
		echo "the blkio cgroup $CG could not be set up"
		return 1
	elif [ -f /sys/fs/cgroup/cgroup.controllers ] && grep -qw io /sys/fs/cgroup/cgroup.controllers; then
		CG=/sys/fs/cgroup/floe-bench-$$
		mkdir "$CG" && echo "$majmin wiops=$WIOPS" >"$CG/io.max" && echo $$ >"$CG/cgroup.procs" && return 0
		echo "the io cgroup $CG could not be set up"
		return 1
	fi
	echo "no cgroup with a write throttle can be made here (cgroup v1 blkio or v2 io, as root)"
	return 1
}

echo "== one round: $LINES lines, run --once (seal, copy into the warehouse, commit, checkpoint); medians of rounds 2..$ROUNDS =="
echo "   state and warehouse under $W ($(df --output=source "$W" | tail -1))"
printf '%-11s %9s %9s %14s %12s\n' series "file fsync" "dir fsync" "seal->commit" "run --once"
series "fsync"
series "no fsync" FLOE_TEST_SKIP_FSYNC=$ALL_SITES
if throttle >"$W/why"; then
	series "throttled"
	series "thr., none" FLOE_TEST_SKIP_FSYNC=$ALL_SITES
	echo "   throttled: writes to the disk held to $WIOPS a second ($CG)"
else
	echo "throttled: skipped: $(cat "$W/why")"
fi
