#!/usr/bin/env bash
# test_sim_tpch.sh - the 22 TPC-H queries on the `sim` device (a discrete GPU
# simulated on the host: device memory the host cannot touch, kernels that
# run later, poisoned pinned outputs) over TPC-H SF 0.1 generated here by
# `pista gen tpch`: each result in the answers format must equal DuckDB's on
# the same files (tests/oracle/oracle.mjs), byte for byte. A few queries also
# run in blocking mode and with one worker. Needs node and DuckDB
# (tests/oracle/setup.sh); without them the test FAILS.
set -u
: "${PISTA:?}" "${PISTA_TEST_DATA:?}" "${PISTA_SOURCE_DIR:?}"
ORACLE="$PISTA_SOURCE_DIR/tests/oracle/oracle.mjs"
Q="$PISTA_TEST_DATA/tpch/queries"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
DATA="$tmp/sf0.1"

command -v node >/dev/null || { echo "FAIL: node is missing (tests/oracle/setup.sh)"; exit 1; }
"$PISTA" gen tpch --sf 0.1 --out "$DATA" > "$tmp/gen.log" 2>&1 || { echo "FAIL: gen: $(tail -3 "$tmp/gen.log")"; exit 1; }
views=""
for t in nation region part supplier partsupp customer orders lineitem; do
    views+="create view $t as select * from read_parquet('$DATA/$t.parquet');"
done

fails=0
runs=0
# check N LABEL [options...]: query N on sim equals DuckDB's answer.
check() {
    local n label="$2"
    n=$(printf '%02d' "$1")
    shift 2
    local want="$tmp/q$n.want" got="$tmp/q$n.$label.got" err="$tmp/q$n.$label.err"
    runs=$((runs + 1))
    if [ ! -f "$want" ] && ! node "$ORACLE" -c "$views $(cat "$Q/q$n.sql")" > "$want" 2> "$tmp/q$n.oracle.err"; then
        echo "FAIL q$n: DuckDB: $(head -c 300 "$tmp/q$n.oracle.err")"
        rm -f "$want"
        fails=$((fails + 1))
        return
    fi
    local rc=0
    PISTA_DEVICE=sim "$PISTA" --data "$DATA" --answers "$@" -f "$Q/q$n.sql" > "$got" 2> "$err" || rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL q$n ($label): exit status $rc: $(head -c 400 "$err")"
        fails=$((fails + 1))
    elif ! diff -q "$want" "$got" > /dev/null; then
        echo "FAIL q$n ($label): differs from DuckDB:"
        diff "$want" "$got" | head -n 10
        fails=$((fails + 1))
    else
        echo "PASS q$n ($label)"
    fi
}

for n in $(seq 1 22); do
    check "$n" sim
done
for n in 1 5 13 18 21; do
    check "$n" blocking --mode blocking
    check "$n" threads1 --threads 1
done
echo "$((runs - fails)) of $runs runs passed"
[ "$fails" -eq 0 ]
