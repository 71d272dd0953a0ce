#!/usr/bin/env bash
# Checks that every #include in agent/, formats/ and platform/ follows the layers written
# in agent/README.md ("Dependency order"): formats/ and platform/ include nothing from
# above them, formats/ modules and agent/ folders include only those before them in their
# order, and base/ (if present) includes nothing but itself. Prints each crossing include
# and exits 1 if there is one. Usage: check_layers.sh [SOURCE-ROOT]
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"

# Order within each layer: a folder may include itself and those listed before it.
FORMATS_ORDER=(base json avro parquet iceberg)
AGENT_ORDER=(env schema parse config input state lake pipeline agg run cli)

index_of() { # index_of NAME LIST...: its position, or -1
	local name=$1 i=0
	shift
	for x in "$@"; do
		[ "$x" = "$name" ] && { echo $i; return; }
		i=$((i + 1))
	done
	echo -1
}

bad=0
crossing() { echo "$1: includes \"$2\": $3"; bad=1; }

while IFS= read -r line; do
	file=${line%%:*}
	inc=$(sed -n 's/.*#include "\([^"]*\)".*/\1/p' <<<"${line#*:}")
	[ -n "$inc" ] || continue
	layer=${file%%/*}
	case "$inc" in */*) ;; *) continue ;; esac # a file of the same folder
	ilayer=${inc%%/*}
	[ "$ilayer" = base ] && [ -d base ] && continue # the base layer is below everything
	case "$layer" in
	base)
		crossing "$file" "$inc" "base/ includes nothing above it" ;;
	platform)
		[ "$ilayer" = platform ] || crossing "$file" "$inc" "platform/ includes only platform/ and base/" ;;
	formats)
		if [ "$ilayer" != formats ]; then
			crossing "$file" "$inc" "formats/ includes only formats/ and base/"
			continue
		fi
		from=$(cut -d/ -f2 <<<"$file")
		to=$(cut -d/ -f2 <<<"$inc")
		[ "$from" = "$to" ] && continue
		fi_=$(index_of "$from" "${FORMATS_ORDER[@]}")
		ti=$(index_of "$to" "${FORMATS_ORDER[@]}")
		if [ "$fi_" -lt 0 ] || [ "$ti" -lt 0 ] || [ "$ti" -ge "$fi_" ]; then
			crossing "$file" "$inc" "formats/$from may include only ${FORMATS_ORDER[*]:0:$((fi_ < 0 ? 0 : fi_))}"
		fi ;;
	agent)
		[ "$ilayer" = agent ] || continue # formats/ and platform/ are below agent/
		from=$(cut -d/ -f2 <<<"$file")
		to=$(cut -d/ -f2 <<<"$inc")
		[ "$from" = "$to" ] && continue
		fi_=$(index_of "$from" "${AGENT_ORDER[@]}")
		ti=$(index_of "$to" "${AGENT_ORDER[@]}")
		if [ "$fi_" -lt 0 ]; then
			crossing "$file" "$inc" "agent/$from is not in the dependency order (add it to agent/README.md and this script)"
		elif [ "$ti" -lt 0 ] || [ "$ti" -ge "$fi_" ]; then
			crossing "$file" "$inc" "agent/$from may include only ${AGENT_ORDER[*]:0:$fi_}"
		fi ;;
	esac
done < <(grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include "' agent formats platform base 2>/dev/null || true)

if [ $bad = 0 ]; then
	echo "layers: every include follows the dependency order"
fi
exit $bad
