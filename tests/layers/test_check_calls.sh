#!/usr/bin/env bash
# check_calls.sh on objects made here: it fails on a cycle between two files and names
# them by their paths, and it keys on full paths, so that two files with one base name in
# different folders (cli/maintain.c, run/maintain.c) stay two files.
# Usage: test_check_calls.sh CC [NM]
set -euo pipefail
cc=${1:-cc}
nm=${2:-nm}
check=$(dirname "$0")/check_calls.sh
T=$(mktemp -d /tmp/floe-calls.XXXXXX)
trap 'rm -rf "$T"' EXIT
failed=0
ok() { echo "ok - $*"; }
bad() { echo "FAIL - $*"; failed=1; }

# obj PATH 'C TEXT': compiles the text into CMake's place for PATH's object.
obj() {
	local o=$T/CMakeFiles/lib.dir/$1.o
	mkdir -p "$(dirname "$o")" "$T/src/$(dirname "$1")"
	printf '%s\n' "$2" >"$T/src/$1"
	"$cc" -c -o "$o" "$T/src/$1"
	echo "$o"
}

# One way, through two files both called m.c: x/m.c -> y/n.c -> y/m.c.
one=(
	"$(obj x/m.c 'int y_g(void); int x_f(void) { return y_g(); }')"
	"$(obj y/n.c 'int y_h(void); int y_g(void) { return y_h(); }')"
	"$(obj y/m.c 'int y_h(void) { return 1; }')"
)
if out=$(bash "$check" "$nm" "${one[@]}" 2>&1); then
	ok "x/m.c -> y/n.c -> y/m.c is one way (the two m.c are two files)"
else
	bad "x/m.c -> y/n.c -> y/m.c reported as a cycle: $out"
fi

# A cycle: a/p.c -> b/q.c -> a/p.c, beside a file outside it.
two=(
	"$(obj a/p.c 'int q(int); int p(int n) { return n ? q(n - 1) : 0; }')"
	"$(obj b/q.c 'int p(int); int q(int n) { return n ? p(n - 1) : 1; }')"
	"$(obj c/r.c 'int p(int); int r(void) { return p(3); }')"
)
rc=0
out=$(bash "$check" "$nm" "${two[@]}" 2>&1) || rc=$?
if [ $rc = 1 ] && grep -q '^a/p.c calls b/q.c (q)' <<<"$out" &&
	grep -q '^b/q.c calls a/p.c (p)' <<<"$out" && ! grep -q 'c/r.c' <<<"$out"; then
	ok "a/p.c <-> b/q.c is a cycle, named by path (exit 1), and c/r.c is not in it"
else
	bad "a/p.c <-> b/q.c: exit $rc: $out"
fi

# A missing object is an error of its own (2), not a pass.
rc=0
bash "$check" "$nm" "$T/none.o" >/dev/null 2>&1 || rc=$?
if [ $rc = 2 ]; then ok "a missing object: exit 2"; else bad "a missing object: exit $rc"; fi
exit $failed
