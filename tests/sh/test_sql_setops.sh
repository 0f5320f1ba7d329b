#!/usr/bin/env bash
# UNION / INTERSECT / EXCEPT on hand-checked sets (TPC-H nation: 25 rows,
# regions 0..4 with 5 nations each; region: keys 0..4): duplicates removed,
# NULLs compare equal (IS NOT DISTINCT FROM), ORDER BY and LIMIT apply to the
# whole result, INTERSECT ALL / EXCEPT ALL keep copies, and column-count
# mismatches are errors. The differential test covers random ones against DuckDB.
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
# ALL: a row appearing l times on the left and r times on the right comes
# out min(l, r) times (INTERSECT ALL) or max(l - r, 0) times (EXCEPT ALL).
# Nations 0..11 are in regions 0,1,1,1,4,0,3,3,2,2,4,4.
check "INTERSECT ALL keeps min(l, r) copies" \
  "select n_regionkey as k from nation intersect all select n_regionkey from nation where n_nationkey < 12 order by 1" \
  "k
0
0
1
1
1
2
2
3
3
4
4
4"
# Region 0 holds nations 0, 5, 14, 15, 16 (parities 0 1 0 1 0): (0,0) x3 and
# (0,1) x2, less one (0,1); region 3 (6, 7, 19, 22, 23) keeps all five.
check "EXCEPT ALL keeps max(l - r, 0) copies" \
  "select n_regionkey as k, n_nationkey % 2 as o from nation except all select r_regionkey, 1 from region where r_regionkey < 2 order by 1, 2" \
  "k|o
0|0
0|0
0|0
0|1
1|0
1|0
1|1
1|1
2|0
2|0
2|0
2|1
2|1
3|0
3|0
3|1
3|1
3|1
4|0
4|0
4|0
4|1
4|1"
check "INTERSECT ALL binds tighter; EXCEPT ALL of the union" \
  "select 1 as x intersect all select 1 union all select 2 except all select 2" \
  "x
1"
# NULL rows: 9 on the left (n % 3 = 0), 13 on the right (n % 2 = 0): 9 kept;
# values by region, left 3 3 1 4 5, right (odd n) 2 3 2 3 2: 11 kept.
check "INTERSECT ALL: NULLs are equal, counted like values" \
  "select count(*) as n, count(x) as v from (select case when n_nationkey % 3 = 0 then null else n_regionkey end as x from nation intersect all select case when n_nationkey % 2 = 0 then null else n_regionkey end from nation) t" \
  "n|v
20|11"
err "column counts differ" "select 1 except select 1, 2" "each EXCEPT query must have the same number of columns (1 and 2)"
exit $fail
