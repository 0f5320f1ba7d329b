#!/usr/bin/env bash
# Outer joins in SQL: FULL [OUTER] JOIN (unmatched rows of both sides padded,
# NULL keys never match, ON conditions on one side or without equalities,
# USING merged as COALESCE, WHERE above the join, chains and parenthesised
# joins, aggregates) and RIGHT JOIN with USING. Expected rows are worked out
# by hand from TPC-H's nation and region (the same at every scale factor):
# nation 0 ALGERIA (region 0), 1 ARGENTINA (1), 2 BRAZIL (1), 3 CANADA (1);
# region 0 AFRICA, 1 AMERICA, 2 ASIA, 3 EUROPE, 4 MIDDLE EAST.
set -u
. "$(dirname "$0")/sql_check.sh"
# a: (NULL, ALGERIA), (NULL, ARGENTINA), (2, BRAZIL), (3, CANADA)
A="(select case when n_nationkey < 2 then null else n_nationkey end k, n_name x from nation where n_nationkey < 4) a"
# b: (NULL, AFRICA), (2, AMERICA), (3, ASIA), (4, EUROPE), (5, MIDDLE EAST)
B="(select case when r_regionkey = 0 then null else r_regionkey + 1 end k, r_name y from region) b"

check "full join, unmatched on both sides" \
  "select n_name, r_name from (select * from nation where n_nationkey < 3) n full outer join (select * from region where r_regionkey >= 1) r on n_regionkey = r_regionkey order by r_name nulls first, n_name" \
"n_name|r_name
ALGERIA|
ARGENTINA|AMERICA
BRAZIL|AMERICA
|ASIA
|EUROPE
|MIDDLE EAST"

check "full join, NULL keys never match" \
  "select a.k, x, b.k, y from $A full join $B on a.k = b.k order by x nulls last, y" \
"k|x|k|y
|ALGERIA||
|ARGENTINA||
2|BRAZIL|2|AMERICA
3|CANADA|3|ASIA
|||AFRICA
||4|EUROPE
||5|MIDDLE EAST"

check "full join using: * shows COALESCE(a.k, b.k) once" \
  "select * from $A full join $B using (k) order by k nulls first, x, y" \
"k|x|y
|ALGERIA|
|ARGENTINA|
||AFRICA
2|BRAZIL|AMERICA
3|CANADA|ASIA
4||EUROPE
5||MIDDLE EAST"

check "full join using: qualified names keep each side" \
  "select k, a.k, b.k from $A full join $B using (k) where y is null or y <> 'AFRICA' order by 1 nulls first, 2 nulls first" \
"k|k|k
||
||
2|2|2
3|3|3
4||4
5||5"

check "full join using: a.* and b.*" \
  "select a.*, b.* from $A full join $B using (k) where x = 'BRAZIL' or y = 'EUROPE' order by x" \
"k|x|k|y
2|BRAZIL|2|AMERICA
||4|EUROPE"

check "right join using: the name reads the right side" \
  "select k, x, y from $A right join $B using (k) order by y" \
"k|x|y
||AFRICA
2|BRAZIL|AMERICA
3|CANADA|ASIA
4||EUROPE
5||MIDDLE EAST"

check "right join: left rows without a match are dropped" \
  "select n_name, r_name from (select * from nation where n_nationkey < 3) n right join (select * from region where r_regionkey >= 1) r on n_regionkey = r_regionkey order by r_name, n_name" \
"n_name|r_name
ARGENTINA|AMERICA
BRAZIL|AMERICA
|ASIA
|EUROPE
|MIDDLE EAST"

check "full join, ON condition on the left side only" \
  "select x, y from $A full join $B on a.k = b.k and x <> 'BRAZIL' order by x nulls last, y" \
"x|y
ALGERIA|
ARGENTINA|
BRAZIL|
CANADA|ASIA
|AFRICA
|AMERICA
|EUROPE
|MIDDLE EAST"

check "full join, ON condition on the right side only" \
  "select x, y from $A full join $B on a.k = b.k and y = 'AMERICA' order by x nulls last, y" \
"x|y
ALGERIA|
ARGENTINA|
BRAZIL|AMERICA
CANADA|
|AFRICA
|ASIA
|EUROPE
|MIDDLE EAST"

# nation 0..2 have regions 0, 1, 1: pairs with n_regionkey < r_regionkey:
# 4 + 3 + 3, and region 0 has none (padded): 11.
check "full join on a non-equality (no hash key)" \
  "select count(*) as n, count(n_name) as nn, count(r_name) as r from (select * from nation where n_nationkey < 3) n full join region on n_regionkey < r_regionkey" \
"n|nn|r
11|10|11"

check "full join on false: every row padded" \
  "select count(*) as n, count(x) as nx, count(y) as ny from $A full join $B on false" \
"n|nx|ny
9|4|5"

# Not pushed below the join: the five African nations have no region here.
check "WHERE above a full join" \
  "select count(*) as n from nation full join (select * from region where r_regionkey >= 1) r on n_regionkey = r_regionkey where r_name is null" \
"n
5"

check "WHERE on both sides above a full join" \
  "select x, y from $A full join $B on a.k = b.k where x is null or y is null order by x nulls last, y" \
"x|y
ALGERIA|
ARGENTINA|
|AFRICA
|EUROPE
|MIDDLE EAST"

# nation 0..9: regions 0,1,1,1,4,0,3,3,2,2.
check "aggregate over a full join" \
  "select r_name, count(*) as n, count(n_name) as m from (select * from nation where n_nationkey < 10) n full join (select * from region where r_regionkey < 4) r on n_regionkey = r_regionkey group by r_name order by r_name nulls last" \
"r_name|n|m
AFRICA|2|2
AMERICA|3|3
ASIA|2|2
EUROPE|2|2
|1|1"

# 17 suppliers are in nations 0..4 (regions 0, 1, 4); ASIA and EUROPE come padded.
check "full join after a left join" \
  "select count(*) as n, count(s_name) as s, count(n_name) as nn, count(r_name) as r from supplier left join nation on s_nationkey = n_nationkey and n_nationkey < 5 full join region on n_regionkey = r_regionkey" \
"n|s|nn|r
102|100|17|19"

check "full join of a parenthesised join" \
  "select x, y, n_name from $A full join ($B join nation on b.k = n_nationkey) on a.k = b.k order by x nulls last, y" \
"x|y|n_name
ALGERIA||
ARGENTINA||
BRAZIL|AMERICA|BRAZIL
CANADA|ASIA|CANADA
|EUROPE|EGYPT
|MIDDLE EAST|ETHIOPIA"

check "full join of CTEs, then using twice" \
  "with p as (select n_nationkey k from nation where n_nationkey < 3), q as (select r_regionkey + 1 k from region where r_regionkey < 3) select k, p.k as pk, q.k as qk, r.k as rk from p full join q using (k) full join (select 9 - r_regionkey k from region where r_regionkey > 4 - 2) r using (k) order by k" \
"k|pk|qk|rk
0|0||
1|1|1|
2|2|2|
3||3|
5|||5
6|||6"

# NATURAL: USING on every column name both sides have (k here); none is an
# error, as in DuckDB.
check "natural full join" \
  "select k, n_name, r_name from (select n_regionkey as k, n_name from nation where n_nationkey < 4) a natural full join (select r_regionkey as k, r_name from region where r_regionkey > 0) b order by k, n_name" \
"k|n_name|r_name
0|ALGERIA|
1|ARGENTINA|AMERICA
1|BRAZIL|AMERICA
1|CANADA|AMERICA
2||ASIA
3||EUROPE
4||MIDDLE EAST"
out=$("$PISTA" --data "$D" -c "select count(*) from nation natural join region" 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q "no columns found to join on in NATURAL JOIN"; then echo "ok   natural join without common columns"; else echo "FAIL natural without common: $out"; fail=1; fi
out=$("$PISTA" --data "$D" -c "select count(*) from (select * from nation limit 5) a full join region on n_regionkey = r_regionkey" 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q "FULL JOIN of a subquery with LIMIT but no ORDER BY is not supported"; then echo "ok   full join of an unordered LIMIT refused"; else echo "FAIL full join of a LIMIT: $out"; fail=1; fi
check "full join of an ordered LIMIT" \
  "select n_nationkey, r_name from (select * from nation order by n_nationkey limit 3) a full join region on n_regionkey = r_regionkey order by r_name, n_nationkey" \
"n_nationkey|r_name
0|AFRICA
1|AMERICA
2|AMERICA
|ASIA
|EUROPE
|MIDDLE EAST"

exit $fail
