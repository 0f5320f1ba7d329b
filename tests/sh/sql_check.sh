# sql_check.sh - sourced by the SQL tests that compare a query's CSV output
# with expected rows: `check NAME SQL EXPECTED` and `refused NAME SQL
# MESSAGE` (a non-zero exit whose output holds MESSAGE). Both run "$PISTA"
# on the SF 0.01 Parquet files and set fail=1 on a mismatch; `want NAME SQL`
# compares with DuckDB's answer to the same SQL.
: "${PISTA:?}" "${PISTA_TEST_DATA:?}"
fail=0
D="$PISTA_TEST_DATA/parquet/sf0.01"
check() { # name sql expected
  local out
  out=$("$PISTA" --data "$D" --answers -c "$2" 2>&1)
  if [ "$out" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  sql: $2"; echo "  expected: $3" | sed 's/^/  /'; echo "  got: $out" | sed 's/^/  /'; fail=1; fi
}
check_csv() { # name sql expected: as check, in --csv (every digit of a DOUBLE)
  local out
  out=$("$PISTA" --data "$D" --csv -c "$2" 2>&1)
  if [ "$out" == "$3" ]; then echo "ok   $1"; else echo "FAIL $1"; echo "  sql: $2"; echo "  expected: $3" | sed 's/^/  /'; echo "  got: $out" | sed 's/^/  /'; fail=1; fi
}
refused() { # name sql message: fails (non-zero exit) with the message
  local out rc
  out=$("$PISTA" --data "$D" --answers -c "$2" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && echo "$out" | grep -qF -- "$3"; then echo "ok   $1"; else echo "FAIL $1 (exit $rc, want '$3')"; echo "  sql: $2"; echo "$out" | sed 's/^/  /'; fail=1; fi
}
want() { # name sql: the answer equals DuckDB's for the same SQL (tests/oracle/oracle.mjs);
          # DuckDB sees the TPC-H tables of $D as views of the same names
  local exp views="" t
  for t in region nation supplier customer part partsupp orders lineitem; do
    views="$views create view $t as select * from read_parquet('$D/$t.parquet');"
  done
  exp=$(node "${PISTA_SOURCE_DIR:?}/tests/oracle/oracle.mjs" -c "$views $2" 2>&1) || { echo "FAIL $1: DuckDB: $exp"; fail=1; return; }
  check "$1" "$2" "$exp"
}
need_oracle() { # the DuckDB oracle installed (tests/oracle/setup.sh), or the test FAILS
  bash "${PISTA_SOURCE_DIR:?}/tests/oracle/setup.sh" >&2 ||
    { echo "FAIL: the DuckDB oracle is unavailable (tests/oracle/setup.sh failed)"; exit 1; }
}
want_as() { # name pista_sql duckdb_sql: Pista's answer to one equals DuckDB's to the other (where
            # the two spell a value differently: DuckDB's BLOB text, its FLOAT text)
  local exp got
  exp=$(node "${PISTA_SOURCE_DIR:?}/tests/oracle/oracle.mjs" -c "$3" 2>&1) || { echo "FAIL $1: DuckDB: $exp"; fail=1; return; }
  got=$("$PISTA" --data "$D" --answers -c "$2" 2>&1)
  if [ "$got" == "$exp" ]; then echo "ok   $1"; else
    echo "FAIL $1"; echo "  sql: $2"; diff <(echo "$exp") <(echo "$got") | head -20 | sed 's/^/  /'; fail=1; fi
}
