#!/usr/bin/env bash
# test_parquet_vs_tbl.sh - every DuckDB-written TPC-H Parquet file in
# tests/data/parquet (SF 0.01: default snappy files of all eight tables and
# lineitem in other codecs, page versions, row-group sizes and without
# dictionaries) decodes, through our scan, to exactly the rows of dbgen's
# .tbl file. The .tbl files come from `pista gen tpch --format tbl`, which the
# generator tests prove byte-identical to dbgen (sha256 fingerprints), so the
# expected rows are independent of the reader under test.
set -u
: "${PISTA:?}" "${PISTA_TEST_DATA:?}"
D="$PISTA_TEST_DATA/parquet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fails=0; checked=0
"$PISTA" gen tpch --sf 0.01 --format tbl --out "$TMP/tbl" >/dev/null || { echo "FAIL: gen tpch"; exit 1; }

# Our rows in dbgen's text form: '|' after every field; l_quantity (column 5
# of lineitem) is an integer in dbgen's text.
as_tbl() {   # table file
  "$PISTA" parquet cat --format csv "$2" | tail -n +2 |
    awk -v t="$1" 'BEGIN { FS = OFS = "|" } { if (t == "lineitem") sub(/\.00$/, "", $5); print $0 "|" }'
}

for f in "$D"/*.parquet; do
  base=$(basename "$f" .parquet)
  t=${base%%-*}
  [ -f "$TMP/tbl/$t.tbl" ] || continue          # not a TPC-H table file
  as_tbl "$t" "$f" > "$TMP/got.tbl" || { echo "FAIL: $base: cat failed"; fails=$((fails+1)); continue; }
  if cmp -s "$TMP/got.tbl" "$TMP/tbl/$t.tbl"; then
    echo "ok: $base = $t.tbl ($(wc -l < "$TMP/got.tbl") rows)"
  else
    echo "FAIL: $base differs from $t.tbl:"; diff "$TMP/got.tbl" "$TMP/tbl/$t.tbl" | head -5
    fails=$((fails+1))
  fi
  checked=$((checked+1))
done
# Pruning: a predicate that keeps one row group of six reads exactly that row
# group's column chunks (their compressed sizes, from the footer), and its rows
# are dbgen's.
f="$D/lineitem-rowgroup10000.parquet"
want=$("$PISTA" parquet meta --csv "$f" | awk -F'|' 'NR > 1 && $1 == 0 { s += $8 } END { print s }')
"$PISTA" parquet cat --format csv --where "l_orderkey < 100" --stats "$f" 2>"$TMP/stats" >"$TMP/pruned.csv"
if ! grep -q "row groups 6 (pruned 5)" "$TMP/stats" || ! grep -q "^bytes read $want in" "$TMP/stats"; then
  echo "FAIL: pruning read more than row group 0 ($want bytes):"; cat "$TMP/stats"; fails=$((fails+1))
else
  echo "ok: pruning read only row group 0 ($want bytes)"
fi
tail -n +2 "$TMP/pruned.csv" | awk 'BEGIN { FS = OFS = "|" } { sub(/\.00$/, "", $5); print $0 "|" }' > "$TMP/pruned.tbl"
awk -F'|' '$1 < 100' "$TMP/tbl/lineitem.tbl" | cmp -s - "$TMP/pruned.tbl" || { echo "FAIL: pruned rows differ"; fails=$((fails+1)); }

[ "$checked" -ge 14 ] || { echo "FAIL: only $checked files checked"; fails=$((fails+1)); }
echo "$checked files checked, $fails failed"
[ "$fails" -eq 0 ]
