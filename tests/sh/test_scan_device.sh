#!/usr/bin/env bash
# test_scan_device.sh - Parquet pages decoded by the device's kernels: the
# writer's own files (pista gen, SF 0.01 lineitem and orders) with every
# codec, v1 and v2 data pages, dictionary and PLAIN-only, small row groups
# and pages, queried on `sim` (pages of output columns, strings too,
# decompressed and decoded by kn_decompress_pages and kn_decode_pages, or
# decompressed on the host first for GZIP, ZSTD and BROTLI) give exactly
# what the cpu device gives; EXPLAIN ANALYZE on sim counts pages decoded on
# the device (and those decompressed on the host first), on cpu none; a
# file DuckDB writes with v2 pages (DELTA_BINARY_PACKED integers,
# BYTE_STREAM_SPLIT floats and doubles, strings, NULLs) decodes on the device to
# what cpu and DuckDB give; and a page damaged on disk fails the query on
# sim with the file, row group and column named, as on cpu.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

QUERIES=(
    "SELECT l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice), avg(l_discount), count(*) FROM lineitem GROUP BY 1, 2 ORDER BY 1, 2"
    "SELECT sum(l_extendedprice * l_discount) FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
    "SELECT o_orderpriority, count(*), sum(o_totalprice), min(o_orderdate), max(o_custkey) FROM orders WHERE o_orderkey % 7 = 3 GROUP BY 1 ORDER BY 1"
    "SELECT l_orderkey, l_linenumber, l_partkey, l_suppkey, l_tax FROM lineitem WHERE l_orderkey < 200 ORDER BY 1, 2"
    "SELECT l_shipmode, l_shipinstruct, count(*), sum(length(l_comment)), min(l_comment), max(l_comment), max(l_comment || l_shipmode) FROM lineitem GROUP BY 1, 2 ORDER BY 1, 2"
    "SELECT o_orderkey, o_clerk, o_orderstatus, o_comment FROM orders WHERE o_orderkey < 300 ORDER BY 1"
)

# check DIR LABEL: every query on cpu and sim, same output; sim decodes pages on the device.
check() {
    local dir="$1" label="$2" k=0
    for q in "${QUERIES[@]}"; do
        k=$((k + 1))
        "$PISTA" --device cpu --data "$dir" -c "$q" > "$tmp/cpu.out" 2> "$tmp/cpu.err" || fail "$label q$k on cpu: $(head -c 300 "$tmp/cpu.err")"
        "$PISTA" --device sim --data "$dir" -c "$q" > "$tmp/sim.out" 2> "$tmp/sim.err" || fail "$label q$k on sim: $(head -c 300 "$tmp/sim.err")"
        if ! cmp -s "$tmp/cpu.out" "$tmp/sim.out"; then
            fail "$label q$k: sim differs from cpu"
            diff "$tmp/cpu.out" "$tmp/sim.out" | head -n 6
        fi
        [ -s "$tmp/cpu.out" ] || fail "$label q$k: no output"
    done
    local ex
    ex=$("$PISTA" --device sim --data "$dir" -c "EXPLAIN ANALYZE ${QUERIES[0]}" 2>&1)
    local dev host_unc
    dev=$(echo "$ex" | sed -n 's/^data pages decoded: \([0-9]*\) on the device.*/\1/p')
    host_unc=$(echo "$ex" | sed -n 's/.*(\([0-9]*\) of them decompressed on the host first).*/\1/p')
    if [ -z "$dev" ] || [ "$dev" -eq 0 ]; then
        fail "$label: EXPLAIN ANALYZE on sim shows no page decoded on the device: $(echo "$ex" | head -n 4)"
    else
        echo "ok $label: $dev pages decoded on sim ($host_unc decompressed on the host first)"
    fi
    case "$label" in
    *zstd* | *gzip* | *brotli*) [ "${host_unc:-0}" -gt 0 ] || fail "$label: no page decompressed on the host" ;;
    *) [ "${host_unc:-1}" -eq 0 ] || fail "$label: $host_unc pages decompressed on the host" ;;
    esac
    ex=$("$PISTA" --device cpu --data "$dir" -c "EXPLAIN ANALYZE ${QUERIES[0]}" 2>&1)
    echo "$ex" | grep -q "^data pages decoded: 0 on the device" || fail "$label: cpu decoded pages on a device: $(echo "$ex" | grep 'data pages')"
}

for cfg in "lz4_raw 1" "snappy 2" "zstd 1" "gzip 2" "uncompressed 1" "brotli 1" "lz4_raw 2 --no-dictionary" "snappy 1 --no-dictionary"; do
    set -- $cfg
    codec="$1" pv="$2"
    shift 2
    dir="$tmp/$codec-v$pv$*"
    dir="${dir// /}"
    if ! "$PISTA" gen tpch --sf 0.01 --tables lineitem,orders --out "$dir" --codec "$codec" --page-version "$pv" \
        --row-group-rows 7000 --page-size 16K "$@" > "$tmp/gen.log" 2>&1; then
        fail "gen $cfg: $(tail -n 3 "$tmp/gen.log")"
        continue
    fi
    check "$dir" "$codec v$pv $*"
done

# Where pages are decoded: --page-decode host on sim decodes every page on
# the host (the same answer), PISTA_PAGE_DECODE=host too, and a value that
# is none of auto, host, device is refused naming it.
dir="$tmp/lz4_raw-v1"
Q="${QUERIES[4]}"
"$PISTA" --device sim --data "$dir" -c "$Q" > "$tmp/dev.out" 2>&1
for how in "--page-decode host" "--page-decode=host" "env"; do
    if [ "$how" = env ]; then
        out=$(PISTA_PAGE_DECODE=host "$PISTA" --device sim --data "$dir" -c "EXPLAIN ANALYZE $Q" 2>&1)
        PISTA_PAGE_DECODE=host "$PISTA" --device sim --data "$dir" -c "$Q" > "$tmp/host.out" 2>&1
    else
        out=$("$PISTA" --device sim $how --data "$dir" -c "EXPLAIN ANALYZE $Q" 2>&1)
        "$PISTA" --device sim $how --data "$dir" -c "$Q" > "$tmp/host.out" 2>&1
    fi
    echo "$out" | grep -q "^data pages decoded: 0 on the device" || fail "$how: pages decoded on the device: $(echo "$out" | grep 'data pages')"
    cmp -s "$tmp/dev.out" "$tmp/host.out" || fail "$how: the answer differs from the device's decoding"
done
out=$("$PISTA" --device sim --page-decode device --data "$dir" -c "EXPLAIN ANALYZE $Q" 2>&1)
echo "$out" | grep -q "^data pages decoded: [1-9][0-9]* on the device" || fail "--page-decode device: $(echo "$out" | grep 'data pages')"
"$PISTA" --device sim --page-decode gpu --data "$dir" -c "SELECT 1" > "$tmp/bad.out" 2>&1 && fail "--page-decode gpu accepted"
grep -q "page-decode 'gpu': expected auto, host or device" "$tmp/bad.out" || fail "--page-decode gpu: $(head -c 200 "$tmp/bad.out")"
PISTA_PAGE_DECODE=gpu "$PISTA" --device sim --data "$dir" -c "SELECT 1" > "$tmp/bad.out" 2>&1 && fail "PISTA_PAGE_DECODE=gpu accepted"
grep -q "PISTA_PAGE_DECODE 'gpu': expected auto, host or device" "$tmp/bad.out" || fail "PISTA_PAGE_DECODE=gpu: $(head -c 200 "$tmp/bad.out")"

# A damaged page of an output column no predicate reads: the bit width byte
# of o_custkey's first data page (a dictionary page's indices) inverted, so
# the width exceeds 32. The device refuses the page and the query fails
# naming the file, row group, column and page, as on cpu.
PATCH="${PISTA_BUILD_DIR:?}/tests/pq_patch"
dir="$tmp/damaged"
"$PISTA" gen tpch --sf 0.01 --tables orders --out "$dir" --codec uncompressed --row-group-rows 4000 \
    > "$tmp/gen.log" 2>&1 || fail "gen damaged: $(tail -n 3 "$tmp/gen.log")"
"$PATCH" "$dir/orders.parquet" "$tmp/o.parquet" flip 1 1 0 && mv "$tmp/o.parquet" "$dir/orders.parquet" || fail "pq_patch flip"
for dev in cpu sim; do
    if "$PISTA" --device "$dev" --data "$dir" -c "SELECT sum(o_custkey), count(*) FROM orders" > "$tmp/d.out" 2> "$tmp/d.err"; then
        fail "damaged file on $dev: the query succeeded: $(head -n 3 "$tmp/d.out" | tr '\n' ' ')"
    elif ! grep -q "orders.parquet: row group 0 column o_custkey page 1 (at byte [0-9]*): RLE_DICTIONARY: index bit width.* exceeds 32" "$tmp/d.err"; then
        fail "damaged file on $dev: not the expected error: $(head -c 300 "$tmp/d.err")"
    else
        echo "ok damaged on $dev: $(head -c 200 "$tmp/d.err")"
    fi
done

# DuckDB's PARQUET_VERSION v2 file: every page decoded on the device.
if ! bash "${PISTA_SOURCE_DIR:?}/tests/oracle/setup.sh" > "$tmp/oracle.log" 2>&1; then
    fail "the DuckDB oracle is unavailable (tests/oracle/setup.sh): $(tail -n 3 "$tmp/oracle.log")"
else
    ORACLE="$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs"
    dir="$tmp/duckdb_v2"
    mkdir -p "$dir"
    Q="SELECT sum(a), sum(b), sum(f), sum(d), count(*) FILTER (WHERE flag), count(nflag), sum(nd), min(nd), max(f), count(nd), sum(length(s)), min(s), max(s), count(ns), sum(length(ns)), max(ns) FROM t"
    if ! node "$ORACLE" -c "COPY (SELECT i::INT AS a, i::BIGINT * 1000 AS b, (i / 3.0)::FLOAT AS f, (i / 7.0)::DOUBLE AS d, i % 3 = 0 AS flag, CASE WHEN i % 5 = 0 THEN NULL ELSE i % 2 = 0 END AS nflag, CASE WHEN i % 7 = 0 THEN NULL ELSE (i * 1.5)::DOUBLE END AS nd, 'v' || (i * 7919 % 100003)::VARCHAR AS s, CASE WHEN i % 9 = 0 THEN NULL ELSE repeat(chr(97 + (i % 26)::INT), (i % 13)::INT) || i::VARCHAR END AS ns FROM range(100000) r(i)) TO '$dir/t.parquet' (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION snappy, ROW_GROUP_SIZE 30000); SELECT 1" > "$tmp/w.log" 2>&1; then
        fail "DuckDB could not write the v2 file: $(head -c 300 "$tmp/w.log")"
    else
        node "$ORACLE" -c "CREATE VIEW t AS SELECT * FROM '$dir/t.parquet'; $Q" > "$tmp/duck.out" 2>&1
        "$PISTA" --device cpu --data "$dir" --answers -c "$Q" > "$tmp/cpu.out" 2>&1
        "$PISTA" --device sim --data "$dir" --answers -c "$Q" > "$tmp/sim.out" 2>&1
        if ! cmp -s "$tmp/cpu.out" "$tmp/sim.out" || ! diff -q <(tail -n 1 "$tmp/duck.out") <(tail -n 1 "$tmp/cpu.out") > /dev/null; then
            fail "DuckDB v2 file: cpu, sim and DuckDB differ: $(tail -n 1 "$tmp/cpu.out") / $(tail -n 1 "$tmp/sim.out") / $(tail -n 1 "$tmp/duck.out")"
        else
            echo "ok DuckDB v2 file: $(tail -n 1 "$tmp/sim.out")"
        fi
        ex=$("$PISTA" --device sim --data "$dir" -c "EXPLAIN ANALYZE SELECT sum(f), sum(d), sum(nd), sum(a), max(s), max(ns) FROM t" 2>&1)
        if ! echo "$ex" | grep -q "data pages decoded: [1-9][0-9]* on the device (0 of them decompressed on the host first), 0 on the host"; then
            fail "DuckDB v2 file: BYTE_STREAM_SPLIT, DELTA and string pages not all decoded on the device: $(echo "$ex" | grep -i "pages decoded")"
        fi
    fi
fi

echo "$fails failures"
[ "$fails" -eq 0 ]
