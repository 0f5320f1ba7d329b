#!/usr/bin/env bash
# DECIMAL of 19 to 38 digits in Parquet (16-byte FIXED_LEN_BYTE_ARRAY, as
# DuckDB and arrow write it): files DuckDB writes in several layouts (v1 and
# v2 pages, dictionary and PLAIN, codecs, NULLs, row groups) read as DuckDB
# reads them, and what pista writes (COPY, CREATE TABLE AS of a SUM) DuckDB
# reads alike. Run on cpu and sim (the wide values decode on the host).
set -u
. "$(dirname "$0")/sql_check.sh"
: "${PISTA_SOURCE_DIR:?}"
ORACLE="$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs"
command -v node >/dev/null || { echo "FAIL: node is missing (tests/oracle/setup.sh)"; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
SEL="select i, (i % 50 * 123456789012345678901.123456789)::decimal(38,9) as a,
       case when i % 5 = 0 then null else (i % 7 * 1e20 - 3)::decimal(30,2) end as b,
       (-i)::decimal(20,0) as c from range(3000) r(i)"
n=0
for opt in "row_group_size 1000" "parquet_version v2, compression zstd" "dictionary_compression_ratio_threshold 0, compression snappy" "row_group_size 100, parquet_version v2"; do
    n=$((n + 1))
    F="$tmp/d$n.parquet"
    if ! node "$ORACLE" -c "copy ($SEL) to '$F' (format parquet, $opt)" > "$tmp/o" 2>&1; then
        echo "FAIL: DuckDB could not write ($opt): $(head -c 300 "$tmp/o")"; fail=1; continue
    fi
    want "aggregates ($opt)" "select count(*), sum(a), min(b), max(b), count(b), sum(c), count(distinct a) from read_parquet('$F')"
    want "rows, casts and filters ($opt)" "select i, a, b::varchar b, c from read_parquet('$F') where i % 371 = 5 or a > 6049382661614197766955.05 order by i"
done
F="$tmp/d1.parquet"
want "GROUP BY and ORDER BY a wide decimal" "select b, count(*) n, sum(a) s from read_parquet('$F') group by b order by b nulls first"
want "a join on a wide decimal" "select count(*) from read_parquet('$F') x join read_parquet('$F') y on x.a = y.a where x.i < 100"
want "arithmetic across widths" "select sum(a * 2 - b), max(c + a) from read_parquet('$F') where b is not null"

# Written by pista: COPY and CREATE TABLE AS (a SUM is DECIMAL(38)); DuckDB reads them.
out=$("$PISTA" -c "copy (select i, a, b, c from read_parquet('$F')) to '$tmp/w.parquet' (format parquet)" 2>&1) || { echo "FAIL COPY: $out"; fail=1; }
want "COPY of wide decimals, read back" "select count(*), sum(a), sum(b), min(c), count(b) from read_parquet('$tmp/w.parquet')"
mkdir -p "$tmp/db"
out=$("$PISTA" --data "$tmp/db" -c "create table s as select b, sum(a) sa, sum(c) sc from read_parquet('$F') group by b" 2>&1) || { echo "FAIL CTAS: $out"; fail=1; }
want "CREATE TABLE AS of SUMs, read back" "select count(*), sum(sa), min(sa), max(sc) from read_parquet('$tmp/db/s.parquet')"
exp=$(node "$ORACLE" -c "select count(*), sum(a), sum(b), min(c), count(b) from read_parquet('$tmp/w.parquet')" 2>&1)
got=$(node "$ORACLE" -c "select count(*), sum(a), sum(b), min(c), count(b) from read_parquet('$F')" 2>&1)
if [ "$exp" == "$got" ]; then echo "ok   DuckDB reads pista's copy as the original"; else echo "FAIL DuckDB reads pista's copy: $exp vs $got"; fail=1; fi
# UINT_64 (DuckDB's UBIGINT) reads as DECIMAL(20,0): every value exact,
# above 2^63 too. DuckDB's side casts to DECIMAL(20,0), printed alike.
same_as() { # name pista-sql duckdb-sql
    local exp
    exp=$(node "$ORACLE" -c "$3" 2>&1) || { echo "FAIL $1: DuckDB: $exp"; fail=1; return; }
    check "$1" "$2" "$exp"
}
U="$tmp/u64.parquet"
UD="$tmp/u64d.parquet"
node "$ORACLE" -c "copy (select case when i % 7 = 3 then null else i::ubigint * 634567890123456789::ubigint end as u, i as id from range(0, 29) t(i) union all select 18446744073709551615::ubigint, 30 union all select 9223372036854775808::ubigint, 31) to '$U'" > "$tmp/o" 2>&1 || { echo "FAIL: DuckDB could not write UBIGINT: $(head -c 300 "$tmp/o")"; fail=1; }
node "$ORACLE" -c "copy (select (i % 5)::ubigint * 3000000000000000000::ubigint as u, i from range(0, 3000) t(i)) to '$UD' (row_group_size 1000)" > "$tmp/o" 2>&1 || { echo "FAIL: DuckDB could not write UBIGINT: $(head -c 300 "$tmp/o")"; fail=1; }
same_as "UINT_64 values above 2^63 and NULLs (PLAIN)" "select u, id from read_parquet('$U') order by id" \
    "select u::decimal(20,0) u, id from read_parquet('$U') order by id"
same_as "UINT_64 aggregates" "select sum(u) s, min(u) mn, max(u) mx, count(u) c, count(distinct u) d from read_parquet('$U')" \
    "select sum(u)::decimal(38,0) s, min(u)::decimal(20,0) mn, max(u)::decimal(20,0) mx, count(u) c, count(distinct u) d from read_parquet('$U')"
same_as "UINT_64 dictionary pages, GROUP BY" "select u, count(*) n from read_parquet('$UD') group by u order by u" \
    "select u::decimal(20,0) u, count(*) n from read_parquet('$UD') group by u order by u"
same_as "UINT_64 compared above 2^63" "select id from read_parquet('$U') where u > 10000000000000000000 order by id" \
    "select id from read_parquet('$U') where u > 10000000000000000000 order by id"
out=$("$PISTA" -c "copy (select u, id from read_parquet('$U')) to '$tmp/uw.parquet' (format parquet)" 2>&1) || { echo "FAIL COPY of UINT_64: $out"; fail=1; }
exp=$(node "$ORACLE" -c "select any_value(typeof(u)) t, sum(u) s, count(u) c from read_parquet('$tmp/uw.parquet')" 2>&1)
if [ "$exp" == "t|s|c
DECIMAL(20,0)|251038013434021117151.00|27" ]; then echo "ok   UINT_64 written back as DECIMAL(20,0), every value"; else echo "FAIL UINT_64 written back: $exp"; fail=1; fi
exit $fail
