#!/usr/bin/env bash
# test_parquet_cat_oracle.sh - compare `pista parquet cat --format csv` with
# DuckDB (tests/oracle/oracle.mjs) on every test file: whole files,
# projections, predicates of every type (pushed into the scan and checked
# against DuckDB's WHERE), row-group pruning (fewer bytes read, same rows),
# several files at once, unsupported columns, bad input, and the device
# memory limit. Needs node and @duckdb/node-api (tests/oracle/setup.sh
# installs it); without them the test FAILS.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
DATA="${PISTA_TEST_DATA:?}/parquet"
SRC="${PISTA_SOURCE_DIR:?}"
ORACLE="$SRC/tests/oracle/oracle.mjs"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not installed: the DuckDB oracle cannot run (install Node.js >= 18 and npm)" >&2
    exit 1
fi
if ! bash "$SRC/tests/oracle/setup.sh" >&2; then
    echo "FAIL: the DuckDB oracle is unavailable (tests/oracle/setup.sh failed)" >&2
    exit 1
fi

fails=0
checks=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# same NAME SQL -- PISTA-ARGS...: DuckDB's result of SQL must equal pista's output.
same() {
    local name="$1" sql="$2"
    shift 3
    checks=$((checks + 1))
    if ! node "$ORACLE" -c "$sql" > "$tmp/duck"; then fail "$name: the oracle failed"; return; fi
    if ! "$PISTA" parquet cat --format csv "$@" > "$tmp/ours" 2> "$tmp/err"; then
        fail "$name: pista failed: $(cat "$tmp/err")"
        return
    fi
    if [ "$(wc -l < "$tmp/duck")" -lt 1 ]; then fail "$name: the oracle printed nothing"; return; fi
    if ! diff "$tmp/duck" "$tmp/ours" > "$tmp/diff"; then
        fail "$name differs from DuckDB (< duckdb, > pista):"
        head -10 "$tmp/diff" >&2
    else
        echo "ok: $name ($(($(wc -l < "$tmp/ours") - 1)) rows)"
    fi
}

# ------------------------------------------------------------ whole files
for f in region nation supplier lineitem-zstd lineitem-v2 lineitem-rowgroup10000; do
    same "$f" "select * from '$DATA/$f.parquet'" -- "$DATA/$f.parquet"
done
# types.parquet without the DECIMAL(20,3) column; ts is a TIMESTAMP, printed
# as DuckDB prints it.
T="$DATA/types.parquet"
TCOLS="id,flag,dbl,flt,ts,small_dec,name,d"
TSEL="id, flag, dbl, flt, ts, small_dec, name, d"
same "types" "select $TSEL from '$T'" -- "$T" --columns "$TCOLS"
same "types on sim (the downloads wait for the scan's kernels)" "select $TSEL from '$T'" -- "$T" --columns "$TCOLS" --device sim

# ------------------------------------------------------------ projections and predicates
L="$DATA/lineitem-zstd.parquet"
same "projection reordered" "select l_comment, l_orderkey, l_shipdate from '$L'" -- \
    "$L" --columns l_comment,l_orderkey,l_shipdate
same "q6-like" "select l_extendedprice, l_discount from '$L' where l_shipdate >= '1994-01-01'
        and l_shipdate < '1995-01-01' and l_discount >= 0.05 and l_discount <= 0.07 and l_quantity < 24" -- \
    "$L" --columns l_extendedprice,l_discount --where "l_shipdate >= 1994-01-01" \
    --where "l_shipdate < 1995-01-01" --where "l_discount >= 0.05" --where "l_discount <= 0.07" \
    --where "l_quantity < 24"
V="$DATA/lineitem-v2.parquet"
same "v2 strings" "select l_orderkey, l_shipmode, l_comment from '$V' where l_shipmode = 'MAIL'
        and l_comment > 'p' and l_quantity <= 10.5" -- \
    "$V" --columns l_orderkey,l_shipmode,l_comment --where "l_shipmode = 'MAIL'" \
    --where "l_comment > p" --where "l_quantity <= 10.5"
same "v2 delta ints" "select l_orderkey, l_extendedprice from '$V' where l_orderkey <> 1 and
        l_extendedprice > 90000.5" -- "$V" --columns l_orderkey,l_extendedprice --where "l_orderkey != 1" \
    --where "l_extendedprice > 90000.5"
same "types nulls" "select id, name from '$T' where name is null" -- "$T" --columns id,name --where "name IS NULL"
same "types not null" "select id, name, d from '$T' where name is not null and d >= '1992-03-01'" -- \
    "$T" --columns id,name,d --where "name is not null" --where "d >= 1992-03-01"
same "types double float bool" "select $TSEL from '$T' where dbl > 50 and flt <= 20.25 and flag = false" -- \
    "$T" --columns "$TCOLS" --where "dbl > 50" --where "flt <= 20.25" --where "flag = false"
same "types decimal inexact" "select id, small_dec from '$T' where small_dec > 35.001 and small_dec < 100" -- \
    "$T" --columns id,small_dec --where "small_dec > 35.001" --where "small_dec < 100"
same "types timestamp" "select id from '$T' where epoch_us(ts) >= 1704247200000000" -- \
    "$T" --columns id --where "ts >= 1704247200000000"
same "types integer vs fraction" "select id from '$T' where id <= 2.5 or id = 1.5" -- \
    "$T" --columns id --where "id <= 2.5"
same "filter-only column" "select n_name from '$DATA/nation.parquet' where n_regionkey = 3" -- \
    "$DATA/nation.parquet" --columns n_name --where "n_regionkey = 3"
same "nothing matches" "select r_name from '$DATA/region.parquet' where r_regionkey > 10" -- \
    "$DATA/region.parquet" --columns r_name --where "r_regionkey > 10"

# ------------------------------------------------------------ pruning
R="$DATA/lineitem-rowgroup10000.parquet"
same "pruned scan" "select l_orderkey, l_linenumber, l_shipdate from '$R' where l_orderkey >= 20000 and
        l_orderkey < 26000" -- "$R" --columns l_orderkey,l_linenumber,l_shipdate \
    --where "l_orderkey >= 20000" --where "l_orderkey < 26000"
"$PISTA" parquet cat "$R" --columns l_orderkey,l_linenumber,l_shipdate --stats > /dev/null 2> "$tmp/all" &&
"$PISTA" parquet cat "$R" --columns l_orderkey,l_linenumber,l_shipdate --where "l_orderkey >= 20000" \
    --where "l_orderkey < 26000" --stats > /dev/null 2> "$tmp/pruned" || fail "pruning: pista failed"
bytes() { sed -n 's/^bytes read \([0-9]*\) .*/\1/p' "$1"; }
checks=$((checks + 1))
if ! grep -q "row groups 6 (pruned 0)" "$tmp/all" || ! grep -Eq "row groups 6 \(pruned [45]\)" "$tmp/pruned"; then
    fail "pruning: row groups not pruned: $(cat "$tmp/all" "$tmp/pruned")"
elif [ "$(bytes "$tmp/pruned")" -ge "$(( $(bytes "$tmp/all") / 2 ))" ]; then
    fail "pruning: read $(bytes "$tmp/pruned") bytes, the full scan $(bytes "$tmp/all")"
else
    echo "ok: pruning ($(bytes "$tmp/pruned") of $(bytes "$tmp/all") bytes read)"
fi

# ------------------------------------------------------------ several files
same "glob" "select l_orderkey, l_tax from read_parquet('$DATA/lineitem-*.parquet') where l_tax = 0.08" -- \
    "$DATA/lineitem-*.parquet" --columns l_orderkey,l_tax --where "l_tax = 0.08"
same "limit" "select * from '$DATA/supplier.parquet' limit 7" -- "$DATA/supplier.parquet" --limit 7

# ------------------------------------------------------------ errors
expect_error() {   # expect_error NAME NEEDLE PISTA-ARGS...
    local name="$1" needle="$2"
    shift 2
    checks=$((checks + 1))
    "$PISTA" parquet cat "$@" > /dev/null 2> "$tmp/err"
    local rc=$?
    if [ "$rc" -ne 1 ] || ! grep -q -- "$needle" "$tmp/err"; then
        fail "$name: exit $rc, stderr: $(cat "$tmp/err") (wanted '$needle')"
    else
        echo "ok: $name error"
    fi
}
same "wide decimal (16 bytes)" "select id, wide from '$T'" -- "$T" --columns id,wide
expect_error "a predicate on a wide decimal" "the scan compares DECIMAL(20,3) values only for IS" "$T" --columns id --where "wide > 1"
expect_error "nested" "nested.parquet: column lst.list.element is nested" "$DATA/nested.parquet"
expect_error "nested struct" "column st is nested" "$DATA/nested.parquet" --columns st
expect_error "missing column" "no column nope" "$T" --columns id,nope
expect_error "missing file" "not found" "$tmp/none.parquet"
expect_error "schema mismatch" "but not in" "$DATA/region.parquet" "$DATA/nation.parquet"
expect_error "bad constant" "not a DATE constant" "$T" --columns id --where "d = 1992-02-30"
expect_error "memory limit" "out of memory.*limit" "$L" --device cpu --memory-limit 64K
head -c 100000 "$L" > "$tmp/cut.parquet"
expect_error "truncated" "cut.parquet" "$tmp/cut.parquet"
checks=$((checks + 1))
"$PISTA" parquet cat "$T" --where "d <" > /dev/null 2>&1
[ $? -eq 2 ] && echo "ok: usage error" || fail "a bad --where is not a usage error"

# table format: a header, a rule, aligned rows
checks=$((checks + 1))
"$PISTA" parquet cat "$DATA/region.parquet" --format table --columns r_regionkey,r_name > "$tmp/table" ||
    fail "table format failed"
if [ "$(sed -n 1p "$tmp/table")" != "r_regionkey | r_name" ] || [ "$(wc -l < "$tmp/table")" -ne 7 ] ||
   [ "$(sed -n 3p "$tmp/table")" != "0           | AFRICA" ]; then
    fail "table format: $(cat "$tmp/table")"
fi

[ "$checks" -ge 30 ] || fail "only $checks checks ran"
if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all $checks checks passed"
