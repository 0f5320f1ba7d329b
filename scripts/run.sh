#!/usr/bin/env bash
# run.sh - the main job on a fresh machine: install what is missing, build,
# generate TPC-H data (SF ${SF:-1}, Parquet) if it is not there yet, and run
# the 22 TPC-H queries through the SQL front end next to DuckDB on the same
# files (`pista bench tpch`: cold and warm time per query, rows, bytes read,
# the DuckDB/pista ratio; tpch.csv and tpch.png in bench/out/tpch-<date>),
# checking every result against the reference answers when they are found
# (ANSWERS, default ../shared/tpch/answers/sf$SF), then print the device
# ceilings (`pista bench device`). Extra arguments go to `bench tpch`
# (e.g. --queries 1-6 --runs 5 --mode blocking). Exit status: that of
# `bench tpch` (1 when a query failed or gave a wrong answer).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
SF=${SF:-1}
DATA=${DATA:-data/sf$SF}
ANSWERS=${ANSWERS:-../shared/tpch/answers/sf$SF}
bash scripts/deps.sh
vs=(--vs duckdb)
bash tests/oracle/setup.sh || { echo "run: DuckDB is not available; the comparison is skipped"; vs=(); }
cmake -S . -B build/normal -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/normal -j"$JOBS" >/dev/null
P=./build/normal/pista
if [ ! -f "$DATA/lineitem.parquet" ]; then
  echo "== generating TPC-H SF $SF into $DATA"
  $P gen tpch --sf "$SF" --out "$DATA"
fi
args=(--data "$DATA" "${vs[@]}")
if [ -d "$ANSWERS" ]; then
  args+=(--check "$ANSWERS")
else
  echo "run: no answers at $ANSWERS: results are not checked"
fi
echo "== TPC-H, 22 queries through SQL, on $DATA"
status=0
$P bench tpch "${args[@]}" "$@" || status=$?
echo
echo "== device ceilings"
$P bench device
exit $status
