#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is missing, then
# builds and tests floe eight ways -- gcc (unit, fuzz replay and integration tests), clang
# (warnings as errors, unit tests), ASan+UBSan (everything again), ThreadSanitizer (the
# tests that start threads), without the optional libraries (unit tests), the recording
# build (power-cut crash states), and the arm64
# and armhf cross builds (unit tests under qemu-aarch64 and qemu-arm). Stops at the first
# failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
OUT=${FLOE_TEST_BUILD:-$SRC/build-test}
JOBS=$(nproc)

# Each step's heading says when it began, in seconds since the suite did (a CI log then
# shows where the time went; the suite is to stay under 40 minutes on two cores).
step() { printf '\n=== %s (at %d s) ===\n' "$*" "$SECONDS"; }

step "dependencies"
packaging/dev/install-deps.sh test
# npm ci removes node_modules before it installs: a second run of this script would pull
# the readers from under tests still running (a long power-cut run beside it counted the
# reader's absence as faulty states). The packages are installed only when the lockfile
# or node changed since the last install, which the stamp written after it records.
npm_ci() { # dir
	local stamp
	stamp="$(sha256sum "$1/package-lock.json" | cut -d' ' -f1) $(node --version)"
	[ "$(cat "$1/node_modules/.floe-installed" 2>/dev/null)" != "$stamp" ] || return 0
	(cd "$1" && npm ci --no-audit --no-fund --loglevel=error)
	echo "$stamp" >"$1/node_modules/.floe-installed"
}
npm_ci tests/integration/reader
npm_ci tests/integration/rest

# Four ctest slots per core: a test that keeps a core busy takes four (tests/CMakeLists.txt),
# one that mostly waits on timers and servers takes one.
run_ctest() { # dir [ctest args]
	local dir=$1
	shift
	ctest --test-dir "$dir" --output-on-failure -j"$((4 * JOBS))" "$@"
}

step "gcc build and all tests"
cmake -S . -B "$OUT/gcc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build "$OUT/gcc" -j"$JOBS"
# The package and cross builds first, by themselves, then the rest. Beside eight other
# tests their compilers got a fraction of the cores, they ran for twelve minutes instead
# of four, and the tests around them ran longer too (their agents', stores' and readers'
# work grows with the time they wait): the step took longer than with two slots a core.
run_ctest "$OUT/gcc" -L package
# The second ctest writes its own LastTest.log: keep the package builds' (the sizes they
# print are only there).
L=$OUT/gcc/Testing/Temporary
[ ! -f "$L/LastTest.log" ] || cp "$L/LastTest.log" "$L/LastTest-package.log"
run_ctest "$OUT/gcc" -LE package

step "clang build and unit tests"
cmake -S . -B "$OUT/clang" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build "$OUT/clang" -j"$JOBS"
run_ctest "$OUT/clang" -L unit

step "ASan+UBSan build and all tests"
cmake -S . -B "$OUT/asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DFLOE_SANITIZE=ON >/dev/null
cmake --build "$OUT/asan" -j"$JOBS"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_ctest "$OUT/asan"

# ThreadSanitizer, a build of its own (it cannot share a process with ASan), with only
# what it runs: the unit tests that start threads or fork (label forks; a test with one
# thread has no race to find) and the integration tests whose agent runs several (syslog
# receiver, status listener, committer and hand-off, compression workers, journal, reload,
# S3 uploads and stops). Each report is written to $OUT/tsan/reports and fails the step, also where
# the test's own checks passed (a race in a process the test kills, say).
TSAN_INTEGRATION='^integration/test_(syslog|syslog_counts|syslog_senders|listen_taken|http_status|reload|reload_agg|journal|aggregate|concurrent|stop|s3_stop|s3_roundtrip|s3_slow_store|s3_metrics|s3_offline)$'
step "ThreadSanitizer build, the threaded unit tests and integration tests"
cmake -S . -B "$OUT/tsan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DFLOE_TSAN=ON >/dev/null
# shellcheck disable=SC2046 # one target per word
cmake --build "$OUT/tsan" -j"$JOBS" --target floe \
	$(ctest --test-dir "$OUT/tsan" -N -L forks | sed -n 's|.*unit/\(test_[a-z0-9_]*\)$|\1|p')
rm -rf "$OUT/tsan/reports"
mkdir -p "$OUT/tsan/reports"
tsan_rc=0
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 log_path=$OUT/tsan/reports/tsan"
run_ctest "$OUT/tsan" -L forks || tsan_rc=$?
# A ThreadSanitizer agent keeps its core busy: one of these per core.
ctest --test-dir "$OUT/tsan" --output-on-failure -j"$JOBS" -R "$TSAN_INTEGRATION" || tsan_rc=$?
unset TSAN_OPTIONS
if compgen -G "$OUT/tsan/reports/tsan.*" >/dev/null; then
	printf '\n*** ThreadSanitizer reports (%s) ***\n' "$OUT/tsan/reports"
	cat "$OUT/tsan/reports"/tsan.*
	exit 1
fi
[ "$tsan_rc" = 0 ] || exit "$tsan_rc"

# The build without the optional libraries (no S3 client, no PCRE2, no journal) compiles
# other sources (regex_none.c, journal_none.c, no platform/s3) and refuses patterns,
# s3:// warehouses and journal inputs: its unit tests skip the cases that need them and
# check the refusals. Unit tests, and test_minimal_build (the binary links none of them and
# runs --once), to keep the step short.
step "build without S3, PCRE2 and the journal, and unit tests"
cmake -S . -B "$OUT/minimal" -UFLOE_MINIMAL -DCMAKE_BUILD_TYPE=Debug -DFLOE_WITH_S3=OFF -DFLOE_WITH_PCRE2=OFF \
	-DFLOE_JOURNAL=OFF >/dev/null
cmake --build "$OUT/minimal" -j"$JOBS"
run_ctest "$OUT/minimal" -L '^(unit|minimal)$'

# The power-cut tests (tests/crash/README.md): a build that records every durable file
# operation (FLOE_FS_RECORD), the crash-state generator, and the cycles replayed from it.
# The short default here is the worst state of every point of the tail, aggregation and
# syslog cycles, and of a sample of the others' points (FLOE_CRASH_VARIANTS=0; each
# test's FLOE_CRASH_STRIDE); set FLOE_CRASH_STRIDE=1 FLOE_CRASH_VARIANTS=20 (and
# FLOE_CRASH_DIR_VARIANTS) for the long run.
step "power-cut crash states: the recording build, the generator and every cycle"
cmake -S . -B "$OUT/record" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc \
	-DFLOE_FS_RECORD=ON >/dev/null
cmake --build "$OUT/record" -j"$JOBS" --target floe crashgen test_fs_record
FLOE_CRASH_VARIANTS=${FLOE_CRASH_VARIANTS:-0} run_ctest "$OUT/record" -R '^(crash/|unit/test_fs_record$)'
# How many states were explored, per cycle (ctest shows a passing test's output only here).
grep -h "distinct states checked" "$OUT/record/Testing/Temporary/LastTest.log" || true

# cross_step ARCH TOOLCHAIN QEMU: the cross build for ARCH and its unit tests under
# qemu-user (tests that fork, and slow ones, excluded). Skipped, loudly, when the
# package archive could not give ARCH's libraries (install-deps.sh said why above).
skipped=()
cross_step() {
	local arch=$1 why
	step "$arch cross build and unit tests under $3 (tests that fork, and slow ones, excluded)"
	if ! why=$(packaging/dev/install-deps.sh cross-ready "$arch" 2>&1); then
		printf '\n*** SKIPPED: the %s cross build: %s ***\n' "$arch" "$why"
		skipped+=("$arch cross build ($why)")
		return 0
	fi
	# Without link-time optimisation: the unit tests link without it anyway, and it doubled
	# the step's build (floe and the benchmarks, which nothing runs here, re-optimised the
	# whole agent at each link). test_cross_build builds floe for both architectures as
	# it ships (their packages).
	cmake -S . -B "$OUT/$arch" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOE_LTO=OFF \
		-DCMAKE_TOOLCHAIN_FILE="$SRC/packaging/$2" >/dev/null
	cmake --build "$OUT/$arch" -j"$JOBS"
	run_ctest "$OUT/$arch" -L unit -LE "forks|slow"
}
cross_step arm64 toolchain-aarch64-linux-gnu.cmake qemu-aarch64
# armhf is the 32-bit target: size_t and long are 32 bits (time_t too, on Debian 12).
cross_step armhf toolchain-arm-linux-gnueabihf.cmake qemu-arm

if [ ${#skipped[@]} -gt 0 ]; then
	step "all test builds passed, EXCEPT THESE, SKIPPED"
	printf '  SKIPPED: %s\n' "${skipped[@]}"
	exit 0
fi
step "all test builds passed"
