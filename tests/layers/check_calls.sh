#!/usr/bin/env bash
# Checks that the source files of a library call one another one way: no file calls a
# function of a file that (directly or not) calls one of its own. Files of one module may
# share a private header (tail_impl.h, runner_impl.h), which an include check cannot see
# through; the symbols the objects define and use can. Prints the calls that close a
# cycle and exits 1 if there is one.
# Usage: check_calls.sh NM OBJECT.o...
# The objects are named by their full paths (CMake's CMakeFiles/<target>.dir/ prefix and
# the .o suffix taken off), not by archive member names: an archive keeps only the base
# name, so agent/cli/maintain.c and agent/run/maintain.c would become one node there.
# The build runs it on every library after linking it, and so does ctest (layers/calls/*);
# tests/layers/test_check_calls.sh shows that it finds a cycle.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: check_calls.sh NM OBJECT.o..." >&2; exit 2; }
nm=$1
shift
for o in "$@"; do
	[ -f "$o" ] || { echo "check_calls: no object $o" >&2; exit 2; }
done

# "file D symbol" for definitions, "file U symbol" for uses. nm -A prints
# "OBJECT:ADDRESS TYPE NAME" (binutils) or "OBJECT: ADDRESS TYPE NAME" (llvm-nm, which
# CMake picks with clang), and "OBJECT: U NAME": the type and name are the last two
# fields, the object what comes before the first colon (an object path holds none).
{
	"$nm" -A --defined-only "$@" | awk '$(NF - 1) ~ /^[TDBR]$/ { split($1, a, ":"); print a[1], "D", $NF }'
	"$nm" -A -u "$@" | awk '{ split($1, a, ":"); print a[1], "U", $NF }'
} | awk '
function name(path) {
	sub(/^.*\.dir\//, "", path)
	sub(/\.o$/, "", path)
	return path
}
{ $1 = name($1) }
$2 == "D" { def[$3] = $1; next }
{ use[NR] = $1 " " $3 }
END {
	# Edges between files (file -> file), with one symbol to name each.
	for (k in use) {
		split(use[k], u, " ")
		to = def[u[2]]
		if (to != "" && to != u[1] && !((u[1], to) in edge)) {
			edge[u[1], to] = u[2]
			out[u[1]]++
			indeg[to]++
			node[u[1]] = node[to] = 1
		}
	}
	# Peel off files that call no file left, or that no file left calls: what remains
	# are the cycles (and what runs between two of them).
	do {
		changed = 0
		for (n in node)
			if (!(n in gone) && (out[n] == 0 || indeg[n] == 0)) {
				gone[n] = 1
				changed = 1
				for (e in edge) {
					split(e, p, SUBSEP)
					if (p[2] == n)
						out[p[1]]--
					if (p[1] == n)
						indeg[p[2]]--
				}
			}
	} while (changed)
	for (e in edge) {
		split(e, p, SUBSEP)
		if (!(p[1] in gone) && !(p[2] in gone)) {
			printf "%s calls %s (%s): a cycle of calls runs through these files\n", p[1], p[2], edge[e]
			bad = 1
		}
	}
	if (!bad)
		print "calls: every file calls the others one way"
	exit bad + 0
}'
