#!/usr/bin/env bash
# test_tpch_sql.sh - the 22 TPC-H queries, unmodified (tests/data/tpch/queries),
# through the SQL front end on the SF 0.01 Parquet files: each result in the
# answers format (--answers) must equal DuckDB's answer (tests/data/tpch/answers,
# copied from shared/tpch/answers/sf0.01) byte for byte. Prints PASS/FAIL per
# query and fails if any query failed. A few queries are also run in blocking
# mode and with one thread, which must give the same bytes.
set -u
PISTA="${PISTA:?PISTA must point to the pista binary}"
TD="${PISTA_TEST_DATA:?}"
DATA="$TD/parquet/sf0.01"
Q="$TD/tpch/queries"
A="$TD/tpch/answers/sf0.01"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

fails=0
# run LABEL N [options...]: query N with the options; PASS when the output equals the answer.
run() {
    local label="$1" n
    n=$(printf '%02d' "$2")
    shift 2
    local out="$tmp/q$n.$label.csv" err="$tmp/q$n.$label.err"
    local rc=0
    "$PISTA" --data "$DATA" --answers "$@" -f "$Q/q$n.sql" > "$out" 2> "$err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL q$n ($label): exit status $rc: $(head -c 400 "$err")"
        fails=$((fails + 1))
    elif ! diff -q "$A/q$n.csv" "$out" > /dev/null; then
        echo "FAIL q$n ($label): result differs from $A/q$n.csv:"
        diff "$A/q$n.csv" "$out" | head -n 10
        fails=$((fails + 1))
    else
        echo "PASS q$n ($label)"
    fi
}

[ -f "$DATA/lineitem.parquet" ] || { echo "FAIL: no TPC-H SF 0.01 Parquet files in $DATA"; exit 1; }
for n in $(seq 1 22); do
    [ -f "$A/q$(printf '%02d' "$n").csv" ] || { echo "FAIL: missing answer for q$n"; exit 1; }
    run default "$n"
done
for n in 1 3 9 13 18 21; do
    run blocking "$n" --mode blocking
    run threads1 "$n" --threads 1
done

total=$((22 + 12))
echo "$((total - fails)) of $total runs passed"
[ "$fails" -eq 0 ]
