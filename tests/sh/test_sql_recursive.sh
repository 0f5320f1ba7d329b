#!/usr/bin/env bash
# WITH RECURSIVE: the anchor's rows, then rounds of the recursive term over
# the last round's rows until one gives none (UNION: without duplicates and
# rows seen before; UNION ALL: every row). Expected rows from DuckDB 1.5.6
# (tests/oracle/oracle.mjs); the errors are PostgreSQL's, plus the round
# limit (10000) that stops a query without a fixed point.
set -u
. "$(dirname "$0")/sql_check.sh"

check "counting to 100 with UNION ALL" \
  "with recursive t(n) as (select 1 union all select n + 1 from t where n < 100) select sum(n), count(*), max(n) from t" \
"sum(n)|count_star()|max(n)
5050|100|100"

check "UNION stops when no new row comes (a cycle)" \
  "with recursive r(k) as (select 0 union select (k * 7 + 3) % 25 from r) select k from r order by k" \
"k
0
3
21
24"

check "a walk over a table, joining the working table, building a path" \
  "with recursive walk(k, depth, path) as (select n_nationkey, 0, n_name from nation where n_nationkey = 0 union all select n.n_nationkey, w.depth + 1, w.path || '>' || n.n_name from walk w join nation n on n.n_nationkey = (w.k * 3 + 1) % 25 where w.depth < 6) select * from walk order by depth" \
"k|depth|path
0|0|ALGERIA
1|1|ALGERIA>ARGENTINA
4|2|ALGERIA>ARGENTINA>EGYPT
13|3|ALGERIA>ARGENTINA>EGYPT>JORDAN
15|4|ALGERIA>ARGENTINA>EGYPT>JORDAN>MOROCCO
21|5|ALGERIA>ARGENTINA>EGYPT>JORDAN>MOROCCO>VIETNAM
14|6|ALGERIA>ARGENTINA>EGYPT>JORDAN>MOROCCO>VIETNAM>KENYA"

check "BIGINT Fibonacci numbers to the 80th" \
  "with recursive fib(a, b, i) as (select cast(0 as bigint), cast(1 as bigint), 1 union all select b, a + b, i + 1 from fib where i < 80) select max(b), count(*) from fib" \
"max(b)|count_star()
23416728348467685|80"

check "a recursive query read by a later WITH query, both in the statement" \
  "with recursive x(n) as (select 1 union all select n + 1 from x where n < 3), y as (select n * 10 m from x) select * from x, y order by 1, 2" \
"n|m
1|10
1|20
1|30
2|10
2|20
2|30
3|10
3|20
3|30"

check "DECIMAL columns keep the anchor's type" \
  "with recursive r(k, s) as (select 0, cast(0.5 as decimal(10,2)) union all select k + 1, s * 2 from r where k < 12) select * from r order by k" \
"k|s
0|0.50
1|1.00
2|2.00
3|4.00
4|8.00
5|16.00
6|32.00
7|64.00
8|128.00
9|256.00
10|512.00
11|1024.00
12|2048.00"

check "an anchor of no rows" \
  "with recursive t(n) as (select n_nationkey from nation where n_nationkey < 0 union all select n + 1 from t) select count(*) from t" \
"count_star()
0"

check "suppliers reachable through shared nations, distinct (UNION)" \
  "with recursive reach(s) as (select s_suppkey from supplier where s_suppkey = 1 union select s2.s_suppkey from reach r join supplier s1 on s1.s_suppkey = r.s join supplier s2 on s2.s_nationkey = s1.s_nationkey) select count(*), sum(s) from reach" \
"count_star()|sum(s)
4|125"

refused "a query without a fixed point stops after 10000 rounds" "with recursive t(n) as (select 1 union all select n + 1 from t) select count(*) from t" 'WITH RECURSIVE query "t" did not reach a fixed point after 10000 rounds'
refused "a self-reference in the non-recursive term" "with recursive t(n) as (select n from t union all select 1) select * from t" 'recursive reference to query "t" must not appear within its non-recursive term'
refused "terms of different widths" "with recursive t(n) as (select 1 union all select n, n from t where n < 3) select * from t" 'each UNION query of recursive query "t" must have the same number of columns (1 and 2)'
refused "terms of different types" "with recursive t(n) as (select 1 union all select 'x' from t where n < 3) select * from t" 'has type INTEGER in the non-recursive term but VARCHAR in the recursive one'
exit $fail
