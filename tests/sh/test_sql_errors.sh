#!/usr/bin/env bash
# Type errors in expressions and subqueries, and scalar subqueries with
# several rows: exit status 1 (not a crash, and
# under the sanitizer build not a leak, which would change the status), a
# message naming the types, and the caret under the position.
set -u
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
expect_error() { # name sql message-pattern caret-column
  local out rc
  out=$("$PISTA" --data "$D" -c "$2" 2>&1); rc=$?
  if [ "$rc" != 1 ]; then echo "FAIL $1: exit $rc"; echo "$out" | sed 's/^/  /'; fail=1; return; fi
  if ! echo "$out" | head -1 | grep -q -- "$3"; then echo "FAIL $1: message"; echo "$out" | sed 's/^/  /'; fail=1; return; fi
  local caret; caret=$(echo "$out" | sed -n 3p)
  if [ "$caret" != "$(printf "%*s^" "$4" "")" ]; then echo "FAIL $1: caret"; echo "$out" | sed 's/^/  /'; fail=1; return; fi
  echo "ok   $1"
}
expect_error "IN subquery of another type" \
  "select n_name from nation where n_nationkey in (select r_regionkey = 1 from region)" \
  "IN: cannot compare INTEGER with BOOLEAN" 44
expect_error "scalar subquery compared with a string" \
  "select n_name from nation where n_nationkey = (select r_name from region limit 1)" \
  "comparison of INTEGER and VARCHAR" 44
expect_error "CASE branches of unrelated types" \
  "select case when n_nationkey > 1 then n_nationkey else n_name end from nation" \
  "CASE with results of INTEGER and VARCHAR" 7

# Unknown names: the closest known one as a hint (PostgreSQL's "Perhaps you
# meant"), none when nothing is close.
expect_error "unknown column: did you mean" "select n_nam from nation" \
  'column "n_nam" does not exist; did you mean "n_name"?' 7
expect_error "unknown qualified column: did you mean" "select n.n_regionky from nation n" \
  'column "n.n_regionky" does not exist; did you mean "n.n_regionkey"?' 7
expect_error "unknown table: did you mean (letters swapped)" "select * from natoin" \
  'table "natoin" does not exist; did you mean "nation"?' 14
expect_error "unknown table: a WITH name is offered too" "with regions as (select * from region) select * from regoins" \
  'table "regoins" does not exist; did you mean "regions"?' 53
expect_error "unknown function: did you mean" "select summ(n_nationkey) from nation" \
  "function summ is not supported; did you mean sum?" 7
expect_error "unknown column, nothing close: no hint" "select xyz from nation" \
  'column "xyz" does not exist$' 7

# A scalar subquery must give at most one row (per outer row): DuckDB's and
# PostgreSQL's error. nation has 5 rows per region, region 5 rows.
run_error() { # name sql message-pattern
  local out rc
  out=$("$PISTA" --data "$D" --answers -c "$2" 2>&1); rc=$?
  if [ "$rc" = 1 ] && echo "$out" | grep -q -- "$3"; then echo "ok   $1"; else echo "FAIL $1: exit $rc"; echo "$out" | sed 's/^/  /'; fail=1; fi
}
many="more than one row returned by a subquery used as an expression"
run_error "uncorrelated scalar subquery with 5 rows" "select n_name, (select r_name from region) from nation" "$many"
run_error "correlated scalar subquery with 5 rows per key" \
  "select n_name, (select n2.n_name from nation n2 where n2.n_regionkey = n.n_regionkey) from nation n" "$many"
out=$("$PISTA" --data "$D" --answers -c "select n_name, (select r_name from region r where r.r_regionkey = n.n_regionkey) as r from nation n where n_nationkey < 3 order by 1" 2>&1)
if [ "$out" == "n_name|r
ALGERIA|AFRICA
ARGENTINA|AMERICA
BRAZIL|AMERICA" ]; then echo "ok   correlated scalar subquery with one row per key"; else echo "FAIL one row per key"; echo "$out" | sed 's/^/  /'; fail=1; fi
out=$("$PISTA" --data "$D" --answers -c "select (select r_name from region where r_regionkey = 9) is null as none" 2>&1)
if [ "$out" == "none
true" ]; then echo "ok   scalar subquery with no row is NULL"; else echo "FAIL no row"; echo "$out" | sed 's/^/  /'; fail=1; fi
exit $fail
