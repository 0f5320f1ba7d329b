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
  out=$(timeout 120 "$PISTA" --data "$D" --csv -f "$2" 2>&1); rc=$?
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

exit $fail
