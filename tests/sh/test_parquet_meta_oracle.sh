#!/usr/bin/env bash
# test_parquet_meta_oracle.sh - compare `pista parquet meta --csv` with DuckDB's
# parquet_metadata() for every test file: per column chunk the path, physical
# type, num_values, codec, encodings, sizes, page offsets, null count and the
# statistics min/max (old and new fields). Needs node and @duckdb/node-api
# (tests/oracle/setup.sh installs it); without them the test FAILS.
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

# Stats of columns without an engine-comparable text are masked on both
# sides: 'wide' is DECIMAL(20,3), which the engine does not support. Both
# print TIMESTAMP statistics as timestamps. DuckDB joins nested paths with
# ", ", we with ".".
mask='BEGIN { FS = OFS = "|" } NR > 1 && $3 == "wide" { $13 = $14 = $15 = $16 = "*" } { print }'
fails=0
n_files=0
for f in "$DATA"/*.parquet; do
    n_files=$((n_files + 1))
    name="$(basename "$f")"
    "$PISTA" parquet meta --csv "$f" | cut -d'|' -f1-16 | awk "$mask" > "$tmp/ours" ||
        { echo "FAIL: $name: pista failed" >&2; fails=$((fails + 1)); continue; }
    sql="select row_group_id, column_id, replace(path_in_schema, ', ', '.') as path_in_schema, type,
                num_values, compression, encodings, total_compressed_size, total_uncompressed_size,
                dictionary_page_offset, data_page_offset, stats_null_count,
                stats_min, stats_max, stats_min_value, stats_max_value
         from parquet_metadata('$f') order by row_group_id, column_id"
    if ! node "$ORACLE" -c "$sql" | awk "$mask" > "$tmp/duck"; then
        echo "FAIL: $name: the oracle failed" >&2
        fails=$((fails + 1))
        continue
    fi
    lines="$(wc -l < "$tmp/duck")"
    if [ "$lines" -lt 2 ]; then
        echo "FAIL: $name: the oracle printed no column chunks" >&2
        fails=$((fails + 1))
    elif ! diff "$tmp/duck" "$tmp/ours" > "$tmp/diff"; then
        echo "FAIL: $name differs from DuckDB (< duckdb, > pista):" >&2
        head -20 "$tmp/diff" >&2
        fails=$((fails + 1))
    else
        echo "ok: $name ($((lines - 1)) column chunks)"
    fi
done
[ "$n_files" -ge 8 ] || { echo "FAIL: only $n_files test files found in $DATA" >&2; exit 1; }
if [ "$fails" -ne 0 ]; then echo "$fails file(s) failed" >&2; exit 1; fi
