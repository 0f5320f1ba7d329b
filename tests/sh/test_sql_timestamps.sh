#!/usr/bin/env bash
# TIMESTAMP, TIMESTAMPTZ, TIME and INTERVAL in SQL: literals, casts,
# arithmetic, EXTRACT / date_part, date_trunc, age, comparisons, grouping,
# sorting, joins and windows over them. Timestamps are made per row from the
# TPC-H dates so every kernel sees many values. Expected rows come from
# DuckDB (want) where it prints as PostgreSQL does; intervals with months
# print as PostgreSQL's ("1 mon", DuckDB says "1 month") and are checked
# against hand-computed rows.
set -u
. "$(dirname "$0")/sql_check.sh"

# Rows of orders with a timestamp that has every field set (seconds with a
# fraction, times before and after noon).
Q="select o_orderkey k, o_orderdate d, cast(o_orderdate as timestamp) + o_orderkey * interval '7 minutes 3.25 seconds' ts, o_orderstatus st from orders where o_orderkey < 2000"
TS="($Q) t"

want "timestamp literals and their text" \
  "select timestamp '2020-10-01 12:00:00.123' a, timestamp '1969-12-31 23:59:59.5' b, timestamp '2020-10-01T08:09:10' c, timestamp '2000-02-29' d, cast('1999-12-31 23:59:59.999999' as timestamp) e, timestamp '0001-01-01 00:00:00' f"
want "timestamptz literals are converted to UTC" \
  "select timestamptz '2020-10-01 12:00:00+02' a, timestamptz '2020-10-01 12:00:00-03:30' b, cast('2020-01-01 00:00:00Z' as timestamptz) c, cast(timestamp '2020-05-05 05:05:05' as timestamptz) d"
want "time literals" \
  "select time '12:34:56.5' a, time '00:00:00' b, time '23:59:59.999999' c, cast(timestamp '2020-10-01 12:00:07.25' as time) d"
want "casts between dates, timestamps and text" \
  "select cast(date '2020-02-29' as timestamp) a, cast(timestamp '2020-02-29 23:59:59' as date) b, cast(timestamp '1969-12-31 12:00:00' as date) c, cast(timestamp '2020-01-02 03:04:05.6' as varchar) e, length(cast(timestamp '2020-01-02 03:04:05.6' as varchar)) f"
want "per-row timestamps" \
  "select k, ts from $TS where k < 200 order by k"
want "extract of every field from a timestamp" \
  "select k, extract(year from ts) y, extract(month from ts) mo, extract(day from ts) dd, extract(hour from ts) h, extract(minute from ts) mi, extract(second from ts) s, extract(milliseconds from ts) ms, extract(microseconds from ts) us, extract(dow from ts) dw, extract(isodow from ts) idw, extract(doy from ts) dy, extract(week from ts) wk, extract(quarter from ts) q, extract(epoch from ts) ep, date_part('hour', ts) dph from $TS where k < 400 order by k"
want "date_trunc of a timestamp to every unit" \
  "select k, date_trunc('year', ts) y, date_trunc('quarter', ts) q, date_trunc('month', ts) mo, date_trunc('week', ts) w, date_trunc('day', ts) dd, date_trunc('hour', ts) h, date_trunc('minute', ts) mi, date_trunc('second', ts) s from $TS where k < 300 order by k"
want "date_trunc of a date is a timestamp" \
  "select date_trunc('month', date '2020-05-17') a, date_trunc('year', date '1999-12-31') b, date_trunc('hour', date '2020-05-17') c"
want "comparisons with timestamp, date and text constants" \
  "select count(*) a, count(*) filter (where ts > timestamp '1995-01-01 10:00:00') b, count(*) filter (where ts >= date '1996-01-01') c, count(*) filter (where ts < '1993-06-01 12:30') d, count(*) filter (where ts between timestamp '1994-01-01' and timestamp '1994-12-31 23:59:59.999999') e from $TS"
want "group by, min and max of timestamps" \
  "select date_trunc('year', ts) y, count(*) n, min(ts) lo, max(ts) hi, count(distinct date_trunc('month', ts)) nm from $TS group by 1 order by 1"
want "order by a timestamp, top-N and distinct" \
  "select k, ts from $TS order by ts desc, k limit 7"
want "a join on timestamps" \
  "select count(*) n, min(a.k) lo, max(b.k) hi from ($Q) a join (select k, date_trunc('hour', ts) h from $TS) b on date_trunc('hour', a.ts) = b.h"
want "window functions over timestamps" \
  "select k, ts, row_number() over (partition by st order by ts) rn, lag(ts) over (order by ts) prev from $TS where k < 100 order by k"
want "timestamp minus timestamp is an interval of days and time" \
  "select k, ts - timestamp '1992-01-01' a, timestamp '2000-01-01 00:00:00' - ts b, ts - cast(d as timestamp) c from $TS where k < 120 order by k"
want "timestamp plus and minus intervals" \
  "select k, ts + interval '1 day' a, ts - interval '36 hours' b, ts + interval '90 minutes' c, d + interval '1 hour' e from $TS where k < 120 order by k"
want "date plus an interval with a time part is a timestamp" \
  "select date '2020-01-31' + interval '12 hours' a, date '2020-03-01' - interval '1 second' b"
want "timestamptz arithmetic and text" \
  "select k, cast(ts as timestamptz) + interval '3 hours' a, extract(hour from cast(ts as timestamptz)) b, date_trunc('day', cast(ts as timestamptz)) c from $TS where k < 60 order by k"
want "NULL timestamps" \
  "select k, case when k % 3 = 0 then null else ts end x, extract(year from case when k % 3 = 0 then null else ts end) y from $TS where k < 40 order by k"

# Intervals print as PostgreSQL's (hand-checked against PostgreSQL 15's
# output of the same expressions).
check "interval text" \
  "select interval '1 year 2 months 3 days 04:05:06' a, interval '-1 day' b, interval '5.5 seconds' c, interval '0' d, interval '1 month' - interval '1 hour' e, interval '90' day f, interval '2' hour g, interval '1.5 months' h" \
"a|b|c|d|e|f|g|h
1 year 2 mons 3 days 04:05:06|-1 days|00:00:05.5|00:00:00|1 mon -01:00:00|90 days|02:00:00|1 mon 15 days"
check "interval arithmetic" \
  "select interval '1 day' + interval '2 hours' a, interval '1 day' * 3 b, 2 * interval '1 mon 1 hour' c, interval '1 day' / 4 d, -interval '1 year 1 hour' e, interval '3 days' - interval '1 month' f" \
"a|b|c|d|e|f
1 day 02:00:00|3 days|2 mons 02:00:00|06:00:00|-1 years -01:00:00|-1 mons +3 days"
check "age: years, months and days, as PostgreSQL counts them" \
  "select age(timestamp '2020-03-01', timestamp '2019-01-31 10:00') a, age(timestamp '2001-04-10', timestamp '1957-06-13') b, age(timestamp '2020-01-01', timestamp '2020-03-15 12:00') c, age(date '2024-02-29', date '2023-02-28') d" \
"a|b|c|d
1 year 1 mon 14:00:00|43 years 9 mons 27 days|-2 mons -14 days -12:00:00|1 year 1 day"
check "intervals compare by their length: 1 month = 30 days" \
  "select interval '1 month' = interval '30 days' a, interval '1 day' > interval '23 hours' b, interval '1 year' < interval '366 days' c, interval '-1 hour' < interval '0' d" \
"a|b|c|d
true|true|true|true"
check "extract from an interval" \
  "select extract(year from interval '14 months') a, extract(month from interval '14 months') b, extract(day from interval '3 days 4 hours') c, extract(hour from interval '3 days 4 hours') d, extract(epoch from interval '1 day 1.5 seconds') e" \
"a|b|c|d|e
1|2|3|4|86401.50"
check "min and max of intervals compare lengths (-1 year 400 days is 40 days), kept as written" \
  "select min(x) lo, max(x) hi, count(x) n from (select case when o_orderkey % 3 = 0 then interval '1 month' when o_orderkey % 3 = 1 then interval '29 days 23 hours' else interval '-1 year 400 days' end x from orders where o_orderkey < 100) t" \
"lo|hi|n
29 days 23:00:00|-1 years +400 days|27"
check "order by an interval" \
  "select x from (values (interval '1 day'), (interval '-1 year'), (interval '25 hours'), (null), (interval '1 mon')) t(x) order by x desc nulls first" \
"x

1 mon
25:00:00
1 day
-1 years"
# INTERVALs as keys: equal lengths are one key, whatever their fields
# ('1 month' = '30 days' = '720 hours', '-1 day 24 hours' = '0'), as in
# PostgreSQL and DuckDB. A group shows one of its values, so these compare
# lengths (epoch) and counts.
IV="(values (1, interval '1 month'), (2, interval '30 days'), (3, interval '1 day'), (4, interval '720 hours'), (5, interval '24 hours'), (6, null::interval), (7, interval '2 hours'), (8, interval '-1 day 24 hours'), (9, interval '0'), (10, interval '1 year'), (11, interval '360 days'))"
want "an interval as a group key" \
  "select extract(epoch from x) e, count(*) n, min(k) lo, max(k) hi from $IV t(k, x) group by x order by 1 nulls last"
want "an interval group key beside others, with having" \
  "select k % 2 p, extract(epoch from x) e, count(*) n from $IV t(k, x) group by k % 2, x having count(*) > 0 order by 1, 2 nulls last"
want "an interval key in grouping sets" \
  "select extract(epoch from x) e, k % 2 p, count(*) n from $IV t(k, x) group by rollup(x, k % 2) order by 1 nulls last, 2 nulls last, 3"
want "distinct intervals" \
  "select extract(epoch from x) e from (select distinct x from $IV t(k, x)) s order by 1 nulls last"
want "count(distinct interval)" \
  "select count(distinct x) c, count(x) n, count(distinct x) filter (where k > 2) f from $IV t(k, x)"
want "count(distinct interval) per group" \
  "select k % 3 p, count(distinct x) c from $IV t(k, x) group by 1 order by 1"
want "a join on intervals" \
  "select a.k ka, b.k kb from $IV a(k, x) join $IV b(k, x) on a.x = b.x order by 1, 2"
want "a left join and a semi join on intervals" \
  "select a.k ka, b.k kb, exists (select 1 from $IV c(k, x) where c.x = a.x and c.k <> a.k) e from $IV a(k, x) left join (select * from $IV s(k, x) where k > 5) b on a.x = b.x order by 1, 2"
want "windows partitioned by an interval" \
  "select k, count(*) over (partition by x) c, rank() over (partition by x order by k) r, sum(k) over (partition by x order by k rows unbounded preceding) s from $IV t(k, x) order by k"
want "union, intersect and except of intervals" \
  "select (select count(*) from (select x from $IV t(k, x) union select x from $IV t(k, x) where k > 3) s) u, (select count(*) from (select x from $IV t(k, x) where k < 4 intersect select x from $IV t(k, x) where k > 3) s) i, (select count(*) from (select x from $IV t(k, x) except select x from $IV t(k, x) where k in (1, 3)) s) e"
want "group by and join on per-row intervals" \
  "select date_trunc('hour', ts) - cast(d as timestamp) iv, count(*) n, min(k) lo from $TS group by 1 order by 1"
want "a join on per-row intervals of different fields" \
  "select count(*) n, sum(a.k) sa, sum(b.k) sb from (select k, date_trunc('hour', ts) - cast(d as timestamp) iv from $TS) a join (select k, (extract(hour from ts) + 24 * cast(extract(epoch from date_trunc('day', ts) - cast(d as timestamp)) / 86400 as integer)) * interval '1 hour' iv from $TS) b on a.iv = b.iv"
check "timestamp_ns with timestamps and timestamptz" \
  "select cast('2020-01-01 00:00:00.123456789' as timestamp_ns) > timestamp '2020-01-01 00:00:00.123456' a, cast(cast('2020-01-01 00:00:00.123456789' as timestamp_ns) as timestamptz) b, extract(microseconds from cast('2020-01-01 00:00:07.123456789' as timestamp_ns)) c" \
"a|b|c
true|2020-01-01 00:00:00.123456+00|7123456"
want "time arithmetic and extract" \
  "select time '23:30:00' + interval '1 hour' a, time '00:10:00' - interval '20 minutes' b, extract(minute from time '12:34:56') c, extract(epoch from time '01:00:01.5') d"

# Through Parquet: a table of every time type written by CREATE TABLE and
# INSERT, read back by Pista (with filters pushed into the scan and one on
# an INTERVAL, which the scan leaves to a FILTER) and by DuckDB.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$PISTA" --data "$T" -c "create table ev (id integer, ts timestamp, atz timestamptz, t time, d interval)" >/dev/null &&
"$PISTA" --data "$T" -c "insert into ev select o_orderkey, cast(o_orderdate as timestamp) + o_orderkey * interval '1 minute 0.5 seconds', cast(o_orderdate as timestamptz) - o_orderkey * interval '1 hour', cast(cast(o_orderdate as timestamp) + o_orderkey * interval '17 seconds' as time), case when o_orderkey % 5 = 0 then null else o_orderkey % 7 * interval '1 mon 2 days 3 seconds' end from read_parquet('$D/orders.parquet') where o_orderkey < 500" >/dev/null ||
  { echo "FAIL writing the table of time types"; fail=1; }
ev_sql="select id, ts, atz, t, d from ev where ts > timestamp '1995-01-01 12:00:00' and atz <= timestamptz '1997-01-01 00:00:00+00' and (d is null or d >= interval '2 months 4 days') order by id"
got=$("$PISTA" --data "$T" --answers -c "$ev_sql" 2>&1)
exp=$(node "$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs" -c "create view ev as select * from read_parquet('$T/ev/*.parquet'); $ev_sql" 2>&1 | sed 's/ month/ mon/g')
if [ -n "$got" ] && [ "$got" == "$exp" ]; then echo "ok   a table of time types through Parquet, read by Pista and DuckDB"; else
  echo "FAIL a table of time types through Parquet"; diff <(echo "$exp") <(echo "$got") | head -20; fail=1; fi

refused "a bad timestamp" "select timestamp '2020-13-01'" 'invalid input syntax for type timestamp'
refused "a bad interval" "select interval '1 fortnight'" 'invalid input syntax for type interval'
refused "no cast from integers" "select cast(1 as timestamp)" 'CAST from INTEGER to TIMESTAMP is not supported'
refused "no year of a time" "select extract(year from time '12:00')" 'unit "year" not supported for type TIME'
refused "timestamp precision" "select cast('2020-01-01' as timestamp(3))" 'precision other than 6'
refused "timestamp out of range" "select timestamp '294000-01-01' + interval '1000 years'" 'out of range'

exit $fail
