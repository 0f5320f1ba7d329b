#!/usr/bin/env bash
# SQL DDL: CREATE TABLE AS writes Parquet into the data directory and the
# table reads back; views; read_parquet(); DROP; errors name what was wrong.
set -u
fail=0
check() { # name expected actual
  if [ "$2" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  expected: $2"; echo "  got:      $3"; fail=1; fi
}
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
for t in nation region; do cp "$PISTA_TEST_DATA/parquet/$t.parquet" "$T/"; done

out=$("$PISTA" --data "$T" --answers -c "create table asia as select n_nationkey, n_name, sum(n_nationkey) over_key from nation, region where n_regionkey = r_regionkey and r_name = 'ASIA' group by n_nationkey, n_name" 2>&1)
check "ctas message" "CREATE TABLE asia: 5 rows" "$out"
check "ctas file exists" "yes" "$([ -f "$T/asia.parquet" ] && echo yes)"
out=$("$PISTA" --data "$T" --answers -c "select n_name, over_key from asia order by n_name" 2>&1)
check "ctas reads back" "n_name|over_key
CHINA|18
INDIA|8
INDONESIA|9
JAPAN|12
VIETNAM|21" "$out"
# DuckDB-independent check of the written file: our own Parquet reader.
out=$("$PISTA" parquet cat "$T/asia.parquet" --columns n_nationkey --format csv 2>&1 | tail -n +2 | sort -n | tr '\n' ' ')
check "ctas file content" "8 9 12 18 21 " "$out"
out=$("$PISTA" --data "$T" -c "create table asia as select 1" 2>&1); rc=$?
check "ctas twice fails" "1" "$rc"
echo "$out" | grep -q 'already exists' && echo "ok   ctas error names it" || { echo "FAIL ctas error: $out"; fail=1; }

out=$(printf "create view v as select n_name from nation where n_nationkey < 3;\nselect count(*) as n from v;\ndrop view v;\nselect count(*) from v;\n" | "$PISTA" --data "$T" --answers 2>&1)
echo "$out" | grep -qx '3' && echo "ok   view" || { echo "FAIL view: $out"; fail=1; }
echo "$out" | grep -q 'table "v" does not exist' && echo "ok   drop view" || { echo "FAIL drop view: $out"; fail=1; }
out=$(printf "create view v2 (k, nm) as select n_nationkey, n_name, n_regionkey from nation;\nselect k, nm, n_regionkey from v2 where k < 2 order by k;\n" | "$PISTA" --data "$T" --answers 2>&1)
check "a view's column list names its first columns" "CREATE VIEW
k|nm|n_regionkey
0|ALGERIA|0
1|ARGENTINA|1" "$out"
out=$("$PISTA" --data "$T" -c "create view v3 (a, b) as select n_nationkey from nation" 2>&1)
echo "$out" | grep -q "CREATE VIEW specifies more column names than columns" && echo "ok   too many view column names" || { echo "FAIL view names: $out"; fail=1; }

out=$("$PISTA" --answers -c "select count(*) as n from read_parquet('$T/nation.parquet') where n_regionkey = 1" 2>&1)
check "read_parquet" "n
5" "$out"
out=$("$PISTA" --answers -c "select count(*) from read_parquet('$T/nope*.parquet')" 2>&1); rc=$?
check "read_parquet missing exits 1" "1" "$rc"
echo "$out" | grep -q "no file matches" && echo "ok   read_parquet error" || { echo "FAIL read_parquet error: $out"; fail=1; }
# ** globs (zero or more folders) and ARRAY lists of paths; counts by hand:
# nation has 25 rows, n_regionkey = 1 in 5 of them.
mkdir -p "$T/deep/a/b/c" "$T/deep/x" "$T/deep/.hidden"
for f in deep/n0 deep/a/n1 deep/a/b/c/n2 deep/x/n3 deep/.hidden/n4; do cp "$T/nation.parquet" "$T/$f.parquet"; done
cp "$T/region.parquet" "$T/deep/a/b/r.parquet"
out=$("$PISTA" --answers -c "select count(*) as n from read_parquet('$T/deep/**/n*.parquet')" 2>&1)
check "** glob: every level, hidden folders skipped" "n
100" "$out"
out=$("$PISTA" --answers -c "select count(*) as n from read_parquet('$T/deep/a/**/c/*.parquet')" 2>&1)
check "** glob in the middle" "n
25" "$out"
out=$(cd "$T/deep" && "$PISTA" --answers -c "select count(*) as n from read_parquet('**/n*.parquet')" 2>&1)
check "** glob, relative" "n
100" "$out"
out=$("$PISTA" --answers -c "select count(*) as n from read_parquet('$T/deep/**/*.csv')" 2>&1); rc=$?
check "** glob without a match exits 1" "1" "$rc"
echo "$out" | grep -q "no file matches" && echo "ok   ** glob error" || { echo "FAIL ** glob error: $out"; fail=1; }
out=$("$PISTA" --answers -c "select count(*) as n, sum(case when n_regionkey = 1 then 1 else 0 end) as r1 from read_parquet(ARRAY['$T/nation.parquet', '$T/deep/x', '$T/deep/a/**/n*.parquet'])" 2>&1)
check "read_parquet(ARRAY[...])" "n|r1
100|20" "$out"
out=$("$PISTA" --answers -c "select count(*) from read_parquet(ARRAY['$T/nation.parquet', '$T/nope.parquet'])" 2>&1); rc=$?
check "read_parquet(ARRAY) missing exits 1" "1" "$rc"
echo "$out" | grep -q "nope.parquet" && echo "ok   read_parquet(ARRAY) error names the path" || { echo "FAIL ARRAY error: $out"; fail=1; }
out=$("$PISTA" --answers -c "select count(*) from read_parquet(ARRAY['$T/nation.parquet', '$T/region.parquet'])" 2>&1); rc=$?
check "read_parquet(ARRAY) of different columns exits 1" "1" "$rc"
echo "$out" | grep -q "is in .*nation.parquet but not in .*region.parquet" && echo "ok   different columns named" || { echo "FAIL different columns: $out"; fail=1; }
out=$("$PISTA" --data "$T" -c "select * from nation for update" 2>&1); rc=$?
check "unsupported exits 1" "1" "$rc"
echo "$out" | grep -q "FOR UPDATE/SHARE is not supported" && echo "ok   unsupported named" || { echo "FAIL unsupported: $out"; fail=1; }
exit $fail
