#!/usr/bin/env bash
# Subqueries correlated at any depth, and LATERAL subqueries in FROM. Where
# the one-level decorrelation (a join on the subquery's WHERE correlations)
# cannot take a subquery's correlation (a nested subquery reading a query two
# or three levels out, an outer column in the select list, GROUP BY, LIMIT,
# a non-equality under an aggregate), or the subquery is LATERAL, it is bound
# with a domain: D, the distinct values of the outer columns it reads, joined
# back IS NOT DISTINCT FROM (NULL correlation values match). The COUNT bug
# stays fixed: an aggregate over no rows gives COUNT 0, the others NULL (also
# for a LATERAL aggregate: every outer row gets a row). A correlated LIMIT is
# cut per outer value. Expected rows from DuckDB (tests/oracle/oracle.mjs,
# DuckDB 1.5.6) over the SF 0.01 tables; then what is refused.
set -u
. "$(dirname "$0")/sql_check.sh"

check "two levels: count per customer of orders with a line from the supplier numbered like the customer's nation (the inner EXISTS reads c two levels out); 0 for customers without orders (COUNT over no rows)" \
  "select c_custkey, (select count(*) from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey)) as n from customer c where c_custkey <= 12 or c_custkey in (8, 41, 107) order by 1" \
"c_custkey|n
1|0
2|0
3|0
4|0
5|0
6|0
7|0
8|2
9|0
10|0
11|0
12|0
41|1
107|0"

check "two levels: sum (NULL over no rows) and coalesce(sum, 0)" \
  "select c_custkey, (select sum(o_totalprice) from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey)) as s, (select coalesce(sum(o_totalprice), 0) from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey)) as z from customer c where c_custkey <= 10 or c_custkey in (8, 41, 107) order by 1" \
"c_custkey|s|z
1||0.00
2||0.00
3||0.00
4||0.00
5||0.00
6||0.00
7||0.00
8|382037.03|382037.03
9||0.00
10||0.00
41|316843.65|316843.65
107||0.00"

check "two levels in WHERE: EXISTS over NOT EXISTS" \
  "select count(*) from customer c where exists (select 1 from orders o where o.o_custkey = c.c_custkey and not exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey < c.c_nationkey * 4))" \
"count_star()
750"

check "two levels in WHERE: NOT EXISTS over EXISTS" \
  "select count(*) from customer c where not exists (select 1 from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey))" \
"count_star()
1082"

check "two levels: IN over IN" \
  "select c_custkey from customer c where c_custkey < 300 and c_custkey in (select o_custkey from orders o where o.o_orderkey in (select l_orderkey from lineitem l where l.l_suppkey = c.c_nationkey)) order by 1" \
"c_custkey
8
13
16
22
31
34
35
37
41
43
52
55
56
61
64
65
68
71
79
82
85
88
91
94
95
100
103
106
109
112
121
127
128
130
134
139
140
142
146
148
149
154
157
160
161
169
175
176
179
184
187
190
193
197
205
208
214
215
217
221
223
224
229
238
241
245
247
248
250
259
265
268
277
278
280
281
283
290"

check "two levels: NOT IN inside EXISTS" \
  "select count(*) from customer c where c_acctbal > 9000 and exists (select 1 from orders o where o.o_custkey = c.c_custkey and o.o_orderkey not in (select l_orderkey from lineitem l where l.l_suppkey = c.c_nationkey))" \
"count_star()
80"

check "three levels: region -> nation -> customer -> orders, the innermost reading the region" \
  "select r_regionkey, (select count(*) from nation n where n.n_regionkey = r.r_regionkey and exists (select 1 from customer c where c.c_nationkey = n.n_nationkey and exists (select 1 from orders o where o.o_custkey = c.c_custkey and o.o_orderkey % 7 = r.r_regionkey))) as k from region r order by 1" \
"r_regionkey|k
0|5
1|5
2|5
3|5
4|5"

check "three levels: a nested scalar count compared, reading the region two and three levels down" \
  "select r_regionkey, (select count(*) from nation n where n.n_regionkey = r.r_regionkey and (select count(*) from customer c where c.c_nationkey = n.n_nationkey and c.c_acctbal > r.r_regionkey * 1000 and not exists (select 1 from orders o where o.o_custkey = c.c_custkey and o.o_orderkey % 5 = r.r_regionkey)) > 5) as k from region r order by 1" \
"r_regionkey|k
0|5
1|5
2|5
3|5
4|4"

check "NULL correlation values: x is NULL for even regions; IS NULL in the inner subquery makes the NULL domain row match (count 5 there, not 0)" \
  "select t.k, t.x, (select count(*) from nation n where exists (select 1 from region r2 where r2.r_regionkey = n.n_regionkey and (r2.r_regionkey = t.x or (t.x is null and r2.r_regionkey < 2)))) as c, (select min(n_name) from nation n where n.n_regionkey = t.k and exists (select 1 from region r2 where r2.r_regionkey = n.n_regionkey and (t.x is null or t.x < 3))) as m from (select r_regionkey as k, case when r_regionkey % 2 = 0 then null else r_regionkey end as x from region) t order by 1" \
"k|x|c|m
0||10|ALGERIA
1|1|5|ARGENTINA
2||10|CHINA
3|3|5|
4||10|EGYPT"

check "NULL correlation values with IS NOT DISTINCT FROM inside" \
  "select t.k, (select count(*) from nation n where exists (select 1 from region r2 where r2.r_regionkey = n.n_regionkey and r2.r_regionkey is not distinct from t.x)) as c from (select r_regionkey as k, case when r_regionkey % 2 = 0 then null else r_regionkey end as x from region) t order by 1" \
"k|c
0|0
1|5
2|0
3|5
4|0"

check "an outer column in the select list of a correlated aggregate: count(*) + outer" \
  "select c_custkey, (select count(*) + c.c_nationkey from orders o where o.o_custkey = c.c_custkey) as v, (select max(o_totalprice) - c.c_acctbal from orders o where o.o_custkey = c.c_custkey) as w from customer c where c_custkey <= 6 order by 1" \
"c_custkey|v|w
1|24|356633.90
2|23|201446.90
3|1|
4|35|272714.24
5|12|270710.78
6|20|"

check "a non-equality correlation under an aggregate" \
  "select n_nationkey, (select count(*) from region r where r.r_regionkey >= n.n_regionkey) as c, (select sum(r_regionkey) from region r where r.r_regionkey > n.n_regionkey - 2 and r.r_regionkey < n.n_regionkey) as s from nation n where n_nationkey < 8 order by 1" \
"n_nationkey|c|s
0|5|
1|4|0
2|4|0
3|4|0
4|1|3
5|5|
6|2|2
7|2|2"

check "GROUP BY in a correlated scalar subquery: no group (NULL) for customers without orders" \
  "select c_custkey, (select count(*) from orders o where o.o_custkey = c.c_custkey group by o.o_custkey) as n from customer c where c_custkey <= 6 order by 1" \
"c_custkey|n
1|9
2|10
3|
4|31
5|9
6|"

check "a correlated top-1 with a nested correlation two levels out" \
  "select c_custkey, (select o_orderdate from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey) order by o_orderdate desc, o_orderkey limit 1) as d from customer c where c_custkey <= 40 order by 1" \
"c_custkey|d
1|
2|
3|
4|
5|
6|
7|
8|1997-05-09
9|
10|
11|
12|
13|1996-02-10
14|
15|
16|1994-03-25
17|
18|
19|
20|
21|
22|1994-05-22
23|
24|
25|
26|
27|
28|
29|
30|
31|1994-10-27
32|
33|
34|1997-07-19
35|1996-04-12
36|
37|1996-03-19
38|
39|
40|"

check "two levels in the select list and HAVING of a grouped query" \
  "select c_nationkey, count(*) as cnt, (select count(*) from nation n where n.n_nationkey = c.c_nationkey and exists (select 1 from supplier s where s.s_nationkey = n.n_nationkey and s.s_acctbal > c.c_nationkey * 100)) as k from customer c group by c_nationkey having (select count(*) from nation n where n.n_nationkey = c.c_nationkey and exists (select 1 from supplier s where s.s_nationkey = n.n_nationkey and s.s_suppkey < c.c_nationkey * 4)) > 0 order by 1" \
"c_nationkey|cnt|k
1|59|1
5|57|1
8|60|1
9|66|1
10|72|1
11|58|1
12|67|1
13|54|1
14|50|1
15|72|1
16|62|1
17|56|1
18|58|1
19|64|1
20|67|1
21|58|1
22|59|1
23|56|1
24|48|1"

check "LATERAL aggregate: every customer a row, count 0 and sum NULL without orders" \
  "select c_custkey, t.n, t.s, t.z from customer c, lateral (select count(*) as n, sum(o_totalprice) as s, count(*) + c.c_nationkey as z from orders o where o.o_custkey = c.c_custkey) t where c_custkey <= 10 order by 1" \
"c_custkey|n|s|z
1|9|1428873.61|24
2|10|1156504.92|23
3|0||1
4|31|4134567.39|35
5|9|1084042.74|12
6|0||20
7|24|3922020.98|42
8|14|2311598.75|31
9|0||8
10|27|3865098.18|32"

check "LATERAL aggregate in WHERE: customers without orders" \
  "select count(*) from customer c, lateral (select count(*) as n from orders o where o.o_custkey = c.c_custkey) t where t.n = 0" \
"count_star()
500"

check "LATERAL top-N: the two dearest orders of each customer (customers without orders dropped)" \
  "select c_custkey, t.o_orderkey, t.o_totalprice from customer c cross join lateral (select o_orderkey, o_totalprice from orders o where o.o_custkey = c.c_custkey order by o_totalprice desc limit 2) t where c_custkey <= 10 order by 1, 3 desc" \
"c_custkey|o_orderkey|o_totalprice
1|9154|357345.46
1|36422|270087.44
2|38276|201568.55
2|20257|181875.60
4|26407|275581.07
4|58146|241263.01
5|7141|271505.25
5|11746|177360.54
7|14404|354885.81
7|23011|353727.96
8|13601|256717.52
8|164|250417.20
10|17668|322342.37
10|21729|309286.33"

check "LATERAL top-N with OFFSET, comma form" \
  "select r_name, t.n_name from region r, lateral (select n_name from nation n where n.n_regionkey = r.r_regionkey order by n_name limit 2 offset 1) t order by 1, 2" \
"r_name|n_name
AFRICA|ETHIOPIA
AFRICA|KENYA
AMERICA|BRAZIL
AMERICA|CANADA
ASIA|INDIA
ASIA|INDONESIA
EUROPE|GERMANY
EUROPE|ROMANIA
MIDDLE EAST|IRAN
MIDDLE EAST|IRAQ"

check "LEFT JOIN LATERAL ... ON true: customers without orders kept with NULLs" \
  "select c_custkey, t.o_orderkey from customer c left join lateral (select o_orderkey from orders o where o.o_custkey = c.c_custkey order by o_totalprice desc limit 2) t on true where c_custkey <= 10 order by 1, 2" \
"c_custkey|o_orderkey
1|9154
1|36422
2|20257
2|38276
3|
4|26407
4|58146
5|7141
5|11746
6|
7|14404
7|23011
8|164
8|13601
9|
10|17668
10|21729"

check "LEFT JOIN LATERAL with an ON condition on both sides" \
  "select c_custkey, count(t.o_orderkey) as n from customer c left join lateral (select o_orderkey, o_totalprice as p from orders o where o.o_custkey = c.c_custkey) t on t.p > c.c_acctbal * 30 where c_custkey <= 12 group by c_custkey order by 1" \
"c_custkey|n
1|9
2|10
3|0
4|21
5|9
6|0
7|2
8|3
9|0
10|18
11|7
12|0"

check "JOIN LATERAL ... ON" \
  "select c_custkey, t.o_orderkey from customer c join lateral (select o_orderkey, o_totalprice as p from orders o where o.o_custkey = c.c_custkey) t on t.p > 300000 where c_custkey < 200 order by 1, 2" \
"c_custkey|o_orderkey
1|9154
7|14404
7|23011
10|17668
10|21729
11|12800
13|6022
16|39937
23|358
31|8577
34|54368
34|56359
35|23168
37|38850
40|25253
41|48643
43|5859
52|28772
52|50213
56|3654
56|10849
61|26982
61|35201
61|41445
62|6470
68|21633
68|36609
71|9057
73|6020
79|23814
79|41728
79|49799
85|4421
86|16292
94|14471
98|37253
100|13733
100|27652
101|15552
103|23558
107|8516
109|8416
109|27680
109|37542
113|58501
119|48931
127|2438
130|16003
133|50470
136|19968
139|45731
143|15619
154|45382
155|48998
158|46115
163|45638
166|55937
169|3269
169|59396
170|6695
175|52195
176|13444
178|6882
178|19142
184|10470
190|32324
191|38789
196|19460"

check "LATERAL reading two earlier FROM items" \
  "select n_name, c_custkey, t.k from nation n, customer c, lateral (select count(*) as k from orders o where o.o_custkey = c.c_custkey and o.o_orderpriority < n.n_name) t where c.c_nationkey = n.n_nationkey and c_custkey <= 15 order by 1, 2" \
"n_name|c_custkey|k
ARGENTINA|3|0
ARGENTINA|14|11
CANADA|5|9
CANADA|13|21
CHINA|7|24
EGYPT|4|31
ETHIOPIA|10|27
INDIA|9|0
JORDAN|2|10
JORDAN|12|0
MOROCCO|1|9
PERU|8|14
SAUDI ARABIA|6|0
UNITED KINGDOM|11|7
UNITED KINGDOM|15|0"

check "LATERAL with GROUP BY: one row per (customer, status)" \
  "select c_custkey, t.st, t.n from customer c, lateral (select o_orderstatus as st, count(*) as n from orders o where o.o_custkey = c.c_custkey group by o_orderstatus) t where c_custkey <= 8 order by 1, 2" \
"c_custkey|st|n
1|F|3
1|O|6
2|F|5
2|O|5
4|F|10
4|O|21
5|F|5
5|O|4
7|F|12
7|O|12
8|F|7
8|O|7"

check "LATERAL reading nothing: a plain derived table (also with UNION)" \
  "select r_name, t.x from region r, lateral (select 1 as x union all select 2) t order by 1, 2" \
"r_name|x
AFRICA|1
AFRICA|2
AMERICA|1
AMERICA|2
ASIA|1
ASIA|2
EUROPE|1
EUROPE|2
MIDDLE EAST|1
MIDDLE EAST|2"

check "LATERAL with NULL correlation values (x NULL for even regions)" \
  "select r.k, t.n from (select r_regionkey as k, case when r_regionkey % 2 = 0 then null else r_regionkey end as x from region) r, lateral (select count(*) as n from nation where n_regionkey = r.x or r.x is null) t order by 1" \
"k|n
0|25
1|5
2|25
3|5
4|25"

check "LATERAL inside a subquery, reading the enclosing query too" \
  "select r_regionkey, (select max(t.n) from nation n2, lateral (select count(*) as n from nation n3 where n3.n_regionkey = n2.n_regionkey and n3.n_nationkey < r.r_regionkey * 5) t) as m from region r order by 1" \
"r_regionkey|m
0|0
1|3
2|3
3|4
4|5"

check "LATERAL whose subquery has a correlated subquery of its own" \
  "select c_custkey, t.k from customer c, lateral (select count(*) as k from orders o where o.o_custkey = c.c_custkey and o.o_orderkey in (select l_orderkey from lineitem l where l.l_suppkey = c.c_nationkey)) t where c_custkey <= 12 order by 1" \
"c_custkey|k
1|0
2|0
3|0
4|0
5|0
6|0
7|0
8|2
9|0
10|0
11|0
12|0"

check "LATERAL over rows cut by LIMIT: D from below the LIMIT (a superset of the values)" \
  "select r_regionkey, t.n from (select * from region order by r_regionkey limit 2) r, lateral (select count(*) as n from nation n where n.n_regionkey = r.r_regionkey) t order by 1" \
"r_regionkey|n
0|5
1|5"

check "a two-level subquery over rows cut by LIMIT" \
  "select c_custkey, (select count(*) from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey)) as n from (select * from customer order by c_custkey limit 10) c order by 1" \
"c_custkey|n
1|0
2|0
3|0
4|0
5|0
6|0
7|0
8|2
9|0
10|0"

check "two LATERALs, the second reading the first and a table" \
  "select c_custkey, t.n, u.m from customer c, lateral (select count(*) as n from orders o where o.o_custkey = c.c_custkey) t, lateral (select count(*) as m from nation where n_nationkey < t.n + c.c_nationkey) u where c_custkey <= 8 order by 1" \
"c_custkey|n|m
1|9|24
2|10|23
3|0|1
4|31|25
5|9|12
6|0|20
7|24|25
8|14|25"

check "LATERAL reading two FROM items joined after them (their join, not the product of their values)" \
  "select count(*) as n, sum(t.k) as s from lineitem l, orders o, lateral (select count(*) as k from orders o2 where o2.o_custkey = o.o_custkey and o2.o_orderkey < l.l_orderkey) t where l.l_orderkey = o.o_orderkey and l.l_orderkey < 3000" \
"n|s
3030|1109"

check "LATERAL reading one of three FROM items (once a heap overrun: difftest 1:48)" \
  "select count(*) as c0, count(l5.x) as c1 from partsupp as t1, part as t2, part as t3 cross join lateral (select t4.l_commitdate as x from lineitem as t4 where t4.l_partkey = ps_partkey order by t4.l_quantity desc, t4.l_orderkey, t4.l_linenumber limit 3) as l5 where t1.ps_partkey = t2.p_partkey and t1.ps_partkey = t3.p_partkey and t2.p_mfgr not like '%turer#3'" \
"c0|c1
18888|18888"

# --- refused: an error naming the construct, not a wrong answer
refused "RIGHT JOIN LATERAL" \
  "select * from region r right join lateral (select n_name from nation n where n.n_regionkey = r.r_regionkey) t on true" \
  "the combining JOIN type must be INNER or LEFT for a LATERAL reference"
refused "LEFT JOIN LATERAL reading an item before the join (PostgreSQL's rule)" \
  "select count(*) from region r2, region r3 left join lateral (select count(*) as n from nation n where n.n_regionkey = r2.r_regionkey) t on true" \
  'invalid reference to FROM-clause entry for table "r2"'
refused "a LATERAL function call" \
  "select * from region r, lateral generate_series(1, r.r_regionkey) g" \
  "LATERAL function calls in FROM are not supported"
refused "a LATERAL UNION reading an earlier item" \
  "select * from region r, lateral (select n_name from nation n where n.n_regionkey = r.r_regionkey union select 'x') t" \
  "a LATERAL subquery with UNION, INTERSECT or EXCEPT that reads earlier FROM items is not supported"
refused "HAVING without GROUP BY in a LATERAL aggregate" \
  "select * from region r, lateral (select count(*) as n from nation n where n.n_regionkey = r.r_regionkey having count(*) > 4) t" \
  "HAVING without GROUP BY in a LATERAL aggregate subquery is not supported"
refused "a window function in a correlated subquery" \
  "select r_regionkey, (select sum(n_nationkey) over () from nation n where n.n_regionkey = r.r_regionkey limit 1) from region r" \
  "window functions in a correlated subquery are not supported"
refused "a LATERAL reading a column computed above a LIMIT (read twice, could differ)" \
  "select * from (select k + 1 as k2 from (select r_regionkey as k from region order by 1 limit 2) x) r, lateral (select count(*) as n from nation n where n.n_regionkey = r.k2) t" \
  "over rows cut by LIMIT is not supported"
refused "OFFSET on a correlated aggregate" \
  "select c_custkey, (select count(*) from orders o where o.o_custkey = c.c_custkey and exists (select 1 from lineitem l where l.l_orderkey = o.o_orderkey and l.l_suppkey = c.c_nationkey) offset 1) from customer c" \
  "LIMIT or OFFSET in a correlated subquery is not supported"

[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail
