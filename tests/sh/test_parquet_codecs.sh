#!/usr/bin/env bash
# test_parquet_codecs.sh - codecs, encodings and damaged metadata (issue 18,
# item 2), against DuckDB (tests/oracle/oracle.mjs): BROTLI files DuckDB
# writes and ones our writer writes, read by both; full-range DELTA_BINARY_PACKED;
# wrong column-chunk sizes; page CRCs; definition levels that do not match
# the schema. Needs node and
# @duckdb/node-api (tests/oracle/setup.sh); without them the test FAILS.
# Damaged files are made by the pq_patch tool (tests/tools/pq_patch.c).
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
SRC="${PISTA_SOURCE_DIR:?}"
ORACLE="$SRC/tests/oracle/oracle.mjs"
PATCH="${PISTA_BUILD_DIR:?}/tests/pq_patch"
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
duck() { node "$ORACLE" -c "$1" > /dev/null || fail "DuckDB could not run: $1"; }

# same NAME FILE: `pista parquet cat` of FILE equals DuckDB's select *.
same() {
    local name="$1" f="$2"
    checks=$((checks + 1))
    if ! node "$ORACLE" -c "select * from '$f'" > "$tmp/duck"; then fail "$name: the oracle failed"; return; fi
    if ! "$PISTA" parquet cat --format csv "$f" > "$tmp/ours" 2> "$tmp/err"; then
        fail "$name: pista failed: $(cat "$tmp/err")"
        return
    fi
    if [ "$(wc -l < "$tmp/duck")" -lt 2 ]; then fail "$name: the oracle printed no rows"; return; fi
    if ! diff "$tmp/duck" "$tmp/ours" > "$tmp/diff"; then
        fail "$name differs from DuckDB (< duckdb, > pista):"
        head -10 "$tmp/diff" >&2
    else
        echo "ok: $name ($(($(wc -l < "$tmp/ours") - 1)) rows)"
    fi
}

# refused NAME FILE TEXT...: pista fails on FILE, and its message names the
# file and holds every TEXT.
refused() {
    local name="$1" f="$2"
    shift 2
    checks=$((checks + 1))
    if "$PISTA" parquet cat --format csv "$f" > /dev/null 2> "$tmp/err"; then
        fail "$name: pista read the file"
        return
    fi
    local t
    for t in "$f" "$@"; do
        if ! grep -qF -- "$t" "$tmp/err"; then
            fail "$name: the error does not say '$t': $(cat "$tmp/err")"
            return
        fi
    done
    echo "ok: $name ($(head -c 300 "$tmp/err"))"
}

# ------------------------------------------------------------ BROTLI
# DuckDB's BROTLI pages: v1 and v2, dictionary and plain, NULLs, several row groups.
ROWS="select i::INTEGER as i, (i * 1000003)::BIGINT as l,
          case when i % 7 = 0 then null else 'str' || (i % 97) end as s,
          case when i % 5 = 0 then null else md5(i::varchar) end as h,
          i / 3.0 as d
      from range(30000) t(i)"
for v in v1 v2; do
    f="$tmp/brotli_$v.parquet"
    duck "COPY ($ROWS) TO '$f' (FORMAT PARQUET, COMPRESSION BROTLI, PARQUET_VERSION $v, ROW_GROUP_SIZE 10000)"
    same "DuckDB BROTLI $v" "$f"
done
# Our writer's BROTLI files (some NULLs with v2 pages, REQUIRED columns with
# small v1 pages), read back by us and compared with DuckDB reading them.
mkdir -p "$tmp/w"
if ! "$PISTA" parquet write-test "$tmp/w" > "$tmp/write.log" 2>&1; then
    fail "pista parquet write-test: $(cat "$tmp/write.log")"
else
    for c in some_null_brotli_v2 required_brotli_v1_small; do
        same "pista BROTLI $c" "$tmp/w/$c.parquet"
    done
fi

# ------------------------------------------------------------ DELTA_BINARY_PACKED, full range
# DuckDB's v2 pages take INT32 deltas in 64 bits: INT32_MIN next to INT32_MAX
# makes 33-bit miniblocks. INT64 extremes wrap in 64 bits. Random values in
# between, NULLs, and enough rows for several pages.
f="$tmp/delta.parquet"
duck "COPY (select case when i % 5 = 0 then -2147483648 when i % 5 = 1 then 2147483647
                   when i % 5 = 2 then null else (hash(i) % 4294967296)::BIGINT - 2147483648 end::INTEGER as a,
                   case when i % 7 = 0 then -9223372036854775808 when i % 7 = 1 then 9223372036854775807
                   when i % 7 = 2 then null else (hash(i)::HUGEINT - 9223372036854775808)::BIGINT end as b
            from range(300000) t(i))
      TO '$f' (FORMAT PARQUET, PARQUET_VERSION v2)"
checks=$((checks + 1))
enc="$(node "$ORACLE" -c "select distinct encodings from parquet_metadata('$f')")"
if [ "$enc" != "$(printf 'encodings\nDELTA_BINARY_PACKED')" ]; then
    fail "DuckDB no longer writes DELTA_BINARY_PACKED here: $enc"
fi
same "DELTA_BINARY_PACKED INT32 and INT64 extremes" "$f"

# ------------------------------------------------------------ wrong total_uncompressed_size
# parquetjs writes wrong column-chunk sizes; readers trust the page headers.
# Every column of a file with dictionary and plain pages, v1 and v2, gets a
# size too small (0, 1), absurdly large, and negative; DuckDB reads them all.
for v in v1 v2; do
    f="$tmp/brotli_$v.parquet"
    for size in 0 1 9000000000000000 -7; do
        g="$tmp/size_${v}_$size.parquet"
        cp "$f" "$g.0"
        for col in 0 1 2 3 4; do
            "$PATCH" "$g.$col" "$g.$((col + 1))" uncompressed $col $size || fail "pq_patch uncompressed $col $size"
        done
        mv "$g.5" "$g"
        same "total_uncompressed_size $size ($v)" "$g"
    done
done

# ------------------------------------------------------------ page CRCs
# Our writer's CRCs (write-test cases crc_*) checked by node's zlib.crc32 over
# each page's stored bytes; the files read back (checking them) as DuckDB
# reads them; one inverted byte in a dictionary page, in the levels of a v2
# data page and in a v1 data page is a CRC error naming file, column and page.
for c in crc_snappy_v2_small crc_plain_v1; do
    f="$tmp/w/$c.parquet"
    checks=$((checks + 1))
    if ! "$PATCH" "$f" - pages > "$tmp/pages"; then
        fail "$c: pq_patch pages failed"
        continue
    fi
    if ! node -e '
        const fs = require("fs"), zlib = require("zlib");
        const file = fs.readFileSync(process.argv[1]);
        let n = 0;
        for (const line of fs.readFileSync(process.argv[2], "utf8").trim().split("\n")) {
            const [rg, col, page, off, len, crc] = line.split(" ");
            const want = zlib.crc32(file.subarray(+off, +off + +len));
            if (crc !== String(want)) { console.error(`rg ${rg} col ${col} page ${page}: crc ${crc}, zlib ${want}`); process.exit(1); }
            n++;
        }
        console.log(`ok: ${n} page CRCs match zlib`);
    ' "$f" "$tmp/pages"; then
        fail "$c: the writer's CRCs differ from zlib's"
    fi
    same "pista CRC file $c" "$f"
done
if [ -s "$tmp/w/crc_snappy_v2_small.parquet" ]; then
    W="$tmp/w/crc_snappy_v2_small.parquet"
    # column 8 (s) starts with its dictionary page; column 2 (i) is OPTIONAL,
    # so its v2 data pages start with definition levels.
    "$PATCH" "$W" "$tmp/crc_dict.parquet" flip 8 0 5 && \
        refused "CRC: dictionary page" "$tmp/crc_dict.parquet" "page CRC mismatch" "column s page 0"
    "$PATCH" "$W" "$tmp/crc_levels.parquet" flip 2 1 0 && \
        refused "CRC: v2 definition levels" "$tmp/crc_levels.parquet" "page CRC mismatch" "column i page 1"
    "$PATCH" "$tmp/w/crc_plain_v1.parquet" "$tmp/crc_v1.parquet" flip 4 0 100 && \
        refused "CRC: v1 data page" "$tmp/crc_v1.parquet" "page CRC mismatch" "column d page 0"
fi

# ------------------------------------------------------------ levels that do not match the schema
# A footer whose repetition type was flipped: OPTIONAL -> REQUIRED in DuckDB's
# v1 PLAIN columns (their levels would be read as values), REQUIRED ->
# OPTIONAL in our writer's v1 and v2 pages, OPTIONAL -> REQUIRED in our v2
# pages with levels. Each is an error naming the file and the column.
f="$tmp/levels.parquet"
duck "COPY (select i::INTEGER as i, (i * 7)::BIGINT as l, i / 3.0 as d from range(30000) t(i))
      TO '$f' (FORMAT PARQUET, PARQUET_VERSION v1)"
for c in 0:i 1:l 2:d; do
    "$PATCH" "$f" "$tmp/req.parquet" repetition "${c%%:*}" required && \
        refused "OPTIONAL made REQUIRED, DuckDB v1 column ${c#*:}" "$tmp/req.parquet" \
            "column ${c#*:} page 0" "does not match the schema"
done
if [ -s "$tmp/w/required_snappy_v2_small.parquet" ]; then
    for c in 0:id 4:d 8:s; do
        "$PATCH" "$tmp/w/required_snappy_v2_small.parquet" "$tmp/opt.parquet" repetition "${c%%:*}" optional && \
            refused "REQUIRED made OPTIONAL, v2 column ${c#*:}" "$tmp/opt.parquet" \
                "column ${c#*:} page" "definition levels do not match the schema"
        "$PATCH" "$tmp/w/required_brotli_v1_small.parquet" "$tmp/opt.parquet" repetition "${c%%:*}" optional && \
            refused "REQUIRED made OPTIONAL, v1 column ${c#*:}" "$tmp/opt.parquet" \
                "column ${c#*:} page" "definition levels"
    done
    "$PATCH" "$tmp/w/some_null_brotli_v2.parquet" "$tmp/req.parquet" repetition 2 required && \
        refused "OPTIONAL made REQUIRED, v2 column i" "$tmp/req.parquet" "column i page" \
            "schema says the column is REQUIRED"
fi

echo "$checks checks, $fails failed"
[ "$fails" -eq 0 ]
