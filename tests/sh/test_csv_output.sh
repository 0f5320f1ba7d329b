#!/usr/bin/env bash
# test_csv_output.sh - `pista --csv` is real CSV: byte for byte what DuckDB's
# CSV writer (COPY ... TO ... (HEADER)) writes for the same query, over
# every type: quoting of separators, quotes and line breaks, NULL (an empty
# field) apart from the empty string (""), every digit of DECIMALs up to 38
# digits, doubles with their shortest round-trip digits, dates, booleans;
# also another separator, and the answers format staying what the TPC-H
# tests compare. Needs node and @duckdb/node-api (tests/oracle/setup.sh);
# without them the test FAILS.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
DATA="${PISTA_TEST_DATA:?}/parquet/sf0.01"
SRC="${PISTA_SOURCE_DIR:?}"
ORACLE="$SRC/tests/oracle/oracle.mjs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not installed: the DuckDB oracle cannot run" >&2
    exit 1
fi
if ! bash "$SRC/tests/oracle/setup.sh" >&2; then
    echo "FAIL: the DuckDB oracle is unavailable (tests/oracle/setup.sh failed)" >&2
    exit 1
fi

fails=0
checks=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

VIEWS=""
for t in nation region supplier orders; do
    VIEWS="$VIEWS create view $t as select * from read_parquet('$DATA/$t.parquet');"
done

# same NAME SQL [DELIM]: pista --csv (with --separator DELIM) equals DuckDB's COPY of SQL.
same() {
    local name="$1" sql="$2" delim="${3:-,}"
    checks=$((checks + 1))
    local opts="HEADER"
    [ "$delim" = "," ] || opts="HEADER, DELIMITER '$delim'"
    if ! node "$ORACLE" -c "$VIEWS COPY ($sql) TO '$tmp/duck.csv' ($opts)" > /dev/null 2> "$tmp/oerr"; then
        fail "$name: the oracle failed: $(cat "$tmp/oerr")"
        return
    fi
    local args=(--data "$DATA" --csv)
    [ "$delim" = "," ] || args+=(--separator "$delim")
    if ! "$PISTA" "${args[@]}" -c "$sql" > "$tmp/ours.csv" 2> "$tmp/err"; then
        fail "$name: pista failed: $(cat "$tmp/err")"
        return
    fi
    [ -s "$tmp/duck.csv" ] || { fail "$name: the oracle wrote nothing"; return; }
    if ! cmp -s "$tmp/duck.csv" "$tmp/ours.csv"; then
        fail "$name: differs from DuckDB's CSV"
        diff "$tmp/duck.csv" "$tmp/ours.csv" | head -10 >&2
        return
    fi
    echo "ok   $name"
}

same "TPC-H columns: strings with commas, decimals, dates" \
  "select o_orderkey, o_custkey, o_orderstatus, o_totalprice, o_orderdate, o_comment from orders order by o_orderkey limit 300"
same "NULL apart from the empty string; quotes, separators and # quoted" \
  "select n_nationkey, case when n_nationkey % 5 = 0 then null when n_nationkey % 5 = 1 then '' when n_nationkey % 5 = 2 then 'a, \"b\"' when n_nationkey % 5 = 3 then 'x#1' else n_name end as s, n_nationkey % 3 = 0 as b, case when n_nationkey % 7 = 0 then null else n_nationkey end as i, ' lead' as l from nation order by 1"
same "line breaks inside values" \
  "select r_regionkey, case when r_regionkey % 2 = 0 then 'two'"$'\n'"'lines' else r_name end as t, 'cr'"$'\r'"'x' as u from region order by 1"
same "every digit of DECIMAL(18) and DECIMAL(38), negative and small" \
  "select n_nationkey, n_nationkey * 1234567.2345678 as a, -(n_nationkey + 1) * 0.0001 as b, cast(n_nationkey as decimal(38,10)) * cast(1234567890123456789.5 as decimal(38,1)) as c, s_acctbal from nation, supplier where s_suppkey = n_nationkey + 1 order by 1"
same "doubles: shortest round-trip digits, whole numbers, exponents" \
  "select n_nationkey, n_nationkey / 3.0e0 as a, n_nationkey * 1e15 as b, n_nationkey * 1e-6 as c, (n_nationkey - 12) * 100.0e0 as d, n_nationkey * 1e16 + 1 as e from nation order by 1"
same "aggregates: counts, sums, averages" \
  "select s_nationkey, count(*) as n, sum(s_acctbal) as total, avg(s_acctbal) as mean, min(s_name) as first from supplier group by s_nationkey order by 1"
same "a semicolon separator quotes what holds it" \
  "select n_nationkey, case when n_nationkey % 2 = 0 then 'a;b' else n_name end as s, n_comment from nation order by 1" ";"
same "header names that need quotes" \
  "select n_nationkey as \"a,b\", n_name as \"say \"\"x\"\"\" from nation order by 1 limit 3"

# The answers format (--answers) is unchanged: what the TPC-H tests compare.
checks=$((checks + 1))
out=$("$PISTA" --data "$DATA" --answers -c "select n_nationkey, n_name, n_nationkey * 1.5 as d from nation order by 1 limit 2" 2>&1)
want=$'n_nationkey|n_name|d\n0|ALGERIA|0.00\n1|ARGENTINA|1.50'
if [ "$out" = "$want" ]; then echo "ok   --answers keeps the answers format"; else fail "--answers: got '$out'"; fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ] && echo PASS || { echo FAIL; exit 1; }
