#!/usr/bin/env bash
# test_dist_sql_slow.sh - the differential SQL test (tests/oracle/difftest.mjs:
# random queries, each compared with DuckDB's answer) with Pista on 2 ranks
# (mpirun -np 2 for every query), on SF 0.01 tables generated with 1000-row
# row groups so the split table is spread. In the normal build only (one
# mpirun per query: a few minutes).
set -u
: "${PISTA:?}" "${PISTA_SOURCE_DIR:?}"
DIFF="$PISTA_SOURCE_DIR/tests/oracle/difftest.mjs"
SEED="${DIFFTEST_SEED:-20261126}"
COUNT="${DIFFTEST_COUNT:-80}"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
for tool in node mpirun; do
  command -v $tool >/dev/null 2>&1 || { echo "FAIL: $tool is not installed (scripts/deps.sh)"; exit 1; }
done
bash "$PISTA_SOURCE_DIR/tests/oracle/setup.sh" >&2 || { echo "FAIL: the DuckDB oracle is unavailable"; exit 1; }
"$PISTA" gen tpch --sf 0.01 --out "$TMP/data" --row-group-rows 1000 > "$TMP/gen.log" 2>&1 || { cat "$TMP/gen.log"; echo FAIL; exit 1; }
cat > "$TMP/pista2" <<EOS
#!/usr/bin/env bash
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none OMPI_MCA_rmaps_base_oversubscribe=1
exec mpirun -np 2 "$PISTA" --replicate-rows ${DIST_REPLICATE_ROWS:-1000} "\$@"
EOS
chmod +x "$TMP/pista2"
echo "== random queries on 2 ranks: seed $SEED, $COUNT queries"
if node "$DIFF" --pista "$TMP/pista2" --data "$TMP/data" --seed "$SEED" --count "$COUNT"; then echo PASS; exit 0; fi
echo FAIL; exit 1
