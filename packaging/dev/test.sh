#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine: installs what is missing, then
# builds and tests floe six ways -- gcc (unit, fuzz replay and integration tests), clang
# (warnings as errors, unit tests), ASan+UBSan (everything again), FLOE_MINIMAL (unit
# tests), and the arm64 and armhf cross builds (unit tests under qemu-aarch64 and
# qemu-arm). Stops at the first failure.
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

# The minimal build (no S3 client, no PCRE2) compiles other sources (regex_none.c, no
# platform/s3) and refuses patterns and s3:// warehouses: its unit tests skip the cases
# that need them and check the refusals. Unit tests only, to keep the step short.
step "FLOE_MINIMAL build and unit tests"
cmake -S . -B "$OUT/minimal" -DCMAKE_BUILD_TYPE=Debug -DFLOE_MINIMAL=ON >/dev/null
cmake --build "$OUT/minimal" -j"$JOBS"
run_ctest "$OUT/minimal" -L unit

step "arm64 cross build and unit tests under qemu-aarch64 (tests that fork, and slow ones, excluded)"
cmake -S . -B "$OUT/arm64" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_TOOLCHAIN_FILE="$SRC/packaging/toolchain-aarch64-linux-gnu.cmake" >/dev/null
cmake --build "$OUT/arm64" -j"$JOBS"
run_ctest "$OUT/arm64" -L unit -LE "forks|slow"

# armhf is the 32-bit target: size_t and long are 32 bits (time_t too, on Debian 12).
step "armhf cross build and unit tests under qemu-arm (tests that fork, and slow ones, excluded)"
cmake -S . -B "$OUT/armhf" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	-DCMAKE_TOOLCHAIN_FILE="$SRC/packaging/toolchain-arm-linux-gnueabihf.cmake" >/dev/null
cmake --build "$OUT/armhf" -j"$JOBS"
run_ctest "$OUT/armhf" -L unit -LE "forks|slow"

step "all test builds passed"
