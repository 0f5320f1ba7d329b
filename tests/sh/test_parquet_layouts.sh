#!/usr/bin/env bash
# The Parquet layouts users have, compared with DuckDB on files DuckDB
# writes here: hive partition folders (typed partition columns after the
# file's columns, detected by default, pruning whole files, as a --data
# table and as the program's argument), ** globs and lists of paths, column
# types that differ between files (widened), union_by_name, and a --data
# folder with files that cannot be read (skipped with a warning).
set -u
. "$(dirname "$0")/sql_check.sh"
: "${PISTA_SOURCE_DIR:?}"
ORACLE="$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs"
command -v node >/dev/null || { echo "FAIL: node is missing (tests/oracle/setup.sh)"; exit 1; }
tmp="$(mktemp -d)"
trap 'chmod -R u+rwX "$tmp"; rm -rf "$tmp"' EXIT

duck() { # sql: DuckDB runs it (writes a file)
    if ! node "$ORACLE" -c "$1" > "$tmp/oracle.out" 2>&1; then
        echo "FAIL: DuckDB: $(head -c 300 "$tmp/oracle.out")"
        exit 1
    fi
}
# want (sql_check.sh): both read `option = true` in read_parquet's arguments.
# has NAME CMD... : the command succeeds and its output holds $WANT
has() {
    local name="$1" out rc
    shift
    out=$("$@" 2>&1)
    rc=$?
    if [ $rc -eq 0 ] && echo "$out" | grep -qF -- "$WANT"; then echo "ok   $name"; else echo "FAIL $name (exit $rc, want '$WANT')"; echo "$out" | sed 's/^/  /'; fail=1; fi
}

# ---------------------------------------------------------------- hive
H="$tmp/h"
duck "copy (select i, 'n' || i as name, (i * 0.25)::decimal(9,2) as amount, 2020 + i % 3 as year, 1 + i % 2 as month, case when i % 4 = 0 then 'east' else 'west' end as region from range(200) t(i)) to '$H' (format parquet, partition_by (year, month, region), row_group_size 20)"
G="$H/**/*.parquet"
want "hive columns after the file's, typed, detected by default" "select * from read_parquet('$G') where i < 12 order by i"
want "aggregates by partition columns" "select year, month, region, count(*) n, sum(amount) s, min(name) m from read_parquet('$G') group by year, month, region order by year, month, region"
want "predicates on partition columns and file columns" "select count(*) n, sum(i) s from read_parquet('$G') where year = 2021 and month >= 2 and region <> 'east' and i > 50"
want "partition columns in expressions (BIGINT)" "select year * 100 + month ym, count(*) n from read_parquet('$G') where year + month > 2022 group by 1 order by 1"
want "hive_partitioning = false: the file's columns only" "select * from read_parquet('$G', hive_partitioning = false) where i < 5 order by i"
want "a glob below a partition folder" "select count(*) n, min(year) y, max(region) r from read_parquet('$H/year=2022/**/*.parquet')"
want "one partition file by its path" "select count(*) n, min(year) y, min(month) m from read_parquet('$H/year=2020/month=1/region=east/data_0.parquet')"
check "hive_partitioning => true (PostgreSQL's named argument)" "select count(*) n from read_parquet('$G', hive_partitioning => true) where region = 'east'" "n
50"

# Pruning: the files a predicate on partition columns rules out are never
# opened (EXPLAIN ANALYZE counts them), so an unreadable one is not touched.
WANT="files 1 (8 pruned)"
has "EXPLAIN ANALYZE counts the files pruned by partition predicates" \
    "$PISTA" --answers -c "explain analyze select count(*) from read_parquet('$G') where year = 2021 and month = 2 and region = 'west'"
WANT="files 9 (0 pruned)"
has "EXPLAIN ANALYZE without a partition predicate" \
    "$PISTA" --answers -c "explain analyze select count(*) from read_parquet('$G') where i > 3"

# Partition values that are dates, text, NULL; integers as BIGINT only when
# written as BIGINT writes them (01 and +7 stay text), as DuckDB's autocast.
K="$tmp/k"
for p in "d=2020-01-05/code=01/n=-5/s=a%20b/z=__HIVE_DEFAULT_PARTITION__" "d=2021-12-31/code=2/n=7/s=NULL/z=1" "d=2022-02-28/code=+7/n=12/s=x/z=2"; do
    mkdir -p "$K/$p"
    duck "copy (select 1 as v, 'x' as z from range(3)) to '$K/$p/f.parquet' (format parquet)"
done
want "partition types: DATE, VARCHAR, BIGINT, NULLs; a file column of the same name" "select d, code, n, s, z, v, d + 1 d1, n * 2 n2 from read_parquet('$K/**/*.parquet') order by d"
want "IS NULL on a partition column" "select count(*) n, min(d) d from read_parquet('$K/**/*.parquet') where s is null"
want "a date predicate on a partition column" "select count(*) n from read_parquet('$K/**/*.parquet') where d >= date '2021-01-01' and z > 1"

# Folders named by instants with a UTC offset or Z are TIMESTAMPTZ partition
# columns (PostgreSQL's timestamptz; DuckDB 1.5 reads them as TIMESTAMP and
# drops the offset), pruned by predicates on them. Expected rows by hand.
Z="$tmp/z"
i=0
for p in "ts=2020-01-01 10:00:00+02" "ts=2020-01-02 10:00:00+00" "ts=2020-01-03T01:00:00Z" "ts=2020-01-03 23:30:00-05:30"; do
    i=$((i + 1)); mkdir -p "$Z/$p"
    duck "copy (select $i as a) to '$Z/$p/f.parquet' (format parquet)"
done
check "partition values with UTC offsets are TIMESTAMPTZ" "select ts, a, extract(hour from ts) h from read_parquet('$Z/*/*.parquet') order by ts" "ts|a|h
2020-01-01 08:00:00+00|1|8
2020-01-02 10:00:00+00|2|10
2020-01-03 01:00:00+00|3|1
2020-01-04 05:00:00+00|4|5"
WANT="files 2 (2 pruned)"
has "a predicate on a TIMESTAMPTZ partition column prunes files" \
    "$PISTA" --answers -c "explain analyze select a from read_parquet('$Z/*/*.parquet') where ts > timestamptz '2020-01-02 12:00:00+02'"
check "... and gives their rows" "select a from read_parquet('$Z/*/*.parquet') where ts > timestamptz '2020-01-02 12:00:00+02' order by a" "a
3
4"

# As a --data table (a sub-folder of partition folders) and as the argument.
mkdir -p "$tmp/data"
cp -r "$H" "$tmp/data/sales"
out=$("$PISTA" --data "$tmp/data" --answers -c "select year, count(*) n from sales where month = 1 group by year order by year" 2>&1)
exp=$(node "$ORACLE" -c "select year, count(*) n from read_parquet('$G') where month = 1 group by year order by year" 2>&1)
if [ "$out" == "$exp" ]; then echo "ok   a --data sub-folder of hive partitions is one table"; else echo "FAIL --data hive table: $out (want $exp)"; fail=1; fi
out=$(echo "select count(*) n, sum(year) y from h;" | "$PISTA" --answers "$H" 2>&1)
exp=$(node "$ORACLE" -c "select count(*) n, sum(year) y from read_parquet('$G')" 2>&1)
if [ "$out" == "$exp" ]; then echo "ok   pista DIR: a hive folder as the program's argument"; else echo "FAIL pista DIR (hive): $out"; fail=1; fi
out=$(echo "select count(*) n, min(year) y from data_0;" | "$PISTA" --answers "$H/year=2020/month=1/region=east/data_0.parquet" 2>&1)
if [ "$out" == "n|y
17|2020" ]; then echo "ok   pista FILE: a file as the program's argument"; else echo "FAIL pista FILE: $out"; fail=1; fi

refused "hive_partitioning = true without key=value folders" "select * from read_parquet('$D/nation.parquet', hive_partitioning = true)" "has no key=value folder"
refused "an unknown read_parquet option" "select * from read_parquet('$G', hive_types = true)" "read_parquet has no option hive_types"
refused "an option that is not a boolean" "select * from read_parquet('$G', union_by_name = 'yes')" "read_parquet option union_by_name takes true or false"

# ----------------------------------------------- lists, widening, union_by_name
W="$tmp/w"
mkdir -p "$W"
duck "copy (select i::integer as a, (i * 1.25)::decimal(5,2) as d, i::integer as x, 'p' || i as s from range(50) t(i)) to '$W/w1.parquet' (format parquet, row_group_size 16)"
duck "copy (select (i * 3000000000)::bigint as a, (i * 1.125)::decimal(12,3) as d, (i * 0.5)::double as x, 'q' || i as s, i as extra from range(40) t(i)) to '$W/w2.parquet' (format parquet)"
duck "copy (select i::integer as a, i::bigint as x from range(10) t(i)) to '$W/w3.parquet' (format parquet)"
U="read_parquet('$W/*.parquet', union_by_name = true)"
want "union_by_name: types widened, missing columns NULL" "select * from $U order by a, x, s nulls first"
want "union_by_name: aggregates over widened columns" "select count(*) n, sum(a) sa, sum(d) sd, sum(x) sx, count(s) cs, count(extra) ce from $U"
want "union_by_name: predicates on widened and missing columns" "select count(*) n, sum(a) s from $U where a > 20 and x < 30 and d > 1 and extra is null"
want "union_by_name: a predicate a file's missing column rules out" "select count(*) n, max(extra) e from $U where extra >= 10"
want "a list of paths" "select count(*) n, sum(a) s from read_parquet(ARRAY['$W/w1.parquet', '$W/w3.parquet'], union_by_name = true)"
# Without union_by_name DuckDB casts every file to the first file's types;
# pista widens them (as DuckDB does with union_by_name), so no value changes.
exp=$(node "$ORACLE" -c "select count(*) n, sum(a) sa, sum(d) sd, sum(x) sx from read_parquet('$W/w[12].parquet', union_by_name = true) where a > 3" 2>&1)
check "widened without union_by_name (INTEGER/BIGINT, DECIMALs, DOUBLE)" "select count(*) n, sum(a) sa, sum(d) sd, sum(x) sx from read_parquet('$W/w[12].parquet') where a > 3" "$exp"
refused "a column missing from a file without union_by_name" "select * from read_parquet(ARRAY['$W/w1.parquet', '$W/w3.parquet'])" "column d is in $W/w1.parquet but not in $W/w3.parquet (union_by_name => true reads it as NULL there)"

duck "copy (select 'text' as a) to '$W/../v1.parquet' (format parquet)"
refused "types that do not widen" "select * from read_parquet(ARRAY['$W/w1.parquet', '$tmp/v1.parquet'], union_by_name = true)" "column a is INTEGER in $W/w1.parquet but VARCHAR in $tmp/v1.parquet: no type holds both"
duck "copy (select (i * 1234567890123456.7)::decimal(18,1) as d, (i * 123456789012345678901234567.891)::decimal(38,3) as a from range(7) t(i)) to '$tmp/v2.parquet' (format parquet)"
want "DECIMALs widened past 18 digits (DECIMAL(5,2) and (18,1) as (19,2), INTEGER and (38,3) as (38,3))" "select a, d from read_parquet(ARRAY['$W/w1.parquet', '$tmp/v2.parquet'], union_by_name = true) where a is not null and d is not null order by d, a"
want "sums and predicates over DECIMALs widened to 128 bits" "select sum(d) sd, sum(a) sa, count(*) filter (where d > 2.5) n, min(a) filter (where a > 10) m from read_parquet(ARRAY['$W/w1.parquet', '$tmp/v2.parquet'], union_by_name = true)"
duck "copy (select (i * 12345678901.125)::decimal(38,3) as x from range(9) t(i)) to '$tmp/v4.parquet' (format parquet)"
want "a DECIMAL(38,3) beside a DOUBLE is DOUBLE" "select x from read_parquet(ARRAY['$W/w2.parquet', '$tmp/v4.parquet'], union_by_name = true) order by x"
duck "copy (select 1.5::decimal(38,0) as d) to '$tmp/v3.parquet' (format parquet)"
refused "DECIMALs that need more than 38 digits" "select * from read_parquet(ARRAY['$W/w1.parquet', '$tmp/v3.parquet'], union_by_name = true)" "DECIMAL(40,2) would need more than 38 digits"

# Dates and timestamps widen as DuckDB's union_by_name makes them: DATE to
# TIMESTAMP, TIMESTAMP to TIMESTAMPTZ (the same UTC instant), any of them
# to TIMESTAMP_NS (exact); a value the wider type cannot hold is an error.
duck "copy (select i as k, timestamp '2020-01-01 10:00:00.123456' + i * interval '1 day 1.5 seconds' as x, date '2020-01-02' + i::integer as y, timestamp '2020-01-01 10:00:00' + i * interval '7 hours' as z, date '1999-12-31' - i::integer as v from range(40) t(i)) to '$tmp/t1.parquet' (format parquet, row_group_size 16)"
duck "copy (select 100 + i as k, ('2021-01-0' || (1 + i % 9) || ' 10:00:00.12345678' || (i % 10))::timestamp_ns as x, timestamp '2020-01-03 04:00:00' + i * interval '90 minutes' as y, timestamptz '2020-01-01 11:00:00+00' + i * interval '5 hours' as z, ('1999-12-31 ' || lpad((23 - i % 24)::varchar, 2, '0') || ':59:59.99999999' || (i % 10))::timestamp_ns as v from range(30) t(i)) to '$tmp/t2.parquet' (format parquet)"
TW="read_parquet(ARRAY['$tmp/t1.parquet', '$tmp/t2.parquet'], union_by_name = true)"
want "dates and timestamps of different types widened" "select k, x, y, z, v from $TW order by k"
want "predicates and aggregates over widened timestamps" "select count(*) n, min(x) lx, max(y) hy, min(z) lz, max(v) hv from $TW where x > timestamp '2020-01-20' and y >= date '2020-01-10' and z > timestamptz '2020-01-02 00:00:00+00'"
# t1's 40 v are midnights up to 1999-12-31; t2's v before noon are those of
# i % 24 in 12..23 (i = 12..23: x of i % 9 = 3..8, 1 + 8 = the 9th, i = 17: ...78 7).
check "widened without union_by_name" "select count(*) n, max(x) x from read_parquet('$tmp/t[12].parquet') where v < timestamp '1999-12-31 12:00'" "n|x
52|2021-01-09 10:00:00.123456787"
duck "copy (select timestamp '2400-01-01' as x) to '$tmp/t3.parquet' (format parquet)"
refused "a timestamp beyond TIMESTAMP_NS" "select x from read_parquet(ARRAY['$tmp/t2.parquet', '$tmp/t3.parquet'], union_by_name = true)" "$tmp/t3.parquet: row group 0: column x: TIMESTAMP value out of range for type TIMESTAMP_NS"

# Widening in a --data table (a folder of parts), on the device in use.
mkdir -p "$tmp/data/parts"
cp "$W/w1.parquet" "$W/w2.parquet" "$tmp/data/parts/"
exp=$(node "$ORACLE" -c "select count(*) n, sum(a) sa, sum(d) sd, max(x) mx from read_parquet('$W/w[12].parquet', union_by_name = true) where s like 'q%'" 2>&1)
out=$("$PISTA" --data "$tmp/data" --answers -c "select count(*) n, sum(a) sa, sum(d) sd, max(x) mx from parts where s like 'q%'" 2>&1)
if [ "$out" == "$exp" ]; then echo "ok   a --data folder of parts whose types differ"; else echo "FAIL --data widened: $out (want $exp)"; fail=1; fi

# ------------------------------------------------- --data with bad files
B="$tmp/bad"
mkdir -p "$B"
cp "$W/w1.parquet" "$B/good.parquet"
echo "not parquet at all" > "$B/junk.parquet"
head -c 300 "$W/w2.parquet" > "$B/cut.parquet"
out=$("$PISTA" --data "$B" --answers -c "select count(*) n from good" 2>"$tmp/err")
err=$(cat "$tmp/err")
if [ "$out" == "n
50" ]; then echo "ok   --data: the healthy table works beside unreadable files"; else echo "FAIL --data with bad files: $out / $err"; fail=1; fi
if echo "$err" | grep -qF "pista: warning: table junk skipped: $B/junk.parquet: not a Parquet file" &&
   echo "$err" | grep -qF "pista: warning: table cut skipped: $B/cut.parquet"; then
    echo "ok   --data: each unreadable file is a warning naming it and why"
else
    echo "FAIL --data warnings: $err"; fail=1
fi
out=$("$PISTA" --data "$B" --answers -c "select * from junk" 2>&1)
if echo "$out" | grep -qF 'table "junk" does not exist'; then echo "ok   --data: a skipped table is not registered"; else echo "FAIL skipped table: $out"; fail=1; fi

exit $fail
