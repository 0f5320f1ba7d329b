#!/usr/bin/env bash
# test_parquet_write_oracle.sh - files written by our Parquet writer, read by
# DuckDB: `pista parquet write-test DIR` writes one file per case (every type,
# NULLs none/some/all, every codec, data page v1 and v2, small pages and row
# groups, dictionary fallback, defaults, 0 rows) with SQL and the answers we
# expect from the generator; DuckDB must return exactly those: every value
# (also exact: %.17g doubles, full-scale decimals), parquet_metadata() (rows,
# codec, encodings), statistics equal to DuckDB's own min/max per row group,
# counts under predicates DuckDB prunes row groups with, parquet_schema(), and
# `pista parquet meta --csv` (our reader) equal to parquet_metadata().
# Needs node and @duckdb/node-api (tests/oracle/setup.sh); without them FAILS.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
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

if ! "$PISTA" parquet write-test "$tmp" > "$tmp/write.log" 2>&1; then
    echo "FAIL: pista parquet write-test failed:" >&2
    cat "$tmp/write.log" >&2
    exit 1
fi
[ -s "$tmp/cases" ] || { echo "FAIL: no cases written" >&2; exit 1; }
ls -A "$tmp" | grep -q '\.tmp\.' && { echo "FAIL: temporary files left behind" >&2; exit 1; }

fails=0
checks=0
while read -r case; do
    before=$fails
    for kind in data meta stats filter schema; do
        checks=$((checks + 1))
        if ! node "$ORACLE" "$tmp/$case.$kind.sql" > "$tmp/$case.$kind.duck" 2> "$tmp/err"; then
            echo "FAIL: $case ($kind): DuckDB failed: $(cat "$tmp/err")" >&2
            fails=$((fails + 1))
        elif ! diff "$tmp/$case.$kind.expected" "$tmp/$case.$kind.duck" > "$tmp/diff"; then
            echo "FAIL: $case ($kind) differs (< expected, > duckdb):" >&2
            head -20 "$tmp/diff" >&2
            fails=$((fails + 1))
        fi
    done
    # Our own footer reader agrees with DuckDB on every chunk of the file
    # (sizes, offsets, encodings, statistics); `pista parquet meta` writes
    # non-ASCII bytes as \xNN, so the string column's min/max are masked.
    checks=$((checks + 1))
    f="$tmp/$case.parquet"
    mask='BEGIN { FS = OFS = "|" } NR > 1 && $3 == "s" { $15 = $16 = "*" } { print }'
    sql="select row_group_id, column_id, path_in_schema, type, num_values, compression, encodings,
                total_compressed_size, total_uncompressed_size, dictionary_page_offset,
                data_page_offset, stats_null_count, stats_min, stats_max, stats_min_value, stats_max_value
         from parquet_metadata('$f') order by row_group_id, column_id"
    if ! "$PISTA" parquet meta --csv "$f" | cut -d'|' -f1-16 | awk "$mask" > "$tmp/$case.ours"; then
        echo "FAIL: $case (reader): pista parquet meta failed" >&2
        fails=$((fails + 1))
    elif ! node "$ORACLE" -c "$sql" | awk "$mask" > "$tmp/$case.meta.duck2"; then
        echo "FAIL: $case (reader): DuckDB failed" >&2
        fails=$((fails + 1))
    elif ! diff "$tmp/$case.meta.duck2" "$tmp/$case.ours" > "$tmp/diff"; then
        echo "FAIL: $case (reader): pista parquet meta differs from DuckDB (< duckdb, > pista):" >&2
        head -20 "$tmp/diff" >&2
        fails=$((fails + 1))
    fi
    rows=$(($(wc -l < "$tmp/$case.data.expected") - 1))
    [ "$fails" -eq "$before" ] && echo "ok: $case ($rows rows)"
done < "$tmp/cases"
[ "$checks" -ge 40 ] || { echo "FAIL: only $checks checks ran" >&2; exit 1; }
if [ "$fails" -ne 0 ]; then echo "$fails of $checks checks failed" >&2; exit 1; fi
echo "all $checks checks passed"
