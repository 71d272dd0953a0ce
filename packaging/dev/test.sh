#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is missing, then
# builds and tests floe six ways -- gcc (unit, fuzz replay and integration tests), clang
# (warnings as errors, unit tests), ASan+UBSan (everything again), without the optional
# libraries (unit tests), and the arm64 and armhf cross builds (unit tests under
# qemu-aarch64 and qemu-arm). Stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=$PWD
OUT=${FLOE_TEST_BUILD:-$SRC/build-test}
JOBS=$(nproc)

step() { printf '\n=== %s ===\n' "$*"; }

step "dependencies"
packaging/dev/install-deps.sh test
(cd tests/integration/reader && npm ci --no-audit --no-fund --loglevel=error)

run_ctest() { # dir [ctest args]
	local dir=$1
	shift
	ctest --test-dir "$dir" --output-on-failure -j"$JOBS" "$@"
}

step "gcc build and all tests"
cmake -S . -B "$OUT/gcc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=gcc >/dev/null
cmake --build "$OUT/gcc" -j"$JOBS"
run_ctest "$OUT/gcc"

step "clang build and unit tests"
cmake -S . -B "$OUT/clang" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang >/dev/null
cmake --build "$OUT/clang" -j"$JOBS"
run_ctest "$OUT/clang" -L unit

step "ASan+UBSan build and all tests"
cmake -S . -B "$OUT/asan" -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang -DFLOE_SANITIZE=ON >/dev/null
cmake --build "$OUT/asan" -j"$JOBS"
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	run_ctest "$OUT/asan"

# The build without the optional libraries (no S3 client, no PCRE2, no journal) compiles
# other sources (regex_none.c, journal_none.c, no platform/s3) and refuses patterns,
# s3:// warehouses and journal inputs: its unit tests skip the cases that need them and
# check the refusals. Unit tests only, to keep the step short.
step "build without S3, PCRE2 and the journal, and unit tests"
cmake -S . -B "$OUT/minimal" -DCMAKE_BUILD_TYPE=Debug -DFLOE_WITH_S3=OFF -DFLOE_WITH_PCRE2=OFF \
	-DFLOE_JOURNAL=OFF >/dev/null
cmake --build "$OUT/minimal" -j"$JOBS"
run_ctest "$OUT/minimal" -L unit

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
	cmake -S . -B "$OUT/$arch" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
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
