#!/usr/bin/env bash
# `pista bench engine` on SF 0.01: the four hand-built plans run in every
# mode and match the answers; --cache cold drops the files from the page
# cache before each run and refuses --vs duckdb (DuckDB's runs are warm);
# bad options are usage errors (exit 2). Timings are not asserted.
set -u
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
A="$PISTA_TEST_DATA/tpch/answers/sf0.01"
for cache in warm cold; do
  out=$("$PISTA" bench engine --data "$D" --runs 1 --vs none --cache $cache --check "$A" 2>&1); rc=$?
  n_ok=$(echo "$out" | grep -cE '^Q(1|3|6|18) +[0-9.]+s +[0-9.]+s +[0-9.]+s +[0-9.]+x +[0-9.]+x ok$')
  if [ "$rc" = 0 ] && [ "$n_ok" = 4 ]; then echo "ok   $cache: 4 queries, 3 modes, blk/ovl best and median, answers"; else
    echo "FAIL $cache (exit $rc, $n_ok ok lines)"; echo "$out" | sed 's/^/  /'; fail=1; fi
done
echo "$out" | grep -q "dropping every data file from the page cache" && echo "ok   cold says how" || { echo "FAIL cold header"; fail=1; }
"$PISTA" bench engine --data "$D" --cache cold --vs duckdb >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] && echo "ok   cold refuses DuckDB" || { echo "FAIL cold with duckdb: exit $rc"; fail=1; }
"$PISTA" bench engine --data "$D" --cache lukewarm >/dev/null 2>&1; rc=$?
[ "$rc" = 2 ] && echo "ok   bad --cache" || { echo "FAIL bad --cache: exit $rc"; fail=1; }
exit $fail
