#!/usr/bin/env bash
# tpch_sf1_check.sh - the 22 TPC-H queries at SF 1 through `pista` (the SQL
# shell: --data DIR --answers -f qNN.sql), each result compared value by value
# with DuckDB's answers (shared/tpch/answers/sf1: same format, so equal text
# means equal values, decimals exact). Generates the SF 1 Parquet files with
# `pista gen tpch --sf 1` first if DATA has no lineitem.parquet.
#
# Usage: bench/tpch_sf1_check.sh [QUERY...]      (default: 1 .. 22)
# Environment (paths relative to the repository root unless absolute):
#   PISTA    the binary            (default build/normal/pista)
#   DATA     the SF 1 Parquet dir  (default data/sf1)
#   ANSWERS  the answers dir       (default ../shared/tpch/answers/sf1)
#   QUERIES  the query texts       (default tests/data/tpch/queries)
#   PISTA_ARGS  extra options for pista, e.g. "--threads 2 --mode blocking"
#   TIMEOUT  seconds one query may run before it counts as failed (default 600)
# Prints PASS/FAIL and the wall time (process start to exit) per query, the
# first differing values of a failed query, and exits 1 if any failed.
set -u
cd "$(dirname "$0")/.."
PISTA=${PISTA:-build/normal/pista}
DATA=${DATA:-data/sf1}
ANSWERS=${ANSWERS:-../shared/tpch/answers/sf1}
QUERIES=${QUERIES:-tests/data/tpch/queries}
PISTA_ARGS=${PISTA_ARGS:-}
TIMEOUT=${TIMEOUT:-600}
[ -x "$PISTA" ] || { echo "tpch_sf1_check: no pista binary at $PISTA (build it, or set PISTA)" >&2; exit 2; }
[ -d "$ANSWERS" ] || { echo "tpch_sf1_check: no answers at $ANSWERS (set ANSWERS)" >&2; exit 2; }
if [ ! -f "$DATA/lineitem.parquet" ] && [ ! -d "$DATA/lineitem" ]; then
    echo "== generating TPC-H SF 1 into $DATA"
    "$PISTA" gen tpch --sf 1 --out "$DATA" || exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# diff_values WANT GOT: the first 10 cells that differ, as "row R column NAME: got X, want Y".
diff_values() {
    awk -F'|' -v max=10 '
        NR == FNR { want[FNR] = $0; nwant = FNR; next }
        { got[FNR] = $0; ngot = FNR }
        END {
            split(want[1], names, "|")
            if (nwant != ngot) printf "  %d result rows, want %d\n", ngot - 1, nwant - 1
            shown = 0
            for (r = 1; r <= (nwant > ngot ? nwant : ngot) && shown < max; r++) {
                if (want[r] == got[r]) continue
                nw = split(want[r], w, "|"); ng = split(got[r], g, "|")
                for (c = 1; c <= (nw > ng ? nw : ng) && shown < max; c++)
                    if (w[c] != g[c]) {
                        printf "  %s %d column %s: got \"%s\", want \"%s\"\n", r == 1 ? "header," : "row",
                               r - 1, names[c] != "" ? names[c] : c, g[c], w[c]
                        shown++
                    }
            }
        }' "$1" "$2"
}

queries=("$@")
[ ${#queries[@]} -gt 0 ] || queries=($(seq 1 22))
pass=0 failed=()
total_s=0
printf '%-5s %-6s %9s  %s\n' query result "time s" note
for q in "${queries[@]}"; do
    n=$(printf '%02d' "$q")
    t0=$(date +%s.%N)
    rc=0
    # shellcheck disable=SC2086
    timeout "$TIMEOUT" "$PISTA" --data "$DATA" --answers $PISTA_ARGS -f "$QUERIES/q$n.sql" \
        > "$tmp/q$n.csv" 2> "$tmp/q$n.err" || rc=$?
    secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    total_s=$(awk -v a="$total_s" -v b="$secs" 'BEGIN { print a + b }')
    if [ "$rc" -eq 124 ]; then
        printf '%-5s %-6s %9s  %s\n' "Q$q" FAIL "$secs" "timed out after $TIMEOUT s"
        failed+=("$q")
    elif [ "$rc" -ne 0 ]; then
        printf '%-5s %-6s %9s  %s\n' "Q$q" FAIL "$secs" "exit status $rc: $(head -c 300 "$tmp/q$n.err" | tr '\n' ' ')"
        failed+=("$q")
    elif cmp -s "$ANSWERS/q$n.csv" "$tmp/q$n.csv"; then
        printf '%-5s %-6s %9s  %s rows\n' "Q$q" PASS "$secs" "$(($(wc -l < "$tmp/q$n.csv") - 1))"
        pass=$((pass + 1))
    else
        printf '%-5s %-6s %9s  %s\n' "Q$q" FAIL "$secs" "values differ from $ANSWERS/q$n.csv:"
        diff_values "$ANSWERS/q$n.csv" "$tmp/q$n.csv"
        failed+=("$q")
    fi
done
printf '\n%d of %d queries passed; %.3f s in all' "$pass" "${#queries[@]}" "$total_s"
[ ${#failed[@]} -eq 0 ] && { echo; exit 0; }
echo "; failed: ${failed[*]}"
exit 1
