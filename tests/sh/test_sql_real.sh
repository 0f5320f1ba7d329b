#!/usr/bin/env bash
# REAL (float4): Parquet FLOAT columns DuckDB writes read as REAL, every
# REAL result rounded to float precision (arithmetic with REAL, integer and
# DECIMAL operands, casts), text with the fewest digits that read back as
# the same float, comparisons, grouping, sorting, MIN/MAX (REAL), SUM/AVG
# (DOUBLE, as DuckDB's), predicates the scan prunes with, and our FLOAT
# columns read back by DuckDB. DuckDB's FLOAT is the same 4-byte type, so
# each answer is compared with DuckDB's, values as the text of their exact
# DOUBLE (DuckDB writes a FLOAT's text otherwise: 2482547.75 where the
# fewest digits are 2482547.8); the REAL text is checked by hand. Runs on
# cpu and (sh.sim.test_sql_real) on sim.
set -u
. "$(dirname "$0")/sql_check.sh"
ORACLE="${PISTA_SOURCE_DIR:?}/tests/oracle/oracle.mjs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
need_oracle

# 4000 rows: x floats over many magnitudes (subnormals to 1e38), some NULL,
# -0.0, repeated values for grouping; y small floats; k a key. Two row groups.
F="$tmp/r.parquet"
node "$ORACLE" -c "copy (select i, i % 50 k,
    case when i % 13 = 0 then null when i = 7 then -0.0::float
         else ((hash(i) % 100000)::double / 997 * pow(10, (hash(i * 7) % 70)::int - 35))::float end x,
    ((i % 23) * 0.37 - 3)::float y
  from range(4000) t(i)) to '$F' (format parquet, row_group_size 2500)" >/dev/null ||
  { echo "FAIL: DuckDB could not write the fixture"; exit 1; }

T="read_parquet('$F')"

want "values as text (the fewest digits)" \
  "select i, cast(cast(x as double) as varchar) x, cast(cast(y as double) as varchar) y from $T where i < 400 order by i"
want "float arithmetic, rounded per operation" \
  "select i, cast(cast(x + y as double) as varchar) a, cast(cast(x * y as double) as varchar) m, cast(cast(x - y * y as double) as varchar) s, cast(cast(y / 7 as double) as varchar) d from $T where i < 300 order by i"
want "REAL with integer and decimal operands stays REAL" \
  "select i, cast(cast(y + 1 as double) as varchar) a, cast(cast(y * 0.1 as double) as varchar) b, cast(cast(3 - y as double) as varchar) c, cast(cast(y * 2.5 + k as double) as varchar) e from $T where i < 200 order by i"
want "casts from integers and decimals round once" \
  "select cast(cast(cast(16777217 as real) as double) as varchar) a, cast(cast(cast(123456789012 as real) as double) as varchar) b, cast(cast(cast(0.1 as real) as double) as varchar) c, cast(cast(cast(2.5e-7 as real) as double) as varchar) d, cast(cast(cast(k * 1000003 as real) as double) as varchar) e from $T where i = 3"
want "REAL to DOUBLE keeps the float's value" \
  "select i, cast(x as double) xd, cast(y as double) yd from $T where i < 100 order by i"
want "comparisons with literals and between columns" \
  "select count(*) a, count(*) filter (where x < 0.1) b, count(*) filter (where x >= 1e10) c, count(*) filter (where y = 0.7) d, count(*) filter (where x > y) e, count(*) filter (where y between -1 and 1) f from $T"
want "group by, order by, min and max" \
  "select y, count(*) n, cast(cast(min(x) as double) as varchar) lo, cast(cast(max(x) as double) as varchar) hi from $T group by y order by y"
want "sum and avg are DOUBLE" \
  "select k, sum(y) s, avg(y) a, count(x) n from $T group by k order by k"
want "order by a REAL, NULLs last, top-N" \
  "select i, cast(cast(x as double) as varchar) x from $T order by x desc nulls last, i limit 30"
want "a join on REAL keys" \
  "select count(*) n, sum(a.i) s from $T a join $T b on a.y = b.y and a.k = b.k where a.i < 500"
want "distinct and window" \
  "select cast(cast(y as double) as varchar) y, row_number() over (order by y) rn, cast(cast(lag(y) over (order by y) as double) as varchar) p from (select distinct y from $T) t order by y"
want "the scan's pruning agrees (filters on a REAL column)" \
  "select count(*) n, min(i) lo from $T where x > 1e20 and y < 0"

# PostgreSQL's rules, checked by hand against PostgreSQL 15 (float4 output
# there is the same shortest text; DuckDB adds '.0' to whole numbers).
check "real literals, pushing past float precision" \
  "select 3.4028235e38::real a, 0.1::real + 0.2::real b, 16777217::real c, 1::real / 3 d, cast('1e-45' as real) e, 0.1::real::double f" \
'a|b|c|d|e|f
340282346638528859811704183484516925440.00|0.30|16777216.00|0.33|0.00|0.10'
check_csv "csv: the fewest digits" \
  "select 3.4028235e38::real a, 0.1::real + 0.2::real b, 16777217::real c, 1::real / 3 d, cast('1e-45' as real) e, 100::real f, -0.0::real g" \
'a,b,c,d,e,f,g
3.4028235e+38,0.3,16777216,0.33333334,1e-45,100,-0'
check "the fewest digits that read back as the float (2482547.75 is 2482547.8's float)" \
  "select cast(2482547.75::real as varchar) a, cast(487061184::real as varchar) b, cast(1e30::real * 3 as varchar) c, cast(0.1::real as varchar) d, cast(100::real as varchar) e" \
'a|b|c|d|e
2482547.8|487061200.0|3.0000002e+30|0.1|100.0'
refused "overflow in arithmetic" "select 3.4e38::real * 10" 'value out of range for type real: overflow'
refused "overflow in a cast" "select cast(1e39 as real)" 'value out of range for type real: overflow'
refused "text past the float range" "select cast('3.5e38' as real)" "could not convert '3.5e38' to REAL"

# Written back by Pista, read by DuckDB: FLOAT, the same values, statistics
# DuckDB prunes with.
W="$tmp/w.parquet"
out=$("$PISTA" -c "copy (select i, k, x, y, x * y xy from $T) to '$W'" 2>&1) || { echo "FAIL copy: $out"; fail=1; }
types=$(node "$ORACLE" -c "select name, type from parquet_schema('$W') where name in ('x', 'y', 'xy') order by name" 2>&1)
if [ "$types" == "$(printf 'name|type\nx|FLOAT\nxy|FLOAT\ny|FLOAT')" ]; then echo "ok   written as FLOAT"; else echo "FAIL written types: $types"; fail=1; fi
d=$(node "$ORACLE" -c "select count(*) from ((select i, k, x, y from '$W' except all select i, k, x, y from '$F') union all (select i, k, x, y from '$F' except all select i, k, x, y from '$W'))" 2>&1)
if [ "$d" == "$(printf 'count_star()\n0')" ]; then echo "ok   written values"; else echo "FAIL written values: $d"; fail=1; fi
want "x * y written is DuckDB's float product" \
  "select count(*) filter (where xy is not distinct from (x * y)) n from read_parquet('$W')"
a=$(node "$ORACLE" -c "select count(*) from '$W' where x between 1e-3 and 1e3" 2>&1)
b=$(node "$ORACLE" -c "select count(*) from '$F' where x between 1e-3 and 1e3" 2>&1)
if [ "$a" == "$b" ]; then echo "ok   DuckDB filters our FLOAT statistics"; else echo "FAIL stats: $a vs $b"; fail=1; fi

[ $fail -eq 0 ] && echo PASS || { echo FAIL; exit 1; }
