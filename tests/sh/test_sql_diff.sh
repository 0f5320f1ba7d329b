#!/usr/bin/env bash
# Differential test of the SQL front end: tests/oracle/difftest.mjs generates
# random queries over TPC-H SF 0.01 (fixed seed) and runs each in Pista and in
# DuckDB on the same Parquet files; every difference fails. Then every
# `seed:index` in tests/data/difftest/regressions.txt (queries that once
# failed) and every reduced query in tests/data/difftest/regressions.sql.
# Environment: DIFFTEST_SEED / DIFFTEST_COUNT override the seed and count.
# Needs node and @duckdb/node-api (tests/oracle/setup.sh); without them the
# test FAILS.
set -u
: "${PISTA:?}" "${PISTA_SOURCE_DIR:?}" "${PISTA_TEST_DATA:?}"
DIFF="$PISTA_SOURCE_DIR/tests/oracle/difftest.mjs"
REG="$PISTA_TEST_DATA/difftest"
SEED="${DIFFTEST_SEED:-20240601}"
COUNT="${DIFFTEST_COUNT:-300}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

if ! command -v node >/dev/null 2>&1; then
    echo "FAIL: node is not installed: the DuckDB oracle cannot run (install Node.js >= 18 and npm)" >&2
    exit 1
fi
if ! bash "$PISTA_SOURCE_DIR/tests/oracle/setup.sh" >&2; then
    echo "FAIL: the DuckDB oracle is unavailable (tests/oracle/setup.sh failed)" >&2
    exit 1
fi

# A data directory holding only the eight TPC-H tables (the test data folder
# also holds variants and non-TPC-H files that Pista would register).
src="$PISTA_TEST_DATA/parquet"
[ -d "$src/sf0.01" ] && src="$src/sf0.01"
for t in region nation supplier customer part partsupp orders lineitem; do
    if [ ! -f "$src/$t.parquet" ]; then
        echo "FAIL: missing $src/$t.parquet" >&2
        exit 1
    fi
    ln -s "$(cd "$src" && pwd)/$t.parquet" "$TMP/$t.parquet"
done

fails=0
echo "== random queries: seed $SEED, $COUNT queries"
node "$DIFF" --pista "$PISTA" --data "$TMP" --seed "$SEED" --count "$COUNT" || fails=$((fails + 1))
echo "== regressions"
node "$DIFF" --pista "$PISTA" --data "$TMP" --regressions "$REG/regressions.txt" \
    --sql-file "$REG/regressions.sql" || fails=$((fails + 1))
[ "$fails" -eq 0 ] && echo "PASS" || echo "FAIL: $fails difftest runs failed"
exit $((fails > 0))
