#!/usr/bin/env bash
# UNION / INTERSECT / EXCEPT on hand-checked sets (TPC-H nation: 25 rows,
# regions 0..4 with 5 nations each; region: keys 0..4): duplicates removed,
# NULLs compare equal (IS NOT DISTINCT FROM), ORDER BY and LIMIT apply to the
# whole result, ALL variants of INTERSECT/EXCEPT and column-count mismatches
# are errors. The differential test covers random ones against DuckDB.
set -u
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
check() { # name sql expected
  local out; out=$("$PISTA" --data "$D" --answers -c "$2" 2>&1)
  if [ "$out" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $3" | tr '\n' ' '; echo; echo "  got:      $out" | tr '\n' ' '; echo; fail=1; fi
}
err() { # name sql pattern
  local out rc; out=$("$PISTA" --data "$D" --answers -c "$2" 2>&1); rc=$?
  if [ "$rc" = 1 ] && echo "$out" | grep -q -- "$3"; then echo "ok   $1"; else echo "FAIL $1: exit $rc: $out"; fail=1; fi
}
check "INTERSECT keeps common distinct rows" \
  "select n_regionkey as k from nation intersect select r_regionkey from region where r_regionkey between 1 and 3 order by k" \
  "k
1
2
3"
check "EXCEPT keeps the left rows missing on the right" \
  "select n_regionkey as k from nation except select r_regionkey from region where r_regionkey between 1 and 3 order by k" \
  "k
0
4"
check "two columns, order and limit of the whole" \
  "select n_regionkey, case when n_nationkey < 10 then 0 when n_nationkey < 20 then 1 else 2 end as t from nation except select r_regionkey, 0 from region order by 1 desc, 2 limit 3" \
  "n_regionkey|t
4|1
4|2
3|1"
check "NULLs are equal in INTERSECT" \
  "select case when n_nationkey < 3 then null else n_regionkey end as x from nation intersect select cast(null as integer) union all select -1 order by 1 nulls first" \
  "x

-1"
check "NULLs are equal in EXCEPT" \
  "select case when n_nationkey < 3 then null else 7 end as x from nation except select cast(null as integer) order by 1" \
  "x
7"
check "UNION removes duplicates, UNION ALL keeps them" \
  "select (select count(*) from (select n_regionkey from nation union select r_regionkey from region) as s) as u, (select count(*) from (select n_regionkey from nation union all select r_regionkey from region) as s) as a" \
  "u|a
5|30"
err "INTERSECT ALL refused" "select 1 intersect all select 1" "INTERSECT ALL is not supported"
err "EXCEPT ALL refused" "select 1 except all select 1" "EXCEPT ALL is not supported"
err "column counts differ" "select 1 except select 1, 2" "each EXCEPT query must have the same number of columns (1 and 2)"
exit $fail
