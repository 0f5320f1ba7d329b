#!/usr/bin/env bash
# test_parquet_meta.sh - `pista parquet meta` on the test files: the facts of
# shared/tpch/README.md appear in the human-readable output, --pages lists
# pages, and bad files give exit 1 with a message naming the file.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
DATA="${PISTA_TEST_DATA:?}/parquet"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# expect FILE PATTERN...: every extended regex must match some output line.
expect() {
    local file="$1"; shift
    local out
    if ! out="$("$PISTA" parquet meta "$DATA/$file" 2>&1)"; then
        fail "$file: exit status $? ($out)"; return
    fi
    for pat in "$@"; do
        grep -Eq -- "$pat" <<<"$out" || fail "$file: no line matches '$pat'"
    done
}

expect region.parquet '^rows: +5 in 1 row group$' '^version: +1$' \
    '^created by: DuckDB version v1\.5\.6' \
    '^  0 +r_regionkey +INT32 +- +INT_32 +OPTIONAL +INTEGER$' \
    '^  1 +r_name +BYTE_ARRAY +- +UTF8 +OPTIONAL +VARCHAR$' \
    '^  0 +r_regionkey +SNAPPY +PLAIN +5 +44 +43 +- +4 +0 +4 +0 -$' \
    '^  1 +r_name +SNAPPY +PLAIN +5 .* AFRICA +MIDDLE EAST +0 -$'
expect nation.parquet '^rows: +25 in 1 row group$' '^  2 +n_regionkey +SNAPPY +PLAIN_DICTIONARY +25 '
expect supplier.parquet '^rows: +100 in 1 row group$' \
    '^  5 +s_acctbal +INT64 +DECIMAL\(15,2\) +DECIMAL +OPTIONAL +DECIMAL\(15,2\)$'
expect lineitem-zstd.parquet '^rows: +60175 in 1 row group$' '^  0 +l_orderkey +ZSTD +PLAIN +60175 ' \
    '^  10 +l_shipdate +ZSTD .* 1992-01-04 +1998-11-29 '
expect lineitem-v2.parquet '^version: +2$' '^  0 +l_orderkey +SNAPPY +DELTA_BINARY_PACKED ' \
    '^  15 +l_comment +SNAPPY +DELTA_LENGTH_BYTE_ARRAY ' '^  8 +l_returnflag +SNAPPY +RLE_DICTIONARY '
expect lineitem-rowgroup10000.parquet '^rows: +60175 in 6 row groups$' '^row group 4: 10240 rows' \
    '^row group 5: 8975 rows'
expect types.parquet '^  4 +ts +INT64 +TIMESTAMP\(MICROS\) +TIMESTAMP_MICROS +OPTIONAL +TIMESTAMP$' \
    '^  5 +wide +FIXED_LEN_BYTE_ARRAY\(16\) +DECIMAL\(20,3\) +DECIMAL +OPTIONAL +DECIMAL\(20,3\)$' \
    '^  7 +name +SNAPPY .* v1 +v98 +34 -$'
expect nested.parquet '^  0 +lst\.list\.element +SNAPPY' 'element +INT64 .*unsupported \(nested\)$'

# --pages: v2 file still has DATA_PAGE (v1) headers; dictionary pages come first.
out="$("$PISTA" parquet meta --pages "$DATA/lineitem-v2.parquet")" || fail "--pages exit status"
grep -Eq '^      page 0 at byte 4: DATA_PAGE, header [0-9]+ bytes, .*DELTA_BINARY_PACKED' <<<"$out" ||
    fail "--pages: first page of l_orderkey"
grep -Eq '^      page 0 at byte 17654: DICTIONARY_PAGE' <<<"$out" || fail "--pages: dictionary of l_partkey"
grep -q 'DATA_PAGE_V2' <<<"$out" && fail "--pages: unexpected DATA_PAGE_V2"
n_pages="$(grep -c '^      page ' <<<"$out")"
[ "$n_pages" -ge 16 ] || fail "--pages: only $n_pages pages"

# Bad input: exit 1 and a message naming the file.
printf 'not parquet at all' > "$tmp/text.parquet"
head -c 1000 "$DATA/nation.parquet" > "$tmp/cut.parquet"
for f in "$tmp/text.parquet" "$tmp/cut.parquet" "$tmp/missing.parquet"; do
    err="$("$PISTA" parquet meta "$f" 2>&1 >/dev/null)"
    rc=$?
    [ "$rc" -eq 1 ] || fail "$f: exit status $rc, expected 1"
    grep -q "$f" <<<"$err" || fail "$f: message does not name the file: $err"
done
grep -q 'not a Parquet file' <<<"$("$PISTA" parquet meta "$tmp/text.parquet" 2>&1)" || fail "text: message"
"$PISTA" parquet meta >/dev/null 2>&1; [ $? -eq 2 ] || fail "no file: expected usage status 2"
"$PISTA" parquet meta --pages --csv "$DATA/region.parquet" >/dev/null 2>&1; [ $? -eq 2 ] || fail "--pages --csv: expected 2"
# One bad file among good ones: the good ones print, the status is 1.
out="$("$PISTA" parquet meta "$DATA/region.parquet" "$tmp/text.parquet" "$DATA/nation.parquet" 2>/dev/null)"
[ $? -eq 1 ] || fail "mixed files: expected status 1"
[ "$(grep -c '^file:' <<<"$out")" -eq 2 ] || fail "mixed files: expected two files printed"

if [ "$fails" -ne 0 ]; then echo "$fails failure(s)" >&2; exit 1; fi
echo "ok"
