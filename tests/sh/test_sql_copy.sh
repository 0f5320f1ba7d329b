#!/usr/bin/env bash
# COPY (query) TO 'file' and COPY table TO 'file': Parquet (by FORMAT or the
# .parquet extension, any codec) read back by Pista and by DuckDB; CSV with
# and without HEADER, a delimiter, quoting as RFC 4180 wants, NULL as an
# empty field, every digit of DECIMAL and DOUBLE values, read back by DuckDB;
# an existing file replaced whole; errors that name what was wrong and leave
# no file behind. DuckDB (tests/oracle/oracle.mjs) is the independent reader.
set -u
. "$(dirname "$0")/sql_check.sh"
SRC="${PISTA_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}"
ORACLE="$SRC/tests/oracle/oracle.mjs"
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
same() { # name expected got
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2" | sed 's/^/  /'; echo "  got: $3" | sed 's/^/  /'; fail=1; fi
}
duck() { node "$ORACLE" -c "$1" 2>&1; }

Q="select l_returnflag, l_linestatus, count(*) as n, sum(l_extendedprice) as s, avg(l_discount) as a from lineitem group by 1, 2 order by 1, 2"
out=$("$PISTA" --data "$D" -c "copy ($Q) to '$T/q.parquet'" 2>&1)
same "COPY (query) TO parquet says the rows" "COPY 4" "$out"
want=$("$PISTA" --data "$D" --answers -c "$Q" 2>&1)
same "the Parquet file reads back as the query's rows" "$want" "$("$PISTA" --answers -c "select * from read_parquet('$T/q.parquet') order by 1, 2" 2>&1)"
same "DuckDB reads the Parquet file" "$want" "$(duck "select * from '$T/q.parquet' order by 1, 2")"

out=$("$PISTA" --data "$D" -c "copy orders to '$T/o.data' (format parquet, compression zstd)" 2>&1)
same "COPY table TO, FORMAT parquet, zstd" "COPY 15000" "$out"
same "the table's file equals the table (DuckDB reads it)" \
  "$("$PISTA" --data "$D" --answers -c "select count(*), sum(o_totalprice), min(o_comment), max(o_orderdate) from orders" 2>&1 | tail -1)" \
  "$(duck "select count(*), sum(o_totalprice), min(o_comment), max(o_orderdate) from read_parquet('$T/o.data')" | tail -1)"
same "the file is zstd" "ZSTD" "$(duck "select distinct compression from parquet_metadata('$T/o.data')" | tail -1)"

# CSV: every digit, NULL empty, quoting, the header only when asked.
out=$("$PISTA" --data "$D" -c "copy (select n_nationkey, n_regionkey * 1.5 as x, cast(n_nationkey as double) / 3 as d, case when n_nationkey % 5 = 0 then null else n_name end as name, 'a,b \"c\"' as q, '' as e from nation where n_nationkey < 3 order by 1) to '$T/n.csv' (format csv, header)" 2>&1)
same "COPY TO csv says the rows" "COPY 3" "$out"
same "CSV text: header, full digits, NULL empty, quotes doubled, empty string quoted" 'n_nationkey,x,d,name,q,e
0,0.0,0.0,,"a,b ""c""",""
1,1.5,0.3333333333333333,ARGENTINA,"a,b ""c""",""
2,1.5,0.6666666666666666,BRAZIL,"a,b ""c""",""' "$(cat "$T/n.csv")"
"$PISTA" --data "$D" -c "copy region to '$T/r.txt' (format csv, delimiter '|')" > /dev/null 2>&1
same "no header by default; a delimiter" "0|AFRICA|lar deposits. blithely final packages cajole. regular waters are final requests. regular accounts are according to " \
  "$(head -1 "$T/r.txt")"
"$PISTA" --data "$D" -c "copy (select o_orderkey, o_totalprice, o_comment, o_orderdate from orders) to '$T/o.csv' (format csv, header true)" > /dev/null 2>&1
same "DuckDB reads the CSV back to the same rows" \
  "$(duck "select count(*), sum(o_orderkey), sum(o_totalprice), min(o_comment), max(o_orderdate) from '$D/orders.parquet'" | tail -1)" \
  "$(duck "select count(*), sum(o_orderkey), sum(o_totalprice), min(o_comment), max(o_orderdate) from read_csv('$T/o.csv', header = true)" | tail -1)"

# Replacing a file; errors leave nothing behind.
"$PISTA" --data "$D" -c "copy (select 1 as a) to '$T/n.csv' (format csv)" > /dev/null 2>&1
same "an existing file is replaced" "1" "$(cat "$T/n.csv")"
refused "COPY FROM" "copy nation from '$T/x.csv'" "COPY FROM is not supported"
refused "COPY TO STDOUT" "copy nation to stdout" "COPY TO STDOUT is not supported"
refused "an unknown format" "copy nation to '$T/x.json' (format json)" 'COPY format "json" is not supported'
refused "an unknown option" "copy nation to '$T/x.csv' (quote '\"')" 'COPY option "quote" is not supported'
refused "an unknown codec" "copy nation to '$T/x.parquet' (compression lzo)" 'COPY compression "lzo" is not supported'
refused "a directory that is not there" "copy nation to '$T/nodir/x.csv'" "$T/nodir/x.csv"
refused "a query that fails" "copy (select 1 / (n_nationkey - 3) from nation) to '$T/z.csv' (format csv)" "division by zero"
same "nothing left behind by the failures" "n.csv o.csv o.data q.parquet r.txt" "$(ls "$T" | tr '\n' ' ' | sed 's/ $//')"
same "no temporary files" "" "$(ls -A "$T" | grep '^\.' || true)"
exit $fail
