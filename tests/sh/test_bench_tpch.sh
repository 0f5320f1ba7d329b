#!/usr/bin/env bash
# test_bench_tpch.sh - `pista bench tpch` on the SF 0.01 Parquet files,
# queries 1 and 6, one run, next to DuckDB, checked against the answers:
# exit 0, a table row per query, tpch.csv with a header and exactly the rows
# of Q1 (4 result rows) and Q6 (1 row), each marked "ok", with times, bytes
# read and DuckDB's time and row count; tpch.png when gnuplot is installed.
# A wrong answer file makes the run fail with DIFFERENT; bad options are usage
# errors (exit 2). Needs node and @duckdb/node-api (tests/oracle/setup.sh).
# Timings are printed, never checked.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
TD="${PISTA_TEST_DATA:?}"
SRC="${PISTA_SOURCE_DIR:?}"
export PISTA_SOURCE_DIR="$SRC"
DATA="$TD/parquet/sf0.01"
A="$TD/tpch/answers/sf0.01"
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
positive() { awk -v v="$1" 'BEGIN { exit !(v + 0 > 0) }'; }

# ------------------------------------------------- Q1 and Q6 against DuckDB
rc=0
"$PISTA" bench tpch --data "$DATA" --queries 1,6 --runs 1 --vs duckdb --check "$A" --out "$tmp/o" \
    > "$tmp/out" 2> "$tmp/err" || rc=$?
cat "$tmp/out"
[ "$rc" -eq 0 ] || fail "bench tpch exited $rc: $(cat "$tmp/err")"
grep -q 'posix_fadvise' "$tmp/out" || fail "the header does not say how the cold run was made cold"
grep -q '> 1: pista is faster' "$tmp/out" || fail "the header does not say what the ratio means"
for q in 1 6; do
    grep -Eq "^Q$q +[0-9]+ .* ok\$" "$tmp/out" || fail "no 'ok' table row for Q$q"
done
grep -q '^total ' "$tmp/out" || fail "no total line"

csv="$tmp/o/tpch.csv"
if [ ! -f "$csv" ]; then
    fail "no $csv"
else
    head -n 1 "$csv" | grep -qx 'query,rows,cold_s,warm_s,plan_s,bytes_read,duckdb_s,duckdb_rows,ratio,check,error' ||
        fail "tpch.csv header: $(head -n 1 "$csv")"
    [ "$(wc -l < "$csv")" -eq 3 ] || fail "tpch.csv has $(wc -l < "$csv") lines, want a header and 2 rows"
    [ "$(cut -d, -f1 "$csv" | tail -n +2 | tr '\n' ' ')" = "1 6 " ] || fail "tpch.csv queries: not 1 and 6"
    while IFS=, read -r q rows cold warm plan bytes duck drows ratio check error; do
        [ "$q" = query ] && continue
        want=$([ "$q" = 1 ] && echo 4 || echo 1)
        [ "$rows" = "$want" ] || fail "Q$q: $rows rows in tpch.csv, want $want"
        [ "$drows" = "$want" ] || fail "Q$q: DuckDB returned '$drows' rows, want $want"
        [ "$check" = ok ] || fail "Q$q: check '$check'"
        [ -z "$error" ] || fail "Q$q: error '$error'"
        for v in "$cold" "$warm" "$bytes" "$duck" "$ratio"; do
            positive "$v" || fail "Q$q: a measure is not positive in: $q,$rows,$cold,$warm,$plan,$bytes,$duck,$drows,$ratio"
        done
    done < "$csv"
fi
if command -v gnuplot >/dev/null 2>&1; then
    [ -s "$tmp/o/tpch.png" ] || fail "gnuplot is installed but there is no tpch.png"
    head -c 8 "$tmp/o/tpch.png" | od -An -tx1 | grep -q '89 50 4e 47' || fail "tpch.png is not a PNG"
fi

# ------------------------------------------ a wrong answer is a failure
mkdir -p "$tmp/bad"
sed 's/^\([0-9]\)/9\1/' "$A/q06.csv" > "$tmp/bad/q06.csv"
rc=0
"$PISTA" bench tpch --data "$DATA" --queries 6 --runs 1 --check "$tmp/bad" --out "$tmp/o2" > "$tmp/out2" 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a wrong answer: exit $rc, want 1"
grep -q 'DIFFERENT (line 2)' "$tmp/out2" || fail "a wrong answer is not reported as 'DIFFERENT (line 2)': $(cat "$tmp/out2")"
grep -q '^6,1,.*,DIFFERENT (line 2),$' "$tmp/o2/tpch.csv" || fail "tpch.csv does not mark the wrong answer"

# ------------------------------------------------------------ usage errors
for args in "--queries 1" "--data $DATA --queries 23" "--data $DATA --queries 5-2" \
            "--data $DATA --runs 0" "--data $DATA --vs mysql" "--data $DATA --mode fast" "--data $DATA --bogus 1"; do
    rc=0
    # shellcheck disable=SC2086
    "$PISTA" bench tpch $args --out "$tmp/o3" > /dev/null 2>&1 || rc=$?
    [ "$rc" -eq 2 ] || fail "bench tpch $args: exit $rc, want 2"
done
rc=0
"$PISTA" bench tpch --data "$tmp/missing" --queries 6 --out "$tmp/o4" > /dev/null 2>&1 || rc=$?
[ "$rc" -eq 1 ] || fail "a missing data folder: exit $rc, want 1"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)" >&2; exit 1; }
echo "ok"
