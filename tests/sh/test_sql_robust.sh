#!/usr/bin/env bash
# Hostile statements (issue 18, item 6): each either works or fails with
# exit status 1 and a message saying what is wrong: never a crash (status
# 134/139), a hang, or a wrong answer with status 0. Under the sanitizer
# build a leak would change the status too.
set -u
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# run NAME FILE: runs the statements in FILE; sets $out and $rc
run() {
  out=$(timeout 120 "$PISTA" --data "$D" --answers -f "$2" 2>&1); rc=$?
}
expect_ok() { # name sql expected-output
  printf '%s;\n' "$2" > "$TMP/q.sql"
  run "$1" "$TMP/q.sql"
  if [ "$rc" = 0 ] && [ "$out" == "$3" ]; then echo "ok   $1"; else
    echo "FAIL $1: exit $rc"; echo "$out" | head -5 | cut -c1-200 | sed 's/^/  /'; fail=1; fi
}
expect_error() { # name sql message-pattern
  printf '%s;\n' "$2" > "$TMP/q.sql"
  run "$1" "$TMP/q.sql"
  if [ "$rc" = 1 ] && echo "$out" | head -1 | grep -q -- "$3"; then echo "ok   $1"; else
    echo "FAIL $1: exit $rc"; echo "$out" | head -5 | cut -c1-200 | sed 's/^/  /'; fail=1; fi
}
rep() { # n text sep: text repeated n times, joined by sep
  printf '%s' "$2"
  [ "$1" -gt 1 ] && printf -- "$(printf '%s' "$3$2" | sed 's/%/%%/g')%.0s" $(seq 2 "$1")
}

# ---------------------------------------------------------------- 1. depth
# A flat OR / AND of 10,000 terms works (balanced, a few levels deep).
expect_ok "OR of 10,000 constant terms" "select 1 as x where $(rep 10000 '1=2' ' or ') or 1=1" "x
1"
expect_ok "OR of 10,000 column terms" \
  "select count(*) as n from nation where $(rep 10000 'n_nationkey = 99' ' or ') or n_nationkey = 3" "n
1"
expect_ok "AND of 10,000 column terms" \
  "select count(*) as n from nation where $(rep 10000 'n_nationkey <> 99' ' and ')" "n
25"
expect_ok "IN of 10,000 column values" \
  "select count(*) as n from nation where n_nationkey in ($(rep 10000 'n_regionkey' ','))" "n
3"
# Left-deep chains up to the limit work; past it, a clear error.
expect_ok "999 additions" "select $(rep 999 'n_nationkey' '+') as s from nation where n_nationkey = 1" "s
999"
expect_error "1,001 additions" "select $(rep 1001 'n_nationkey' '+') from nation" "expression too deep"
expect_error "10,000 additions" "select $(rep 10000 1 '+')" "expression too deep"
expect_error "30,000 additions" "select $(rep 30000 1 '+')" "expression too deep"
expect_error "COALESCE of 2,000 values" "select coalesce($(rep 2000 n_nationkey ',')) from nation" "expression too deep"
expect_error "5,000 NOTs" "select $(rep 5000 'not ' '')true" "expression too deep"
expect_error "parentheses 20,000 deep" "select $(rep 20000 '(' '')1$(rep 20000 ')' '')" "nested too deep for the parser"
# Subqueries: 60 levels work, 1,500 are refused before anything recurses.
expect_ok "60 nested scalar subqueries" "select $(rep 60 '(select ' '')1$(rep 60 ')' '') as x" "x
1"
expect_error "1,500 nested scalar subqueries" "select $(rep 1500 '(select ' '')1$(rep 1500 ')' '')" \
  "subqueries nested too deep"
expect_error "500 nested IN subqueries" \
  "select 1 where 1 in $(rep 500 '(select 1 where 1 in ' '')(select 1)$(rep 500 ')' '')" "subqueries nested too deep"
expect_error "3,000 UNION ALL" "$(rep 3000 'select 1 as x' ' union all ')" "too many set operations"
expect_error "1,200 nested joins" \
  "select count(*) from nation t0 $(for ((i = 1; i < 1200; i++)); do printf 'join nation t%d on true ' $i; done)" \
  "nested too deep"

# No fixed caps on list lengths: IN lists of thousands of constants, select
# lists of a thousand computed columns (several kernel programs), CASE of
# hundreds of branches. Past the program's constant table, a clear error.
expect_ok "IN of 5,000 constants" \
  "select count(*) as n from nation where n_nationkey in ($(seq -s, 0 4999))" "n
25"
expect_ok "NOT IN of 5,000 constants" \
  "select count(*) as n from nation where n_nationkey not in ($(seq -s, 3 5002))" "n
3"
expect_error "IN of 40,000 constants" "select 1 where 1 in ($(seq -s, 0 39999))" "more than 32767 constants"
expect_ok "1,000 computed columns" \
  "select $(for ((i = 0; i < 1000; i++)); do printf 'n_nationkey + %d as c%d,' $i $i; done) 0 as z from nation where n_nationkey = 1" \
  "$(seq -f 'c%g' 0 999 | paste -sd'|')|z
$(seq 1 1000 | paste -sd'|')|0"
expect_ok "CASE of 150 branches" \
  "select case n_nationkey $(for ((i = 0; i < 150; i++)); do printf 'when %d then %d ' $i $((i * 10)); done) end as v from nation where n_nationkey = 7" "v
70"

# ----------------------------------------------------- 2. DECIMAL overflow
# 60,175 lineitem rows of 10^38 - 1: the 128-bit sum used to wrap to a
# negative number with exit status 0.
B="cast('99999999999999999999999999999999999999' as decimal(38,0))"
expect_error "SUM of DECIMAL(38) past 128 bits" "select sum(x) from (select $B as x from lineitem) t" \
  "SUM overflows DECIMAL(38)"
expect_error "grouped SUM of DECIMAL(38) past 128 bits" \
  "select l_returnflag, sum(x) from (select l_returnflag, $B as x from lineitem) t group by l_returnflag" \
  "SUM overflows DECIMAL(38)"
expect_error "AVG of DECIMAL(38) past 128 bits" "select avg(x) from (select $B as x from lineitem) t" "AVG overflows"
expect_error "SUM of two DECIMAL(38) past 38 digits" "select sum(x) from (select $B as x union all select $B) t" \
  "SUM overflows DECIMAL(38)"
expect_ok "SUM of DECIMAL(38) back in range" \
  "select sum(x) as s from (select $B as x union all select -$B union all select 1) t" "s
1.00"
expect_error "DECIMAL(38) addition" "select x + x from (select $B - l_orderkey as x from lineitem) t limit 1" \
  "overflow in DECIMAL(38,0) addition"
expect_error "DECIMAL(38) multiplication" "select x * 2 from (select $B - l_orderkey as x from lineitem) t limit 1" \
  "overflow in DECIMAL(38,0) multiplication"
expect_error "DECIMAL(18) multiplication" \
  "select l_extendedprice * l_extendedprice * l_extendedprice * l_extendedprice * l_extendedprice * l_extendedprice from lineitem" \
  "overflow in DECIMAL(18,6) multiplication"
expect_error "DECIMAL(38) to DECIMAL(18) cast" \
  "select cast(x as decimal(18,0)) from (select $B - l_orderkey as x from lineitem) t" "out of range for DECIMAL(18,0)"
expect_error "BIGINT SUM" "select sum(l_orderkey * 922337203685477) from lineitem" "overflow"
expect_error "INTEGER negation" "select -(n_nationkey - 2147483647 - 1) from nation" "overflow in INTEGER negation"

# ------------------------------------------ 3. files that are not regular
# Opening a FIFO waited for a writer forever; each is refused at once, named.
mkfifo "$TMP/fifo.parquet"
mkdir -p "$TMP/parts" "$TMP/empty"
mkfifo "$TMP/parts/a.parquet"
expect_error "read_parquet of a FIFO" "select count(*) from read_parquet('$TMP/fifo.parquet')" \
  "$TMP/fifo.parquet: not a regular file (a FIFO)"
expect_error "read_parquet of /dev/zero" "select count(*) from read_parquet('/dev/zero')" \
  "/dev/zero: not a regular file (a character device)"
expect_error "read_parquet of a directory holding a FIFO" "select count(*) from read_parquet('$TMP/parts')" \
  "$TMP/parts/a.parquet: not a regular file (a FIFO)"
expect_error "read_parquet of a glob matching a FIFO" "select count(*) from read_parquet('$TMP/parts/*.parquet')" \
  "not a regular file (a FIFO)"
expect_error "read_parquet of an empty directory" "select count(*) from read_parquet('$TMP/empty')" \
  "$TMP/empty: directory holds no \*.parquet files"
out=$(timeout 20 "$PISTA" parquet meta "$TMP/fifo.parquet" 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q "not a regular file (a FIFO)"; then echo "ok   parquet meta of a FIFO"; else
  echo "FAIL parquet meta of a FIFO: exit $rc"; echo "$out" | sed 's/^/  /'; fail=1; fi

# ------------------------------------------------------ 4. CREATE TABLE
W="$TMP/data"
mkdir -p "$W/sub"
cp "$PISTA_TEST_DATA/parquet/sf0.01/nation.parquet" "$W/"
ddl() { # name sql expected-status message-pattern
  out=$(timeout 60 "$PISTA" --data "$W" -c "$2" 2>&1); rc=$?
  if [ "$rc" = "$3" ] && echo "$out" | head -1 | grep -q -- "$4"; then echo "ok   $1"; else
    echo "FAIL $1: exit $rc"; echo "$out" | head -3 | sed 's/^/  /'; fail=1; fi
}
ddl "table name leaving the data directory" 'create table "../outside" as select 1 as a' 1 \
  'table name "../outside" cannot be a file name in the data directory'
[ -e "$TMP/outside.parquet" ] && { echo "FAIL ../outside.parquet written"; fail=1; }
ddl "table name with a slash" 'create table "sub/x" as select 1 as a' 1 "cannot be a file name"
ddl "table name starting with a dot" 'create table ".x" as select 1 as a' 1 "cannot be a file name"
# A file another process made after this one read the directory is kept.
ddl "CREATE TABLE" "create table t1 as select 1 as a" 0 "CREATE TABLE t1: 1 rows"
printf 'drop table t1;\ncreate table t1 as select 2 as a;\n' > "$TMP/q.sql"
out=$(timeout 60 "$PISTA" --data "$W" -f "$TMP/q.sql" 2>&1); rc=$?
if [ "$rc" = 1 ] && echo "$out" | grep -q "t1.parquet already exists (not replaced)"; then echo "ok   CREATE TABLE never replaces a file"; else
  echo "FAIL CREATE TABLE over an existing file: exit $rc"; echo "$out" | sed 's/^/  /'; fail=1; fi
out=$("$PISTA" --data "$W" --answers -c "select a from t1" 2>&1)
[ "$out" == "a
1" ] && echo "ok   the existing file is intact" || { echo "FAIL t1 changed: $out"; fail=1; }
# Two processes creating the same table: one wins, the other says so; no temporary file is left.
"$PISTA" --data "$W" -c "create table t2 as select n_nationkey from nation" > "$TMP/p1" 2>&1 &
"$PISTA" --data "$W" -c "create table t2 as select n_nationkey from nation" > "$TMP/p2" 2>&1 &
wait
n_ok=$(cat "$TMP/p1" "$TMP/p2" | grep -c "CREATE TABLE t2: 25 rows")
n_err=$(cat "$TMP/p1" "$TMP/p2" | grep -c "already exists")
[ "$n_ok" = 1 ] && [ "$n_err" = 1 ] && echo "ok   concurrent CREATE TABLE" || {
  echo "FAIL concurrent CREATE TABLE"; cat "$TMP/p1" "$TMP/p2" | sed 's/^/  /'; fail=1; }
ls -A "$W" | grep -q tmp && { echo "FAIL temporary files left: $(ls -A "$W")"; fail=1; }
# A failed CREATE TABLE leaves nothing behind.
ddl "failing CREATE TABLE" "create table t3 as select n_nationkey + 2147483647 as a from nation" 1 "overflow"
[ -e "$W/t3.parquet" ] || ls -A "$W" | grep -q tmp && { echo "FAIL failed CREATE TABLE left $(ls -A "$W")"; fail=1; }
# Stale temporary files (a process killed while writing: gone, untouched for
# 10 minutes) are removed at start; recent ones may be another writer's.
touch -d '1 hour ago' "$W/.t4.parquet.tmp.999999999.abcdef"
touch "$W/.t5.parquet.tmp.999999999.abcdef"
"$PISTA" --data "$W" -c "select 1" > /dev/null 2>&1
[ ! -e "$W/.t4.parquet.tmp.999999999.abcdef" ] && [ -e "$W/.t5.parquet.tmp.999999999.abcdef" ] &&
  echo "ok   stale temporary files cleaned at start" || { echo "FAIL stale cleanup: $(ls -A "$W")"; fail=1; }

# ------------------------------------------- 5. LIMIT / OFFSET, messages
# Past 2^31 the grammar gives a LIMIT as a "float" constant: it was refused.
M=9223372036854775807
expect_ok "LIMIT 2^63-1 OFFSET 23 (top-N)" "select n_nationkey from nation order by 1 limit $M offset 23" "n_nationkey
23
24"
expect_ok "LIMIT 2^63-1 OFFSET 2^63-1 (top-N)" "select n_nationkey from nation order by 1 limit $M offset $M" "n_nationkey"
expect_ok "LIMIT 2^63-1 OFFSET 2^63-1" "select n_nationkey from nation limit $M offset $M" "n_nationkey"
expect_ok "LIMIT 3000000000" "select count(*) as n from (select n_nationkey from nation limit 3000000000) t" "n
25"
expect_error "OFFSET 2^63" "select n_nationkey from nation limit 1 offset 9223372036854775808" \
  "OFFSET 9223372036854775808 is out of range"
expect_error "bare SELECT" "select" "SELECT needs at least one column"
expect_error "read_parquet('')" "select count(*) from read_parquet('')" "read_parquet needs a path"

exit $fail
