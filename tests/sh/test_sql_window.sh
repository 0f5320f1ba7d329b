#!/usr/bin/env bash
# Window functions: ranking (row_number, rank, dense_rank, percent_rank,
# cume_dist, ntile), lag/lead with offsets and defaults, first/last/nth_value,
# and count/sum/avg/min/max/bool_and/bool_or over ROWS and RANGE frames
# (UNBOUNDED / n PRECEDING / CURRENT ROW / n FOLLOWING), FILTER, named
# windows, windows over aggregates, in ORDER BY, under DISTINCT and UNION;
# DISTINCT ON, which is planned as a window; the ordered-set aggregates and
# string_agg, which are planned as windows too.
# Large results are checked through aggregates of every row's values.
# Expected rows from DuckDB 1.5.6 (tests/oracle/oracle.mjs); the refusals
# use PostgreSQL's messages where it has them.
set -u
. "$(dirname "$0")/sql_check.sh"

check "ranking, lag/lead with default, partition sums" \
  "select n_regionkey, n_nationkey, row_number() over (partition by n_regionkey order by n_nationkey) rn, rank() over (order by n_regionkey) rk, dense_rank() over (order by n_regionkey) dr, sum(n_nationkey) over (partition by n_regionkey) s, lag(n_name) over (partition by n_regionkey order by n_nationkey) lg, lead(n_nationkey, 2, -1) over (partition by n_regionkey order by n_nationkey) ld from nation order by 1, 2" \
"n_regionkey|n_nationkey|rn|rk|dr|s|lg|ld
0|0|1|1|1|50||14
0|5|2|1|1|50|ALGERIA|15
0|14|3|1|1|50|ETHIOPIA|16
0|15|4|1|1|50|KENYA|-1
0|16|5|1|1|50|MOROCCO|-1
1|1|1|6|2|47||3
1|2|2|6|2|47|ARGENTINA|17
1|3|3|6|2|47|BRAZIL|24
1|17|4|6|2|47|CANADA|-1
1|24|5|6|2|47|PERU|-1
2|8|1|11|3|68||12
2|9|2|11|3|68|INDIA|18
2|12|3|11|3|68|INDONESIA|21
2|18|4|11|3|68|JAPAN|-1
2|21|5|11|3|68|CHINA|-1
3|6|1|16|4|77||19
3|7|2|16|4|77|FRANCE|22
3|19|3|16|4|77|GERMANY|23
3|22|4|16|4|77|ROMANIA|-1
3|23|5|16|4|77|RUSSIA|-1
4|4|1|21|5|58||11
4|10|2|21|5|58|EGYPT|13
4|11|3|21|5|58|IRAN|20
4|13|4|21|5|58|IRAQ|-1
4|20|5|21|5|58|JORDAN|-1"

check "running sum (default frame), count per partition, moving average over ROWS" \
  "select count(*), sum(run), sum(cnt), sum(cast(mv as decimal(18,2))) smv, min(mv), max(run) from (select o_custkey, o_orderkey, sum(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey) run, count(*) over (partition by o_custkey) cnt, avg(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey rows between 1 preceding and 1 following) mv from orders) t" \
"count_star()|sum(run)|sum(cnt)|smv|min(mv)|max(run)
15000|19834993583.06|263420|2126059696.01|6896.94|5408941.28"

check "running sum rows in full (a few customers)" \
  "select o_custkey, o_orderkey, sum(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey) run, avg(o_totalprice) over (partition by o_custkey order by o_orderdate, o_orderkey rows between 1 preceding and 1 following) mv from orders where o_custkey < 8 order by 1, 2" \
"o_custkey|o_orderkey|run|mv
1|9154|1311043.75|218677.58
1|14656|1339643.58|158391.77
1|24322|683610.85|222352.07
1|31653|152411.41|117753.63
1|34019|1428873.61|58914.93
1|36422|953698.29|286157.78
1|43879|235507.26|95547.36
1|52263|286642.08|100053.00
1|53283|452570.41|149367.86
2|6980|170842.93|162855.01
2|10563|469417.72|138274.12
2|16129|1156504.92|43667.71
2|20257|813198.76|143034.01
2|28167|1106326.48|47245.87
2|29408|325710.02|156472.57
2|29956|585665.29|101871.05
2|38276|1014767.31|145948.78
2|40070|1069169.51|97709.24
2|44962|631323.16|114593.68
4|320|3465955.43|136923.99
4|739|4084144.83|152912.60
4|6532|1803218.29|96652.46
4|10688|173613.75|149731.61
4|10788|2458847.28|162986.89
4|13728|1673986.08|95031.20
4|14947|1488983.72|103227.15
4|15395|1840220.93|113265.64
4|20386|775135.57|121537.50
4|22466|130160.51|86806.88
4|24416|2311080.20|148354.76
4|25280|1323865.27|160122.46
4|25893|3415752.83|138882.39
4|26407|449194.82|119410.62
4|26722|2013782.99|107783.29
4|26852|853004.86|101574.10
4|28417|3675829.59|147461.07
4|29574|2126568.16|156953.09
4|34755|2615528.84|181903.88
4|36386|1008616.33|118479.46
4|38117|1001787.19|77826.92
4|41600|3049308.27|216509.59
4|44486|488392.36|174483.71
4|46951|1550263.56|61667.45
4|54018|4134567.39|138215.68
4|54404|3858136.03|206063.13
4|54722|697064.89|108646.92
4|56196|1208443.25|107359.36
4|58146|2856791.85|196820.33
4|59079|1518124.69|75466.10
4|59140|3265057.62|186320.33
5|7141|706588.52|185970.45
5|8260|281494.53|99216.30
5|11682|435083.27|151697.72
5|11746|1084042.74|122318.43
5|14308|839405.88|157199.64
5|18725|251495.35|65141.19
5|44129|906682.20|125818.07
5|52673|86070.96|68717.18
5|54886|137434.36|83831.78
7|10402|3922020.98|95626.76
7|13031|721889.78|110232.36
7|14145|3625504.95|171116.01
7|14404|3054282.76|228030.24
7|18435|2360306.74|181145.96
7|19841|1445515.79|162263.81
7|23011|1109737.02|157623.84
7|24609|1596528.44|186302.30
7|33443|295983.33|141770.66
7|33701|1753668.19|131568.29
7|35844|1840220.65|131120.79
7|37634|425311.99|83462.90
7|38497|1194761.29|229835.58
7|38759|2699396.95|231325.34
7|42725|1989890.82|141627.43
7|44868|3354753.54|190407.40
7|44934|756009.06|208481.02
7|48739|3730767.46|165763.67
7|50592|3217419.44|218452.20
7|52288|2178550.47|173362.03
7|52903|2533328.71|173615.49
7|53957|3852044.55|98838.68
7|54855|484293.95|141968.82
7|57767|233905.25|147991.67"

check "percent_rank, cume_dist, ntile" \
  "select o_orderpriority, count(*), sum(cast(pr as decimal(18,6))) spr, sum(cast(cd as decimal(18,6))) scd, sum(nt), max(nt), min(pr) from (select o_orderpriority, percent_rank() over (partition by o_orderpriority order by o_totalprice) pr, cume_dist() over (partition by o_orderpriority order by o_orderdate) cd, ntile(7) over (partition by o_orderpriority order by o_orderkey) nt from orders) t group by 1 order by 1" \
"o_orderpriority|count_star()|spr|scd|sum(nt)|max(nt)|min(pr)
1-URGENT|3020|1510.00|1511.12|12074|7|0.00
2-HIGH|3065|1532.50|1533.62|12257|7|0.00
3-MEDIUM|2941|1470.50|1471.62|11761|7|0.00
4-NOT SPECIFIED|3024|1512.00|1513.12|12096|7|0.00
5-LOW|2950|1475.00|1476.12|11794|7|0.00"

check "ntile with more buckets than rows, and uneven buckets" \
  "select n_nationkey, ntile(30) over (order by n_nationkey) a, ntile(4) over (order by n_nationkey) b, ntile(1) over () c from nation order by 1" \
"n_nationkey|a|b|c
0|1|1|1
1|2|1|1
2|3|1|1
3|4|1|1
4|5|1|1
5|6|1|1
6|7|1|1
7|8|2|1
8|9|2|1
9|10|2|1
10|11|2|1
11|12|2|1
12|13|2|1
13|14|3|1
14|15|3|1
15|16|3|1
16|17|3|1
17|18|3|1
18|19|3|1
19|20|4|1
20|21|4|1
21|22|4|1
22|23|4|1
23|24|4|1
24|25|4|1"

check "first/last/nth_value and min/max over a whole-partition frame (named window)" \
  "select l_orderkey, l_linenumber, first_value(l_quantity) over w fv, last_value(l_quantity) over w lv, nth_value(l_partkey, 2) over w nv, min(l_shipmode) over w mn, max(l_extendedprice) over w mx from lineitem where l_orderkey < 40 window w as (partition by l_orderkey order by l_linenumber rows between unbounded preceding and unbounded following) order by 1, 2" \
"l_orderkey|l_linenumber|fv|lv|nv|mn|mx
1|1|17.00|32.00|674|AIR|56688.12
1|2|17.00|32.00|674|AIR|56688.12
1|3|17.00|32.00|674|AIR|56688.12
1|4|17.00|32.00|674|AIR|56688.12
1|5|17.00|32.00|674|AIR|56688.12
1|6|17.00|32.00|674|AIR|56688.12
2|1|38.00|38.00||RAIL|36596.28
3|1|45.00|26.00|191|AIR|53468.31
3|2|45.00|26.00|191|AIR|53468.31
3|3|45.00|26.00|191|AIR|53468.31
3|4|45.00|26.00|191|AIR|53468.31
3|5|45.00|26.00|191|AIR|53468.31
3|6|45.00|26.00|191|AIR|53468.31
4|1|30.00|30.00||REG AIR|53456.40
5|1|15.00|50.00|1240|AIR|63818.50
5|2|15.00|50.00|1240|AIR|63818.50
5|3|15.00|50.00|1240|AIR|63818.50
6|1|37.00|37.00||TRUCK|48040.43
7|1|12.00|5.00|1453|FOB|85051.24
7|2|12.00|5.00|1453|FOB|85051.24
7|3|12.00|5.00|1453|FOB|85051.24
7|4|12.00|5.00|1453|FOB|85051.24
7|5|12.00|5.00|1453|FOB|85051.24
7|6|12.00|5.00|1453|FOB|85051.24
7|7|12.00|5.00|1453|FOB|85051.24
32|1|28.00|6.00|1980|AIR|77433.40
32|2|28.00|6.00|1980|AIR|77433.40
32|3|28.00|6.00|1980|AIR|77433.40
32|4|28.00|6.00|1980|AIR|77433.40
32|5|28.00|6.00|1980|AIR|77433.40
32|6|28.00|6.00|1980|AIR|77433.40
33|1|31.00|41.00|606|AIR|50853.94
33|2|31.00|41.00|606|AIR|50853.94
33|3|31.00|41.00|606|AIR|50853.94
33|4|31.00|41.00|606|AIR|50853.94
34|1|13.00|6.00|895|FOB|39509.58
34|2|13.00|6.00|895|FOB|39509.58
34|3|13.00|6.00|895|FOB|39509.58
35|1|24.00|28.00|1620|FOB|51735.08
35|2|24.00|28.00|1620|FOB|51735.08
35|3|24.00|28.00|1620|FOB|51735.08
35|4|24.00|28.00|1620|FOB|51735.08
35|5|24.00|28.00|1620|FOB|51735.08
35|6|24.00|28.00|1620|FOB|51735.08
36|1|42.00|42.00||SHIP|46165.98
37|1|40.00|43.00|1268|RAIL|45601.14
37|2|40.00|43.00|1268|RAIL|45601.14
37|3|40.00|43.00|1268|RAIL|45601.14
38|1|44.00|44.00||MAIL|73073.00
39|1|44.00|40.00|1866|AIR|73797.60
39|2|44.00|40.00|1866|AIR|73797.60
39|3|44.00|40.00|1866|AIR|73797.60
39|4|44.00|40.00|1866|AIR|73797.60
39|5|44.00|40.00|1866|AIR|73797.60
39|6|44.00|40.00|1866|AIR|73797.60"

check "the default frame ends at the current row's last peer" \
  "select l_orderkey, l_linenumber, first_value(l_quantity) over w fv, last_value(l_quantity) over w lv, min(l_comment) over w mn, count(l_quantity) over w c from lineitem where l_orderkey < 40 window w as (partition by l_orderkey order by l_linenumber) order by 1, 2" \
"l_orderkey|l_linenumber|fv|lv|mn|c
1|1|17.00|17.00|egular courts above the|1
1|2|17.00|36.00|egular courts above the|2
1|3|17.00|8.00|egular courts above the|3
1|4|17.00|28.00|egular courts above the|4
1|5|17.00|24.00| pending foxes. slyly re|5
1|6|17.00|32.00| pending foxes. slyly re|6
2|1|38.00|38.00|ven requests. deposits breach a|1
3|1|45.00|45.00|ongside of the furiously brave acco|1
3|2|45.00|49.00| unusual accounts. eve|2
3|3|45.00|27.00| unusual accounts. eve|3
3|4|45.00|2.00| unusual accounts. eve|4
3|5|45.00|28.00| unusual accounts. eve|5
3|6|45.00|26.00| unusual accounts. eve|6
4|1|30.00|30.00|- quickly regular packages sleep. idly|1
5|1|15.00|15.00|ts wake furiously |1
5|2|15.00|26.00|sts use slyly quickly special instruc|2
5|3|15.00|50.00|eodolites. fluffily unusual|3
6|1|37.00|37.00|p furiously special foxes|1
7|1|12.00|12.00|ss pinto beans wake against th|1
7|2|12.00|9.00|es. instructions|2
7|3|12.00|46.00| unusual reques|3
7|4|12.00|28.00| unusual reques|4
7|5|12.00|38.00| unusual reques|5
7|6|12.00|35.00| unusual reques|6
7|7|12.00|5.00| unusual reques|7
32|1|28.00|28.00|sleep quickly. req|1
32|2|28.00|32.00|lithely regular deposits. fluffily |2
32|3|28.00|2.00| express accounts wake according to the|3
32|4|28.00|4.00| express accounts wake according to the|4
32|5|28.00|44.00| express accounts wake according to the|5
32|6|28.00|6.00| express accounts wake according to the|6
33|1|31.00|31.00|ng to the furiously ironic package|1
33|2|31.00|32.00|gular theodolites|2
33|3|31.00|5.00|. stealthily bold exc|3
33|4|31.00|41.00|. stealthily bold exc|4
34|1|13.00|13.00|nic accounts. deposits are alon|1
34|2|13.00|22.00|nic accounts. deposits are alon|2
34|3|13.00|6.00|ar foxes sleep |3
35|1|24.00|24.00|, regular tithe|1
35|2|24.00|34.00|, regular tithe|2
35|3|24.00|7.00| the carefully regular |3
35|4|24.00|25.00| quickly unti|4
35|5|24.00|34.00| quickly unti|5
35|6|24.00|28.00| quickly unti|6
36|1|42.00|42.00| careful courts. special |1
37|1|40.00|40.00|luffily regular requests. slyly final acco|1
37|2|40.00|39.00|luffily regular requests. slyly final acco|2
37|3|40.00|43.00|iously ste|3
38|1|44.00|44.00|s. blithely unusual theodolites am|1
39|1|44.00|44.00|eodolites. careful|1
39|2|44.00|26.00|ckages across the slyly silent|2
39|3|44.00|46.00|ckages across the slyly silent|3
39|4|44.00|32.00|ckages across the slyly silent|4
39|5|44.00|43.00|ckages across the slyly silent|5
39|6|44.00|40.00|ckages across the slyly silent|6"

check "RANGE offsets over a DECIMAL key, both directions" \
  "select count(*), sum(s), sum(c), min(s), max(c) from (select sum(o_totalprice) over (order by o_totalprice range between 1000 preceding and 500 following) s, count(*) over (order by o_totalprice desc range between 2000 preceding and current row) c from orders) t" \
"count_star()|sum(s)|sum(c)|min(s)|max(c)
15000|148079403319.44|1542107|20089.02|156"

check "RANGE offsets over an integer key: both sides, CURRENT ROW to n FOLLOWING descending, UNBOUNDED to n PRECEDING" \
  "select o_orderkey, o_custkey, sum(o_custkey) over (order by o_custkey range between 5 preceding and 5 following) s, count(*) over (order by o_custkey desc range between current row and 10 following) c, max(o_orderkey) over (order by o_custkey range between unbounded preceding and 3 preceding) m from orders where o_orderkey < 300 order by 1" \
"o_orderkey|o_custkey|s|c|m
1|370|740|2|295
2|781|781|1|295
3|1234|1234|2|295
4|1369|1369|1|295
5|445|1327|3|295
6|557|557|1|295
7|392|392|1|295
32|1301|1301|2|295
33|670|670|1|295
34|611|611|2|295
35|1276|2552|2|295
36|1153|1153|1|295
37|862|862|1|295
38|1249|2498|2|295
39|818|818|1|295
64|322|648|1|295
65|163|330|1|288
66|1292|1292|1|295
67|568|568|1|295
68|286|286|2|295
69|845|845|1|295
70|644|1293|1|295
71|34|34|2|224
96|1078|2157|1|295
97|211|211|1|295
98|1045|2093|2|295
99|890|890|1|295
100|1471|1471|1|295
101|280|280|2|295
102|8|16|2|
103|292|292|2|295
128|740|740|1|295
129|712|712|1|295
130|370|740|2|295
131|928|928|1|295
132|265|265|1|295
133|440|1327|2|295
134|62|62|1|224
135|605|605|1|295
160|826|1652|3|295
161|167|330|2|288
162|142|142|1|288
163|878|878|1|295
164|8|16|2|
165|274|274|2|295
166|1079|2157|2|295
167|1195|1195|1|295
192|826|1652|3|295
193|791|791|2|295
194|619|619|2|295
195|1355|1355|1|295
196|649|1293|2|295
197|326|979|2|295
198|1103|1103|1|295
199|530|530|1|295
224|25|25|1|164
225|331|657|3|295
226|1276|2552|2|295
227|100|100|1|288
228|442|1327|3|295
229|1118|1118|1|295
230|1027|1027|1|295
231|910|910|1|295
256|1249|2498|2|295
257|1228|1228|1|295
258|419|419|1|295
259|433|433|1|295
260|1048|2093|3|295
261|461|461|1|295
262|304|605|2|295
263|1162|1162|2|295
288|71|71|2|224
289|1039|1039|1|295
290|1180|1180|1|295
291|1411|1411|1|295
292|223|223|1|295
293|301|605|2|295
294|505|505|1|295
295|190|190|1|288"

check "RANGE with fractional offsets over DECIMAL and DOUBLE keys" \
  "select ps_partkey, ps_suppkey, sum(ps_availqty) over (order by ps_supplycost range between 100.5 preceding and 100.25 following) s, avg(ps_supplycost) over (order by cast(ps_supplycost as double) range between 2.5 preceding and current row) a from partsupp where ps_partkey < 30 order by 1, 2" \
"ps_partkey|ps_suppkey|s|a
1|2|117518|771.64
1|27|81994|993.49
1|52|113138|337.07
1|77|115699|357.84
2|3|123590|378.49
2|28|140071|915.27
2|53|91495|438.37
2|78|132583|306.12
3|4|136363|919.72
3|29|72197|498.13
3|54|131241|645.40
3|79|112188|191.92
4|5|121498|113.97
4|30|113073|591.18
4|55|76827|50.95
4|80|91495|444.19
5|6|130591|255.88
5|31|73420|50.52
5|56|120994|219.83
5|81|83682|537.98
6|7|132672|130.72
6|32|106692|424.25
6|57|128789|642.13
6|82|116179|175.32
7|8|135784|763.98
7|33|148540|149.66
7|58|91598|68.77
7|83|133759|299.58
8|9|136768|249.63
8|34|110585|957.34
8|59|120994|220.22
8|84|140071|916.09
9|10|98661|84.20
9|35|126528|811.84
9|60|123590|381.31
9|85|143701|291.84
10|11|73589|995.74
10|36|137199|673.27
10|61|119443|164.00
10|86|123590|374.02
11|12|133945|709.51
11|37|139612|894.14
11|62|141114|818.74
11|87|86130|471.98
12|13|129553|659.73
12|38|123036|332.81
12|63|113138|337.06
12|88|147613|901.70
13|14|116179|169.44
13|39|142809|862.70
13|64|67530|38.64
13|89|123036|327.18
14|15|132676|649.41
14|40|131536|888.51
14|65|139612|892.79
14|90|132583|310.13
15|16|145634|835.70
15|41|106236|784.55
15|66|127723|265.89
15|91|90831|458.67
16|17|133945|709.16
16|42|131536|887.53
16|67|111256|781.91
16|92|140071|917.71
17|18|78318|994.42
17|43|132676|648.75
17|68|90820|555.04
17|93|91598|63.27
18|19|137007|664.17
18|44|76827|51.52
18|69|104702|568.61
18|94|123590|386.29
19|20|141706|144.80
19|45|115160|405.70
19|70|135714|635.66
19|95|126268|346.92
20|21|137199|674.40
20|46|132583|305.84
20|71|77805|546.66
20|96|121498|114.93
21|22|110585|944.44
21|47|142570|139.05
21|72|137007|664.34
21|97|112771|584.86
22|23|106236|785.37
22|48|135714|635.75
22|73|120954|358.50
22|98|123019|597.21
23|24|82997|459.39
23|49|114855|103.13
23|74|129485|233.94
23|99|76827|51.21
24|25|147613|905.41
24|50|66730|511.20
24|75|107751|582.03
24|100|85907|62.15
25|1|145141|745.58
25|26|154827|832.74
25|51|126661|928.96
25|76|131873|694.35
26|2|145765|821.89
26|27|130871|683.96
26|52|131536|892.20
26|77|123590|381.71
27|3|126268|347.76
27|28|91495|444.01
27|53|124761|157.03
27|78|138887|150.50
28|4|137007|665.07
28|29|115909|204.86
28|54|149058|744.57
28|79|138250|690.30
29|5|109125|186.21
29|30|125716|799.27
29|55|103317|981.33
29|80|163926|734.44"

check "windows over aggregates: share of the total, rank of a group, ROWS over groups" \
  "select c_nationkey, count(*) n, sum(count(*)) over () total, rank() over (order by count(*) desc, c_nationkey) r, sum(sum(c_acctbal)) over (order by c_nationkey rows 2 preceding) s3 from customer group by c_nationkey order by 1" \
"c_nationkey|n|total|r|s3
0|61|1500|11|248180.19
1|59|1500|13|534383.53
2|68|1500|4|781583.80
3|69|1500|3|817415.60
4|66|1500|7|803692.40
5|57|1500|18|758253.10
6|36|1500|25|614904.31
7|57|1500|19|586389.83
8|60|1500|12|658630.68
9|66|1500|8|846080.61
10|72|1500|1|905001.32
11|58|1500|15|898562.55
12|67|1500|5|902934.50
13|54|1500|22|826092.11
14|50|1500|23|803584.56
15|72|1500|2|865981.31
16|62|1500|10|924195.38
17|56|1500|20|920011.48
18|58|1500|16|816992.70
19|64|1500|9|784960.97
20|67|1500|6|912300.73
21|58|1500|17|893739.49
22|59|1500|14|896484.09
23|56|1500|21|742656.97
24|48|1500|24|675636.88"

check "top 2 per group from a derived table" \
  "select * from (select o_custkey, o_orderkey, row_number() over (partition by o_custkey order by o_totalprice desc) rn from orders) t where rn <= 2 and o_custkey < 30 order by 1, 3" \
"o_custkey|o_orderkey|rn
1|9154|1
1|36422|2
2|38276|1
2|20257|2
4|26407|1
4|58146|2
5|7141|1
5|11746|2
7|14404|1
7|23011|2
8|13601|1
8|164|2
10|17668|1
10|21729|2
11|12800|1
11|31492|2
13|6022|1
13|26241|2
14|11011|1
14|41892|2
16|39937|1
16|40800|2
17|896|1
17|32226|2
19|17056|1
19|39174|2
20|18151|1
20|53959|2
22|31974|1
22|57254|2
23|358|1
23|40864|2
25|42914|1
25|38023|2
26|10149|1
26|4451|2
28|57475|1
28|29505|2
29|42212|1
29|3623|2"

check "two partition keys" \
  "select l_returnflag, l_linestatus, count(*), sum(q), max(q) from (select l_returnflag, l_linestatus, sum(l_quantity) over (partition by l_returnflag, l_linestatus order by l_shipdate) q from lineitem) t group by 1, 2 order by 1, 2" \
"l_returnflag|l_linestatus|count_star()|sum(q)|max(q)
A|F|14876|2822216574.00|380456.00
N|F|348|1622218.00|8971.00
N|O|30049|11516486603.00|765251.00
R|F|14902|2844914060.00|381449.00"

check "lag of a DECIMAL, lead of a VARCHAR with a default, lag by 0" \
  "select s_suppkey, lag(s_acctbal, 3) over (order by s_suppkey) l3, lead(s_name, 1, 'none') over (order by s_suppkey) l1, lag(s_suppkey, 0) over (order by s_suppkey) l0 from supplier where s_suppkey > 80 order by 1" \
"s_suppkey|l3|l1|l0
81||Supplier#000000082|81
82||Supplier#000000083|82
83||Supplier#000000084|83
84|166.32|Supplier#000000085|84
85|-724.31|Supplier#000000086|85
86|1467.77|Supplier#000000087|86
87|4780.93|Supplier#000000088|87
88|7174.74|Supplier#000000089|88
89|1883.37|Supplier#000000090|89
90|4746.66|Supplier#000000091|90
91|3086.13|Supplier#000000092|91
92|1638.02|Supplier#000000093|92
93|6201.77|Supplier#000000094|93
94|6255.87|Supplier#000000095|94
95|2470.84|Supplier#000000096|95
96|368.76|Supplier#000000097|96
97|2766.80|Supplier#000000098|97
98|2588.83|Supplier#000000099|98
99|3437.24|Supplier#000000100|99
100|6642.22|none|100"

check "FILTER on window aggregates" \
  "select p_type, count(*), sum(cast(a as decimal(18,4))) sa, sum(sf), sum(cf) from (select p_type, avg(p_retailprice) over (partition by p_type) a, sum(p_size) filter (where p_size > 20) over (partition by p_type) sf, count(*) filter (where p_size < 10) over (partition by p_type) cf from part) t group by 1 order by 1 limit 12" \
"p_type|count_star()|sa|sum(sf)|sum(cf)
ECONOMY ANODIZED BRASS|14|17685.01|3934|28
ECONOMY ANODIZED COPPER|17|23526.13|7378|17
ECONOMY ANODIZED NICKEL|7|9552.21|1015|7
ECONOMY ANODIZED STEEL|12|15963.10|2700|36
ECONOMY ANODIZED TIN|14|17967.30|3080|70
ECONOMY BRUSHED BRASS|9|14091.94|1719|18
ECONOMY BRUSHED COPPER|18|25178.88|8082|72
ECONOMY BRUSHED NICKEL|11|14358.39|1804|33
ECONOMY BRUSHED STEEL|17|24333.93|4811|68
ECONOMY BRUSHED TIN|14|18623.93|4172|42
ECONOMY BURNISHED BRASS|12|16122.25|2376|12
ECONOMY BURNISHED COPPER|13|17626.85|4004|26"

check "NULLs in partition and order keys, NULLS FIRST, RANGE around NULL keys" \
  "select k, v, sum(v) over (partition by k order by v) s, row_number() over (partition by k order by v nulls first, i) rn, count(v) over (order by v range between 1 preceding and 1 following) c, first_value(i) over (order by v desc nulls last, i) f from (select case when n_nationkey % 4 = 0 then null else n_regionkey end k, case when n_nationkey % 3 = 0 then null else n_nationkey % 7 end v, n_nationkey i from nation) t order by i" \
"k|v|s|rn|c|f
||13|1|0|13
1|1|1|2|8|13
1|2|3|3|8|13
1||6|1|0|13
|4|7|6|6|13
0|5|5|3|6|13
3||8|1|0|13
3|0|0|2|5|13
|1|1|4|8|13
2|||1|0|13
4|3|3|1|7|13
4|4|7|2|6|13
||13|2|0|13
4|6|13|3|4|13
0|0|0|2|5|13
0||5|1|0|13
|2|3|5|8|13
1|3|6|4|7|13
2|||2|0|13
3|5|8|5|6|13
|6|13|7|4|13
2|||3|0|13
3|1|1|3|8|13
3|2|3|4|8|13
||13|3|0|13"

check "ROWS frames before, after and around the row" \
  "select n_nationkey, sum(n_nationkey) over (order by n_nationkey rows between 2 following and 4 following) a, sum(n_nationkey) over (order by n_nationkey rows between 3 preceding and 1 preceding) b, sum(n_nationkey) over (order by n_nationkey rows between current row and unbounded following) c, count(*) over (order by n_nationkey rows between 30 preceding and 40 following) d from nation order by 1" \
"n_nationkey|a|b|c|d
0|9||300|25
1|12|0|300|25
2|15|1|299|25
3|18|3|297|25
4|21|6|294|25
5|24|9|290|25
6|27|12|285|25
7|30|15|279|25
8|33|18|272|25
9|36|21|264|25
10|39|24|255|25
11|42|27|245|25
12|45|30|234|25
13|48|33|222|25
14|51|36|209|25
15|54|39|195|25
16|57|42|180|25
17|60|45|164|25
18|63|48|147|25
19|66|51|129|25
20|69|54|110|25
21|47|57|90|25
22|24|60|69|25
23||63|47|25
24||66|24|25"

check "a window in ORDER BY, DISTINCT over window values" \
  "select n_name, rank() over (order by n_regionkey) r from nation order by rank() over (order by n_regionkey) desc, n_name limit 7" \
"n_name|r
EGYPT|21
IRAN|21
IRAQ|21
JORDAN|21
SAUDI ARABIA|21
FRANCE|16
GERMANY|16"

check "DISTINCT over window values" \
  "select distinct n_regionkey, count(*) over (partition by n_regionkey) c from nation order by 1" \
"n_regionkey|c
0|5
1|5
2|5
3|5
4|5"

check "windows in a UNION ALL branch" \
  "select n_regionkey, sum(n_nationkey) over (partition by n_regionkey) s, row_number() over (partition by n_regionkey order by n_name desc) r from nation union all select r_regionkey, 0, 0 from region order by 1, 2, 3" \
"n_regionkey|s|r
0|0|0
0|50|1
0|50|2
0|50|3
0|50|4
0|50|5
1|0|0
1|47|1
1|47|2
1|47|3
1|47|4
1|47|5
2|0|0
2|68|1
2|68|2
2|68|3
2|68|4
2|68|5
3|0|0
3|77|1
3|77|2
3|77|3
3|77|4
3|77|5
4|0|0
4|58|1
4|58|2
4|58|3
4|58|4
4|58|5"

check "bool_and / bool_or over partitions; no rows" \
  "select n_regionkey, bool_and(n_nationkey > 3) over (partition by n_regionkey) a, bool_or(n_nationkey > 20) over (partition by n_regionkey) o from nation where n_nationkey < 12 order by 1, 2, 3" \
"n_regionkey|a|o
0|false|false
0|false|false
1|false|false
1|false|false
1|false|false
2|true|false
2|true|false
3|true|false
3|true|false
4|true|false
4|true|false
4|true|false"

check "empty input" \
  "select o_orderkey, row_number() over (order by o_orderkey) rn from orders where o_orderkey < 0" \
"o_orderkey|rn"

check "partition by an expression; string min over a growing frame" \
  "select count(*), sum(c), sum(s), min(m), max(m) from (select count(*) over (order by o_orderdate) c, sum(o_totalprice) over (partition by extract(year from o_orderdate) order by o_orderdate, o_orderkey) s, min(o_clerk) over (partition by o_orderstatus order by o_orderkey) m from orders) t" \
"count_star()|sum(c)|sum(s)|min(m)|max(m)
15000|112553745|2326579788589.48|Clerk#000000001|Clerk#000000955"

check "every line of lineitem: running sum and ROWS average by supplier" \
  "select count(*), sum(s), sum(cast(a as decimal(18,6))) sa, max(s) from (select sum(l_extendedprice) over (order by l_orderkey, l_linenumber) s, avg(l_discount) over (partition by l_suppkey order by l_orderkey, l_linenumber rows between 3 preceding and current row) a from lineitem) t" \
"count_star()|sum(s)|sa|max(s)
60175|64690845740926.70|3005.20|2152189760.47"

check "min/max of strings and lag of a long string over all rows without keys" \
  "select count(*), min(m), max(x), sum(length(lc)) from (select min(l_comment) over () m, max(l_shipinstruct) over (partition by l_shipmode) x, lag(l_comment, 5) over (order by l_orderkey, l_linenumber) lc from lineitem) t" \
"count_star()|min(m)|max(x)|sum(length(lc))
60175| Tiresias |TAKE BACK RETURN|1598240"

check "RANGE offsets over a DECIMAL(38) key (a SUM per group)" \
  "select o_custkey, sum(o_totalprice) s, count(*) over (order by sum(o_totalprice) range between 50000 preceding and 50000 following) c, min(o_custkey) over (order by sum(o_totalprice) desc range between current row and 10000.5 following) m from orders where o_custkey < 200 group by o_custkey order by 1" \
"o_custkey|s|c|m
1|1428873.61|3|1
2|1156504.92|3|2
4|4134567.39|1|4
5|1084042.74|5|5
7|3922020.98|2|7
8|2311598.75|7|8
10|3865098.18|1|10
11|1233486.53|5|11
13|2292834.57|8|13
14|1787359.08|10|14
16|2170436.43|4|16
17|2016998.76|4|17
19|3686492.93|2|19
20|1230350.63|5|20
22|3130582.19|4|22
23|1673040.18|5|23
25|2845869.53|4|25
26|418511.97|2|26
28|3075314.46|3|28
29|1935593.09|3|29
31|2114517.56|5|31
32|914059.56|2|32
34|3945438.71|2|34
35|2113194.07|5|35
37|2428169.69|3|37
38|1336731.12|5|38
40|2887931.60|5|40
41|1871334.66|9|41
43|3758886.21|2|43
44|1799024.04|10|44
46|2179304.63|5|16
47|518953.38|2|47
49|3415140.23|2|49
50|1693672.09|6|50
52|3307614.62|6|52
53|1790425.06|10|14
55|1998414.21|4|55
56|1967546.44|5|56
58|2258160.75|5|58
59|1454536.43|3|59
61|3497594.04|1|61
62|1730591.94|5|62
64|1517611.93|3|64
65|1863488.89|10|65
67|2620093.90|3|67
68|2318085.52|7|8
70|2186547.87|5|46
71|1580442.39|4|71
73|4638819.21|1|73
74|1364900.85|3|74
76|1255844.09|8|76
77|713381.28|2|77
79|4412540.44|1|79
80|2116340.11|5|31
82|1850376.42|9|82
83|967203.80|3|83
85|2706695.68|4|85
86|1753321.16|9|86
88|3444935.05|2|88
89|975893.56|3|83
91|2603316.48|4|91
92|632422.34|2|92
94|3678708.09|2|94
95|865644.41|3|95
97|2721768.05|4|97
98|1827484.16|14|98
100|2690837.75|4|100
101|2120043.91|5|31
103|3139428.34|4|22
104|1269470.76|7|104
106|1850889.89|9|82
107|1817530.94|14|107
109|3118285.41|5|109
110|1114818.38|5|110
112|3116175.39|5|112
113|1551366.01|4|113
115|2186777.32|5|46
116|1219325.43|4|116
118|1785726.06|10|118
119|460544.22|3|119
121|3801574.77|2|121
122|799409.05|1|122
124|1829717.98|14|98
125|1002422.96|4|125
127|2223113.65|6|127
128|2283722.63|8|128
130|2593419.30|4|130
131|863828.64|2|131
133|2270483.15|8|133
134|1665740.58|5|134
136|3279162.63|7|136
137|1292308.59|6|137
139|2900558.32|4|139
140|1632599.52|5|140
142|2325660.16|7|68
143|1080022.83|5|143
145|3002676.11|1|145
146|2016124.03|4|146
148|1771330.96|10|148
149|1860648.57|10|106
151|2373103.30|2|151
152|662754.28|2|152
154|4233477.18|1|154
155|1730308.61|5|155
157|2110342.60|5|157
158|1905245.66|6|158
160|3251186.71|5|160
161|1799712.42|10|44
163|1866521.14|10|65
164|1608620.39|4|164
166|2446421.04|3|166
167|1454985.19|3|59
169|3279411.66|7|136
170|1542541.57|4|170
172|2429709.90|3|37
173|1127121.55|5|173
175|3298426.10|7|175
176|1296640.47|6|137
178|3358365.65|1|178
179|1654938.89|6|179
181|3258901.67|7|160
182|494447.71|3|182
184|2878350.16|5|184
185|289338.12|1|185
187|2869137.22|5|187
188|1283509.69|5|188
190|2563857.22|3|190
191|728645.64|2|191
193|2315442.10|7|8
194|1042036.27|4|194
196|2712914.69|4|85
197|1354449.30|3|197
199|3307318.64|6|175"

check "stddev and variances over windows (from exact sums over the frame)" \
  "select n_regionkey, n_nationkey, stddev(n_nationkey) over (partition by n_regionkey) s, var_pop(n_nationkey) over (order by n_nationkey rows between 2 preceding and current row) v, stddev_pop(cast(n_nationkey as double)) over () sp from nation order by 1, 2" \
"n_regionkey|n_nationkey|s|v|sp
0|0|7.11|0.00|7.21
0|5|7.11|0.67|7.21
0|14|7.11|0.67|7.21
0|15|7.11|0.67|7.21
0|16|7.11|0.67|7.21
1|1|10.45|0.25|7.21
1|2|10.45|0.67|7.21
1|3|10.45|0.67|7.21
1|17|10.45|0.67|7.21
1|24|10.45|0.67|7.21
2|8|5.68|0.67|7.21
2|9|5.68|0.67|7.21
2|12|5.68|0.67|7.21
2|18|5.68|0.67|7.21
2|21|5.68|0.67|7.21
3|6|8.26|0.67|7.21
3|7|8.26|0.67|7.21
3|19|8.26|0.67|7.21
3|22|8.26|0.67|7.21
3|23|8.26|0.67|7.21
4|4|5.77|0.67|7.21
4|10|5.77|0.67|7.21
4|11|5.77|0.67|7.21
4|13|5.77|0.67|7.21
4|20|5.77|0.67|7.21"

check "var_samp over a moving frame of DECIMALs" \
  "select o_custkey, o_orderkey, var_samp(o_totalprice) over (partition by o_custkey order by o_orderkey rows between 1 preceding and 1 following) v from orders where o_custkey < 8 order by 1, 2" \
"o_custkey|o_orderkey|v
1|9154|54036844622.05
1|14656|27501474649.74
1|24322|10415672046.33
1|31653|5047433920.30
1|34019|8424822927.86
1|36422|11285480941.15
1|43879|13987935329.04
1|52263|3510046186.62
1|53283|6588774969.06
2|6980|368160353.58
2|10563|4007327055.04
2|16129|4591442169.77
2|20257|6409530417.02
2|28167|5921435638.65
2|29408|3600410447.30
2|29956|1825360553.22
2|38276|5460408998.49
2|40070|7673756336.26
2|44962|38231653.57
4|320|15453909979.22
4|739|7753201264.54
4|6532|8341712092.20
4|10688|3097158385.95
4|10788|2983779232.14
4|13728|432138987.84
4|14947|4274603563.29
4|15395|4279593157.23
4|20386|2179720506.97
4|22466|2832867053.57
4|24416|1324123794.07
4|25280|1193534464.60
4|25893|7081932876.27
4|26407|4421208209.71
4|26722|9775822097.07
4|26852|4650160090.07
4|28417|4678446059.85
4|29574|2363769621.50
4|34755|5934886854.71
4|36386|7111475627.60
4|38117|9423857455.52
4|41600|6238029298.65
4|44486|8212910388.44
4|46951|85019869.36
4|54018|6712991700.60
4|54404|7188596918.46
4|54722|180063789.60
4|56196|476222292.90
4|58146|12641067155.94
4|59079|13411565697.76
4|59140|17411343743.11
5|7141|29162590923.42
5|8260|14583977419.74
5|11682|6259141372.88
5|11746|496773931.14
5|14308|1057121555.05
5|18725|1139372447.81
5|44129|554247603.19
5|52673|301845706.13
5|54886|602307360.58
7|10402|14048131628.18
7|13031|11584358055.92
7|14145|3655804859.48
7|14404|7495428304.60
7|18435|7596320514.34
7|19841|7489758561.49
7|23011|10274244502.37
7|24609|22343751192.25
7|33443|2830603366.45
7|33701|2436380314.85
7|35844|1264304253.83
7|37634|632502937.40
7|38497|1646800130.87
7|38759|1836019026.65
7|42725|207787687.38
7|44868|4026247645.08
7|44934|2790540854.60
7|48739|4176044705.13
7|50592|1825987418.50
7|52288|165612998.63
7|52903|1243746505.69
7|53957|3260556618.12
7|54855|7860657171.85
7|57767|15299078692.21"

# DISTINCT ON (PostgreSQL's): row_number() over its groups = 1.
check "DISTINCT ON: the first row of each group by the ORDER BY" \
  "select distinct on (n_regionkey) n_regionkey, n_name, n_nationkey from nation order by n_regionkey, n_nationkey desc" \
"n_regionkey|n_name|n_nationkey
0|MOZAMBIQUE|16
1|UNITED STATES|24
2|VIETNAM|21
3|UNITED KINGDOM|23
4|SAUDI ARABIA|20"

check "DISTINCT ON by position and expression, ORDER BY keys beyond them" \
  "select distinct on (1, 3) n_regionkey, n_name, n_nationkey % 3 as m from nation order by 1, 3, n_name" \
"n_regionkey|n_name|m
0|ALGERIA|0
0|MOZAMBIQUE|1
0|ETHIOPIA|2
1|CANADA|0
1|ARGENTINA|1
1|BRAZIL|2
2|CHINA|0
2|INDIA|2
3|FRANCE|0
3|GERMANY|1
3|UNITED KINGDOM|2
4|EGYPT|1
4|IRAQ|2"

check "DISTINCT ON a column not in the select list, the most expensive order per customer" \
  "select distinct on (o_custkey) o_orderkey, o_totalprice from orders where o_custkey < 40 order by o_custkey, o_totalprice desc, o_orderkey" \
"o_orderkey|o_totalprice
9154|357345.46
38276|201568.55
26407|275581.07
7141|271505.25
14404|354885.81
13601|256717.52
17668|322342.37
12800|302431.56
6022|304442.62
11011|248409.17
39937|310673.97
896|248402.10
17056|267380.45
18151|276303.00
31974|278142.58
358|362024.17
42914|258000.55
10149|169118.62
57475|273999.85
42212|254173.13
8577|329481.67
50310|279545.76
54368|308920.79
23168|326036.51
38850|339194.75
2980|223259.35"

check "DISTINCT ON over a join, counted" \
  "select count(*), sum(k) from (select distinct on (l_orderkey, l_suppkey % 2) l_orderkey k from lineitem) t" \
"count_star()|sum(k)
25801|773085063"

refused "DISTINCT ON not leading the ORDER BY" "select distinct on (n_regionkey) n_regionkey, n_name from nation order by n_name" "SELECT DISTINCT ON expressions must match initial ORDER BY expressions"
# Ordered-set aggregates (PostgreSQL's definitions), planned with windows:
# percentile_cont, percentile_disc, mode, and DuckDB's median.
check "median, percentile_cont/disc, mode per group" \
  "select n_regionkey, median(n_nationkey) m, percentile_cont(0.25) within group (order by n_nationkey) pc, percentile_disc(0.25) within group (order by n_nationkey) pd, mode() within group (order by n_nationkey % 3) mo from nation group by 1 order by 1" \
"n_regionkey|m|pc|pd|mo
0|14.00|5.00|5|0
1|3.00|2.00|2|0
2|12.00|9.00|9|0
3|19.00|7.00|7|1
4|11.00|10.00|10|1"

check "PostgreSQL's definitions at the edges: fractions 0 and 1, DESC, NULLs ignored, mode ties to the first in order" \
  "select percentile_disc(0.6) within group (order by x) d6, percentile_disc(0.5) within group (order by x) d5, percentile_disc(0) within group (order by x) d0, percentile_disc(1) within group (order by x) d1, percentile_cont(0.6) within group (order by x) c6, percentile_disc(0.6) within group (order by x desc) dd, percentile_cont(0.6) within group (order by x desc) cd, mode() within group (order by y) m, mode() within group (order by y desc) md from (values (10, 3), (20, 1), (30, 3), (40, 1), (null, null), (50, 2)) t(x, y)" \
"d6|d5|d0|d1|c6|dd|cd|m|md
30|30|10|50|34.00|30|26.00|1|3"

check "ordered-set aggregates of dates, strings and DECIMALs beside plain ones, in HAVING" \
  "select o_orderpriority, count(*) c, median(o_custkey) m, percentile_disc(0.9) within group (order by o_orderdate) d, mode() within group (order by o_clerk) mc, percentile_cont(0.1) within group (order by o_custkey desc) pc from orders group by 1 having median(o_totalprice) > 100 order by 1" \
"o_orderpriority|c|m|d|mc|pc
1-URGENT|3020|757.00|1997-11-28|Clerk#000000497|1357.00
2-HIGH|3065|761.00|1997-12-12|Clerk#000000648|1349.00
3-MEDIUM|2941|740.00|1997-12-05|Clerk#000000543|1346.00
4-NOT SPECIFIED|3024|757.00|1997-12-05|Clerk#000000258|1354.00
5-LOW|2950|766.00|1997-11-21|Clerk#000000409|1366.00"

check "over all of lineitem, no GROUP BY" \
  "select median(l_quantity) m, percentile_disc(0.33) within group (order by l_shipmode) s, mode() within group (order by l_linenumber) l, percentile_cont(0.99) within group (order by l_extendedprice) p from lineitem" \
"m|s|l|p
25.00|MAIL|1|86049.39"

check "FILTER, and groups whose values are all NULL" \
  "select l_returnflag, percentile_disc(0.5) within group (order by l_extendedprice) filter (where l_discount > 0.05) f, median(case when l_quantity > 100 then l_quantity end) n from lineitem group by 1 order by 1" \
"l_returnflag|f|n
A|33668.80|
N|33966.40|
R|34311.75|"

# string_agg (a STRING_AGG window over the group's rows, then MAX) and
# ORDER BY inside other aggregates.
check "string_agg per group in order, with a default separator" \
  "select n_regionkey, string_agg(n_name, ', ' order by n_name) s, string_agg(n_name order by n_nationkey desc) d from nation group by 1 order by 1" \
"n_regionkey|s|d
0|ALGERIA, ETHIOPIA, KENYA, MOROCCO, MOZAMBIQUE|MOZAMBIQUE,MOROCCO,KENYA,ETHIOPIA,ALGERIA
1|ARGENTINA, BRAZIL, CANADA, PERU, UNITED STATES|UNITED STATES,PERU,CANADA,BRAZIL,ARGENTINA
2|CHINA, INDIA, INDONESIA, JAPAN, VIETNAM|VIETNAM,CHINA,JAPAN,INDONESIA,INDIA
3|FRANCE, GERMANY, ROMANIA, RUSSIA, UNITED KINGDOM|UNITED KINGDOM,RUSSIA,ROMANIA,GERMANY,FRANCE
4|EGYPT, IRAN, IRAQ, JORDAN, SAUDI ARABIA|SAUDI ARABIA,JORDAN,IRAQ,IRAN,EGYPT"

check "string_agg DISTINCT, FILTER, NULL values, NULLS FIRST keys" \
  "select r_name, string_agg(distinct n_name order by n_name) a, string_agg(n_name, '-' order by n_name) filter (where n_nationkey % 2 = 0) f, string_agg(case when n_nationkey % 3 = 0 then null else n_name end, '' order by n_name desc) n from nation join region on n_regionkey = r_regionkey group by 1 order by 1" \
"r_name|a|f|n
AFRICA|ALGERIA,ETHIOPIA,KENYA,MOROCCO,MOZAMBIQUE|ALGERIA-KENYA-MOZAMBIQUE|MOZAMBIQUEKENYAETHIOPIA
AMERICA|ARGENTINA,BRAZIL,CANADA,PERU,UNITED STATES|BRAZIL-UNITED STATES|PERUBRAZILARGENTINA
ASIA|CHINA,INDIA,INDONESIA,JAPAN,VIETNAM|CHINA-INDIA-JAPAN|INDIA
EUROPE|FRANCE,GERMANY,ROMANIA,RUSSIA,UNITED KINGDOM|FRANCE-RUSSIA|UNITED KINGDOMRUSSIAROMANIAGERMANY
MIDDLE EAST|EGYPT,IRAN,IRAQ,JORDAN,SAUDI ARABIA|EGYPT-IRAN-SAUDI ARABIA|SAUDI ARABIAJORDANIRAQIRANEGYPT"

check "string_agg of numbers (as text), groups without values, HAVING" \
  "select c_nationkey, string_agg(distinct c_mktsegment, '/' order by c_mktsegment desc) seg, string_agg(case when c_acctbal > 9900 then c_custkey end, ';' order by c_custkey) rich, count(*) n from customer group by 1 having string_agg(c_mktsegment, '') like '%BUILDING%' order by 1" \
"c_nationkey|seg|rich|n
0|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||61
1|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||59
2|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||68
3|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||69
4|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|140|66
5|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|381|57
6|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||36
7|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||57
8|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||60
9|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|45|66
10|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||72
11|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||58
12|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||67
13|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||54
14|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||50
15|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||72
16|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|200|62
17|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||56
18|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||58
19|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|43|64
20|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||67
21|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|1106|58
22|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||59
23|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE||56
24|MACHINERY/HOUSEHOLD/FURNITURE/BUILDING/AUTOMOBILE|213|48"

check "string_agg over all of lineitem and per flag (long strings, through md5)" \
  "select length(string_agg(l_comment, ';' order by l_orderkey, l_linenumber)) len, md5(string_agg(l_comment, ';' order by l_orderkey, l_linenumber)) h, md5(string_agg(l_shipmode, '' order by l_orderkey desc, l_linenumber)) m from lineitem" \
"len|h|m
1658545|9ffe0890d8b8668ff8b3a298539d7b5e|424d4636ec078a28e2d99252b2744aad"

check "string_agg per customer, with another aggregate" \
  "select o_custkey, string_agg(o_orderpriority, ',' order by o_orderdate, o_orderkey) p, sum(o_totalprice) t from orders where o_custkey < 20 group by 1 order by 1" \
"o_custkey|p|t
1|2-HIGH,2-HIGH,4-NOT SPECIFIED,2-HIGH,1-URGENT,3-MEDIUM,4-NOT SPECIFIED,2-HIGH,5-LOW|1428873.61
2|4-NOT SPECIFIED,4-NOT SPECIFIED,1-URGENT,1-URGENT,3-MEDIUM,4-NOT SPECIFIED,5-LOW,3-MEDIUM,3-MEDIUM,5-LOW|1156504.92
4|5-LOW,3-MEDIUM,1-URGENT,1-URGENT,5-LOW,1-URGENT,1-URGENT,5-LOW,3-MEDIUM,1-URGENT,4-NOT SPECIFIED,5-LOW,5-LOW,1-URGENT,2-HIGH,1-URGENT,3-MEDIUM,3-MEDIUM,3-MEDIUM,5-LOW,3-MEDIUM,1-URGENT,3-MEDIUM,2-HIGH,4-NOT SPECIFIED,1-URGENT,2-HIGH,3-MEDIUM,5-LOW,5-LOW,2-HIGH|4134567.39
5|3-MEDIUM,1-URGENT,2-HIGH,2-HIGH,5-LOW,5-LOW,3-MEDIUM,3-MEDIUM,3-MEDIUM|1084042.74
7|1-URGENT,1-URGENT,3-MEDIUM,4-NOT SPECIFIED,5-LOW,1-URGENT,5-LOW,3-MEDIUM,5-LOW,2-HIGH,3-MEDIUM,5-LOW,3-MEDIUM,2-HIGH,5-LOW,1-URGENT,5-LOW,5-LOW,3-MEDIUM,1-URGENT,1-URGENT,1-URGENT,1-URGENT,1-URGENT|3922020.98
8|4-NOT SPECIFIED,3-MEDIUM,5-LOW,5-LOW,5-LOW,1-URGENT,4-NOT SPECIFIED,5-LOW,5-LOW,5-LOW,2-HIGH,2-HIGH,2-HIGH,3-MEDIUM|2311598.75
10|4-NOT SPECIFIED,1-URGENT,1-URGENT,2-HIGH,3-MEDIUM,5-LOW,5-LOW,5-LOW,3-MEDIUM,1-URGENT,4-NOT SPECIFIED,2-HIGH,1-URGENT,3-MEDIUM,5-LOW,4-NOT SPECIFIED,3-MEDIUM,1-URGENT,5-LOW,4-NOT SPECIFIED,1-URGENT,1-URGENT,3-MEDIUM,2-HIGH,1-URGENT,5-LOW,1-URGENT|3865098.18
11|5-LOW,1-URGENT,2-HIGH,2-HIGH,5-LOW,5-LOW,3-MEDIUM|1233486.53
13|1-URGENT,4-NOT SPECIFIED,3-MEDIUM,2-HIGH,4-NOT SPECIFIED,4-NOT SPECIFIED,2-HIGH,5-LOW,3-MEDIUM,3-MEDIUM,1-URGENT,4-NOT SPECIFIED,2-HIGH,4-NOT SPECIFIED,4-NOT SPECIFIED,3-MEDIUM,4-NOT SPECIFIED,2-HIGH,4-NOT SPECIFIED,4-NOT SPECIFIED,4-NOT SPECIFIED|2292834.57
14|1-URGENT,2-HIGH,3-MEDIUM,3-MEDIUM,1-URGENT,2-HIGH,1-URGENT,4-NOT SPECIFIED,2-HIGH,5-LOW,2-HIGH|1787359.08
16|4-NOT SPECIFIED,2-HIGH,3-MEDIUM,4-NOT SPECIFIED,3-MEDIUM,4-NOT SPECIFIED,1-URGENT,3-MEDIUM,3-MEDIUM,5-LOW,5-LOW,5-LOW,1-URGENT,3-MEDIUM,4-NOT SPECIFIED,4-NOT SPECIFIED|2170436.43
17|4-NOT SPECIFIED,1-URGENT,1-URGENT,4-NOT SPECIFIED,5-LOW,5-LOW,1-URGENT,2-HIGH,3-MEDIUM,2-HIGH,5-LOW,2-HIGH|2016998.76
19|3-MEDIUM,4-NOT SPECIFIED,3-MEDIUM,5-LOW,2-HIGH,5-LOW,5-LOW,4-NOT SPECIFIED,2-HIGH,1-URGENT,3-MEDIUM,2-HIGH,5-LOW,1-URGENT,5-LOW,4-NOT SPECIFIED,3-MEDIUM,1-URGENT,2-HIGH,5-LOW,4-NOT SPECIFIED,2-HIGH,1-URGENT,3-MEDIUM,1-URGENT|3686492.93"

check "string_agg with no rows" \
  "select string_agg(n_name, ',' order by n_name) s, count(*) n from nation where n_nationkey > 100" \
"s|n
|0"

check "ORDER BY inside order-insensitive aggregates" \
  "select n_regionkey, sum(n_nationkey order by n_name) s, count(*) filter (where n_nationkey > 3) c, max(n_name order by n_nationkey desc) m from nation group by 1 order by 1" \
"n_regionkey|s|c|m
0|50|4|MOZAMBIQUE
1|47|2|UNITED STATES
2|68|5|VIETNAM
3|77|5|UNITED KINGDOM
4|58|5|SAUDI ARABIA"

check "a long string_agg joined to every row (a join build of one long string)" \
  "select n_name, length((select string_agg(o_comment, ' ; ' order by o_comment) from orders)) + n_nationkey l from nation where n_regionkey = 1 order by 1" \
"n_name|l
ARGENTINA|772362
BRAZIL|772363
CANADA|772364
PERU|772378
UNITED STATES|772385"

# In correlated subqueries: the windows partition by the correlation's keys
# too. Compared with DuckDB.
want "string_agg in a correlated scalar subquery" \
  "select n_name, (select string_agg(s_name, ',' order by s_name) from supplier where s_nationkey = n_nationkey and s_suppkey < 30) sa from nation order by 1"
want "median and percentile_disc in correlated scalar subqueries" \
  "select r_name, (select median(n_nationkey) from nation where n_regionkey = r_regionkey) m, (select percentile_disc(0.25) within group (order by n_name) from nation where n_regionkey = r_regionkey) p from region order by 1"
want "mode() in a correlated subquery, keys without rows" \
  "select c_custkey, (select mode() within group (order by o_orderpriority) from orders where o_custkey = c_custkey) m from customer where c_custkey < 20 order by 1"
want "percentile_cont in a correlated WHERE comparison" \
  "select p_partkey from part where p_retailprice > (select percentile_cont(0.9) within group (order by ps_supplycost) from partsupp where ps_partkey = p_partkey) * 1.5 order by 1 limit 10"
want "string_agg (DISTINCT) in a LATERAL subquery" \
  "select n_name, l.s from nation, lateral (select string_agg(distinct s_name, ';' order by s_name) s from supplier where s_nationkey = n_nationkey and s_acctbal > 9000) l order by 1"
want "median correlated by a non-equality (through the domain)" \
  "select r_name, (select median(n_nationkey) from nation where n_regionkey < r_regionkey) m from region order by 1"

# With grouping sets: per set, windows partitioned by that set's keys; each
# row takes its set's value (by GROUPING). Compared with DuckDB.
want "string_agg with ROLLUP" "select n_regionkey, string_agg(n_name, ',' order by n_name) s from nation group by rollup(n_regionkey) order by 1 nulls last"
want "median and percentile_disc with ROLLUP, beside count(*)" \
  "select n_regionkey, median(n_nationkey) m, percentile_disc(0.3) within group (order by n_name) p, count(*) c from nation group by rollup(1) order by 1 nulls last"
want "mode and percentile_cont with CUBE and GROUPING" \
  "select p_mfgr, p_size % 3 k, mode() within group (order by p_container) md, percentile_cont(0.75) within group (order by p_size) pc, grouping(p_mfgr, p_size % 3) g from part where p_size < 10 group by cube(p_mfgr, p_size % 3) order by 1 nulls last, 2 nulls last"
want "string_agg (DISTINCT) with GROUPING SETS including ()" \
  "select o_orderstatus, o_orderpriority, string_agg(distinct o_orderpriority, '|' order by o_orderpriority) s from orders group by grouping sets ((o_orderstatus), (o_orderpriority), ()) order by 1 nulls last, 2 nulls last"
want "median with ROLLUP in HAVING" "select n_regionkey, median(n_nationkey) m from nation group by rollup(1) having median(n_nationkey) > 10 order by 1 nulls last"

refused "a non-constant separator" "select string_agg(n_name, n_comment) from nation" "the separator of string_agg must be a constant"
refused "DISTINCT ordered by another expression" "select string_agg(distinct n_name, ',' order by n_nationkey) from nation" "in an aggregate with DISTINCT, ORDER BY expressions must appear in argument list"
refused "a separator over 64 bytes" "select string_agg(n_name, '0123456789012345678901234567890123456789012345678901234567890123456789') from nation" "has 70 bytes (at most 64)"

refused "a percentile outside [0, 1]" "select percentile_cont(1.5) within group (order by n_nationkey) from nation" "percentile value 1.5 is not between 0 and 1"
refused "percentile_cont of strings" "select percentile_cont(0.5) within group (order by n_name) from nation" "percentile_cont of VARCHAR is not defined"
refused "WITHIN GROUP on a plain aggregate" "select sum(n_nationkey) within group (order by n_nationkey) from nation" "sum is not an ordered-set aggregate"
refused "a non-constant fraction" "select percentile_disc(n_nationkey) within group (order by n_nationkey) from nation" "the fraction of percentile_disc must be a constant"
refused "ordered-set aggregates with grouping sets in a correlated subquery" \
  "select r_name, (select median(n_nationkey) from nation where n_regionkey = r_regionkey group by rollup(n_name)) from region" \
  "not supported"
refused "a window function in WHERE" "select n_name from nation where row_number() over () > 1" "window functions are not allowed in WHERE"
refused "a window function in GROUP BY" "select n_regionkey from nation group by row_number() over ()" "window functions are not allowed in GROUP BY"
refused "a window function inside an aggregate" "select sum(row_number() over ()) from nation" "aggregate function calls cannot contain window function calls"
refused "nested window functions" "select sum(n_nationkey) over (order by row_number() over ()) from nation" "window function calls cannot be nested"
refused "GROUPS frames" "select sum(n_nationkey) over (order by n_nationkey groups between 1 preceding and current row) from nation" "GROUPS frames are not supported"
refused "EXCLUDE" "select sum(n_nationkey) over (order by n_nationkey rows between 1 preceding and current row exclude ties) from nation" "EXCLUDE in a frame is not supported"
refused "an unknown window name" "select sum(n_nationkey) over w2 from nation window w as (order by n_nationkey)" 'window "w2" does not exist'
refused "a window defined twice" "select sum(n_nationkey) over w from nation window w as (order by n_nationkey), w as (order by n_name)" 'window "w" is already defined'
refused "overriding a named window's ORDER BY" "select sum(n_nationkey) over (w order by n_name) from nation window w as (order by n_nationkey)" 'cannot override ORDER BY clause of window "w"'
refused "ntile(0)" "select ntile(0) over () from nation" "argument of ntile must be greater than zero"
refused "nth_value(x, 0)" "select nth_value(n_name, 0) over () from nation" "argument of nth_value must be greater than zero"
refused "RANGE offsets with two ORDER BY keys" "select sum(n_nationkey) over (order by n_nationkey, n_name range between 1 preceding and current row) from nation" "RANGE with offset PRECEDING/FOLLOWING requires exactly one ORDER BY column"
refused "RANGE offsets over a string key" "select sum(n_nationkey) over (order by n_name range between 1 preceding and current row) from nation" "over an ORDER BY column of type VARCHAR is not supported"
refused "a negative ROWS offset" "select sum(n_nationkey) over (order by n_nationkey rows between -1 preceding and current row) from nation" "frame starting or ending offset must not be negative"
refused "DISTINCT in a window aggregate" "select count(distinct n_nationkey) over () from nation" "DISTINCT is not implemented for window functions"
refused "a non-constant lag offset" "select lag(n_name, n_nationkey) over () from nation" "the offset of lag and lead must be a constant"
refused "SUM of strings over a window" "select sum(n_name) over () from nation" "SUM of VARCHAR is not defined"
refused "an aggregate without a window form here" "select string_agg(n_name, ',') over () from nation" "string_agg is not a window function"
refused "a scalar function with OVER" "select upper(n_name) over () from nation" "upper is not a window function"
refused "a window function in a correlated subquery" "select n_name, (select count(*) over () from region where r_regionkey = n_regionkey) from nation" "window functions in a correlated subquery are not supported"

exit $fail
