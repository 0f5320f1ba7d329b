#!/usr/bin/env bash
# run.sh - the main job on a fresh machine: install what is missing, build,
# generate TPC-H data (SF ${SF:-1}, Parquet) if it is not there yet, and run the
# queries the engine can run today (the hand-built plans of Q1, Q3, Q6, Q18)
# in every execution mode next to DuckDB on the same files, then print the
# device ceilings (`pista bench device`). Extra arguments go to `bench engine`.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
SF=${SF:-1}
DATA=${DATA:-data/sf$SF}
bash scripts/deps.sh
bash tests/oracle/setup.sh || echo "run: DuckDB is not available; the comparison is skipped"
cmake -S . -B build/normal -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/normal -j"$JOBS" >/dev/null
P=./build/normal/pista
if [ ! -f "$DATA/lineitem.parquet" ]; then
  echo "== generating TPC-H SF $SF into $DATA"
  $P gen tpch --sf "$SF" --out "$DATA"
fi
echo "== TPC-H queries (hand-built plans) on $DATA"
$P bench engine --data "$DATA" "$@"
echo
echo "== device ceilings"
$P bench device
