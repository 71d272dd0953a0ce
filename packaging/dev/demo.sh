#!/usr/bin/env bash
# floe's main job on the embedded default, from a fresh Debian 12 machine: installs what
# is missing, builds floe, tails the loghub sample logs shipped in tests/data into an
# Iceberg table in a local warehouse directory (demo/warehouse), and shows the table.
# Run it again after appending to demo/logs/*.log: only the new lines are committed.
set -euo pipefail
cd "$(dirname "$0")/../.."
packaging/dev/install-deps.sh build
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DFLOE_TESTS=OFF >/dev/null
cmake --build build -j"$(nproc)"
mkdir -p demo/logs
for f in tests/data/loghub/*.log; do
	# Seed each demo log once; later runs only pick up what was appended since.
	[ -e "demo/logs/$(basename "$f")" ] || cp "$f" demo/logs/
done
./build/floe check -c packaging/demo.yaml >/dev/null
./build/floe run -c packaging/demo.yaml --once
./build/floe inspect demo/warehouse/default/logs
