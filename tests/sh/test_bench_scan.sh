#!/usr/bin/env bash
# test_bench_scan.sh - `pista bench scan`: on lineitem-zstd.parquet (SF 0.01,
# 60175 rows) with one thread and one run, the table has our rows/s, DuckDB's
# and their ratio, and both engines counted every row. Also: --vs none prints
# only our row, a projection scans fewer bytes, --vs duckdb fails (exit 1)
# when DuckDB cannot be loaded but the default just says so (exit 0), and bad
# options are usage errors. Needs node and @duckdb/node-api
# (tests/oracle/setup.sh); without them the test FAILS. Timings are printed,
# never checked.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
DATA="${PISTA_TEST_DATA:?}/parquet"
SRC="${PISTA_SOURCE_DIR:?}"
export PISTA_SOURCE_DIR="$SRC"
L="$DATA/lineitem-zstd.parquet"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not installed: DuckDB cannot run (install Node.js >= 18 and npm)" >&2
    exit 1
fi
if ! bash "$SRC/tests/oracle/setup.sh" >&2; then
    echo "FAIL: @duckdb/node-api is unavailable (tests/oracle/setup.sh failed)" >&2
    exit 1
fi

fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

# field ENGINE COLUMN: column COLUMN (1-based) of the table row for 1 thread and ENGINE.
field() { awk -v e="$1" -v c="$2" '$1 == "1" && $2 == e { print $c }' "$tmp/out"; }
positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }

# ------------------------------------------------------------ against DuckDB
if ! "$PISTA" bench scan "$L" --threads 1 --runs 1 --vs duckdb > "$tmp/out" 2> "$tmp/err"; then
    fail "bench scan --vs duckdb failed: $(cat "$tmp/err")"
fi
cat "$tmp/out"
grep -q "rows: 60175 " "$tmp/out" || fail "the scan did not count 60175 rows"
grep -q "columns: 16 " "$tmp/out" || fail "not every column was scanned"
grep -Eq "^threads +engine +seconds +file_MB/s +rows/s +cpu_s" "$tmp/out" || fail "no table header"
for e in pista duckdb; do
    r="$(field "$e" 5)"
    [ -n "$r" ] && positive "$r" || fail "no rows/s for $e: '$r'"
    # rows/s x seconds = the 60175 rows (to the printed precision)
    s="$(field "$e" 3)"
    awk -v r="$r" -v s="$s" 'BEGIN { n = r * s; exit !(n > 60175 * 0.95 && n < 60175 * 1.05) }' ||
        fail "$e: rows/s $r x seconds $s is not 60175 rows"
done
ratio="$(field ratio 3)"
[ -n "$ratio" ] && positive "$ratio" || fail "no ratio: '$ratio'"
# Both engines counted the same rows: a mismatch is an error (exit 1) anyway.
grep -q "DuckDB v" "$tmp/out" || fail "the DuckDB version is not named"

# ------------------------------------------------------------ our side only
if ! "$PISTA" bench scan "$L" --threads 1,2 --runs 1 --vs none > "$tmp/out" 2> "$tmp/err"; then
    fail "bench scan --vs none failed: $(cat "$tmp/err")"
fi
grep -q duckdb "$tmp/out" && fail "--vs none ran DuckDB"
[ "$(awk '$2 == "pista"' "$tmp/out" | wc -l)" -eq 2 ] || fail "--threads 1,2 did not give two rows"

# A projection reads fewer bytes than the whole file.
"$PISTA" bench scan "$L" --columns l_orderkey,l_comment --threads 1 --runs 1 --vs none > "$tmp/proj" 2> "$tmp/err" ||
    fail "projection failed: $(cat "$tmp/err")"
bytes() { sed -n 's/.*bytes read per scan: \([0-9]*\).*/\1/p' "$1"; }
grep -q "columns: 2 " "$tmp/proj" || fail "projection: not 2 columns"
[ -n "$(bytes "$tmp/proj")" ] && [ "$(bytes "$tmp/proj")" -lt "$(bytes "$tmp/out")" ] ||
    fail "projection read $(bytes "$tmp/proj") bytes, the full scan $(bytes "$tmp/out")"

# ------------------------------------------------------------ DuckDB missing
DUCKDB_NODE_API_DIR="$tmp/none" "$PISTA" bench scan "$L" --threads 1 --runs 1 > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 0 ] && grep -q "DuckDB not measured" "$tmp/out" ||
    fail "without DuckDB (default --vs): exit $rc, $(cat "$tmp/out" "$tmp/err")"
DUCKDB_NODE_API_DIR="$tmp/none" "$PISTA" bench scan "$L" --threads 1 --runs 1 --vs duckdb > "$tmp/out" 2> "$tmp/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "node-api" "$tmp/err" || fail "without DuckDB and --vs duckdb: exit $rc, $(cat "$tmp/err")"

# ------------------------------------------------------------ errors
"$PISTA" bench scan "$L" --threads 0 > /dev/null 2>&1
[ $? -eq 2 ] || fail "--threads 0 is not a usage error"
"$PISTA" bench scan "$L" --vs sqlite > /dev/null 2>&1
[ $? -eq 2 ] || fail "--vs sqlite is not a usage error"
"$PISTA" bench scan "$tmp/missing.parquet" > /dev/null 2>&1
[ $? -eq 1 ] || fail "a missing file does not exit 1"
"$PISTA" bench scan "$L" --columns nope --vs none > /dev/null 2> "$tmp/err"
[ $? -eq 1 ] && grep -q "nope" "$tmp/err" || fail "a missing column: $(cat "$tmp/err")"

if [ "$fails" -ne 0 ]; then echo "$fails check(s) failed" >&2; exit 1; fi
echo "all checks passed"
