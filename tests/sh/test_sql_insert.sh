#!/usr/bin/env bash
# CREATE TABLE name (columns) and INSERT INTO name [(columns)] VALUES ... |
# SELECT ...: a table is a folder of Parquet files in the data directory,
# made with one file of no rows; each INSERT adds one file, written whole
# under a temporary name. Values are cast to the column types, columns not
# named are NULL, NOT NULL is checked; rows read back by Pista (in a new
# session) and by DuckDB, hand-checked. UPDATE, DELETE and constraints
# other than NOT NULL are refused, and failures leave no file behind.
set -u
fail=0
SRC="${PISTA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
N="$PISTA_TEST_DATA/parquet/sf0.01/nation.parquet"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
same() { # name expected got
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2" | sed 's/^/  /'; echo "  got: $3" | sed 's/^/  /'; fail=1; fi
}
run() { "$PISTA" --data "$T" --answers -c "$1" 2>&1; }
refused() { # name sql message
  local out rc; out=$(run "$2"); rc=$?
  if [ $rc -ne 0 ] && echo "$out" | grep -qF -- "$3"; then echo "ok   $1"; else echo "FAIL $1 (exit $rc): $out"; fail=1; fi
}

same "CREATE TABLE" "CREATE TABLE" "$(run "create table t (a integer not null, b varchar, c decimal(10,2), d date, e double, f bigint, g boolean)")"
same "an empty table has its columns and no rows" "a|b|c|d|e|f|g" "$(run "select * from t")"
same "INSERT VALUES, NULLs" "INSERT 0 2" "$(run "insert into t values (1, 'x', 1.5, date '2024-01-02', 0.25, 10000000000, true), (2, null, null, null, null, null, null)")"
same "INSERT with a column list; the others NULL" "INSERT 0 1" "$(run "insert into t (b, a) values ('only b', 3)")"
same "INSERT SELECT, NULL literals taking the column types, casts" "INSERT 0 25" \
  "$(run "insert into t select n_nationkey + 10, n_name, n_regionkey, null, null, null, n_nationkey % 2 = 0 from read_parquet('$N')")"
same "INSERT of no rows" "INSERT 0 0" "$(run "insert into t (a) select 1 where false")"
# a: 1 + 2 + 3 + (10 .. 34: 550); b: all but row 2; g: row 1 and the 25; c: 1.5 + regions (5 x 0..4: 50)
same "the rows read back in a new session" "count_star()|sum(a)|count(b)|count(g)|sum(c)|min(d)|max(f)
28|556|27|26|51.50|2024-01-02|10000000000" "$(run "select count(*), sum(a), count(b), count(g), sum(c), min(d), max(f) from t")"
same "row by row" "a|b|c|d|e|f|g
1|x|1.50|2024-01-02|0.25|10000000000|true
2||||||
3|only b|||||
10|ALGERIA|0.00||||true" "$(run "select * from t where a < 11 order by a")"
same "one file per INSERT with rows, and the empty one" "part-000000.parquet part-000001.parquet part-000002.parquet part-000003.parquet" "$(ls "$T/t" | tr '\n' ' ' | sed 's/ $//')"
same "DuckDB reads the folder" "28|556|27|51.50" \
  "$(node "$SRC/tests/oracle/oracle.mjs" -c "select count(*), sum(a), count(b), sum(c) from '$T/t/*.parquet'" 2>&1 | tail -1)"
refused "NOT NULL" "insert into t (b) values ('no a')" 'null value in column "a" of relation "t" violates not-null constraint'
refused "too few expressions" "insert into t values (1, 2)" "INSERT has more target columns than expressions"
refused "too many expressions" "insert into t (a) values (1, 2)" "INSERT has more expressions than target columns"
refused "an unknown column" "insert into t (a, z) values (1, 2)" 'column "z" of relation "t" does not exist'
refused "a value that does not convert" "insert into t (a) values ('x')" "could not convert 'x' to INTEGER"
refused "an unknown table" "insert into nosuch values (1)" 'relation "nosuch" does not exist'
refused "UPDATE" "update t set a = 1" "UPDATE and DELETE are not supported"
refused "DELETE" "delete from t" "UPDATE and DELETE are not supported"
refused "a table that exists" "create table t (x int)" 'table "t" already exists'
same "IF NOT EXISTS" "CREATE TABLE (exists)" "$(run "create table if not exists t (x int)")"
refused "PRIMARY KEY" "create table u (x int primary key)" "constraints other than NOT NULL"
refused "DEFAULT" "create table u (x int default 3)" "constraints other than NOT NULL (PRIMARY KEY, UNIQUE, CHECK, DEFAULT"
refused "a column twice" "create table u (x int, x int)" 'column "x" specified more than once'
refused "an unsupported type" "create table u (x xml)" "type xml is not supported"
run "create table c as select 1 as x" > /dev/null
refused "INSERT into a CREATE TABLE AS file" "insert into c values (2)" "INSERT adds files to a table made by CREATE TABLE"
same "failures left no file behind" "c.parquet t" "$(ls "$T" | tr '\n' ' ' | sed 's/ $//')"
same "no temporary files" "" "$(ls -A "$T" "$T/t" | grep '^\.' || true)"
same "and the table is as it was" "28" "$(run "select count(*) from t" | tail -1)"

# DECIMAL of more than 18 digits: 16-byte FIXED_LEN_BYTE_ARRAY values, read
# back here and by DuckDB.
W=$(mktemp -d); trap 'rm -rf "$T" "$W"' EXIT
runw() { "$PISTA" --data "$W" --answers -c "$1" 2>&1; }
same "CREATE TABLE with DECIMAL(30,2) and DECIMAL(38,10)" "CREATE TABLE" "$(runw "create table w (x decimal(30,2), y decimal(38,10), k int)")"
same "INSERT wide decimals, NULL, negative, the largest" "INSERT 0 4" \
  "$(runw "insert into w values (1234567890123456789012345678.91, 1.0000000001, 1), (null, -9999999999999999999999999999.9999999999, 2), (-0.01, null, 3), (9999999999999999999999999999.99, 0, 4)")"
same "INSERT SELECT a SUM (DECIMAL(38,2))" "INSERT 0 1" "$(runw "insert into w (x, k) select sum(o_totalprice), 5 from read_parquet('$PISTA_TEST_DATA/parquet/sf0.01/orders.parquet')")"
same "the wide decimals read back" "k|x|y
1|1234567890123456789012345678.91|1.0000000001
2||-9999999999999999999999999999.9999999999
3|-0.01|
4|9999999999999999999999999999.99|0.0000000000
5|2127396830.02|" "$(runw "select k, x::varchar x, y::varchar y from w order by k")"
same "DuckDB reads them alike" "$(node "$SRC/tests/oracle/oracle.mjs" -c "select k, x::varchar x, y::varchar y from '$W/w/*.parquet' order by k" 2>&1)" "$(runw "select k, x::varchar x, y::varchar y from w order by k")"
case "$(runw "insert into w (x) values (12345678901234567890123456789.0)")" in
  *"out of range for DECIMAL(30,2)"*) echo "ok   a value over 30 digits" ;;
  *) echo "FAIL a value over 30 digits"; fail=1 ;;
esac
exit $fail
