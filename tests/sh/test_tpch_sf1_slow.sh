#!/usr/bin/env bash
# SF 1 (about 1.1 GB of .tbl): every table's rows, bytes and whole-file sha256
# equal dbgen's (tests/data/tpch/dbgen-fingerprints.tsv), and dbgen's verbatim
# slices (tests/data/tpch/sf1) sit at their line numbers.
set -u
: "${PISTA:?}" "${PISTA_TEST_DATA:?}"
FP="$PISTA_TEST_DATA/tpch/dbgen-fingerprints.tsv"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

start=$(date +%s.%N)
"$PISTA" gen tpch --sf 1 --out "$TMP" --format tbl || { echo "FAIL: gen SF 1"; exit 1; }
echo "SF 1 generated in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"
for t in region nation supplier customer part partsupp orders lineitem; do
    want=$(awk -F'\t' -v t="$t" '$1 == "1" && $2 == t { print $3, $4, $5 }' "$FP")
    f="$TMP/$t.tbl"
    got="$(wc -l < "$f" | tr -d ' ') $(stat -c %s "$f") $(sha256sum < "$f" | cut -d' ' -f1)"
    [ "$got" = "$want" ] || fail "SF 1 $t: got '$got', dbgen '$want'"
done
for s in "$PISTA_TEST_DATA"/tpch/sf1/*.tbl; do
    name=$(basename "$s" .tbl)              # lineitem.lines-500001-500200
    t=${name%%.*}
    range=${name#*.lines-}
    sed -n "${range%-*},${range#*-}p" "$TMP/$t.tbl" | cmp -s - "$s" || fail "$name not at its lines"
done
[ $fails -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "ok"
