#!/usr/bin/env bash
# Parquet files of other writers (tests/data/writers, made by
# tests/tools/other_writers.mjs): hyparquet-writer (snappy by default; DELTA_BINARY_PACKED
# and DELTA_LENGTH_BYTE_ARRAY with small pages; BYTE_STREAM_SPLIT of INT32,
# INT64 and DOUBLE with DELTA_BYTE_ARRAY strings and no statistics) and
# parquetjs-lite (v1 snappy pages, v2 gzip pages, v2 uncompressed). All hold
# the same 2,500 rows (integers, doubles, booleans, strings with NULLs and
# multi-byte UTF-8, dates; DECIMAL(9,2) in the hyparquet files). Every file's
# rows, and a filtered aggregate, equal DuckDB's reading of the same file;
# DuckDB does not read BYTE_STREAM_SPLIT integers, so the split file is
# compared with DuckDB's rows of the default one.
set -u
: "${PISTA:?}" "${PISTA_TEST_DATA:?}" "${PISTA_SOURCE_DIR:?}"
. "$(dirname "$0")/sql_check.sh"
W="$PISTA_TEST_DATA/writers"

same_as() { # name pista-sql duckdb-sql
  local exp
  exp=$(node "$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs" -c "$3" 2>&1) || { echo "FAIL $1: DuckDB: $exp"; fail=1; return; }
  check "$1" "$2" "$exp"
}
for f in hyparquet-default hyparquet-delta parquetjs-v1-snappy parquetjs-v2-gzip parquetjs-v2-plain; do
  q="select * from read_parquet('$W/$f.parquet') order by id"
  same_as "$f: every row" "$q" "$q"
  q="select flag, count(*) n, count(name) c, sum(i32) s, sum(i64) b, min(dbl) mn, max(day) d, max(name) mx from read_parquet('$W/$f.parquet') where i32 > -500000 and day >= date '1995-01-01' group by flag order by flag"
  same_as "$f: filtered (pushed-down) aggregate" "$q" "$q"
done
same_as "hyparquet-split: every row (DuckDB: the default file's)" \
  "select * from read_parquet('$W/hyparquet-split.parquet') order by id" \
  "select * from read_parquet('$W/hyparquet-default.parquet') order by id"
same_as "hyparquet-split: a filter on the split columns" \
  "select id, i64, dbl from read_parquet('$W/hyparquet-split.parquet') where i32 between 0 and 10000 and dbl < 0 order by id" \
  "select id, i64, dbl from read_parquet('$W/hyparquet-default.parquet') where i32 between 0 and 10000 and dbl < 0 order by id"
[ "$fail" -eq 0 ] && echo PASS
exit $fail
