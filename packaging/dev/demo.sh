#!/usr/bin/env bash
# floe's main job on the embedded default, from a fresh Debian 12 machine: installs what
# is missing, builds floe, tails the loghub sample logs shipped in tests/data into an
# Iceberg table in a local warehouse directory (demo/warehouse), shows the table, and
# prints a few of its rows with DuckDB over the live files `floe inspect --json` lists
# (the README's recipe: a glob over data/ would also read files a compaction replaced).
# Run it again after appending to demo/logs/*.log: only the new lines are committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
packaging/dev/install-deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p demo/logs
for f in tests/data/loghub/*.log; do
	# Seed each demo log once; later runs only pick up what was appended since.
	# The copy is dated a minute back: these are finished files, and a last line without
	# a newline is taken once its file has been still for inputs[].partial_line_timeout.
	if [ ! -e "demo/logs/$(basename "$f")" ]; then
		cp "$f" demo/logs/
		touch -d '1 minute ago' "demo/logs/$(basename "$f")"
	fi
done
./build/floe check -c packaging/demo.yaml >/dev/null
./build/floe run -c packaging/demo.yaml --once
./build/floe inspect demo/warehouse/default/logs
./build/floe inspect --json demo/warehouse/default/logs >demo/logs.json
# A few rows, read by DuckDB: its command-line shell if installed, else its Node.js
# package, the one the integration tests read with (npm ci installs the pinned version).
sql=("SET VARIABLE files = (SELECT list(f.path) FROM (SELECT unnest(files) AS f
  FROM read_json('demo/logs.json', columns = {files: 'STRUCT(path VARCHAR, records BIGINT, size BIGINT)[]'})))"
	"SELECT count(*) AS rows, count(DISTINCT source) AS files FROM read_parquet(getvariable('files'))"
	"SELECT strftime(ts, '%Y-%m-%d %H:%M:%S') AS ts, host, regexp_extract(source, '[^/]*\$') AS file,
  \"offset\", left(message, 60) AS message FROM read_parquet(getvariable('files')) ORDER BY ts DESC LIMIT 5")
reader=tests/integration/reader
if command -v duckdb >/dev/null 2>&1; then
	for q in "${sql[@]:1}"; do duckdb -c "${sql[0]}; $q"; done
elif command -v node >/dev/null 2>&1 && { [ -d $reader/node_modules/@duckdb ] ||
	(command -v npm >/dev/null 2>&1 && cd $reader && npm ci --no-audit --no-fund --loglevel=error); }; then
	echo "rows and files in the current snapshot:"
	node $reader/duck.js "${sql[0]}" "${sql[1]}"
	echo "the 5 newest rows (ts, host, file, offset, message):"
	node $reader/duck.js "${sql[0]}" "${sql[2]}"
else
	echo "demo.sh: no DuckDB here to print rows with: install the duckdb shell, or Node.js and npm"
	echo "(packaging/dev/install-deps.sh test); the file list is demo/logs.json"
fi
