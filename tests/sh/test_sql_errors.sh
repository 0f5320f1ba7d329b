#!/usr/bin/env bash
# Type errors in expressions and subqueries: exit status 1 (not a crash, and
# under the sanitizer build not a leak, which would change the status), a
# message naming the types, and the caret under the position.
set -u
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
expect_error() { # name sql message-pattern caret-column
  local out rc
  out=$("$PISTA" --data "$D" -c "$2" 2>&1); rc=$?
  if [ "$rc" != 1 ]; then echo "FAIL $1: exit $rc"; echo "$out" | sed 's/^/  /'; fail=1; return; fi
  if ! echo "$out" | head -1 | grep -q -- "$3"; then echo "FAIL $1: message"; echo "$out" | sed 's/^/  /'; fail=1; return; fi
  local caret; caret=$(echo "$out" | sed -n 3p)
  if [ "$caret" != "$(printf "%*s^" "$4" "")" ]; then echo "FAIL $1: caret"; echo "$out" | sed 's/^/  /'; fail=1; return; fi
  echo "ok   $1"
}
expect_error "IN subquery of another type" \
  "select n_name from nation where n_nationkey in (select r_regionkey = 1 from region)" \
  "IN: cannot compare INTEGER with BOOLEAN" 44
expect_error "scalar subquery compared with a string" \
  "select n_name from nation where n_nationkey = (select r_name from region limit 1)" \
  "comparison of INTEGER and VARCHAR" 44
expect_error "CASE branches of unrelated types" \
  "select case when n_nationkey > 1 then n_nationkey else n_name end from nation" \
  "CASE with results of INTEGER and VARCHAR" 7
exit $fail
