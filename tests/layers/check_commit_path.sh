#!/usr/bin/env bash
# Checks that every table has one commit path: the table output (agent/lake/output.c)
# owns the commit protocol of every table (list what is lent, load, verify, quarantine,
# commit, remove), so no other file of agent/ may call the functions it is made of. A
# second copy of that protocol is how a damaged aggregate entry once stopped every later
# commit while a damaged raw one was quarantined. The spool (lake/spool.c) and the table
# (lake/table*.c) define them and may use their own. Prints each call found elsewhere and
# exits 1 if there is one. Usage: check_commit_path.sh [SOURCE-ROOT]
# ctest runs it (layers/check_commit_path).
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"

# The protocol's steps: only the output calls them.
STEPS='floe_table_commit|floe_spool_load|floe_spool_verify|floe_spool_remove|floe_spool_quarantine|floe_spool_quarantine_files|floe_spool_share'

found=$(grep -rnE --include='*.c' "\<($STEPS)[[:space:]]*\(" agent |
	grep -vE '^agent/lake/(output|spool|table[a-z_]*)\.c:' || true)
if [ -n "$found" ]; then
	echo "$found" | sed 's/$/  <- a step of the commit protocol outside agent\/lake\/output.c/'
	echo "check_commit_path: commit through the table output (agent/lake/output.h)" >&2
	exit 1
fi
echo "commit path: only agent/lake/output.c commits, loads, verifies, quarantines and removes spool entries"
