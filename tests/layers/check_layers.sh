#!/usr/bin/env bash
# Checks that every #include in agent/, formats/ and platform/ follows the layers written
# in agent/README.md ("Dependency order"): formats/ and platform/ include nothing from
# above them but the base layer (formats/base, the first of formats/ modules), and
# formats/ modules and agent/ folders include only those before them in their order (so
# formats/base includes nothing but itself). Prints each crossing include
# and exits 1 if there is one. Usage: check_layers.sh [SOURCE-ROOT]
# The build runs it (target check_layers) and so does ctest (layers/check_layers).
set -euo pipefail
ROOT=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$ROOT"

# Order within each layer: a folder may include itself and those listed before it.
FORMATS_ORDER=(base json aws avro parquet iceberg)
AGENT_ORDER=(env state schema parse config input lake pipeline agg run cli)

# One awk pass over every include line (a shell loop forking per line took seconds).
{ grep -rn --include='*.c' --include='*.h' '^[[:space:]]*#[[:space:]]*include "' agent formats platform 2>/dev/null || true; } |
	awk -v formats="${FORMATS_ORDER[*]}" -v agent="${AGENT_ORDER[*]}" '
function index_of(name, list,    n, a, i) {
	n = split(list, a, " ")
	for (i = 1; i <= n; i++)
		if (a[i] == name)
			return i - 1
	return -1
}
function prefix(list, k,    n, a, i, s) {
	n = split(list, a, " ")
	s = ""
	for (i = 1; i <= k && i <= n; i++)
		s = s (i > 1 ? " " : "") a[i]
	return s
}
function crossing(file, inc, why) {
	printf "%s: includes \"%s\": %s\n", file, inc, why
	bad = 1
}
{
	file = $0
	sub(/:.*/, "", file)
	if (!match($0, /#[[:space:]]*include "[^"]*"/))
		next
	inc = substr($0, RSTART, RLENGTH)
	sub(/^#[[:space:]]*include "/, "", inc)
	sub(/"$/, "", inc)
	if (index(inc, "/") == 0)
		next # a file of the same folder
	split(file, fp, "/")
	split(inc, ip, "/")
	layer = fp[1]
	ilayer = ip[1]
	if (layer == "platform") {
		# The base layer lives in formats/base; the S3 client (platform/s3/) also reads
		# the AWS documents with formats/aws, which uses nothing above formats/json.
		if (ilayer == "platform" || (ilayer == "formats" && ip[2] == "base"))
			next
		if (ilayer == "formats" && ip[2] == "aws") {
			if (fp[2] != "s3")
				crossing(file, inc, "only platform/s3/ includes formats/aws/")
		} else {
			crossing(file, inc, "platform/ includes only platform/ and formats/base/")
		}
	} else if (layer == "formats") {
		if (ilayer != "formats") {
			crossing(file, inc, "formats/ includes only formats/")
			next
		}
		from = fp[2]
		to = ip[2]
		if (from == to)
			next
		fi = index_of(from, formats)
		ti = index_of(to, formats)
		if (fi < 0 || ti < 0 || ti >= fi)
			crossing(file, inc, "formats/" from " may include only " (fi > 0 ? prefix(formats, fi) : "itself"))
	} else if (layer == "agent") {
		if (ilayer != "agent")
			next # formats/ and platform/ are below agent/
		from = fp[2]
		to = ip[2]
		if (from == to)
			next
		fi = index_of(from, agent)
		ti = index_of(to, agent)
		if (fi < 0)
			crossing(file, inc, "agent/" from " is not in the dependency order (add it to agent/README.md and this script)")
		else if (ti < 0 || ti >= fi)
			crossing(file, inc, "agent/" from " may include only " prefix(agent, fi))
	}
}
END {
	bad += 0
	if (!bad)
		print "layers: every include follows the dependency order"
	exit bad
}'
