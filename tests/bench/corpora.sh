#!/usr/bin/env bash
# Compression across corpora: per corpus, the rows, the raw lines' bytes, gzip -6 and
# zstd -3 of the raw lines, DuckDB's ZSTD file (single-threaded COPY, level 3) and floe's
# default and compact files for the same rows, and the ratios the targets name (default
# against DuckDB, compact against zstd -3). Sizes only: bytes are deterministic, so one
# run says it all; tests/bench/parquet.sh times the writer.
#
# The corpora come in two sets, and a tuning must hold on both:
#   tuned on   the suite's generator (loghub lines, every digit random, a request id)
#              and each loghub sample as it is: the corpora the page parameters were
#              first chosen on;
#   held out   corpora of another character, for evaluation only: gen_corpus.py's log
#              families the samples lack (web, kernel, firewall, SQL, Java, k8s, audit;
#              every digit random), JSON lines, Zipf-distributed parameters, and each
#              loghub sample repeated with every digit random.
# Last, per corpus, the string pages floe compressed larger than zstd's own parameters
# for the page's size would have (bench_pages: 512 KiB pages, PLAIN at level 3 and delta
# lengths at level 6, the two profiles' layouts and levels): any but 0 breaks the rule
# that floe's page parameters never lose to zstd's.
# Each corpus's rows carry its lines as messages and the other columns as floe run fills
# them for a tailed file (bench_parquet --lines); the suite's generator keeps its own.
#
# usage: tests/bench/corpora.sh [LINES]   (default 1000000: the big corpora's lines; JSON
#        lines get half, each varied loghub sample a fifth)
# CORPORA="suite families" limits the corpora (names as printed); SAMPLES= another
# directory of loghub samples (default ../shared/data/loghub beside the tree, else
# tests/data/loghub). Needs a build with the benchmarks (build-test/gcc or BUILD=...),
# python3, zstd, gzip and the test readers (DuckDB).
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build-test/gcc}
BENCH="$BUILD/tests/bench_parquet"
PAGES="$BUILD/tests/bench_pages"
[ -x "$BENCH" ] && [ -x "$PAGES" ] ||
	{ echo "build $BENCH and $PAGES first (cmake --build $BUILD --target bench_parquet bench_pages)"; exit 2; }
command -v zstd >/dev/null || packaging/dev/install-deps.sh bench
LINES=${1:-1000000}
SAMPLES=${SAMPLES:-}
if [ -z "$SAMPLES" ]; then
	SAMPLES=tests/data/loghub
	[ -d ../shared/data/loghub ] && SAMPLES=../shared/data/loghub
fi
W=$(mktemp -d /tmp/floe-corpora.XXXXXX)
trap 'rm -rf "$W"' EXIT
field() { sed -n "s/^\(.* \)\{0,1\}$1=\([^ ]*\).*/\2/p"; }

# make NAME: writes corpus NAME's lines to $W/NAME.txt.
make_corpus() {
	local name=$1
	case "$name" in
	suite) "$BENCH" "$LINES" uncompressed "$W/x.parquet" --gen-only --raw "$W/$name.txt" >/dev/null ;;
	families) python3 tests/bench/gen_corpus.py families "$LINES" "$W/$name.txt" ;;
	json) python3 tests/bench/gen_corpus.py json $((LINES / 2)) "$W/$name.txt" ;;
	zipf) python3 tests/bench/gen_corpus.py zipf "$LINES" "$W/$name.txt" ;;
	*-varied) python3 tests/bench/gen_corpus.py vary $((LINES / 5)) "$W/$name.txt" \
		--from "$SAMPLES/${name%-varied}.log" ;;
	*) cp "$SAMPLES/$name.log" "$W/$name.txt" ;;
	esac
}

# bench CODEC OUT ARGS...: bench_parquet on the corpus's rows (src: the row count and
# where the rows come from).
bench() {
	local codec=$1 out=$2
	shift 2
	"$BENCH" "${src[0]}" "$codec" "$out" "${src[@]:1}" "$@"
}

tuned=(suite)
held=(families json zipf)
for f in "$SAMPLES"/*.log; do
	s=$(basename "$f" .log)
	tuned+=("$s")
	held+=("$s-varied")
done
printf '%-9s %-18s %8s %11s %10s %10s %10s %10s %10s %7s %7s %7s %9s\n' set corpus rows "raw bytes" \
	"gzip -6" "zstd -3" DuckDB "floe" "compact" "f/duck" "c/zstd3" "f/zstd3" "larger"
for set in tuned held; do
	declare -n list=$set
	for name in "${list[@]}"; do
		if [ -n "${CORPORA:-}" ] && ! [[ " $CORPORA " == *" $name "* ]]; then
			continue
		fi
		make_corpus "$name"
		t="$W/$name.txt"
		if [ "$name" = suite ]; then
			# The suite's own rows (its timestamps, severities and apps), as parquet.sh.
			src=("$LINES")
		else
			src=(0 --lines "$t")
		fi
		rows=$(bench uncompressed "$W/plain.parquet" | field rows)
		raw=$(stat -c %s "$t")
		g6=$(gzip -6 -c "$t" | wc -c)
		z3=$(zstd -3 -q -c -T1 "$t" | wc -c)
		db=$(node tests/bench/duck_copy.js "$W/plain.parquet" "$W/duck.parquet" zstd 3 1000000 | field bytes)
		# Bloom filters on host and app and a 1 MiB budget, as parquet.sh has them.
		fd=$(bench zstd "$W/floe.parquet" --bloom host,app --budget 1048576 | field bytes)
		fc=$(bench zstd "$W/floe.parquet" --bloom host,app --budget 1048576 --profile compact | field bytes)
		l3=$("$PAGES" "$t" --level 3 | field larger)
		l6=$("$PAGES" "$t" --level 6 --delta | field larger)
		printf '%-9s %-18s %8d %11d %10d %10d %10d %10d %10d %7.3f %7.3f %7.3f %9s\n' "$set" "$name" \
			"$rows" "$raw" "$g6" "$z3" "$db" "$fd" "$fc" "$(echo "$fd / $db" | bc -l)" \
			"$(echo "$fc / $z3" | bc -l)" "$(echo "$fd / $z3" | bc -l)" "$l3/$l6"
		rm -f "$t" "$W"/*.parquet
	done
done
