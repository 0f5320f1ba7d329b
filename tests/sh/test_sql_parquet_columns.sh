#!/usr/bin/env bash
# Parquet files with columns the engine cannot read (nested LIST, STRUCT and
# MAP columns): the other columns of the file
# read as usual (compared with DuckDB on the same file, which DuckDB writes
# here), a table over such a file registers, and naming an unreadable
# column, or `*`, is an error that names it. The committed nested.parquet
# (DuckDB's LIST and STRUCT) needs no DuckDB.
set -u
. "$(dirname "$0")/sql_check.sh"
: "${PISTA_SOURCE_DIR:?}"
ORACLE="$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
N="$PISTA_TEST_DATA/parquet/nested.parquet"

refused "a LIST column" "select lst from read_parquet('$N')" "column lst is nested or repeated (LIST, STRUCT and MAP columns are not supported)"
refused "a STRUCT column" "select st from read_parquet('$N') t" "column st is nested or repeated"
refused "* over nested columns" "select * from read_parquet('$N')" "column lst is nested or repeated (LIST, STRUCT and MAP columns are not supported) (name the other columns instead of *)"
refused "count(*) over a file of nested columns only (none to count rows with)" "select count(*) n from read_parquet('$N')" "column lst is nested"

command -v node >/dev/null || { echo "FAIL: node is missing (tests/oracle/setup.sh)"; exit 1; }
F="$tmp/mixed.parquet"
if ! node "$ORACLE" -c "copy (select i, 'v' || i as s, [i, i + 1] as l, {'a': i, 'b': 'x'} as st, time '12:34:56' as t, i::integer * 1.5 as d, map {'k': i} as mp, interval 1 day as iv, uuid '12345678-1234-5678-1234-567812345678' as u, date '2020-01-01' + i::integer as dt from range(100) r(i)) to '$F' (format parquet, row_group_size 30)" > "$tmp/oracle.out" 2>&1; then
    echo "FAIL: DuckDB could not write the file: $(head -c 300 "$tmp/oracle.out")"
    exit 1
fi
want "the readable columns around nested and unsupported ones" "select i, s, d, dt from read_parquet('$F') where i % 7 = 3 order by i"
want "aggregates and a filter on the readable columns" "select count(*) n, sum(i) si, min(s) ms, max(dt) md, avg(d) ad from read_parquet('$F') where dt > date '2020-02-01'"
want "a window and a join over the readable columns" "select a.i, b.s, row_number() over (order by a.i desc) rn from read_parquet('$F') a join read_parquet('$F') b on a.i = b.i + 50 where a.i > 90 order by 1"
# (TIME and INTERVAL columns read since the engine has those types.)
want "a UUID column reads (UUID type since the engine has it)" "select count(*) n, min(u) lo, max(u) hi from read_parquet('$F') where u is not null and i > 5"
refused "a MAP column, qualified" "select x.mp from read_parquet('$F') x" "column mp is nested or repeated"
refused "* with unsupported columns" "select * from read_parquet('$F')" "(name the other columns instead of *)"

# As a table of a --data folder: it registers, beside the TPC-H tables.
mkdir -p "$tmp/data"
cp "$F" "$tmp/data/mixed.parquet"
cp "$D/nation.parquet" "$tmp/data/nation.parquet"
out=$("$PISTA" --data "$tmp/data" --answers -c "select count(*) n, max(s) s from mixed join nation on i = n_nationkey" 2>&1)
if [ "$out" == "n|s
25|v9" ]; then echo "ok   a --data table with unreadable columns"; else echo "FAIL a --data table with unreadable columns: $out"; fail=1; fi

exit $fail
