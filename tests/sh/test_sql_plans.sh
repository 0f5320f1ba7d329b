#!/usr/bin/env bash
# Plan shapes the optimiser promises (src/sql/README.md), checked on the
# EXPLAIN of TPC-H queries at SF 0.01 (their results are checked against the
# answers by test_tpch_sql):
#  - magic sets: Q17's correlated aggregate reads only the outer parts'
#    lineitems (a SEMI join with part under the AGGREGATE); Q4's EXISTS
#    reduces lineitem by the outer orders first (a SEMI join inside the
#    subquery side);
#  - a semi join on one table goes before the join order (Q18's IN on
#    orders sits under the join with lineitem);
#  - an OR over two tables gives each its own filter (Q19: a FILTER on part);
#  - a folded constant is a scan predicate (Q1: no FILTER, the date test is
#    in the scan).
set -u
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
Q="$PISTA_TEST_DATA/tpch/queries"
plan() { "$PISTA" --data "$D" -c "EXPLAIN $(cat "$Q/q$1.sql")" 2>&1 | grep -E '^ *[A-Z_]+' | sed -E 's/  \[p[0-9,]+\].*//'; }
# expect NAME QUERY LINE-REGEX...: the regexes match lines of the plan in order
expect() {
  local name=$1 q=$2; shift 2
  local p; p=$(plan "$q")
  local rest="$p"
  for re in "$@"; do
    local at; at=$(printf '%s\n' "$rest" | grep -n -E -m1 -- "$re" | cut -d: -f1)
    if [ -z "$at" ]; then echo "FAIL $name: no line /$re/ (in order) in"; echo "$p" | sed 's/^/  /'; fail=1; return; fi
    rest=$(printf '%s\n' "$rest" | tail -n +$((at + 1)))
  done
  echo "ok   $name"
}
# Lines are indented two spaces per level; the regexes pin the levels.
expect "Q17 magic set under the aggregate" 17 \
  '^ *HASH_JOIN left' '^          PROJECT' '^            AGGREGATE 1 keys' '^              HASH_JOIN semi' \
  '^                SCAN lineitem' '^                SCAN part'
expect "Q4 EXISTS side reduced by the outer orders" 04 \
  '^        HASH_JOIN semi' '^          SCAN orders' '^            HASH_JOIN semi' '^                SCAN lineitem' \
  '^              SCAN orders'
expect "Q18 IN joins orders before lineitem" 18 \
  '^        HASH_JOIN inner' '^          SCAN lineitem' '^            HASH_JOIN semi' '^              SCAN orders'
expect "Q19 OR gives part its own filter" 19 '^          FILTER' '^            SCAN part'
# A LIMIT may keep different rows each time it runs: no magic set is taken
# from an outer side that holds one (it would be evaluated twice).
lim=$("$PISTA" --data "$D" -c "EXPLAIN select p_partkey from (select * from part limit 10) p where p_retailprice > (select avg(l_extendedprice) / 1000 from lineitem where l_partkey = p_partkey)" 2>&1)
if echo "$lim" | grep -q "HASH_JOIN semi"; then echo "FAIL magic set from a LIMIT"; echo "$lim" | sed 's/^/  /'; fail=1; else echo "ok   no magic set from a LIMIT"; fi
p1=$(plan 01)
if echo "$p1" | grep -q FILTER; then echo "FAIL Q1 date predicate not in the scan"; echo "$p1" | sed 's/^/  /'; fail=1; else echo "ok   Q1 folded date is a scan predicate"; fi
exit $fail
