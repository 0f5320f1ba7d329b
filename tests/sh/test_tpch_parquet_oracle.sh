#!/usr/bin/env bash
# `pista gen tpch` Parquet output (the default format) at SF 0.01 against the
# .tbl output, which test_tpch_gen.sh proves byte-identical to dbgen:
# - DuckDB (tests/oracle) reads every table with the same rows, in order, and
#   reports the column names and types of the README's "Column types";
# - our reader (`pista parquet cat --format csv`) gives the same rows;
# - --threads 1 and 3 write byte-identical files; --parts 3 concatenated is
#   the whole table, and --part i alone writes the same file as the split;
# - the writer options (--codec, --page-version, --no-dictionary,
#   --row-group-rows, --page-size) reach the files (DuckDB's parquet_metadata);
# - bad options exit with status 2 and a clear message.
# Both sides of each comparison come from independent code: DuckDB's or our
# Parquet reader versus our .tbl text. Needs node and @duckdb/node-api
# (tests/oracle/setup.sh installs it); without them the test FAILS.
set -u
: "${PISTA:?}" "${PISTA_SOURCE_DIR:?}"
ORACLE="$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs"
TABLES="region nation supplier customer part partsupp orders lineitem"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not installed: the DuckDB oracle cannot run (install Node.js >= 18 and npm)" >&2
    exit 1
fi
if ! bash "$PISTA_SOURCE_DIR/tests/oracle/setup.sh" >&2; then
    echo "FAIL: the DuckDB oracle is unavailable (tests/oracle/setup.sh failed)" >&2
    exit 1
fi
duck() { node "$ORACLE" -c "$1"; }

# .tbl -> the answers format both readers print: no trailing '|', and
# l_quantity (an integer in dbgen's text) as DECIMAL(15,2).
answers() {
    if [ "$1" = lineitem ]; then
        awk 'BEGIN { FS = OFS = "|" } { NF--; $5 = $5 ".00"; print }' "$2"
    else
        sed 's/|$//' "$2"
    fi
}

# The README's column types (shared/tpch/README.md, "Column types").
types() {
    case $1 in
    region) echo "r_regionkey INTEGER, r_name VARCHAR, r_comment VARCHAR" ;;
    nation) echo "n_nationkey INTEGER, n_name VARCHAR, n_regionkey INTEGER, n_comment VARCHAR" ;;
    supplier) echo "s_suppkey INTEGER, s_name VARCHAR, s_address VARCHAR, s_nationkey INTEGER, s_phone VARCHAR, s_acctbal DECIMAL(15,2), s_comment VARCHAR" ;;
    customer) echo "c_custkey INTEGER, c_name VARCHAR, c_address VARCHAR, c_nationkey INTEGER, c_phone VARCHAR, c_acctbal DECIMAL(15,2), c_mktsegment VARCHAR, c_comment VARCHAR" ;;
    part) echo "p_partkey INTEGER, p_name VARCHAR, p_mfgr VARCHAR, p_brand VARCHAR, p_type VARCHAR, p_size INTEGER, p_container VARCHAR, p_retailprice DECIMAL(15,2), p_comment VARCHAR" ;;
    partsupp) echo "ps_partkey INTEGER, ps_suppkey INTEGER, ps_availqty INTEGER, ps_supplycost DECIMAL(15,2), ps_comment VARCHAR" ;;
    orders) echo "o_orderkey BIGINT, o_custkey INTEGER, o_orderstatus VARCHAR, o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority VARCHAR, o_clerk VARCHAR, o_shippriority INTEGER, o_comment VARCHAR" ;;
    lineitem) echo "l_orderkey BIGINT, l_partkey INTEGER, l_suppkey INTEGER, l_linenumber INTEGER, l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2), l_returnflag VARCHAR, l_linestatus VARCHAR, l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE, l_shipinstruct VARCHAR, l_shipmode VARCHAR, l_comment VARCHAR" ;;
    esac
}

"$PISTA" gen tpch --sf 0.01 --out "$TMP/tbl" --format tbl --threads 2 || fail "gen tbl"
# No --format: Parquet is the default.
"$PISTA" gen tpch --sf 0.01 --out "$TMP/t1" --threads 1 2> "$TMP/err" || fail "gen parquet: $(cat "$TMP/err")"
[ ! -s "$TMP/err" ] || fail "unexpected stderr: $(cat "$TMP/err")"
"$PISTA" gen tpch --sf 0.01 --out "$TMP/t3" --format parquet --threads 3 || fail "gen parquet --threads 3"
[ "$(ls "$TMP/t1" | tr '\n' ' ')" = "customer.parquet lineitem.parquet nation.parquet orders.parquet part.parquet partsupp.parquet region.parquet supplier.parquet " ] ||
    fail "default output files: $(ls "$TMP/t1")"

for t in $TABLES; do
    before=$fails
    f="$TMP/t1/$t.parquet"
    cmp -s "$f" "$TMP/t3/$t.parquet" || fail "$t: --threads 1 and 3 wrote different files"
    answers "$t" "$TMP/tbl/$t.tbl" > "$TMP/want"
    rows=$(wc -l < "$TMP/want")
    header=$(types "$t" | sed 's/ [A-Z(),0-9]*\(, \|$\)/|/g; s/|$//')
    # Our reader.
    "$PISTA" parquet cat "$f" --format csv > "$TMP/ours" || fail "$t: parquet cat failed"
    [ "$(head -1 "$TMP/ours")" = "$header" ] || fail "$t: our header '$(head -1 "$TMP/ours")', want '$header'"
    tail -n +2 "$TMP/ours" | cmp -s - "$TMP/want" || fail "$t: parquet cat differs from the .tbl rows"
    # DuckDB, rows in file order.
    duck "select * from '$f'" > "$TMP/duck" || fail "$t: DuckDB cannot read $f"
    [ "$(head -1 "$TMP/duck")" = "$header" ] || fail "$t: DuckDB header '$(head -1 "$TMP/duck")', want '$header'"
    tail -n +2 "$TMP/duck" | cmp -s - "$TMP/want" || fail "$t: DuckDB's rows differ from the .tbl rows"
    # DuckDB's column types.
    got=$(duck "select column_name || ' ' || column_type from (describe select * from '$f')" |
        tail -n +2 | paste -sd';' | sed 's/;/, /g')
    [ "$got" = "$(types "$t")" ] || fail "$t: DuckDB types '$got', want '$(types "$t")'"
    [ $fails -ne $before ] || echo "ok: $t ($rows rows)"
done

# Parts: concatenated in order they are the whole table; --part i alone
# writes the same bytes as the full split.
"$PISTA" gen tpch --sf 0.01 --out "$TMP/p" --parts 3 --threads 2 || fail "gen --parts 3"
"$PISTA" gen tpch --sf 0.01 --out "$TMP/p1" --parts 3 --part 1 || fail "gen --parts 3 --part 1"
for t in $TABLES; do
    for i in 0 1 2; do
        "$PISTA" parquet cat "$TMP/p/$t/$t.$i.parquet" --format csv | tail -n +2
    done > "$TMP/cat"
    "$PISTA" parquet cat "$TMP/t1/$t.parquet" --format csv | tail -n +2 | cmp -s - "$TMP/cat" ||
        fail "$t: the 3 parts are not the whole table"
    cmp -s "$TMP/p/$t/$t.1.parquet" "$TMP/p1/$t/$t.1.parquet" || fail "$t: --part 1 differs from the split"
    [ "$(ls "$TMP/p1/$t")" = "$t.1.parquet" ] || fail "--part 1 wrote $(ls "$TMP/p1/$t")"
done
# Lineitem part i holds exactly the lines of the orders of orders part i (DuckDB).
for i in 0 1 2; do
    n=$(duck "select count(*) from '$TMP/p/lineitem/lineitem.$i.parquet' l
              anti join '$TMP/p/orders/orders.$i.parquet' o on l.l_orderkey = o.o_orderkey" | tail -1)
    [ "$n" = 0 ] || fail "lineitem part $i has $n lines of orders outside orders part $i"
done

# Writer options reach the files.
"$PISTA" gen tpch --sf 0.01 --out "$TMP/opt" --tables lineitem --codec zstd --page-version 2 \
    --no-dictionary --row-group-rows 5000 --page-size 64K || fail "gen with writer options"
f="$TMP/opt/lineitem.parquet"
got=$(duck "select count(distinct row_group_id), min(compression), max(compression),
                   bool_or(encodings like '%DICTIONARY%'), max(num_values)
            from parquet_metadata('$f')" | tail -1)
[ "$got" = "13|ZSTD|ZSTD|false|5000" ] || fail "options: parquet_metadata says '$got', want 13|ZSTD|ZSTD|false|5000"
duck "select * from '$f'" | tail -n +2 | cmp -s - <(answers lineitem "$TMP/tbl/lineitem.tbl") ||
    fail "options: DuckDB's rows differ"
"$PISTA" parquet meta "$f" --pages > "$TMP/meta" || fail "parquet meta --pages"
grep -q "DATA_PAGE_V2" "$TMP/meta" || fail "--page-version 2: no DATA_PAGE_V2 page"
# Default: LZ4_RAW, dictionary where it pays (l_returnflag has 3 values).
got=$(duck "select compression, encodings from parquet_metadata('$TMP/t1/lineitem.parquet')
            where path_in_schema = 'l_returnflag'" | tail -1)
case $got in LZ4_RAW*DICTIONARY*) ;; *) fail "defaults: l_returnflag chunk is '$got'" ;; esac

# Bad options: a clear message and exit status 2, nothing written.
expect_usage() {
    local pattern=$1; shift
    "$PISTA" "$@" > /dev/null 2> "$TMP/err"
    local rc=$?
    [ $rc -eq 2 ] || fail "'$*' exited $rc, want 2"
    grep -q -- "$pattern" "$TMP/err" || fail "'$*' said '$(cat "$TMP/err")', want /$pattern/"
}
expect_usage "unknown codec 'brotli5'" gen tpch --sf 0.01 --out "$TMP/x" --codec brotli5
expect_usage "not 1 or 2" gen tpch --sf 0.01 --out "$TMP/x" --page-version 3
expect_usage "row count" gen tpch --sf 0.01 --out "$TMP/x" --row-group-rows 0
expect_usage "page-size" gen tpch --sf 0.01 --out "$TMP/x" --page-size lots
expect_usage "needs a value" gen tpch --sf 0.01 --out "$TMP/x" --codec
[ ! -e "$TMP/x" ] || fail "a failed command created output"

[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
