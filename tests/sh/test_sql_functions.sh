#!/usr/bin/env bash
# The division and modulo operators; NULL-handling functions and operators, bound as CASE expressions over the
# engine's comparisons: NULLIF, IS [NOT] DISTINCT FROM, GREATEST / LEAST
# (NULL arguments ignored, as in PostgreSQL), ABS (overflow of the smallest
# integer is an error). Expected rows from DuckDB (tests/oracle/oracle.mjs,
# DuckDB 1.5.6) except where PostgreSQL differs (said where), with the
# small ones hand-checked.
set -u
. "$(dirname "$0")/sql_check.sh"

# e: NULLIF(int, 1.0) is NUMERIC in PostgreSQL (the comparison's promoted
# left operand), so 0.00; DuckDB keeps INTEGER and prints 0. PostgreSQL wins.
check "nullif: equal gives NULL, else the first operand; NULL operands" \
  "select r_regionkey, nullif(r_regionkey, 2) as a, nullif(r_name, 'ASIA') as b, nullif(r_regionkey, null) as c, nullif(case when r_regionkey < 2 then null else r_regionkey end, 3) as d, nullif(r_regionkey, 1.0) as e from region order by 1" \
"r_regionkey|a|b|c|d|e
0|0|AFRICA|0||0.00
1|1|AMERICA|1||
2|||2|2|2.00
3|3|EUROPE|3||3.00
4|4|MIDDLE EAST|4|4|4.00"

check "is [not] distinct from: NULL equals NULL, never NULL" \
  "select r_regionkey, k, k is distinct from 2 as a, k is not distinct from 2 as b, k is distinct from null as c, k is not distinct from null as d, k is distinct from j as e, k is not distinct from j as f from (select r_regionkey, case when r_regionkey < 2 then null else r_regionkey end as k, case when r_regionkey in (0, 3) then null else r_regionkey end as j from region) t order by 1" \
"r_regionkey|k|a|b|c|d|e|f
0||true|false|false|true|false|true
1||true|false|false|true|true|false
2|2|false|true|true|false|false|true
3|3|true|false|true|false|true|false
4|4|true|false|true|false|false|true"

check "is not distinct from as a join condition on NULL-holding keys (a residual)" \
  "select count(*) from nation n1, nation n2 where case when n1.n_nationkey < 5 then null else n1.n_regionkey end is not distinct from case when n2.n_nationkey < 7 then null else n2.n_regionkey end" \
"count_star()
112"

check "greatest / least: NULL arguments ignored, common type (int with decimal, strings)" \
  "select n_nationkey, greatest(n_nationkey, n_regionkey * 5, 7) as g, least(n_nationkey, n_regionkey * 5, 7) as l, greatest(case when n_nationkey < 5 then null else n_nationkey end, 3) as gn, least(null, case when n_nationkey > 20 then null else n_nationkey end) as ln, greatest(n_name, 'EGYPT') as gs, least(n_nationkey, 2.5) as ld from nation order by 1" \
"n_nationkey|g|l|gn|ln|gs|ld
0|7|0|3|0|EGYPT|0.00
1|7|1|3|1|EGYPT|1.00
2|7|2|3|2|EGYPT|2.00
3|7|3|3|3|EGYPT|2.50
4|20|4|3|4|EGYPT|2.50
5|7|0|5|5|ETHIOPIA|2.50
6|15|6|6|6|FRANCE|2.50
7|15|7|7|7|GERMANY|2.50
8|10|7|8|8|INDIA|2.50
9|10|7|9|9|INDONESIA|2.50
10|20|7|10|10|IRAN|2.50
11|20|7|11|11|IRAQ|2.50
12|12|7|12|12|JAPAN|2.50
13|20|7|13|13|JORDAN|2.50
14|14|0|14|14|KENYA|2.50
15|15|0|15|15|MOROCCO|2.50
16|16|0|16|16|MOZAMBIQUE|2.50
17|17|5|17|17|PERU|2.50
18|18|7|18|18|EGYPT|2.50
19|19|7|19|19|ROMANIA|2.50
20|20|7|20|20|SAUDI ARABIA|2.50
21|21|7|21||VIETNAM|2.50
22|22|7|22||RUSSIA|2.50
23|23|7|23||UNITED KINGDOM|2.50
24|24|5|24||UNITED STATES|2.50"

check "greatest / least of constants: all NULL gives NULL; dates; folded" \
  "select greatest(null, null) is null as a, greatest(1, 2.5, 2) as b, least(date '1995-01-01', date '1994-03-02') as c, greatest(1, 1e3) as d" \
"a|b|c|d
true|2.50|1994-03-02|1000.00"

check "abs of DECIMAL, INTEGER, DOUBLE and NULL" \
  "select c_custkey, abs(c_acctbal) as a, abs(c_custkey - 10) as b, abs(c_acctbal * 1.5e0) as c, abs(-c_nationkey) as d, abs(case when c_custkey < 3 then null else -c_custkey end) as e from customer where c_custkey <= 12 order by 1" \
"c_custkey|a|b|c|d|e
1|711.56|9|1067.34|15|
2|121.65|8|182.48|13|
3|7498.12|7|11247.18|1|3
4|2866.83|6|4300.24|4|4
5|794.47|5|1191.70|3|5
6|7638.57|4|11457.85|20|6
7|9561.95|3|14342.93|18|7
8|6819.74|2|10229.61|17|8
9|8324.07|1|12486.10|8|9
10|2753.54|0|4130.31|5|10
11|272.60|1|408.90|23|11
12|3396.49|2|5094.73|13|12"

check "abs at the edges of INTEGER and BIGINT" \
  "select abs(-2147483647) as a, abs(cast(-9223372036854775807 as bigint)) as b" \
"a|b
2147483647|9223372036854775807"

check "in WHERE (scan filters)" \
  "select count(*) from lineitem where abs(l_extendedprice - 20000) < 1000 and nullif(l_returnflag, 'N') is not null and l_shipmode is distinct from 'AIR'" \
"count_star()
774"

# --- modulo: the sign of the dividend (C, PostgreSQL and DuckDB agree);
# integers stay integers, DECIMALs take the larger scale, DOUBLE is fmod.
check "modulo of integers, DECIMALs and DOUBLEs, negative operands, NULLs" \
  "select n_nationkey, n_nationkey % 7 as a, (n_nationkey - 12) % 5 as b, 17 % (n_nationkey + 1) as c, (n_nationkey * 1.25) % 2.5 as d, (n_nationkey * 1.5e0) % -4 as e, case when n_nationkey < 3 then null else n_nationkey end % 4 as f, n_nationkey::bigint * 1000000000007 % 999 as g, (n_nationkey - 12)::decimal(20,3) % 3.5 as h from nation order by 1" \
"n_nationkey|a|b|c|d|e|f|g|h
0|0|-2|0|0.00|0.00||0|-1.50
1|1|-1|1|1.25|1.50||8|-0.50
2|2|0|2|0.00|3.00||16|-3.00
3|3|-4|1|1.25|0.50|3|24|-2.00
4|4|-3|2|0.00|2.00|0|32|-1.00
5|5|-2|5|1.25|3.50|1|40|0.00
6|6|-1|3|0.00|1.00|2|48|-2.50
7|0|0|1|1.25|2.50|3|56|-1.50
8|1|-4|8|0.00|0.00|0|64|-0.50
9|2|-3|7|1.25|1.50|1|72|-3.00
10|3|-2|6|0.00|3.00|2|80|-2.00
11|4|-1|5|1.25|0.50|3|88|-1.00
12|5|0|4|0.00|2.00|0|96|0.00
13|6|1|3|1.25|3.50|1|104|1.00
14|0|2|2|0.00|1.00|2|112|2.00
15|1|3|1|1.25|2.50|3|120|3.00
16|2|4|0|0.00|0.00|0|128|0.50
17|3|0|17|1.25|1.50|1|136|1.50
18|4|1|17|0.00|3.00|2|144|2.50
19|5|2|17|1.25|0.50|3|152|0.00
20|6|3|17|0.00|2.00|0|160|1.00
21|0|4|17|1.25|3.50|1|168|2.00
22|1|0|17|0.00|1.00|2|176|3.00
23|2|1|17|1.25|2.50|3|184|0.50
24|3|2|17|0.00|0.00|0|192|1.50"
# PostgreSQL gives 0 for the smallest BIGINT % -1; DuckDB an overflow error.
check "modulo by -1 of the smallest BIGINT is 0 (no overflow)" \
  "select (cast(-9223372036854775807 as bigint) - 1) % 7 as a, (cast(-9223372036854775807 as bigint) - 1) % -1 as b" \
"a|b
-1|0"

# --- division: PostgreSQL's. Integers divide as integers, truncated toward
# zero (7 / 2 = 3, -12 / 5 = -2); with a DECIMAL or DOUBLE operand the
# quotient is DOUBLE. Expected rows: DuckDB's integer division operator //
# for the integer columns (DuckDB's / on integers gives DOUBLE), its / for d, e.
check "division of integers truncates (PostgreSQL); DECIMAL and DOUBLE divide as DOUBLE" \
  "select n_nationkey, n_nationkey / 7 as a, (n_nationkey - 12) / 5 as b, 17 / (n_nationkey + 1) as c, (n_nationkey * 1.25) / 2.5 as d, (n_nationkey * 1.5e0) / -4 as e, case when n_nationkey < 3 then null else n_nationkey end / 4 as f, n_nationkey::bigint * 1000000000007 / -999 as g, (n_nationkey - 12) / -1 as h from nation order by 1" \
"n_nationkey|a|b|c|d|e|f|g|h
0|0|-2|17|0.00|0.00||0|12
1|0|-2|8|0.50|-0.38||-1001001001|11
2|0|-2|5|1.00|-0.75||-2002002002|10
3|0|-1|4|1.50|-1.13|0|-3003003003|9
4|0|-1|3|2.00|-1.50|1|-4004004004|8
5|0|-1|2|2.50|-1.88|1|-5005005005|7
6|0|-1|2|3.00|-2.25|1|-6006006006|6
7|1|-1|2|3.50|-2.63|1|-7007007007|5
8|1|0|1|4.00|-3.00|2|-8008008008|4
9|1|0|1|4.50|-3.38|2|-9009009009|3
10|1|0|1|5.00|-3.75|2|-10010010010|2
11|1|0|1|5.50|-4.13|2|-11011011011|1
12|1|0|1|6.00|-4.50|3|-12012012012|0
13|1|0|1|6.50|-4.88|3|-13013013013|-1
14|2|0|1|7.00|-5.25|3|-14014014014|-2
15|2|0|1|7.50|-5.63|3|-15015015015|-3
16|2|0|1|8.00|-6.00|4|-16016016016|-4
17|2|1|0|8.50|-6.38|4|-17017017017|-5
18|2|1|0|9.00|-6.75|4|-18018018018|-6
19|2|1|0|9.50|-7.13|4|-19019019019|-7
20|2|1|0|10.00|-7.50|5|-20020020020|-8
21|3|1|0|10.50|-7.88|5|-21021021021|-9
22|3|2|0|11.00|-8.25|5|-22022022022|-10
23|3|2|0|11.50|-8.63|5|-23023023023|-11
24|3|2|0|12.00|-9.00|6|-24024024024|-12"
check "division: constants fold the same way; a NULL operand gives NULL" \
  "select 7 / 2 as a, -7 / 2 as b, 7 / -2 as c, 9223372036854775807 / 2 as d, 7.0 / 2 as e, 1 / null as f, null / 0 as g" \
"a|b|c|d|e|f|g
3|-3|-3|4611686018427387903|3.50||"

# --- errors (PostgreSQL: "integer out of range", "bigint out of range")
refused "abs of the smallest INTEGER overflows" \
  "select abs(x) from (select cast(-2147483647 as integer) - 1 as x) t" "overflow"
refused "abs of the smallest BIGINT overflows" \
  "select abs(x) from (select cast(-9223372036854775807 as bigint) - 1 as x) t" "overflow"
# PostgreSQL: "division by zero" (DuckDB gives NULL), also for DOUBLE
refused "modulo by zero (INTEGER)" "select n_nationkey % (n_regionkey - 2) from nation" "division by zero in INTEGER modulo: 8 % 0"
refused "modulo by zero (DOUBLE)" "select sum(n_nationkey * 1.5e0 % (n_regionkey - 2)) from nation" "division by zero in DOUBLE modulo: 12.0 % 0"
refused "modulo by a zero constant" "select 7 % 0" "division by zero"
refused "division by zero (INTEGER)" "select n_nationkey / (n_regionkey - 2) from nation" "division by zero in INTEGER division: 8 / 0"
refused "division by zero (DOUBLE)" "select sum(n_nationkey * 1.5e0 / (n_regionkey - 2)) from nation" "division by zero in DOUBLE division: 12.0 / 0"
refused "division by zero (DECIMAL, as DOUBLE)" "select 1.5 / 0" "division by zero"
refused "division by a zero constant" "select 7 / 0" "division by zero in INTEGER division: 7 / 0"
refused "the smallest INTEGER / -1 overflows (PostgreSQL: integer out of range)" "select cast(-2147483647 as integer) - 1 / -1 + (cast(-2147483647 as integer) - 1) / -1" "overflow in INTEGER division: -2147483648 / -1"
refused "the smallest BIGINT / -1 overflows" "select (cast(-9223372036854775807 as bigint) - 1) / -1" "overflow in BIGINT division: -9223372036854775808 / -1"
refused "modulo of a DATE" "select o_orderdate % 2 from orders" "arithmetic"
refused "abs of a string" "select abs(r_name) from region" "abs needs a number"
refused "greatest of a boolean and a number" "select greatest(true, 1)" "GREATEST: cannot compare BOOLEAN with INTEGER"
refused "least of 11 arguments" "select least(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)" "not supported"

[ $fail -eq 0 ] && echo PASS || echo FAIL
exit $fail
