#!/usr/bin/env bash
# Checks that the source files of a static library call one another one way: no file
# calls a function of a file that (directly or not) calls one of its own. Files of one
# module may share a private header (tail_impl.h, runner_impl.h), which an include check
# cannot see through; the symbols the objects define and use can. Prints the calls that
# close a cycle and exits 1 if there is one. Usage: check_calls.sh LIBRARY.a [NM]
# The build runs it on floe_agent after linking it, and so does ctest (layers/check_calls).
set -euo pipefail
lib=$1
nm=${2:-nm}
[ -f "$lib" ] || { echo "check_calls: no library $lib" >&2; exit 2; }

# "member.o D symbol" for definitions, "member.o U symbol" for uses.
{
	# nm -A prints "LIBRARY:MEMBER:ADDRESS TYPE NAME" and "LIBRARY:MEMBER: U NAME".
	"$nm" -A --defined-only "$lib" | awk '$2 ~ /^[TDBR]$/ { split($1, a, ":"); print a[2], "D", $3 }'
	"$nm" -A -u "$lib" | awk '{ split($1, a, ":"); print a[2], "U", $NF }'
} | awk '
$2 == "D" { def[$3] = $1; next }
{ use[NR] = $1 " " $3 }
END {
	# Edges between files (member -> member), with one symbol to name each.
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
