#!/usr/bin/env bash
# BYTEA and UUID: read from Parquet files DuckDB writes (BLOB as BYTE_ARRAY
# without annotation, UUID as FIXED_LEN_BYTE_ARRAY(16) annotated UUID),
# printed as PostgreSQL prints them ("\x" hex, 8-4-4-4-12), compared,
# grouped, sorted, joined, counted, cast to and from text, written back to
# Parquet and read by DuckDB. DuckDB prints a BLOB its own way, so its side
# of each comparison spells PostgreSQL's text with hex(); escape-format
# input and the UUID input forms are checked against PostgreSQL's
# documented values. Runs on cpu and (sh.sim.test_sql_bytes) on sim.
set -u
. "$(dirname "$0")/sql_check.sh"
ORACLE="${PISTA_SOURCE_DIR:?}/tests/oracle/oracle.mjs"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
need_oracle

# 3000 rows: b random-length bytes with NULs, some empty, some NULL, many
# repeated (grouping); u a UUID made of md5, some NULL, repeated every 700
# rows; k a key for joins. Two row groups, dictionary and plain pages.
F="$tmp/b.parquet"
node "$ORACLE" -c "copy (select i, i % 97 k,
    case when i % 11 = 0 then null when i % 13 = 0 then ''::blob
         else unhex(substr(md5((i % 400)::varchar) || md5(i::varchar), 1, 2 * (i % 23))) end b,
    case when i % 17 = 0 then null
         else (substr(md5((i % 700)::varchar), 1, 8) || '-' || substr(md5((i % 700)::varchar), 9, 4) || '-' ||
               substr(md5((i % 700)::varchar), 13, 4) || '-' || substr(md5((i % 700)::varchar), 17, 4) || '-' ||
               substr(md5((i % 700)::varchar), 21, 12))::uuid end u
  from range(3000) t(i)) to '$F' (format parquet, row_group_size 2000)" >/dev/null ||
  { echo "FAIL: DuckDB could not write the fixture"; exit 1; }

T="read_parquet('$F')"
HB="'\\x' || lower(hex(b))"   # DuckDB's BLOB as PostgreSQL prints it

want_as "values as PostgreSQL prints them" \
  "select i, b, u from $T where i < 300 order by i" \
  "select i, $HB b, u from '$F' where i < 300 order by i"
want_as "octet_length and length of bytea" \
  "select i, octet_length(b) o, length(b) l from $T where i % 7 = 1 order by i" \
  "select i, octet_length(b) o, octet_length(b) l from '$F' where i % 7 = 1 order by i"
want_as "group by, order by, count distinct" \
  "select b, count(*) n, count(distinct u) du, min(i) lo from $T group by b order by b limit 60" \
  "select $HB b, count(*) n, count(distinct u) du, min(i) lo from '$F' group by all order by min(b) nulls last limit 60"
want_as "group by a uuid, ordered by its bytes" \
  "select u, count(*) n, sum(i) s from $T group by u order by u" \
  "select u, count(*) n, sum(i) s from '$F' group by u order by u"
want_as "min and max" \
  "select min(b) lb, max(b) hb, min(u) lu, max(u) hu, count(b) nb, count(u) nu from $T" \
  "select '\\x' || lower(hex(min(b))) lb, '\\x' || lower(hex(max(b))) hb, min(u) lu, max(u) hu, count(b) nb, count(u) nu from '$F'"
want_as "a join on uuids and one on bytes" \
  "select count(*) n, sum(a.i) s, count(distinct a.k) ks from $T a join $T c on a.u = c.u and a.k <> c.k where a.i < 1000" \
  "select count(*) n, sum(a.i) s, count(distinct a.k) ks from '$F' a join '$F' c on a.u = c.u and a.k <> c.k where a.i < 1000"
want_as "a join on bytes" \
  "select count(*) n, sum(a.i + c.i) s from $T a join $T c on a.b = c.b where a.i < c.i" \
  "select count(*) n, sum(a.i + c.i) s from '$F' a join '$F' c on a.b = c.b where a.i < c.i"
want_as "comparisons with literals" \
  "select count(*) filter (where b < '\\x80'::bytea) a, count(*) filter (where b = '\\x'::bytea) e, count(*) filter (where u > 'c0000000-0000-0000-0000-000000000000') c, count(*) filter (where u = 'e4da3b7f-bbce-2345-d777-2b0674a318d5') m from $T" \
  "select count(*) filter (where b < '\\x80'::blob) a, count(*) filter (where b = ''::blob) e, count(*) filter (where u > 'c0000000-0000-0000-0000-000000000000'::uuid) c, count(*) filter (where u = 'e4da3b7f-bbce-2345-d777-2b0674a318d5'::uuid) m from '$F'"
want_as "casts to text and back" \
  "select i, cast(u as varchar) t, cast(cast(u as varchar) as uuid) = u r, cast(b as varchar) bt, cast(cast(b as varchar) as bytea) = b br from $T where i < 120 order by i" \
  "select i, cast(u as varchar) t, case when u is null then null else true end r, $HB bt, case when b is null then null else true end br from '$F' where i < 120 order by i"
want_as "distinct, window and top-N" \
  "select i, u, row_number() over (partition by u order by i) rn, lag(b) over (order by i) pb from $T where i < 200 order by u, i limit 50" \
  "select i, u, row_number() over (partition by u order by i) rn, '\\x' || lower(hex(lag(b) over (order by i))) pb from '$F' where i < 200 order by u, i limit 50"
want_as "bytea || bytea" \
  "select i, b || '\\x00ff'::bytea c from $T where i < 40 order by i" \
  "select i, '\\x' || lower(hex(b || '\\x00\\xff'::blob)) c from '$F' where i < 40 order by i"

# PostgreSQL's input forms (its documentation's examples and outputs).
check "bytea input: hex, escape format, a NUL byte" \
  "select '\\xDEADBEEF'::bytea a, 'abc \\153\\154\\155 \\052\\251\\124'::bytea b, '\\000'::bytea c, ''::bytea d, 'a\\\\b'::bytea e, octet_length('\\000\\000'::bytea) f" \
'a|b|c|d|e|f
\xdeadbeef|\x616263206b6c6d202aa954|\x00|\x|\x615c62|2'
check "uuid input forms" \
  "select 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11'::uuid a, '{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}'::uuid b, 'a0eebc999c0b4ef8bb6d6bb9bd380a11'::uuid c, 'a0ee-bc99-9c0b-4ef8-bb6d-6bb9-bd38-0a11'::uuid = 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' d" \
'a|b|c|d
a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11|true'
check "a literal beside bytea is bytea, a text value makes text (PostgreSQL's resolution)" \
  "select 'x' || 'ab'::bytea || '\\x01'::bytea a, '\\x01'::bytea || 'x' b, 'v:' || '\\x0a'::bytea c, (select s || '\\x0a'::bytea from (values ('v:')) t(s)) d" \
'a|b|c|d
\x78616201|\x0178|\x763a0a|v:\x0a'
check_csv "csv: NULL and empty bytea differ" \
  "select * from (values (1, '\\x'::bytea), (2, null::bytea), (3, '\\x2c22'::bytea)) t(i, b) order by i" \
'i,b
1,\x
2,
3,\x2c22'
refused "bad bytea text" "select '\\x0'::bytea" 'invalid input syntax for type bytea: "\x0"'
refused "bad uuid text" "select 'a0eebc99'::uuid" 'invalid input syntax for type uuid: "a0eebc99"'
refused "a bad uuid in a column" "select cast(x as uuid) from (values ('a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'), ('nope')) t(x)" 'invalid input syntax for type uuid: "nope"'
refused "no cast from integers" "select cast(1 as bytea)" 'CAST from INTEGER to BYTEA is not supported'
refused "no cast between bytea and uuid" "select cast('\\x00'::bytea as uuid)" 'CAST from BYTEA to UUID is not supported'
refused "no text functions of bytea" "select upper('\\x41'::bytea)" 'upper: an argument of type BYTEA'
refused "no sum of uuids" "select sum(u) from $T" 'UUID'
refused "no uuid compared with an integer" "select count(*) from $T where u = 1" 'comparison of UUID and INTEGER is not defined'

# Written back by Pista, read by DuckDB: the same types and values.
W="$tmp/w.parquet"
out=$("$PISTA" -c "copy (select i, k, b, u from $T) to '$W'" 2>&1) || { echo "FAIL copy: $out"; fail=1; }
exp=$(node "$ORACLE" -c "select name, type, type_length, logical_type, duckdb_type from parquet_schema('$W') where name in ('b', 'u') order by name" 2>&1)
want_schema='name|type|type_length|logical_type|duckdb_type
b|BYTE_ARRAY||||BLOB
u|FIXED_LEN_BYTE_ARRAY|16|UUIDType()|UUID'
if [ "$(echo "$exp" | tr -s '|')" == "$(echo "$want_schema" | tr -s '|')" ]; then echo "ok   written types"; else
  echo "FAIL written types"; echo "$exp"; fail=1; fi
diffrows=$(node "$ORACLE" -c "select count(*) from ((select * from '$W' except all select i, k, b, u from '$F') union all (select i, k, b, u from '$F' except all select * from '$W'))" 2>&1)
if [ "$diffrows" == "$(printf 'count_star()\n0')" ]; then echo "ok   written values"; else echo "FAIL written values: $diffrows"; fail=1; fi
stats=$(node "$ORACLE" -c "select count(*) from '$W' where u between (select min(u) from '$F' where i < 1000) and (select max(u) from '$F' where i < 1000)" 2>&1)
stats2=$(node "$ORACLE" -c "select count(*) from '$F' where u between (select min(u) from '$F' where i < 1000) and (select max(u) from '$F' where i < 1000)" 2>&1)
if [ "$stats" == "$stats2" ]; then echo "ok   DuckDB filters our file by its UUID statistics"; else echo "FAIL stats: $stats vs $stats2"; fail=1; fi

[ $fail -eq 0 ] && echo PASS || { echo FAIL; exit 1; }
